"""Index arithmetic of the workers' glue as nogil kernels: numpy's repeat holds the GIL, which every
worker thread shares, so a batch's repeats made the threads wait for each other."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, _nrt=False)
def put(dst: np.ndarray, at: int, src: np.ndarray) -> None:
    """dst[at:at + src.size] = src, for kernels (the caller makes the room). A slice assignment in a kernel
    brings numba's shape check, whose error message (str, repr, unicode) took 2.5-3 s of every first
    compile of each kernel that held one."""
    for i in range(src.size):
        dst[at + i] = src[i]


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


@njit(cache=True, nogil=True)
def gather_ranges(data: np.ndarray, off: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """data[off[w]:off[w + 1]] of each w in `which`, one after another, and where each starts (then the end).
    (numpy's repeat-and-index held the GIL: a third of a --best round's glue on 200k reads.)"""
    out_off = np.zeros(which.size + 1, dtype=np.int64)
    for k in range(which.size):
        out_off[k + 1] = out_off[k] + off[which[k] + 1] - off[which[k]]
    out = np.empty(out_off[-1], dtype=data.dtype)
    for k in range(which.size):
        a = off[which[k]]
        put(out, out_off[k], data[a:a + out_off[k + 1] - out_off[k]])
    return out, out_off
