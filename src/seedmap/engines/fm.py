"""The FM-index engine (Salavert): inexact search by a pigeonhole search scheme, candidates verified."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from seedmap.engines.base import CandidateEngine, QueryMemo
from seedmap.engines.segmented import SegmentedEngine
from seedmap.filter.fm_alone import spans_alone
from seedmap.filter.fm_located import locate_rows, union_rows
from seedmap.filter.fm_lookup import tables
from seedmap.filter.fm_scheme import ROW, Memo, Saved, Slots, bidir, count_candidates, fill_windows, memo_size, no_memo
from seedmap.index.fm import FmIndex, sequence_range
from seedmap.index.segments import SegmentedIndex
from seedmap.io.columns import PackedRef, Queries
from seedmap.io.reference import Reference
from seedmap.spread import pieces, spread

SAVED_ROWS = 32  # accepted strings per query a device's count pass keeps room for (1 kB)
# The CPU pool's room per query in a first batch (2 kB; later: the last batch's). A query whose strings do not fit
# goes to the count pass's spill (count_candidates).
FIRST_ROWS = 64
POOL_SLACK = 1.25  # room for this many times the strings per query of the last batch, when that is more
# Strings a query's search may find before it is searched again (count_candidates' scratch: 8 MB of address space
# per kernel call, its pages touched only as far as the most strings of one query). A low-complexity read finds many
# (1 Gbp human-like genome: a poly-T read 100,000 strings); before the spill, a query that did not fit the pool was
# searched again and its rows located one by one in the fill pass: 9 such reads of 20,000 took 10 of 56 CPU s.
SCRATCH_ROWS = 1 << 18
ANY_WINDOW = 1 << 30  # max_window: pieces are any length, so every plan is fully sensitive
DEFAULT_VERIFY_BELOW = 1  # rare strings (this many rows or fewer, from a piece's length on) go straight to verification
QUERIES = 16  # the fewest queries a thread is handed


class FmEngine(CandidateEngine):
    """Candidates from the search scheme; verified in bulk (the device's bulk verifier) when given.
    ref_starts: the genome starts of the index's sequences and the end of the last one (a slice of the
    reference's for an index of a genome segment)."""

    # An exact backward search is cheap against the e = 1 scheme, and the reads round 0 settles (tied exact
    # copies) are the dearest at e = 1: ragout16, half of them settled, 1,000,000 reads, -t 2, --best
    # 10.5 s with round 0 against 11.2 s without.
    round0_min = 0.25
    # A query with this many raw candidates or fewer (a unique read's pieces, a strand that occurs nowhere) has them
    # verified once, merged, rather than first each in bulk: its windows mostly coincide, so the bulk pass verified
    # them twice (250 Mbp human-like genome, 150 bp, e = 4, -t 2, benchmarks/ab.py against 0, the same records:
    # 200,000 reads --best 0.957x wall, 0.920x candidates CPU at 4; 0.968x at 2, 0.989x at 8; pairs --best
    # 0.985x, all-mapping 0.981x at 4).
    bulk_min = 4

    def __init__(self, index: FmIndex, ref_starts: np.ndarray, bulk: Callable[..., np.ndarray] | None = None,
                 packed: np.ndarray | None = None, nmask: np.ndarray | None = None,
                 verify_below: int = DEFAULT_VERIFY_BELOW, saved_rows: int = FIRST_ROWS,
                 scratch_rows: int = SCRATCH_ROWS) -> None:
        super().__init__(ref_starts, bulk, packed, nmask)
        # The occurrence tables are read through their memory maps, not copied into 2 MB anonymous pages: the store
        # asks for 2 MB pages of the maps (index/store.py), which spares the page walks as well, and a copy's first
        # touch of 250 MB is slow in a VM (250 Mbp human-like genome, 20,000 reads, -t 2: --best 1.55-1.65 s
        # mapped against 1.76-2.05 s copied).
        self.saved_rows = saved_rows
        self.scratch_rows = scratch_rows
        self.rows_per_query = 0.0  # of the last batch: repeat-rich genomes need more room
        self.index = index
        self.small = verify_below
        self.max_window = ANY_WINDOW

    def spans_alone(self, packed: np.ndarray, nmask: np.ndarray, seq_starts: np.ndarray, start: np.ndarray,
                    end: np.ndarray, parts: np.ndarray) -> np.ndarray:
        """The unique best locations' spans that the index proves alone (filter/fm_alone.py)."""
        return index_spans_alone(self.index, packed, nmask, seq_starts, start, end, parts)

    def _memo(self, memo: QueryMemo | None) -> Memo:
        """The kernels' memo: this index's D arrays of the batch's queries."""
        if memo is None:
            return no_memo()
        return Memo(memo.ids, *memo.slots(self, memo_size))

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
               memo: QueryMemo | None = None) -> tuple[np.ndarray, tuple]:
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
        search_ix = bidir(ix)
        queries, saved, kernel_memo = Queries(qcodes, qoff, qerr), Saved(pool, row_at, n_saved), self._memo(memo)
        spills = [np.empty((0, ROW), dtype=np.int64)] * slabs

        def count(a: int, b: int) -> None:
            scratch = np.empty((self.scratch_rows, ROW), dtype=np.int64)
            for k in range(a, b):
                spills[k] = count_candidates(queries, search_ix, self.small, saved, kernel_memo, counts, k, cuts[k],
                                             cuts[k + 1], scratch)

        spread(slabs, count)
        if nq:
            self.rows_per_query = float(n_saved.sum()) / nq  # a rough guide for the next batch's room only
        rows = _with_spills(pool.reshape(-1, ROW), spills, cuts, row_at)
        located = union_rows(rows, row_at, n_saved, ix.n)
        locate_rows(located[1], ix.counts, ix.fwd_occ, ix.fwd_mark, ix.fwd_ssa)
        return counts, (rows, row_at, n_saved, located)

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        rows, row_at, n_saved, (at, pos) = state
        queries, saved = Queries(qcodes, qoff, qerr), Saved(rows, row_at, n_saved)
        slots = Slots(self.index.text_starts, self.ref_starts, win_s, win_e, win_d)
        spread(last - first, lambda a, b: fill_windows(queries, first, cand_off, saved, at, pos, slots, first + a,
                                                       first + b), grain=QUERIES)


