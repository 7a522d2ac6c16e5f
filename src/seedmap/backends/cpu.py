"""CPU backend: verification of merged candidate windows in parallel with numba."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from seedmap.io.reference import unpack_into
from seedmap.verify.semiglobal import group_locations, scan_hits


@njit(cache=True, nogil=True, parallel=True)
def _verify_windows(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray,
                    win_s: np.ndarray, win_e: np.ndarray, packed: np.ndarray, nmask: np.ndarray,
                    slot_off: np.ndarray, loc_start: np.ndarray, loc_end: np.ndarray,
                    loc_dist: np.ndarray, loc_count: np.ndarray) -> None:
    for w in prange(win_q.size):
        qi = win_q[w]
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        e = qerr[qi >> 1]
        width = win_e[w] - win_s[w]
        t = np.empty(width, dtype=np.uint8)
        unpack_into(packed, nmask, win_s[w], t)
        h_end = np.empty(width, dtype=np.int64)
        h_start = np.empty(width, dtype=np.int64)
        h_dist = np.empty(width, dtype=np.int32)
        n = scan_hits(q, t, e, h_end, h_start, h_dist)
        a, b = slot_off[w], slot_off[w + 1]
        k = group_locations(n, h_end, h_start, h_dist, loc_start[a:b], loc_end[a:b], loc_dist[a:b])
        for i in range(k):
            loc_start[a + i] += win_s[w]
            loc_end[a + i] += win_s[w]
        loc_count[w] = k


def verify(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win_s: np.ndarray,
           win_e: np.ndarray, packed: np.ndarray, nmask: np.ndarray) -> tuple[np.ndarray, ...]:
    """Locations found in the windows: (query, start, end, distance), ordered by query then start.

    Windows of one query are disjoint and each holds every alignment of cost <= e ending inside it, so
    the locations of different windows never overlap. A window of width W holds at most W // (m - e)
    locations (each spans >= m - e reference bases), which sizes the output exactly: nothing is lost.
    """
    m = (qoff[win_q + 1] - qoff[win_q]).astype(np.int64)
    e = qerr[win_q >> 1].astype(np.int64)
    cap = (win_e - win_s) // np.maximum(m - e, 1)
    slot_off = np.zeros(win_q.size + 1, dtype=np.int64)
    np.cumsum(cap, out=slot_off[1:])
    total = int(slot_off[-1])
    loc_start = np.empty(total, dtype=np.int64)
    loc_end = np.empty(total, dtype=np.int64)
    loc_dist = np.empty(total, dtype=np.int32)
    loc_count = np.zeros(win_q.size, dtype=np.int64)
    _verify_windows(qcodes, qoff, qerr, win_q, win_s, win_e, packed, nmask, slot_off, loc_start, loc_end,
                    loc_dist, loc_count)
    keep = np.arange(total) - np.repeat(slot_off[:-1], cap) < np.repeat(loc_count, cap)
    return np.repeat(win_q, cap)[keep], loc_start[keep], loc_end[keep], loc_dist[keep]
