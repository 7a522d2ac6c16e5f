"""Locations of a read in a window at e <= 2 on the packed read and reference (-e 2 runs, --best's rounds at 2 edits).

Same definitions and result as bitvector.window_locations, computed as one_edit.py does, one step further. Diagonal
t lays read[p] on window[p + t]; an alignment of cost <= 2 ending at column j has a span of m + delta, |delta| <= 2,
starts at s = j - m - delta and walks at most three diagonals. Its least cost for each span is read off the
mismatches of those diagonals: the first two (F1, F2; m where there are none), the last two (L1, L2; -1) and their
count (H), and, for the middle part of an alignment with two gaps, whether a range of its diagonal has none:

    delta  0: H(s); or 2 by an inserted read base and a deleted reference base with no mismatch: read[:i] on s,
              read[i + 1:k] on s - 1, read[k:] on s (or read[:i] on s, read[i:k] on s + 1, read[k + 1:] on s);
    delta -1: read base i inserted: read[:i] on s, read[i + 1:] on s - 1; 1 plus their mismatches;
    delta +1: a reference base deleted before read[i]: read[:i] on s, read[i:] on s + 1; likewise;
    delta -2, +2: two read bases inserted / reference bases deleted, three exact parts on s, s -+ 1, s -+ 2.

The outer parts are taken as long as they reach (i up to F1 or F2 of s, k from L1 or L2 of the last diagonal on), which
leaves the least middle part to check. D(j) is the least cost over the spans and S(j), the largest start reaching it,
the least delta that does. A diagonal's bases outside [s, j) are read (the window's neighbours) but never decide: the
parts of an alignment lie inside it, and a mismatch outside them only bounds i or k where the span bounds it anyway.

-e 2 on ragout16 (16 bacterial genomes, 1,000,000 reads, -t 2): the verify stage 2.22 -> 1.36 CPU s against
window_locations' bit-vector columns. The same method for e = 3 (up to three gaps: F1-F3, L1-L3, every way of
spreading the mismatches over the parts, two middle parts meeting) found the same locations but made some thirty
checks an end: verify 4.0 s against the columns' 2.4 s at -e 3, and 2.0 s at -e 2. So e = 3 stays with the columns.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.intrinsics import leading_zeros, popcount, trailing_zeros
from seedmap.verify.bulk import ALL, ONE
from seedmap.verify.one_edit import ODD, next_end
from seedmap.verify.packed import ref_word

F1, F2, L1, L2, H = range(5)  # the columns of a diagonal's row of facts


@njit(cache=True, nogil=True, inline="always")
def _facts(words: np.ndarray, m: int, rw: np.ndarray, i: int, masks: np.ndarray, facts: np.ndarray) -> None:
    """The read (packed in words) against the reference from base i of rw's on: its mismatch bits (one per base,
    at bit 2p of word p // 32) in masks[i] and (F1, F2, L1, L2, H) in facts[i], H capped at 3."""
    nw = (m + 31) >> 5
    tail = np.uint64(2 * (m - ((nw - 1) << 5)))
    last_mask = ALL if tail == np.uint64(64) else (ONE << tail) - ONE
    base = i >> 5
    sh = np.uint64(2 * (i & 31))
    f1: int | np.int64  # ints until a mismatch sets them from numpy's int64 bit counts
    f2: int | np.int64
    count: int | np.int64
    f1, f2, count = m, m, 0
    for k in range(nw):
        r = rw[base + k]
        if sh:
            r = (r >> sh) | (rw[base + k + 1] << (np.uint64(64) - sh))
        x = r ^ words[k]
        mm = (x | (x >> ONE)) & ODD
        if k == nw - 1:
            mm &= last_mask
        masks[i, k] = mm
        if mm:
            count += np.int64(popcount(mm))
            b = mm
            while b and f2 == m:
                p = (k << 5) + (np.int64(trailing_zeros(b)) >> 1)
                if f1 == m:
                    f1 = p
                else:
                    f2 = p
                b &= b - ONE
    l1: int | np.int64
    l2: int | np.int64
    l1, l2 = -1, -1
    for k in range(nw - 1, -1, -1):
        b = masks[i, k]
        while b and l2 < 0:
            top = 63 - np.int64(leading_zeros(b))
            p = (k << 5) + (top >> 1)
            if l1 < 0:
                l1 = p
            else:
                l2 = p
            b ^= ONE << np.uint64(top)
        if l2 >= 0:
            break
    facts[i, F1] = f1
    facts[i, F2] = f2
    facts[i, L1] = l1
    facts[i, L2] = l2
    facts[i, H] = min(count, 3)


