"""Locations of a read in a reference window by Myers' bit vectors (the CPU verifier's kernel).

Same definitions as semiglobal.py: D(j) = min over starts s of edit(read, t[s:j]) for every end column
j of the window (N never matches), a hit is an end with D(j) <= e, a location is a run of consecutive
hit ends keeping its best end (lowest distance, then span closest to m, then leftmost end), and the
start of an end is S(j), the largest start among its optimal alignments. The work is split so that
only the ends that can be chosen need a start:

1. D(m, j) for every column, by Myers' column-wise bit vectors (blocks of 64 rows, every block every
   column: a 100 bp read is two words, about 110 column steps per window); or, where the window's
   diagonals that an alignment of cost <= e can use fit one word (band_fits: a candidate window of a
   short read), by verify.bulk's one-word band: exact wherever D(m, j) <= e, which is all step 2 reads.
2. For each run, S(j) of its ends at the run's least distance only (usually one), by a second pass:
   the reversed read against the text read leftwards from j with the start anchored (row 0 grows by one
   per column), so its last row is G(k) = edit(read, t[j - k:j]); S(j) = j - (least k with G(k) = D(j)).
   An exact end (D = 0) starts at j - m. An alignment of cost d anchored at the corner stays on the
   diagonals [-d, d], so where 2d + 2 <= 64 the pass is verify.bulk's one-word band step on those
   diagonals (banded_start); beyond, Myers' blocks over every row.

The whole window is searched (semiglobal.scan_hits also takes a diagonal band). On the candidate
windows both agree: every alignment of cost <= e ending in a window lies on its candidates' diagonals
(the filter is complete and a query's windows are disjoint), so D(j) <= e on the window iff it is in
the band, with the same value and the same optimal alignments.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.intrinsics import popcount
from seedmap.io.reference import ref_code
from seedmap.verify.bulk import (
    ALL,
    B63,
    ONE,
    ZERO,
    advance,
    band_fill,
    band_fits,
    band_init,
    band_step,
    build_peq,
)


@njit(cache=True, nogil=True, _nrt=False)
def build_masks(qcodes: np.ndarray, a: int, m: int, peq: np.ndarray, rpeq: np.ndarray, rq: np.ndarray) -> None:
    """Match masks (bulk.build_peq's layout) of the read qcodes[a:a + m] in peq and of it reversed in
    rpeq; rq is scratch of at least m codes. rpeq's virtual rows (word 0) match nothing: the start pass
    is anchored, its rows above row 1 are not a free start (banded_start)."""
    build_peq(qcodes, a, m, peq)
    for i in range(m):
        rq[i] = qcodes[a + m - 1 - i]
    build_peq(rq, 0, m, rpeq)
    for c in range(8):
        rpeq[c] = ZERO


@njit(cache=True, nogil=True, _nrt=False)
def match_masks(qcodes: np.ndarray, a: int, m: int, peq: np.ndarray) -> None:
    """The match masks of the read qcodes[a:a + m] alone (build_masks' peq), in 8 * (words + 2) slots."""
    build_peq(qcodes, a, m, peq)


@njit(cache=True, nogil=True, inline="always")
def _column(peq: np.ndarray, pv: np.ndarray, mv: np.ndarray, nb: int, hlast: np.uint64, c: np.uint64, hin: int) -> int:
    """One text column through every word of the pattern (pv, mv updated); the last row's change."""
    h = hin
    for b in range(nb):
        vp, vn, h = advance(pv[b], mv[b], peq[np.uint64((b + 1) << 3) + c], h, hlast if b == nb - 1 else B63)
        pv[b] = vp
        mv[b] = vn
    return h


@njit(cache=True, nogil=True, _nrt=False)
def column_distances(peq: np.ndarray, m: int, t: np.ndarray, pv: np.ndarray, mv: np.ndarray,
                     dcol: np.ndarray) -> None:
    """dcol[j] = D(m, j) for j = 0..len(t): row 0 is 0 in every column (free start in the text)."""
    nb = (m + 63) >> 6
    hlast = np.uint64(m - ((nb - 1) << 6) - 1)
    score = m  # D(m, 0)
    dcol[0] = score
    if nb == 1:  # one word: kept in registers
        vp = ALL
        vn = ZERO
        for j in range(1, t.size + 1):
            vp, vn, h = advance(vp, vn, peq[8 + t[j - 1]], 0, hlast)
            score += h
            dcol[j] = score
        return
    if nb == 2:  # reads of 65-128 bp, the common case: both words in registers
        vp0, vn0, vp1, vn1 = ALL, ZERO, ALL, ZERO
        for j in range(1, t.size + 1):
            c = t[j - 1]
            vp0, vn0, h = advance(vp0, vn0, peq[8 + c], 0, B63)
            vp1, vn1, h = advance(vp1, vn1, peq[16 + c], h, hlast)
            score += h
            dcol[j] = score
        return
    for b in range(nb):
        pv[b] = ALL
        mv[b] = ZERO
    for j in range(1, t.size + 1):
        score += _column(peq, pv, mv, nb, hlast, np.uint64(t[j - 1]), 0)
        dcol[j] = score


@njit(cache=True, nogil=True, _nrt=False)
def every_end_hits(peq: np.ndarray, m: int, e: int, packed: np.ndarray, nmask: np.ndarray, lo: int, ja: int,
                   jb: int, pv: np.ndarray, mv: np.ndarray) -> bool:
    """Whether D(m, j) <= e for every column j in [ja, jb] of the reference read from position lo (column j
    ends just before lo + j), streamed column by column and stopped at the first end over e: a few columns
    past ja where the answer is no (peq: build_peq's masks of the read; pv, mv: scratch of its words)."""
    nb = (m + 63) >> 6
    hlast = np.uint64(m - ((nb - 1) << 6) - 1)
    for b in range(nb):
        pv[b] = ALL
        mv[b] = ZERO
    score = m  # D(m, 0)
    for j in range(1, jb + 1):
        score += _column(peq, pv, mv, nb, hlast, np.uint64(ref_code(packed, nmask, lo + j - 1)), 0)
        if j >= ja and score > e:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def banded_distances(fb: np.ndarray, peq: np.ndarray, m: int, e: int, t: np.ndarray, dcol: np.ndarray) -> None:
    """dcol[j] = D(m, j) wherever it is <= e, and some value > e elsewhere (bulk.band_fits(m, e, len(t)) and
    len(t) >= m - e).

    Every alignment of cost <= e inside the window lies on diagonals [-e, n - m + e + 1] (it starts on a
    diagonal >= 0 and ends on one <= n - m, with at most e indels), so the one-word band of verify.bulk
    (band_step: rows and columns as documented in bulk.band_run) gives those distances exactly; a
    100 bp read costs one word a column instead of two. Columns before m - e cannot end such an
    alignment (it would need more than e deletions of read bases)."""
    n = t.size
    dhi = n - m + e + 1
    wd = dhi + e + 1
    maskw = ALL >> np.uint64(64 - wd)
    jm = m - e  # first column whose row m is in the band
    for j in range(jm):
        dcol[j] = e + 1
    vp = band_init(e, n, m)
    vn = ZERO
    st: int | np.int64 = 0  # the band's top cell: 0 while its row is virtual
    j = 1
    while j <= n:
        band_fill(fb, peq, j, dhi)
        je = min(j + 65 - wd, n + 1)  # columns sharing one set of shifted masks
        for jj in range(j, je):
            vp, vn, xv = band_step((fb[t[jj - 1]] >> np.uint64(jj - j)) & maskw, vp, vn)
            st += 1 - np.int64(xv & ONE)
            if jj >= jm:
                mk = (ONE << np.uint64(m - jj + dhi)) - ONE
                dcol[jj] = st + np.int64(popcount(vp & mk)) - np.int64(popcount(vn & mk))
        j = je


@njit(cache=True, nogil=True, inline="always")
def banded_start(fb: np.ndarray, rpeq: np.ndarray, m: int, t: np.ndarray, j: int, d: int) -> int:
    """S(j) for an end j of t with D(j) = d, 0 < d <= 31 (m > d), on the diagonals [-d, d + 1] of the
    anchored matrix G(i, k) = edit(reversed read[:i], t[j - k:j] reversed).

    The band step, its layout (bit b of column k is row k - dhi + b) and the mask funnel are
    verify.bulk's (band_run); only the boundary differs. Rows above row 0 are virtual, match nothing
    (rpeq's word 0 is zero) and hold G(-r, k) = k + r, which makes row 0 hold k as anchoring requires
    and keeps the band's top cell at dhi while it is virtual: column 0 starts with -1 deltas down to row 0
    and +1 below. A cell whose value is <= d has an optimal path on diagonals [-d, d], inside the band,
    and is exact; every other cell is computed above its true value, so above d: the first column whose
    row m reads d is the least k with G(k) = d."""
    dhi = d + 1
    wd = dhi + d + 1
    maskw = ALL >> np.uint64(64 - wd)
    vp = (ALL >> np.uint64(63 - d)) << np.uint64(dhi)  # rows 1..d + 1, aligned to column 1
    vn = (ONE << np.uint64(dhi)) - ONE  # rows 1 - dhi..0
    st: int | np.int64 = dhi  # the top cell, row k - dhi
    kmax = min(j, m + d)
    km = m - d  # first column whose row m is in the band
    k = 1
    while k <= kmax:
        band_fill(fb, rpeq, k, dhi)
        ke = min(k + 65 - wd, kmax + 1)  # columns sharing one set of shifted masks
        for kk in range(k, ke):
            vp, vn, xv = band_step((fb[t[j - kk]] >> np.uint64(kk - k)) & maskw, vp, vn)
            st += 1 - np.int64(xv & ONE)
            if kk >= km:
                mk = (ONE << np.uint64(m - kk + dhi)) - ONE
                if st + np.int64(popcount(vp & mk)) - np.int64(popcount(vn & mk)) == d:
                    return j - kk
        k = ke
    return -1  # unreachable when d = D(j)


@njit(cache=True, nogil=True, _nrt=False)
def start_of(rpeq: np.ndarray, m: int, t: np.ndarray, j: int, d: int, pv: np.ndarray, mv: np.ndarray,
             fb: np.ndarray) -> int:
    """S(j) for an end j of t with D(j) = d (step 2 of the module docstring); fb: 8 words of scratch."""
    if d == 0:
        return j - m
    if 2 * d + 2 <= 64:
        return banded_start(fb, rpeq, m, t, j, d)
    nb = (m + 63) >> 6
    hlast = np.uint64(m - ((nb - 1) << 6) - 1)
    score = m  # G(0) = m
    if nb <= 2:  # in registers: (vp1, vn1) is the word holding the last row, (vp0, vn0) the one above it
        vp0, vn0, vp1, vn1 = ALL, ZERO, ALL, ZERO
        last = 8 * nb  # that word's masks in rpeq
        for k in range(1, min(j, m + d) + 1):
            c = t[j - k]
            h = 1
            if nb == 2:
                vp0, vn0, h = advance(vp0, vn0, rpeq[8 + c], 1, B63)
            vp1, vn1, h = advance(vp1, vn1, rpeq[last + c], h, hlast)
            score += h
            if score == d:
                return j - k
        return -1
    for b in range(nb):
        pv[b] = ALL
        mv[b] = ZERO
    for k in range(1, min(j, m + d) + 1):
        score += _column(rpeq, pv, mv, nb, hlast, np.uint64(t[j - k]), 1)  # hin 1: row 0 is k in column k
        if score == d:  # G(k) >= D(j) = d everywhere, so the first k reaching d is the least
            return j - k
    return -1  # unreachable when d = D(j)


@njit(cache=True, nogil=True, _nrt=False)
def window_locations(peq: np.ndarray, rpeq: np.ndarray, m: int, e: int, t: np.ndarray, pv: np.ndarray,
                     mv: np.ndarray, dcol: np.ndarray, fb: np.ndarray, loc_start: np.ndarray, loc_end: np.ndarray,
                     loc_dist: np.ndarray) -> int:
    """Locations of the read (masks peq, rpeq; m > e) in t: (start, end, distance) in window columns,
    by increasing end. Writes at most len(loc_start) of them; returns how many there are.
    Scratch: pv, mv of (m + 63) // 64 words, dcol of len(t) + 1, fb of 8 words."""
    n = t.size
    if n >= m - e and band_fits(m, e, n):  # narrower windows hold no alignment of cost <= e
        banded_distances(fb, peq, m, e, t, dcol)
    else:
        column_distances(peq, m, t, pv, mv, dcol)
    cap = loc_start.size
    k = 0
    j = 1
    while j <= n:
        if dcol[j] > e:
            j += 1
            continue
        first = j
        least = dcol[j]
        while j <= n and dcol[j] <= e:
            least = min(least, dcol[j])
            j += 1
        best_end = -1
        best_start = 0
        for jj in range(first, j):  # the run first..j-1: its ends at the least distance compete
            if dcol[jj] == least:
                s = start_of(rpeq, m, t, jj, least, pv, mv, fb)
                if best_end < 0 or abs(jj - s - m) < abs(best_end - best_start - m):
                    best_end = jj
                    best_start = s
        if k < cap:
            loc_start[k] = best_start
            loc_end[k] = best_end
            loc_dist[k] = least
        k += 1
    return k


@njit(cache=True, nogil=True)
def locations(q: np.ndarray, t: np.ndarray, e: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every location of q (codes, len > e) in t: (start, end, distance) arrays (one call, own scratch)."""
    m = q.size
    nw = (m + 63) >> 6
    peq = np.empty(8 * (nw + 2), dtype=np.uint64)
    rpeq = np.empty(8 * (nw + 2), dtype=np.uint64)
    build_masks(q, 0, m, peq, rpeq, np.empty(m, dtype=np.uint8))
    pv = np.empty(nw, dtype=np.uint64)
    mv = np.empty(nw, dtype=np.uint64)
    dcol = np.empty(t.size + 1, dtype=np.int64)
    cap = t.size // 2 + 1  # runs are separated by at least one non-hit end
    s = np.empty(cap, dtype=np.int64)
    en = np.empty(cap, dtype=np.int64)
    d = np.empty(cap, dtype=np.int32)
    k = window_locations(peq, rpeq, m, e, t, pv, mv, dcol, np.empty(8, dtype=np.uint64), s, en, d)
    return s[:k], en[:k], d[:k]
