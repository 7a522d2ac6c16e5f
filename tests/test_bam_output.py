"""`seedmap map`: BAM output when -o ends in .bam (record for record the SAM output), --rg read groups,
@PG, atomic output, and the quiet (non-terminal) summary path. Black box through `python -m seedmap`."""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pysam
import pytest
from helpers import error_lines, fails_cleanly, fasta, fastq, random_dna, seedmap, truncated_gzip

from seedmap.errors import SeedmapError
from seedmap.io.output import open_sink
from seedmap.io.read_group import parse_read_group
from seedmap.io.reference import Reference

SEED = 7117


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two sequences, one 300 bp repeat copied three times (multi-mapped reads), reads with edits and
    reads from nowhere (unmapped), without and with qualities."""
    d = tmp_path_factory.mktemp("bam_data")
    rng = np.random.default_rng(SEED)
    repeat = random_dna(rng, 300)
    chr1 = random_dna(rng, 2000) + repeat + random_dna(rng, 1500) + repeat + random_dna(rng, 500)
    chr2 = random_dna(rng, 1000) + repeat + random_dna(rng, 800)
    (d / "ref.fa").write_text(fasta({"chr1": chr1, "chr2 second": chr2}))
    reads = {}
    for i in range(30):
        seq = chr1 if i % 3 else chr2
        s = int(rng.integers(0, len(seq) - 80))
        read = list(seq[s:s + 80])
        for _ in range(i % 4):  # 0-3 substitutions
            j = int(rng.integers(0, 80))
            read[j] = "ACGT"[("ACGT".index(read[j]) + 1) % 4]
        read = "".join(read)
        reads[f"r{i}"] = read if i % 2 else read[::-1].translate(str.maketrans("ACGT", "TGCA"))
    for i in range(5):
        reads[f"rep{i}"] = repeat[40 * i:40 * i + 80]
    for i in range(3):
        reads[f"none{i}"] = random_dna(rng, 80)
    (d / "reads.fq").write_text(fastq(reads))
    assert seedmap(d, "index", "ref.fa").returncode == 0
    return d


@pytest.fixture
def work(data: Path, tmp_path: Path) -> Path:
    for name in ("ref.fa", "reads.fq"):
        shutil.copy2(data / name, tmp_path / name)
    shutil.copytree(data / "ref.fa.smi", tmp_path / "ref.fa.smi")
    return tmp_path


def mapped(cwd: Path, *args: str) -> str:
    proc = seedmap(cwd, "map", "ref.fa", "reads.fq", *args)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr


def without_cl(lines: list[str]) -> list[str]:
    return [re.sub(r"\tCL:.*", "", line) for line in lines]


def bam_lines(path: Path) -> tuple[list[str], list[str]]:
    with pysam.AlignmentFile(str(path), "rb") as bam:
        header = str(bam.header).rstrip("\n").split("\n")
        return header, [rec.to_string() for rec in bam]


def sam_parts(path: Path) -> tuple[list[str], list[str]]:
    lines = path.read_text().rstrip("\n").split("\n")
    return [x for x in lines if x.startswith("@")], [x for x in lines if not x.startswith("@")]


@pytest.mark.parametrize("extra", [(), ("--rg", r"@RG\tID:lane1\tSM:s1\tPL:ILLUMINA"), ("-e", "2", "-n", "2")])
def test_bam_equals_sam(work: Path, extra: tuple[str, ...]):
    mapped(work, "-o", "out.sam", *extra)
    mapped(work, "-o", "out.BAM", *extra)  # the suffix is case-insensitive
    assert (work / "out.BAM").read_bytes()[:2] == b"\x1f\x8b"  # BGZF
    sam_header, sam_records = sam_parts(work / "out.sam")
    bam_header, bam_records = bam_lines(work / "out.BAM")
    assert without_cl(bam_header) == without_cl(sam_header)  # no extra @PG from samtools
    assert bam_records == sam_records
    flags = [int(r.split("\t")[1]) for r in sam_records]
    assert any(f & 4 for f in flags) and any(f & 256 for f in flags) and any(f & 16 for f in flags)
    assert sorted(os.listdir(work)) == ["out.BAM", "out.sam", "reads.fq", "ref.fa", "ref.fa.smi"]


def test_pg_line(work: Path):
    mapped(work, "-o", "out.sam", "-e", "3")
    header, _ = sam_parts(work / "out.sam")
    pg = [line.split("\t") for line in header if line.startswith("@PG")]
    assert len(pg) == 1
    fields = dict(f.split(":", 1) for f in pg[0][1:])
    assert fields["ID"] == "seedmap" and fields["PN"] == "seedmap" and fields["VN"]
    assert fields["CL"] == "seedmap map ref.fa reads.fq -o out.sam -e 3"


@pytest.mark.parametrize("rg", [r"@RG\tID:lane1\tSM:s 1", "@RG\tID:lane1\tSM:s 1"])  # escaped or real tabs
@pytest.mark.parametrize("out", ["out.sam", "out.bam"])
def test_read_group(work: Path, rg: str, out: str):
    mapped(work, "-o", out, "--rg", rg)
    if out.endswith(".bam"):
        header, records = bam_lines(work / out)
    else:
        header, records = sam_parts(work / out)
    kinds = [line[:3] for line in header]
    assert kinds == ["@HD", "@SQ", "@SQ", "@RG", "@PG"]
    assert header[3] == "@RG\tID:lane1\tSM:s 1"
    assert records and all(r.split("\t")[-1] == "RG:Z:lane1" for r in records)
    assert all(r.count("RG:Z:") == 1 for r in records)


BAD_RG = {
    "no-@RG": ("ID:x\tSM:y", "must start with '@RG'"),
    "other-header": (r"@SQ\tID:x", "must start with '@RG'"),
    "no-ID": (r"@RG\tSM:y", "exactly one ID"),
    "two-IDs": (r"@RG\tID:a\tID:b", "exactly one ID"),
    "empty-ID": (r"@RG\tID:\tSM:y", "not a TAG:value"),
    "not-a-field": (r"@RG\tID:x\tnonsense", "not a TAG:value"),
    "newline": (r"@RG\tID:x\nSM:y", "one line"),
    "duplicate": (r"@RG\tID:x\tSM:a\tSM:b", "appears twice"),
    "empty": ("", "must start with '@RG'"),
}


@pytest.mark.parametrize("case", BAD_RG)
def test_bad_read_group(work: Path, case: str):
    rg, expected = BAD_RG[case]
    message = fails_cleanly(work, "map", "ref.fa", "reads.fq", "-o", "out.bam", "--rg", rg)
    assert "--rg" in message and expected in message


@pytest.mark.parametrize("rg", [r"@RG\tSM:y", "@RG\tSM:y"])
def test_bad_read_group_shown_as_typed(work: Path, rg: str):
    """The message quotes the value with tabs as \\t, one backslash (repr doubled a typed one)."""
    message = fails_cleanly(work, "map", "ref.fa", "reads.fq", "--rg", rg)
    assert message.endswith("got '@RG\\tSM:y'"), message


def test_R_is_rg(work: Path):
    """-R is bwa's name for --rg."""
    mapped(work, "-o", "long.sam", "--rg", r"@RG\tID:lane1\tSM:s1")
    mapped(work, "-o", "short.sam", "-R", r"@RG\tID:lane1\tSM:s1")
    assert without_cl(sam_parts(work / "short.sam")[0]) == without_cl(sam_parts(work / "long.sam")[0])
    assert sam_parts(work / "short.sam")[1] == sam_parts(work / "long.sam")[1]


