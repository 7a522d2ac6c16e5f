"""The perfect-hash filter (--filter ph) must give exactly the candidates of the binary-search filter, and
with the verifier exactly the brute-force oracle's locations (random and repetitive genomes, fe 0..2)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_oracle, batch_of, engine_locations, random_genome, repetitive_genome, sample_reads

from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.engines.neighborhood_ph import PerfectHashEngine
from seedmap.index import neighborhood
from seedmap.io.reference import Reference
from seedmap.pipeline import errors_per_read, locate


def engines(ref: Reference, u: int, l: int, shape: str = "", **plan) -> tuple[NeighborhoodEngine, PerfectHashEngine]:
    ix = neighborhood.build(ref, u, l, shape, ph=True)
    return NeighborhoodEngine(ix, ref.starts, **plan), PerfectHashEngine(ix, ref.starts, **plan)


def same_candidates(ref: Reference, reads: list[np.ndarray], errors: float, u: int, l: int, **plan) -> int:
    """ph and bs candidate windows are identical; returns how many there are."""
    bs, ph = engines(ref, u, l, **plan)
    batch = batch_of(reads)
    qerr = errors_per_read(batch.lengths, errors)
    qcodes, qoff = batch.queries()
    qb, wb = bs.candidate_windows(qcodes, qoff, qerr)
    qp, wp = ph.candidate_windows(qcodes, qoff, qerr)
    assert np.array_equal(qb, qp) and np.array_equal(wb, wp)
    return qb.size


def check_oracle(ref: Reference, reads: list[np.ndarray], errors: float, u: int, l: int, **plan) -> int:
    _, engine = engines(ref, u, l, **plan)
    return assert_oracle(engine_locations(engine, ref, reads, errors), ref, reads, errors)


@pytest.mark.parametrize("fe", [0, 1, 2])
def test_random_genome_matches_oracle(rng, fe):
    seqs = [random_genome(rng, 3000), random_genome(rng, 1200)]
    ref = Reference.from_codes(["a", "b"], seqs)
    reads = sample_reads(rng, seqs, 40, (40, 101), 3)  # windows of 10 .. 25 bases: short and full ones
    assert check_oracle(ref, reads, 2, 4, 8, fe=fe) > 20
    assert same_candidates(ref, reads, 2, 4, 8, fe=fe) > 0


@pytest.mark.parametrize("fe", [0, 1, 2])
def test_repetitive_genome_matches_oracle(rng, fe):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 40, (30, 90), 3)
    assert check_oracle(ref, reads, 2, 5, 6, fe=fe) > 40
    assert same_candidates(ref, reads, 2, 5, 6, fe=fe) > 0


@pytest.mark.parametrize("u,l,fe", [(3, 16, 2), (6, 16, 1), (10, 16, 0), (4, 1, 1), (2, 0, 0), (8, 4, 2)])
def test_index_shapes_and_plans_same_candidates_as_bs(rng, u, l, fe):
    """Every index shape, plan (fewer windows, sliding windows) and fe: ph finds exactly bs's candidates."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 30, (20, 120), 4)
    assert same_candidates(ref, reads, 3, u, l, fe=fe) > 0
    assert same_candidates(ref, reads, 4, u, l, fe=fe, windows=2) > 0
    assert same_candidates(ref, reads, 2, u, l, fe=fe, step=3) > 0


@pytest.mark.parametrize("shape,fe", [("####-####", 0), ("######-##", 1), ("#--#-##", 2)])
def test_spaced_seeds_match_bs_and_oracle(rng, shape, fe):
    """Spaced seeds: the seed address is read at the care positions and the hashed neighborhood follows
    the span (reads of 4 (span + l) bases and more have full windows, looked up in the perfect hash)."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 30, (25, 101), 4)
    assert check_oracle(ref, reads, 3, 0, 8, shape=shape, fe=fe) > 30
    assert same_candidates(ref, reads, 3, 0, 8, shape=shape, fe=fe) > 0
    assert same_candidates(ref, reads, 3, 0, 8, shape=shape, fe=fe, windows=2) > 0


def substituted_reads(rng: np.random.Generator, g: np.ndarray, allowed: np.ndarray) -> list[np.ndarray]:
    """30 reads of 60 bases from g[100 + 120 k:], each with 5 substitutions at `allowed` offsets."""
    reads = []
    for k in range(30):
        r = g[100 + 120 * k:160 + 120 * k].copy()
        for p in rng.choice(allowed, size=5, replace=False):
            r[p] = (r[p] + rng.integers(1, 4)) % 4
        reads.append(r)
    return reads


def found_at_origin(ref: Reference, reads: list[np.ndarray], engine: PerfectHashEngine) -> list[bool]:
    batch = batch_of(reads)
    loc, _ = locate(batch, engine, ref, errors_per_read(batch.lengths, 5))
    ends = {int(q) >> 1: int(e) for q, e in zip(loc.query, loc.end, strict=True) if q & 1 == 0}
    return [abs(ends.get(k, -99) - (160 + 120 * k)) <= 5 for k in range(len(reads))]  # the best alignment's end


def test_windows_2_fe_2_finds_substitutions_outside_the_seeds(rng):
    """--windows 2 --fe 2 at e = 5 (the E. coli benchmark plan): 60-base reads get windows [0, 22) and
    [38, 60) (u = 6, l = 16). With the 5 substitutions outside the two seed parts, one neighborhood holds
    at most 2 of them, so every read is found, through full-length windows looked up in the perfect hash."""
    g = random_genome(rng, 4000)
    ref = Reference.from_codes(["g"], [g])
    outside_seeds = np.r_[6:38, 44:60]
    reads = substituted_reads(rng, g, outside_seeds)
    _, engine = engines(ref, 6, 16, windows=2, fe=2)
    assert all(found_at_origin(ref, reads, engine))
    assert same_candidates(ref, reads, 5, 6, 16, windows=2, fe=2) > 0


def test_fe_gives_no_guarantee_when_substitutions_hit_the_seeds(rng):
    """The seed part of a window is looked up exactly: one substitution in each of the 2 seeds loses the
    read although k (fe + 1) >= e + 1. So such a plan guarantees nothing (plan.guarantee says so)."""
    from seedmap.filter import plan

    g = random_genome(rng, 4000)
    ref = Reference.from_codes(["g"], [g])
    reads = substituted_reads(rng, g, np.r_[0:6])[:15] + substituted_reads(rng, g, np.r_[38:44])[15:]
    for r, k in zip(reads, range(30), strict=True):  # plus one substitution in the other seed
        o = 40 if k < 15 else 2
        r[o] = (g[100 + 120 * k + o] + 1) % 4
    _, engine = engines(ref, 6, 16, windows=2, fe=2)
    assert not any(found_at_origin(ref, reads, engine))
    assert plan.guarantee(60, 5, 22, 2, 0, 2) == plan.NONE
