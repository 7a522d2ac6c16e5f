"""`seedmap index --ph` and `seedmap map --filter ph` from the command line: stored or in-memory perfect
hashes give the same SAM records as --filter bs; misuse gets one clear error line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import decode, mutate, random_genome


def seedmap(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SEEDMAP_DEBUG"}
    return subprocess.run([sys.executable, "-m", "seedmap", *args], cwd=cwd, env=env, capture_output=True,
                          encoding="utf-8", timeout=300)


def records(path: Path) -> list[str]:
    return sorted(line for line in path.read_text().splitlines() if not line.startswith("@"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(7)
    d = tmp_path_factory.mktemp("ph")
    g = random_genome(rng, 30_000)
    g[5000:5600] = g[9000:9600]  # a repeat: reads with several locations
    (d / "ref.fa").write_text(">g\n" + decode(g) + "\n")
    with open(d / "reads.fq", "w") as fh:
        for i in range(200):
            p = int(rng.integers(0, g.size - 100))
            r = decode(mutate(rng, g[p:p + 100], int(rng.integers(0, 6))))
            fh.write(f"@r{i}\n{r}\n+\n{'I' * len(r)}\n")
    return d


@pytest.mark.slow
def test_stored_and_in_memory_perfect_hashes_match_bs(workdir):
    plan = ["-e", "5", "--windows", "2", "--fe", "2", "-q"]
    assert seedmap(workdir, "index", "ref.fa", "-o", "plain.smi", "-q").returncode == 0
    assert seedmap(workdir, "index", "ref.fa", "--ph", "-o", "ph.smi", "-q").returncode == 0
    assert seedmap(workdir, "map", "ref.fa", "reads.fq", "--index", "plain.smi", *plan, "-o", "bs.sam").returncode == 0
    run = seedmap(workdir, "map", "ref.fa", "reads.fq", "--index", "ph.smi", "--filter", "ph", *plan, "-o", "ph.sam")
    assert run.returncode == 0 and "building them in memory" not in run.stderr
    run = seedmap(workdir, "map", "ref.fa", "reads.fq", "--index", "plain.smi", "--filter", "ph", *plan[:-1],
                  "-o", "ph_mem.sam")
    assert run.returncode == 0 and "building them in memory" in run.stderr
    bs = records(workdir / "bs.sam")
    assert len(bs) > 200
    assert records(workdir / "ph.sam") == bs
    assert records(workdir / "ph_mem.sam") == bs


@pytest.mark.parametrize("args,message", [
    (["map", "ref.fa", "reads.fq", "--engine", "kmer", "--filter", "ph"], "needs the neighborhood engine"),
    (["map", "ref.fa", "reads.fq", "--engine", "fm", "--fe", "1"], "--fe needs the neighborhood engine"),
    (["map", "ref.fa", "reads.fq", "--engine", "kmer", "--windows", "2"], "--windows needs the neighborhood"),
    (["map", "ref.fa", "reads.fq", "--engine", "fm", "--step", "3"], "--step needs the neighborhood engine"),
    (["map", "ref.fa", "reads.fq", "--engine", "fm", "--adjacency", "2"], "--adjacency needs --engine kmer"),
    (["map", "ref.fa", "reads.fq", "--strata", "1"], "--strata needs --best or -n"),
    (["map", "ref.fa", "reads.fq", "reads.fq", "-n", "2", "--strata", "1"], "--strata applies to single-end"),
    (["index", "ref.fa", "--kind", "kmer", "--ph", "-o", "k.smi"], "not of --kind kmer"),
])
def test_misuse_is_one_error_line(workdir, args, message):
    run = seedmap(workdir, *args)
    lines = [x for x in run.stderr.splitlines() if not x.startswith("[seedmap] ")]
    assert run.returncode == 1 and len(lines) == 1 and lines[0].startswith("seedmap: error:") and message in lines[0]
