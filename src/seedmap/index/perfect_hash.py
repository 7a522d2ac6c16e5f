"""BDZ perfect hashing of each SeedBlock's unique neighborhoods (Tran Ch. 4, paper 003; CMPH's bdz_ph).

Per seed block with N unique neighborhoods (keys): r = ceil(1.23 N / 3), |V| = 3r vertices in three
parts. A key k (a 2-bit neighborhood code, hashed as its 4 little-endian bytes) is the edge
{f(h0), f(h1) + r, f(h2) + 2r}, (h0, h1, h2) = Bob Jenkins' hash vector (lookup2 mix, as CMPH's
jenkins_hash_vector) parameterised by one 32-bit Jseed, f reducing to [0, r). CMPH and Tran's worked
example use f(h) = h % r (tests/test_perfect_hash.py reproduces the example's hypergraph with it);
queries here use a division-free f (_reduce), which peels as well. Seeds are tried until the
3-hypergraph peels (acyclic); after ATTEMPTS failures r grows (tiny blocks, e.g. N = 2 with r = 1,
can never peel).
Assignment in reverse peeling order: the first unvisited vertex v_i of each edge gets
g = (i - g[other] - g[other]) mod 3 (3 = unassigned counts as 0), so phf(k) = v_j with
j = (g[v0] + g[v1] + g[v2]) mod 3 is one-to-one on the keys.

Stored (all flat, memory-mappable):
    ph_off[a] .. ph_off[a + 1]   slots / vertices of block a (3r, padded to a multiple of 4 so that
                                 blocks never share a byte of the 2-bit g table)
    ph_block[a] = (Jseed, r)
    ph_g                         2 bits per vertex, 4 per byte (vertex v at bits 2 * (v % 4))
    ph_table[slot]               key | rank << 32, rank = the key's index in the block's sorted `nbs`;
                                 empty slots hold the block's first key (rank 0): a non-key that lands
                                 there differs from it, and that key itself hashes to its own slot.

A query costs the hash (fixed instructions, no branches), 3 g lookups, one table read and one
comparison, whatever the block size.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.spread import spread

GOLDEN = 0x9E3779B9
FIBONACCI = 0x9E3779B1  # odd 32-bit multiplier (2^32 / golden ratio, rounded to a prime)
MASK = 0xFFFFFFFF
# Seed attempts at one table size before it grows; Tran reports < 1000 attempts at 1.23, CMPH tries 1000.
ATTEMPTS = 24
UNASSIGNED = 3
ARRAYS = ("ph_off", "ph_block", "ph_g", "ph_table")
# Stored in the index header (params["ph"]): perfect hashes from another hash variant are not used.
VERSION = "bdz3-jenkins2-fibrange-1"


@dataclass
class PerfectHash:
    ph_off: np.ndarray  # int64, 4^u + 1
    ph_block: np.ndarray  # uint32, (4^u, 2): Jseed, r
    ph_g: np.ndarray  # uint8, packed 2-bit g
    ph_table: np.ndarray  # int64, key | rank << 32

    def arrays(self) -> dict[str, np.ndarray]:
        return {"ph_off": self.ph_off, "ph_block": self.ph_block, "ph_g": self.ph_g, "ph_table": self.ph_table}

    @classmethod
    def from_arrays(cls, arrays: dict, version: object = VERSION) -> PerfectHash | None:
        """The stored perfect hashes, or None when there are none or they are of another VERSION."""
        if version != VERSION or not all(name in arrays for name in ARRAYS):
            return None
        return cls(*(arrays[name] for name in ARRAYS))


class Tables(NamedTuple):
    """The perfect hashes as the lookup kernels take them (the CPU filter's and the device's)."""

    off: np.ndarray
    block: np.ndarray
    g: np.ndarray
    table: np.ndarray


# ---------------------------------------------------------------- Jenkins hash (lookup2 / CMPH)
# 32-bit arithmetic in int64 (numba would turn mixed unsigned arithmetic into floats).

@njit(cache=True, nogil=True, inline="always")
def _mix(a: int, b: int, c: int) -> tuple[int, int, int]:
    """lookup2's mix. Subtractions, left shifts and XOR keep the low 32 bits right whatever lies above
    them (int64 arithmetic wraps), so the high bits are cleared only before right shifts and at the end."""
    a = a - b - c
    a ^= (c & MASK) >> 13
    b = b - c - a
    b ^= a << 8
    c = c - a - b
    c ^= (b & MASK) >> 13
    a = a - b - c
    a ^= (c & MASK) >> 12
    b = b - c - a
    b ^= a << 16
    c = c - a - b
    c ^= (b & MASK) >> 5
    a = a - b - c
    a ^= (c & MASK) >> 3
    b = b - c - a
    b ^= a << 10
    c = c - a - b
    c ^= (b & MASK) >> 15
    return a & MASK, b & MASK, c & MASK


@njit(cache=True, nogil=True, inline="always")
def hash_key(key: int, seed: int) -> tuple[int, int, int]:
    """Jenkins hash vector of the 4-byte little-endian key (= jenkins_bytes of those bytes)."""
    return _mix((GOLDEN + key) & MASK, GOLDEN, (seed + 4) & MASK)


@njit(cache=True, nogil=True)
def jenkins_bytes(key: np.ndarray, seed: int) -> tuple[int, int, int]:
    """CMPH's jenkins_hash_vector of a byte string (uint8 array): the general form of hash_key."""
    a = GOLDEN
    b = GOLDEN
    c = seed & MASK
    n = key.size
    i = 0
    while n - i >= 12:
        a = (a + _word(key, i, 4)) & MASK
        b = (b + _word(key, i + 4, 4)) & MASK
        c = (c + _word(key, i + 8, 4)) & MASK
        a, b, c = _mix(a, b, c)
        i += 12
    rest = n - i
    c = (c + n) & MASK
    a = (a + _word(key, i, min(rest, 4))) & MASK
    b = (b + _word(key, i + 4, min(max(rest - 4, 0), 4))) & MASK
    c = (c + (_word(key, i + 8, max(rest - 8, 0)) << 8)) & MASK  # the low byte of c holds the length
    return _mix(a, b, c)


