"""A lookup's seed block in the big-endian neighborhood index (contiguous or spaced seed)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, _nrt=False)
def seed_key(q: np.ndarray, o: int, length: int, care: np.ndarray) -> tuple[int, int, int]:
    """(a0, a1, r): the lookup q[o:o+length]'s seed block is [seed_start[a0], seed_start[a1]) and its
    neighborhood length is r (r = -1: the seed holds an N, which never matches). A lookup shorter than the
    seed's span takes the care positions inside it as a key prefix: one contiguous range of the big-endian
    index. Reads no index, so the block can be prefetched before it is opened."""
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
    return a << shift, (a + 1) << shift, max(length - span, 0)


@njit(cache=True, nogil=True, _nrt=False)
def seed_block(q: np.ndarray, o: int, length: int, care: np.ndarray, seed_start: np.ndarray) -> tuple[int, int, int]:
    """(first, last) unique neighborhoods of the lookup q[o:o+length]'s seed, and its neighborhood length r
    (-1: the seed holds an N, which never matches); see seed_key."""
    a0, a1, r = seed_key(q, o, length, care)
    if r < 0:
        return 0, 0, -1
    return seed_start[a0], seed_start[a1], r