@njit(cache=True, nogil=True, inline="always")
def _clean(masks: np.ndarray, i: int, a: int, b: int) -> bool:
    """Whether diagonal row i has no mismatch at read positions [a, b)."""
    if a >= b:
        return True
    k0, k1 = a >> 5, (b - 1) >> 5
    for k in range(k0, k1 + 1):
        w = masks[i, k]
        if k == k0:
            w &= ALL << np.uint64(2 * (a & 31))
        if k == k1:
            hi = 2 * ((b - 1) & 31) + 2
            if hi < 64:
                w &= (ONE << np.uint64(hi)) - ONE
        if w:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _cost(facts: np.ndarray, masks: np.ndarray, m: int, e: int, s: int, delta: int) -> int:
    """The least cost (3 for more than 2) of the read against window[s:s + m + delta]; s >= 0. facts/masks rows are
    diagonals + 2."""
    r = s + 2  # the row of diagonal s
    if delta == 0:
        if facts[r, H] <= 2:
            return facts[r, H]
        if e < 2:
            return 3
        i = min(facts[r, F1], m - 1)  # inserted read base i, deleted reference base before read[k]
        if _clean(masks, r - 1, i + 1, max(facts[r, L1] + 1, i + 1)):
            return 2
        if _clean(masks, r + 1, facts[r, F1], facts[r, L1]):  # deleted before read[i], read base k inserted
            return 2
        return 3
    if delta == -1:
        if facts[r - 1, L1] <= facts[r, F1]:
            return 1
        if facts[r - 1, L1] <= facts[r, F2] or facts[r - 1, L2] <= facts[r, F1]:
            return 2
        return 3
    if delta == 1:
        if facts[r + 1, L1] + 1 <= facts[r, F1]:
            return 1
        if facts[r + 1, L1] + 1 <= facts[r, F2] or facts[r + 1, L2] + 1 <= facts[r, F1]:
            return 2
        return 3
    if e < 2:
        return 3
    if delta == -2:  # read bases i < k inserted
        i = min(facts[r, F1], m - 2)
        return 2 if _clean(masks, r - 1, i + 1, max(facts[r - 2, L1], i + 1)) else 3
    i = facts[r, F1]  # delta 2: reference bases deleted before read[i] and read[k], i <= k
    return 2 if _clean(masks, r + 1, i, max(facts[r + 2, L1] + 1, i)) else 3


@njit(cache=True, nogil=True, inline="always")
def ref_words2(m: int, n: int) -> int:
    """Words of two_edit_locations' rw scratch for a read of m bases and a window of n (m <= n + 2)."""
    return ((n - m + 4) >> 5) + ((m + 31) >> 5) + 1


@njit(cache=True, nogil=True, _nrt=False)
def two_edit_locations(words: np.ndarray, m: int, e: int, packed: np.ndarray, ws: int, n: int, facts: np.ndarray,
                       masks: np.ndarray, rw: np.ndarray, loc_start: np.ndarray, loc_end: np.ndarray,
                       loc_dist: np.ndarray) -> int:
    """window_locations' result (start, end, distance in window columns; at most len(loc_start) written; their
    number returned) for the read packed in words (no N, m > e, e <= 2) and the window of reference bases
    [ws, ws + n) (no N, ws >= 2). Scratch: facts of (n - m + 5, 5) int64, masks of (n - m + 5, (m + 31) // 32)
    uint64, rw of ref_words2(m, n) uint64."""
    if n < m - e:
        return 0
    nd = n - m + 5  # diagonals -2 .. n - m + 2, diagonal t in row t + 2
    for k in range(ref_words2(m, n)):  # every word a diagonal reads, from base ws - 2 on
        rw[k] = ref_word(packed, ws - 2 + (k << 5))
    for i in range(nd):
        _facts(words, m, rw, i, masks, facts)
    k = 0
    run_least = -1  # the current run's least distance, -1 outside a run
    best_s, best_j = 0, 0
    for j in range(max(1, m - 2), n + 2):
        d = e + 1
        s = 0
        if j <= n:
            for delta in range(-2, 3):  # the largest start first: a later span must cost less to win
                st = j - m - delta
                if st >= 0:
                    c = _cost(facts, masks, m, e, st, delta)
                    if c < d:
                        d, s = c, st
        run_least, best_s, best_j, k = next_end(d, s, j, m, e, run_least, best_s, best_j, k, loc_start, loc_end,
                                                loc_dist)
    return k
