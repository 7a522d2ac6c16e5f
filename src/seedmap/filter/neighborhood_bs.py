"""Seed + filter over the neighborhood index by binary search of degenerated patterns (Tran §3.2).

For each query (read or reverse complement) and each window of its plan, the seed part is looked up
exactly and every neighborhood pattern within `fe` substitutions of the window's neighborhood part is
binary searched in the seed's sorted block. Each match p at read offset o gives a verification window
[p - o - e, p - o + m + e), clipped to p's sequence (filter/windows.py, as for every engine).

The two passes over the queries (count, then fill, so that no per-read list can overflow and repetitive
reads keep all their hits) are in neighborhood_passes, shared with the perfect-hash lookup.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.filter.degenerate import hamming_patterns
from seedmap.filter.seed_address import seed_key

SCRATCH = 2  # scratch words per pattern: the patterns and hamming_patterns' own


@njit(cache=True, nogil=True, inline="always")
def lower_bound(arr: np.ndarray, lo: int, hi: int, value: int) -> int:
    while lo < hi:
        mid = (lo + hi) >> 1
        if np.int64(arr[mid]) < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True, _nrt=False)
def lookup_key(q: np.ndarray, o: int, length: int, care: np.ndarray) -> tuple[int, int, int]:
    """seed_key of window q[o:o+length], with r = -1 when the window holds an N anywhere: N never matches,
    so this window cannot be the exact one."""
    for i in range(length):
        if q[o + i] > 3:
            return 0, 0, -1
    return seed_key(q, o, length, care)


@njit(cache=True, nogil=True, _nrt=False)
def word_at(q: np.ndarray, o: int, r: int) -> int:
    """The r bases q[o:o+r] as one word, 2 bits a base, the first in the highest bits."""
    w = 0
    for i in range(r):
        w = (w << 2) | q[o + i]
    return w


@njit(cache=True, nogil=True, inline="always")
def block_ranges(base: int, r: int, l: int, fe: int, b0: int, b1: int, nbs: np.ndarray, out: np.ndarray,
                 scratch: np.ndarray) -> int:
    """Ranges [out[i, 0], out[i, 1]) of the seed block [b0, b1) (rows of nbs and nb_pos) whose
    neighborhoods match the window's r neighborhood bases (`base`, a word_at) within fe substitutions;
    returns the count. out: max_patterns(l, fe) rows; scratch: int64[SCRATCH * max_patterns(l, fe)],
    reused between calls (allocating it per window cost more than the search)."""
    if r == 0:
        out[0, 0] = b0
        out[0, 1] = b1
        return 1
    if b0 == b1:
        return 0
    shift = 2 * (l - r)
    if fe == 0:  # the word itself (what hamming_patterns gives, without building its table)
        lo = lower_bound(nbs, b0, b1, base << shift)
        hi = prefix_end(nbs, lo, b1, base, r, l)
        out[0, 0] = lo
        out[0, 1] = hi
        return 1 if hi > lo else 0
    cap = scratch.size // SCRATCH
    patterns = scratch[:cap]
    n_pat = hamming_patterns(base, r, fe, patterns, scratch[cap:])
    n = 0
    for t in range(n_pat):
        value = patterns[t]
        lo = lower_bound(nbs, b0, b1, value << shift)
        hi = prefix_end(nbs, lo, b1, value, r, l)
        if hi > lo:
            out[n, 0] = lo
            out[n, 1] = hi
            n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def prefix_end(nbs: np.ndarray, lo: int, b1: int, value: int, r: int, l: int) -> int:
    """End of the neighborhoods from lo (the first >= value's) that start with the r-base word value."""
    if r == l:  # whole neighborhoods are unique in the block: one match at most
        return lo + 1 if lo < b1 and np.int64(nbs[lo]) == value else lo
    return lower_bound(nbs, lo, b1, (value + 1) << (2 * (l - r)))  # a prefix: every one that starts with it


@njit(cache=True, nogil=True, inline="always")
def to_positions(out: np.ndarray, n: int, nb_pos: np.ndarray) -> None:
    """Turn the first n ranges of neighborhoods into ranges of `pos` (where each one's positions start)."""
    for i in range(n):
        out[i, 0] = nb_pos[out[i, 0]]
        out[i, 1] = nb_pos[out[i, 1]]


@njit(cache=True, nogil=True, _nrt=False)
def window_ranges(q: np.ndarray, o: int, length: int, care: np.ndarray, l: int, fe: int,
                   seed_start: np.ndarray, nbs: np.ndarray, nb_pos: np.ndarray, out: np.ndarray,
                   scratch: np.ndarray) -> int:
    """Position ranges [out[i, 0], out[i, 1]) in `pos` matching window q[o:o+length]; returns the count.
    The seed is read at its care positions (`care`, offsets in its span; 0..u-1 for a contiguous seed).
    out and scratch as in block_ranges."""
    a0, a1, r = lookup_key(q, o, length, care)
    if r < 0:
        return 0
    base = word_at(q, o + care[care.size - 1] + 1, r)
    n = block_ranges(base, r, l, fe, seed_start[a0], seed_start[a1], nbs, out, scratch)
    to_positions(out, n, nb_pos)
    return n
