"""MD at IUPAC reference bases names the reference's letter (upper case), as samtools calmd writes it, for
the FASTA read directly and for a stored index; an index without the letters still maps (MD says N)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import fasta, fastq, maps, random_dna, sam_records, seedmap

from seedmap.io.md_letters import restore_iupac
from seedmap.io.reference import read_fasta

COMPLEMENT = str.maketrans("ACGT", "TGCA")


def calmd(ref: str, pos: int, cigar: str, seq: str) -> str:
    """The MD of a record as samtools calmd makes it: a reference letter matches only the same read letter
    among A, C, G, T; mismatched and deleted reference bases are written upper case."""
    ref = ref.upper()
    md, run, r, q = [], 0, pos - 1, 0
    for n, op in re.findall(r"(\d+)([MIDS])", cigar):
        n = int(n)
        if op in "IS":
            q += n
        elif op == "M":
            for _ in range(n):
                if ref[r] == seq[q] and ref[r] in "ACGT":
                    run += 1
                else:
                    md += [str(run), ref[r]]
                    run = 0
                r, q = r + 1, q + 1
        else:
            md += [str(run), "^" + ref[r:r + n]]
            run, r = 0, r + n
    return "".join(md) + str(run)


@pytest.fixture(scope="module")
def iupac_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ref.fa with IUPAC codes (upper and lower case) and an N; reads over them on both strands, one with a
    deletion of an IUPAC base."""
    d = tmp_path_factory.mktemp("iupac")
    rng = np.random.default_rng(76)
    genome = list(random_dna(rng, 3000))
    for at, code in ((400, "Y"), (410, "r"), (420, "N"), (1200, "k"), (2000, "B"), (2003, "w")):
        genome[at] = code
    g = "".join(genome)
    (d / "ref.fa").write_text(fasta({"chr1": g}))

    def read(a: int, b: int) -> str:
        return g[a:b].upper().translate(str.maketrans("RYKBWN", "ACGTAG"))

    reads = {"over3": read(350, 450), "del": read(1150, 1200) + read(1201, 1251), "two": read(1950, 2050)}
    reads["over3_rc"] = reads["over3"].translate(COMPLEMENT)[::-1]
    (d / "reads.fq").write_text(fastq(reads))
    return d


def records_md(text: str) -> list[tuple[str, int, str, str, str]]:
    out = []
    for r in sam_records(text):
        md = next(t[5:] for t in r[11:] if t.startswith("MD:Z:"))
        out.append((r[0], int(r[3]), r[5], r[9], md))
    return out


def check_against_calmd(d: Path, sam: str) -> None:
    ref = read_fasta_text(d / "ref.fa")
    got = records_md(sam)
    assert {name for name, *_ in got} == {"over3", "del", "two", "over3_rc"}
    for name, pos, cigar, seq, md in got:
        assert md == calmd(ref, pos, cigar, seq), name
    assert any("Y" in md and "R" in md for *_, md in got) and any("^K" in md for *_, md in got)
    if shutil.which("samtools"):
        (d / "out.sam").write_text(sam)
        proc = subprocess.run(["samtools", "calmd", str(d / "out.sam"), str(d / "ref.fa")], capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
        assert [md for *_, md in records_md(proc.stdout)] == [md for *_, md in got]


def read_fasta_text(path: Path) -> str:
    return "".join(line.strip() for line in path.read_text().splitlines() if not line.startswith(">"))


def test_md_names_iupac_letters_from_the_fasta(iupac_data: Path, tmp_path: Path):
    for name in ("ref.fa", "reads.fq"):
        shutil.copy2(iupac_data / name, tmp_path / name)
    check_against_calmd(tmp_path, maps(tmp_path, "ref.fa", "reads.fq", "-e", "4").stdout)


@pytest.mark.parametrize("kind", ["neighborhood", "fm"])
def test_md_names_iupac_letters_from_a_stored_index(iupac_data: Path, tmp_path: Path, kind: str):
    for name in ("ref.fa", "reads.fq"):
        shutil.copy2(iupac_data / name, tmp_path / name)
    assert seedmap(tmp_path, "index", "ref.fa", "--kind", kind).returncode == 0
    check_against_calmd(tmp_path, maps(tmp_path, "ref.fa", "reads.fq", "-e", "4", "--engine", kind).stdout)
    if kind == "neighborhood":  # an index built before the letters were kept: the same records, MD with N
        header = tmp_path / "ref.fa.smi" / "header.json"
        h = json.loads(header.read_text())
        for name in ("ref_iupac_pos", "ref_iupac_code"):
            del h["arrays"][name]
        header.write_text(json.dumps(h))
        got = records_md(maps(tmp_path, "ref.fa", "reads.fq", "-e", "4").stdout)
        assert any("50N9N9N" in md for *_, md in got) and not any(c in md for *_, md in got for c in "YRK")


def test_reference_keeps_iupac_letters(tmp_path: Path):
    (tmp_path / "r.fa").write_text(">a\nACGTRNnyACGT\n>b\nkkA.AC\n")
    ref = read_fasta(tmp_path / "r.fa")
    assert ref.iupac_pos.tolist() == [4, 7, 12, 13]
    assert ref.iupac_code.tobytes() == b"RYKK"


def test_restore_iupac_in_strings_anywhere():
    """Strings in any order with slack between them; N at an IUPAC site or not, mismatched or deleted."""
    strings = {0: (b"3N2^NA1", 100), 1: (b"10", 200), 2: (b"0N12N0", 300)}
    md = np.full(64, ord("x"), dtype=np.uint8)
    off = np.array([40, 0, 20], dtype=np.int64)
    for k, (s, _) in strings.items():
        md[off[k]:off[k] + len(s)] = np.frombuffer(s, dtype=np.uint8)
    lens = np.array([len(s) for s, _ in strings.values()], dtype=np.int64)
    start = np.array([p for _, p in strings.values()], dtype=np.int64)
    sites = np.array([103, 106, 300, 313], dtype=np.int64)  # 103: mismatch, 106: deleted, not 107
    restore_iupac(md, off, lens, start, sites, np.frombuffer(b"YSKM", dtype=np.uint8))
    assert [md[off[k]:off[k] + lens[k]].tobytes() for k in range(3)] == [b"3Y2^SA1", b"10", b"0K12M0"]
    assert (md[[7, 8, 9, 30]] == ord("x")).all()
