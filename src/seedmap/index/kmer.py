"""The k-mer hash index of mrFAST (Nouri's host mapper): a CSR table over all 4^k k-mers.

offsets[c] .. offsets[c + 1] are the positions (ascending) of k-mer code c (big-endian 2-bit). Words
follow index/words.py: positions whose base is N are skipped, and N or the sequence end inside a k-mer
reads as A, so a query shorter than k is one contiguous range of codes and stays complete.

Built by a counting sort straight from the packed reference: one pass counts each k-mer code into the
offsets table, a prefix sum turns the counts into bucket starts, and a second pass drops the positions
into their buckets in ascending order. Peak: the positions (4 B/base) plus the 4^k table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from seedmap.errors import SeedmapError
from seedmap.index.words import count_bases
from seedmap.io.reference import Reference

DEFAULT_K = 12
MAX_K = 14


@dataclass
class KmerIndex:
    k: int
    offsets: np.ndarray  # uint32 (int64 for > 4 G positions), 4^k + 1
    pos: np.ndarray  # uint32 or int64 reference positions

    def arrays(self) -> dict[str, np.ndarray]:
        return {"offsets": self.offsets, "pos": self.pos}


@dataclass(frozen=True)
class KmerParams:
    """A k-mer index's parameters: the k-mer length k (it has no genome segments)."""

    k: int

    @property
    def segments(self) -> tuple[int, ...]:
        return ()


def default_params() -> KmerParams:
    return KmerParams(DEFAULT_K)


def check_parameters(k: int) -> KmerParams:
    """The parameters of a k-mer index of k-mer length k (a clear error when k is out of range)."""
    if not 1 <= k <= MAX_K:
        raise SeedmapError(f"k-mer length must be 1..{MAX_K}, got {k}")
    return KmerParams(k)


def build(ref: Reference, k: int = DEFAULT_K) -> KmerIndex:
    check_parameters(k)
    n_valid = count_bases(ref.nmask, 0, ref.total)  # positions whose base is not N
    offsets = np.zeros(4**k + 1, dtype=np.uint32 if n_valid < 2**32 else np.int64)
    pos = np.empty(n_valid, dtype=np.uint32 if ref.total < 2**32 else np.int64)
    starts = np.asarray(ref.starts, dtype=np.int64)
    _words_pass(ref.packed, ref.nmask, starts, k, offsets, pos, False)  # counts at [key + 1]
    _starts_from_counts(offsets)
    _words_pass(ref.packed, ref.nmask, starts, k, offsets, pos, True)
    _shift_right(offsets)
    return KmerIndex(k, offsets, pos)


_BLOCK = 4096  # words collected before their table updates: those loops then overlap their cache misses


@njit(cache=True, nogil=True)
def _words_pass(packed: np.ndarray, nmask: np.ndarray, starts: np.ndarray, k: int, offsets: np.ndarray,
                pos: np.ndarray, fill: bool) -> None:
    """Every word of index/words.py (each non-N position; N or past the sequence end reads as A), in
    position order. Counting (fill false): offsets[key + 1] += 1. Filling: the position goes to its
    bucket's cursor offsets[key], which moves on, so afterwards offsets[c] is the end of bucket c."""
    mask = (1 << (2 * k)) - 1
    top = k - 1
    run_mask = (1 << k) - 1
    keys = np.empty(_BLOCK, dtype=np.int64)
    where = np.empty(_BLOCK, dtype=np.int64)
    held = 0
    for s in range(starts.size - 1):
        begin, end = starts[s], starts[s + 1]
        key = 0
        n_run = 0  # bit j: base q - j is N (bit k - 1 is the word's first base)
        # q walks k - 1 past the end so that the last positions get words padded with A.
        for q in range(begin, end + k - 1):
            is_n = 0
            c = 0
            if q < end:
                is_n = (nmask[q >> 3] >> (q & 7)) & 1
                c = ((packed[q >> 2] >> ((q & 3) << 1)) & 3) * (1 - is_n)
            key = ((key << 2) | c) & mask
            n_run = ((n_run << 1) | is_n) & run_mask
            p = q - top
            if p >= begin and not (n_run >> top) & 1:
                keys[held] = key
                where[held] = p
                held += 1
                if held == _BLOCK:
                    _flush(keys, where, held, offsets, pos, fill)
                    held = 0
    _flush(keys, where, held, offsets, pos, fill)


@njit(cache=True, nogil=True)
def _flush(keys: np.ndarray, where: np.ndarray, held: int, offsets: np.ndarray, pos: np.ndarray, fill: bool) -> None:
    if fill:
        for i in range(held):
            j = offsets[keys[i]]
            pos[j] = where[i]
            offsets[keys[i]] = j + 1
    else:
        for i in range(held):
            offsets[keys[i] + 1] += 1


@njit(cache=True, nogil=True)
def _starts_from_counts(offsets: np.ndarray) -> None:
    """Counts at [c + 1] -> bucket starts at [c] (offsets[0] = 0)."""
    for c in range(1, offsets.size):
        offsets[c] += offsets[c - 1]


@njit(cache=True, nogil=True)
def _shift_right(offsets: np.ndarray) -> None:
    """Bucket ends at [c] -> bucket starts at [c] (the end of c is the start of c + 1)."""
    for c in range(offsets.size - 1, 0, -1):
        offsets[c] = offsets[c - 1]
    offsets[0] = 0
