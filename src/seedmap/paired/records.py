"""From paired locations to SAM records: mate order, flags 1/2/8/32/64/128, mate location, TLEN.

Reads 2p and 2p + 1 are the mates of pair p. Per mate: its chosen location (pairing.py) is the
primary record, its other locations follow as secondaries by distance, then position, then strand
(--best and -n apply to those). Every record of a mate points (RNEXT, PNEXT, MC, MQ) at the other
mate's primary; TLEN is set on primaries whose mates lie on one sequence (positive for the leftmost
mate, mate 1 on a tie), 0 elsewhere; flag 2 on both primaries of a proper pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
from seedmap.records import Records, _rank_within


@dataclass
class PairRecords(Records):
    mate_loc: np.ndarray  # location of the mate's primary, -1 when the mate is unmapped
    mate_mapq: np.ndarray
    tlen: np.ndarray


def make_pair_records(n_reads: int, start: np.ndarray, end: np.ndarray, dist: np.ndarray, rev: np.ndarray,
                      ref_id: np.ndarray, read: np.ndarray, chosen: np.ndarray, proper: np.ndarray,
                      mapq: np.ndarray, best_only: bool, max_hits: int) -> PairRecords:
    idx = np.arange(read.size)
    not_chosen = idx != chosen[read]
    order = np.lexsort((rev, start, dist, not_chosen, read))
    rd = read[order]
    rank = _rank_within(rd)
    keep = np.ones(rd.size, dtype=bool)
    if best_only:
        best = np.full(n_reads, np.iinfo(np.int64).max)
        np.minimum.at(best, read, dist.astype(np.int64))
        keep &= (dist[order] == best[rd]) | (rank == 0)
    if max_hits > 0:
        keep &= rank < max_hits
    order, rd, rank = order[keep], rd[keep], rank[keep]
    nh = np.bincount(rd, minlength=n_reads)
    unmapped = np.flatnonzero(nh == 0)
    all_read = np.concatenate([rd, unmapped])
    loc = np.concatenate([order, np.full(unmapped.size, -1)])
    is_prim = np.concatenate([rank == 0, np.ones(unmapped.size, dtype=bool)])
    out = np.argsort(all_read, kind="stable")
    all_read, loc, is_prim = all_read[out], loc[out], is_prim[out]

    mate = all_read ^ 1
    mate_loc = chosen[mate]
    mapped = loc >= 0
    has_mate = mate_loc >= 0
    rev_at = np.append(rev, False)  # rev_at[-1]: no location (a batch may have none at all)
    flag = FLAG_PAIRED | np.where(all_read % 2 == 0, FLAG_FIRST, FLAG_LAST)
    flag |= np.where(mapped, np.where(rev_at[loc], FLAG_REVERSE, 0), FLAG_UNMAPPED)
    flag |= np.where(is_prim, 0, FLAG_SECONDARY)
    flag |= np.where(has_mate, np.where(rev_at[mate_loc], FLAG_MATE_REVERSE, 0), FLAG_MATE_UNMAPPED)
    flag |= np.where(is_prim & mapped & proper[all_read >> 1], FLAG_PROPER, 0)

    tlen = np.zeros(all_read.size, dtype=np.int64)
    both = is_prim & mapped & has_mate
    li, mi = loc[both], mate_loc[both]
    same = ref_id[li] == ref_id[mi]
    span = np.maximum(end[li], end[mi]) - np.minimum(start[li], start[mi])
    leftmost = (start[li] < start[mi]) | ((start[li] == start[mi]) & (all_read[both] % 2 == 0))
    tlen[both] = np.where(same, np.where(leftmost, span, -span), 0)
    return PairRecords(
        read=all_read, loc=loc, flag=flag.astype(np.int64),
        mapq=np.where(is_prim & mapped, mapq[all_read], 0).astype(np.int64),
        nh=nh[all_read].astype(np.int64), mate_loc=mate_loc.astype(np.int64),
        mate_mapq=mapq[mate].astype(np.int64), tlen=tlen)
