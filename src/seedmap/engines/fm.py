"""The FM-index engine (Salavert): inexact search by a pigeonhole search scheme, candidates verified."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from seedmap.engines.base import CandidateEngine, QueryMemo
from seedmap.engines.segmented import SegmentedEngine
from seedmap.filter.fm_located import locate_rows, union_rows
from seedmap.filter.fm_lookup import tables
from seedmap.filter.fm_scheme import ROW, count_candidates, fill_windows, memo_size, no_memo
from seedmap.index.fm import FmIndex, sequence_range
from seedmap.index.resident import HugePageCopies
from seedmap.index.segments import SegmentedIndex
from seedmap.io.reference import Reference
from seedmap.spread import pieces, spread

SAVED_ROWS = 32  # accepted strings per query a device's count pass keeps room for (1 kB)
# The CPU pool's room per query in a first batch (2 kB; later: the last batch's). A string that does not fit is
# searched again before the fill pass (_search_again): 250 Mbp human-like genome, 51 strings per query, a first
# batch of 2,500 reads had a third of its strings searched twice with room for 32 (fill pass 1.0 s instead of 0.25,
# count pass 2.7 s).
FIRST_ROWS = 64
POOL_SLACK = 1.25  # room for this many times the strings per query of the last batch, when that is more
ANY_WINDOW = 1 << 30  # max_window: pieces are any length, so every plan is fully sensitive
DEFAULT_VERIFY_BELOW = 1  # rare strings (this many rows or fewer, from a piece's length on) go straight to verification
QUERIES = 16  # the fewest queries a thread is handed
WAIT_FROM = 32  # a search of more queries than this waits for the huge-page copies (the warm-up's 10 do not)


class FmEngine(CandidateEngine):
    """Candidates from the search scheme; verified in bulk (the device's bulk verifier) when given.
    ref_starts: the genome starts of the index's sequences and the end of the last one (a slice of the
    reference's for an index of a genome segment)."""

    def __init__(self, index: FmIndex, ref_starts: np.ndarray, bulk: object = None,
                 packed: np.ndarray | None = None, nmask: np.ndarray | None = None,
                 verify_below: int = DEFAULT_VERIFY_BELOW, saved_rows: int = FIRST_ROWS,
                 huge_pages: bool = False) -> None:
        super().__init__(ref_starts, bulk, packed, nmask)
        # The occurrence tables in 2 MB pages once copied (index/resident.py): a search's page walks are fewer
        # (the count pass 11-13 % faster on a quiet machine). Not tables above resident.HUGE_MAX (1 Gbp: 1 GB, whose
        # copy outlasts the warm-up: --best waited for it), nor a segmented index's (one larger than a quarter of
        # memory drops its segments' pages between batches; not measured).
        self.copies = HugePageCopies(index, ("fwd_occ", "rev_occ") if huge_pages else ())
        self.saved_rows = saved_rows
        self.rows_per_query = 0.0  # of the last batch: repeat-rich genomes need more room
        self.index = index
        self.small = verify_below
        self.max_window = ANY_WINDOW

    def _memo(self, memo: QueryMemo | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, memo_at, memo) of the kernels: this index's D arrays of the batch's queries."""
        if memo is None:
            return no_memo()
        return (memo.ids, *memo.slots(self, memo_size))

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
               memo: QueryMemo | None = None) -> tuple[np.ndarray, tuple]:
        self.copies.take(wait=qoff.size > WAIT_FROM)
        ix = self.index
        nq = qoff.size - 1
        cuts = pieces(nq, QUERIES)  # each piece of the batch keeps its strings in a slab of the pool
        slabs = len(cuts) - 1
        per_query = max(self.saved_rows, POOL_SLACK * self.rows_per_query)
        pool = np.empty((slabs, -(-int(per_query * nq) // slabs), ROW), dtype=np.int64)
        row_at = np.empty(nq, dtype=np.int64)
        n_saved = np.empty(nq, dtype=np.int64)
        counts = np.zeros(nq, dtype=np.int64)
        # The k-mer tables on first use, not when the engine is made: building them reads most of the index, and a
        # segmented index keeps only the segment in use resident.
        memo_args = self._memo(memo)
        fwd_table, rev_table = tables(ix)

        def count(a: int, b: int) -> None:
            for k in range(a, b):
                count_candidates(qcodes, qoff, qerr, ix.n, ix.counts, ix.fwd_occ, ix.rev_occ, fwd_table, rev_table,
                                 self.small, pool, row_at, n_saved, *memo_args, counts, k, cuts[k], cuts[k + 1])

        spread(slabs, count)
        if nq:
            self.rows_per_query = float(n_saved.sum()) / nq  # a rough guide for the next batch's room only
        rows = pool.reshape(-1, ROW)
        located = union_rows(rows, row_at, n_saved, ix.n)
        locate_rows(located[1], ix.counts, ix.fwd_occ, ix.fwd_mark, ix.fwd_ssa)
        return counts, (rows, row_at, n_saved, memo_args, located)

    def _search_again(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
                      row_at: np.ndarray, n_saved: np.ndarray, memo_args: tuple) -> tuple[np.ndarray, np.ndarray]:
        """The accepted strings of queries [first, last) that did not fit in the count pass's pool (a repeat
        family's few reads), searched again by count_candidates into a pool of each one's own: (their strings one
        query after another, where query qi's start; -1 elsewhere). The count kernel, so that the search compiles
        once, not in fill_windows too."""
        ix = self.index
        over = np.flatnonzero(row_at[first:last] < 0) + first
        again_at = np.full(qoff.size - 1, -1, dtype=np.int64)
        if not over.size:
            return np.zeros((0, ROW), dtype=np.int64), again_at
        found = [np.empty((1, int(n_saved[qi]), ROW), dtype=np.int64) for qi in over]
        where = np.empty_like(again_at)  # (count_candidates' row_at, n_saved and counts of these queries: unused)
        got = np.empty_like(again_at)
        cand = np.empty_like(again_at)
        fwd_table, rev_table = tables(ix)

        def search(a: int, b: int) -> None:
            for k in range(a, b):
                qi = int(over[k])
                count_candidates(qcodes, qoff, qerr, ix.n, ix.counts, ix.fwd_occ, ix.rev_occ, fwd_table, rev_table,
                                 self.small, found[k], where, got, *memo_args, cand, 0, qi, qi + 1)

        spread(over.size, search)
        again_at[over] = np.cumsum(n_saved[over]) - n_saved[over]
        return np.concatenate([f[0] for f in found]), again_at

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        ix = self.index
        rows, row_at, n_saved, memo_args, located = state
        again, again_at = self._search_again(qcodes, qoff, qerr, first, last, row_at, n_saved, memo_args)
        spread(last - first, lambda a, b: fill_windows(
            qcodes, qoff, qerr, first, last, cand_off, ix.counts, ix.text_starts, ix.fwd_occ, ix.fwd_mark, ix.fwd_ssa,
            self.ref_starts, rows, row_at, n_saved, again, again_at, win_s, win_e, win_d, *located, first + a,
            first + b), grain=QUERIES)


def fm_engine(ix: FmIndex | SegmentedIndex, ref: Reference, bulk: object = None,
              make: Callable[[FmIndex, np.ndarray], CandidateEngine] | None = None) -> CandidateEngine:
    """The engine of an FM index, or of one in genome segments (each searched with its sequences' starts):
    FmEngines verifying in bulk with `bulk`, or make(index, its sequences' starts)'s (a device's)."""
    if make is None:
        def make(part: FmIndex, starts: np.ndarray) -> CandidateEngine:
            return FmEngine(part, starts, bulk=bulk, packed=ref.packed, nmask=ref.nmask,
                            huge_pages=not isinstance(ix, SegmentedIndex))
    if isinstance(ix, SegmentedIndex):
        ranges = [sequence_range(ref.starts, ix.bounds[i], ix.bounds[i + 1]) for i in range(len(ix.parts))]
        return SegmentedEngine([make(part, ref.starts[a:b + 1]) for part, (a, b) in zip(ix.parts, ranges, strict=True)])
    return make(ix, ref.starts)
