"""keysort.stable_argsort against numpy's stable argsort."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.keysort import RUN, stable_argsort


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-5, 5), max_size=5 * RUN), st.booleans())
def test_same_order_as_numpy_stable(values, wide):
    keys = np.array(values, dtype=np.int64) * (1 << 40 if wide else 1)  # few distinct keys: many ties
    np.testing.assert_array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))


def test_long_random_and_sorted_inputs():
    rng = np.random.default_rng(7)
    for keys in (rng.integers(0, 1000, 10_000), np.arange(5000)[::-1].copy(), np.zeros(3000, np.int64),
                 rng.integers(0, 1 << 50, 777).astype(np.int64)):
        np.testing.assert_array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))
