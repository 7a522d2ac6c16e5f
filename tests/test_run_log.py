"""What a map run logs for a bwa user: how many reads found no location within e (and that a larger -e searches
further), and, where stderr is not a terminal (a cluster job's log), a progress line every so often."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import fails_cleanly, fasta, fastq, maps, random_dna

GENOME_LENGTH = 5000
N_PLACED, N_RANDOM = 30, 10


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ref.fa, and reads: N_PLACED exact 100 bp substrings, then N_RANDOM random reads (placed nowhere within
    5 edits); mates.fq the same count of pairs (the random reads' mates random too)."""
    d = tmp_path_factory.mktemp("run_log")
    rng = np.random.default_rng(76)
    genome = random_dna(rng, GENOME_LENGTH)
    (d / "ref.fa").write_text(fasta({"chr1": genome}))
    starts = rng.integers(0, GENOME_LENGTH - 400, N_PLACED)
    comp = str.maketrans("ACGT", "TGCA")
    r1 = {f"p{i}": genome[s:s + 100] for i, s in enumerate(starts)}
    r2 = {f"p{i}": genome[s + 200:s + 300].translate(comp)[::-1] for i, s in enumerate(starts)}
    for i in range(N_RANDOM):
        r1[f"x{i}"], r2[f"x{i}"] = random_dna(rng, 100), random_dna(rng, 100)
    (d / "reads.fq").write_text(fastq(r1))
    (d / "mates.fq").write_text(fastq(r2))
    return d


@pytest.fixture
def work(data: Path, tmp_path: Path) -> Path:
    for name in ("ref.fa", "reads.fq", "mates.fq"):
        shutil.copy2(data / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize("errors,within", [("5", "e = 5 edits (-e 5)"),
                                           ("0.05", "e = 5% of their length in edits (-e 0.05)")])
def test_reads_without_a_location_are_counted(work: Path, errors: str, within: str):
    err = maps(work, "ref.fa", "reads.fq", "-e", errors, "-o", "out.sam").stderr
    line = f"[seedmap] {N_RANDOM} reads (25.00%) have no location within {within}, reported unmapped; a larger -e"
    assert line in err, err


def test_pairs_without_a_location_are_counted(work: Path):
    err = maps(work, "ref.fa", "reads.fq", "mates.fq", "-o", "out.sam").stderr
    assert f"[seedmap] {2 * N_RANDOM} reads (25.00%) have no location within e = 5% of their length" in err, err


def test_no_count_when_every_read_is_placed(work: Path):
    (work / "placed.fq").write_text("".join((work / "reads.fq").read_text().splitlines(True)[:4 * N_PLACED]))
    assert "no location" not in maps(work, "ref.fa", "placed.fq", "-o", "out.sam").stderr
    err = maps(work, "ref.fa", "reads.fq", "-e", "0.25", "-o", "out.sam").stderr
    assert "reported unmapped" in err and "a larger -e" not in err  # -e at its most


def test_progress_lines_off_a_terminal(work: Path, monkeypatch: pytest.MonkeyPatch):
    """stderr is a pipe here, as in a cluster job: a line per interval (made short), none with -q."""
    monkeypatch.setenv("SEEDMAP_PROGRESS_SECONDS", "0.000001")
    err = maps(work, "ref.fa", "reads.fq", "--batch-size", "10", "-o", "out.sam").stderr
    counts = [int(n) for n in re.findall(r"^\[seedmap\] processed (\d+) reads \(\d+ reads/s\)$", err, re.M)]
    assert counts[:3] == [10, 20, 30] and counts[-1] == N_PLACED + N_RANDOM, err  # (the last batches taper)
    assert all(a < b for a, b in zip(counts[:-1], counts[1:], strict=True)), err
    assert "processed" not in maps(work, "ref.fa", "reads.fq", "--batch-size", "10", "-o", "q.sam", "-q").stderr
    monkeypatch.setenv("SEEDMAP_PROGRESS_SECONDS", "3600")
    assert "processed" not in maps(work, "ref.fa", "reads.fq", "--batch-size", "10", "-o", "out.sam").stderr
    monkeypatch.setenv("SEEDMAP_PROGRESS_SECONDS", "soon")
    assert "SEEDMAP_PROGRESS_SECONDS=soon" in fails_cleanly(work, "map", "ref.fa", "reads.fq", "-o", "out.sam")
