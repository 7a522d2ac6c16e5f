"""Pair records (paired/records.py, built by records.py's kernels) against the numpy they replaced, kept here
as the reference: mate order with the chosen location first, flags 1/2/8/16/32/64/128/256, NH, MAPQ, mate
fields and TLEN for random pair locations, chosen or not, proper or not, on one sequence or two, with
all-mapping, --best and -n."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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
from seedmap.paired.records import make_pair_records


def numpy_pair_records(n_reads, start, end, dist, rev, ref_id, read, chosen, proper, mapq, best_only, max_hits):
    idx = np.arange(read.size)
    not_chosen = idx != chosen[read]
    order = np.lexsort((rev, start, dist, not_chosen, read))
    rd = read[order]
    rank = np.array([i - int(np.searchsorted(rd, rd[i])) for i in range(rd.size)], dtype=np.int64)
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
    rev_at = np.append(rev, False)
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
    return (all_read, loc, flag, np.where(is_prim & mapped, mapq[all_read], 0), nh[all_read], mate_loc,
            mapq[mate], tlen)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 30), st.integers(0, 4), st.integers(0, 1),
                          st.integers(80, 120)), max_size=60),
       st.integers(1, 5), st.data(), st.booleans(), st.integers(0, 3))
def test_pair_records_equal_the_numpy_reference(locs, n_pairs, data, best_only, max_hits):
    n_reads = 2 * n_pairs
    locs = sorted(t for t in locs if t[0] < n_reads)  # by read, then start: as the pair stage sorts them
    read = np.array([t[0] for t in locs], dtype=np.int64)
    start = np.array([t[1] * 97 for t in locs], dtype=np.int64)  # ties on start, two sequences of 1,500
    end = start + np.array([t[4] for t in locs], dtype=np.int64)
    dist = np.array([t[2] for t in locs], dtype=np.int32)
    strand = np.array([t[3] for t in locs], dtype=np.int64)
    ref_id = (start >= 1500).astype(np.int64)
    chosen = np.full(n_reads, -1, dtype=np.int64)
    for r in range(n_reads):
        mine = np.flatnonzero(read == r)
        if mine.size and data.draw(st.integers(0, 5), label="chosen?"):  # mostly chosen, as the pairing does
            chosen[r] = mine[data.draw(st.integers(0, mine.size - 1), label="which")]
    proper = np.array(data.draw(st.lists(st.booleans(), min_size=n_pairs, max_size=n_pairs)), dtype=np.bool_)
    mapq = np.array(data.draw(st.lists(st.integers(0, 60), min_size=n_reads, max_size=n_reads)), dtype=np.int64)
    got = make_pair_records(n_reads, start, end, dist, strand, ref_id, read, chosen, proper, mapq, best_only,
                            max_hits)
    want = numpy_pair_records(n_reads, start, end, dist, strand.astype(np.bool_), ref_id, read, chosen, proper,
                              mapq, best_only, max_hits)
    for name, a, b in zip(got._fields[:len(want)], got, want, strict=False):  # (XS, XA: test_xs_xa.py)
        assert np.array_equal(a, b), name
        assert a.dtype == np.int64, name


def test_many_locations_keep_the_chosen_first():
    """A read with more locations than the insertion sort takes (records.SHORT) sorts them by key: its chosen
    location still leads, the others by distance, start and strand."""
    n = 40
    start = np.arange(n, dtype=np.int64)[::-1] * 10
    dist = (np.arange(n) % 3).astype(np.int32)
    read = np.zeros(n, dtype=np.int64)
    chosen = np.array([7, -1], dtype=np.int64)
    got = make_pair_records(2, start, start + 100, dist, np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                            read, chosen, np.array([False]), np.array([9, 0]), False, 0)
    want = numpy_pair_records(2, start, start + 100, dist, np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.int64),
                              read, chosen, np.array([False]), np.array([9, 0]), False, 0)
    assert got.loc[0] == 7 and got.mapq[0] == 9
    for name, a, b in zip(got._fields[:len(want)], got, want, strict=False):  # (XS, XA: test_xs_xa.py)
        assert np.array_equal(a, b), name
