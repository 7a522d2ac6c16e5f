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

from seedmap.index import perfect_hash, segments
from seedmap.index.perfect_hash import PerfectHash
from seedmap.index.words import radix_sort, range_words, sorted_words
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

    @classmethod
    def from_arrays(cls, params: NeighborhoodParams, arrays: dict[str, np.ndarray]) -> NeighborhoodIndex:
        """The stored index (its perfect hashes when stored ones of this version are there)."""
        return cls(params.u, params.l, arrays["seed_start"], arrays["nbs"], arrays["nb_pos"], arrays["pos"],
                   params.shape, PerfectHash.from_arrays(arrays, params.ph or None))

    def arrays(self) -> dict[str, np.ndarray]:
        arrays = {"seed_start": self.seed_start, "nbs": self.nbs, "nb_pos": self.nb_pos, "pos": self.pos}
        return arrays | (self.ph.arrays() if self.ph is not None else {})


@dataclass(frozen=True)
class NeighborhoodParams:
    """A neighborhood index's parameters: seed length u (a spaced seed's weight), neighborhood length l, the
    spaced seed's shape ("": u contiguous bases), the variant of its perfect hashes (perfect_hash.VERSION; "":
    none) and the genome segments' bounds (empty: one piece)."""

    u: int
    l: int
    shape: str = ""
    ph: str = ""
    segments: tuple[int, ...] = ()


def default_params() -> NeighborhoodParams:
    return NeighborhoodParams(DEFAULT_SEED_LENGTH, DEFAULT_NEIGHBORHOOD_LENGTH)


def checked_params(u: int, l: int, shape: str = "", ph: bool = False) -> NeighborhoodParams:
    """The parameters of a neighborhood index with these choices (a spaced seed's shape sets u), checked."""
    if shape:
        u = check_shape(shape, l)
    else:
        check_parameters(u, l)
    return NeighborhoodParams(u, l, shape, perfect_hash.VERSION if ph else "")


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


def spaced_words(ref: Reference, shape: str, l: int, first: int = 0,
                 last: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(keys, positions) of a spaced seed at positions [first, last), sorted by key, positions ascending
    within a key."""
    care = care_positions(shape)
    keys, pos = range_words(ref, len(shape) + l, first, ref.total if last is None else last)
    _gather(keys, care, len(shape), l)
    return radix_sort(keys, pos, 2 * (care.size + l))  # stable: positions come in ascending order


@njit(cache=True, nogil=True)
def _count_unique(keys: np.ndarray) -> int:
    n = 0
    for i in range(keys.size):
        if i == 0 or keys[i] != keys[i - 1]:
            n += 1
    return n


@njit(cache=True, nogil=True)
def _group(keys: np.ndarray, l: int, seed_start: np.ndarray, nbs: np.ndarray, nb_pos: np.ndarray) -> None:
    """Sorted keys -> unique neighborhoods, where each one's positions start, and the seed blocks (one pass,
    no whole-length temporaries)."""
    nb_mask = (np.uint64(1) << np.uint64(2 * l)) - np.uint64(1)
    j = 0
    for i in range(keys.size):
        if i == 0 or keys[i] != keys[i - 1]:
            nbs[j] = np.uint32(keys[i] & nb_mask)
            nb_pos[j] = i
            seed_start[np.int64(keys[i] >> np.uint64(2 * l)) + 1] += 1
            j += 1
    nb_pos[j] = keys.size
    for a in range(seed_start.size - 1):
        seed_start[a + 1] += seed_start[a]


def build(ref: Reference, u: int = DEFAULT_SEED_LENGTH, l: int = DEFAULT_NEIGHBORHOOD_LENGTH,
          shape: str = "", ph: bool = False, first: int = 0, last: int | None = None) -> NeighborhoodIndex:
    """The index of the words starting at positions [first, last) (default: the whole genome; a range is a
    genome segment); with ph, also every seed block's perfect hash (index/perfect_hash.py)."""
    if shape:
        u = check_shape(shape, l)
        keys, pos = spaced_words(ref, shape, l, first, last)
    else:
        check_parameters(u, l)
        keys, pos = sorted_words(ref, u + l, first, last)
    unique = _count_unique(keys)
    seed_start = np.zeros(4**u + 1, dtype=np.int64)
    nbs = np.empty(unique, dtype=np.uint32)
    nb_pos = np.empty(unique + 1, dtype=np.int64)
    _group(keys, l, seed_start, nbs, nb_pos)
    del keys
    index = NeighborhoodIndex(u, l, seed_start, nbs, nb_pos, pos, shape)
    if ph:
        index.ph = perfect_hash.build(seed_start, nbs)
    return index


# ---------------------------------------------------------------- genome segments (MAROSE)
# Building a part holds its words twice while they are radix sorted: a 64-bit key and a position each.
SORT_BYTES_PER_POSITION = 2 * (8 + 4)
# Mapping holds two segments' pages (at most 16 B per position: 4 B of position, 12 B per unique word)
# next to the reference and the batches' working memory.
INDEX_BYTES_PER_POSITION = 16
MAP_WORKING_BYTES = 1536 << 20


def segment_bounds(ref: Reference, u: int, max_memory: int = 0, segment_bases: int = 0,
                   map_memory: int = 0) -> list[int]:
    """Genome positions that split the reference into segments whose build fits max_memory bytes next to
    the packed reference, which every segment reads, and (with map_memory) whose mapping, two segments at a
    time, fits map_memory; or into segments of segment_bases positions: [0, total] when one segment does."""
    if not segment_bases:
        per_position = SORT_BYTES_PER_POSITION + (8 if ref.total >= 2**32 else 0)
        fixed = segments.FIXED_BUILD_BYTES + ref.packed.nbytes + ref.nmask.nbytes + 8 * 4**u
        segment_bases = segments.segment_size(max_memory, fixed, per_position,
                                              "the reference and the seed table alone take")
        if map_memory:
            fits = (map_memory - fixed - MAP_WORKING_BYTES) // (2 * INDEX_BYTES_PER_POSITION)
            segment_bases = min(segment_bases, max(segments.MIN_SEGMENT, fits))
    parts = max(1, -(-ref.total // segment_bases))
    return [ref.total * i // parts for i in range(parts + 1)]


ARRAYS = ("seed_start", "nbs", "nb_pos", "pos")


def stored_arrays(params: NeighborhoodParams) -> tuple[str, ...]:
    """The arrays a stored index with these parameters must hold."""
    return segments.stored_arrays(params.segments, ARRAYS)


def segmented_build(ref: Reference, u: int, l: int, shape: str, ph: bool,
                    bounds: list[int]) -> segments.SegmentedBuild:
    """Each part built when the store writes it; its positions and unique words are tallied for the log."""
    return segments.SegmentedBuild(bounds, lambda first, last: build(ref, u, l, shape, ph, first, last),
                                   lambda part: (part.pos.size, part.nbs.size))


def describe(ix: NeighborhoodIndex | segments.SegmentedBuild, params: NeighborhoodParams) -> str:
    """What a build made, for the log."""
    made = ix.made if isinstance(ix, segments.SegmentedBuild) else [(ix.pos.size, ix.nbs.size)]
    shape = f", shape {params.shape}" if params.shape else ""
    return (f"u={params.u}, l={params.l}{shape}: {sum(m[0] for m in made)} positions, "
            f"{sum(m[1] for m in made)} unique words" + (f", in {len(made)} genome segments" if len(made) > 1 else "")
            + (", perfect hashes" if params.ph else ""))
