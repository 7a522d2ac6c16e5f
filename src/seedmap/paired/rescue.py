"""Mate rescue: a mate without locations is searched, with more edits, where its mate implies.

The search within e is fully sensitive, so a mate without locations has none within e anywhere. Rescue
(as in bwa) looks for it with `--rescue-edits` (default 10% of its length) only in the window a best
location of its mate implies: the other strand for fr/rf (the same for ff), within the insert bound
`hi` of the anchor. Each (anchor, mate) task runs the semi-global verifier over the window and keeps
the best location that forms a proper pair (fewest edits, then insert closest to the mean, then
leftmost). Rescued locations have more than e edits; they are reported like any other location.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.io.reference import unpack_into
from seedmap.order import lex_order
from seedmap.paired.pairing import proper_insert
from seedmap.spread import spread
from seedmap.verify.semiglobal import group_runs, scan_hits

MAX_ANCHORS = 8  # best-stratum locations of the mapped mate tried per pair


@njit(cache=True, nogil=True)
def _rescue(task_anchor: np.ndarray, task_read: np.ndarray, qcodes: np.ndarray, qoff: np.ndarray,
            rescue_qerr: np.ndarray, ls: np.ndarray, le: np.ndarray, lrev: np.ndarray, lref: np.ndarray,
            ref_starts: np.ndarray, packed: np.ndarray, nmask: np.ndarray, orient: int, lo: int, hi: int,
            mean: float, out_q: np.ndarray, out_s: np.ndarray, out_e: np.ndarray, out_d: np.ndarray, k0: int,
            k1: int) -> None:
    """Tasks [k0, k1)."""
    for k in range(k0, k1):
        out_q[k] = -1
        c, t = task_anchor[k], task_read[k]
        rev = lrev[c] if orient == 2 else not lrev[c]
        qi = 2 * t + (1 if rev else 0)
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        edits = rescue_qerr[t]
        if q.size <= edits:
            continue
        w0 = max(ref_starts[lref[c]], le[c] - hi)
        w1 = min(ref_starts[lref[c] + 1], ls[c] + hi)
        if w1 - w0 < q.size - edits:
            continue
        win = np.empty(w1 - w0, dtype=np.uint8)
        unpack_into(packed, nmask, w0, win)
        h_end = np.empty(win.size, dtype=np.int64)
        h_start = np.empty(win.size, dtype=np.int64)
        h_dist = np.empty(win.size, dtype=np.int32)
        n = scan_hits(q, win, edits, -q.size, win.size, h_end, h_start, h_dist)
        g_s = np.empty(n, dtype=np.int64)
        g_e = np.empty(n, dtype=np.int64)
        g_d = np.empty(n, dtype=np.int32)
        g = group_runs(n, q.size, h_end, h_start, h_dist, g_s, g_e, g_d)
        best_d, best_dev = 0, 0.0
        for i in range(g):
            s, e = w0 + g_s[i], w0 + g_e[i]
            if t % 2 == 1:  # the rescued read is mate 2
                ins = proper_insert(ls[c], le[c], lref[c], lrev[c], s, e, lref[c], rev, orient, lo, hi)
            else:
                ins = proper_insert(s, e, lref[c], rev, ls[c], le[c], lref[c], lrev[c], orient, lo, hi)
            if ins < 0:
                continue
            dev = abs(ins - mean)
            if out_q[k] < 0 or g_d[i] < best_d or (g_d[i] == best_d and dev < best_dev):
                out_q[k], out_s[k], out_e[k], out_d[k] = qi, s, e, g_d[i]
                best_d, best_dev = g_d[i], dev


def rescue(read: np.ndarray, start: np.ndarray, end: np.ndarray, dist: np.ndarray, rev: np.ndarray,
           ref_id: np.ndarray, n_reads: int, qerr: np.ndarray, rescue_qerr: np.ndarray, qcodes: np.ndarray,
           qoff: np.ndarray, ref_starts: np.ndarray, packed: np.ndarray, nmask: np.ndarray, orient: int,
           bounds: tuple[int, int], mean: float) -> tuple[np.ndarray, ...]:
    """Rescued locations (query, start, end, dist) of mates without locations, unique, sorted.
    The location arrays hold every location of the batch (read = query >> 1)."""
    count = np.bincount(read, minlength=n_reads)
    missing = (count == 0) & (rescue_qerr > qerr)
    partner_mapped = count[np.arange(n_reads) ^ 1] > 0
    target = missing & partner_mapped
    if not target.any():
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, np.zeros(0, dtype=np.int32)
    best = np.full(n_reads, np.iinfo(np.int64).max)
    np.minimum.at(best, read, dist.astype(np.int64))
    anchor_ok = target[read ^ 1] & (dist == best[read])
    anchors = np.flatnonzero(anchor_ok)
    anchors = anchors[lex_order(read[anchors], start[anchors])]
    a_read = read[anchors]
    first = np.r_[True, a_read[1:] != a_read[:-1]]
    rank = np.arange(a_read.size) - np.maximum.accumulate(np.where(first, np.arange(a_read.size), 0))
    anchors = anchors[rank < MAX_ANCHORS]
    n = anchors.size
    out_q = np.empty(n, dtype=np.int64)
    out_s = np.empty(n, dtype=np.int64)
    out_e = np.empty(n, dtype=np.int64)
    out_d = np.empty(n, dtype=np.int32)
    lo, hi = bounds
    mates = read[anchors] ^ 1
    spread(n, lambda k0, k1: _rescue(anchors, mates, qcodes, qoff, rescue_qerr, start, end, rev, ref_id, ref_starts,
                                     packed, nmask, orient, lo, hi, mean, out_q, out_s, out_e, out_d, k0, k1), grain=16)
    ok = out_q >= 0
    q, s, e, d = out_q[ok], out_s[ok], out_e[ok], out_d[ok]
    order = lex_order(q, s)
    q, s, e, d = q[order], s[order], e[order], d[order]
    uniq = np.r_[True, (q[1:] != q[:-1]) | (s[1:] != s[:-1])] if q.size else np.zeros(0, dtype=bool)
    return q[uniq], s[uniq], e[uniq], d[uniq]
