"""Verification windows, as every engine makes them: one per seed hit, [diag - e, diag + m + e) clipped to
the hit's sequence (put_window; emit_windows: those of a range of hits); a query's windows sorted by start
(sort_windows); overlapping ones merged (merge_one, merge_windows), which is the dedupe stage.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from seedmap.io.reference import sequence_of


@njit(cache=True, nogil=True)
def sort_windows(ws: np.ndarray, we: np.ndarray, wd: np.ndarray) -> None:
    """Sort by start (insertion sort for the usual handful, argsort for repeats)."""
    n = ws.size
    if n > 32:
        order = np.argsort(ws)
        ws[:] = ws[order]
        we[:] = we[order]
        wd[:] = wd[order]
        return
    for i in range(1, n):
        a, b, c = ws[i], we[i], wd[i]
        j = i - 1
        while j >= 0 and ws[j] > a:
            ws[j + 1] = ws[j]
            we[j + 1] = we[j]
            wd[j + 1] = wd[j]
            j -= 1
        ws[j + 1] = a
        we[j + 1] = b
        wd[j + 1] = c


@njit(cache=True, nogil=True, inline="always")
def put_window(diag: int, m: int, e: int, s: int, ref_starts: np.ndarray, w: int, win_start: np.ndarray,
               win_end: np.ndarray, win_diag: np.ndarray) -> None:
    """Slot w: the window [diag - e, diag + m + e) clipped to sequence s, and its diagonal."""
    win_start[w] = max(diag - e, ref_starts[s])
    win_end[w] = min(diag + m + e, ref_starts[s + 1])
    win_diag[w] = diag


@njit(cache=True, nogil=True)
def emit_windows(o: int, lo: int, hi: int, m: int, e: int, pos: np.ndarray, ref_starts: np.ndarray, w: int,
                 win_start: np.ndarray, win_end: np.ndarray, win_diag: np.ndarray) -> int:
    """Windows of the hits pos[lo:hi] of the read part at offset o, from slot w on (put_window),
    diag = p - o; returns the next free slot."""
    for k in range(lo, hi):
        p = np.int64(pos[k])
        put_window(p - o, m, e, sequence_of(ref_starts, p), ref_starts, w, win_start, win_end, win_diag)
        w += 1
    return w


@njit(cache=True, nogil=True)
def merge_one(starts: np.ndarray, ends: np.ndarray, diags: np.ndarray, out: np.ndarray, write: bool) -> int:
    """Merge overlapping windows (sorted by start); out rows: start, end, min diagonal, max diagonal."""
    n = 0
    i = 0
    while i < starts.size:
        s, e = starts[i], ends[i]
        dmin = dmax = diags[i]
        i += 1
        while i < starts.size and starts[i] < e:
            e = max(e, ends[i])
            dmin = min(dmin, diags[i])
            dmax = max(dmax, diags[i])
            i += 1
        if write:
            out[n, 0] = s
            out[n, 1] = e
            out[n, 2] = dmin
            out[n, 3] = dmax
        n += 1
    return n


@njit(cache=True, nogil=True, parallel=True)
def merge_windows(q_first: int, q_last: int, cand_off: np.ndarray, cand_len: np.ndarray, win_start: np.ndarray,
                  win_end: np.ndarray, win_diag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of overlapping windows per query (query q has cand_len[q] windows from cand_off[q], sorted
    by start): query array and rows (start, end, min diag, max diag), ordered by query then start."""
    nq = q_last - q_first
    base = cand_off[q_first]
    counts = np.zeros(nq + 1, dtype=np.int64)
    dummy = np.zeros((0, 4), dtype=np.int64)
    for j in prange(nq):
        lo = cand_off[q_first + j] - base
        hi = lo + cand_len[q_first + j]
        counts[j + 1] = merge_one(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi], dummy, False)
    for j in range(nq):
        counts[j + 1] += counts[j]
    uq = np.empty(counts[nq], dtype=np.int64)
    rows = np.empty((counts[nq], 4), dtype=np.int64)
    for j in prange(nq):
        lo = cand_off[q_first + j] - base
        hi = lo + cand_len[q_first + j]
        a, b = counts[j], counts[j + 1]
        merge_one(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi], rows[a:b], True)
        uq[a:b] = q_first + j
    return uq, rows
