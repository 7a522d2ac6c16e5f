"""sort_windows: every branch (insertion, argsort, radix) sorts a query's windows by start and keeps them
whole, and merging gives the same rows whatever the order of equal starts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.filter.windows import RADIX_FROM, _radix_windows, merge_one, sort_windows


def _windows(seed: int, n: int, span: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    wd = rng.integers(0, span, n).astype(np.int64) + 7
    ws = np.maximum(wd - 5, 0)
    we = wd + rng.integers(90, 120, n)  # ends differ among equal starts: order matters to the triples
    return ws, we, wd


def _merged(ws: np.ndarray, we: np.ndarray, wd: np.ndarray) -> np.ndarray:
    out = np.empty((ws.size, 4), dtype=np.int64)
    return out[:merge_one(ws, we, wd, out, True)]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 5, 33, 200, RADIX_FROM - 1, RADIX_FROM, 1000, 5000]),
       st.sampled_from([1, 50, 3000, 250_000_000, 2**40]))
def test_every_branch_sorts_by_start_and_keeps_the_windows(seed, n, span):
    ws, we, wd = _windows(seed, n, span)
    a, b, c = ws.copy(), we.copy(), wd.copy()
    sort_windows(a, b, c)
    assert np.all(np.diff(a) >= 0)
    got = sorted(zip(a.tolist(), b.tolist(), c.tolist(), strict=True))
    assert got == sorted(zip(ws.tolist(), we.tolist(), wd.tolist(), strict=True))
    order = np.argsort(ws, kind="stable")
    assert np.array_equal(_merged(a, b, c), _merged(ws[order], we[order], wd[order]))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3000), st.sampled_from([1, 40, 2**33]), st.booleans())
def test_radix_sort_orders_equal_starts_by_diagonal_or_keeps_them(seed, n, span, wide):
    """Windows whose diagonal offsets and lengths fit a key beside the start come out by (start, diagonal, end);
    others (`wide`: lengths too varied, or a start span that leaves no room) keep equal starts in their order."""
    ws, we, wd = _windows(seed, n, span)
    if wide:
        we = wd + np.random.default_rng(seed).integers(1, 1 << 14, n)
    a, b, c = ws.copy(), we.copy(), wd.copy()
    _radix_windows(a, b, c)
    order = np.argsort(ws, kind="stable") if wide else np.lexsort((we, wd, ws))
    assert np.array_equal(a, ws[order]) and np.array_equal(b, we[order]) and np.array_equal(c, wd[order])