@pytest.mark.slow
@pytest.mark.parametrize("reference", ["ref.fa", "ref.fa.gz"])
def test_cram_equals_sam(work: Path, reference: str):
    """-o x.cram writes CRAM, encoded against the reference (a gzip one through an indexed copy): samtools
    reads exactly the SAM records back, with the reference's M5 on every @SQ; no temporary file is left."""
    (work / "ref.fa.gz").write_bytes(gzip.compress((work / "ref.fa").read_bytes()))
    mapped(work, "-o", "out.sam", "--rg", r"@RG\tID:lane1", "-t", "2")
    proc = seedmap(work, "map", reference, "reads.fq", "-o", "out.cram", "--rg", r"@RG\tID:lane1", "-t", "2")
    assert proc.returncode == 0 and error_lines(proc.stderr) == [], proc.stderr
    assert (work / "out.cram").read_bytes()[:4] == b"CRAM"
    text = pysam.samtools.view("-h", "--no-PG", "-T", str(work / "ref.fa"), str(work / "out.cram"))
    lines = text.rstrip("\n").split("\n")
    sam_header, sam_records = sam_parts(work / "out.sam")
    assert [x for x in lines if not x.startswith("@")] == sam_records
    sq = [x.split("\t") for x in lines if x.startswith("@SQ")]
    assert [f[:3] for f in sq] == [x.split("\t") for x in sam_header if x.startswith("@SQ")]
    assert all(any(t.startswith("M5:") for t in f) for f in sq)
    assert [x for x in lines if x.startswith("@RG")] == ["@RG\tID:lane1"]
    pg = [x for x in lines if x.startswith("@PG")]
    assert without_cl(pg) == without_cl([x for x in sam_header if x.startswith("@PG")])  # seedmap's only
    expected = {"out.cram", "out.sam", "reads.fq", "ref.fa", "ref.fa.gz", "ref.fa.smi"}
    assert set(os.listdir(work)) - {"ref.fa.fai"} == expected  # htslib indexes a plain FASTA beside it


