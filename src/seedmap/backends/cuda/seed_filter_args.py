"""What one seed + filter thread reads and writes (seed_filter_kernels.visit_window), in a few named
structures instead of 28 positional arguments. The kernels build them from their own arguments (their
launch signatures stay flat), and numba-cuda passes them to the device function as it would the fields. Where
the windows go is the CPU filters' Slots (filter/windows.py)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Window(NamedTuple):
    """The window looked up: codes[qa + o : qa + o + length], part of a query of m bases searched with e
    edits that starts at codes[qa]."""

    codes: np.ndarray
    qa: int
    o: int
    length: int
    m: int
    e: int


class IndexSlice(NamedTuple):
    """The slice of the index on the device: seed addresses [lo, hi) and their parts of seed_start, nbs,
    nb_pos and pos, whose first entries are nb_base and pos_base of the whole index's."""

    lo: int
    hi: int
    seed_start: np.ndarray
    nbs: np.ndarray
    nb_pos: np.ndarray
    pos: np.ndarray
    nb_base: int
    pos_base: int

