"""ASCII fields written into byte buffers by numba kernels: integers, and the CIGAR operation letters (SAM
records; MD strings in verify/align.py)."""

from __future__ import annotations

import numpy as np
from numba import njit

CIGAR_CHARS = np.frombuffer(b"MID", dtype=np.uint8)  # indexed by verify.align's OP_M, OP_I, OP_D


@njit(cache=True, nogil=True)
def write_int(buf: np.ndarray, p: int, value: int) -> int:
    """`value` (>= 0) in decimal at buf[p:]; returns the position after it."""
    if value == 0:
        buf[p] = 48
        return p + 1
    digits = 0
    v = value
    while v > 0:
        digits += 1
        v //= 10
    for k in range(digits - 1, -1, -1):
        buf[p + k] = 48 + value % 10
        value //= 10
    return p + digits
