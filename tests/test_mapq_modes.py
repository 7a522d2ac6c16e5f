"""One read, one MAPQ: the primary's MAPQ under --best and -n is the one all-mapping gives the read, single-end
and paired, on random and repetitive genomes (mapq.py counts the best stratum and the next, which --best's
stratified search always reaches; paired --best's default counts the pairs within one edit of the best pair,
pair_strata.py, which on these genomes is all that all-mapping's MAPQ sees of them)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import COMP, batch_of, random_genome, repetitive_genome, sample_reads, simulate_pairs
from test_pairs import by_mate, run_pairs, tags
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


@pytest.mark.parametrize("strata", [-1, 1])
@pytest.mark.parametrize("kind_of_genome", ["random", "repetitive"])
def test_paired_mapq_is_the_same_in_every_mode(rng, monkeypatch, kind_of_genome, strata):
    """Paired --best's MAPQ, by default (pair strata) and with each mate searched a stratum beyond its best."""
    monkeypatch.setattr(rescue_module, "MAX_ANCHORS", 1 << 20)  # (pair_strata.py's guarantee holds within it)
    e, m = 3, 50
    seqs = genome(rng, kind_of_genome)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    pairs = simulate_pairs(rng, seqs, 120, m, "fr", e)
    popts = PairOptions(rescue_edits=0)
    full = by_mate(run_pairs(ref, pairs, e, popts))
    best = by_mate(run_pairs(ref, pairs, e, popts, best_only=True, strata=strata))
    assert full.keys() == best.keys()
    # A pair whose primary placements differ is not compared: in a tandem run that all-mapping joins into one
    # location, --best's search near the partner can find a proper placement (1 pair of these 120, repetitive).
    same = {k for k in full if {(f[0], f[2], f[3]) for f in (full[k][0], full[(k[0], k[1] ^ 192)][0])}
            == {(f[0], f[2], f[3]) for f in (best[k][0], best[(k[0], k[1] ^ 192)][0])}}
    assert len(same) >= len(full) - 2
    mapq = {key: (int(full[key][0][4]), int(best[key][0][4])) for key in same}
    differ = {k for k, (a, b) in mapq.items() if a != b}
    if strata < 0:  # pair strata do not look for a mate's second location next to its best (pair_strata.py)
        tandem = {k for k in differ if any(_next_to(f, full[k][0]) for f in full[k][1:])}
        assert len(tandem) <= 3 and all(mapq[k][1] > mapq[k][0] for k in tandem)
        differ -= tandem
    assert differ == set()
    assert {60, 0} <= {a for a, _ in mapq.values()}


def _next_to(other: list[str], primary: list[str]) -> bool:
    """A location one edit or less behind the primary, within a fragment's length of it."""
    return (other[2] == primary[2] and abs(int(other[3]) - int(primary[3])) <= 300
            and int(tags(other)["NM"]) <= int(tags(primary)["NM"]) + 1)


@pytest.mark.parametrize("kind_of_genome", ["random", "repetitive"])
def test_paired_best_with_no_extra_strata_chooses_the_same_pairs(rng, monkeypatch, kind_of_genome):
    """--strata 0 (each mate to its best stratum only) against --strata 1: --best's primary pairs and flags, and a
    MAPQ counting the stratum behind each mate's best as unseen."""
    monkeypatch.setattr(rescue_module, "MAX_ANCHORS", 1 << 20)
    e, m = 3, 50
    seqs = genome(rng, kind_of_genome)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    pairs = simulate_pairs(rng, seqs, 120, m, "fr", e)
    popts = PairOptions(rescue_edits=0)
    best = by_mate(run_pairs(ref, pairs, e, popts, best_only=True, strata=1))
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


def test_paired_best_mapq_bounds_the_pairs_of_untried_anchors(rng, monkeypatch):
    """Mate 2 has exact copies at 12 places, one of them a fragment from the unique mate 1. All-mapping (and --strata
    1) sees every pair: each mate's MAPQ is high. By default --best looks for mate 1 near MAX_ANCHORS of mate 2's
    copies only, so each copy beyond them may hide a pair one edit behind: MAPQ at most 20 (pair_strata.py), and
    all-mapping's again once every copy is tried."""
    e, m = 2, 50
    seg = random_genome(rng, m)
    parts = [random_genome(rng, 600)]
    for _ in range(12):
        parts += [seg, random_genome(rng, 700)]
    g = np.concatenate(parts)
    ref = Reference.from_codes(["g"], [g])
    at = 600 + 3 * (m + 700)  # the fourth copy
    a = g[at - 150:at - 150 + m]
    pair = [(a, COMP[seg[::-1]])]
    popts = PairOptions(rescue_edits=0)

    def primaries(**opts: object) -> dict[int, list[str]]:
        return {int(f[1]) & 192: f for f in run_pairs(ref, pair, e, popts, **opts) if not int(f[1]) & 256}

    full = primaries()
    assert int(full[128][3]) == at + 1 and int(full[128][1]) & 2
    assert int(full[64][4]) >= 50 and int(full[128][4]) >= 50
    for strata in (1, -1):
        best = primaries(best_only=True, strata=strata)
        assert [f[1:4] for f in best.values()] == [f[1:4] for f in full.values()]
        mapq = [int(best[64][4]), int(best[128][4])]
        assert (mapq == [int(full[64][4]), int(full[128][4])]) == (strata == 1)
        assert strata == 1 or max(mapq) <= 20
    monkeypatch.setattr(rescue_module, "MAX_ANCHORS", 1 << 20)
    best = primaries(best_only=True)
    assert [int(best[64][4]), int(best[128][4])] == [int(full[64][4]), int(full[128][4])]
