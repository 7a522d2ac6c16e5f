"""The glue kernels that replaced numpy's repeat (which holds the GIL) against numpy itself."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.ranges import expand_ranges
from seedmap.records import _rank_within


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
@given(st.lists(st.integers(0, 5), max_size=60))
def test_rank_within_counts_up_in_each_run(values):
    groups = np.sort(np.array(values, dtype=np.int64))
    rank = _rank_within(groups)
    for i in range(groups.size):
        first = int(np.searchsorted(groups, groups[i]))
        assert rank[i] == i - first
