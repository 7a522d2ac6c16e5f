"""A lookup's seed block in the big-endian neighborhood index (contiguous or spaced seed)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def seed_block(q: np.ndarray, o: int, length: int, care: np.ndarray, seed_start: np.ndarray) -> tuple[int, int, int]:
    """(first, last) unique neighborhoods of the lookup q[o:o+length]'s seed, and its neighborhood length r
    (-1: the seed holds an N, which never matches). A lookup shorter than the seed's span takes the care
    positions inside it as a key prefix: one contiguous range of the big-endian index."""
    u = care.size
    span = care[u - 1] + 1
    c = 0
    a = 0
    while c < u and care[c] < length:
        b = q[o + care[c]]
        if b > 3:
            return 0, 0, -1
        a = (a << 2) | b
        c += 1
    shift = 2 * (u - c)
    r = max(length - span, 0)
    return seed_start[a << shift], seed_start[(a + 1) << shift], r
