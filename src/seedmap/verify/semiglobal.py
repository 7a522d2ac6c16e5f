"""Semi-global edit distance of a read against a reference window, with the start of each hit (a scalar
DP: mate rescue and run joining use it; the CPU verifier computes the same locations with bitvector.py).

For every end column j of the window, D(j) = min over starts s of edit(read, ref[s:j]) (free start and
end in the reference; N never matches). A hit is an end with D(j) <= e. For each hit we also track
S(j), the largest start among optimal alignments ending at j (ties between predecessors keep the larger
start). S(j) does not depend on the window as long as the window holds every alignment of cost <= e that
ends at j, which the candidate windows guarantee; so hit sets and locations agree with a whole-genome DP.
The reported alignment of a location starts at S(j) of its best end.

Ukkonen's cut-off: values are capped at e + 1 and only rows up to the last active one (value <= e) plus
one are computed, so random windows cost O(e) per column instead of O(m); a diagonal band bounds the
rest (see scan_hits).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def scan_hits(q: np.ndarray, t: np.ndarray, e: int, dlo: int, dhi: int, hit_end: np.ndarray,
              hit_start: np.ndarray, hit_dist: np.ndarray) -> int:
    """Hits of q in t: end column j (1..len(t)), start column, distance. Returns how many (<= len(t)).

    Only cells (i, c) on diagonals c - i in [dlo, dhi] are computed: every alignment of cost <= e passes
    within e diagonals of its exact window's diagonal, so callers pass [min diag - e, max diag + e] and
    nothing of cost <= e is cut off, while a typical window costs m * (4e + 1) cells instead of m^2 / 2.
    """
    m = q.size
    cap = e + 1
    d_col = np.full(m + 1, cap, dtype=np.int32)
    s_col = np.zeros(m + 1, dtype=np.int64)
    lact = -1  # last row with a value <= e in the current column (-1: none)
    if dlo <= 0 <= dhi:
        for i in range(min(m, -dlo, e) + 1):  # column 0: start at 0, then i insertions
            d_col[i] = i
            lact = i
    n = 0  # (column 0, the empty alignment, is never a hit: callers skip reads with m <= e)
    for c in range(1, t.size + 1):
        low = max(0, c - dhi)
        if low > m or (lact < 0 and low > 0):
            break  # the band has left the matrix, or nothing is active and no new start can enter
        high = min(m, c - dlo, lact + 1)
        ch = t[c - 1]
        if low == 0:
            diag_d = d_col[0]
            diag_s = s_col[0]
            d_col[0] = 0
            s_col[0] = c
            first = 1
        else:
            diag_d = d_col[low - 1]
            diag_s = s_col[low - 1]
            d_col[low - 1] = cap  # (low - 1, c) is outside the band
            first = low
        for i in range(first, high + 1):
            old_d = d_col[i]
            old_s = s_col[i]
            d = diag_d + (0 if (q[i - 1] == ch and ch < 4) else 1)
            s = diag_s
            v = d_col[i - 1] + 1  # insertion: read base against nothing
            if v < d:
                d = v
                s = s_col[i - 1]
            elif v == d and s_col[i - 1] > s:
                s = s_col[i - 1]
            h = old_d + 1  # deletion: reference base against nothing
            if h < d:
                d = h
                s = old_s
            elif h == d and old_s > s:
                s = old_s
            if d > cap:
                d = cap
            d_col[i] = d
            s_col[i] = s
            diag_d = old_d
            diag_s = old_s
        lact = high
        while lact >= low and d_col[lact] > e:
            lact -= 1
        if lact < low:
            lact = -1
        if lact == m:
            hit_end[n] = c
            hit_start[n] = s_col[m]
            hit_dist[n] = d_col[m]
            n += 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def group_runs(n: int, m: int, hit_end: np.ndarray, hit_start: np.ndarray, hit_dist: np.ndarray,
               loc_start: np.ndarray, loc_end: np.ndarray, loc_dist: np.ndarray) -> int:
    """Locations = runs of consecutive hit ends (D changes by at most 1 from one end to the next, so
    the ends of one alignment's neighbourhood form one run, and two copies of a repeat are separated by
    ends where the read does not fit). Keeps each run's best hit: lowest distance, then a span closest to
    the read length m (a trailing mismatch rather than an insertion), then leftmost end.
    Writes at most len(loc_start) locations; returns how many runs there are."""
    cap = loc_start.size
    k = 0
    h = 0
    while h < n:
        best = h
        h += 1
        while h < n and hit_end[h] == hit_end[h - 1] + 1:
            if hit_dist[h] < hit_dist[best] or (hit_dist[h] == hit_dist[best] and abs(
                    hit_end[h] - hit_start[h] - m) < abs(hit_end[best] - hit_start[best] - m)):
                best = h
            h += 1
        if k < cap:
            loc_start[k] = hit_start[best]
            loc_end[k] = hit_end[best]
            loc_dist[k] = hit_dist[best]
        k += 1
    return k
