"""The neighborhood-index engine: MAROSE seed + filter (binary search over degenerated patterns)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from seedmap.engines.base import CandidateEngine, QueryMemo
from seedmap.filter import plan
from seedmap.filter.neighborhood_passes import KNOWN_COLUMNS, count_candidates, fill_windows
from seedmap.index.neighborhood import NeighborhoodIndex
from seedmap.spread import spread

QUERIES = 64  # the fewest queries a thread is handed (the filter looks a chunk of 64 up together)


class NeighborhoodEngine(CandidateEngine):
    """The bs filter. The ph engine passes its perfect hashes to the same kernels; the bpr engine swaps in
    its own kernels (same argument order). Both add what they need after seed_start, nbs and nb_pos.

    The filter looks at a seed's neighborhood only, so a read from a diverged repeat family can pass it at
    tens of thousands of copies that are more than e edits away: with `bulk` given, a query with more than
    bulk_min raw candidates has each verified in bulk before merging (the merged windows of such a read
    would otherwise hold gigabases and most of the run's memory)."""

    count_kernel: Callable[..., None] = staticmethod(count_candidates)  # (a subclass's filter has its own)
    fill_kernel: Callable[..., None] = staticmethod(fill_windows)
    bulk_min = 32  # a unique read has a handful (one per window and neighborhood match)

    def __init__(self, index: NeighborhoodIndex, ref_starts: np.ndarray, windows: int = 0, step: int = 0,
                 fe: int = 0, bulk: Callable[..., np.ndarray] | None = None, packed: np.ndarray | None = None,
                 nmask: np.ndarray | None = None) -> None:
        super().__init__(ref_starts, bulk, packed, nmask)
        self.index = index
        self.care = np.ascontiguousarray(index.care)
        self.windows = windows
        self.step = step
        self.fe = fe
        self.max_window = index.word

    def guarantee(self, m: int, e: int) -> str:
        return plan.guarantee(m, e, self.max_window, self.windows, self.step, self.fe)

    def _tables(self) -> tuple:
        """Extra arguments the filter's kernels take after seed_start, nbs and nb_pos: here the perfect
        hashes to look patterns up in, None for binary search."""
        return (None,)

    def _memo(self, memo: QueryMemo | None) -> tuple:
        """The count kernel's (ids, known): the lookups of the batch's earlier strata rounds (QueryMemo), which it
        reuses and adds to; none (ids empty) without a memo."""
        if memo is None:
            return np.zeros(0, dtype=np.int64), np.zeros((0, KNOWN_COLUMNS), dtype=np.int64)
        return memo.ids, memo.table(self, KNOWN_COLUMNS)

    def _saved_ranges(self, qerr: np.ndarray) -> int:
        """Room per query for the index ranges the count pass hands to the fill pass: one per window, two
        with --fe (a window's patterns may match a neighbor of the true neighborhood too). Queries with
        more, and --step plans, are searched again in the fill pass."""
        if self.step:
            return 1
        return (2 if self.fe else 1) * (self.windows or int(qerr.max(initial=0)) + 1)

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
               memo: QueryMemo | None = None) -> tuple[np.ndarray, tuple]:
        ix = self.index
        nq = qoff.size - 1
        saved = np.empty((nq, self._saved_ranges(qerr), 3), dtype=np.int64)
        n_saved = np.empty(nq, dtype=np.int64)
        counts = np.zeros(nq, dtype=np.int64)
        spread(nq, lambda a, b: self.count_kernel(qcodes, qoff, qerr, self.care, ix.l, self.windows, self.step,
                                                  self.fe, ix.seed_start, ix.nbs, ix.nb_pos, *self._tables(),
                                                  *self._memo(memo), saved, n_saved, counts, a, b), grain=QUERIES)
        return counts, (saved, n_saved)

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        ix = self.index
        saved, n_saved = state
        spread(last - first, lambda a, b: self.fill_kernel(
            qcodes, qoff, qerr, first, last, cand_off, self.care, ix.l, self.windows, self.step, self.fe,
            ix.seed_start, ix.nbs, ix.nb_pos, *self._tables(), ix.pos, self.ref_starts, saved, n_saved, win_s, win_e,
            win_d, first + a, first + b), grain=QUERIES)
