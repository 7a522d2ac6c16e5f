"""Runs at the read's e from locations found with fewer edits (the stratified search).

A location is a run of consecutive hit ends at the read's e (semiglobal.py). A search with
e' < e edits finds every end of distance <= e', grouped into runs at e'. Every hit of distance <= e'
lies in a run at e, and a run at e holds one or more runs at e' (more in a tandem repeat: the distance
climbs above e' between copies but stays <= e). Hits outside the runs at e' cost more than e', so the
best hit of a run at e is the best of the best hits of the runs at e' it holds (same order: distance,
span closest to m, leftmost end). What is left to find is which neighbouring runs at e' are joined:
two are when every end between them is a hit at e, which a scan from the first one's end decides (it
stops at the first end that is not a hit, usually a few columns on).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from seedmap.io.reference import unpack_into
from seedmap.verify.semiglobal import scan_hits

FIRST_STRETCH = 4  # ends checked past the first one at first (plus e); doubled while every end is a hit


@njit(cache=True, nogil=True)
def _joined(q: np.ndarray, e: int, end_a: int, end_b: int, seq_lo: int, packed: np.ndarray,
            nmask: np.ndarray) -> bool:
    """Whether every end in [end_a, end_b] (global, end_a < end_b, one sequence) is a hit within e edits."""
    m = q.size
    lo = max(seq_lo, end_a - m - e)  # every alignment of cost <= e ending at end_a or later starts here or later
    stretch = FIRST_STRETCH + e
    while True:
        hi = min(end_b, end_a + stretch)
        t = np.empty(hi - lo, dtype=np.uint8)
        unpack_into(packed, nmask, lo, t)
        h_end = np.empty(t.size, dtype=np.int64)
        h_start = np.empty(t.size, dtype=np.int64)
        h_dist = np.empty(t.size, dtype=np.int32)
        # An alignment of cost <= e ending at column c keeps to diagonals c - m - e .. c - m + e.
        first_c = end_a - lo
        n = scan_hits(q, t, e, first_c - m - e, t.size - m + e, h_end, h_start, h_dist)
        first = np.searchsorted(h_end[:n], first_c)
        if n - first < hi - end_a + 1:
            return False  # an end in between is not a hit
        if hi == end_b:
            return True
        stretch *= 2


@njit(cache=True, nogil=True, parallel=True)
def joined_runs(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray, loc_end: np.ndarray,
                pair_a: np.ndarray, seq_lo: np.ndarray, packed: np.ndarray, nmask: np.ndarray,
                out: np.ndarray) -> None:
    """out[k]: whether locations pair_a[k] and pair_a[k] + 1 (one query, one sequence, ends increasing)
    lie in one run at the edits qerr of their read."""
    for k in prange(pair_a.size):
        i = pair_a[k]
        qi = loc_q[i]
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        out[k] = _joined(q, qerr[qi >> 1], loc_end[i], loc_end[i + 1], seq_lo[k], packed, nmask)