@njit(cache=True, nogil=True)
def _word(key: np.ndarray, i: int, count: int) -> int:
    w = 0
    for k in range(count):
        w |= np.int64(key[i + k]) << (8 * k)  # type: ignore[assignment]  # numba: int64 both
    return w


@njit(cache=True, nogil=True, inline="always")
def _reduce(h: int, r: int) -> int:
    """h (32 bits) to [0, r) without a division: Fibonacci-multiply, then multiply-shift (fastrange).
    The premultiply matters: lookup2's high bits are poorly mixed for keys that differ in a few low
    bits (dense short neighborhoods), and plain h * r >> 32 then never peels (tests)."""
    return (((h * FIBONACCI) & MASK) * r) >> 32


@njit(cache=True, nogil=True, inline="always")
def edge(key: int, seed: int, r: int) -> tuple[int, int, int]:
    """The key's 3 vertices, one per third of [0, 3r)."""
    h0, h1, h2 = hash_key(key, seed)
    return _reduce(h0, r), _reduce(h1, r) + r, _reduce(h2, r) + 2 * r


# ---------------------------------------------------------------- construction


@njit(cache=True, nogil=True)
def peel(edges: np.ndarray, nv: int, queue: np.ndarray, degree: np.ndarray, xor_edge: np.ndarray,
         queued: np.ndarray) -> bool:
    """Peeling order of the 3-hypergraph (CMPH's bdz_ph_generate_queue) into queue; True when acyclic.
    The one edge left at a degree-1 vertex is the XOR of the edges that touched it."""
    n = edges.shape[0]
    degree[:nv] = 0
    xor_edge[:nv] = 0
    queued[:n] = False
    for i in range(n):
        for k in range(3):
            v = edges[i, k]
            degree[v] += 1
            xor_edge[v] ^= i
    head = 0
    for i in range(n):
        if degree[edges[i, 0]] == 1 or degree[edges[i, 1]] == 1 or degree[edges[i, 2]] == 1:
            queue[head] = i
            queued[i] = True
            head += 1
    tail = 0
    while tail < head:
        cur = queue[tail]
        tail += 1
        for k in range(3):
            v = edges[cur, k]
            degree[v] -= 1
            xor_edge[v] ^= cur
        for k in range(3):
            v = edges[cur, k]
            if degree[v] == 1 and not queued[xor_edge[v]]:
                queue[head] = xor_edge[v]
                queued[xor_edge[v]] = True
                head += 1
    return head == n


