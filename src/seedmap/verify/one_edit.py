"""Locations of a read in a window at e <= 1 on the packed read and reference (--best's round at e = 1).

Same definitions and result as bitvector.window_locations (D(j), runs of hit ends, each run's best end and
its start S(j)), computed another way: an alignment of cost <= 1 ending at column j spans m - 1, m or
m + 1 columns, so D(j) <= 1 is read off three facts per diagonal (a diagonal: the read laid on the window
from column delta on), each 32 bases a word by xor and bit counts (mismatches):

    span m, start j - m:       the mismatches of diagonal j - m (0 or 1: D(j) is that count);
    span m - 1, start j - m + 1 (a read base inserted): some i with read[:i] on diagonal j - m + 1 and
                               read[i + 1:] on diagonal j - m, so lcp(j - m + 1) + lcs(j - m) >= m - 1;
    span m + 1, start j - m - 1 (a reference base deleted): lcp(j - m - 1) + lcs(j - m) >= m;

lcp and lcs: the read bases matching from its start and from its end on that diagonal. S(j) is the largest
start of those reaching D(j). Diagonals -1 and n - m + 1 put one read base outside the window; they are read
only for a span of m - 1 at the window's first or last column, whose inserted base that one may be: whether it
matches the reference there never decides. ragout16, --best's round at e = 1 (windows mostly m + 2 wide, one
candidate diagonal), one thread, one batch replayed: 1,010-1,090 ns a window by window_locations' Myers band on
the unpacked window, 340-410 by this (5 diagonals of 4 words, the reference's words read once per window).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.intrinsics import leading_zeros, popcount, trailing_zeros
from seedmap.verify.bulk import ALL, ONE
from seedmap.verify.packed import ref_word

ODD = np.uint64(0x5555555555555555)  # the low bit of every base's two


@njit(cache=True, nogil=True, inline="always")
def _diagonal(words: np.ndarray, m: int, rw: np.ndarray,
              i: int) -> tuple[int | np.int64, int | np.int64, int | np.int64]:
    """The read (packed in words) against the reference from base i of rw's on (rw: the reference packed from
    some base on, as ref_word gives it): (first mismatch, last mismatch, number of mismatches); first = m and
    last = -1 where there is none."""
    nw = (m + 31) >> 5
    tail = np.uint64(2 * (m - ((nw - 1) << 5)))
    last_mask = ALL if tail == np.uint64(64) else (ONE << tail) - ONE
    base = i >> 5
    sh = np.uint64(2 * (i & 31))
    first: int | np.int64  # ints until a mismatch sets them from numpy's int64 bit counts
    last: int | np.int64
    count: int | np.int64
    first, last, count = m, -1, 0
    for k in range(nw):
        r = rw[base + k]
        if sh:
            r = (r >> sh) | (rw[base + k + 1] << (np.uint64(64) - sh))
        x = r ^ words[k]
        mm = (x | (x >> np.uint64(1))) & ODD
        if k == nw - 1:
            mm &= last_mask
        if mm:
            count += np.int64(popcount(mm))
            if first == m:
                first = (k << 5) + (np.int64(trailing_zeros(mm)) >> 1)
            last = (k << 5) + ((63 - np.int64(leading_zeros(mm))) >> 1)
    return first, last, count


@njit(cache=True, nogil=True, inline="always")
def ref_words(m: int, n: int) -> int:
    """Words of one_edit_locations' rw scratch for a read of m bases and a window of n (m <= n + 1)."""
    return ((n - m + 2) >> 5) + ((m + 31) >> 5) + 1


@njit(cache=True, nogil=True, inline="always")
def next_end(d: int, s: int, j: int, m: int, e: int, run_least: int, best_s: int, best_j: int, k: int,
             loc_start: np.ndarray, loc_end: np.ndarray, loc_dist: np.ndarray) -> tuple[int, int, int, int]:
    """End j (distance d, start s) after ends j - 1, j - 2, ...: the run so far (its least distance, -1 outside a
    run, and its best end and start: least distance, then span closest to m, then leftmost) and the locations k
    written so far (at most len(loc_start)); j one past the window closes the last run (d > e)."""
    if d <= e:
        if run_least < 0 or d < run_least or (d == run_least and abs(j - s - m) < abs(best_j - best_s - m)):
            run_least, best_s, best_j = d, s, j
    elif run_least >= 0:  # the run ended at j - 1
        if k < loc_start.size:
            loc_start[k] = best_s
            loc_end[k] = best_j
            loc_dist[k] = run_least
        k += 1
        run_least = -1
    return run_least, best_s, best_j, k


@njit(cache=True, nogil=True, _nrt=False)
def one_edit_locations(words: np.ndarray, m: int, e: int, packed: np.ndarray, ws: int, n: int, diag: np.ndarray,
                       rw: np.ndarray, loc_start: np.ndarray, loc_end: np.ndarray, loc_dist: np.ndarray) -> int:
    """window_locations' result (start, end, distance in window columns; at most len(loc_start) written; their
    number returned) for the read packed in words (no N, m > e, e <= 1) and the window of reference bases
    [ws, ws + n) (no N, ws >= 1). Scratch: diag of 3 * (n - m + 3) int64, rw of ref_words(m, n) uint64."""
    if n < m - e:
        return 0
    nd = n - m + 3  # diagonals -1 .. n - m + 1, diagonal delta at index delta + 1
    lcp = diag[:nd]
    lcs = diag[nd:2 * nd]
    ham = diag[2 * nd:3 * nd]
    for k in range(ref_words(m, n)):  # every word a diagonal reads, from base ws - 1 on
        rw[k] = ref_word(packed, ws - 1 + (k << 5))
    for i in range(nd):
        first, last, count = _diagonal(words, m, rw, i)
        lcp[i] = first
        lcs[i] = m - 1 - last
        ham[i] = count
    k = 0
    run_least = -1  # the current run's least distance, -1 outside a run
    best_s, best_j = 0, 0
    for j in range(max(1, m - 1), n + 2):
        d = e + 1
        s = 0
        if j <= n:
            a = j - m + 1  # index of diagonal j - m
            span_m = j >= m and ham[a] <= e
            inserted = e >= 1 and lcp[a + 1] + lcs[a] >= m - 1
            deleted = e >= 1 and j - m - 1 >= 0 and lcp[a - 1] + lcs[a] >= m
            if span_m:
                d = ham[a]
            if (inserted or deleted) and d > 1:
                d = 1
            if d == 0 or (d == 1 and span_m and not inserted):
                s = j - m
            elif inserted:  # the largest start among those of cost d = 1
                s = j - m + 1
            else:
                s = j - m - 1
        run_least, best_s, best_j, k = next_end(d, s, j, m, e, run_least, best_s, best_j, k, loc_start, loc_end,
                                                loc_dist)
    return k
