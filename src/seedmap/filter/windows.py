"""Verification windows, as every engine makes them: one per seed hit, [diag - e, diag + m + e) clipped to
the hit's sequence (put_window; emit_windows: those of a range of hits); a query's windows sorted by start
(sort_windows); overlapping ones merged (merge_one, merge_windows), which is the dedupe stage.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.io.reference import sequence_of
from seedmap.keysort import stable_argsort
from seedmap.spread import spread

ONE = np.uint64(1)


# Windows from which a radix sort beats numpy's argsort (1,000 windows: 31 -> 16 ns each, 100,000: 127 -> 31), and the
# merge sort that replaced it (about as fast below: 255 windows 53-59 ns each, the radix sort at 256 29-32).
RADIX_FROM = 256
SORT_FEW = 32  # windows sorted by insertion (sort_few); more by a merge sort, from RADIX_FROM by a radix sort
DIGIT = 11  # bits a radix pass sorts: its 2,048 counters stay in L1


class Slots(NamedTuple):
    """Where the candidates' windows go: start, end and diag, each window clipped to its sequence
    (ref_starts)."""

    ref_starts: np.ndarray
    start: np.ndarray
    end: np.ndarray
    diag: np.ndarray


class Saved(NamedTuple):
    """The hit ranges a count pass found, which its fill pass makes windows of (emit_windows): query q's
    ranges[q, :n[q]], rows (read offset, first, last hit index); n[q] = -1 where they did not fit."""

    ranges: np.ndarray
    n: np.ndarray


@njit(cache=True, nogil=True, inline="always")
def _bits(span: int) -> int:
    """Bits that hold every value of 0..span."""
    b = 0
    while (1 << b) <= span:
        b += 1
    return b


@njit(cache=True, nogil=True)
def _radix_keys(src: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """src (uint64 keys below 2^hi, in order of their bits below lo) sorted, stable: an LSD radix sort of bits
    [lo, hi), DIGIT bits a pass, every pass's counts from one read of the keys. Returns the sorted keys (src or a
    buffer of its size)."""
    n = src.size
    passes = (hi - lo + DIGIT - 1) // DIGIT
    mask = np.uint64((1 << DIGIT) - 1)
    count = np.zeros((max(passes, 1), 1 << DIGIT), dtype=np.int64)
    for i in range(n):
        k = src[i]
        for p in range(passes):
            count[p, (k >> np.uint64(lo + p * DIGIT)) & mask] += 1
    dst = np.empty(n, dtype=np.uint64)
    for p in range(passes):
        total = 0
        for b in range(1 << DIGIT):
            c = count[p, b]
            count[p, b] = total
            total += c
        sh = np.uint64(lo + p * DIGIT)
        for i in range(n):
            b = (src[i] >> sh) & mask
            dst[count[p, b]] = src[i]
            count[p, b] += 1
        src, dst = dst, src
    return src


@njit(cache=True, nogil=True)
def _radix_windows(ws: np.ndarray, we: np.ndarray, wd: np.ndarray) -> None:
    """sort_windows for many windows (a repeat's, located in random order): an LSD radix sort by start. A window
    is a start, its diagonal's offset from it and its length, and the offsets and lengths of a query's windows
    take a few bits (all alike but where a sequence's end clips them): where start, offset and length fit one
    64-bit key together, the keys are sorted (by start, then diagonal, then end) and unpacked, with no gather (a
    repeat's 6 M windows: 0.57 -> 0.2 s); otherwise the keys are (start, index), which keeps equal starts in
    their order, and the ends and diagonals are gathered by index."""
    n = ws.size
    least = ws.min()
    key_bits = _bits(ws.max() - least)
    off_lo, off_hi = wd[0] - ws[0], wd[0] - ws[0]
    len_lo, len_hi = we[0] - ws[0], we[0] - ws[0]
    for i in range(n):
        off_lo, off_hi = min(off_lo, wd[i] - ws[i]), max(off_hi, wd[i] - ws[i])
        len_lo, len_hi = min(len_lo, we[i] - ws[i]), max(len_hi, we[i] - ws[i])
    off_bits, len_bits = _bits(off_hi - off_lo), _bits(len_hi - len_lo)
    src = np.empty(n, dtype=np.uint64)
    if off_bits + len_bits <= DIGIT and key_bits + off_bits + len_bits <= 64:  # at most a pass more, no gather
        low = np.uint64(off_bits + len_bits)
        lb = np.uint64(len_bits)
        for i in range(n):
            src[i] = ((np.uint64(ws[i] - least) << low) | (np.uint64(wd[i] - ws[i] - off_lo) << lb)
                      | np.uint64(we[i] - ws[i] - len_lo))
        src = _radix_keys(src, 0, key_bits + off_bits + len_bits)
        omask = (ONE << np.uint64(off_bits)) - ONE
        lmask = (ONE << lb) - ONE
        for i in range(n):
            k = src[i]
            s = np.int64(k >> low) + least
            ws[i] = s
            wd[i] = s + np.int64((k >> lb) & omask) + off_lo
            we[i] = s + np.int64(k & lmask) + len_lo
        return
    index_bits = _bits(n - 1)
    ib = np.uint64(index_bits)
    for i in range(n):
        src[i] = (np.uint64(ws[i] - least) << ib) | np.uint64(i)
    src = _radix_keys(src, index_bits, index_bits + key_bits)
    ends = we.copy()
    diags = wd.copy()
    imask = (ONE << ib) - ONE
    for i in range(n):
        j = np.int64(src[i] & imask)
        ws[i] = np.int64(src[i] >> ib) + least
        we[i] = ends[j]
        wd[i] = diags[j]


@njit(cache=True, nogil=True, inline="always")
def sort_few(ws: np.ndarray, we: np.ndarray, wd: np.ndarray, lo: int, hi: int) -> bool:
    """Windows [lo, hi) sorted by start in place (insertion sort) when there are at most SORT_FEW of them; False,
    leaving them as they are, when there are more (sort_windows sorts them). No slice and nothing allocated: a
    kernel without reference counting may call it."""
    if hi - lo > SORT_FEW:
        return False
    for i in range(lo + 1, hi):
        a, b, c = ws[i], we[i], wd[i]
        j = i - 1
        while j >= lo and ws[j] > a:
            ws[j + 1] = ws[j]
            we[j + 1] = we[j]
            wd[j + 1] = wd[j]
            j -= 1
        ws[j + 1] = a
        we[j + 1] = b
        wd[j + 1] = c
    return True


@njit(cache=True, nogil=True)
def sort_windows(ws: np.ndarray, we: np.ndarray, wd: np.ndarray) -> None:
    """Sort by start (insertion sort for the usual handful, a merge sort for some, a radix sort for a repeat's
    many). The order of equal starts differs between them; merge_one's result does not depend on it."""
    n = ws.size
    if n >= RADIX_FROM:
        _radix_windows(ws, we, wd)
        return
    if sort_few(ws, we, wd, 0, n):
        return
    order = stable_argsort(ws)
    a, b, c = ws.copy(), we.copy(), wd.copy()
    for i in range(n):
        ws[i] = a[order[i]]
        we[i] = b[order[i]]
        wd[i] = c[order[i]]


@njit(cache=True, nogil=True, inline="always")
def put_window(diag: int, m: int, e: int, s: int, ref_starts: np.ndarray, w: int, win_start: np.ndarray,
               win_end: np.ndarray, win_diag: np.ndarray) -> None:
    """Slot w: the window [diag - e, diag + m + e) clipped to sequence s, and its diagonal."""
    win_start[w] = max(diag - e, ref_starts[s])
    win_end[w] = min(diag + m + e, ref_starts[s + 1])
    win_diag[w] = diag


@njit(cache=True, nogil=True, _nrt=False)
def emit_windows(o: int, lo: int, hi: int, m: int, e: int, pos: np.ndarray, ref_starts: np.ndarray, w: int,
                 win_start: np.ndarray, win_end: np.ndarray, win_diag: np.ndarray) -> int:
    """Windows of the hits pos[lo:hi] of the read part at offset o, from slot w on (put_window),
    diag = p - o; returns the next free slot."""
    for k in range(lo, hi):
        p = np.int64(pos[k])
        put_window(p - o, m, e, sequence_of(ref_starts, p), ref_starts, w, win_start, win_end, win_diag)
        w += 1
    return w


@njit(cache=True, nogil=True, _nrt=False)
def merge_one(starts: np.ndarray, ends: np.ndarray, diags: np.ndarray, out: np.ndarray, write: bool) -> int:
    """Merge overlapping windows (sorted by start); out rows: start, end, min diagonal, max diagonal."""
    n = 0
    i = 0
    while i < starts.size:
        s, e = starts[i], ends[i]
        dmin = dmax = diags[i]
        i += 1
        while i < starts.size and starts[i] < e:
            e = max(e, ends[i])
            dmin = min(dmin, diags[i])
            dmax = max(dmax, diags[i])
            i += 1
        if write:
            out[n, 0] = s
            out[n, 1] = e
            out[n, 2] = dmin
            out[n, 3] = dmax
        n += 1
    return n


def merge_windows(q_first: int, q_last: int, cand_off: np.ndarray, cand_len: np.ndarray, win_start: np.ndarray,
                  win_end: np.ndarray, win_diag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of overlapping windows per query (query q has cand_len[q] windows from cand_off[q], sorted
    by start): query array and rows (start, end, min diag, max diag), ordered by query then start."""
    nq = q_last - q_first
    counts = np.zeros(nq + 1, dtype=np.int64)
    dummy = np.zeros((0, 4), dtype=np.int64)
    spread(nq, lambda a, b: _merge(q_first, cand_off, cand_len, win_start, win_end, win_diag, counts, dummy,
                                   counts[:0], False, a, b), grain=MERGED)
    np.cumsum(counts, out=counts)
    uq = np.empty(counts[nq], dtype=np.int64)
    rows = np.empty((counts[nq], 4), dtype=np.int64)
    spread(nq, lambda a, b: _merge(q_first, cand_off, cand_len, win_start, win_end, win_diag, counts, rows, uq,
                                   True, a, b), grain=MERGED)
    return uq, rows


MERGED = 256  # the fewest queries a thread merges


@njit(cache=True, nogil=True, _nrt=False)
def _merge(q_first: int, cand_off: np.ndarray, cand_len: np.ndarray, win_start: np.ndarray, win_end: np.ndarray,
           win_diag: np.ndarray, counts: np.ndarray, rows: np.ndarray, uq: np.ndarray, write: bool, j0: int,
           j1: int) -> None:
    """merge_windows' passes over queries q_first + [j0, j1): each query's merged count in counts[j + 1], or
    (write) its merged rows from counts[j] on, and their query in uq."""
    base = cand_off[q_first]
    for j in range(j0, j1):
        lo = cand_off[q_first + j] - base
        hi = lo + cand_len[q_first + j]
        if write:
            a, b = counts[j], counts[j + 1]
            merge_one(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi], rows[a:b], True)
            uq[a:b] = q_first + j
        else:
            counts[j + 1] = merge_one(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi], rows, False)
