"""The neighborhood-index engine: MAROSE seed + filter (binary search over degenerated patterns)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from seedmap.engines.base import CandidateEngine, QueryMemo
from seedmap.filter import plan
from seedmap.filter.neighborhood_passes import (
    KNOWN_COLUMNS,
    Memo,
    Plan,
    SeedBlocks,
    count_candidates,
    fill_windows,
    no_memo,
)
from seedmap.filter.windows import Saved, Slots
from seedmap.index.neighborhood import NeighborhoodIndex
from seedmap.io.columns import Queries
from seedmap.spread import spread

QUERIES = 64  # the fewest queries a thread is handed (the filter looks a chunk of 64 up together)


class NeighborhoodEngine(CandidateEngine):
    """The bs filter. The ph engine passes its perfect hashes to the same kernels; the bpr engine swaps in
    its own kernels (same argument order). Both add what they need after the index's SeedBlocks.

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
        """Extra arguments the filter's kernels take after the index's SeedBlocks: here the perfect hashes to
        look patterns up in, None for binary search."""
        return (None,)

    def _memo(self, memo: QueryMemo | None) -> tuple:
        """The count kernel's Memo: the lookups of the batch's earlier strata rounds (QueryMemo), which it
        reuses and adds to; none (ids empty) without a memo."""
        if memo is None:
            return (no_memo(),)
        return (Memo(memo.ids, memo.table(self, KNOWN_COLUMNS)),)

    def _plan(self) -> Plan:
        """How the kernels look a query's windows up (this engine's plan over its index)."""
        return Plan(self.care, self.index.l, self.windows, self.step, self.fe)

    def _blocks(self) -> SeedBlocks:
        """The index's arrays the kernels read."""
        ix = self.index
        return SeedBlocks(ix.seed_start, ix.nbs, ix.nb_pos, ix.pos)

    def _saved_ranges(self, qerr: np.ndarray) -> int:
        """Room per query for the index ranges the count pass hands to the fill pass: one per window, two
        with --fe (a window's patterns may match a neighbor of the true neighborhood too). Queries with
        more, and --step plans, are searched again in the fill pass."""
        if self.step:
            return 1
        return (2 if self.fe else 1) * (self.windows or int(qerr.max(initial=0)) + 1)

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
               memo: QueryMemo | None = None) -> tuple[np.ndarray, tuple]:
        nq = qoff.size - 1
        saved = Saved(np.empty((nq, self._saved_ranges(qerr), 3), dtype=np.int64), np.empty(nq, dtype=np.int64))
        counts = np.zeros(nq, dtype=np.int64)
        queries, plan, blocks, extra = Queries(qcodes, qoff, qerr), self._plan(), self._blocks(), self._tables()
        memo_arg = self._memo(memo)
        spread(nq, lambda a, b: self.count_kernel(queries, plan, blocks, *extra, *memo_arg, saved, counts, a, b),
               grain=QUERIES)
        return counts, saved

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        queries, plan, blocks, extra = Queries(qcodes, qoff, qerr), self._plan(), self._blocks(), self._tables()
        out = Slots(self.ref_starts, win_s, win_e, win_d)
        spread(last - first, lambda a, b: self.fill_kernel(queries, first, cand_off, plan, blocks, *extra, state, out,
                                                           first + a, first + b), grain=QUERIES)