@njit(cache=True, nogil=True)
def assign(edges: np.ndarray, queue: np.ndarray, nv: int, g: np.ndarray, visited: np.ndarray) -> None:
    """g values (0..2, UNASSIGNED = 3) from a complete peeling order (CMPH's bdz_ph assigning)."""
    g[:nv] = UNASSIGNED
    visited[:nv] = False
    for t in range(edges.shape[0] - 1, -1, -1):
        e = queue[t]
        v0, v1, v2 = edges[e, 0], edges[e, 1], edges[e, 2]
        if not visited[v0]:
            g[v0] = (6 - g[v1] - g[v2]) % 3
        elif not visited[v1]:
            g[v1] = (7 - g[v0] - g[v2]) % 3
        else:
            g[v2] = (8 - g[v0] - g[v1]) % 3
        visited[v0] = visited[v1] = visited[v2] = True


@njit(cache=True, nogil=True, inline="always")
def slot_of(v0: int, v1: int, v2: int, g0: int, g1: int, g2: int) -> int:
    j = (g0 + g1 + g2) % 3
    return v0 if j == 0 else (v1 if j == 1 else v2)


def initial_r(n: int) -> int:
    """ceil(1.23 n / 3): CMPH's bdz_ph table third."""
    return (123 * n + 299) // 300


@njit(cache=True, nogil=True)
def _edges(keys: np.ndarray, seed: int, r: int, edges: np.ndarray) -> None:
    for i in range(keys.size):
        edges[i, 0], edges[i, 1], edges[i, 2] = edge(np.int64(keys[i]), seed, r)


@njit(cache=True, nogil=True)
def _seed(attempt: int) -> int:
    return (13 + attempt * 0x61C88647) & MASK  # attempt 0 uses Tran's example seed, Jseed = 13


