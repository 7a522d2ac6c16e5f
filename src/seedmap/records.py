"""From locations to SAM records, single-end and paired: ordering, primary/secondary, NH, MAPQ, unmapped
reads, and for pairs the mate fields. One set of kernels builds both kinds of record (paired/records.py
hands them the pairing's choices), so a location is written the same way whichever run found it.

Order per read: distance, then reference position, then strand; a paired read's chosen location
(pairing.py) goes first. The first is primary, the others secondary (flag 256). MAPQ of the primary:
single-end, the posterior of mapq.py (0 when several locations share the best distance, growing with the
edit gap to the others); paired, the pair's (pairing.py); secondaries get 0. --best keeps only the best
stratum (and the primary), -n N the first N locations. XS on a primary: the alignment score (-NM, as AS) of
the read's best other location found; XA, with --best or -n, the locations found that they leave out (at most
MAX_XA, best first), as bwa writes the alternatives it does not write as records.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.flags import (
    FLAG_FIRST,
    FLAG_LAST,
    FLAG_MATE_REVERSE,
    FLAG_MATE_UNMAPPED,
    FLAG_PAIRED,
    FLAG_PROPER,
    FLAG_REVERSE,
    FLAG_SECONDARY,
    FLAG_UNMAPPED,
)
from seedmap.io.columns import NO_XS, Records
from seedmap.keysort import stable_argsort
from seedmap.mapq import single_end_mapq
from seedmap.ranges import put


class Mates(NamedTuple):
    """What paired records take from the pairing (reads 2p and 2p + 1 are the mates of pair p): per read its
    chosen location (-1: none), per pair whether it is proper, per location its start, end (exclusive) and
    sequence. Empty arrays for single-end records (SINGLE)."""

    chosen: np.ndarray
    proper: np.ndarray
    start: np.ndarray
    end: np.ndarray
    ref_id: np.ndarray


_NONE = np.zeros(0, dtype=np.int64)
SINGLE = Mates(_NONE, np.zeros(0, dtype=np.bool_), _NONE, _NONE, _NONE)


@njit(cache=True, nogil=True)
def _rank_within(groups: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... within runs of equal values of a sorted array (a kernel: numpy's repeat holds the GIL,
    which the worker threads share)."""
    rank = np.empty(groups.size, dtype=np.int64)
    r = 0
    for i in range(groups.size):
        r = r + 1 if i > 0 and groups[i] == groups[i - 1] else 0
        rank[i] = r
    return rank


MAX_XA = 5  # alternatives an XA tag lists at most (bwa mem's default, -h 5)
SHORT = 16  # a read's locations up to this many are sorted by insertion, more by a merge sort


@njit(cache=True, nogil=True)
def _record_order(n_reads: int, read: np.ndarray, strand: np.ndarray, start: np.ndarray,
                  dist: np.ndarray, first: np.ndarray) -> np.ndarray:
    """np.lexsort((strand, start, dist, read)) in linear time for a batch's few locations per read: a
    counting sort by read, then each read's locations by (dist, start, strand), both stable (equal keys
    keep their order), as lexsort is. A read with many locations sorts one key per location, distance
    above start above strand: exact for starts below 2^45 and distances below 2^17. first: per read, a
    location moved to the front of its read's (-1: none; an empty array: none for any read), the others
    keeping their order, as an extra key `location != first[read]` after read would sort it."""
    bounds = np.zeros(n_reads + 1, dtype=np.int64)
    for i in range(read.size):
        bounds[read[i] + 1] += 1
    for r in range(n_reads):
        bounds[r + 1] += bounds[r]
    order = np.empty(read.size, dtype=np.int64)
    fill = bounds[:-1].copy()
    for i in range(read.size):
        order[fill[read[i]]] = i
        fill[read[i]] += 1
    for r in range(n_reads):
        lo, hi = bounds[r], bounds[r + 1]
        if hi - lo <= SHORT:
            for a in range(lo + 1, hi):
                x = order[a]
                b = a - 1
                while b >= lo and (dist[order[b]], start[order[b]], strand[order[b]]) > (dist[x], start[x], strand[x]):
                    order[b + 1] = order[b]
                    b -= 1
                order[b + 1] = x
        else:
            seg = order[lo:hi]
            key = np.empty(hi - lo, dtype=np.int64)
            for a in range(hi - lo):
                key[a] = (np.int64(dist[seg[a]]) << 46) | (start[seg[a]] << 1) | strand[seg[a]]
            by_key = stable_argsort(key)
            for a in range(hi - lo):  # key's room reused for the sorted locations
                key[a] = seg[by_key[a]]
            put(order, lo, key)
        if first.size and first[r] >= 0:
            at = lo
            while at < hi and order[at] != first[r]:
                at += 1
            if at < hi:  # one of the read's own: the locations before it move up one
                for b in range(at, lo, -1):
                    order[b] = order[b - 1]
                order[lo] = first[r]
    return order


