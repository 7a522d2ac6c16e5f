"""Locations of reads in their candidate windows on the GPU: the twin of the CPU verifier's window kernel
(verify/windows.py over verify/bitvector.window_locations), same definitions, same locations.

One thread per window. The CPU kernel keeps D(m, j) of every column and then walks the runs of hit ends;
a GPU thread has no room for a column array, so the forward pass saves the bit-vector state at each run's
first end, and when the run ends (its least distance known) replays the run's columns from that state:
each end at the least distance gets its start by the reversed pass, and the best one (distance, then span
closest to m, then leftmost end) is the location. Runs are short (about 2e + 1 columns), so the replay
costs little against the window.

Reads longer than 64 * MAXW bp do not fit the thread's registers; the host sends them to the CPU kernel.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, types, uint64

from seedmap.backends.cuda.verify_kernels import MAXW, column, match_masks, ref_code, start_column

THREADS = 128  # threads per block

_U8 = types.Array(types.uint8, 1, "C")
_I64 = types.Array(types.int64, 1, "C")
_I32 = types.Array(types.int32, 1, "C")
# reads (codes, offsets, errors), windows (query, rows of start, end, first and last diagonal), the packed
# reference and its N mask, the slots (offsets; starts, ends, distances) and the count of each window.
LOCATE_SIGNATURE = (_U8, _I64, _I64, _I64, types.Array(types.int64, 2, "C"), _U8, _U8, _I64, _I64, _I64, _I32,
                    _I64)
SIGNATURES = {"window_locations_kernel": [LOCATE_SIGNATURE]}


@cuda.jit(device=True, inline=True)
def start_of(rpeq: np.ndarray, m: int, nb: int, hlast: np.uint64, packed: np.ndarray, nmask: np.ndarray, ws: int,
             j: int, d: int, pv: np.ndarray, mv: np.ndarray) -> int:
    """S(j), the largest start of an optimal alignment ending at window column j with distance d: the
    reversed read (masks rpeq) against the text read leftwards from j, start anchored (verify/bitvector)."""
    if d == 0:
        return j - m
    start_column(pv, mv, nb)
    score = m
    for k in range(1, min(j, m + d) + 1):
        score += column(rpeq, pv, mv, nb, hlast, ref_code(packed, nmask, ws + j - k), 1)
        if score == d:  # G(k) >= d everywhere: the first k reaching it is the least
            return j - k
    return -1  # unreachable when d = D(j)


@cuda.jit(device=True, inline=True)
def best_of_run(peq: np.ndarray, rpeq: np.ndarray, pv: np.ndarray, mv: np.ndarray, rpv: np.ndarray,
                rmv: np.ndarray, m: int, nb: int, hlast: np.uint64, packed: np.ndarray, nmask: np.ndarray, ws: int,
                first: int, last: int, first_score: int, least: int) -> tuple[int, int]:
    """(start, end) of the run's location: pv, mv hold the state after column `first` (D = first_score);
    the columns first..last are replayed and each end at the least distance competes."""
    best_end = -1
    best_start = 0
    score = first_score
    j = first
    while True:
        if score == least:
            s = start_of(rpeq, m, nb, hlast, packed, nmask, ws, j, least, rpv, rmv)
            if best_end < 0 or abs(j - s - m) < abs(best_end - best_start - m):
                best_end = j
                best_start = s
        if j == last:
            return best_start, best_end
        j += 1
        score += column(peq, pv, mv, nb, hlast, ref_code(packed, nmask, ws + j - 1), 0)


@cuda.jit(cache=True)
def window_locations_kernel(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray,
                            win: np.ndarray, packed: np.ndarray, nmask: np.ndarray, slot_off: np.ndarray,
                            loc_start: np.ndarray, loc_end: np.ndarray, loc_dist: np.ndarray,
                            loc_count: np.ndarray) -> None:
    """Window w's locations (global start, end, distance; by increasing end) in its slots
    slot_off[w]..slot_off[w + 1], as many as fit; loc_count[w]: how many there are."""
    w = cuda.grid(1)
    if w >= win_q.size:
        return
    peq = cuda.local.array((4, MAXW), uint64)
    rpeq = cuda.local.array((4, MAXW), uint64)
    pv = cuda.local.array(MAXW, uint64)  # the forward pass
    mv = cuda.local.array(MAXW, uint64)
    spv = cuda.local.array(MAXW, uint64)  # saved at a run's first end, then replayed
    smv = cuda.local.array(MAXW, uint64)
    rpv = cuda.local.array(MAXW, uint64)  # the reversed pass
    rmv = cuda.local.array(MAXW, uint64)
    qi = win_q[w]
    a = qoff[qi]
    m = qoff[qi + 1] - a
    e = qerr[qi >> 1]
    nb = (m + 63) >> 6
    match_masks(qcodes, a, m, False, peq)
    match_masks(qcodes, a, m, True, rpeq)
    hlast = uint64((m - 1) & 63)
    ws = win[w, 0]
    n = win[w, 1] - ws
    s0 = slot_off[w]
    cap = slot_off[w + 1] - s0
    start_column(pv, mv, nb)
    score = m  # D(m, 0)
    k = 0
    first = 0  # first end of the current run, 0: none
    first_score = 0
    least = 0
    for j in range(1, n + 2):  # column n + 1 only closes a run reaching the window's end
        hit = False
        if j <= n:
            score += column(peq, pv, mv, nb, hlast, ref_code(packed, nmask, ws + j - 1), 0)
            hit = score <= e
        if hit and first == 0:
            first = j
            first_score = score
            least = score
            for b in range(nb):
                spv[b] = pv[b]
                smv[b] = mv[b]
        elif hit:
            least = min(least, score)
        elif first > 0:
            bs, be = best_of_run(peq, rpeq, spv, smv, rpv, rmv, m, nb, hlast, packed, nmask, ws, first, j - 1,
                                 first_score, least)
            if k < cap:
                loc_start[s0 + k] = ws + bs
                loc_end[s0 + k] = ws + be
                loc_dist[s0 + k] = least
            k += 1
            first = 0
    loc_count[w] = k
