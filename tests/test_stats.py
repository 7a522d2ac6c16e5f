"""`seedmap stats`: per-read counts on a hand-made SAM with known answers, flagstat counts equal to
samtools flagstat (pysam's bundled samtools, and the samtools on PATH when there is one), SAM and BAM
alike, the --plot PNG, and bad input."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import pysam
import pytest
from helpers import GARBAGE_BINARY, error_lines, fails_cleanly, seedmap

from seedmap.io.sam_scan import scan_chunk
from seedmap.stats import flagstat, format_flagstat, read_fields, summarise

HEADER = "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chr1\tLN:10000\n@SQ\tSN:chr2\tLN:5000\n"


def rec(name: str, flag: int, rname: str = "chr1", pos: int = 100, mapq: int = 60, rnext: str = "*",
        pnext: int = 0, tlen: int = 0, nm: int | None = 0) -> str:
    unmapped = flag & 4
    cigar = "*" if unmapped else "8M"
    tags = "" if unmapped or nm is None else f"\tNM:i:{nm}\tMD:Z:8"
    return f"{name}\t{flag}\t{rname}\t{pos}\t{0 if unmapped else mapq}\t{cigar}\t{rnext}\t{pnext}\t{tlen}" \
           f"\tACGTACGT\tIIIIIIII{tags}\n"


# Reads and what they are (a read = QNAME, + mate bit for pairs):
#   u1 unique (NM 0); m1 three locations (NM 1, 2, 2); x1 unmapped; s1 primary + supplementary (unique);
#   q1 QC-failed unique (NM 1); d1 duplicate unique (NM 0);
#   p1 proper pair, TLEN 300 (both unique, NM 0 and 1);
#   p2 read 1 mapped, read 2 unmapped (singleton);
#   p3 mates on different references (MAPQ 3 and 30), read 1 also with a secondary (NM 2, 3).
HAND_MADE = HEADER + "".join([
    rec("u1", 0, nm=0),
    rec("m1", 16, nm=1, mapq=0), rec("m1", 256, pos=500, nm=2, mapq=0), rec("m1", 272, "chr2", 50, 0, nm=2),
    rec("x1", 4, "*", 0),
    rec("s1", 0, nm=1), rec("s1", 2048, "chr2", 10, nm=3),
    rec("q1", 512, nm=1),
    rec("d1", 1024, nm=0),
    rec("p1", 99, pos=1000, rnext="=", pnext=1292, tlen=300, nm=0),
    rec("p1", 147, pos=1292, rnext="=", pnext=1000, tlen=-300, nm=1),
    rec("p2", 73, pos=2000, rnext="=", pnext=2000, nm=0),
    rec("p2", 133, "chr1", 2000, rnext="=", pnext=2000),
    rec("p3", 65, pos=3000, mapq=3, rnext="chr2", pnext=400, nm=2),
    rec("p3", 129, "chr2", 400, mapq=30, rnext="chr1", pnext=3000, nm=0),
    rec("p3", 321, pos=7000, mapq=0, rnext="chr2", pnext=400, nm=3),
])


def test_hand_made_known_answers(tmp_path: Path):
    (tmp_path / "a.sam").write_text(HAND_MADE)
    s = summarise(read_fields(str(tmp_path / "a.sam")))
    assert s.records == 16
    assert s.reads == 12  # u1 m1 x1 s1 q1 d1, p1/1 p1/2 p2/1 p2/2 p3/1 p3/2
    assert (s.mapped, s.unmapped) == (10, 2)
    assert (s.unique, s.multi) == (8, 2)  # multi: m1 (3), p3/1 (2)
    assert s.mean_multi_hits == 2.5
    assert s.hits.tolist() == [2, 8, 1, 1]
    # primary NM: u1 0, m1 1, s1 1, q1 1, d1 0, p1 0 1, p2 0, p3 2 0
    assert s.nm_primary.tolist() == [5, 4, 1]
    # all mapped records: + m1 2 2, s1 supplementary 3, p3 secondary 3
    assert s.nm_all.tolist() == [5, 4, 3, 2]
    assert s.insert_sizes.tolist() == [300]
    f = s.flagstat
    assert f["total"] == (15, 1) and f["primary"] == (11, 1) and f["secondary"] == (3, 0)
    assert f["supplementary"] == (1, 0) and f["duplicates"] == (1, 0) and f["mapped"] == (13, 1)
    assert f["paired in sequencing"] == (6, 0) and f["properly paired"] == (2, 0)
    assert f["singletons"] == (1, 0) and f["with itself and mate mapped"] == (4, 0)
    assert f["with mate mapped to a different chr"] == (2, 0)
    assert f["with mate mapped to a different chr (mapQ>=5)"] == (1, 0)


def samtools_flagstats(path: Path) -> list[str]:
    """samtools flagstat's output: pysam's bundled samtools, and the one on PATH when there is one."""
    outs = [pysam.flagstat(str(path))]
    if shutil.which("samtools"):
        outs.append(subprocess.run(["samtools", "flagstat", str(path)], capture_output=True, text=True,
                                   check=True).stdout)
    return outs


def to_bam(sam: Path) -> Path:
    bam = sam.with_suffix(".bam")
    pysam.samtools.view("-b", "-o", str(bam), str(sam), catch_stdout=False)
    return bam


def stats_flagstat_block(stdout: str) -> str:
    return stdout.split("flagstat (as samtools flagstat)\n", 1)[1]


def test_hand_made_agrees_with_samtools_flagstat(tmp_path: Path):
    sam = tmp_path / "a.sam"
    sam.write_text(HAND_MADE)
    for path in (sam, to_bam(sam)):
        proc = seedmap(tmp_path, "stats", path.name)
        assert proc.returncode == 0, proc.stderr
        for expected in samtools_flagstats(path):
            assert stats_flagstat_block(proc.stdout) == expected


def random_sam(rng: np.random.Generator, n: int) -> str:
    """Records with random flags, references, mate references and MAPQs (consistent enough for samtools)."""
    lines = []
    refs = ["chr1", "chr2", "*"]
    for _ in range(n):
        flag = int(rng.integers(0, 4096))
        rname = refs[int(rng.integers(0, 3))]
        rnext = ["=", "*", "chr1", "chr2"][int(rng.integers(0, 4))]
        if rname == "*":
            flag |= 4
        lines.append(rec(f"r{int(rng.integers(0, n // 3 + 1))}", flag, rname, 0 if rname == "*" else 10,
                         int(rng.integers(0, 61)), rnext, 0 if rnext == "*" else 5, int(rng.integers(-500, 500)),
                         int(rng.integers(0, 4))))
    return HEADER + "".join(lines)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_flags_agree_with_samtools_flagstat(tmp_path: Path, seed: int):
    sam = tmp_path / "r.sam"
    sam.write_text(random_sam(np.random.default_rng(seed), 3000))
    ours = format_flagstat(flagstat(read_fields(str(sam))))
    for expected in samtools_flagstats(sam):
        assert ours == expected


def test_sam_bam_and_stdin_agree(tmp_path: Path):
    """A file or stdin, SAM or BAM (stdin sniffed by its BGZF magic): the same report."""
    sam = tmp_path / "a.sam"
    sam.write_text(HAND_MADE)
    bam = to_bam(sam)
    outs = [seedmap(tmp_path, "stats", name).stdout for name in ("a.sam", bam.name)]
    for path in (sam, bam):
        with open(path, "rb") as fh:
            proc = subprocess.run([*seedmap_cmd(), "stats", "-"], stdin=fh, capture_output=True, text=True,
                                  cwd=tmp_path)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        outs.append(proc.stdout)
    assert outs[0] and outs[0] == outs[1] == outs[2] == outs[3]
    assert sorted(os.listdir(tmp_path)) == ["a.bam", "a.sam"]  # no temporary copy of stdin left
    assert "uniquely mapped             8 (66.67%)" in outs[0]
    assert "mean hits of multi-mapped   2.50" in outs[0]


def seedmap_cmd() -> list[str]:
    return [sys.executable, "-m", "seedmap"]


def test_chunks_split_anywhere_give_the_same_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The file is read in chunks cut at line ends; a tiny chunk size cuts inside every line."""
    import seedmap.stats as stats

    sam = tmp_path / "r.sam"
    sam.write_text(random_sam(np.random.default_rng(5), 200))
    whole = read_fields(str(sam))
    monkeypatch.setattr(stats, "CHUNK", 7)
    parts = read_fields(str(sam))
    for name in ("name", "flag", "mapq", "tlen", "nm", "diff_ref"):
        assert np.array_equal(getattr(whole, name), getattr(parts, name)), name
    assert whole.flag.size == 200


