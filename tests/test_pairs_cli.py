"""Paired-end runs end to end: the same SAM for every thread count and batch size, two files or one
interleaved; bad paired input gets one clear error line and leaves no output file."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import COMP, decode, mutate, random_genome

from seedmap.index.neighborhood import NeighborhoodParams
from seedmap.kinds import build_index
from seedmap.paired.insert_size import InsertModel
from seedmap.pipeline import MapOptions, RunOptions
from seedmap.pipeline.run import run_map


def fastq(records: list[tuple[str, np.ndarray]]) -> str:
    return "".join(f"@{name}\n{decode(seq)}\n+\n{'I' * seq.size}\n" for name, seq in records)


@pytest.fixture(scope="module")
def pair_files(tmp_path_factory) -> Path:
    rng = np.random.default_rng(7)
    d = tmp_path_factory.mktemp("pairs")
    g = random_genome(rng, 30_000)
    g[12_000:12_300] = g[5_000:5_300]  # a repeat
    (d / "ref.fa").write_text(">chr\n" + decode(g) + "\n")
    r1, r2 = [], []
    for i in range(400):
        f = int(rng.normal(300, 30))
        p = int(rng.integers(0, g.size - f))
        frag = g[p:p + f] if rng.random() < 0.5 else COMP[g[p:p + f][::-1]]
        r1.append((f"pair{i}/1", mutate(rng, frag[:100], int(rng.integers(0, 7)))))
        r2.append((f"pair{i}/2", mutate(rng, COMP[frag[-100:][::-1]], int(rng.integers(0, 9)))))
    (d / "r1.fq").write_text(fastq(r1))
    (d / "r2.fq").write_text(fastq(r2))
    (d / "inter.fq").write_text(fastq([x for ab in zip(r1, r2, strict=True) for x in ab]))
    (d / "short2.fq").write_text(fastq(r2[:-1]))
    (d / "r1.fq.gz").write_bytes(gzip.compress(fastq(r1).encode()))
    text2 = fastq(r2)
    (d / "cut2.fq.gz").write_bytes(gzip.compress(text2[:len(text2) - 150].encode()))  # its last record cut short
    (d / "renamed2.fq").write_text(fastq([("other/2" if i == 10 else n, s) for i, (n, s) in enumerate(r2)]))
    build_index(str(d / "ref.fa"), None, "neighborhood", NeighborhoodParams(10, 16))
    return d


def _map(d: Path, out: Path, threads: int, batch: int, insert: InsertModel | None = None,
         best: bool = False) -> list[str]:
    """The run's SAM lines (BAM output read back as SAM)."""
    run_map(RunOptions(reference=str(d / "ref.fa"), reads=str(d / "r1.fq"), reads2=str(d / "r2.fq"), output=str(out),
                       threads=threads, batch_size=batch, insert=insert, command_line="seedmap test",
                       map=MapOptions(best_only=best)))
    if out.suffix == ".bam":
        import pysam

        with pysam.AlignmentFile(str(out), "rb") as fh:
            return str(fh.header).splitlines() + [r.to_string() for r in fh]
    return out.read_text().splitlines()


def test_same_output_for_threads_and_batches(pair_files, tmp_path):
    a = _map(pair_files, tmp_path / "a.sam", threads=1, batch=20_000)
    b = _map(pair_files, tmp_path / "b.sam", threads=2, batch=37)
    c = _map(pair_files, tmp_path / "c.sam", threads=3, batch=1)
    d = _map(pair_files, tmp_path / "d.sam", threads=2, batch=777)
    assert a == b == c == d
    bams = [_map(pair_files, tmp_path / f"{t}.bam", threads=t, batch=b) for t, b in ((1, 20_000), (3, 1))]
    assert (tmp_path / "1.bam").read_bytes() == (tmp_path / "3.bam").read_bytes()
    assert [x for x in bams[0] if not x.startswith("@")] == [x for x in a if not x.startswith("@")]
    records = [line.split("\t") for line in a if not line.startswith("@")]
    prim = [f for f in records if not int(f[1]) & 256]
    assert [f[0] for f in prim] == [f"pair{i}" for i in range(400) for _ in (1, 2)]  # input order, names stripped
    assert [int(f[1]) & 192 for f in prim] == [64, 128] * 400
    proper = sum(1 for f in prim if int(f[1]) & 2) / len(prim)
    assert proper > 0.9
    rescued = [f for f in records if not int(f[1]) & 4 and int(f[11][5:]) > 5]  # NM beyond e = 5
    assert rescued and all(int(f[1]) & 2 for f in rescued)
    his: dict[tuple[str, int], list[int]] = {}  # HI per mate: 1, 2, ... NH, the primary first
    for f in records:
        tags = dict((t[:2], int(t[5:])) for t in f[11:] if t[:2] in ("NH", "HI"))
        if not int(f[1]) & 4:
            his.setdefault((f[0], int(f[1]) & 192), []).append(tags["HI"])
            assert tags["HI"] == 1 or int(f[1]) & 256
            assert tags["NH"] >= tags["HI"]
    assert all(hi == list(range(1, len(hi) + 1)) for hi in his.values())
    assert any(len(hi) > 1 for hi in his.values())


