"""Inexact FM-index search (edit distance, any e): a pigeonhole search scheme, one step per piece.

The read is cut into e + 1 disjoint pieces; an alignment with at most e edits leaves one of them exact
(filter/plan.py). Step j searches piece j exactly, then extends the match, base by base, towards the
longer side of the read to its end: the forward index extends leftwards, the reverse-text index
rightwards. The extension is a depth-first walk over the reference strings that continue the piece,
each carrying the edit-distance DP column of the read part against it (insertions, deletions,
substitutions; a read N or a reference N always costs one edit). So every reference string is visited
once per step, which subsumes Salavert's equivalence rules (no I-D / D-I pairs, no reordered
I-M / M-I) and interval-shrinkage rule (children with an empty interval are never entered). A branch is
pruned when no cell of its column plus BWA's lower bound of the rest of the read (the D array) stays
within e; it is accepted, and not walked further, as soon as the whole read part fits within e. A string
with at most `small` rows (an option; 0 = never) is not walked further either: its rows go straight to
verification, which is cheaper than walking a near-unique string base by base, and loses nothing (its
windows hold every alignment its subtree could accept). There is no cap on branches or hits.

An accepted string gives the exact piece's reference position for each of its rows, hence the diagonal
of an alignment within e; its window [diag - e, diag + m + e) holds that alignment, which the shared
verification stage then finds (the part of the read beyond the piece's far side is checked there).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from seedmap.filter.fm_search import extend, locate, lower_bounds
from seedmap.filter.neighborhood_bs import _sort_windows

ROW = 6  # an accepted string: direction (1 = rightwards), piece start, piece length, depth, lo, hi
BIG = 1 << 40


@njit(cache=True, nogil=True)
def _extension_walk(occ_tab: np.ndarray, counts: np.ndarray, lo0: int, hi0: int, ext: np.ndarray, length: int,
                    e: int, bound: np.ndarray, cols: np.ndarray, s_lo: np.ndarray, s_hi: np.ndarray,
                    s_c: np.ndarray, head: tuple, small: int, out: np.ndarray, n_out: int) -> tuple[int, int]:
    """Walk the strings extending rows [lo0, hi0) for ext[:length] within e; record accepted ones in out
    (rows beyond out's size are counted only), and strings with at most `small` rows before their walk
    ends (cheaper to verify). Returns (rows recorded, candidates)."""
    direction, js, plen = head
    total = 0
    best = BIG
    for i in range(length + 1):
        cols[0, i] = i
        best = min(best, i + bound[i])
    if length <= e or hi0 - lo0 <= small:
        if n_out < out.shape[0]:
            out[n_out, 0], out[n_out, 1], out[n_out, 2] = direction, js, plen
            out[n_out, 3], out[n_out, 4], out[n_out, 5] = 0, lo0, hi0
        return n_out + 1, hi0 - lo0
    if best > e:
        return n_out, 0
    max_depth = length + e
    d = 0
    s_lo[0], s_hi[0], s_c[0] = lo0, hi0, 0
    while d >= 0:
        c = s_c[d]
        if c == 5 or d == max_depth:
            d -= 1
            continue
        s_c[d] = c + 1
        nlo, nhi = extend(occ_tab, counts, s_lo[d], s_hi[d], c)
        if nlo >= nhi:
            continue
        nd = d + 1
        ilo, ihi = max(0, nd - e), min(length, nd + e)
        old_hi = min(length, d + e)  # cells beyond the band exceed e and are never read
        best = BIG
        prev = BIG
        for i in range(ilo, ihi + 1):
            if i == 0:
                v = nd
            else:
                x = ext[i - 1]
                v = cols[d, i - 1] + (0 if x == c and c < 4 else 1)
                if i <= old_hi:
                    v = min(v, cols[d, i] + 1)
                v = min(v, prev + 1)
            cols[nd, i] = v
            prev = v
            best = min(best, v + bound[i])
        if ihi == length and cols[nd, length] <= e:
            if n_out < out.shape[0]:
                out[n_out, 0], out[n_out, 1], out[n_out, 2] = direction, js, plen
                out[n_out, 3], out[n_out, 4], out[n_out, 5] = nd, nlo, nhi
            n_out += 1
            total += nhi - nlo
            continue
        if best > e:
            continue
        if nhi - nlo <= small:  # verifying these few rows is cheaper than walking on
            if n_out < out.shape[0]:
                out[n_out, 0], out[n_out, 1], out[n_out, 2] = direction, js, plen
                out[n_out, 3], out[n_out, 4], out[n_out, 5] = nd, nlo, nhi
            n_out += 1
            total += nhi - nlo
            continue
        d = nd
        s_lo[d], s_hi[d], s_c[d] = nlo, nhi, 0
    return n_out, total


@njit(cache=True, nogil=True)
def search_query(q: np.ndarray, e: int, n: int, counts: np.ndarray, fwd_occ: np.ndarray, rev_occ: np.ndarray,
                 small: int, out: np.ndarray) -> tuple[int, int]:
    """All steps of the scheme for one query: (accepted strings, candidates); the first out.shape[0]
    accepted strings are written to out."""
    m = q.size
    if m <= e:
        return 0, 0
    k = e + 1
    ext = np.empty(m, dtype=np.int64)
    bound = np.empty(m + 1, dtype=np.int64)
    cols = np.empty((m + e + 1, m + 1), dtype=np.int64)
    s_lo = np.empty(m + e + 1, dtype=np.int64)
    s_hi = np.empty(m + e + 1, dtype=np.int64)
    s_c = np.empty(m + e + 1, dtype=np.int64)
    n_out = 0
    total = 0
    for j in range(k):
        js, je = j * m // k, (j + 1) * m // k
        rightwards = m - je >= js
        lo, hi = 0, n
        for t in range(je - js):
            # Rightwards: the reverse-text index reads the piece first to last; leftwards, last to first.
            c = q[js + t] if rightwards else q[je - 1 - t]
            if c > 3:
                hi = lo
                break
            lo, hi = extend(rev_occ if rightwards else fwd_occ, counts, lo, hi, c)
            if lo >= hi:
                break
        if lo >= hi:
            continue
        if rightwards:
            length = m - je
            for i in range(length):
                ext[i] = q[je + i]
            lower_bounds(fwd_occ, counts, n, ext, length, bound)
            n_out, c = _extension_walk(rev_occ, counts, lo, hi, ext, length, e, bound, cols, s_lo, s_hi, s_c,
                                       (1, js, je - js), small, out, n_out)
        else:
            length = js
            for i in range(length):
                ext[i] = q[js - 1 - i]
            lower_bounds(rev_occ, counts, n, ext, length, bound)
            n_out, c = _extension_walk(fwd_occ, counts, lo, hi, ext, length, e, bound, cols, s_lo, s_hi, s_c,
                                       (0, js, je - js), small, out, n_out)
        total += c
    return n_out, total


@njit(cache=True, nogil=True, parallel=True)
def count_candidates(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, n: int, counts: np.ndarray,
                     fwd_occ: np.ndarray, rev_occ: np.ndarray, small: int, saved: np.ndarray,
                     n_saved: np.ndarray) -> np.ndarray:
    """Candidates per query; accepted strings saved per query (n_saved may exceed the room: searched again)."""
    nq = qoff.size - 1
    cand = np.zeros(nq, dtype=np.int64)
    for qi in prange(nq):
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        n_saved[qi], cand[qi] = search_query(q, qerr[qi >> 1], n, counts, fwd_occ, rev_occ, small, saved[qi])
    return cand


@njit(cache=True, nogil=True)
def _piece_text_start(row: np.ndarray, n: int, counts: np.ndarray, fwd_occ: np.ndarray, fwd_mark: np.ndarray,
                      fwd_ssa: np.ndarray, rev_occ: np.ndarray, rev_mark: np.ndarray, rev_ssa: np.ndarray,
                      i: int) -> int:
    plen, depth = row[2], row[3]
    if row[0] == 1:  # the string starts with the piece; reverse text: p' = n - 1 - p - length
        return n - 1 - locate(rev_occ, counts, rev_mark, rev_ssa, i) - (plen + depth)
    return locate(fwd_occ, counts, fwd_mark, fwd_ssa, i) + depth  # the string ends with the piece


@njit(cache=True, nogil=True, parallel=True)
def fill_windows(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, q_first: int, q_last: int,
                 cand_off: np.ndarray, n: int, counts: np.ndarray, text_starts: np.ndarray, fwd_occ: np.ndarray,
                 fwd_mark: np.ndarray, fwd_ssa: np.ndarray, rev_occ: np.ndarray, rev_mark: np.ndarray,
                 rev_ssa: np.ndarray, ref_starts: np.ndarray, small: int, saved: np.ndarray, n_saved: np.ndarray,
                 win_start: np.ndarray, win_end: np.ndarray, win_diag: np.ndarray) -> None:
    """Windows [diag - e, diag + m + e) (clipped to the piece's sequence) of every row of every accepted
    string of queries [q_first, q_last), sorted by start per query."""
    base = cand_off[q_first]
    for qi in prange(q_first, q_last):
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        m = q.size
        e = qerr[qi >> 1]
        rows = saved[qi]
        if n_saved[qi] > rows.shape[0]:
            rows = np.empty((n_saved[qi], ROW), dtype=np.int64)
            search_query(q, e, n, counts, fwd_occ, rev_occ, small, rows)
        w = cand_off[qi] - base
        for r in range(n_saved[qi]):
            row = rows[r]
            for i in range(row[4], row[5]):
                ps = _piece_text_start(row, n, counts, fwd_occ, fwd_mark, fwd_ssa, rev_occ, rev_mark, rev_ssa, i)
                s = np.searchsorted(text_starts, ps, side="right") - 1
                diag = ps - s - row[1]
                win_start[w] = max(diag - e, ref_starts[s])
                win_end[w] = min(diag + m + e, ref_starts[s + 1])
                win_diag[w] = diag
                w += 1
        lo, hi = cand_off[qi] - base, cand_off[qi + 1] - base
        _sort_windows(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi])