@njit(cache=True, nogil=True)
def best_locations(n_reads: int, read: np.ndarray, strand: np.ndarray, start: np.ndarray,
                   dist: np.ndarray) -> np.ndarray:
    """Per read, the location its single-end records make primary (-1: none): fewest edits, then leftmost,
    then forward, the first of equals (_record_order's first)."""
    best = np.full(n_reads, -1, dtype=np.int64)
    for i in range(read.size):
        b = best[read[i]]
        if b < 0 or (dist[i], start[i], strand[i]) < (dist[b], start[b], strand[b]):
            best[read[i]] = i
    return best


def searched_depth(n_reads: int, read: np.ndarray, dist: np.ndarray, rank: np.ndarray, edits: np.ndarray,
                   best_only: bool, max_hits: int, strata: tuple[int, int]) -> np.ndarray:
    """The deepest stratum --best / -n search per read (see pipeline/strata.py): strata[0] beyond the best
    distance (--best) or the N-th location's (-n N; all the edits for reads with fewer) when the read
    has one location at its best distance, strata[1] when it has several (read, dist, rank: sorted by
    read, rank 0 = the best)."""
    stop = edits.copy()
    if max_hits > 0:
        nth = rank == max_hits - 1
        stop[read[nth]] = dist[nth]
    best, at_best = best_and_ties(n_reads, read, dist)
    if best_only:
        found = best >= 0
        stop[found] = best[found]
    return np.minimum(edits, stop + np.where(at_best > 1, strata[1], strata[0]))


