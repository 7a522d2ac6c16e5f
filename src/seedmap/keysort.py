"""A stable argsort for kernels. numpy's argsort inside a kernel brings numba's quicksort or mergesort
implementation, ~1-2 s of every first compile of each kernel that holds one (issue 35's first run); this
insertion-sorts short runs, then merges them bottom-up, and compiles in a fraction of that."""

from __future__ import annotations

import numpy as np
from numba import njit

RUN = 16  # runs this short are insertion-sorted before the merges


@njit(cache=True, nogil=True)
def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """np.argsort(keys, kind="stable"): the order by key, equal keys in their input order."""
    n = keys.size
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = i
    for lo in range(0, n, RUN):
        for a in range(lo + 1, min(lo + RUN, n)):
            x = order[a]
            b = a - 1
            while b >= lo and keys[order[b]] > keys[x]:
                order[b + 1] = order[b]
                b -= 1
            order[b + 1] = x
    src, dst = order, np.empty(n, dtype=np.int64)
    width = RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):  # the left run's element first on equal keys: stable
                if j >= hi or (i < mid and keys[src[i]] <= keys[src[j]]):
                    dst[k] = src[i]
                    i += 1
                else:
                    dst[k] = src[j]
                    j += 1
        src, dst = dst, src
        width *= 2
    return src
