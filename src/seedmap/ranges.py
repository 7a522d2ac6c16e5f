"""Index arithmetic of the workers' glue as nogil kernels: numpy's repeat holds the GIL, which every
worker thread shares, so a batch's repeats made the threads wait for each other."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def expand_ranges(start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every index of the ranges [start[w], start[w] + length[w]), in order, and the range w of each."""
    n = 0
    for w in range(length.size):
        n += length[w]
    index = np.empty(n, dtype=np.int64)
    of = np.empty(n, dtype=np.int64)
    t = 0
    for w in range(length.size):
        for i in range(length[w]):
            index[t] = start[w] + i
            of[t] = w
            t += 1
    return index, of
