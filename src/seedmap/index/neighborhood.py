"""Tran's neighborhood index in the reduced structure.

Every reference position p whose base is not N contributes the word ref[p : p + u + l): a seed of
length u and its right neighborhood of length l (N or the end of the sequence read as A; the verifier
rejects the rare false candidates this makes). Words are sorted and grouped:

    seed_start[a] .. seed_start[a + 1]   unique neighborhoods of seed address a (`nbs`, sorted)
    nb_pos[k] .. nb_pos[k + 1]           positions (`pos`, ascending) of unique neighborhood k

Seed addresses are big-endian (first base most significant, unlike Tran's little-endian addr), so
that all words sharing any prefix form one contiguous range: a window shorter than u + l is still one
range lookup. That is what lets every read length keep the full-sensitivity guarantee.

Spaced seeds (Tran §6.4.5, `shape` like '####-####'): the seed is read at the shape's care positions
('#') of its span and the neighborhood follows the span; u is the shape's weight. The key is the care
bases then the neighborhood, so the layout above is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from seedmap.index import perfect_hash
from seedmap.index.perfect_hash import PerfectHash
from seedmap.index.words import _radix_sort, _words, sorted_words
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
    shape: str = ""  # spaced seed ('#' care, '-' don't care); "" = u contiguous bases
    ph: PerfectHash | None = None  # per-block BDZ perfect hashes (seedmap index --ph; map --filter ph)

    @property
    def care(self) -> np.ndarray:
        """Offsets of the seed's care positions within its span."""
        return care_positions(self.shape or "#" * self.u)

    @property
    def span(self) -> int:
        return len(self.shape) if self.shape else self.u

    @property
    def word(self) -> int:
        return self.span + self.l

    def arrays(self) -> dict[str, np.ndarray]:
        arrays = {"seed_start": self.seed_start, "nbs": self.nbs, "nb_pos": self.nb_pos, "pos": self.pos}
        return arrays | (self.ph.arrays() if self.ph is not None else {})


def check_parameters(u: int, l: int) -> None:
    from seedmap.errors import SeedmapError

    if not 1 <= u <= MAX_SEED_LENGTH:
        raise SeedmapError(f"seed length must be 1..{MAX_SEED_LENGTH}, got {u}")
    if not 0 <= l <= MAX_NEIGHBORHOOD_LENGTH:
        raise SeedmapError(f"neighborhood length must be 0..{MAX_NEIGHBORHOOD_LENGTH}, got {l}")


MAX_WORD = 32  # span + l bases in one 64-bit key


def care_positions(shape: str) -> np.ndarray:
    return np.array([i for i, c in enumerate(shape) if c == "#"], dtype=np.int64)


def check_shape(shape: str, l: int) -> int:
    """The weight (u) of a valid seed shape."""
    from seedmap.errors import SeedmapError

    if not shape or set(shape) - {"#", "-"} or shape[0] != "#" or shape[-1] != "#":
        raise SeedmapError(f"seed shape must be '#' (care) and '-' (don't care), starting and ending with '#', "
                           f"got {shape!r}")
    u = shape.count("#")
    check_parameters(u, l)
    if len(shape) + l > MAX_WORD:
        raise SeedmapError(f"seed shape span + neighborhood length must be at most {MAX_WORD}, "
                           f"got {len(shape)} + {l}")
    return u


@njit(cache=True, nogil=True)
def _gather(keys: np.ndarray, care: np.ndarray, span: int, l: int) -> None:
    """Word keys of span + l bases -> care bases then the neighborhood, in place."""
    k = span + l
    nb_mask = (np.uint64(1) << np.uint64(2 * l)) - np.uint64(1)
    for i in range(keys.size):
        key = keys[i]
        seed = np.uint64(0)
        for c in care:
            seed = (seed << np.uint64(2)) | ((key >> np.uint64(2 * (k - 1 - c))) & np.uint64(3))
        keys[i] = (seed << np.uint64(2 * l)) | (key & nb_mask)


def spaced_words(ref: Reference, shape: str, l: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, positions) of a spaced seed, sorted by key, positions ascending within a key."""
    care = care_positions(shape)
    codes = ref.codes()
    keys, pos = _words(codes, ref.starts, len(shape) + l, np.uint32 if ref.total < 2**32 else np.int64)
    _gather(keys, care, len(shape), l)
    return _radix_sort(keys, pos, 2 * (care.size + l))  # stable: positions come in ascending order


def build(ref: Reference, u: int = DEFAULT_SEED_LENGTH, l: int = DEFAULT_NEIGHBORHOOD_LENGTH,
          shape: str = "", ph: bool = False) -> NeighborhoodIndex:
    """The index; with ph, also every seed block's perfect hash (index/perfect_hash.py)."""
    if shape:
        u = check_shape(shape, l)
        keys, pos = spaced_words(ref, shape, l)
    else:
        check_parameters(u, l)
        keys, pos = sorted_words(ref, u + l)
    first = np.empty(keys.size, dtype=bool)
    first[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    unique = keys[first]
    nb_pos = np.append(np.flatnonzero(first), keys.size).astype(np.int64)
    nbs = (unique & np.uint64((1 << (2 * l)) - 1)).astype(np.uint32)
    seeds = (unique >> np.uint64(2 * l)).astype(np.int64)
    seed_start = np.zeros(4**u + 1, dtype=np.int64)
    np.cumsum(np.bincount(seeds, minlength=4**u), out=seed_start[1:])
    index = NeighborhoodIndex(u, l, seed_start, nbs, nb_pos, pos, shape)
    if ph:
        index.ph = perfect_hash.build(seed_start, nbs)
    return index
