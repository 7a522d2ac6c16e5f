"""The read and the reference as 2-bit codes packed 32 to a 64-bit word (base i at bits 2 (i % 32)), so that the
verifiers of --best's cheap rounds (e <= 1) compare 32 bases at a time."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def ref_word(packed: np.ndarray, p: int) -> np.uint64:
    """The 32 reference codes from base p on as one word, base p + j at bits 2j (the packed layout; bytes past
    the end read as 0). N is not seen here: the caller checks the N mask."""
    b = p >> 2
    lo = np.uint64(0)
    hi = np.uint64(0)
    if b + 9 <= packed.size:  # (a fixed count of byte loads: the compiler makes them one load)
        for i in range(8):
            lo |= np.uint64(packed[b + i]) << np.uint64(8 * i)
        hi = np.uint64(packed[b + 8])
    else:
        for i in range(min(8, packed.size - b)):
            lo |= np.uint64(packed[b + i]) << np.uint64(8 * i)
    s = np.uint64(2 * (p & 3))
    if s == 0:
        return lo
    return (lo >> s) | (hi << (np.uint64(64) - s))


@njit(cache=True, nogil=True, inline="always")
def pack_read(q: np.ndarray, words: np.ndarray) -> bool:
    """q's codes in words[:(len(q) + 31) // 32] (32 a word, base i at bits 2 (i % 32) of word i // 32, the last
    word's rest 0); False if q holds an N, which never matches."""
    m = q.size
    for k in range((m + 31) >> 5):
        w = np.uint64(0)  # in a register: or-ing into words[k] base by base waits on each store
        for i in range(k << 5, min(m, (k + 1) << 5)):
            if q[i] > 3:
                return False
            w |= np.uint64(q[i]) << np.uint64(2 * (i & 31))
        words[k] = w
    return True