@njit(cache=True, nogil=True)
def best_and_ties(n_reads: int, read: np.ndarray, dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per read: its best distance (-1 without locations) and how many of its locations have it (one pass:
    numpy's minimum.at and bincount over a --best round's locations were 4 % of its run)."""
    best = np.full(n_reads, -1, dtype=np.int64)
    at_best = np.zeros(n_reads, dtype=np.int64)
    for i in range(read.size):
        r = read[i]
        if best[r] < 0 or dist[i] < best[r]:
            best[r] = dist[i]
            at_best[r] = 1
        elif dist[i] == best[r]:
            at_best[r] += 1
    return best, at_best


def make_records(n_reads: int, loc_q: np.ndarray, loc_s: np.ndarray, loc_d: np.ndarray, best_only: bool,
                 max_hits: int, edits: np.ndarray | None = None, strata: tuple[int, int] = (0, 0),
                 shifted: np.ndarray | None = None, loglik: np.ndarray | None = None,
                 edit_weight: np.ndarray | None = None) -> Records:
    """Single-end records. edits: edits searched per read (for MAPQ; default: the largest distance found).
    With --best or -n, MAPQ sees only the strata they search (searched_depth), whatever else the locations
    hold (mapq.py: the default strata hold all it counts, so MAPQ is all-mapping's). shifted: other placements
    inside each read's best location (verify/shifts.py), for MAPQ. loglik (per location) and edit_weight (per
    read): the base qualities' weights of mapq.py, for reads that have qualities."""
    loc_read = loc_q >> 1
    strand = loc_q & 1
    order = _record_order(n_reads, loc_read, strand, loc_s, loc_d, _NONE)
    read, dist = loc_read[order], loc_d[order]
    ll = loglik[order] if loglik is not None else None
    rank = _rank_within(read)
    if edits is None:
        edits = np.full(n_reads, int(dist.max(initial=0)), dtype=np.int64)
    searched = edits
    if best_only or max_hits > 0:
        searched = searched_depth(n_reads, read, dist, rank, edits, best_only, max_hits, strata)
        inside = dist <= searched[read]
        order, read, dist, rank = order[inside], read[inside], dist[inside], rank[inside]
        ll = ll[inside] if ll is not None else None
    # all (searched) locations, before a cap
    se_mapq = single_end_mapq(read, dist, rank, edits, n_reads, shifted, searched, ll, edit_weight)
    return Records(*_assemble(n_reads, order, read, rank, loc_d, strand, se_mapq, best_only, max_hits, False,
                              SINGLE))


@njit(cache=True, nogil=True)
def pair_records(n_reads: int, read: np.ndarray, strand: np.ndarray, dist: np.ndarray, mapq: np.ndarray,
                 best_only: bool, max_hits: int, mates: Mates) -> tuple:
    """Paired records (read, strand, dist: per location; mapq: per read, the pairing's), each read's chosen
    location its primary: make_records' order and filters with the pairing's choices, in one kernel."""
    order = _record_order(n_reads, read, strand, mates.start, dist, mates.chosen)
    sorted_read = np.empty(order.size, dtype=np.int64)
    for i in range(order.size):
        sorted_read[i] = read[order[i]]
    return _assemble(n_reads, order, sorted_read, _rank_within(sorted_read), dist, strand, mapq, best_only,
                     max_hits, True, mates)


@njit(cache=True, nogil=True)
def _assemble(n_reads: int, order: np.ndarray, read: np.ndarray, rank: np.ndarray, dist: np.ndarray,
              strand: np.ndarray, mapq: np.ndarray, best_only: bool, max_hits: int, paired: bool,
              mates: Mates) -> tuple:
    """The records' columns (Records' order): each read's locations in rank order (order, read, rank: sorted
    by read, rank 0 its primary; dist, strand: per location), less those --best (best_only: other than the
    read's best distance, the primary kept) or -n (max_hits > 0: rank max_hits on) leave out; the primary
    with the read's MAPQ (mapq, per read), the others secondary with 0; a read without any, one unmapped
    record (loc -1) in its place. paired: the mate fields and flags from mates (Mates). The primary's XS and XA:
    Records' notes."""
    best = np.full(n_reads, np.iinfo(np.int64).max, dtype=np.int64)
    for i in range(order.size):
        best[read[i]] = min(best[read[i]], dist[order[i]])
    keep = np.ones(order.size, dtype=np.bool_)
    nh = np.zeros(n_reads, dtype=np.int64)
    for i in range(order.size):
        keep[i] = ((not best_only or rank[i] == 0 or dist[order[i]] == best[read[i]])
                   and (max_hits <= 0 or rank[i] < max_hits))
        nh[read[i]] += keep[i]
    # XS: the read's best location after its primary (rank 1); XA, with --best or -n: the first MAX_XA of the
    # locations the records leave out, in record order (so records and XA together are all-mapping's first ones).
    second = np.full(n_reads, -1, dtype=np.int64)
    n_alt = np.zeros(n_reads, dtype=np.int64)
    for i in range(order.size):
        if rank[i] == 1:
            second[read[i]] = order[i]
        if (best_only or max_hits > 0) and not keep[i] and n_alt[read[i]] < MAX_XA:
            n_alt[read[i]] += 1
    size = 0
    for r in range(n_reads):
        size += max(nh[r], 1)
    out_xs = np.full(size, NO_XS, dtype=np.int64)
    xa_off = np.zeros(size + 1, dtype=np.int64)
    xa_loc = np.empty(n_alt.sum(), dtype=np.int64)
    out_read = np.empty(size, dtype=np.int64)
    out_loc = np.empty(size, dtype=np.int64)
    out_flag = np.empty(size, dtype=np.int64)
    out_mapq = np.zeros(size, dtype=np.int64)
    out_nh = np.empty(size, dtype=np.int64)
    mate_loc = np.full(size, -1, dtype=np.int64)
    mate_mapq = np.zeros(size, dtype=np.int64)
    tlen = np.zeros(size, dtype=np.int64)
    i = 0
    k = 0
    for r in range(n_reads):
        while i < order.size and read[i] < r:
            i += 1
        n = max(nh[r], 1)
        for _ in range(n):
            while i < order.size and read[i] == r and not keep[i]:
                i += 1
            li = order[i] if nh[r] > 0 else -1
            primary = nh[r] == 0 or rank[i] == 0
            flag = FLAG_UNMAPPED if li < 0 else (FLAG_REVERSE if strand[li] == 1 else 0)
            if not primary:
                flag |= FLAG_SECONDARY
            xa_off[k + 1] = xa_off[k]
            if li >= 0 and primary:
                out_mapq[k] = mapq[r]
                if second[r] >= 0:
                    out_xs[k] = -dist[second[r]]
                j = i
                while xa_off[k + 1] - xa_off[k] < n_alt[r]:  # (the read's locations from its primary on)
                    if not keep[j]:
                        xa_loc[xa_off[k + 1]] = 2 * order[j] + strand[order[j]]
                        xa_off[k + 1] += 1
                    j += 1
            if paired:
                mi = mates.chosen[r ^ 1]
                flag |= FLAG_PAIRED | (FLAG_FIRST if r % 2 == 0 else FLAG_LAST)
                if mi < 0:
                    flag |= FLAG_MATE_UNMAPPED
                elif strand[mi] == 1:
                    flag |= FLAG_MATE_REVERSE
                if li >= 0 and primary and mates.proper[r >> 1]:
                    flag |= FLAG_PROPER
                mate_loc[k] = mi
                mate_mapq[k] = mapq[r ^ 1]
                if li >= 0 and primary and mi >= 0 and mates.ref_id[li] == mates.ref_id[mi]:
                    s, e = mates.start, mates.end
                    span = max(e[li], e[mi]) - min(s[li], s[mi])
                    leftmost = s[li] < s[mi] or (s[li] == s[mi] and r % 2 == 0)
                    tlen[k] = span if leftmost else -span
            out_read[k], out_loc[k], out_flag[k], out_nh[k] = r, li, flag, nh[r]
            if nh[r] > 0:
                i += 1
            k += 1
    return out_read, out_loc, out_flag, out_mapq, out_nh, mate_loc, mate_mapq, tlen, out_xs, xa_off, xa_loc
