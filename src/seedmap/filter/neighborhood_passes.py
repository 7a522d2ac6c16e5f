"""The two passes of MAROSE seed + filter over the neighborhood index, for both lookups of a window's
degenerated patterns: binary search (neighborhood_bs) or perfect hash (neighborhood_ph).

count_candidates counts each query's candidates (and keeps the index ranges it found when they fit);
fill_windows writes their verification windows into room sized from those counts, so no per-read list
can overflow and repetitive reads keep all their hits. Queries go in tasks of CHUNK, each allocating its
scratch once (per window it cost more than the search).

The index is far larger than the caches, so nearly every lookup misses several times (seed_start, the
block in nbs, nb_pos, pos). A task's lookups go in sweeps: all keys (prefetching seed_start), all
blocks (prefetching nbs), then the searches, so the misses of one sweep are fetched together instead of
one after another: the count pass took a quarter of the time, the whole run a fifth less.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.filter.degenerate import max_patterns
from seedmap.filter.neighborhood_bs import (
    SCRATCH,
    block_ranges,
    lookup_key,
    to_positions,
    window_ranges,
    word_at,
)
from seedmap.filter.neighborhood_ph import SCRATCH_PH, window_ranges_ph
from seedmap.filter.plan import plan_offset, plan_shape, window_plan
from seedmap.filter.windows import SORT_FEW, Saved, Slots, emit_windows, sort_few, sort_windows
from seedmap.index.perfect_hash import Tables
from seedmap.intrinsics import prefetch
from seedmap.io.columns import Queries

CHUNK = 64  # queries looked up together (scratch allocated once per chunk)
# A query's lookups kept for its next strata round (pipeline/strata.py searches a read at e = 0, 1, 3, ...): the
# plan's window length, the number of lookups, then (offset, position range start, end) per lookup. The plans of
# e = 0, 1, 2 share windows (plan.py): --best's round at e = 1 looks up one window of two, at e = 2 one of three.
KNOWN = 8
KNOWN_COLUMNS = 2 + 3 * KNOWN
RECALLED = -2  # a lookup row (r) whose position range an earlier round found
UNKEPT = -3  # a lookup row that found several ranges (fe > 0): not kept


class SeedBlocks(NamedTuple):
    """The neighborhood index as the filters read it (index/neighborhood.py): seed address a's unique
    neighborhoods nbs[seed_start[a]:seed_start[a + 1]], neighborhood k's positions pos[nb_pos[k]:nb_pos[k + 1]]."""

    seed_start: np.ndarray
    nbs: np.ndarray
    nb_pos: np.ndarray
    pos: np.ndarray


class Plan(NamedTuple):
    """How a query's windows are looked up: the seed's care positions and the neighborhood length l (the
    index's), the plan's windows and step (plan.py), and fe, the substitutions a lookup allows in the
    neighborhood."""

    care: np.ndarray
    l: int
    windows: int
    step: int
    fe: int


class Memo(NamedTuple):
    """The lookups of a batch's strata rounds: query q's in row ids[q] of known (KNOWN_COLUMNS wide); ids
    empty: none."""

    ids: np.ndarray
    known: np.ndarray


def no_memo() -> Memo:
    """count_candidates' memo for a search that keeps no lookups."""
    return Memo(np.zeros(0, dtype=np.int64), np.zeros((0, KNOWN_COLUMNS), dtype=np.int64))


@njit(cache=True, nogil=True, _nrt=False)
def _lookup(q: np.ndarray, o: int, length: int, plan: Plan, ix: SeedBlocks, ph: Tables | None, out: np.ndarray,
            scratch: np.ndarray) -> int:
    """The window's position ranges by perfect hash, or by binary search when ph is None (a branch
    numba removes at compile time)."""
    if ph is None:
        return window_ranges(q, o, length, plan.care, plan.l, plan.fe, ix.seed_start, ix.nbs, ix.nb_pos, out, scratch)
    return window_ranges_ph(q, o, length, plan.care, plan.l, plan.fe, ix.seed_start, ix.nbs, ix.nb_pos, ph, out,
                            scratch)


@njit(cache=True, nogil=True)
def new_scratch(ph: Tables | None, cap: int) -> np.ndarray:
    """The scratch _lookup needs for windows of at most cap patterns."""
    return np.empty((SCRATCH if ph is None else SCRATCH_PH) * cap, dtype=np.int64)


