"""O(c, i) of the FM index's occurrence tables (index/fm.py has their layout): the one rank function that the
index build (merging the BWTs of blocks, index/fm_blocks.py) and the search (filter/fm_search.py) share."""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.index.fm_layout import BLOCK_SHIFT, COUNTS_AT, SUPER_SHIFT

M1 = np.uint64(0x5555555555555555)
M2 = np.uint64(0x3333333333333333)
M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
H01 = np.uint64(0x0101010101010101)
ONE = np.uint64(1)
ZERO = np.uint64(0)


@njit(cache=True, nogil=True, inline="always")
def popcount(x: np.uint64) -> np.int64:
    x = x - ((x >> ONE) & M1)
    x = (x & M2) + ((x >> np.uint64(2)) & M2)
    x = (x + (x >> np.uint64(4))) & M4
    return np.int64((x * H01) >> np.uint64(56))


@njit(cache=True, nogil=True, inline="always")
def block_row(i: int) -> int:
    """The occ table row of the block holding row i (a superblock's row comes before its blocks')."""
    w = i >> BLOCK_SHIFT
    return w + (w >> SUPER_SHIFT) + 1


@njit(cache=True, nogil=True, inline="always")
def super_row(i: int) -> int:
    """The occ table row of the superblock holding row i (each superblock's row, then its blocks')."""
    return (i >> (BLOCK_SHIFT + SUPER_SHIFT)) * ((1 << SUPER_SHIFT) + 1)


@njit(cache=True, nogil=True, inline="always")
def _plane(occ_tab: np.ndarray, r: int, k: int, half: int, code: int) -> np.uint64:
    """Bit plane k of block row r (its first or second 64 rows), inverted where bit k of code is 0: its set
    bits are rows agreeing with code."""
    p = occ_tab[r, 2 * k + half]
    return p if (code >> k) & 1 else ~p


@njit(cache=True, nogil=True, inline="always")
def _agree(occ_tab: np.ndarray, r: int, half: int, code: int) -> np.uint64:
    """The rows of one half of block row r whose code is `code`."""
    return _plane(occ_tab, r, 0, half, code) & _plane(occ_tab, r, 1, half, code) & _plane(occ_tab, r, 2, half, code)


@njit(cache=True, nogil=True, inline="always")
def occ(occ_tab: np.ndarray, c: int, i: int) -> int:
    """O(c, i): occurrences of symbol c in B[0..i) (index/fm.py: the superblock's count, the block's 16-bit
    count, then the block's rows below i whose three code bit planes spell c + 1)."""
    r = block_row(i)
    code = c + 1
    before = occ_tab[super_row(i), c]
    before += (occ_tab[r, COUNTS_AT + (c >> 2)] >> np.uint64(16 * (c & 3))) & np.uint64(0xFFFF)
    below = (ONE << np.uint64(i & 63)) - ONE
    second = ZERO - np.uint64((i >> 6) & 1)  # all ones when i is in the block's second half (no branch: random)
    return (np.int64(before) + popcount(_agree(occ_tab, r, 0, code) & (below | second))
            + popcount(_agree(occ_tab, r, 1, code) & (below & second)))
