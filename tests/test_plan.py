"""plan_window, the window plan one window at a time (what each GPU thread computes, the same code on the
device), gives exactly window_plan's windows, and none past them."""

from __future__ import annotations

import pytest

from seedmap.filter.plan import plan_window, window_plan


@pytest.mark.parametrize("step", [0, 1, 3, 7])
@pytest.mark.parametrize("windows", [0, 1, 2, 5])
def test_plan_window_equals_window_plan(windows, step):
    for m in (0, 1, 5, 17, 40, 101, 150):
        for e in (0, 1, 3, 6):
            for lmax in (4, 12, 26):
                length, offsets = window_plan(m, e, lmax, windows, step)
                for w in range(offsets.size + 3):
                    got = plan_window(m, e, lmax, windows, step, w)
                    want = (length, int(offsets[w])) if w < offsets.size else (length, -1)
                    assert got == want, (m, e, lmax, windows, step, w)