@njit(cache=True, nogil=True)
def _chunk_lookups(queries: Queries, q0: int, q1: int, plan: Plan, lmax: int, seed_start: np.ndarray,
                   memo: Memo) -> np.ndarray:
    """Every lookup of queries [q0, q1), in order, as rows (query, offset, length, r, a0, a1, word) with
    r, a0 and a1 from lookup_key (r = -1: the window holds an N) and the word of its r neighborhood bases,
    each one's seed_start entry prefetched: the first of the sweeps (this one, _open_blocks, the searches).
    A lookup an earlier round of the query made (in the memo) gets r = RECALLED and its position range as
    (a0, a1), and reads nothing of the index."""
    qoff, qerr = queries.off, queries.err
    total = 0
    for qi in range(q0, q1):
        m = qoff[qi + 1] - qoff[qi]
        e = qerr[qi >> 1]
        if m > e:
            total += plan_shape(m, e, lmax, plan.windows, plan.step)[1]
    rows = np.empty((total, 7), dtype=np.int64)
    _fill_lookups(queries, q0, q1, plan, lmax, seed_start, memo, rows)
    return rows


@njit(cache=True, nogil=True, _nrt=False)  # no atomic reference counts on the per-query slices (align._align_block)
def _fill_lookups(queries: Queries, q0: int, q1: int, plan: Plan, lmax: int, seed_start: np.ndarray, memo: Memo,
                  rows: np.ndarray) -> None:
    """_chunk_lookups' rows, written into rows."""
    qcodes, qoff, qerr = queries
    care, windows, step = plan.care, plan.windows, plan.step
    ids, known = memo
    span = care[care.size - 1] + 1
    t = 0
    for qi in range(q0, q1):
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        m = q.size
        e = qerr[qi >> 1]
        if m <= e:
            continue
        length, k = plan_shape(m, e, lmax, windows, step)
        for i in range(k):
            o = plan_offset(m, length, k, step, i)
            a0, a1, r = lookup_key(q, o, length, care)
            rows[t, 0] = qi
            rows[t, 1] = o
            rows[t, 2] = length
            rows[t, 3] = r
            rows[t, 4] = a0
            rows[t, 5] = a1
            rows[t, 6] = word_at(q, o + span, max(r, 0))
            recalled = ids.size > 0 and _recall(known[ids[qi]], o, length, rows[t])
            if r >= 0 and not recalled:
                prefetch(seed_start, a0)
            t += 1


@njit(cache=True, nogil=True, inline="always")
def _recall(kept: np.ndarray, o: int, length: int, row: np.ndarray) -> bool:
    """Whether a query's kept lookups (its row of `known`) hold window [o, o + length); if so the lookup row
    takes r = RECALLED and the range."""
    if kept[0] != length:
        return False
    for k in range(kept[1]):
        if kept[2 + 3 * k] == o:
            row[3] = RECALLED
            row[4] = kept[3 + 3 * k]
            row[5] = kept[4 + 3 * k]
            return True
    return False


@njit(cache=True, nogil=True, _nrt=False)
def _keep(rows: np.ndarray, memo: Memo) -> None:
    """Each query's lookups of this chunk (rows after the searches: (a0, a1) its position range, empty when none)
    into its row of the memo, where they fit and each found one range at most."""
    ids, known = memo
    t = 0
    while t < rows.shape[0]:
        qi = rows[t, 0]
        u = t
        ok = True
        while u < rows.shape[0] and rows[u, 0] == qi:
            ok = ok and rows[u, 3] != UNKEPT
            u += 1
        kept = known[ids[qi]]
        if ok and u - t <= KNOWN:
            kept[0] = rows[t, 2]
            kept[1] = u - t
            for k in range(u - t):
                kept[2 + 3 * k] = rows[t + k, 1]
                kept[3 + 3 * k] = rows[t + k, 4]
                kept[4 + 3 * k] = rows[t + k, 5]
        else:
            kept[0] = -1
        t = u


@njit(cache=True, nogil=True, _nrt=False)
def _open_blocks(rows: np.ndarray, ix: SeedBlocks, ph: Tables | None) -> None:
    """Replace each lookup's seed_start indexes by its seed block [b0, b1) and prefetch where its search
    starts: the middle of the block for a binary search, the block's positions for a perfect hash or a
    lookup with no neighborhood part."""
    seed_start, nbs, nb_pos = ix.seed_start, ix.nbs, ix.nb_pos
    for t in range(rows.shape[0]):
        if rows[t, 3] < 0:
            continue
        b0 = seed_start[rows[t, 4]]
        b1 = seed_start[rows[t, 5]]
        rows[t, 4] = b0
        rows[t, 5] = b1
        if ph is None and rows[t, 3] > 0:
            prefetch(nbs, b0)
            prefetch(nbs, (b0 + b1) >> 1)
            prefetch(nbs, b1 - 1)
        else:
            prefetch(nb_pos, b0)


