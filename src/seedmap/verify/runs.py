"""Runs at the read's e from locations found with fewer edits (the stratified search).

A location is a run of consecutive hit ends at the read's e (semiglobal.py). A search with
e' < e edits finds every end of distance <= e', grouped into runs at e'. Every hit of distance <= e'
lies in a run at e, and a run at e holds one or more runs at e' (more in a tandem repeat: the distance
climbs above e' between copies but stays <= e). Hits outside the runs at e' cost more than e', so the
best hit of a run at e is the best of the best hits of the runs at e' it holds (same order: distance,
span closest to m, leftmost end). What is left to find is which neighbouring runs at e' are joined:
two are when every end between them is a hit at e, which Myers' bit vectors decide column by column from
the first one's end (bitvector.every_end_hits: it stops at the first end that is not a hit, usually a few
columns on; a scalar DP of the band per pair was 0.42 s of a --best run's 3.3 s, 200 k ragout16 reads, and
the runs stage went from 0.8-0.9 s to 0.3 s with this).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.spread import spread
from seedmap.verify.bitvector import every_end_hits, match_masks

SUFFIX = 64  # bases of a read _joined tries first: one word


@njit(cache=True, nogil=True, _nrt=False)
def _joined(qcodes: np.ndarray, a: int, m: int, e: int, end_a: int, end_b: int, seq_lo: int, packed: np.ndarray,
            nmask: np.ndarray, peq: np.ndarray, pv: np.ndarray, mv: np.ndarray) -> bool:
    """Whether every end in [end_a, end_b] (global, end_a < end_b, one sequence) is a hit within e edits for
    the read qcodes[a:a + m]. Scratch: peq of 8 * (nw + 2) words, pv and mv of nw, nw = (m + 63) // 64 or more.

    A read longer than a word is first tried by its last SUFFIX bases alone, one word a column: an alignment of
    the read ending at j holds one of its suffix ending at j that costs no more, so an end over e for the suffix
    is over e for the read. Most pairs are copies far apart whose runs end a few columns past end_a (ragout16,
    --best: 98 % of them over 1,000 bases apart, none of those joined)."""
    if m > SUFFIX:
        lo = max(seq_lo, end_a - SUFFIX - e)
        match_masks(qcodes, a + m - SUFFIX, SUFFIX, peq)
        if not every_end_hits(peq, SUFFIX, e, packed, nmask, lo, end_a - lo, end_b - lo, pv, mv):
            return False
    lo = max(seq_lo, end_a - m - e)  # every alignment of cost <= e ending at end_a or later starts here or later
    match_masks(qcodes, a, m, peq)
    return every_end_hits(peq, m, e, packed, nmask, lo, end_a - lo, end_b - lo, pv, mv)


def joined_runs(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray, loc_end: np.ndarray,
                pair_a: np.ndarray, seq_lo: np.ndarray, packed: np.ndarray, nmask: np.ndarray,
                out: np.ndarray) -> None:
    """out[k]: whether locations pair_a[k] and pair_a[k] + 1 (one query, one sequence, ends increasing)
    lie in one run at the edits qerr of their read."""
    spread(pair_a.size, lambda k0, k1: _joined_runs(qcodes, qoff, qerr, loc_q, loc_end, pair_a, seq_lo, packed, nmask,
                                                     out, k0, k1), grain=64)


@njit(cache=True, nogil=True)
def _joined_runs(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray, loc_end: np.ndarray,
                 pair_a: np.ndarray, seq_lo: np.ndarray, packed: np.ndarray, nmask: np.ndarray, out: np.ndarray,
                 k0: int, k1: int) -> None:
    m_max = 0
    for k in range(k0, k1):
        qi = loc_q[pair_a[k]]
        m_max = max(m_max, qoff[qi + 1] - qoff[qi])
    nw = (m_max + 63) >> 6
    peq = np.empty(8 * (nw + 2), dtype=np.uint64)  # the scratch of every pair's _joined (not allocated per pair)
    pv = np.empty(nw, dtype=np.uint64)
    mv = np.empty(nw, dtype=np.uint64)
    for k in range(k0, k1):
        i = pair_a[k]
        qi = loc_q[i]
        out[k] = _joined(qcodes, qoff[qi], qoff[qi + 1] - qoff[qi], qerr[qi >> 1], loc_end[i], loc_end[i + 1],
                         seq_lo[k], packed, nmask, peq, pv, mv)
