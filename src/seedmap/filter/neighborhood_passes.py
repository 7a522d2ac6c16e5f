"""The two passes of MAROSE seed + filter over the neighborhood index, for both lookups of a window's
degenerated patterns: binary search (neighborhood_bs) or perfect hash (neighborhood_ph).

count_candidates counts each query's candidates (and keeps the index ranges it found when they fit);
fill_windows writes their verification windows into room sized from those counts, so no per-read list
can overflow and repetitive reads keep all their hits. Queries go in tasks of CHUNK, each allocating its
scratch once (per window it cost more than the search).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from seedmap.filter.degenerate import max_patterns
from seedmap.filter.neighborhood_bs import SCRATCH, _emit, _sort_windows, _window_ranges
from seedmap.filter.neighborhood_ph import SCRATCH_PH, window_ranges_ph
from seedmap.filter.plan import window_plan

CHUNK = 64  # queries per parallel task


@njit(cache=True, nogil=True)
def _lookup(q: np.ndarray, o: int, length: int, care: np.ndarray, l: int, fe: int, seed_start: np.ndarray,
            nbs: np.ndarray, nb_pos: np.ndarray, ph: tuple | None, out: np.ndarray, scratch: np.ndarray) -> int:
    """The window's position ranges by perfect hash, or by binary search when ph is None (a branch
    numba removes at compile time)."""
    if ph is None:
        return _window_ranges(q, o, length, care, l, fe, seed_start, nbs, nb_pos, out, scratch)
    return window_ranges_ph(q, o, length, care, l, fe, seed_start, nbs, nb_pos, ph[0], ph[1], ph[2], ph[3], out,
                            scratch)


@njit(cache=True, nogil=True)
def new_scratch(ph: tuple | None, cap: int) -> np.ndarray:
    """The scratch _lookup needs for windows of at most cap patterns."""
    return np.empty((SCRATCH if ph is None else SCRATCH_PH) * cap, dtype=np.int64)


@njit(cache=True, nogil=True, parallel=True)
def count_candidates(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, care: np.ndarray, l: int, windows: int,
                     step: int, fe: int, seed_start: np.ndarray, nbs: np.ndarray, nb_pos: np.ndarray,
                     ph: tuple | None, saved: np.ndarray, n_saved: np.ndarray) -> np.ndarray:
    """Candidates per query. The position ranges found are saved per query (rows of `saved`: offset,
    range start, range end) when they fit, so that the fill pass need not search the index again;
    n_saved[q] = -1 when they did not fit. ph: the perfect hashes (ph_off, ph_block, ph_g, ph_table) to look
    patterns up in, or None for binary search."""
    nq = qoff.size - 1
    counts = np.zeros(nq, dtype=np.int64)
    cap = max_patterns(l, fe)
    room = saved.shape[1]
    for chunk in prange((nq + CHUNK - 1) // CHUNK):
        ranges = np.empty((cap, 2), dtype=np.int64)
        scratch = new_scratch(ph, cap)
        for qi in range(chunk * CHUNK, min(nq, (chunk + 1) * CHUNK)):
            q = qcodes[qoff[qi]:qoff[qi + 1]]
            m = q.size
            e = qerr[qi >> 1]
            n_saved[qi] = 0
            if m <= e:
                continue
            length, offsets = window_plan(m, e, care[care.size - 1] + 1 + l, windows, step)
            c = 0
            k = 0
            for o in offsets:
                n = _lookup(q, o, length, care, l, fe, seed_start, nbs, nb_pos, ph, ranges, scratch)
                for i in range(n):
                    c += ranges[i, 1] - ranges[i, 0]
                    if k < room:
                        saved[qi, k, 0] = o
                        saved[qi, k, 1] = ranges[i, 0]
                        saved[qi, k, 2] = ranges[i, 1]
                    k += 1
            n_saved[qi] = k if k <= room else -1
            counts[qi] = c
    return counts


@njit(cache=True, nogil=True, parallel=True)
def fill_windows(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, q_first: int, q_last: int,
                 cand_off: np.ndarray, care: np.ndarray, l: int, windows: int, step: int, fe: int,
                 seed_start: np.ndarray, nbs: np.ndarray, nb_pos: np.ndarray, ph: tuple | None, pos: np.ndarray,
                 ref_starts: np.ndarray, saved: np.ndarray, n_saved: np.ndarray, win_start: np.ndarray,
                 win_end: np.ndarray, win_diag: np.ndarray) -> None:
    """Verification windows (and their diagonals) of queries [q_first, q_last), sorted by start per query.
    ph as in count_candidates."""
    cap = max_patterns(l, fe)
    base = cand_off[q_first]
    for chunk in prange((q_last - q_first + CHUNK - 1) // CHUNK):
        ranges = np.empty((cap, 2), dtype=np.int64)
        scratch = new_scratch(ph, cap)
        for qi in range(q_first + chunk * CHUNK, min(q_last, q_first + (chunk + 1) * CHUNK)):
            q = qcodes[qoff[qi]:qoff[qi + 1]]
            m = q.size
            e = qerr[qi >> 1]
            if m <= e:
                continue
            w = cand_off[qi] - base
            if n_saved[qi] >= 0:
                for k in range(n_saved[qi]):
                    w = _emit(saved[qi, k, 0], saved[qi, k, 1], saved[qi, k, 2], m, e, pos, ref_starts, w,
                              win_start, win_end, win_diag)
            else:
                length, offsets = window_plan(m, e, care[care.size - 1] + 1 + l, windows, step)
                for o in offsets:
                    n = _lookup(q, o, length, care, l, fe, seed_start, nbs, nb_pos, ph, ranges, scratch)
                    for i in range(n):
                        w = _emit(o, ranges[i, 0], ranges[i, 1], m, e, pos, ref_starts, w, win_start, win_end,
                                  win_diag)
            lo, hi = cand_off[qi] - base, cand_off[qi + 1] - base
            _sort_windows(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi])
