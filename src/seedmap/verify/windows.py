"""Verification of merged candidate windows on the CPU, blocks of them spread over threads (bitvector.py per
window, or the packed comparisons of one_edit.py and two_edit.py for reads searched with e <= 2): the locations of
each window's alignments. A device backend has its twin (backends/cuda/locations.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.intrinsics import prefetch
from seedmap.io.columns import PackedRef, Queries
from seedmap.io.reference import unpack_into
from seedmap.order import lex_order
from seedmap.ranges import expand_ranges
from seedmap.spread import spread
from seedmap.verify.bitvector import build_masks, window_locations
from seedmap.verify.bulk import ALL, ONE, no_n
from seedmap.verify.one_edit import one_edit_locations
from seedmap.verify.packed import pack_read, ref_word
from seedmap.verify.two_edit import ref_words2, two_edit_locations

BLOCK = 64  # windows per block: scratch buffers are allocated once per block
AHEAD = 4  # windows ahead whose reference is prefetched
SLOTS = 4  # locations kept per window on the first pass; windows with more are verified again


class Windows(NamedTuple):
    """Merged candidate windows: window w of query q[w] is reference [win[w, 0], win[w, 1]), its seeds' diagonals
    win[w, 2] to win[w, 3] (filter/windows.merge_windows' rows)."""

    q: np.ndarray
    win: np.ndarray


class Slots(NamedTuple):
    """A window kernel's output: window w's locations (start, end, distance) in slots off[w] to off[w + 1] (as
    many as fit), and how many it found (found[w]; more than its slots: verified again)."""

    off: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dist: np.ndarray
    found: np.ndarray


class FewEdits(NamedTuple):
    """A block's scratch for the packed comparisons of reads searched with e <= 2: the read in words (pack_read),
    one_edit_locations' diagonals (diag), two_edit_locations' facts and masks, the reference words (rw)."""

    words: np.ndarray
    diag: np.ndarray
    facts: np.ndarray
    masks: np.ndarray
    rw: np.ndarray


class Columns(NamedTuple):
    """A block's scratch for _by_columns: the read's match masks (build_masks' peq, rpeq, rq), window_locations'
    bit vectors (pv, mv), distance column (dcol) and band masks (fb), the unpacked window (t)."""

    peq: np.ndarray
    rpeq: np.ndarray
    rq: np.ndarray
    pv: np.ndarray
    mv: np.ndarray
    t: np.ndarray
    dcol: np.ndarray
    fb: np.ndarray


@njit(cache=True, nogil=True, inline="always")
def _scratch(qoff: np.ndarray, wins: Windows, lo: int, hi: int) -> tuple[int, int]:
    """(widest window, longest read) of windows [lo, hi): the sizes of a block's scratch."""
    win_q, win = wins.q, wins.win
    width = 1
    mmax = 1
    for w in range(lo, hi):
        width = max(width, win[w, 1] - win[w, 0])
        mmax = max(mmax, qoff[win_q[w] + 1] - qoff[win_q[w]])
    return width, mmax


@njit(cache=True, nogil=True, inline="always")
def _prefetch_window(win: np.ndarray, w: int, hi: int, ref: PackedRef) -> None:
    """The reference of the window a few ahead of w: random lines of a 12+ MB array."""
    if w + AHEAD < hi:
        ahead = win[w + AHEAD, 0]
        prefetch(ref.packed, ahead >> 2)
        prefetch(ref.packed, (ahead >> 2) + 32)
        prefetch(ref.nmask, ahead >> 3)


@njit(cache=True, nogil=True, inline="always")
def _column_scratch(width: int, mmax: int) -> Columns:
    """_by_columns' scratch for a block (its widest window, longest read)."""
    nwords = (mmax + 63) >> 6
    return Columns(np.empty(8 * (nwords + 2), dtype=np.uint64), np.empty(8 * (nwords + 2), dtype=np.uint64),
                   np.empty(mmax, dtype=np.uint8), np.empty(nwords, dtype=np.uint64),
                   np.empty(nwords, dtype=np.uint64), np.empty(width, dtype=np.uint8),
                   np.empty(width + 1, dtype=np.int64), np.empty(8, dtype=np.uint64))


@njit(cache=True, nogil=True, inline="always")
def _by_columns(cols: Columns, m: int, e: int, ws: int, we: int, ref: PackedRef, loc_start: np.ndarray,
                loc_end: np.ndarray, loc_dist: np.ndarray) -> int:
    """The locations of window [ws, we) by window_locations on the unpacked window, in reference positions;
    their number."""
    wt = cols.t[:we - ws]
    unpack_into(ref.packed, ref.nmask, ws, wt)
    k = window_locations(cols.peq, cols.rpeq, m, e, wt, cols.pv, cols.mv, cols.dcol, cols.fb, loc_start, loc_end,
                         loc_dist)
    for i in range(min(k, loc_start.size)):
        loc_start[i] += ws
        loc_end[i] += ws
    return k


@njit(cache=True, nogil=True)
def _verify_windows(queries: Queries, wins: Windows, ref: PackedRef, out: Slots, b0: int, b1: int) -> None:
    """Blocks [b0, b1) of BLOCK windows, scratch per block. A window of a read searched with e <= 2 is verified on the
    packed read and reference by one_edit.py (e <= 1) or two_edit.py (a few hundred ns a window against a thousand
    by columns); the others, and a window with an N in it or its read or at the reference's first bases, by
    window_locations' bit-vector columns on the unpacked window (_by_columns)."""
    nw = wins.q.size
    for blk in range(b0, b1):
        lo, hi = blk * BLOCK, min(nw, (blk + 1) * BLOCK)
        width, mmax = _scratch(queries.off, wins, lo, hi)
        few = _few_edit_width(queries, wins, lo, hi)  # (the packed kernels' scratch: none for e >= 3)
        fe = FewEdits(np.empty((mmax + 31) >> 5, dtype=np.uint64), np.empty(3 * (few + 3), dtype=np.int64),
                      np.empty((few + 5, 5), dtype=np.int64), np.empty((few + 5, (mmax + 31) >> 5), dtype=np.uint64),
                      np.empty(ref_words2(1, few + mmax), dtype=np.uint64))  # (rw: every m <= mmax, and one_edit's)
        _verify_block(queries, wins, ref, out, fe, _column_scratch(width, mmax), lo, hi)


@njit(cache=True, nogil=True, inline="always")
def _few_edit_width(queries: Queries, wins: Windows, lo: int, hi: int) -> int:
    """The widest window of windows [lo, hi) whose read is searched with e <= 2 (0 if none)."""
    win_q, win = wins.q, wins.win
    width = 0
    for w in range(lo, hi):
        if queries.err[win_q[w] >> 1] <= 2:
            width = max(width, win[w, 1] - win[w, 0])
    return width


@njit(cache=True, nogil=True, _nrt=False)  # no atomic reference counts on the per-window slices (align._align_block)
def _verify_block(queries: Queries, wins: Windows, ref: PackedRef, out: Slots, fe: FewEdits, cols: Columns, lo: int,
                  hi: int) -> None:
    """Windows [lo, hi) of _verify_windows, with a block's scratch."""
    qcodes, qoff, qerr = queries
    win_q, win = wins
    packed, nmask = ref
    slot_off, loc_start, loc_end, loc_dist, loc_count = out
    words = fe.words
    packed_for = -1  # the query in words (read_ok: it has no N)
    masks_for = -1  # the query in peq, rpeq
    read_ok = False
    for w in range(lo, hi):
        qi = win_q[w]
        a = qoff[qi]
        m = qoff[qi + 1] - a
        e = qerr[qi >> 1]
        if qi != packed_for and e <= 2:
            read_ok = pack_read(qcodes[a:a + m], words)
            packed_for = qi
        _prefetch_window(win, w, hi, ref)
        ws, we = win[w, 0], win[w, 1]
        s0, s1 = slot_off[w], slot_off[w + 1]
        if e <= 2 and read_ok and ws >= max(e, 1) and we > ws and no_n(nmask, ws, we):
            if e <= 1:
                k = one_edit_locations(words, m, e, packed, ws, we - ws, fe.diag, fe.rw, loc_start[s0:s1],
                                       loc_end[s0:s1], loc_dist[s0:s1])
            else:
                k = two_edit_locations(words, m, e, packed, ws, we - ws, fe.facts, fe.masks, fe.rw, loc_start[s0:s1],
                                       loc_end[s0:s1], loc_dist[s0:s1])
            for i in range(min(k, s1 - s0)):
                loc_start[s0 + i] += ws
                loc_end[s0 + i] += ws
        else:
            if qi != masks_for:
                build_masks(qcodes, a, m, cols.peq, cols.rpeq, cols.rq)
                masks_for = qi
            k = _by_columns(cols, m, e, ws, we, ref, loc_start[s0:s1], loc_end[s0:s1], loc_dist[s0:s1])
        loc_count[w] = k


@njit(cache=True, nogil=True, inline="always")
def _counted_run(d: int, prev: int, n: int, out: np.ndarray) -> int:
    """The runs counted (n before) after an exact occurrence on diagonal d, the last one on prev: a new run,
    its diagonal in out while there is room, unless d follows prev."""
    if d != prev + 1:
        if n < out.size:
            out[n] = d
        n += 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def _exact_runs(q: np.ndarray, t: np.ndarray, out: np.ndarray) -> int:
    """Runs of exact occurrences of q in t (an N never matches), each at its first diagonal in out (as many
    as fit); returns how many. Occurrences on consecutive diagonals (a homopolymer) have consecutive ends,
    so they form one run."""
    m = q.size
    n = 0
    prev = -2
    for d in range(t.size - m + 1):
        i = 0
        while i < m and t[d + i] == q[i] and q[i] <= 3:
            i += 1
        if i == m:
            n = _counted_run(d, prev, n, out)
            prev = d
    return n


@njit(cache=True, nogil=True, inline="always")
def _packed_runs(words: np.ndarray, m: int, packed: np.ndarray, d_lo: int, d_hi: int, out: np.ndarray) -> int:
    """_exact_runs on the packed reference: diagonals d_lo..d_hi (reference positions, N-free), 32 bases a
    comparison; first diagonals of the runs of exact occurrences in out (as many as fit), their number."""
    nw = (m + 31) >> 5
    tail = np.uint64(2 * (m - ((nw - 1) << 5)))
    last_mask = ALL if tail == np.uint64(64) else (ONE << tail) - ONE
    n = 0
    prev = -2
    for d in range(d_lo, d_hi + 1):
        hit = True
        for k in range(nw):
            x = ref_word(packed, d + (k << 5)) ^ words[k]
            if k == nw - 1:
                x &= last_mask
            if x != 0:
                hit = False
                break
        if hit:
            n = _counted_run(d, prev, n, out)
            prev = d
    return n


@njit(cache=True, nogil=True)
def _exact_windows(queries: Queries, wins: Windows, ref: PackedRef, out: Slots, b0: int, b1: int) -> None:
    """e = 0 (_verify_windows' slots and counts, blocks [b0, b1)): a hit is an exact occurrence on one of the window's
    diagonals [win[w, 2], win[w, 3]]. The read is packed once, 32 bases a word, and compared with the packed
    reference a word at a time (ragout16, --best's round 0, one thread: 250 -> 195 ns a window against unpacking
    the window and comparing base by base; ref_code base by base, twice over for a count pass and a fill pass,
    was half of a --best run's verification before that); a window with an N in its reference is unpacked."""
    nw = wins.q.size
    for blk in range(b0, b1):
        lo, hi = blk * BLOCK, min(nw, (blk + 1) * BLOCK)
        width, mmax = _scratch(queries.off, wins, lo, hi)
        _exact_block(queries, wins, ref, out, np.empty(width, dtype=np.uint8),
                     np.empty((mmax + 31) >> 5, dtype=np.uint64), lo, hi)


@njit(cache=True, nogil=True, _nrt=False)  # no atomic reference counts on the per-window slices (align._align_block)
def _exact_block(queries: Queries, wins: Windows, ref: PackedRef, out: Slots, t: np.ndarray, words: np.ndarray,
                 lo: int, hi: int) -> None:
    """Windows [lo, hi) of _exact_windows, with a block's scratch: the unpacked window (t), the read in words."""
    qcodes, qoff = queries.codes, queries.off
    win_q, win = wins
    packed, nmask = ref
    slot_off, loc_start, loc_end, loc_dist, loc_count = out
    cur = -1
    read_ok = False
    for w in range(lo, hi):
        qi = win_q[w]
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        m = q.size
        if qi != cur:
            read_ok = pack_read(q, words)
            cur = qi
        _prefetch_window(win, w, hi, ref)
        d_lo, d_hi = max(win[w, 2], win[w, 0]), min(win[w, 3], win[w, 1] - m)
        if d_hi < d_lo or not read_ok:  # (a read N never matches)
            loc_count[w] = 0
            continue
        s0, s1 = slot_off[w], slot_off[w + 1]
        if no_n(nmask, d_lo, d_hi + m):  # (else: compared base by base)
            k = _packed_runs(words, m, packed, d_lo, d_hi, loc_start[s0:s1])
        else:
            wt = t[:d_hi - d_lo + m]
            unpack_into(packed, nmask, d_lo, wt)
            k = _exact_runs(q, wt, loc_start[s0:s1])
            for i in range(min(k, s1 - s0)):
                loc_start[s0 + i] += d_lo
        for i in range(min(k, s1 - s0)):
            loc_end[s0 + i] = loc_start[s0 + i] + m
            loc_dist[s0 + i] = 0
        loc_count[w] = k


def _run_exact(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win: np.ndarray,
               packed: np.ndarray, nmask: np.ndarray, cap: np.ndarray) -> Slots:
    """_run at e = 0."""
    return _spread_blocks(_exact_windows, qcodes, qoff, qerr, win_q, win, packed, nmask, cap)


def _blocks(n: int) -> int:
    return (n + BLOCK - 1) // BLOCK


def slot_offsets(cap: np.ndarray) -> tuple[np.ndarray, int]:
    """Where each window's location slots start (cap[w] slots for window w, then the end), and their total:
    the layout every window kernel (CPU, CUDA, OpenCL) writes its locations in."""
    slot_off = np.zeros(cap.size + 1, dtype=np.int64)
    np.cumsum(cap, out=slot_off[1:])
    return slot_off, int(slot_off[-1])


def _slots(n_windows: int, cap: np.ndarray) -> Slots:
    """A window kernel's output, cap[w] slots for window w."""
    slot_off, total = slot_offsets(cap)
    return Slots(slot_off, np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64),
                 np.empty(total, dtype=np.int32), np.zeros(n_windows, dtype=np.int64))


