"""Seed + filter over the neighborhood index through per-block BDZ perfect hashes (Tran Ch. 4).

Same windows, same degenerated Hamming patterns (at most `fe` substitutions, each pattern once, in the
same order) as the binary-search filter (neighborhood_bs), so the candidates are exactly the same; only
the lookup differs: a full l-base pattern costs one perfect-hash query (hash, 3 g lookups, one
comparison) instead of a binary search in its seed block. The patterns of a window are hashed together
(a loop the compiler vectorises), then looked up.

Short windows (length < span + l: reads shorter than (e + 1)(span + l) under the default plan) hold only a
prefix of the neighborhood, which a hash of whole neighborhoods cannot look up; they go through the
binary-search lookup unchanged (one range per pattern), which keeps full sensitivity and identical
output.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.filter.degenerate import hamming_patterns
from seedmap.filter.neighborhood_bs import SCRATCH, window_ranges
from seedmap.index.perfect_hash import Tables, find_many

SCRATCH_PH = 5  # scratch words per pattern: the pattern, its rank, its 3 vertices


@njit(cache=True, nogil=True, _nrt=False)
def window_ranges_ph(q: np.ndarray, o: int, length: int, care: np.ndarray, l: int, fe: int, seed_start: np.ndarray,
                     nbs: np.ndarray, nb_pos: np.ndarray, hashes: Tables, out: np.ndarray, scratch: np.ndarray) -> int:
    """Position ranges [out[i, 0], out[i, 1]) in `pos` matching window q[o:o+length]; returns the count.
    The seed is read at its care positions (`care`, offsets in its span), the neighborhood after the span.
    out: max_patterns(l, fe) rows; scratch: int64[SCRATCH_PH * max_patterns(l, fe)], reused between calls."""
    span = care[care.size - 1] + 1
    if length < span + l or l == 0:
        short = scratch[:SCRATCH * (scratch.size // SCRATCH_PH)]
        return window_ranges(q, o, length, care, l, fe, seed_start, nbs, nb_pos, out, short)
    for i in range(length):
        if q[o + i] > 3:
            return 0  # N never matches: this window cannot be the exact one
    a = 0
    for c in care:
        a = (a << 2) | q[o + c]
    b0, b1 = seed_start[a], seed_start[a + 1]
    if b0 == b1:
        return 0
    base = 0
    for i in range(l):
        base = (base << 2) | q[o + span + i]
    # The same degenerated patterns as neighborhood_bs, hashed together, then looked up.
    cap = scratch.size // SCRATCH_PH
    patterns, ranks = scratch[:cap], scratch[cap:2 * cap]
    n_pat = hamming_patterns(base, l, fe, patterns, ranks)
    find_many(patterns, n_pat, np.int64(hashes.block[a, 0]), np.int64(hashes.block[a, 1]), hashes.off[a], hashes.g,
              hashes.table, scratch[2 * cap:], ranks)
    n = 0
    for t in range(n_pat):
        if ranks[t] >= 0:
            out[n, 0] = nb_pos[b0 + ranks[t]]
            out[n, 1] = nb_pos[b0 + ranks[t] + 1]
            n += 1
    return n
