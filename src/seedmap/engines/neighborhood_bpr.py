"""The neighborhood-index engine with the mflBPR filter (`--filter bpr`): indels inside a lookup's
neighborhood are tolerated, so the plan needs ceil((e + 1) / (fe + 1)) windows (see filter/plan.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.errors import SeedmapError
from seedmap.filter import plan
from seedmap.filter.neighborhood_bpr import count_candidates, fill_windows
from seedmap.index.neighborhood import NeighborhoodIndex


class NeighborhoodBprEngine(NeighborhoodEngine):
    count_kernel = staticmethod(count_candidates)
    fill_kernel = staticmethod(fill_windows)

    def __init__(self, index: NeighborhoodIndex, ref_starts: np.ndarray, windows: int = 0, step: int = 0,
                 fe: int = 0, **verifier: Any) -> None:
        if fe > index.l:
            raise SeedmapError(f"--fe {fe} is more than the index's neighborhood length l = {index.l}")
        super().__init__(index, ref_starts, windows=windows, step=step, fe=fe, **verifier)

    def _tables(self) -> tuple:
        return ()  # the scan needs nothing beyond the index's neighborhoods

    def _memo(self, memo: object) -> tuple:
        return ()  # its lookups differ between rounds (the plan's groups): none are kept

    def guarantee(self, m: int, e: int) -> str:
        ix = self.index
        return plan.bpr_guarantee(m, e, ix.span, ix.l, self.fe, self.windows, self.step)

    def _saved_ranges(self, qerr: np.ndarray) -> int:
        """Room per query for the ranges the count pass hands to the fill pass: two per lookup of the
        default plan; queries with more are scanned again in the fill pass."""
        if self.step:
            return 1
        g = self.fe + 1
        k = self.windows or (int(qerr.max(initial=0)) + g) // g
        return 2 * k * g
