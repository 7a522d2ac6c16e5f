"""Seed + filter over the neighborhood index with mflBPR (Levenshtein): the `bpr` filter.

Each lookup of the bpr plan (plan.lookup_plan) takes its seed exactly (the seed block's address) and
matches its r = length - span neighborhood bases against every unique neighborhood of the block with
the anchored mflBPR automaton, h neighborhoods per 64-bit register, at most `fe` edits. Every matching
neighborhood's positions p give a verification window [p - o - e, p - o + m + e) (o: the lookup's read
offset), clipped to p's sequence, as in the bs filter. Two passes (count, then fill) with the same
scan, so repetitive reads keep all their hits.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.filter.mflbpr import fill_tables, match_group, slices, table_buffers
from seedmap.filter.neighborhood_passes import Plan, SeedBlocks
from seedmap.filter.plan import lookup_plan
from seedmap.filter.seed_address import seed_block
from seedmap.filter.windows import Saved, Slots, emit_windows, sort_windows
from seedmap.io.columns import Queries


class Automaton(NamedTuple):
    """A query's mflBPR buffers, allocated once for all its lookups: regs, the fe + 1 registers of
    match_group; tables and masks, the pattern's (mflbpr.fill_tables)."""

    regs: np.ndarray
    tables: np.ndarray
    masks: np.ndarray


@njit(cache=True, nogil=True)
def _automaton(length: int, span: int, fe: int) -> Automaton:
    """The buffers of a query's lookups of `length` bases, the seed's span among them."""
    tables, masks = table_buffers(max(length - span, 1))
    return Automaton(np.empty(fe + 1, dtype=np.uint64), tables, masks)


@njit(cache=True, nogil=True, _nrt=False)
def _lookup(q: np.ndarray, o: int, length: int, e: int, plan: Plan, ix: SeedBlocks, bpr: Automaton, write: bool,
            out: Slots, w: int, saved: np.ndarray, ns: int) -> tuple[int, int]:
    """One lookup of the query q, searched with e edits. Count (write False): w grows by the positions
    found, whose ranges are kept in `saved` (the query's rows: offset, first, last position index) while
    there is room, ns counting them all. Emit (write True): windows written into out from slot w on.
    Returns (w, ns)."""
    care, l, fe = plan.care, plan.l, plan.fe
    nbs, nb_pos, pos = ix.nbs, ix.nb_pos, ix.pos
    ref_starts, win_start, win_end, win_diag = out
    regs, tables, masks = bpr
    m = q.size
    b0, b1, r = seed_block(q, o, length, care, ix.seed_start)
    if r < 0 or b0 == b1:
        return w, ns
    if r == 0:
        if write:
            return emit_windows(o, nb_pos[b0], nb_pos[b1], m, e, pos, ref_starts, w, win_start, win_end, win_diag), ns
        if ns < saved.shape[0]:
            saved[ns, 0], saved[ns, 1], saved[ns, 2] = o, nb_pos[b0], nb_pos[b1]
        return w + nb_pos[b1] - nb_pos[b0], ns + 1
    span = care[care.size - 1] + 1
    s, h = slices(r)
    fill_tables(q[o + span:o + length], r, tables, masks)
    for g0 in range(b0, b1, h):
        n = min(h, b1 - g0)
        acc = match_group(tables, masks, r, fe, nbs, g0, n, l, True, regs)
        if acc == 0:
            continue
        for slot in range(n):
            if (acc >> np.uint64(slot * s + s - 1)) & np.uint64(1):
                k = g0 + slot
                if write:
                    w = emit_windows(o, nb_pos[k], nb_pos[k + 1], m, e, pos, ref_starts, w, win_start, win_end,
                                     win_diag)
                else:
                    if ns < saved.shape[0]:
                        saved[ns, 0], saved[ns, 1], saved[ns, 2] = o, nb_pos[k], nb_pos[k + 1]
                    ns += 1
                    w += nb_pos[k + 1] - nb_pos[k]
    return w, ns


@njit(cache=True, nogil=True)
def count_candidates(queries: Queries, plan: Plan, ix: SeedBlocks, saved: Saved, counts: np.ndarray, q_lo: int,
                     q_hi: int) -> None:
    """Candidates per query of queries [q_lo, q_hi) in counts (zeroed by the caller). The position ranges
    found are kept per query (saved.ranges[q]) so that the fill pass need not scan again; saved.n[q] = -1 when
    they did not fit."""
    qcodes, qoff, qerr = queries
    care, l, windows, step, fe = plan
    ranges, n_saved = saved
    span = care[care.size - 1] + 1
    none = np.zeros(0, dtype=np.int64)
    nowhere = Slots(none, none, none, none)
    for qi in range(q_lo, q_hi):
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        m = q.size
        e = qerr[qi >> 1]
        n_saved[qi] = 0
        if m <= e:
            continue
        length, offsets = lookup_plan(m, e, span, l, fe, windows, step)
        bpr = _automaton(length, span, fe)
        c = 0
        ns = 0
        for o in offsets:
            c, ns = _lookup(q, o, length, e, plan, ix, bpr, False, nowhere, c, ranges[qi], ns)
        counts[qi] = c
        n_saved[qi] = ns if ns <= ranges.shape[1] else -1


@njit(cache=True, nogil=True)
def fill_windows(queries: Queries, q_first: int, cand_off: np.ndarray, plan: Plan, ix: SeedBlocks, saved: Saved,
                 out: Slots, q_lo: int, q_hi: int) -> None:
    """Verification windows (and their diagonals) of queries [q_lo, q_hi), sorted by start per query, in
    the slots of out, whose first is q_first's first window."""
    qcodes, qoff, qerr = queries
    care, l, windows, step, fe = plan
    ranges, n_saved = saved
    pos, ref_starts, win_start, win_end, win_diag = ix.pos, out.ref_starts, out.start, out.end, out.diag
    base = cand_off[q_first]
    span = care[care.size - 1] + 1
    for qi in range(q_lo, q_hi):
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        m = q.size
        e = qerr[qi >> 1]
        if m <= e:
            continue
        w = cand_off[qi] - base
        if n_saved[qi] >= 0:
            for k in range(n_saved[qi]):
                w = emit_windows(ranges[qi, k, 0], ranges[qi, k, 1], ranges[qi, k, 2], m, e, pos, ref_starts, w,
                                 win_start, win_end, win_diag)
        else:
            length, offsets = lookup_plan(m, e, span, l, fe, windows, step)
            bpr = _automaton(length, span, fe)
            for o in offsets:
                w, _ = _lookup(q, o, length, e, plan, ix, bpr, True, out, w, ranges[qi], 0)
        lo, hi = cand_off[qi] - base, cand_off[qi + 1] - base
        sort_windows(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi])
