"""A batch's pooled FM rows located once: reads of one repeat family hand the same rows of the same strings to
verification, so the fill pass takes each row's text position from one locate of the union of the pooled
strings' row ranges instead of locating it again for every read (250 Mbp human-like genome, e = 5, a batch of
10,000 reads: 4.5 M rows in the pooled strings, 3.2 M distinct).

union_rows gives pos, every row of the union in order, which locate_rows turns in place into its text position
(SA value), and where each pooled string's rows lie in it; located_windows makes a pooled string's windows
from them. The strings of a query the pool had no room for (count_candidates' spill) are pooled with the rest.

Why every row is located, none placed from another string of its read: a one-row string that is a piece's
exact part, lying on the diagonal of its query's first one-row string, has that diagonal's position as its SA
value, which a comparison with the reference proves. But such strings are few of the rows located: 150 bp
reads, e = 4, --best, 100,000 reads of the 250 Mbp human-like genome: 1.43 M rows located, 181 k strings
eligible, 135 k placed. Most rows are repeat copies' (rows per query: round 1, e = 1, 2.9; the MAPQ stratum
of the reads with a unique best at one edit, e = 2, 9.9; the reads with none within one edit, e = 3, 12.3),
and placing cost more than it saved (1.03x the wall time, benchmarks/ab.py, 200,000 reads, -t 2)."""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.filter.fm_search import lf_unless_marked, prefetch_occ, sampled_position
from seedmap.filter.windows import put_window
from seedmap.intrinsics import prefetch_row
from seedmap.io.reference import sequence_of
from seedmap.spread import spread

LOCATE_BLOCK = 4096  # rows per block