def test_best_pairs_same_output_for_threads_and_batches(pair_files, tmp_path):
    """Paired --best's rounds (pair_strata.py) depend on a batch's reads only per read and per pair: the same records
    for every thread count and batch size, and the same primaries as all-mapping."""
    a = _map(pair_files, tmp_path / "a.sam", threads=1, batch=20_000, best=True)
    assert a == _map(pair_files, tmp_path / "b.sam", threads=2, batch=37, best=True)
    assert a == _map(pair_files, tmp_path / "c.sam", threads=3, batch=1, best=True)
    full = _map(pair_files, tmp_path / "full.sam", threads=2, batch=50)

    def primaries(lines: list[str]) -> list[list[str]]:
        fields = [line.split("\t") for line in lines if line[0] != "@"]
        return [f[:4] + f[5:9] for f in fields if not int(f[1]) & 256]  # all but MAPQ (pair_strata.py: may differ)

    assert primaries(a) == primaries(full)


def seedmap(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SEEDMAP_DEBUG"}
    return subprocess.run([sys.executable, "-m", "seedmap", *args], cwd=cwd, env=env, capture_output=True,
                          encoding="utf-8", errors="replace", timeout=300)


def test_interleaved_equals_two_files(pair_files, tmp_path):
    two = seedmap(pair_files, "map", "-q", "ref.fa", "r1.fq", "r2.fq", "-o", str(tmp_path / "two.sam"))
    one = seedmap(pair_files, "map", "-q", "-p", "ref.fa", "inter.fq", "-o", str(tmp_path / "one.sam"))
    assert two.returncode == one.returncode == 0, two.stderr + one.stderr
    body = [(tmp_path / n).read_text().split("\n", 3)[3] for n in ("two.sam", "one.sam")]  # after @HD @SQ @PG
    assert body[0] == body[1] and body[0].count("\n") >= 800


@pytest.mark.parametrize("args, message", [
    (("r1.fq", "short2.fq"), "reads are not paired"),
    (("r1.fq", "renamed2.fq"), "reads are not paired"),
    (("-p", "r1.fq", "r2.fq"), "not both"),
    (("-I", "abc", "r1.fq", "r2.fq"), "-I: expected MEAN,SD"),
    (("-p", "r1.fq"), "reads are not paired"),
    (("r1.fq", "missing.fq"), "missing.fq: no such file"),
])
def test_bad_paired_input(pair_files, args, message):
    before = sorted(os.listdir(pair_files))
    proc = seedmap(pair_files, "map", "-o", "out.sam", "ref.fa", *args)
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("[seedmap] ")]
    assert proc.returncode != 0
    assert len(errors) == 1 and errors[0].startswith("seedmap: error: ") and message in errors[0], proc.stderr
    assert sorted(os.listdir(pair_files)) == before


@pytest.mark.parametrize("args, blamed, message", [
    (("r1.fq", "short2.fq"), "short2.fq", "ends after 399 reads, and r1.fq holds more"),
    (("short2.fq", "r1.fq"), "short2.fq", "ends after 399 reads, and r1.fq holds more"),
    (("r1.fq.gz", "cut2.fq.gz"), "cut2.fq.gz", "not valid FASTA/FASTQ"),
    (("cut2.fq.gz", "r1.fq.gz"), "cut2.fq.gz", "not valid FASTA/FASTQ"),
])
def test_unequal_mate_files_name_the_shorter(pair_files, args, blamed, message):
    """Mate files of unequal length: the error is about the one that ends first (or breaks), whichever
    mate it holds, plain or gzip (dnaio's paired reader blames the first file)."""
    proc = seedmap(pair_files, "map", "-o", "out.sam", "ref.fa", *args)
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("[seedmap] ")]
    assert proc.returncode == 1 and len(errors) == 1, proc.stderr
    assert errors[0].startswith(f"seedmap: error: {blamed}: ") and message in errors[0], proc.stderr


def test_paired_bam_with_read_group(pair_files, tmp_path):
    """Paired runs write through the same sink as single-end ones: BAM, @RG and RG:Z: on every record."""
    import pysam

    sam = seedmap(pair_files, "map", "-q", "ref.fa", "r1.fq", "r2.fq", "-o", str(tmp_path / "p.sam"))
    bam = seedmap(pair_files, "map", "-q", "--rg", r"@RG\tID:lane1\tSM:s1", "ref.fa", "r1.fq", "r2.fq",
                  "-o", str(tmp_path / "p.bam"))
    assert sam.returncode == bam.returncode == 0, sam.stderr + bam.stderr
    with pysam.AlignmentFile(str(tmp_path / "p.bam"), "rb") as fh:
        assert fh.header.to_dict()["RG"] == [{"ID": "lane1", "SM": "s1"}]
        records = [r.to_string() for r in fh]
    expected = [line + "\tRG:Z:lane1" for line in (tmp_path / "p.sam").read_text().splitlines()
                if not line.startswith("@")]
    assert records == expected and len(records) >= 800
    assert all(int(r.split("\t")[1]) & 1 for r in records)
