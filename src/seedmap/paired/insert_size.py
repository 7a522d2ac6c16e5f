"""The insert size model: given (-I mean,sd) or estimated from uniquely mapped pairs, as bwa does.

Estimation: pairs whose mates have exactly one location each, on one sequence, in the library
orientation; the quartiles give the interquartile range, pairs outside [Q1 - 2 IQR, Q3 + 2 IQR] are
dropped as outliers, and mean and standard deviation come from the rest. Proper pairs then have a
fragment length within mean +- SD_BOUND standard deviations.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from seedmap.paired.pairing import pair_inserts

log = logging.getLogger("seedmap")

SD_BOUND = 4.0
MIN_PAIRS = 20  # fewer unique pairs than this: no estimate
FALLBACK = (500.0, 250.0)  # used (with a warning) when the data gives no estimate


@dataclass(frozen=True)
class InsertModel:
    mean: float
    sd: float

    @property
    def bounds(self) -> tuple[int, int]:
        lo = max(1, int(np.floor(self.mean - SD_BOUND * self.sd)))
        return lo, max(lo, int(np.ceil(self.mean + SD_BOUND * self.sd)))

    def describe(self) -> str:
        lo, hi = self.bounds
        return f"mean {self.mean:.1f}, sd {self.sd:.1f}; proper pairs span {lo}..{hi} bp"


def estimate(read: np.ndarray, start: np.ndarray, end: np.ndarray, rev: np.ndarray, ref_id: np.ndarray,
             n_reads: int, orient: int) -> tuple[InsertModel | None, int]:
    """Model from the locations of a pair batch (read 2p, 2p + 1 = pair p); (None, n) with too few pairs."""
    count = np.bincount(read, minlength=n_reads)
    unique = np.flatnonzero((count[0::2] == 1) & (count[1::2] == 1))
    where = np.full(n_reads, -1, dtype=np.int64)
    where[read] = np.arange(read.size)  # (only used for reads with one location)
    ins = pair_inserts(where[2 * unique], where[2 * unique + 1], start, end, rev, ref_id, orient)
    ins = ins[ins >= 0].astype(np.float64)
    if ins.size < MIN_PAIRS:
        return None, int(ins.size)
    q1, q3 = np.percentile(ins, [25, 75])
    iqr = q3 - q1
    kept = ins[(ins >= q1 - 2 * iqr) & (ins <= q3 + 2 * iqr)]
    return InsertModel(float(kept.mean()), max(1.0, float(kept.std()))), int(kept.size)


def parse(text: str) -> InsertModel:
    """'mean,sd' (sd defaults to 10% of the mean, as in bwa)."""
    parts = text.split(",")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"expected MEAN,SD (e.g. 300,30), got {text!r}") from None
    if len(values) not in (1, 2) or not all(np.isfinite(values)) or values[0] <= 0 or min(values) < 0:
        raise ValueError(f"expected MEAN,SD with a positive mean (e.g. 300,30), got {text!r}")
    return InsertModel(values[0], values[1] if len(values) == 2 else 0.1 * values[0])
