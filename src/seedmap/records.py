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

from seedmap.mapq import single_end_mapq

FLAG_REVERSE = 16
FLAG_UNMAPPED = 4
FLAG_SECONDARY = 256


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


def searched_depth(n_reads: int, read: np.ndarray, dist: np.ndarray, rank: np.ndarray, budget: np.ndarray,
                   best_only: bool, max_hits: int, strata: int) -> np.ndarray:
    """The deepest stratum --best / -n search per read (see pipeline/strata.py): `strata` beyond the best
    distance (--best) or the N-th location's (-n N; the whole budget for reads with fewer)."""
    stop = budget.copy()
    if max_hits > 0:
        nth = rank == max_hits - 1
        stop[read[nth]] = dist[nth]
    if best_only:
        first = rank == 0
        stop[read[first]] = dist[first]
    return np.minimum(budget, stop + strata)


def make_records(n_reads: int, loc_q: np.ndarray, loc_s: np.ndarray, loc_d: np.ndarray, best_only: bool,
                 max_hits: int, budget: np.ndarray | None = None, strata: int = 0) -> Records:
    """budget: edits searched per read (for MAPQ; default: the largest distance found). With --best or -n,
    MAPQ sees only the strata they search (searched_depth), whatever else the locations hold."""
    read = loc_q >> 1
    strand = loc_q & 1
    order = np.lexsort((strand, loc_s, loc_d, read))
    read, dist = read[order], loc_d[order]
    rank = _rank_within(read)
    if budget is None:
        budget = np.full(n_reads, int(dist.max(initial=0)), dtype=np.int64)
    if best_only or max_hits > 0:
        budget = searched_depth(n_reads, read, dist, rank, budget, best_only, max_hits, strata)
        inside = dist <= budget[read]
        order, read, dist, rank = order[inside], read[inside], dist[inside], rank[inside]
    se_mapq = single_end_mapq(read, dist, rank, budget, n_reads)  # over all (searched) locations, before any cap
    best = np.zeros(n_reads, dtype=np.int64)
    best[read[rank == 0]] = dist[rank == 0]
    keep = np.ones(read.size, dtype=bool)
    if best_only:
        keep &= dist == best[read]
    if max_hits > 0:
        keep &= rank < max_hits
    order, read, rank = order[keep], read[keep], rank[keep]
    nh = np.bincount(read, minlength=n_reads)
    mapq = np.zeros(read.size, dtype=np.int64)
    prim = rank == 0
    mapq[prim] = se_mapq[read[prim]]
    flag = np.where(strand[order] == 1, FLAG_REVERSE, 0) | np.where(prim, 0, FLAG_SECONDARY)
    unmapped = np.flatnonzero(nh == 0)
    all_read = np.concatenate([read, unmapped])
    out = np.argsort(all_read, kind="stable")  # mapped records keep their rank order
    return Records(
        read=all_read[out],
        loc=np.concatenate([order, np.full(unmapped.size, -1)])[out],
        flag=np.concatenate([flag, np.full(unmapped.size, FLAG_UNMAPPED)])[out],
        mapq=np.concatenate([mapq, np.zeros(unmapped.size, dtype=np.int64)])[out],
        nh=np.concatenate([nh[read], np.zeros(unmapped.size, dtype=np.int64)])[out],
    )
