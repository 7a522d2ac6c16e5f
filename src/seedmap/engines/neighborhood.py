"""The neighborhood-index engine: MAROSE seed + filter (binary search over degenerated patterns), dedupe."""

from __future__ import annotations

import numpy as np

from seedmap.filter.neighborhood_bs import count_candidates, fill_windows, merge_windows
from seedmap.index.neighborhood import NeighborhoodIndex

# Raw candidates materialised at once (16 bytes each); more are processed in query chunks.
CANDIDATE_BUDGET = 8_000_000


class NeighborhoodEngine:
    def __init__(self, index: NeighborhoodIndex, ref_starts: np.ndarray, windows: int = 0, step: int = 0,
                 fe: int = 0) -> None:
        self.index = index
        self.ref_starts = np.ascontiguousarray(ref_starts, dtype=np.int64)
        self.windows = windows
        self.step = step
        self.fe = fe

    @property
    def max_window(self) -> int:
        return self.index.word

    def _saved_ranges(self, qerr: np.ndarray) -> int:
        """Room per query for the index ranges the count pass hands to the fill pass: one per window for
        the default plan; plans with more are searched again in the fill pass."""
        if self.step or self.fe:
            return 1
        return (self.windows or int(qerr.max(initial=0)) + 1)

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray,
                          qerr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ix = self.index
        nq = qoff.size - 1
        saved = np.empty((nq, self._saved_ranges(qerr), 3), dtype=np.int64)
        n_saved = np.empty(nq, dtype=np.int64)
        counts = count_candidates(qcodes, qoff, qerr, ix.u, ix.l, self.windows, self.step, self.fe,
                                  ix.seed_start, ix.nbs, ix.nb_pos, saved, n_saved)
        cand_off = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=cand_off[1:])
        parts = []
        first = 0
        while first < nq:
            last = int(np.searchsorted(cand_off, cand_off[first] + CANDIDATE_BUDGET, side="right")) - 1
            last = min(max(last, first + 1), nq)
            size = int(cand_off[last] - cand_off[first])
            win_s = np.empty(size, dtype=np.int64)
            win_e = np.empty(size, dtype=np.int64)
            win_d = np.empty(size, dtype=np.int64)
            fill_windows(qcodes, qoff, qerr, first, last, cand_off, ix.u, ix.l, self.windows, self.step,
                         self.fe, ix.seed_start, ix.nbs, ix.nb_pos, ix.pos, self.ref_starts, saved, n_saved,
                         win_s, win_e, win_d)
            parts.append(merge_windows(first, last, cand_off, win_s, win_e, win_d))
            first = last
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 4), dtype=np.int64)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
