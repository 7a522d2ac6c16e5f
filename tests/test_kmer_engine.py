"""The k-mer hash engine reports exactly the oracle's locations (and so the neighborhood engine's)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    check_against_oracle,
    genome_with_n,
    random_genome,
    repetitive_genome,
    sample_reads,
    seedmap_locations,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seedmap.filter.kmer_seeds import choose_seeds
from seedmap.index import kmer
from seedmap.index.words import count_bases
from seedmap.io.reference import Reference


@pytest.mark.parametrize("e", [0, 2, 5])
def test_random_genome(rng, e):
    seqs = [random_genome(rng, 3000), random_genome(rng, 1200)]
    ref = Reference.from_codes(["a", "b"], seqs)
    reads = sample_reads(rng, seqs, 40, (60, 101), e + 1)
    assert check_against_oracle(ref, reads, e, engine="kmer", k=8) > 20


@pytest.mark.parametrize("adjacency", [1, 2, 3])
def test_repetitive_genome_with_adjacency(rng, adjacency):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 40, (30, 100), 3)
    assert check_against_oracle(ref, reads, 2, engine="kmer", k=6, adjacency=adjacency) > 40


def test_short_reads_use_shorter_windows(rng):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 30, (12, 40), 4)
    check_against_oracle(ref, reads, 3, engine="kmer", k=12)


def test_same_locations_as_neighborhood_engine(rng):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 60, (40, 120), 5)
    a = seedmap_locations(ref, reads, 0.05, engine="kmer", k=10, adjacency=2)
    b = seedmap_locations(ref, reads, 0.05, u=6, l=10)
    assert a == b and sum(map(len, a)) > 50


def test_seed_choice_is_cheapest_disjoint_set():
    """Brute force over all sets of 3 disjoint 4-mers of a 20 bp read."""
    rng = np.random.default_rng(3)
    g = np.concatenate([np.zeros(400, np.uint8), random_genome(rng, 2000)])  # poly-A makes AAAA costly
    ix = kmer.build(Reference.from_codes(["g"], [g]), 4)
    for _ in range(20):
        q = random_genome(rng, 20)
        q[:6] = 0
        cost = [int(ix.offsets[c + 1]) - int(ix.offsets[c]) for c in
                [int("".join(map(str, q[p:p + 4])), 4) for p in range(17)]]
        best = min(cost[a] + cost[b] + cost[c] for a in range(17) for b in range(a + 4, 17)
                   for c in range(b + 4, 17))
        out = np.empty(3, np.int64)
        choose_seeds(q, 4, 3, ix.offsets, out)
        assert out[1] >= out[0] + 4 and out[2] >= out[1] + 4
        assert sum(cost[p] for p in out) == best


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), e=st.integers(0, 4), m=st.integers(8, 60), k=st.integers(3, 9),
       adjacency=st.integers(1, 3))
def test_property(seed, e, m, k, adjacency):
    rng = np.random.default_rng(seed)
    g = random_genome(rng, 400)
    g[100:250] = np.resize(random_genome(rng, 3), 150)
    ref = Reference.from_codes(["g"], [g])
    reads = sample_reads(rng, [g], 3, (m, m + 1), e + 1)
    check_against_oracle(ref, reads, e, engine="kmer", k=k, adjacency=adjacency)


def test_seed_choice_on_a_grid_for_few_seeds():
    """Few seeds in a long read weigh only k-mers every `stride` bases: the cheapest of those is taken, and
    the seeds stay disjoint and inside the read."""
    rng = np.random.default_rng(5)
    g = np.concatenate([np.zeros(300, np.uint8), random_genome(rng, 3000)])
    ix = kmer.build(Reference.from_codes(["g"], [g]), 5)
    for n_seeds in (1, 2, 3, 4):
        for _ in range(10):
            q = random_genome(rng, 90)
            q[int(rng.integers(0, 80)):][:10] = 0
            out = np.empty(n_seeds, np.int64)
            choose_seeds(q, 5, n_seeds, ix.offsets, out)
            assert np.all(np.diff(out) >= 5) and out[0] >= 0 and out[-1] <= 85
            stride = max(1, (90 - n_seeds * 5) // (4 * n_seeds))
            assert stride > 1 and np.all(out % stride == 0)
            if n_seeds == 1:
                cost = [int(ix.offsets[c + 1]) - int(ix.offsets[c]) for c in
                        [int("".join(map(str, q[p:p + 5])), 4) for p in range(0, 86, stride)]]
                p = int(out[0])
                assert cost[p // stride] == min(cost)


# ------------------------------------------------------------------- the build against a plain oracle


def oracle_kmer_index(ref: Reference, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, pos) the straightforward way: every non-N position's word (N or past the sequence end
    reads as A), a stable sort by word, a cumulative count."""
    codes = ref.codes()
    all_keys, all_pos = [], []
    for b, e in zip(ref.starts[:-1], ref.starts[1:], strict=True):
        seq = codes[b:e]
        padded = np.concatenate([np.where(seq == 4, 0, seq), np.zeros(k - 1, np.uint8)]).astype(np.int64)
        keys = np.zeros(seq.size, dtype=np.int64)
        for j in range(k):
            keys = (keys << 2) | padded[j:j + seq.size]
        keep = seq != 4
        all_keys.append(keys[keep])
        all_pos.append(np.arange(b, e, dtype=np.int64)[keep])
    keys, pos = np.concatenate(all_keys), np.concatenate(all_pos)
    order = np.argsort(keys, kind="stable")
    offsets = np.zeros(4**k + 1, dtype=np.uint32)
    np.cumsum(np.bincount(keys, minlength=4**k), out=offsets[1:])
    return offsets, pos[order].astype(np.uint32)


