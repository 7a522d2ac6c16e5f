"""The k-mer hash engine (mrFAST/Nouri): cheapest e + a disjoint k-mers, optional adjacency filter."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from seedmap.engines.base import CandidateEngine, QueryMemo
from seedmap.filter.kmer_seeds import count_candidates, fill_windows
from seedmap.index.kmer import KmerIndex
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
        saved = np.empty((nq, int(qerr.max(initial=0)) + self.adjacency, 3), dtype=np.int64)
        n_saved = np.empty(nq, dtype=np.int64)
        counts = np.zeros(nq, dtype=np.int64)
        spread(nq, lambda a, b: count_candidates(qcodes, qoff, qerr, self.index.k, self.adjacency, self.index.offsets,
                                                 saved, n_saved, counts, a, b), grain=QUERIES)
        return counts, (saved, n_saved)

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        saved, n_saved = state
        spread(last - first, lambda a, b: fill_windows(
            qcodes, qoff, qerr, first, last, cand_off, self.adjacency, self.index.pos, self.ref_starts, saved, n_saved,
            win_s, win_e, win_d, cand_len, first + a, first + b), grain=QUERIES)