def union_rows(rows: np.ndarray, row_at: np.ndarray, n_saved: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(at, pos): pos holds every row of the union of the pooled strings' row ranges [lo, hi) (columns 2 and 3;
    query qi's strings are rows[row_at[qi]:row_at[qi] + n_saved[qi]]) of an index of n rows, in order, for
    locate_rows; at[k] is where string k's rows start in pos (the rest of at is not set)."""
    at = np.empty(rows.shape[0], dtype=np.int64)
    u_lo, u_off, u_len = _union(rows, row_at, n_saved, at)
    # Rows and positions are below the text length: 4 bytes each where it fits 32 bits (1 Gbp human-like genome,
    # a batch of 10,000 reads: 13.7 M rows, 55 MB).
    pos = np.empty(int(u_off[-1] + u_len[-1]) if u_lo.size else 0, dtype=np.uint32 if n < 1 << 32 else np.int64)
    _expand(u_lo, u_off, u_len, pos)
    return at, pos


@njit(cache=True, nogil=True)
def _union(rows: np.ndarray, row_at: np.ndarray, n_saved: np.ndarray,
           at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """union_rows' union of the pooled strings' non-empty row ranges: each of its disjoint ranges' first row, where
    its rows start in pos, and how many it holds; at[k] set for every non-empty string k. (A kernel, not numpy:
    the sort and the gathers held the GIL, a few per cent of a --best run's two threads.)"""
    total = 0
    for qi in range(row_at.size):
        total += n_saved[qi]
    lo = np.empty(total, dtype=np.int64)
    hi = np.empty(total, dtype=np.int64)
    which = np.empty(total, dtype=np.int64)
    t = 0
    for qi in range(row_at.size):
        for k in range(row_at[qi], row_at[qi] + n_saved[qi]):
            if rows[k, 3] > rows[k, 2]:
                lo[t], hi[t], which[t] = rows[k, 2], rows[k, 3], k
                t += 1
    order = np.argsort(lo[:t])
    u_lo = np.empty(t, dtype=np.int64)
    u_off = np.empty(t, dtype=np.int64)
    u_len = np.empty(t, dtype=np.int64)
    nu = 0
    reach = 0  # the furthest end of the ranges so far: a range starting at or past it starts a new one
    for j in range(t):
        o = order[j]
        a, b = lo[o], hi[o]
        if nu == 0 or a >= reach:
            u_off[nu] = u_off[nu - 1] + u_len[nu - 1] if nu else 0
            u_lo[nu] = a
            u_len[nu] = b - a
            reach = b
            nu += 1
        elif b > reach:
            reach = b
            u_len[nu - 1] = b - u_lo[nu - 1]
        at[which[o]] = u_off[nu - 1] + a - u_lo[nu - 1]
    return u_lo[:nu], u_off[:nu], u_len[:nu]


@njit(cache=True, nogil=True, _nrt=False)
def _expand(start: np.ndarray, off: np.ndarray, length: np.ndarray, out: np.ndarray) -> None:
    """out[off[w] + i] = start[w] + i for every range w."""
    for w in range(start.size):
        for i in range(length[w]):
            out[off[w] + i] = start[w] + i


def locate_rows(pos: np.ndarray, counts: np.ndarray, fwd_occ: np.ndarray, fwd_mark: np.ndarray,
                fwd_ssa: np.ndarray) -> None:
    """Every row of pos replaced by its text position (SA value), LANES walked side by side (_locate_blocks)."""
    spread((pos.size + LOCATE_BLOCK - 1) // LOCATE_BLOCK,
           lambda b0, b1: _locate_blocks(pos, counts, fwd_occ, fwd_mark, fwd_ssa, b0, b1))


# Rows whose LF walks a block's locate keeps going at once. Each step of a walk is a cache miss or two that waits for
# the one before; independent walks overlap their misses, and a lane whose walk reached a sampled row takes the next
# row at once (fm_search.locate_four walks four in step until all four are done: about 6 steps for a mean of 3.5 with
# samples every 8 rows). 1 Gbp human-like genome, e = 5, 20,000 reads, -t 2, against locate_four in alternating runs:
# the candidates stage 10-15 % less CPU time, the run 7-14 % shorter, the same records.
LANES = 8


@njit(cache=True, nogil=True)
def _locate_blocks(pos: np.ndarray, counts: np.ndarray, fwd_occ: np.ndarray, fwd_mark: np.ndarray,
                   fwd_ssa: np.ndarray, b0: int, b1: int) -> None:
    """locate_rows of blocks [b0, b1) of LOCATE_BLOCK rows: LANES walks at a time (fm_search.locate, step by
    step), each lane taking the next row of the block as soon as its walk is done."""
    n = pos.size
    row = np.empty(LANES, dtype=np.int64)  # the lane's walk: where it is, its steps so far, the slot it fills
    steps = np.empty(LANES, dtype=np.int64)
    slot = np.empty(LANES, dtype=np.int64)
    for blk in range(b0, b1):
        lo = blk * LOCATE_BLOCK
        hi = min(n, lo + LOCATE_BLOCK)
        nxt = lo
        busy = 0
        for j in range(LANES):
            if nxt < hi:
                row[j], steps[j], slot[j] = np.int64(pos[nxt]), 0, nxt
                nxt += 1
                busy += 1
            else:
                slot[j] = -1
        while busy:
            for j in range(LANES):
                if slot[j] < 0:
                    continue
                i, k = lf_unless_marked(fwd_occ, counts, fwd_mark, row[j])
                if k:
                    row[j] = i
                    steps[j] += 1
                    _prefetch_step(fwd_occ, fwd_mark, i)
                    continue
                pos[slot[j]] = sampled_position(fwd_mark, fwd_ssa, i, steps[j])
                if nxt < hi:
                    row[j], steps[j], slot[j] = np.int64(pos[nxt]), 0, nxt
                    _prefetch_step(fwd_occ, fwd_mark, row[j])
                    nxt += 1
                else:
                    slot[j] = -1
                    busy -= 1


@njit(cache=True, nogil=True, inline="always")
def _prefetch_step(fwd_occ: np.ndarray, fwd_mark: np.ndarray, i: int) -> None:
    """Ask for what the next LF step from row i reads (its mark word, its occurrence-table block and superblock row)
    while the other lanes take theirs: without it, the lanes' misses overlap only as far as the core's window
    reaches (250 Mbp human-like genome, --best, -t 2, 4 rounds: 0.979x wall, 0.960x candidates CPU)."""
    prefetch_row(fwd_mark, i >> 6)
    prefetch_occ(fwd_occ, i)


@njit(cache=True, nogil=True, inline="always")
def string_window(p: int, depth: int, js: int, m: int, e: int, text_starts: np.ndarray, ref_starts: np.ndarray,
                  w: int, win_start: np.ndarray, win_end: np.ndarray, win_diag: np.ndarray) -> None:
    """Slot w: the window (put_window) of an accepted string's row at text position p, the string having `depth`
    bases before its piece, which starts at js in the read."""
    ps = p + depth  # where the string has the piece
    s = sequence_of(text_starts, ps)
    diag = ps - text_starts[s] + ref_starts[s] - js  # a segment's sequences start further on
    put_window(diag, m, e, s, ref_starts, w, win_start, win_end, win_diag)


@njit(cache=True, nogil=True, _nrt=False)
def located_windows(rows: np.ndarray, at: np.ndarray, n_rows: int, m: int, e: int, text_starts: np.ndarray,
                    ref_starts: np.ndarray, pos: np.ndarray, win_start: np.ndarray, win_end: np.ndarray,
                    win_diag: np.ndarray, w: int) -> int:
    """fm_scheme.row_windows of pooled strings, their rows' positions read from pos (at: where each string's
    rows start there): the same windows in the same slots; returns the next free slot."""
    for r in range(n_rows):
        js, depth, a = rows[r, 0], rows[r, 1], at[r]
        for i in range(rows[r, 3] - rows[r, 2]):
            string_window(np.int64(pos[a + i]), depth, js, m, e, text_starts, ref_starts, w, win_start, win_end,
                          win_diag)
            w += 1
    return w
