"""Output safety of the threaded writer, black box: SIGTERM removes the temporary file and exits 143;
every write error is an error that names the output; a special file is written in place, never
replaced; reads shorter than --min-length are reported unmapped and counted."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import error_lines, fasta, fastq, random_dna, seedmap

SEED = 4242


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("safety")
    rng = np.random.default_rng(SEED)
    genome = random_dna(rng, 20_000)
    (d / "ref.fa").write_text(fasta({"chr": genome}))
    reads = {}
    for i in range(3000):
        s = int(rng.integers(0, len(genome) - 100))
        reads[f"r{i}"] = genome[s:s + 100]
    (d / "reads.fq").write_text(fastq(reads))
    assert seedmap(d, "index", "-q", "ref.fa").returncode == 0
    return d


def records_written(out: Path) -> bool:
    """Some records are in the temporary output (more than a header's worth of bytes)."""
    try:
        return any(f.stat().st_size > 4096 for f in out.iterdir())
    except FileNotFoundError:  # renamed or removed meanwhile
        return False


def test_sigterm_removes_the_temporary_file(data: Path, tmp_path: Path):
    """A run killed by SIGTERM (what cluster schedulers send) leaves nothing and exits 143."""
    many = tmp_path / "many.fq"
    text = (data / "reads.fq").read_text()
    many.write_text(text * 30)  # 90,000 reads: many seconds in one small batch at a time
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "seedmap", "map", "-q", "--batch-size", "50", "-e", "8",
                             str(data / "ref.fa"), str(many), "-o", str(out / "out.sam")],
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not os.listdir(out) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert os.listdir(out), "the temporary output never appeared"
    while proc.poll() is None and time.monotonic() < deadline and not records_written(out):
        time.sleep(0.05)
    assert records_written(out), "no record was written"
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert os.listdir(out) == [], "files left behind"
    assert error_lines(stderr) == ["seedmap: terminated"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("rg", [False, True])
def test_full_device_is_an_error_naming_it(data: Path, rg: bool):
    target = "/dev/full"
    before = os.stat(target)
    proc = seedmap(data, "map", "ref.fa", "reads.fq", "-o", target, *(["--rg", "@RG\\tID:x"] if rg else []))
    assert proc.returncode == 1, proc.stderr
    assert error_lines(proc.stderr) == [f"seedmap: error: {target}: No space left on device"]
    assert stat.S_ISCHR(os.stat(target).st_mode) and os.stat(target).st_rdev == before.st_rdev


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_full_stdout_is_an_error(data: Path):
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "seedmap", "map", "ref.fa", "reads.fq"], cwd=data,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 1
    assert error_lines(proc.stderr) == ["seedmap: error: standard output: No space left on device"]


def test_special_file_written_in_place(data: Path, tmp_path: Path):
    """A named pipe is written directly (a reader on the other end gets the SAM), not renamed over."""
    fifo = tmp_path / "pipe.sam"
    os.mkfifo(fifo)
    with open(tmp_path / "got.sam", "wb") as sink:
        reader = subprocess.Popen(["cat", str(fifo)], stdout=sink)
        proc = seedmap(data, "map", "-q", "ref.fa", "reads.fq", "-o", str(fifo))
        reader.wait(timeout=60)
    got = (tmp_path / "got.sam").read_text()
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    plain = seedmap(data, "map", "-q", "ref.fa", "reads.fq").stdout
    assert [x for x in got.splitlines() if not x.startswith("@PG")] == [
        x for x in plain.splitlines() if not x.startswith("@PG")]


def test_short_reads_are_unmapped_and_counted(data: Path, tmp_path: Path):
    (tmp_path / "short.fq").write_text(fastq({"one": "A", "ten": "ACGTACGTAC", "long": random_dna(
        np.random.default_rng(1), 30)}))
    proc = seedmap(data, "map", "--min-length", "20", str(data / "ref.fa"), str(tmp_path / "short.fq"))
    assert proc.returncode == 0, proc.stderr
    records = [line.split("\t") for line in proc.stdout.splitlines() if not line.startswith("@")]
    flags = {r[0]: int(r[1]) for r in records}
    assert len(records) == 3 and flags["one"] & 4 and flags["ten"] & 4
    assert "2 reads shorter than 20 bp reported unmapped" in proc.stderr
    lower = seedmap(data, "map", "--min-length", "0", "-e", "0", str(data / "ref.fa"), str(tmp_path / "short.fq"))
    assert sum(1 for line in lower.stdout.splitlines() if line.startswith("one\t")) > 100  # 'A' matches everywhere