def test_scan_fields():
    text = (HEADER + rec("a", 65, "chr1", 5, 7, "chr2", 9, -42, 3) + "b\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*\r\n").encode()
    f, _, bad = scan_chunk(text)
    assert bad == -1
    assert f.flag.tolist() == [65, 4] and f.mapq.tolist() == [7, 0] and f.tlen.tolist() == [-42, 0]
    assert f.nm.tolist() == [3, -1] and f.diff_ref.tolist() == [True, False]
    assert f.name[0] != f.name[1]


def test_plot_png(tmp_path: Path):
    sam = tmp_path / "a.sam"
    sam.write_text(HAND_MADE)
    proc = seedmap(tmp_path, "stats", "a.sam", "--plot", "report.png")
    assert proc.returncode == 0, proc.stderr
    assert error_lines(proc.stderr) == []
    img = matplotlib.image.imread(str(tmp_path / "report.png"))
    assert img.shape[0] >= 600 and img.shape[1] >= 900 and img.shape[2] in (3, 4)
    rgb = img[..., :3]
    assert rgb.std() > 0.05 and (rgb < 0.5).mean() > 0.005  # not blank: dark ink on white
    assert sorted(os.listdir(tmp_path)) == ["a.sam", "report.png"]


BAD_STATS = {
    "missing": ("nope.sam", None, "no such file"),
    "directory": ("dir.sam", "dir", "is a directory"),
    "empty": ("empty.sam", b"", "empty file"),
    "fastq": ("reads.fq", b"@r1\nACGT\n+\nIIII\n", "line 2 is not a SAM record"),
    "binary": ("blob.sam", GARBAGE_BINARY, "not a SAM record"),
    "bad-flag": ("flag.sam", (HEADER + "r\tx\t*\t0\t0\t*\t*\t0\t0\t*\t*\n").encode(), "line 4 is not a SAM"),
    "gzip-garbage": ("blob.bam", b"\x1f\x8b" + GARBAGE_BINARY, "not a readable BAM"),
    "cram": ("x.cram", b"CRAM\x03\x00", "CRAM is not supported"),
}


