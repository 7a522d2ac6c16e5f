"""The glue kernels that replaced numpy's repeat and fancy indexing (which hold the GIL) against numpy itself."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.ranges import expand_ranges, gather_ranges, put
from seedmap.records import _rank_within, _record_order, best_locations


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 6)), max_size=40))
def test_expand_ranges_is_repeat_arithmetic(ranges):
    start = np.array([a for a, _ in ranges], dtype=np.int64)
    length = np.array([n for _, n in ranges], dtype=np.int64)
    index, of = expand_ranges(start, length)
    want_of = np.repeat(np.arange(length.size), length)
    want_index = start[want_of] + np.arange(want_of.size) - np.repeat(np.cumsum(length) - length, length)
    assert np.array_equal(of, want_of) and np.array_equal(index, want_index)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=30), st.data())
def test_gather_ranges_is_concatenated_slices(lengths, data):
    off = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    values = np.arange(off[-1], dtype=np.uint8)
    which = np.array(data.draw(st.lists(st.integers(0, len(lengths) - 1), max_size=20)), dtype=np.int64)
    out, out_off = gather_ranges(values, off, which)
    parts = [values[off[w]:off[w + 1]] for w in which]
    assert out.tolist() == [int(x) for p in parts for x in p]
    assert out_off.tolist() == np.cumsum([0] + [p.size for p in parts]).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=60))
def test_rank_within_counts_up_in_each_run(values):
    groups = np.sort(np.array(values, dtype=np.int64))
    rank = _rank_within(groups)
    for i in range(groups.size):
        first = int(np.searchsorted(groups, groups[i]))
        assert rank[i] == i - first


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1), st.integers(0, 40), st.integers(0, 3)), max_size=120),
       st.integers(0, 2))
def test_record_order_is_lexsort(locs, extra_reads):
    """The records' order (records.py): by read, distance, start, strand, equal keys in input order, as
    np.lexsort gives it; reads with many locations (merge sort) and few (insertion) alike; with a location
    put first per read (a pair's chosen one), as an extra key after read."""
    read = np.array([r for r, _, _, _ in locs], dtype=np.int64)
    strand = np.array([t for _, t, _, _ in locs], dtype=np.int64)
    start = np.array([s * 1_000_003 for _, _, s, _ in locs], dtype=np.int64)
    dist = np.array([d for _, _, _, d in locs], dtype=np.int32)
    n_reads = 6 + extra_reads
    got = _record_order(n_reads, read, strand, start, dist, np.zeros(0, dtype=np.int64))
    assert np.array_equal(got, np.lexsort((strand, start, dist, read)))
    first = np.full(n_reads, -1, dtype=np.int64)
    for r in range(0, n_reads, 2):  # every other read has one (its last location)
        mine = np.flatnonzero(read == r)
        first[r] = mine[-1] if mine.size else -1
    got = _record_order(n_reads, read, strand, start, dist, first)
    assert np.array_equal(got, np.lexsort((strand, start, dist, np.arange(read.size) != first[read], read)))
    order = np.lexsort((strand, start, dist, read))  # a pair's reads' single-end primaries: the first of each
    leads = order[np.r_[True, read[order][1:] != read[order][:-1]]] if order.size else order
    want = np.full(n_reads, -1)
    want[read[leads]] = leads
    assert np.array_equal(best_locations(n_reads, read, strand, start, dist), want)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20))
def test_put_is_slice_assignment(size, at, n):
    at, n = min(at, size), min(n, size - min(at, size))
    dst = np.arange(size, dtype=np.int64)
    src = np.arange(100, 100 + n, dtype=np.int64)
    want = dst.copy()
    want[at:at + n] = src
    put(dst, at, src)
    assert np.array_equal(dst, want)
