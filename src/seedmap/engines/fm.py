"""The FM-index engine (Salavert): inexact search by a pigeonhole search scheme, candidates verified."""

from __future__ import annotations

import numpy as np

from seedmap.engines.base import CandidateEngine
from seedmap.filter.fm_scheme import ROW, count_candidates, fill_windows
from seedmap.index.fm import FmIndex

SAVED_ROWS = 8  # accepted strings kept per query by the count pass; queries with more are searched again
DEFAULT_VERIFY_BELOW = 1  # rare strings (this many rows or fewer, two pieces long) go straight to verification


class FmEngine(CandidateEngine):
    """Candidates from the search scheme; verified in bulk (the device's bulk verifier) when given."""

    def __init__(self, index: FmIndex, ref_starts: np.ndarray, bulk: object = None,
                 packed: np.ndarray | None = None, nmask: np.ndarray | None = None,
                 verify_below: int = DEFAULT_VERIFY_BELOW) -> None:
        super().__init__(ref_starts, bulk, packed, nmask)
        self.index = index
        self.small = verify_below
        self.max_window = 1 << 30  # pieces are any length: every plan is fully sensitive

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray) -> tuple[np.ndarray, tuple]:
        ix = self.index
        nq = qoff.size - 1
        saved = np.empty((nq, SAVED_ROWS, ROW), dtype=np.int64)
        n_saved = np.empty(nq, dtype=np.int64)
        counts = count_candidates(qcodes, qoff, qerr, ix.n, ix.counts, ix.fwd_occ, ix.rev_occ, self.small, saved,
                                  n_saved)
        return counts, (saved, n_saved)

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        ix = self.index
        saved, n_saved = state
        fill_windows(qcodes, qoff, qerr, first, last, cand_off, ix.n, ix.counts, ix.text_starts, ix.fwd_occ,
                     ix.fwd_mark, ix.fwd_ssa, ix.rev_occ, ix.rev_mark, ix.rev_ssa, self.ref_starts, self.small, saved,
                     n_saved, win_s, win_e, win_d)
