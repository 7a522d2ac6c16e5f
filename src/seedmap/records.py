"""From locations to SAM records: ordering, primary/secondary, NH, MAPQ, unmapped reads.

Order per read: distance, then reference position, then strand. The first is primary, the others
secondary (flag 256). MAPQ of the primary: the posterior of mapq.py (0 when several locations share
the best distance, growing with the edit gap to the others); secondaries get 0. --best keeps only the
best stratum, -n N the first N locations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from seedmap.flags import FLAG_REVERSE, FLAG_SECONDARY, FLAG_UNMAPPED
from seedmap.mapq import single_end_mapq


@dataclass
class Records:
    """One row per SAM record, in output order. loc = -1 for an unmapped read."""

    read: np.ndarray
    loc: np.ndarray
    flag: np.ndarray
    mapq: np.ndarray
    nh: np.ndarray


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


SHORT = 16  # a read's locations up to this many are sorted by insertion, more by a merge sort


@njit(cache=True, nogil=True)
def _record_order(n_reads: int, read: np.ndarray, strand: np.ndarray, start: np.ndarray,
                  dist: np.ndarray) -> np.ndarray:
    """np.lexsort((strand, start, dist, read)) in linear time for a batch's few locations per read: a
    counting sort by read, then each read's locations by (dist, start, strand), both stable (equal keys
    keep their order), as lexsort is. A read with many locations sorts one key per location, distance
    above start above strand: exact for starts below 2^45 and distances below 2^17."""
    first = np.zeros(n_reads + 1, dtype=np.int64)
    for i in range(read.size):
        first[read[i] + 1] += 1
    for r in range(n_reads):
        first[r + 1] += first[r]
    order = np.empty(read.size, dtype=np.int64)
    fill = first[:-1].copy()
    for i in range(read.size):
        order[fill[read[i]]] = i
        fill[read[i]] += 1
    for r in range(n_reads):
        lo, hi = first[r], first[r + 1]
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
            order[lo:hi] = seg[np.argsort(key, kind="mergesort")]
    return order


def searched_depth(n_reads: int, read: np.ndarray, dist: np.ndarray, rank: np.ndarray, budget: np.ndarray,
                   best_only: bool, max_hits: int, strata: tuple[int, int]) -> np.ndarray:
    """The deepest stratum --best / -n search per read (see pipeline/strata.py): strata[0] beyond the best
    distance (--best) or the N-th location's (-n N; the whole budget for reads with fewer) when the read
    has one location at its best distance, strata[1] when it has several (read, dist, rank: sorted by
    read, rank 0 = the best)."""
    stop = budget.copy()
    if max_hits > 0:
        nth = rank == max_hits - 1
        stop[read[nth]] = dist[nth]
    first = rank == 0
    best = np.full(n_reads, -1, dtype=np.int64)
    best[read[first]] = dist[first]
    if best_only:
        stop[read[first]] = dist[first]
    return np.minimum(budget, stop + np.where(tied_best(n_reads, read, dist, best), strata[1], strata[0]))


def tied_best(n_reads: int, read: np.ndarray, dist: np.ndarray, best: np.ndarray) -> np.ndarray:
    """Per read: whether more than one of its locations has its best distance, best[read]."""
    return np.bincount(read[dist == best[read]], minlength=n_reads) > 1


def make_records(n_reads: int, loc_q: np.ndarray, loc_s: np.ndarray, loc_d: np.ndarray, best_only: bool,
                 max_hits: int, budget: np.ndarray | None = None, strata: tuple[int, int] = (0, 0),
                 shifted: np.ndarray | None = None) -> Records:
    """budget: edits searched per read (for MAPQ; default: the largest distance found). With --best or -n,
    MAPQ sees only the strata they search (searched_depth), whatever else the locations hold. shifted:
    other placements inside each read's best location (verify/shifts.py), for MAPQ."""
    read = loc_q >> 1
    strand = loc_q & 1
    order = _record_order(n_reads, read, strand, loc_s, loc_d)
    read, dist = read[order], loc_d[order]
    rank = _rank_within(read)
    if budget is None:
        budget = np.full(n_reads, int(dist.max(initial=0)), dtype=np.int64)
    if best_only or max_hits > 0:
        budget = searched_depth(n_reads, read, dist, rank, budget, best_only, max_hits, strata)
        inside = dist <= budget[read]
        order, read, dist, rank = order[inside], read[inside], dist[inside], rank[inside]
    se_mapq = single_end_mapq(read, dist, rank, budget, n_reads, shifted)  # all (searched) locations, before a cap
    if best_only or max_hits > 0:
        best = np.zeros(n_reads, dtype=np.int64)
        best[read[rank == 0]] = dist[rank == 0]
        keep = np.ones(read.size, dtype=bool)
        if best_only:
            keep &= dist == best[read]
        if max_hits > 0:
            keep &= rank < max_hits
        order, read, rank = order[keep], read[keep], rank[keep]
    return Records(*_assemble(n_reads, order, read, rank, strand, se_mapq))


@njit(cache=True, nogil=True)
def _assemble(n_reads: int, order: np.ndarray, read: np.ndarray, rank: np.ndarray, strand: np.ndarray,
              se_mapq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The records' columns (read, loc, flag, mapq, nh): each read's locations in rank order (order, read,
    rank: sorted by read; strand: per location), the first primary with the read's MAPQ, the others
    secondary with 0; a read without any, one unmapped record (loc -1) in its place."""
    nh = np.zeros(n_reads, dtype=np.int64)
    for i in range(read.size):
        nh[read[i]] += 1
    unmapped = 0
    for r in range(n_reads):
        unmapped += nh[r] == 0
    size = read.size + unmapped
    out_read = np.empty(size, dtype=np.int64)
    out_loc = np.empty(size, dtype=np.int64)
    out_flag = np.empty(size, dtype=np.int64)
    out_mapq = np.empty(size, dtype=np.int64)
    out_nh = np.empty(size, dtype=np.int64)
    i = 0
    k = 0
    for r in range(n_reads):
        if nh[r] == 0:
            out_read[k], out_loc[k], out_flag[k], out_mapq[k], out_nh[k] = r, -1, FLAG_UNMAPPED, 0, 0
            k += 1
            continue
        for _ in range(nh[r]):
            primary = rank[i] == 0
            out_read[k] = r
            out_loc[k] = order[i]
            out_flag[k] = (FLAG_REVERSE if strand[order[i]] == 1 else 0) | (0 if primary else FLAG_SECONDARY)
            out_mapq[k] = se_mapq[r] if primary else 0
            out_nh[k] = nh[r]
            i += 1
            k += 1
    return out_read, out_loc, out_flag, out_mapq, out_nh