def assert_same_kmer_index(ref: Reference, k: int) -> None:
    ix = kmer.build(ref, k)
    offsets, pos = oracle_kmer_index(ref, k)
    assert ix.k == k
    for got, want in ((ix.offsets, offsets), (ix.pos, pos)):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 11, 12])
def test_build_equals_oracle(rng, k):
    seqs = [genome_with_n(rng, int(m)) for m in rng.integers(1, 3000, 6)]
    seqs += [genome_with_n(rng, int(m)) for m in rng.integers(1, k + 2, 4)]  # shorter than k, or about k
    seqs += [np.full(17, 4, np.uint8), np.full(1, 4, np.uint8)] + repetitive_genome(rng)
    order = rng.permutation(len(seqs))
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], [seqs[i] for i in order])
    assert_same_kmer_index(ref, k)


def test_build_all_n_and_single_base():
    assert_same_kmer_index(Reference.from_codes(["n"], [np.full(40, 4, np.uint8)]), 4)
    assert_same_kmer_index(Reference.from_codes(["a", "n"], [np.array([2], np.uint8), np.full(3, 4, np.uint8)]), 3)
    ix = kmer.build(Reference.from_codes(["n"], [np.full(40, 4, np.uint8)]), 4)
    assert ix.pos.size == 0 and ix.offsets.dtype == np.uint32 and ix.pos.dtype == np.uint32


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 8),
       lengths=st.lists(st.integers(1, 60), min_size=1, max_size=6), n_rate=st.sampled_from([0.0, 0.1, 0.6]))
def test_build_property(seed, k, lengths, n_rate):
    rng = np.random.default_rng(seed)
    seqs = []
    for m in lengths:
        g = random_genome(rng, m)
        g[rng.random(m) < n_rate] = 4
        seqs.append(g)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    assert_same_kmer_index(ref, k)


def test_n_count_ignores_pad_bits():
    mask = np.array([0b10110001, 0b11111111, 0b11110010], dtype=np.uint8)
    for first in range(0, 25):
        for total in range(first, 25):
            want = sum((int(mask[i >> 3]) >> (i & 7)) & 1 for i in range(first, total))
            assert (total - first) - count_bases(mask, first, total) == want
