"""BDZ perfect hashing (index/perfect_hash.py): Tran's worked example, and on random key sets of sizes
1 .. 10^6 every key found at its rank (peelable, no false negatives) and every non-key rejected, by
the single lookup and by the batched one (find_many)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from seedmap.index import perfect_hash as ph

# Tran's thesis (000) Fig. 4.1-4.2: Jseed = 13, 6 keys, r = 3 (9 vertices).
EXAMPLE_KEYS = ["AATCGCTG", "AATGGGAA", "ATCGGATG", "ATTCGGCC", "ATTTTTTT", "TTAAGGCC"]
FIG41_EDGES = [(2, 4, 7), (0, 3, 6), (2, 5, 7), (0, 4, 8), (1, 5, 7), (1, 4, 6)]
FIG41_G = [2, 0, 0, 1, 1, 3, 1, 3, 3]
FIG41_PHF = [4, 3, 2, 0, 1, 6]


def example_edge(word: str, seed: int = 13, r: int = 3) -> tuple[int, int, int]:
    h = ph.jenkins_bytes(np.frombuffer(word.encode(), dtype=np.uint8), seed)
    return h[0] % r, h[1] % r + r, h[2] % r + 2 * r


def test_worked_example_edges_match_cmph_jenkins_on_the_text():
    """The example's hypergraph is CMPH's bdz_ph over the keys' text with Jseed = 13. The thesis pairs
    ATCGGATG with {2, 5, 7} and ATTCGGCC with {0, 4, 8}: the hash gives the two the other way round
    (its edge list itself, the queries and g all agree)."""
    got = [example_edge(w) for w in EXAMPLE_KEYS]
    assert sorted(got) == sorted(FIG41_EDGES)
    assert got == [FIG41_EDGES[i] for i in (0, 1, 3, 2, 4, 5)]
    assert example_edge("ATTTTTTT") == (1, 5, 7)  # the thesis's query examples
    assert example_edge("AATCGCTC") == (1, 3, 7)


def test_worked_example_assignment_and_phf():
    edges = np.array(FIG41_EDGES, dtype=np.int64)
    n, nv = 6, 9
    queue = np.empty(n, np.int64)
    assert ph.peel(edges, nv, queue, np.empty(nv, np.int64), np.empty(nv, np.int64), np.empty(n, np.bool_))
    g = np.empty(nv, np.int64)
    ph.assign(edges, queue, nv, g, np.empty(nv, np.bool_))
    assert g.tolist() == FIG41_G
    phf = [ph.slot_of(*e, *(g[v] for v in e)) for e in FIG41_EDGES]
    assert phf == FIG41_PHF
    # Queries: ATTTTTTT -> slot 1, which holds it; AATCGCTC -> slot 3 (AATGGGAA there): rejected.
    assert ph.slot_of(1, 5, 7, g[1], g[5], g[7]) == 1
    assert ph.slot_of(1, 3, 7, g[1], g[3], g[7]) == 3


def test_hash_key_is_the_byte_hash_of_the_little_endian_word(rng):
    for key in rng.integers(0, 2**32, 200).tolist() + [0, 2**32 - 1]:
        for seed in (0, 13, 2**32 - 1):
            want = ph.jenkins_bytes(np.frombuffer(int(key).to_bytes(4, "little"), np.uint8), seed)
            assert ph.hash_key(key, seed) == want


def test_jenkins_bytes_handles_every_tail_length():
    """Keys longer than 12 bytes go through the block loop; every tail length changes the hash."""
    seen = {ph.jenkins_bytes(np.arange(n, dtype=np.uint8), 7) for n in range(30)}
    assert len(seen) == 30


@njit(cache=True)
def _lookup_all(keys: np.ndarray, seed_start: np.ndarray, probes: np.ndarray, ph_off: np.ndarray,
                ph_block: np.ndarray, ph_g: np.ndarray, ph_table: np.ndarray) -> tuple[int, int]:
    """(keys not found at their rank, probes wrongly found); probe rows: block, key (never a key there)."""
    wrong = 0
    vs = np.empty(3, dtype=np.int64)
    for a in range(seed_start.size - 1):
        for i in range(seed_start[a], seed_start[a + 1]):
            if ph.find(np.int64(keys[i]), a, ph_off, ph_block, ph_g, ph_table, vs) != i - seed_start[a]:
                wrong += 1
    false = 0
    for k in range(probes.shape[0]):
        if ph.find(probes[k, 1], probes[k, 0], ph_off, ph_block, ph_g, ph_table, vs) >= 0:
            false += 1
    return wrong, false


@njit(cache=True)
def _find_many_all(keys: np.ndarray, seed_start: np.ndarray, probes: np.ndarray, ph_off: np.ndarray,
                   ph_block: np.ndarray, ph_g: np.ndarray, ph_table: np.ndarray) -> int:
    """Blocks whose keys followed by their probes (rows sorted by block) find_many does not rank as
    0, 1, .., n - 1, -1, .., -1."""
    wrong = 0
    k = 0
    for a in range(seed_start.size - 1):
        n = seed_start[a + 1] - seed_start[a]
        k0 = k
        while k < probes.shape[0] and probes[k, 0] == a:
            k += 1
        if n == 0:
            continue
        batch = np.concatenate((keys[seed_start[a]:seed_start[a + 1]].astype(np.int64), probes[k0:k, 1]))
        ranks = np.empty(batch.size, dtype=np.int64)
        ph.find_many(batch, batch.size, np.int64(ph_block[a, 0]), np.int64(ph_block[a, 1]), ph_off[a], ph_g,
                     ph_table, np.empty(3 * batch.size + 3, dtype=np.int64), ranks)
        for i in range(batch.size):
            if ranks[i] != (i if i < n else -1):
                wrong += 1
                break
    return wrong


def check_blocks(rng: np.random.Generator, seed_start: np.ndarray, keys: np.ndarray) -> ph.PerfectHash:
    h = ph.build(seed_start, keys)
    # Non-keys: random words and near misses (one bit flipped) of keys, in the keys' blocks.
    blocks = np.repeat(np.arange(seed_start.size - 1), np.diff(seed_start))
    pick = rng.integers(0, keys.size, min(keys.size, 20_000))
    near = keys[pick].astype(np.int64) ^ (1 << rng.integers(0, 32, pick.size))
    far = rng.integers(0, 2**32, pick.size)
    probes = np.stack([np.concatenate([blocks[pick], blocks[pick]]), np.concatenate([near, far])], axis=1)
    start = seed_start[probes[:, 0]]
    end = seed_start[probes[:, 0] + 1]
    is_key = np.array([probes[k, 1] in set(keys[start[k]:end[k]].tolist()) for k in range(probes.shape[0])]) \
        if keys.size < 5000 else np.isin(probes[:, 1], keys)
    probes = probes[~is_key]
    wrong, false = _lookup_all(keys, seed_start, probes, h.ph_off, h.ph_block, h.ph_g, h.ph_table)
    assert wrong == 0 and false == 0
    probes = probes[np.argsort(probes[:, 0], kind="stable")]
    assert _find_many_all(keys, seed_start, probes, h.ph_off, h.ph_block, h.ph_g, h.ph_table) == 0
    # Vertices: 3r per block, r = ceil(1.23 n / 3) unless that failed ATTEMPTS times (tiny blocks only).
    n = np.diff(seed_start)
    r = h.ph_block[:, 1].astype(np.int64)
    assert np.all((r == 0) == (n == 0))
    big = n >= 1000
    assert np.all(r[big] == (123 * n[big] + 299) // 300)
    assert np.all(h.ph_off[1:] - h.ph_off[:-1] == (3 * r + 3) // 4 * 4)
    return h


SIZES = list(range(1, 40)) + [50, 64, 100, 128, 333, 1000, 4096, 10_000, 77_777, 200_000, 1_000_000]


@pytest.mark.parametrize("n", SIZES)
def test_single_block_every_size(rng, n):
    keys = np.sort(rng.choice(2**32, size=n, replace=False)).astype(np.uint32)
    check_blocks(rng, np.array([0, n], dtype=np.int64), keys)


def test_many_blocks_with_empty_ones_and_structured_keys(rng):
    """Neighborhood-like keys (consecutive codes, shared prefixes) in many blocks of all sizes."""
    sizes = rng.geometric(0.05, 3000) * (rng.random(3000) < 0.8)
    sizes[:5] = [0, 1, 2, 3, 4000]
    parts = []
    for s in sizes.tolist():
        base = int(rng.integers(0, 2**32 - 2 * s - 1))
        parts.append(np.sort(base + rng.choice(2 * s + 1, size=s, replace=False)).astype(np.uint32))
    keys = np.concatenate(parts)
    seed_start = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=seed_start[1:])
    check_blocks(rng, seed_start, keys)


def test_build_is_deterministic(rng):
    keys = np.sort(rng.choice(2**20, size=5000, replace=False)).astype(np.uint32)
    seed_start = np.array([0, 10, 10, 2500, 5000], dtype=np.int64)
    a, b = ph.build(seed_start, keys), ph.build(seed_start, keys)
    for name in ph.ARRAYS:
        assert np.array_equal(getattr(a, name), getattr(b, name))
