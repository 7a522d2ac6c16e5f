"""--filter bpr and --seed-shape on the command line: same SAM records as bs, warnings, clean errors."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import decode, random_genome, repetitive_genome, sample_reads

from seedmap.engines.factory import neighborhood_engine as make_engine
from seedmap.index import neighborhood
from seedmap.io.reference import Reference
from seedmap.pipeline import EngineOptions, MapOptions
from seedmap.pipeline.guarantee import GuaranteeWarnings


def seedmap(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SEEDMAP_DEBUG"}
    return subprocess.run([sys.executable, "-m", "seedmap", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def records(sam: Path) -> list[str]:
    return sorted(ln for ln in sam.read_text().splitlines() if not ln.startswith("@PG"))


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("bpr")
    rng = np.random.default_rng(77)
    seqs = repetitive_genome(rng) + [random_genome(rng, 4000)]
    (d / "ref.fa").write_text("".join(f">s{i}\n{decode(s)}\n" for i, s in enumerate(seqs)))
    reads = sample_reads(rng, seqs, 150, (60, 101), 6)
    (d / "reads.fa").write_text("".join(f">r{i}\n{decode(r)}\n" for i, r in enumerate(reads)))
    return d


@pytest.mark.slow
def test_bpr_and_spaced_seeds_give_the_same_sam_as_bs(work):
    assert seedmap(work, "index", "ref.fa").returncode == 0
    assert seedmap(work, "index", "ref.fa", "--seed-shape", "####-####", "-l", "12", "-o", "spaced.smi"
                   ).returncode == 0
    assert json.loads((work / "spaced.smi" / "header.json").read_text())["params"]["shape"] == "####-####"
    runs = {"bs": ("-o", "bs.sam"),
            "bpr": ("-o", "bpr.sam", "--filter", "bpr", "--fe", "2"),
            "spaced": ("-o", "spaced.sam", "--index", "spaced.smi", "--filter", "bpr", "--fe", "1")}
    for name, opts in runs.items():
        res = seedmap(work, "map", "-e", "5", "ref.fa", "reads.fa", *opts)
        assert res.returncode == 0, res.stderr
        assert "fully sensitive" not in res.stderr, (name, res.stderr)
    want = records(work / "bs.sam")
    assert len(want) > 150
    assert records(work / "bpr.sam") == want
    assert records(work / "spaced.sam") == want


@pytest.mark.parametrize("args,message", [
    (("index", "ref.fa", "--seed-shape", "##x##"), "seed shape must be"),
    (("index", "ref.fa", "--seed-shape=-####"), "seed shape must be"),
    (("index", "ref.fa", "--seed-shape", "#" * 14), "seed length must be"),
    (("index", "ref.fa", "--seed-shape", "#-#-#-#-#-#-#-#-#", "-l", "16"), "at most 32"),
    (("map", "ref.fa", "reads.fa", "--filter", "bpr", "--fe", "17", "-o", "x.sam"), "neighborhood length"),
    (("map", "ref.fa", "reads.fa", "--filter", "xyz", "-o", "x.sam"), "invalid choice"),
])
def test_bad_options_fail_cleanly(work, args, message):
    res = seedmap(work, *args)
    assert res.returncode != 0
    assert message in res.stderr and "Traceback" not in res.stderr
    assert not (work / "x.sam").exists()


def test_warnings_follow_the_bpr_guarantee(caplog):
    ref = Reference.from_codes(["a"], [random_genome(np.random.default_rng(3), 500)])
    ix = neighborhood.build(ref, 6, 10)

    def warned(e: int, **options: int) -> bool:
        engine = make_engine(ix, ref.starts, EngineOptions(filter="bpr", **options))
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="seedmap"):
            GuaranteeWarnings(MapOptions(errors=e), engine.max_window, 0, 0, 0, engine.guarantee).check(
                np.array([100]))
        return "NOT fully sensitive" in caplog.text

    assert not warned(5, fe=2)
    assert not warned(5, fe=1, windows=3)
    assert warned(5, fe=1, windows=2)
    assert warned(3, fe=1, windows=1, step=30)
    assert not warned(3, fe=0, step=1)