@njit(cache=True, nogil=True, _nrt=False)
def _narrow_blocks(rows: np.ndarray, l: int, ix: SeedBlocks) -> None:
    """With fe = 0 (one pattern a lookup): narrow each opened lookup's block to the neighborhoods that match,
    so that _search finds them again in cache, and prefetch where their positions start and end in nb_pos:
    the sweep after _open_blocks (those two reads missed one lookup after another: ragout16, --best, one
    thread, 400,000 reads: the count pass 0.75-0.80 -> 0.65 s)."""
    nbs, nb_pos = ix.nbs, ix.nb_pos
    for t in range(rows.shape[0]):
        r = rows[t, 3]
        if r < 0:
            continue
        b0, b1 = rows[t, 4], rows[t, 5]
        if r > 0 and b0 < b1:
            n = block_ranges(rows[t, 6], r, l, 0, b0, b1, nbs, rows[t:t + 1, 4:6], rows[t, :0])
            if n == 0:
                rows[t, 5] = rows[t, 4]
        prefetch(nb_pos, rows[t, 4])
        prefetch(nb_pos, rows[t, 5])


@njit(cache=True, nogil=True, inline="always")
def _search(queries: Queries, rows: np.ndarray, t: int, plan: Plan, ix: SeedBlocks, ph: Tables | None,
            out: np.ndarray, scratch: np.ndarray) -> int:
    """Position ranges of opened lookup t (rows of _chunk_lookups after _open_blocks), as _lookup gives
    them: the binary search starts from the block and word already read (no slice of the query: a view
    per lookup cost a third of the search); the perfect hash looks the window up whole."""
    r = rows[t, 3]
    if r < 0:
        return 0
    if ph is not None:
        qi = rows[t, 0]
        return _lookup(queries.codes[queries.off[qi]:queries.off[qi + 1]], rows[t, 1], rows[t, 2], plan, ix, ph, out,
                       scratch)
    n = block_ranges(rows[t, 6], r, plan.l, plan.fe, rows[t, 4], rows[t, 5], ix.nbs, out, scratch)
    to_positions(out, n, ix.nb_pos)
    return n


@njit(cache=True, nogil=True)
def count_candidates(queries: Queries, plan: Plan, ix: SeedBlocks, ph: Tables | None, memo: Memo, saved: Saved,
                     counts: np.ndarray, q_lo: int, q_hi: int) -> None:
    """Candidates per query of queries [q_lo, q_hi), added to counts (zeroed by the caller). The position
    ranges found are saved per query (rows of saved.ranges: offset, range start, range end) when they fit, so
    that the fill pass need not search the index again; saved.n[q] = -1 when they did not fit. ph: the perfect
    hashes to look patterns up in, or None for binary search. memo: the lookups of the batch's strata
    rounds, taken from it and kept in it (no_memo(): none)."""
    l, fe = plan.l, plan.fe
    cap = max_patterns(l, fe)
    lmax = plan.care[plan.care.size - 1] + 1 + l
    for q0 in range(q_lo, q_hi, CHUNK):
        q1 = min(q_hi, q0 + CHUNK)
        ranges = np.empty((cap, 2), dtype=np.int64)
        scratch = new_scratch(ph, cap)
        rows = _chunk_lookups(queries, q0, q1, plan, lmax, ix.seed_start, memo)
        _open_blocks(rows, ix, ph)
        if ph is None and fe == 0:
            _narrow_blocks(rows, l, ix)
        _count_chunk(queries, rows, plan, ix, ph, saved, counts, q0, q1, ranges, scratch)
        if memo.ids.size:
            _keep(rows, memo)


