"""The arrays a batch's SAM or BAM records are written from, grouped by what they describe. numba takes
NamedTuples of arrays as kernel arguments, so the formatters take a few of these instead of two dozen arrays
in an order that only the signature remembers."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Records(NamedTuple):
    """One row per SAM record, in output order (a read's records consecutive, its primary first). loc: the
    record's location (an index into Alignments), -1 for an unmapped read. mate_loc: the mate's primary
    location, -1 when the mate is unmapped or the read single-end; mate_mapq and tlen: 0 there."""

    read: np.ndarray
    loc: np.ndarray
    flag: np.ndarray
    mapq: np.ndarray
    nh: np.ndarray
    mate_loc: np.ndarray
    mate_mapq: np.ndarray
    tlen: np.ndarray
