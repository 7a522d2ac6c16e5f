"""Semi-global edit distance of a read against a reference window, with the start of each hit.

For every end column j of the window, D(j) = min over starts s of edit(read, ref[s:j]) (free start and
end in the reference; N never matches). A hit is an end with D(j) <= e. For each hit we also track
S(j), the largest start among optimal alignments ending at j (ties between predecessors keep the larger
start). S(j) does not depend on the window as long as the window holds every alignment of cost <= e that
ends at j, which the candidate windows guarantee; so hit sets and locations agree with a whole-genome DP.

Ukkonen's cut-off: values are capped at e + 1 and only rows up to the last active one (value <= e) plus
one are computed, so random windows cost O(e) per column instead of O(m).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def scan_hits(q: np.ndarray, t: np.ndarray, e: int, hit_end: np.ndarray, hit_start: np.ndarray,
              hit_dist: np.ndarray) -> int:
    """Hits of q in t: end column j (1..len(t)), start column, distance. Returns how many (<= len(t))."""
    m = q.size
    cap = e + 1
    d_col = np.empty(m + 1, dtype=np.int32)
    s_col = np.empty(m + 1, dtype=np.int64)
    for i in range(m + 1):
        d_col[i] = min(i, cap)
        s_col[i] = 0
    lact = min(e, m)
    n = 0  # (column 0, the empty alignment, is never reported: callers skip reads with m <= e)
    for j in range(1, t.size + 1):
        c = t[j - 1]
        diag_d = d_col[0]
        diag_s = s_col[0]
        d_col[0] = 0
        s_col[0] = j
        top = min(lact + 1, m)
        for i in range(1, top + 1):
            old_d = d_col[i]
            old_s = s_col[i]
            d = diag_d + (0 if (q[i - 1] == c and c < 4) else 1)
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
        lact = top
        while lact > 0 and d_col[lact] > e:
            lact -= 1
        if lact == m:
            hit_end[n] = j
            hit_start[n] = s_col[m]
            hit_dist[n] = d_col[m]
            n += 1
    return n


@njit(cache=True, nogil=True)
def group_locations(n: int, hit_end: np.ndarray, hit_start: np.ndarray, hit_dist: np.ndarray,
                    loc_start: np.ndarray, loc_end: np.ndarray, loc_dist: np.ndarray) -> int:
    """Merge hits whose intervals [start, end) overlap into locations; keep each location's best hit
    (lowest distance, then leftmost end). Hits come in increasing end order. Returns the count."""
    # Stack of disjoint components: interval [c_lo, c_hi) and its best hit.
    c_lo = np.empty(n, dtype=np.int64)
    c_hi = np.empty(n, dtype=np.int64)
    top = 0
    for h in range(n):
        lo, hi = hit_start[h], hit_end[h]
        b_s, b_e, b_d = hit_start[h], hit_end[h], hit_dist[h]
        while top > 0 and c_hi[top - 1] > lo:
            top -= 1
            lo = min(lo, c_lo[top])
            if loc_dist[top] <= b_d:  # earlier hit wins ties: it has the smaller end
                b_s, b_e, b_d = loc_start[top], loc_end[top], loc_dist[top]
        c_lo[top] = lo
        c_hi[top] = hi
        loc_start[top] = b_s
        loc_end[top] = b_e
        loc_dist[top] = b_d
        top += 1
    return top
