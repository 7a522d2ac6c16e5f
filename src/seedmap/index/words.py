"""Words of a reference: the k bases starting at every position, as 2-bit big-endian keys, sorted.

Every position whose base is not N gets a word; bases that are N or beyond the end of the sequence are
read as A. So an N-free query of any length <= k finds every position it matches with one contiguous
range lookup (short windows stay complete); the padded words only add rare false candidates, which
verification rejects. Positions whose base is N are never indexed (N never matches).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.io.reference import Reference, ref_code, sequence_of


def sorted_words(ref: Reference, k: int, first: int = 0, last: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(keys, positions) of the words starting at positions [first, last) (default: all), sorted by key,
    positions ascending within a key."""
    keys, pos = range_words(ref, k, first, ref.total if last is None else last)
    return radix_sort(keys, pos, 2 * k)


def position_dtype(ref: Reference) -> type:
    return np.uint32 if ref.total < 2**32 else np.int64


def range_words(ref: Reference, k: int, first: int, last: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, positions) of the words starting at positions [first, last), in position order. Read from
    the packed reference: no whole-genome code array (a genome segment costs its own words only)."""
    n_valid = count_bases(ref.nmask, first, last)
    keys = np.empty(n_valid, dtype=np.uint64)
    pos = np.empty(n_valid, dtype=position_dtype(ref))
    _fill_range_words(ref.packed, ref.nmask, np.asarray(ref.starts, dtype=np.int64), k, first, last, keys, pos)
    return keys, pos


@njit(cache=True, nogil=True)
def count_bases(nmask: np.ndarray, first: int, last: int) -> int:
    """Positions in [first, last) whose base is not N (mask bits outside the range, such as the pad bits of
    the last byte, are not read)."""
    n_count = 0
    i = first
    while i < last and i & 7:
        n_count += (nmask[i >> 3] >> (i & 7)) & 1
        i += 1
    while i + 8 <= last:  # whole bytes: clear the lowest set bit until none is left
        b = nmask[i >> 3]
        while b:
            b &= b - np.uint8(1)
            n_count += 1
        i += 8
    while i < last:
        n_count += (nmask[i >> 3] >> (i & 7)) & 1
        i += 1
    return (last - first) - n_count


@njit(cache=True, nogil=True)
def _fill_range_words(packed: np.ndarray, nmask: np.ndarray, starts: np.ndarray, k: int, first: int, last: int,
                      keys: np.ndarray, pos: np.ndarray) -> None:
    mask = (np.uint64(1) << np.uint64(2 * k)) - np.uint64(1)
    out = 0
    s = max(sequence_of(starts, first), 0)
    while s < starts.size - 1 and starts[s] < last:
        begin, end = max(starts[s], first), starts[s + 1]
        stop = min(end, last)
        key = np.uint64(0)
        # q walks k - 1 past the last word's start: words reach into the next segment's bases, and the
        # sequence's last positions get words padded with A.
        for q in range(begin, stop + k - 1):
            c = 0
            if q < end:
                c = ref_code(packed, nmask, q)
                if c == 4:
                    c = 0
            key = ((key << np.uint64(2)) | np.uint64(c)) & mask
            p = q - k + 1
            if p >= begin and p < stop and not (nmask[p >> 3] >> (p & 7)) & 1:
                keys[out] = key
                pos[out] = p
                out += 1
        s += 1


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


def radix_sort(keys: np.ndarray, pos: np.ndarray, key_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Stable LSD radix sort by key; positions come in ascending order, so ties stay ascending."""
    bits = 11
    k2, p2 = np.empty_like(keys), np.empty_like(pos)
    for shift in range(0, max(key_bits, 1), bits):
        _radix_pass(keys, pos, shift, min(bits, key_bits - shift), k2, p2)
        keys, k2 = k2, keys
        pos, p2 = p2, pos
    return keys, pos
