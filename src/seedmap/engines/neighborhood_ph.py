"""The neighborhood engine with the perfect-hash filter (`--filter ph`): same windows and patterns as the
binary-search filter, each full-length pattern looked up in its seed block's BDZ perfect hash."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.index import perfect_hash
from seedmap.index.neighborhood import NeighborhoodIndex

log = logging.getLogger("seedmap")


def ensure_perfect_hash(index: NeighborhoodIndex) -> perfect_hash.PerfectHash:
    """The index's perfect hashes; built in memory when the stored index has none."""
    if index.ph is None:
        log.info("the index has no perfect hashes (seedmap index --ph stores them): building them in memory")
        t0 = time.perf_counter()
        index.ph = perfect_hash.build(index.seed_start, index.nbs)
        log.info("built the perfect hashes of %d neighborhoods in %.1f s", index.nbs.size, time.perf_counter() - t0)
    return index.ph


class PerfectHashEngine(NeighborhoodEngine):
    def __init__(self, index: NeighborhoodIndex, ref_starts: np.ndarray, windows: int = 0, step: int = 0,
                 fe: int = 0, **verifier: Any) -> None:
        super().__init__(index, ref_starts, windows=windows, step=step, fe=fe, **verifier)
        self.ph = ensure_perfect_hash(index)

    def _tables(self) -> tuple:
        ph = self.ph
        return (perfect_hash.Tables(ph.ph_off, ph.ph_block, ph.ph_g, ph.ph_table),)
