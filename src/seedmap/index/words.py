"""Words of a reference: the k bases starting at every position, as 2-bit big-endian keys, sorted.

Every position whose base is not N gets a word; bases that are N or beyond the end of the sequence are
read as A. So an N-free query of any length <= k finds every position it matches with one contiguous
range lookup (short windows stay complete); the padded words only add rare false candidates, which
verification rejects. Positions whose base is N are never indexed (N never matches).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.io.reference import Reference


def sorted_words(ref: Reference, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, positions) sorted by key, positions ascending within a key."""
    codes = ref.codes()
    keys, pos = _words(codes, ref.starts, k, np.uint32 if ref.total < 2**32 else np.int64)
    return _radix_sort(keys, pos, 2 * k)


def _words(codes: np.ndarray, starts: np.ndarray, k: int, pos_dtype: type) -> tuple[np.ndarray, np.ndarray]:
    n_valid = int(np.count_nonzero(codes < 4))
    keys = np.empty(n_valid, dtype=np.uint64)
    pos = np.empty(n_valid, dtype=pos_dtype)
    _fill_words(codes, starts, k, keys, pos)
    return keys, pos


@njit(cache=True, nogil=True)
def _fill_words(codes: np.ndarray, starts: np.ndarray, k: int, keys: np.ndarray, pos: np.ndarray) -> None:
    mask = (np.uint64(1) << np.uint64(2 * k)) - np.uint64(1)
    out = 0
    for s in range(starts.size - 1):
        begin, end = starts[s], starts[s + 1]
        key = np.uint64(0)
        # q walks k - 1 past the end so that the last positions get words padded with A.
        for q in range(begin, end + k - 1):
            c = 0
            if q < end and codes[q] < 4:
                c = codes[q]
            key = ((key << np.uint64(2)) | np.uint64(c)) & mask
            p = q - k + 1
            if p >= begin and codes[p] < 4:
                keys[out] = key
                pos[out] = p
                out += 1


@njit(cache=True, nogil=True)
def _radix_pass(keys: np.ndarray, pos: np.ndarray, shift: int, bits: int,
                out_keys: np.ndarray, out_pos: np.ndarray) -> None:
    nb = 1 << bits
    mask = np.uint64(nb - 1)
    count = np.zeros(nb + 1, dtype=np.int64)
    sh = np.uint64(shift)
    for i in range(keys.size):
        count[((keys[i] >> sh) & mask) + 1] += 1
    for b in range(nb):
        count[b + 1] += count[b]
    for i in range(keys.size):
        b = (keys[i] >> sh) & mask
        j = count[b]
        out_keys[j] = keys[i]
        out_pos[j] = pos[i]
        count[b] = j + 1


def _radix_sort(keys: np.ndarray, pos: np.ndarray, key_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable LSD radix sort by key; positions come in ascending order, so ties stay ascending."""
    bits = 11
    k2, p2 = np.empty_like(keys), np.empty_like(pos)
    for shift in range(0, max(key_bits, 1), bits):
        _radix_pass(keys, pos, shift, min(bits, key_bits - shift), k2, p2)
        keys, k2 = k2, keys
        pos, p2 = p2, pos
    return keys, pos
