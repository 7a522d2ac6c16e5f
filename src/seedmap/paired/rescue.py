"""Mate rescue and the search near the partner: a mate is looked for only in the window its mate's location implies.

Rescue: the search within e is fully sensitive, so a mate without locations has none within e anywhere. Rescue
(as in bwa) looks for it with `--rescue-edits` (default 10% of its length) only in the window a best
location of its mate implies: the other strand for fr/rf (the same for ff), within the insert bound
`hi` of the anchor. Rescued locations have more than e edits; they are reported like any other location.

Near the partner (paired --best, pipeline/pair_strata.py): a stratified search finds each mate's locations only
up to a few strata, so a location of one mate may pair with a location of the other that has more edits than
that mate's strata hold. Each location that pairs with none found is an anchor: its mate is looked for within e
in its window, which finds every such partner without a search of the genome.

Each (anchor, edits) task runs the semi-global verifier over the window and keeps the best location that forms a
proper pair (fewest edits, then insert closest to the mean, then leftmost).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.io.columns import PackedRef, Queries
from seedmap.io.reference import unpack_into
from seedmap.order import lex_order
from seedmap.paired.pairing import Library, MateLocations, proper_insert
from seedmap.spread import spread
from seedmap.verify.semiglobal import group_runs, scan_hits

MAX_ANCHORS = 8  # locations of a read whose mate is looked for near them


class Tasks(NamedTuple):
    """Task k: the mate of the read of location anchor[k] (of the batch's MateLocations), within edits[k] edits."""

    anchor: np.ndarray
    edits: np.ndarray


class Found(NamedTuple):
    """Task k's location of the mate: query[k] (-1: none forming a proper pair), start[k], end[k], dist[k]."""

    query: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dist: np.ndarray


@njit(cache=True, nogil=True)
def _rescue(tasks: Tasks, queries: Queries, read: np.ndarray, loc: MateLocations, ref_starts: np.ndarray,
            ref: PackedRef, lib: Library, out: Found, k0: int, k1: int) -> None:
    """Tasks [k0, k1) into out. read: the read of each of loc's locations."""
    ls, le, lrev, lref = loc.start, loc.end, loc.rev, loc.ref_id
    orient, lo, hi = lib.orient, lib.lo, lib.hi
    qcodes, qoff = queries.codes, queries.off
    out_q, out_s, out_e, out_d = out.query, out.start, out.end, out.dist
    for k in range(k0, k1):
        out_q[k] = -1
        c = tasks.anchor[k]
        t = read[c] ^ 1
        rev = lrev[c] if orient == 2 else not lrev[c]
        qi = 2 * t + (1 if rev else 0)
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        edits = tasks.edits[k]
        if q.size <= edits:
            continue
        w0 = max(ref_starts[lref[c]], le[c] - hi)
        w1 = min(ref_starts[lref[c] + 1], ls[c] + hi)
        if w1 - w0 < q.size - edits:
            continue
        win = np.empty(w1 - w0, dtype=np.uint8)
        unpack_into(ref.packed, ref.nmask, w0, win)
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
            dev = abs(ins - lib.mean)
            if out_q[k] < 0 or g_d[i] < best_d or (g_d[i] == best_d and dev < best_dev):
                out_q[k], out_s[k], out_e[k], out_d[k] = qi, s, e, g_d[i]
                best_d, best_dev = g_d[i], dev


def _first_per_read(anchors: np.ndarray, read: np.ndarray, *keys: np.ndarray) -> np.ndarray:
    """The first MAX_ANCHORS of each read's anchors in the order of keys (most significant first)."""
    anchors = anchors[lex_order(read[anchors], *(k[anchors] for k in keys))]
    a_read = read[anchors]
    first = np.r_[True, a_read[1:] != a_read[:-1]]
    rank = np.arange(a_read.size) - np.maximum.accumulate(np.where(first, np.arange(a_read.size), 0))
    return anchors[rank < MAX_ANCHORS]


def untried_anchors(located: np.ndarray) -> np.ndarray:
    """Per read with `located` locations: how many of them are never an anchor (those beyond MAX_ANCHORS)."""
    return np.maximum(located - MAX_ANCHORS, 0)


def unlocated_anchors(read: np.ndarray, start: np.ndarray, dist: np.ndarray, n_reads: int, qerr: np.ndarray,
                      rescue_qerr: np.ndarray) -> np.ndarray:
    """Rescue of mates without locations: the best-stratum locations of their mates (the leftmost MAX_ANCHORS)."""
    count = np.bincount(read, minlength=n_reads)
    missing = (count == 0) & (rescue_qerr > qerr)
    target = missing & (count[np.arange(n_reads) ^ 1] > 0)
    if not target.any():
        return np.zeros(0, dtype=np.int64)
    best = np.full(n_reads, np.iinfo(np.int64).max)
    np.minimum.at(best, read, dist.astype(np.int64))
    return _first_per_read(np.flatnonzero(target[read ^ 1] & (dist == best[read])), read, start)


def unpartnered_anchors(read: np.ndarray, start: np.ndarray, dist: np.ndarray, partnered: np.ndarray,
                        n_reads: int) -> np.ndarray:
    """Search near the partner, for a stratified search: the locations that pair with no location found of their
    read's mate, where that mate has some (the fewest edits first, then the leftmost; MAX_ANCHORS a read). The
    mate's locations beyond its searched strata that pair with these are found by verifying the insert window."""
    count = np.bincount(read, minlength=n_reads)
    return _first_per_read(np.flatnonzero(~partnered & (count[read ^ 1] > 0)), read, dist, start)


def rescue(anchors: np.ndarray, edits: np.ndarray, read: np.ndarray, loc: MateLocations, queries: Queries,
           ref_starts: np.ndarray, ref: PackedRef, lib: Library) -> tuple[np.ndarray, ...]:
    """Locations (query, start, end, dist) of the mates of the anchors' reads, each the best within edits[k] that
    forms a proper pair with anchor k, unique, sorted. loc: every location of the batch (read: of each)."""
    n = anchors.size
    tasks = Tasks(anchors, edits)
    out = Found(np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
                np.empty(n, dtype=np.int32))
    spread(n, lambda k0, k1: _rescue(tasks, queries, read, loc, ref_starts, ref, lib, out, k0, k1), grain=16)
    ok = out.query >= 0
    q, s, e, d = out.query[ok], out.start[ok], out.end[ok], out.dist[ok]
    order = lex_order(q, s)
    q, s, e, d = q[order], s[order], e[order], d[order]
    uniq = np.r_[True, (q[1:] != q[:-1]) | (s[1:] != s[:-1])] if q.size else np.zeros(0, dtype=bool)
    return q[uniq], s[uniq], e[uniq], d[uniq]
