"""--filter bpr and spaced seeds must report exactly the brute-force oracle's locations (and so bs's)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import check_against_oracle, random_genome, repetitive_genome, sample_reads, seedmap_locations
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from oracle import oracle_locations

from seedmap.io.reference import Reference


@pytest.mark.parametrize("e,fe", [(0, 0), (1, 1), (2, 2), (3, 1), (4, 0), (5, 2), (5, 1)])
def test_random_genome(rng, e, fe):
    seqs = [random_genome(rng, 3000), random_genome(rng, 1200)]
    ref = Reference.from_codes(["a", "b"], seqs)
    reads = sample_reads(rng, seqs, 30, (60, 101), e + 1)
    assert check_against_oracle(ref, reads, e, filter="bpr", fe=fe) > 15


@pytest.mark.parametrize("e,fe", [(1, 0), (2, 1), (3, 2), (5, 2)])
def test_repetitive_genome(rng, e, fe):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 30, (30, 101), e + 1)
    assert check_against_oracle(ref, reads, e, filter="bpr", fe=fe, u=6, l=8) > 30


def _indel_reads(rng: np.random.Generator, g: np.ndarray, n: int, m: int, e: int) -> list[np.ndarray]:
    """Reads with exactly e indels, so that windows carry indels in their neighborhood parts."""
    reads = []
    for _ in range(n):
        p = int(rng.integers(0, g.size - m - e))
        r = list(g[p:p + m + e])
        for _ in range(e):
            k = int(rng.integers(1, len(r) - 1))
            if rng.random() < 0.5:
                del r[k]
            else:
                r.insert(k, int(rng.integers(0, 4)))
        reads.append(np.array(r, dtype=np.uint8))
    return reads


@pytest.mark.parametrize("fe", [1, 2])
def test_indels_inside_windows(rng, fe):
    """Fewer, longer windows: a window with fe indels in its neighborhood parts must still be found."""
    g = random_genome(rng, 3000)
    ref = Reference.from_codes(["a"], [g])
    reads = _indel_reads(rng, g, 30, 80, 4)
    assert check_against_oracle(ref, reads, 4, filter="bpr", fe=fe, u=8, l=12) >= 30


def test_too_few_windows_misses_hits(rng):
    """A test that can fail: one window (2 lookups, seeds at 0 and 34 of 59 bases) with fe = 1 at e = 3
    loses reads with an edit in each seed."""
    g = random_genome(rng, 3000)
    ref = Reference.from_codes(["a"], [g])
    reads = []
    for k in range(30):
        r = g[100 + 80 * k:160 + 80 * k].copy()
        r[3] = (r[3] + 1) % 4  # an edit in each seed of the single window
        r[39] = (r[39] + 1) % 4
        reads.append(np.concatenate([r[:50], r[51:]]).astype(np.uint8))
    got = seedmap_locations(ref, reads, 3, filter="bpr", fe=1, windows=1)
    codes = ref.codes()
    missed = sum(1 for i, r in enumerate(reads) if got[i] != oracle_locations(r, codes, ref.starts, 3))
    assert missed > 0


def test_bs_with_fe_is_not_fully_sensitive_for_substitutions(rng):
    """Why bs's guarantee ignores fe: 2 windows (seeds at 0 and 34), fe = 2, e = 3, one substitution in
    each seed."""
    g = random_genome(rng, 3000)
    ref = Reference.from_codes(["a"], [g])
    reads = []
    for k in range(20):
        r = g[100 + 80 * k:150 + 80 * k].copy()
        r[2] = (r[2] + 1) % 4
        r[36] = (r[36] + 1) % 4
        reads.append(r)
    got = seedmap_locations(ref, reads, 3, filter="bs", fe=2, windows=2, u=8, l=8)
    codes = ref.codes()
    assert all(got[i] != oracle_locations(r, codes, ref.starts, 3) for i, r in enumerate(reads))


@pytest.mark.parametrize("shape,filt,fe", [("####-####", "bs", 0), ("######-##", "bpr", 1), ("#--#-##", "bpr", 2),
                                           ("##-###", "bs", 1)])
def test_spaced_seeds(rng, shape, filt, fe):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 30, (25, 101), 4)
    assert check_against_oracle(ref, reads, 3, shape=shape, l=8, filter=filt, fe=fe) > 30


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), e=st.integers(0, 5), fe=st.integers(0, 2), m=st.integers(8, 70),
       period=st.sampled_from([0, 1, 2, 3, 7]))
@example(seed=1, e=4, fe=1, m=8, period=2)  # a 5-base read at e = 4: too short for two lookups a window
def test_property_random_and_periodic(seed, e, fe, m, period):
    rng = np.random.default_rng(seed)
    g = random_genome(rng, 400)
    if period:
        g[100:300] = np.resize(random_genome(rng, period), 200)
    ref = Reference.from_codes(["g"], [g])
    reads = sample_reads(rng, [g], 3, (m, m + 1), e + 1)
    check_against_oracle(ref, reads, e, u=4, l=6, filter="bpr", fe=fe)
