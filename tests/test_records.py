"""Records (records.py, mapq.py: kernels) against the plain numpy they replaced, kept here as the
reference: order, primary and secondary flags, NH, MAPQ and unmapped reads for random locations, ties
and repeats included, all-mapping, --best, -n and --strata, with and without the edits searched per read."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.flags import FLAG_REVERSE, FLAG_SECONDARY, FLAG_UNMAPPED
from seedmap.mapq import EDIT_RATIO, MAPQ_STRATA, MAX_MAPQ, UNSEEN_WEIGHT
from seedmap.records import make_records


def numpy_mapq(read, dist, rank, edits, searched, n_reads):
    """Locations within MAPQ_STRATA of the best counted; the virtual location at e + 1 where the search reached
    them, else just beyond the strata searched."""
    best = np.zeros(n_reads, dtype=np.int64)
    first = rank == 0
    best[read[first]] = dist[first]
    delta = (dist - best[read]).astype(np.float64)
    counted = ~first & (delta <= MAPQ_STRATA)
    others = np.bincount(read[counted], weights=EDIT_RATIO ** delta[counted], minlength=n_reads)
    n_best = np.bincount(read[dist == best[read]], minlength=n_reads)
    prior = np.where(searched >= np.minimum(edits, best + MAPQ_STRATA), edits, searched)
    unseen = UNSEEN_WEIGHT * EDIT_RATIO ** (prior + 1 - best).astype(np.float64)
    rest = others + unseen
    with np.errstate(divide="ignore"):
        q = -10.0 * np.log10(rest / (1.0 + rest))
    mapq = np.minimum(MAX_MAPQ, np.floor(q + 0.5)).astype(np.int64)
    mapq[n_best > 1] = 0
    mapq[np.bincount(read, minlength=n_reads) == 0] = 0
    return mapq


def numpy_depth(n_reads, read, dist, rank, edits, best_only, max_hits, strata):
    """records.searched_depth by plain loops: `strata` = (beyond a unique best, beyond a tie)."""
    depth = edits.copy()
    for r in range(n_reads):
        mine = dist[read == r]
        if mine.size == 0:
            continue
        stop = int(edits[r])
        if max_hits > 0 and mine.size >= max_hits:
            stop = int(np.sort(mine)[max_hits - 1])
        if best_only:
            stop = int(mine.min())
        tie = np.count_nonzero(mine == mine.min()) > 1
        depth[r] = min(int(edits[r]), stop + strata[1 if tie else 0])
    return depth


def numpy_records(n_reads, loc_q, loc_s, loc_d, best_only, max_hits, edits=None, strata=(0, 0)):
    read = loc_q >> 1
    strand = loc_q & 1
    order = np.lexsort((strand, loc_s, loc_d, read))
    read, dist = read[order], loc_d[order]
    rank = np.array([i - int(np.searchsorted(read, read[i])) for i in range(read.size)], dtype=np.int64)
    if edits is None:
        edits = np.full(n_reads, int(dist.max(initial=0)), dtype=np.int64)
    searched = edits
    if best_only or max_hits > 0:
        searched = numpy_depth(n_reads, read, dist, rank, edits, best_only, max_hits, strata)
        inside = dist <= searched[read]
        order, read, dist, rank = order[inside], read[inside], dist[inside], rank[inside]
    se_mapq = numpy_mapq(read, dist, rank, edits, searched, n_reads)
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
    out = np.argsort(all_read, kind="stable")
    return (all_read[out], np.concatenate([order, np.full(unmapped.size, -1)])[out],
            np.concatenate([flag, np.full(unmapped.size, FLAG_UNMAPPED)])[out],
            np.concatenate([mapq, np.zeros(unmapped.size, dtype=np.int64)])[out],
            np.concatenate([nh[read], np.zeros(unmapped.size, dtype=np.int64)])[out])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 30), st.integers(0, 6)), max_size=80),
       st.integers(6, 9), st.booleans(), st.integers(0, 3),
       st.sampled_from([(0, 0), (1, 1), (2, 2), (2, 0), (1, 0)]), st.booleans())
def test_records_equal_the_numpy_reference(locs, n_reads, best_only, max_hits, strata, with_edits):
    locs = sorted((q, s) + (d,) for q, s, d in locs if q >> 1 < n_reads)  # ordered by query, then start
    loc_q = np.array([q for q, _, _ in locs], dtype=np.int64)
    loc_s = np.array([s * 7919 for _, s, _ in locs], dtype=np.int64)
    loc_d = np.array([d for _, _, d in locs], dtype=np.int32)
    edits = np.arange(n_reads, dtype=np.int64) % 4 + 5 if with_edits else None
    strata = strata if best_only or max_hits else (0, 0)
    got = make_records(n_reads, loc_q, loc_s, loc_d, best_only, max_hits, edits, strata)
    want = numpy_records(n_reads, loc_q, loc_s, loc_d, best_only, max_hits, edits, strata)
    for name, a, b in zip(("read", "loc", "flag", "mapq", "nh"), (got.read, got.loc, got.flag, got.mapq, got.nh),
                          want, strict=True):
        assert np.array_equal(a, b), name
        assert a.dtype == np.int64, name
