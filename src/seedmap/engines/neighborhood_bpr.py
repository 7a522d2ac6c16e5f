"""The neighborhood-index engine with the mflBPR filter (`--filter bpr`): indels inside a lookup's
neighborhood are tolerated, so the plan needs ceil((e + 1) / (fe + 1)) windows (see filter/plan.py)."""

from __future__ import annotations

import numpy as np

from seedmap.engines.base import CandidateEngine
from seedmap.errors import SeedmapError
from seedmap.filter import plan
from seedmap.filter.neighborhood_bpr import count_candidates, fill_windows
from seedmap.index.neighborhood import NeighborhoodIndex


class NeighborhoodBprEngine(CandidateEngine):
    def __init__(self, index: NeighborhoodIndex, ref_starts: np.ndarray, windows: int = 0, step: int = 0,
                 fe: int = 0) -> None:
        super().__init__(ref_starts)
        if fe > index.l:
            raise SeedmapError(f"--fe {fe} is more than the index's neighborhood length l = {index.l}")
        self.index = index
        self.care = np.ascontiguousarray(index.care)
        self.windows = windows
        self.step = step
        self.fe = fe
        self.max_window = index.word

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

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray) -> tuple[np.ndarray, tuple]:
        ix = self.index
        nq = qoff.size - 1
        saved = np.empty((nq, self._saved_ranges(qerr), 3), dtype=np.int64)
        n_saved = np.empty(nq, dtype=np.int64)
        counts = count_candidates(qcodes, qoff, qerr, self.care, ix.l, self.windows, self.step, self.fe,
                                  ix.seed_start, ix.nbs, ix.nb_pos, saved, n_saved)
        return counts, (saved, n_saved)

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        ix = self.index
        saved, n_saved = state
        fill_windows(qcodes, qoff, qerr, first, last, cand_off, self.care, ix.l, self.windows, self.step, self.fe,
                     ix.seed_start, ix.nbs, ix.nb_pos, ix.pos, self.ref_starts, saved, n_saved, win_s, win_e, win_d)
