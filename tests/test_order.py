"""lex_order against np.lexsort itself: the same permutation (ties included: both are stable), whether the keys
pack into one int64 or not (negative or wide keys fall back to lexsort)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.order import lex_order

VALUES = st.one_of(st.integers(0, 3), st.integers(0, 1 << 30), st.integers(-5, 5), st.integers(0, 1 << 62))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4), st.lists(st.tuples(VALUES, VALUES, VALUES, VALUES), max_size=50), st.sampled_from(
    [np.int64, np.int32, np.uint32]))
def test_lex_order_is_lexsort(n_keys, rows, dtype):
    keys = [np.array([r[k] for r in rows], dtype=np.int64) for k in range(n_keys)]
    if dtype is not np.int64:
        keys = [k.astype(dtype) for k in keys]  # wraps: small types see other values, negatives as large ones
    assert np.array_equal(lex_order(*keys), np.lexsort(keys[::-1]))


def test_lex_order_packs_and_keeps_ties_in_order():
    q = np.array([3, 1, 3, 1, 0, 3], dtype=np.int64)
    s = np.array([7, 9, 7, 2, 5, 1], dtype=np.int64)
    assert lex_order(q, s).tolist() == [4, 3, 1, 5, 0, 2]
    assert lex_order(np.zeros(0, dtype=np.int64)).size == 0
