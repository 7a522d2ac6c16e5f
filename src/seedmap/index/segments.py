"""Indexes in genome segments: each part indexes one range of the genome and is built, stored and searched
on its own, so a build holds one part in memory and a mapping run keeps few parts resident. The
neighborhood index cuts anywhere (MAROSE: words starting in a range of positions), the FM index between
whole sequences. A stored part's arrays are named seg{i}.{name}; the parameters' `segments` hold the bounds
(genome positions)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from seedmap.errors import SeedmapError
from seedmap.index.interface import Index
from seedmap.index.params import P

FIXED_BUILD_BYTES = 256 << 20  # the interpreter, numba and numpy
MIN_SEGMENT = 1 << 16  # bases (positions) in the smallest segment a limit may ask for

PartT = TypeVar("PartT", bound=Index)  # a kind's index class, which its parts are


def machine_memory() -> int:
    """This machine's physical memory in bytes (0: unknown)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def segment_size(max_memory: int, fixed: int, per_base: float, fixed_what: str) -> int:
    """Bases per segment whose build fits max_memory next to `fixed` bytes (fixed_what says what they are);
    one clear error when not even MIN_SEGMENT bases would."""
    if max_memory - fixed < per_base * MIN_SEGMENT:
        raise SeedmapError(f"--max-memory {max_memory / 2**20:.0f} MiB is too small: {fixed_what} "
                           f"{fixed / 2**20:.0f} MiB")
    return int((max_memory - fixed) // per_base)


def array_name(i: int, name: str) -> str:
    return f"seg{i}.{name}"


def stored_arrays(bounds: tuple[int, ...], names: tuple[str, ...]) -> tuple[str, ...]:
    """The arrays a stored index holds: `names`, once per segment when it has segments (their bounds)."""
    if not bounds:
        return names
    return tuple(array_name(i, n) for i in range(len(bounds) - 1) for n in names)


@dataclass
class SegmentedIndex:
    """parts[i] indexes the genome range bounds[i] .. bounds[i + 1]."""

    parts: list
    bounds: list[int]

    @property
    def first(self) -> object:
        return self.parts[0]

    def arrays(self) -> Iterator[tuple[str, np.ndarray]]:
        for i, part in enumerate(self.parts):
            for name, arr in part.arrays().items():
                yield array_name(i, name), arr

    @classmethod
    def from_arrays(cls, params: P, arrays: dict[str, np.ndarray],
                    part_from_arrays: Callable[[P, dict[str, np.ndarray]], object]) -> SegmentedIndex:
        bounds = list(params.segments)
        prefixes = [array_name(i, "") for i in range(len(bounds) - 1)]
        return cls([part_from_arrays(params, {n.removeprefix(pre): a for n, a in arrays.items() if n.startswith(pre)})
                    for pre in prefixes], bounds)


@dataclass
class SegmentedBuild(Generic[PartT]):
    """A build that makes each part (make(first, last)) only when the store writes its arrays, so one part
    is in memory at a time; `made` keeps tally(part) of each part for the log."""

    bounds: list[int]
    make: Callable[[int, int], PartT]
    tally: Callable[[PartT], object]
    made: list = field(default_factory=list)

    def arrays(self) -> Iterator[tuple[str, np.ndarray]]:
        for i in range(len(self.bounds) - 1):
            part = self.make(self.bounds[i], self.bounds[i + 1])
            self.made.append(self.tally(part))
            for name, arr in part.arrays().items():
                yield array_name(i, name), arr
            del part
