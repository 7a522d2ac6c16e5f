"""The k-mer hash engine (mrFAST/Nouri): cheapest e + a disjoint k-mers, optional adjacency filter."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from seedmap.engines.base import CandidateEngine, QueryMemo
from seedmap.filter.kmer_seeds import count_candidates, fill_windows
from seedmap.filter.windows import Saved, Slots
from seedmap.index.kmer import KmerIndex
from seedmap.io.columns import Queries
from seedmap.spread import spread

QUERIES = 64  # the fewest queries a thread is handed


class KmerEngine(CandidateEngine):
    """Seeds from the k-mer table; candidates verified in bulk (the device's bulk verifier) when given."""

    def __init__(self, index: KmerIndex, ref_starts: np.ndarray, adjacency: int = 1,
                 bulk: Callable[..., np.ndarray] | None = None, packed: np.ndarray | None = None,
                 nmask: np.ndarray | None = None) -> None:
        super().__init__(ref_starts, bulk, packed, nmask)
        self.index = index
        self.adjacency = max(1, adjacency)
        self.max_window = index.k

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
               memo: QueryMemo | None = None) -> tuple[np.ndarray, tuple]:
        nq = qoff.size - 1
        saved = Saved(np.empty((nq, int(qerr.max(initial=0)) + self.adjacency, 3), dtype=np.int64),
                      np.empty(nq, dtype=np.int64))
        counts = np.zeros(nq, dtype=np.int64)
        queries = Queries(qcodes, qoff, qerr)
        spread(nq, lambda a, b: count_candidates(queries, self.index.k, self.adjacency, self.index.offsets, saved,
                                                 counts, a, b), grain=QUERIES)
        return counts, saved

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        queries, out = Queries(qcodes, qoff, qerr), Slots(self.ref_starts, win_s, win_e, win_d)
        spread(last - first, lambda a, b: fill_windows(queries, first, cand_off, self.adjacency, self.index.pos, state,
                                                       out, cand_len, first + a, first + b), grain=QUERIES)
