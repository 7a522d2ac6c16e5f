"""What every engine shares: count candidates, then fill them in query chunks that fit a memory budget,
then merge each query's overlapping windows (the dedupe stage)."""

from __future__ import annotations

import numpy as np

from seedmap.filter.neighborhood_bs import merge_windows

# Raw candidates materialised at once (24 bytes each); more are processed in query chunks.
CANDIDATE_BUDGET = 8_000_000


class CandidateEngine:
    """Subclasses implement _count (candidates per query, plus state handed to _fill) and _fill."""

    max_window: int

    def __init__(self, ref_starts: np.ndarray) -> None:
        self.ref_starts = np.ascontiguousarray(ref_starts, dtype=np.int64)

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray) -> tuple[np.ndarray, tuple]:
        raise NotImplementedError

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        raise NotImplementedError

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray,
                          qerr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counts, state = self._count(qcodes, qoff, qerr)
        nq = counts.size
        cand_off = np.zeros(nq + 1, dtype=np.int64)
        np.cumsum(counts, out=cand_off[1:])
        cand_len = counts.copy()
        parts = []
        first = 0
        while first < nq:
            last = int(np.searchsorted(cand_off, cand_off[first] + CANDIDATE_BUDGET, side="right")) - 1
            last = min(max(last, first + 1), nq)
            size = int(cand_off[last] - cand_off[first])
            win_s = np.empty(size, dtype=np.int64)
            win_e = np.empty(size, dtype=np.int64)
            win_d = np.empty(size, dtype=np.int64)
            self._fill(qcodes, qoff, qerr, first, last, cand_off, state, win_s, win_e, win_d, cand_len)
            parts.append(merge_windows(first, last, cand_off, cand_len, win_s, win_e, win_d))
            first = last
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 4), dtype=np.int64)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
