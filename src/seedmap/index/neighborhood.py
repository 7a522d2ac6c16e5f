"""Tran's neighborhood index in the reduced structure.

Every reference position p whose base is not N contributes the word ref[p : p + u + l): a seed of
length u and its right neighborhood of length l (N or the end of the sequence read as A; the verifier
rejects the rare false candidates this makes). Words are sorted and grouped:

    seed_start[a] .. seed_start[a + 1]   unique neighborhoods of seed address a (`nbs`, sorted)
    nb_pos[k] .. nb_pos[k + 1]           positions (`pos`, ascending) of unique neighborhood k

Seed addresses are big-endian (first base most significant, unlike Tran's little-endian addr), so
that all words sharing any prefix form one contiguous range: a window shorter than u + l is still one
range lookup. That is what lets every read length keep the full-sensitivity guarantee.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from seedmap.io.reference import Reference

DEFAULT_SEED_LENGTH = 10
DEFAULT_NEIGHBORHOOD_LENGTH = 16
MAX_SEED_LENGTH = 13
MAX_NEIGHBORHOOD_LENGTH = 16


@dataclass
class NeighborhoodIndex:
    u: int
    l: int
    seed_start: np.ndarray  # int64, 4^u + 1, index into nbs
    nbs: np.ndarray  # uint32 unique neighborhoods, sorted within each seed block
    nb_pos: np.ndarray  # int64, len(nbs) + 1, index into pos
    pos: np.ndarray  # uint32 or int64 reference positions

    @property
    def word(self) -> int:
        return self.u + self.l

    def arrays(self) -> dict[str, np.ndarray]:
        return {"seed_start": self.seed_start, "nbs": self.nbs, "nb_pos": self.nb_pos, "pos": self.pos}


def check_parameters(u: int, l: int) -> None:
    from seedmap.errors import SeedmapError

    if not 1 <= u <= MAX_SEED_LENGTH:
        raise SeedmapError(f"seed length must be 1..{MAX_SEED_LENGTH}, got {u}")
    if not 0 <= l <= MAX_NEIGHBORHOOD_LENGTH:
        raise SeedmapError(f"neighborhood length must be 0..{MAX_NEIGHBORHOOD_LENGTH}, got {l}")


def build(ref: Reference, u: int = DEFAULT_SEED_LENGTH, l: int = DEFAULT_NEIGHBORHOOD_LENGTH) -> NeighborhoodIndex:
    check_parameters(u, l)
    codes = ref.codes()
    keys, pos = _words(codes, ref.starts, u + l, np.uint32 if ref.total < 2**32 else np.int64)
    keys, pos = _radix_sort(keys, pos, 2 * (u + l))
    first = np.empty(keys.size, dtype=bool)
    first[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    unique = keys[first]
    nb_pos = np.append(np.flatnonzero(first), keys.size).astype(np.int64)
    nbs = (unique & np.uint64((1 << (2 * l)) - 1)).astype(np.uint32)
    seeds = (unique >> np.uint64(2 * l)).astype(np.int64)
    seed_start = np.zeros(4**u + 1, dtype=np.int64)
    np.cumsum(np.bincount(seeds, minlength=4**u), out=seed_start[1:])
    return NeighborhoodIndex(u, l, seed_start, nbs, nb_pos, pos)


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