@pytest.mark.parametrize("case", BAD_STATS)
def test_bad_input(tmp_path: Path, case: str):
    name, content, expected = BAD_STATS[case]
    if content == "dir":
        (tmp_path / name).mkdir()
    elif content is not None:
        (tmp_path / name).write_bytes(content)
    message = fails_cleanly(tmp_path, "stats", name, "--plot", "report.png")
    assert name in message and expected in message


@pytest.mark.parametrize("content, expected", [(b"\x1f\x8b" + GARBAGE_BINARY, "stdin: not a readable BAM"),
                                               (b"CRAM\x03\x00", "stdin: CRAM is not supported")],
                         ids=["gzip-garbage", "cram"])
def test_bad_input_on_stdin(tmp_path: Path, content: bytes, expected: str):
    proc = subprocess.run([*seedmap_cmd(), "stats", "-"], input=content, capture_output=True, cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == b""
    lines = error_lines(proc.stderr.decode())
    assert len(lines) == 1 and lines[0].startswith(f"seedmap: error: {expected}"), proc.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("plot, expected", [("nowhere/report.png", "does not exist"), ("report.jpg", ".png")])
def test_bad_plot_path(tmp_path: Path, plot: str, expected: str):
    (tmp_path / "a.sam").write_text(HAND_MADE)
    message = fails_cleanly(tmp_path, "stats", "a.sam", "--plot", plot)
    assert expected in message