def index_spans_alone(ix: FmIndex, packed: np.ndarray, nmask: np.ndarray, seq_starts: np.ndarray,
                      start: np.ndarray, end: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """filter/fm_alone.spans_alone on an FM index (whichever device searches it: the proof runs on the CPU)."""
    out = np.zeros(start.size, dtype=np.bool_)
    if start.size:
        spans_alone(ix.fwd_occ, ix.counts, ix.n, tables(ix)[0], PackedRef(packed, nmask), seq_starts,
                    np.ascontiguousarray(start, dtype=np.int64), np.ascontiguousarray(end, dtype=np.int64),
                    np.ascontiguousarray(parts, dtype=np.int64), out)
    return out


def _with_spills(pool: np.ndarray, spills: list[np.ndarray], cuts: list[int], row_at: np.ndarray) -> np.ndarray:
    """The pooled strings with the slabs' spills behind them; row_at of the spilled queries (-1 - where in their
    slab's spill) made where in the whole."""
    if not any(sp.size for sp in spills):
        return pool
    at = pool.shape[0]
    for k, sp in enumerate(spills):
        part = row_at[cuts[k]:cuts[k + 1]]
        part[part < 0] = at - 1 - part[part < 0]
        at += sp.shape[0]
    return np.concatenate([pool, *spills])


def fm_engine(ix: FmIndex | SegmentedIndex, ref: Reference, bulk: Callable[..., np.ndarray] | None = None,
              make: Callable[[FmIndex, np.ndarray], CandidateEngine] | None = None) -> CandidateEngine:
    """The engine of an FM index, or of one in genome segments (each searched with its sequences' starts):
    FmEngines verifying in bulk with `bulk`, or make(index, its sequences' starts)'s (a device's)."""
    if make is None:
        def make(part: FmIndex, starts: np.ndarray) -> CandidateEngine:
            return FmEngine(part, starts, bulk=bulk, packed=ref.packed, nmask=ref.nmask)
    if isinstance(ix, SegmentedIndex):
        ranges = [sequence_range(ref.starts, ix.bounds[i], ix.bounds[i + 1]) for i in range(len(ix.parts))]
        return SegmentedEngine([make(part, ref.starts[a:b + 1]) for part, (a, b) in zip(ix.parts, ranges, strict=True)])
    return make(ix, ref.starts)
