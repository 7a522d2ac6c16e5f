"""One read, one MAPQ: the primary's MAPQ under --best and -n is the one all-mapping gives the read, single-end
and paired, on random and repetitive genomes (mapq.py counts the best stratum and the next, which --best's
stratified search always reaches)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import batch_of, random_genome, repetitive_genome, sample_reads, simulate_pairs
from test_pairs import by_mate, run_pairs
from test_strata import ENGINES, engine_of

from seedmap.io.reference import Reference
from seedmap.options import PairOptions
from seedmap.paired import rescue as rescue_module
from seedmap.pipeline.stages import SamFormatter, map_batch


def genome(rng: np.random.Generator, kind: str) -> list[np.ndarray]:
    return repetitive_genome(rng) if kind == "repetitive" else [random_genome(rng, 3000), random_genome(rng, 900)]


def primary_mapq(text: bytes) -> dict[str, int]:
    return {f[0]: int(f[4]) for f in (x.split("\t") for x in bytes(text).decode().splitlines())
            if not int(f[1]) & 256}


@pytest.mark.parametrize("kind", ENGINES)
@pytest.mark.parametrize("kind_of_genome", ["random", "repetitive"])
def test_single_end_mapq_is_the_same_in_every_mode(rng, kind, kind_of_genome):
    from seedmap.options import MapOptions

    seqs = genome(rng, kind_of_genome)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    engine = engine_of(kind, ref)
    reads = sample_reads(rng, seqs, 60, (30, 90), 4)
    fmt = SamFormatter(ref)
    runs = {name: primary_mapq(map_batch(batch_of(reads), engine, fmt, MapOptions(errors=4, **opts))[0])
            for name, opts in {"all": {}, "best": {"best_only": True}, "n1": {"max_hits": 1},
                               "n3": {"max_hits": 3}}.items()}
    assert runs["best"] == runs["all"] == runs["n1"] == runs["n3"]
    assert 60 in runs["all"].values() and 0 in runs["all"].values()
    assert any(0 < q < 60 for q in runs["all"].values()) or kind_of_genome == "random"


@pytest.mark.parametrize("kind_of_genome", ["random", "repetitive"])
def test_paired_mapq_is_the_same_in_every_mode(rng, monkeypatch, kind_of_genome):
    monkeypatch.setattr(rescue_module, "MAX_ANCHORS", 1 << 20)  # (pair_strata.py's guarantee holds within it)
    e, m = 3, 50
    seqs = genome(rng, kind_of_genome)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    pairs = simulate_pairs(rng, seqs, 120, m, "fr", e)
    popts = PairOptions(rescue_edits=0)
    full, best = by_mate(run_pairs(ref, pairs, e, popts)), by_mate(run_pairs(ref, pairs, e, popts, best_only=True))
    assert full.keys() == best.keys()
    # A pair whose primary placements differ is not compared: in a tandem run that all-mapping joins into one
    # location, --best's search near the partner can find a proper placement (1 pair of these 120, repetitive).
    same = {k for k in full if {(f[0], f[2], f[3]) for f in (full[k][0], full[(k[0], k[1] ^ 192)][0])}
            == {(f[0], f[2], f[3]) for f in (best[k][0], best[(k[0], k[1] ^ 192)][0])}}
    assert len(same) >= len(full) - 2
    mapq = {key: (int(full[key][0][4]), int(best[key][0][4])) for key in same}
    assert [k for k, (a, b) in mapq.items() if a != b] == []
    assert {60, 0} <= {a for a, _ in mapq.values()}


@pytest.mark.parametrize("kind_of_genome", ["random", "repetitive"])
def test_paired_best_with_no_extra_strata_chooses_the_same_pairs(rng, monkeypatch, kind_of_genome):
    """--strata 0 (each mate to its best stratum only): --best's primary pairs and flags, and a MAPQ counting
    the stratum behind each mate's best as unseen."""
    monkeypatch.setattr(rescue_module, "MAX_ANCHORS", 1 << 20)
    e, m = 3, 50
    seqs = genome(rng, kind_of_genome)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    pairs = simulate_pairs(rng, seqs, 120, m, "fr", e)
    popts = PairOptions(rescue_edits=0)
    best = by_mate(run_pairs(ref, pairs, e, popts, best_only=True))
    short = by_mate(run_pairs(ref, pairs, e, popts, best_only=True, strata=0))
    assert short.keys() == best.keys()
    assert {k: (v[0][1], v[0][2], v[0][3]) for k, v in short.items()} == {
        k: (v[0][1], v[0][2], v[0][3]) for k, v in best.items()}
    def nm(fields: list[str]) -> int:
        return next(int(t[5:]) for t in fields[11:] if t.startswith("NM:i:"))

    # A stratum left unsearched lowers the MAPQ of the mates found within e - 1 (all but those whose pair's choice
    # asked for more strata).
    sixty = [k for k, v in best.items() if int(v[0][4]) == 60 and nm(v[0]) < e]
    assert sixty and sum(int(short[k][0][4]) == 60 for k in sixty) < len(sixty) / 2