@pytest.mark.parametrize("reference", ["ref.fa.gz", "ragged.fa"])
def test_cram_from_a_copied_reference_decodes_without_it(work: Path, reference: str,
                                                        monkeypatch: pytest.MonkeyPatch):
    """A reference htslib cannot index (gzip, ragged lines) is encoded against a copy that is then deleted: the
    CRAM embeds the reference it covers, so it decodes with no reference at all (plain `samtools view`)."""
    (work / "ref.fa.gz").write_bytes(gzip.compress((work / "ref.fa").read_bytes()))
    with pysam.FastxFile(str(work / "ref.fa")) as fa:
        records = [(r.name + (f" {r.comment}" if r.comment else ""), r.sequence) for r in fa]
    (work / "ragged.fa").write_text("".join(f">{name}\n{seq[:70]}\n{seq[70:]}\n" for name, seq in records))
    mapped(work, "-o", "out.sam")
    proc = seedmap(work, "map", reference, "reads.fq", "-o", "out.cram")
    assert proc.returncode == 0 and error_lines(proc.stderr) == [], proc.stderr
    (work / "ref.fa").unlink()  # nothing to find a reference by
    monkeypatch.setenv("REF_PATH", str(work / "nowhere"))  # nor a download (htslib's default: EBI's server)
    with pysam.AlignmentFile(str(work / "out.cram"), "rc") as cram:
        got = [r.to_string().split("\t")[:11] for r in cram]
    assert got == [r.split("\t")[:11] for r in sam_parts(work / "out.sam")[1]] and got


def test_cram_to_a_bad_place(work: Path):
    message = fails_cleanly(work, "map", "ref.fa", "reads.fq", "-o", "nowhere/out.cram")
    assert "nowhere" in message


def test_cram_needs_a_reference_file(work: Path):
    """A reference through a pipe is read once, to map: CRAM, which needs it again, is refused up front."""
    os.mkfifo(work / "pipe.fa")
    message = fails_cleanly(work, "map", "pipe.fa", "reads.fq", "-o", "out.cram")
    assert "out.cram: CRAM" in message and "pipe.fa" in message


def test_parse_read_group():
    rg = parse_read_group(r"@RG\tID:a.b-1\tSM:x\tLB:lib 1")
    assert rg.id == "a.b-1" and rg.line == "@RG\tID:a.b-1\tSM:x\tLB:lib 1"
    assert rg.add_to_header("@HD\tVN:1.6\n@SQ\tSN:c\tLN:5\n@PG\tID:p\n@CO\tx\n") == \
        "@HD\tVN:1.6\n@SQ\tSN:c\tLN:5\n@RG\tID:a.b-1\tSM:x\tLB:lib 1\n@PG\tID:p\n@CO\tx\n"


def test_bam_atomic_when_reads_fail(work: Path):
    """The reads break after a few batches: neither the BAM nor its temporary SAM may survive."""
    (work / "cut.fq.gz").write_bytes(truncated_gzip(work / "reads.fq"))
    message = fails_cleanly(work, "map", "ref.fa", "cut.fq.gz", "-o", "out.bam", "--batch-size", "2")
    assert "truncated" in message


def test_bam_atomic_when_writing_fails(tmp_path: Path):
    """An error while records stream into the BAM: nothing left behind, and an old file is not replaced."""
    (tmp_path / "out.bam").write_bytes(b"old")
    ref = Reference.from_codes(["c"], [np.zeros(10, dtype=np.uint8)])
    with pytest.raises(SeedmapError, match="reads broke"):
        with open_sink(str(tmp_path / "out.bam"), ref) as sink:
            sink.header("@HD\tVN:1.6\n@SQ\tSN:c\tLN:10\n")
            sink.records(b"\0" * 200_000)
            raise SeedmapError("reads broke")
    assert os.listdir(tmp_path) == ["out.bam"] and (tmp_path / "out.bam").read_bytes() == b"old"


def test_bam_to_missing_directory(work: Path):
    message = fails_cleanly(work, "map", "ref.fa", "reads.fq", "-o", "nowhere/out.bam")
    assert "does not exist" in message


def test_quiet_when_not_a_terminal(work: Path):
    """stderr is a pipe here: no progress bar, one summary line; -q: nothing at all."""
    stderr = mapped(work, "-o", "out.sam")
    assert "\r" not in stderr and "\x1b" not in stderr  # no live progress, no ANSI codes
    summary = [line for line in stderr.splitlines() if line.startswith("[seedmap] mapped ")]
    assert len(summary) == 1
    assert re.fullmatch(r"\[seedmap\] mapped 38 reads: \d+ \(\d+\.\d\d%\) with at least one location, \d+ records; "
                        r"\d+ reads/s \(.*\)", summary[0]), summary[0]
    assert error_lines(stderr) == []
    assert mapped(work, "-o", "out2.bam", "-q") == ""


def test_progress_bar_on_a_terminal(work: Path):
    """stderr on a pseudo-terminal: rich draws the progress bar (then removes it), the summary follows."""
    pty = pytest.importorskip("pty")
    import subprocess
    import sys
    import threading

    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:  # keep the terminal's buffer from filling up while the mapper runs
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    env = {k: v for k, v in os.environ.items() if k not in ("SEEDMAP_DEBUG", "NO_COLOR", "TERM")} | {"TERM": "xterm"}
    proc = subprocess.run([sys.executable, "-m", "seedmap", "map", "ref.fa", "reads.fq", "-o", "out.bam"], cwd=work,
                          env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, timeout=300)
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    text = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0, text
    assert re.search(r"mapping [\d,]+ reads", text), text  # the bar's text column (not the summary's words)
    assert "[seedmap] mapped 38 reads" in text
    assert (work / "out.bam").exists()