@njit(cache=True, nogil=True, _nrt=False)  # no atomic reference counts per lookup (align._align_block)
def _count_chunk(queries: Queries, rows: np.ndarray, plan: Plan, ix: SeedBlocks, ph: Tables | None, saved: Saved,
                 counts: np.ndarray, q0: int, q1: int, ranges: np.ndarray, scratch: np.ndarray) -> None:
    """count_candidates' searches of a chunk's opened lookups (rows), with its ranges and scratch."""
    n_saved = saved.n
    room = saved.ranges.shape[1]
    for qi in range(q0, q1):
        n_saved[qi] = 0  # ranges found so far; -1 at the end where they did not fit
    for t in range(rows.shape[0]):
        qi = rows[t, 0]
        if rows[t, 3] == RECALLED:
            ranges[0, 0] = rows[t, 4]
            ranges[0, 1] = rows[t, 5]
            n = 1 if rows[t, 5] > rows[t, 4] else 0
        else:
            n = _search(queries, rows, t, plan, ix, ph, ranges, scratch)
            rows[t, 4] = ranges[0, 0] if n == 1 else 0  # (the range, for the memo)
            rows[t, 5] = ranges[0, 1] if n == 1 else 0
            if n > 1:
                rows[t, 3] = UNKEPT
        for i in range(n):
            counts[qi] += ranges[i, 1] - ranges[i, 0]
            k = n_saved[qi]
            if k < room:
                saved.ranges[qi, k, 0] = rows[t, 1]
                saved.ranges[qi, k, 1] = ranges[i, 0]
                saved.ranges[qi, k, 2] = ranges[i, 1]
            n_saved[qi] = k + 1
    for qi in range(q0, q1):
        if n_saved[qi] > room:
            n_saved[qi] = -1


@njit(cache=True, nogil=True)
def fill_windows(queries: Queries, q_first: int, cand_off: np.ndarray, plan: Plan, ix: SeedBlocks,
                 ph: Tables | None, saved: Saved, out: Slots, q_lo: int, q_hi: int) -> None:
    """Verification windows (and their diagonals) of queries [q_lo, q_hi), sorted by start per query, in
    the slots of out, whose first is q_first's first window. ph as in count_candidates."""
    qcodes, qoff, qerr = queries
    care, l, windows, step, fe = plan
    n_saved = saved.n
    pos, ref_starts, win_start, win_end, win_diag = ix.pos, out.ref_starts, out.start, out.end, out.diag
    cap = max_patterns(l, fe)
    base = cand_off[q_first]
    for q0 in range(q_lo, q_hi, CHUNK):
        ranges = np.empty((cap, 2), dtype=np.int64)
        scratch = new_scratch(ph, cap)
        q1 = min(q_hi, q0 + CHUNK)
        _emit_saved(queries, base, cand_off, pos, saved, out, q0, q1)
        for qi in range(q0, q1):  # queries whose ranges were not saved, and those with more windows than sort_few sorts
            m = qoff[qi + 1] - qoff[qi]
            e = qerr[qi >> 1]
            if m <= e:
                continue
            lo, hi = cand_off[qi] - base, cand_off[qi + 1] - base
            if n_saved[qi] < 0:
                q = qcodes[qoff[qi]:qoff[qi + 1]]
                w = lo
                length, offsets = window_plan(m, e, care[care.size - 1] + 1 + l, windows, step)
                for o in offsets:
                    n = _lookup(q, o, length, plan, ix, ph, ranges, scratch)
                    for i in range(n):
                        w = emit_windows(o, ranges[i, 0], ranges[i, 1], m, e, pos, ref_starts, w, win_start, win_end,
                                         win_diag)
            if n_saved[qi] < 0 or hi - lo > SORT_FEW:
                sort_windows(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi])


@njit(cache=True, nogil=True, _nrt=False)  # no atomic reference counts per query (align._align_block)
def _emit_saved(queries: Queries, base: int, cand_off: np.ndarray, pos: np.ndarray, saved: Saved, out: Slots,
                q0: int, q1: int) -> None:
    """fill_windows' windows of the queries [q0, q1) whose ranges were saved, each query's sorted where sort_few
    sorts them."""
    qoff, qerr = queries.off, queries.err
    ref_starts, win_start, win_end, win_diag = out
    ranges, n_saved = saved
    for qi in range(q0, q1):  # where the saved ranges' positions are: one sweep of misses, as in count
        for k in range(max(n_saved[qi], 0)):
            prefetch(pos, ranges[qi, k, 1])
    for qi in range(q0, q1):
        m = qoff[qi + 1] - qoff[qi]
        e = qerr[qi >> 1]
        if m <= e or n_saved[qi] < 0:
            continue
        lo, hi = cand_off[qi] - base, cand_off[qi + 1] - base
        w = lo
        for k in range(n_saved[qi]):
            w = emit_windows(ranges[qi, k, 0], ranges[qi, k, 1], ranges[qi, k, 2], m, e, pos, ref_starts, w,
                             win_start, win_end, win_diag)
        sort_few(win_start, win_end, win_diag, lo, hi)
