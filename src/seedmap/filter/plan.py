"""Window plans: where on a read the windows (seed + neighborhood) are taken, and what they guarantee.

Pigeonhole: an alignment with at most e edits touches at most e of any set of pairwise disjoint read
windows (each substitution or insertion lies in one window, a deletion between two read bases touches at
most one). So with e + 1 disjoint windows one window matches the reference exactly: looking every window
up exactly finds every location. Windows are as long as the index allows (u + l) but no longer than
m // (e + 1); a window shorter than u is still a single range lookup in the big-endian index.

`fe` substitutions allowed in a window's neighborhood part add no guarantee: the seed part (u bases) is
looked up exactly, so one substitution in each seed defeats any plan with fewer than e + 1 windows
(k (fe + 1) >= e + 1 is not enough). Such plans find more, not everything, and seedmap warns.
"""

from __future__ import annotations

import numpy as np
from numba import njit

FULL = "full"
SUBSTITUTIONS_ONLY = "substitutions-only"
NONE = "none"


@njit(cache=True, nogil=True)
def window_plan(m: int, e: int, lmax: int, windows: int, step: int) -> tuple[int, np.ndarray]:
    """(window length, window offsets) for a read of length m. windows = 0 means e + 1."""
    k = windows if windows > 0 else e + 1
    length = min(lmax, m // k)
    if length <= 0:
        return 0, np.zeros(0, dtype=np.int64)
    if step > 0:
        return length, np.arange(0, m - length + 1, step).astype(np.int64)
    offsets = np.empty(k, dtype=np.int64)
    slack = m - k * length
    for i in range(k):
        # Spread the slack between windows; they stay disjoint.
        offsets[i] = i * length + (slack * i // (k - 1) if k > 1 else slack // 2)
    return length, offsets


def max_disjoint(offsets: np.ndarray, length: int) -> int:
    """Largest number of pairwise disjoint windows among those given (greedy by start)."""
    count, end = 0, -1
    for off in np.sort(offsets):
        if off >= end:
            count += 1
            end = off + length
    return count


def guarantee(m: int, e: int, lmax: int, windows: int, step: int, fe: int) -> str:
    """What the plan guarantees for reads of length m with up to e edits."""
    if m <= e:
        return NONE
    length, offsets = window_plan(m, e, lmax, windows, step)
    if length == 0:
        return NONE
    disjoint = max_disjoint(offsets, length)
    if disjoint >= e + 1:
        return FULL
    return NONE  # (fe does not help: see the module docstring; SUBSTITUTIONS_ONLY is never claimed)
