"""Seed + filter over the neighborhood index with mflBPR (Levenshtein): the `bpr` filter.

Each lookup of the bpr plan (plan.lookup_plan) takes its seed exactly (the seed block's address) and
matches its r = length - span neighborhood bases against every unique neighborhood of the block with
the anchored mflBPR automaton, h neighborhoods per 64-bit register, at most `fe` edits. Every matching
neighborhood's positions p give a verification window [p - o - e, p - o + m + e) (o: the lookup's read
offset), clipped to p's sequence, as in the bs filter. Two passes (count, then fill) with the same
scan, so repetitive reads keep all their hits.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.filter.mflbpr import fill_tables, match_group, slices, table_buffers
from seedmap.filter.plan import lookup_plan
from seedmap.filter.seed_address import seed_block
from seedmap.filter.windows import emit_windows, sort_windows


@njit(cache=True, nogil=True, _nrt=False)
def _lookup(q: np.ndarray, o: int, length: int, m: int, e: int, care: np.ndarray, l: int, fe: int,
            seed_start: np.ndarray, nbs: np.ndarray, nb_pos: np.ndarray, pos: np.ndarray, ref_starts: np.ndarray,
            write: bool, w: int, win_start: np.ndarray, win_end: np.ndarray, win_diag: np.ndarray,
            regs: np.ndarray, tables: np.ndarray, masks: np.ndarray, saved: np.ndarray, ns: int) -> tuple[int, int]:
    """One lookup. Count (write False): w grows by the positions found, whose ranges are kept in `saved`
    (rows: offset, first, last position index) while there is room, ns counting them all. Emit (write
    True): windows written from slot w on. Returns (w, ns)."""
    b0, b1, r = seed_block(q, o, length, care, seed_start)
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
def count_candidates(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, care: np.ndarray, l: int,
                     windows: int, step: int, fe: int, seed_start: np.ndarray, nbs: np.ndarray,
                     nb_pos: np.ndarray, saved: np.ndarray, n_saved: np.ndarray, counts: np.ndarray, q_lo: int,
                     q_hi: int) -> None:
    """Candidates per query of queries [q_lo, q_hi) in counts (zeroed by the caller). The position ranges
    found are kept per query (saved[q]) so that the fill pass need not scan again; n_saved[q] = -1 when they
    did not fit."""
    span = care[care.size - 1] + 1
    none = np.zeros(0, dtype=np.int64)
    for qi in range(q_lo, q_hi):
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        m = q.size
        e = qerr[qi >> 1]
        n_saved[qi] = 0
        if m <= e:
            continue
        length, offsets = lookup_plan(m, e, span, l, fe, windows, step)
        regs = np.empty(fe + 1, dtype=np.uint64)
        tables, masks = table_buffers(max(length - span, 1))
        c = 0
        ns = 0
        for o in offsets:
            c, ns = _lookup(q, o, length, m, e, care, l, fe, seed_start, nbs, nb_pos, none, none, False, c, none,
                            none, none, regs, tables, masks, saved[qi], ns)
        counts[qi] = c
        n_saved[qi] = ns if ns <= saved.shape[1] else -1


@njit(cache=True, nogil=True)
def fill_windows(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, q_first: int, q_last: int,
                 cand_off: np.ndarray, care: np.ndarray, l: int, windows: int, step: int, fe: int,
                 seed_start: np.ndarray, nbs: np.ndarray, nb_pos: np.ndarray, pos: np.ndarray,
                 ref_starts: np.ndarray, saved: np.ndarray, n_saved: np.ndarray, win_start: np.ndarray,
                 win_end: np.ndarray, win_diag: np.ndarray, q_lo: int, q_hi: int) -> None:
    """Verification windows (and their diagonals) of queries [q_lo, q_hi), sorted by start per query, in
    the windows of queries [q_first, q_last) (win_start[0] is q_first's first)."""
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
                w = emit_windows(saved[qi, k, 0], saved[qi, k, 1], saved[qi, k, 2], m, e, pos, ref_starts, w, win_start,
                                 win_end, win_diag)
        else:
            length, offsets = lookup_plan(m, e, span, l, fe, windows, step)
            regs = np.empty(fe + 1, dtype=np.uint64)
            tables, masks = table_buffers(max(length - span, 1))
            for o in offsets:
                w, _ = _lookup(q, o, length, m, e, care, l, fe, seed_start, nbs, nb_pos, pos, ref_starts, True, w,
                               win_start, win_end, win_diag, regs, tables, masks, saved[qi], 0)
        lo, hi = cand_off[qi] - base, cand_off[qi + 1] - base
        sort_windows(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi])