@njit(cache=True, nogil=True)
def _search(keys: np.ndarray, edges: np.ndarray, queue: np.ndarray, queued: np.ndarray) -> tuple[int, int]:
    """(Jseed, r) of the first peelable 3-hypergraph for these keys."""
    n = keys.size
    r = max((123 * n + 299) // 300, 1)
    degree = np.empty(3 * r, dtype=np.int64)
    xor_edge = np.empty(3 * r, dtype=np.int64)
    while True:
        if degree.size < 3 * r:
            degree = np.empty(3 * r, dtype=np.int64)
            xor_edge = np.empty(3 * r, dtype=np.int64)
        for attempt in range(ATTEMPTS):
            seed = _seed(attempt)
            _edges(keys, seed, r, edges[:n])
            if peel(edges[:n], 3 * r, queue, degree, xor_edge, queued):
                return seed, r
        r += 1 + r // 64


@njit(cache=True, nogil=True)
def _scratch(n: int, nv: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return (np.empty((n, 3), dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(nv, dtype=np.int64),
            np.empty(nv, dtype=np.int64), np.empty(n, dtype=np.bool_))


@njit(cache=True, nogil=True)
def _choose(seed_start: np.ndarray, nbs: np.ndarray, chunk: int, ph_block: np.ndarray, c0: int, c1: int) -> None:
    """Jseed and r of every block of chunks [c0, c1) of blocks (one scratch set per chunk)."""
    nblocks = seed_start.size - 1
    for c in range(c0, c1):
        a0, a1 = c * chunk, min((c + 1) * chunk, nblocks)
        nmax = 0
        for a in range(a0, a1):
            nmax = max(nmax, seed_start[a + 1] - seed_start[a])
        edges, queue, _, _, queued = _scratch(nmax, 0)
        for a in range(a0, a1):
            b0, b1 = seed_start[a], seed_start[a + 1]
            if b1 == b0:
                ph_block[a, 0] = 0
                ph_block[a, 1] = 0
                continue
            seed, r = _search(nbs[b0:b1], edges, queue, queued)
            ph_block[a, 0] = seed
            ph_block[a, 1] = r


@njit(cache=True, nogil=True)
def _fill(seed_start: np.ndarray, nbs: np.ndarray, chunk: int, ph_block: np.ndarray, ph_off: np.ndarray,
          ph_g: np.ndarray, ph_table: np.ndarray, c0: int, c1: int) -> None:
    """g and slot table of every block of chunks [c0, c1) from its chosen (Jseed, r)."""
    nblocks = seed_start.size - 1
    for c in range(c0, c1):
        a0, a1 = c * chunk, min((c + 1) * chunk, nblocks)
        nmax = 0
        nvmax = 0
        for a in range(a0, a1):
            nmax = max(nmax, seed_start[a + 1] - seed_start[a])
            nvmax = max(nvmax, 3 * np.int64(ph_block[a, 1]))  # type: ignore[assignment]  # numba: int64 both
        edges, queue, degree, xor_edge, queued = _scratch(nmax, nvmax)
        g = np.empty(nvmax, dtype=np.int64)
        visited = np.empty(nvmax, dtype=np.bool_)
        for a in range(a0, a1):
            b0, b1 = seed_start[a], seed_start[a + 1]
            n = b1 - b0
            if n == 0:
                continue
            seed, r = np.int64(ph_block[a, 0]), np.int64(ph_block[a, 1])
            nv = 3 * r
            keys = nbs[b0:b1]
            _edges(keys, seed, r, edges[:n])
            peel(edges[:n], nv, queue, degree, xor_edge, queued)  # peels: the same graph did in _choose
            assign(edges[:n], queue, nv, g, visited)
            base = ph_off[a]
            for v in range(nv):
                ph_g[(base + v) >> 2] |= np.uint8(g[v] << (2 * ((base + v) & 3)))
            ph_table[base:ph_off[a + 1]] = np.int64(keys[0])  # padding: the first key, rank 0
            for i in range(n):
                v0, v1, v2 = edges[i, 0], edges[i, 1], edges[i, 2]
                s = slot_of(v0, v1, v2, g[v0], g[v1], g[v2])
                ph_table[base + s] = np.int64(keys[i]) | (np.int64(i) << 32)


def build(seed_start: np.ndarray, nbs: np.ndarray) -> PerfectHash:
    """Perfect hashes of every seed block [seed_start[a], seed_start[a + 1]) of the sorted unique `nbs`."""
    nblocks = seed_start.size - 1
    if int(np.diff(seed_start).max(initial=0)) >= 2**31:
        raise ValueError("a seed block holds more than 2^31 neighborhoods")
    chunk = max(1, min(4096, nblocks // 256))
    chunks = (nblocks + chunk - 1) // chunk
    ph_block = np.zeros((nblocks, 2), dtype=np.uint32)
    spread(chunks, partial(_choose, seed_start, nbs, chunk, ph_block))
    sizes = (3 * ph_block[:, 1].astype(np.int64) + 3) // 4 * 4
    ph_off = np.zeros(nblocks + 1, dtype=np.int64)
    np.cumsum(sizes, out=ph_off[1:])
    ph_g = np.zeros(int(ph_off[-1]) // 4, dtype=np.uint8)
    ph_table = np.zeros(int(ph_off[-1]), dtype=np.int64)
    spread(chunks, partial(_fill, seed_start, nbs, chunk, ph_block, ph_off, ph_g, ph_table))
    return PerfectHash(ph_off, ph_block, ph_g, ph_table)


# ---------------------------------------------------------------- query


@njit(cache=True, nogil=True, inline="always")
def _g(ph_g: np.ndarray, v: int) -> np.int64:
    """g of vertex v >= 0, indexed unsigned (no negative-index wraparound code)."""
    return (np.int64(ph_g[np.uint64(v >> 2)]) >> (2 * (v & 3))) & 3


@njit(cache=True, nogil=True, inline="always")
def find_in(key: int, seed: int, r: int, base: int, ph_g: np.ndarray, ph_table: np.ndarray, vs: np.ndarray) -> int:
    """Rank of `key` in the block whose perfect hash is (seed, r) at slot offset `base`, or -1: the hash,
    3 g lookups, one table read, one comparison. vs: scratch int64[3]. The slot is picked by indexing it,
    not by branching: a branch on j, known only at the end of the hash's long dependency chain, is
    mispredicted 2 times in 3 and each miss throws away the work in flight (measured 2-3x slower)."""
    v0, v1, v2 = edge(key, seed, r)
    vs[0] = v0
    vs[1] = v1
    vs[2] = v2
    s = vs[(_g(ph_g, base + v0) + _g(ph_g, base + v1) + _g(ph_g, base + v2)) % 3]
    entry = ph_table[base + s]
    return entry >> 32 if (entry & MASK) == key else -1


@njit(cache=True, nogil=True, inline="always")
def find(key: int, a: int, ph_off: np.ndarray, ph_block: np.ndarray, ph_g: np.ndarray, ph_table: np.ndarray,
         vs: np.ndarray) -> int:
    """Rank of `key` in the sorted neighborhoods of block a (which must not be empty), or -1."""
    return find_in(key, np.int64(ph_block[a, 0]), np.int64(ph_block[a, 1]), ph_off[a], ph_g, ph_table, vs)


@njit(cache=True, nogil=True)
def find_many(keys: np.ndarray, n: int, seed: int, r: int, base: int, ph_g: np.ndarray, ph_table: np.ndarray,
              verts: np.ndarray, ranks: np.ndarray) -> None:
    """find_in for keys[:n] of one block: ranks[i] = the rank of keys[i] or -1. verts: scratch int64[3 * m],
    m >= n. All keys are hashed first, in a loop with no loads but the keys', which the compiler
    vectorises (several keys per SIMD instruction); the g and table lookups follow in a second loop.
    That loop reads the chosen vertex back from verts (row j) rather than selecting it (the compiler turns
    a select on j into branches, mispredicted 2 times in 3: 2.5x slower), indexes with unsigned integers
    (no negative-index wraparound code) and forms the rank arithmetically, with no branch."""
    m = verts.size // 3
    h0, h1, h2 = verts[:m], verts[m:2 * m], verts[2 * m:]
    for i in range(n):
        v0, v1, v2 = edge(keys[i], seed, r)
        h0[i], h1[i], h2[i] = base + v0, base + v1, base + v2
    for i in range(n):
        j = _g(ph_g, h0[i]) + _g(ph_g, h1[i]) + _g(ph_g, h2[i])
        j -= 3 * ((j * 11) >> 5)  # mod 3 without a division: (11 j) >> 5 = j // 3 for 0 <= j <= 9 (g <= 3)
        entry = ph_table[np.uint64(verts[np.uint64(j * m + i)])]
        ranks[i] = ((entry & MASK) == keys[i]) * ((entry >> 32) + 1) - 1