def _spread_blocks(kernel: Callable, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray,
                   win: np.ndarray, packed: np.ndarray, nmask: np.ndarray, cap: np.ndarray) -> Slots:
    """A window kernel's slots (_slots) filled by its blocks, spread over the threads."""
    out = _slots(win_q.size, cap)
    queries, wins, ref = Queries(qcodes, qoff, qerr), Windows(win_q, win), PackedRef(packed, nmask)
    spread(_blocks(win_q.size), lambda b0, b1: kernel(queries, wins, ref, out, b0, b1))
    return out


def _run(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win: np.ndarray,
         packed: np.ndarray, nmask: np.ndarray, cap: np.ndarray) -> Slots:
    return _spread_blocks(_verify_windows, qcodes, qoff, qerr, win_q, win, packed, nmask, cap)


def verify(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win: np.ndarray,
           packed: np.ndarray, nmask: np.ndarray, run: Callable = _run) -> tuple[np.ndarray, ...]:
    """Locations found in the windows: (query, start, end, distance), ordered by query then start.

    Windows of one query are disjoint and each holds every alignment of cost <= e ending inside it, so
    each location lies in one window. Each window keeps up to SLOTS locations; the few windows that have
    more (repeats) are verified again with room for all of them: nothing is lost. `run` verifies windows
    into their slots (_run's arguments and results): this CPU kernel, or a GPU's twin; in --best's rounds at
    e = 0 and e <= 1 the packed comparisons of _exact_windows and _verify_windows on the CPU even with a GPU's
    (a few hundred ns a window: less than a device's transfer of it). On the CPU, _verify_windows also compares
    packed the windows of reads searched with e = 2 (two_edit.py); a GPU verifies those itself.
    """
    if qerr.size and qerr.max() == 0:
        run = _run_exact
    elif qerr.size and qerr.max() == 1:
        run = _run
    cap = np.full(win_q.size, SLOTS, dtype=np.int64)
    slot_off, loc_start, loc_end, loc_dist, count = run(qcodes, qoff, qerr, win_q, win, packed, nmask, cap)
    over = np.flatnonzero(count > cap)
    if over.size:
        _, s2, e2, d2, _ = run(qcodes, qoff, qerr, win_q[over], win[over], packed, nmask, count[over])
        # Splice: overflowing windows take their full lists from the second pass.
        kept = np.minimum(count, cap)
        kept[over] = 0
        slot, of = expand_ranges(slot_off, kept)
        q = np.concatenate([win_q[of], np.repeat(win_q[over], count[over])])
        s = np.concatenate([loc_start[slot], s2])
        e = np.concatenate([loc_end[slot], e2])
        d = np.concatenate([loc_dist[slot], d2])
        order = lex_order(q, s)
        return q[order], s[order], e[order], d[order]
    slot, of = expand_ranges(slot_off, count)
    return win_q[of], loc_start[slot], loc_end[slot], loc_dist[slot]
