"""Seeding over the k-mer table (mrFAST): e + a disjoint k-mers per query, chosen to be cheap.

Pigeonhole: with s pairwise disjoint seeds and at most e edits, at least s - e seeds match exactly.
So s = e + 1 seeds find every location, and s = e + a seeds let the adjacency filter demand a seeds
that agree (diagonals within +-e of each other, as the exact seeds of one alignment do) without ever
dropping a true location. Among all sets of s disjoint k-mers of the read, the one with the fewest
positions in total is chosen by dynamic programming; a k-mer holding an N costs nothing (it cannot be
the exact one, and the guarantee holds for any disjoint set). Reads too short for s k-mers of length k
use e + 1 shorter windows (one range of codes each) and no adjacency filter.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.filter.plan import window_plan
from seedmap.filter.windows import Saved, Slots, emit_windows, sort_windows
from seedmap.io.columns import Queries
from seedmap.keysort import stable_argsort


@njit(cache=True, nogil=True)
def _code(q: np.ndarray, o: int, length: int) -> int:
    """Big-endian code of q[o:o+length], or -1 when it holds an N."""
    c = 0
    for i in range(length):
        b = q[o + i]
        if b > 3:
            return -1
        c = (c << 2) | b
    return c


@njit(cache=True, nogil=True)
def _range(q: np.ndarray, o: int, length: int, k: int, offsets: np.ndarray) -> tuple[int | np.int64, int | np.int64]:
    c = _code(q, o, length)
    if c < 0:
        return 0, 0
    shift = 2 * (k - length)
    return np.int64(offsets[c << shift]), np.int64(offsets[(c + 1) << shift])


@njit(cache=True, nogil=True)
def choose_seeds(q: np.ndarray, k: int, n_seeds: int, offsets: np.ndarray, out: np.ndarray) -> None:
    """Offsets of n_seeds disjoint k-mers of q with the smallest total bucket size among those on a grid
    (needs n_seeds*k <= m)."""
    m = q.size
    npos = m - k + 1
    # Few seeds in a long read (few edits: the stratified search) need not weigh every k-mer: looking
    # each up is a cache miss in a large table. Candidates every `stride` bases still leave room for
    # n_seeds disjoint ones; other offsets cost more than any real choice.
    stride = max(1, (m - n_seeds * k) // (4 * n_seeds))
    cost = np.full(npos, np.int64(1) << 40, dtype=np.int64)
    for p in range(0, npos, stride):
        lo, hi = _range(q, p, k, k, offsets)
        cost[p] = hi - lo
    big = np.int64(1) << 62
    # f[j, p]: cheapest j seeds starting at positions < p; take[j, p]: seed j starts at p - 1 in it.
    f = np.full((n_seeds + 1, npos + 1), big, dtype=np.int64)
    take = np.zeros((n_seeds + 1, npos + 1), dtype=np.bool_)
    f[0, :] = 0
    for j in range(1, n_seeds + 1):
        for p in range(1, npos + 1):
            best = f[j, p - 1]
            prev = p - 1 - k + 1  # previous seeds must start before (p - 1) - k + 1
            if prev >= 0 and f[j - 1, prev] < big and f[j - 1, prev] + cost[p - 1] < best:
                best = f[j - 1, prev] + cost[p - 1]
                take[j, p] = True
            elif j == 1 and cost[p - 1] < best:
                best = cost[p - 1]
                take[j, p] = True
            f[j, p] = best
    p = npos
    for j in range(n_seeds, 0, -1):
        while not take[j, p]:
            p -= 1
        out[j - 1] = p - 1
        p = p - 1 - k + 1


@njit(cache=True, nogil=True)
def _plan(q: np.ndarray, e: int, k: int, adjacency: int, offsets: np.ndarray) -> tuple[int, np.ndarray, int]:
    """(seed length, seed offsets, seeds that must agree) for one query."""
    m = q.size
    if (e + adjacency) * k <= m:
        seeds = np.empty(e + adjacency, dtype=np.int64)
        choose_seeds(q, k, e + adjacency, offsets, seeds)
        return k, seeds, adjacency
    length, seeds = window_plan(m, e, k, 0, 0)
    return length, seeds, 1


@njit(cache=True, nogil=True)
def count_candidates(queries: Queries, k: int, adjacency: int, offsets: np.ndarray, saved: Saved, counts: np.ndarray,
                     q_lo: int, q_hi: int) -> None:
    """Seed hits per query of queries [q_lo, q_hi) in counts (zeroed by the caller); the seeds' ranges are
    saved (rows: offset, range start, range end)."""
    qcodes, qoff, qerr = queries
    ranges, n_saved = saved
    for qi in range(q_lo, q_hi):
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        e = qerr[qi >> 1]
        n_saved[qi] = 0
        if q.size <= e:
            continue
        length, seeds, need = _plan(q, e, k, adjacency, offsets)
        c = 0
        for s in range(seeds.size):
            lo, hi = _range(q, seeds[s], length, k, offsets)
            ranges[qi, s, 0] = seeds[s]
            ranges[qi, s, 1] = lo
            ranges[qi, s, 2] = hi
            c += hi - lo
        n_saved[qi] = seeds.size
        counts[qi] = c


@njit(cache=True, nogil=True)
def _adjacent(ws: np.ndarray, we: np.ndarray, wd: np.ndarray, seed: np.ndarray, e: int, need: int) -> int:
    """Keep candidates whose diagonal has hits of >= need distinct seeds within +-e; returns the count kept
    (moved to the front)."""
    n = wd.size
    order = stable_argsort(wd)
    keep = np.zeros(n, dtype=np.bool_)
    lo = 0
    hi = 0
    for i in range(n):
        d = wd[order[i]]
        while wd[order[lo]] < d - e:
            lo += 1
        while hi < n and wd[order[hi]] <= d + e:
            hi += 1
        mask = np.uint64(0)
        for j in range(lo, hi):
            mask |= np.uint64(1) << np.uint64(seed[order[j]])
        distinct = 0
        while mask:
            mask &= mask - np.uint64(1)
            distinct += 1
        keep[order[i]] = distinct >= need
    n_kept = 0
    for i in range(n):
        if keep[i]:
            ws[n_kept] = ws[i]
            we[n_kept] = we[i]
            wd[n_kept] = wd[i]
            n_kept += 1
    return n_kept


@njit(cache=True, nogil=True)
def fill_windows(queries: Queries, q_first: int, cand_off: np.ndarray, adjacency: int, pos: np.ndarray, saved: Saved,
                 out: Slots, cand_len: np.ndarray, q_lo: int, q_hi: int) -> None:
    """Windows of queries [q_lo, q_hi) from the saved seed ranges (pos: the k-mer table's positions),
    filtered by adjacency, sorted by start, in the slots of out, whose first is q_first's first window;
    cand_len[q] = how many were kept."""
    qcodes, qoff, qerr = queries
    ranges, n_saved = saved
    ref_starts, win_start, win_end, win_diag = out
    base = cand_off[q_first]
    for qi in range(q_lo, q_hi):
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        m = q.size
        e = qerr[qi >> 1]
        lo, hi = cand_off[qi] - base, cand_off[qi + 1] - base
        cand_len[qi] = 0
        if m <= e:
            continue
        seed = np.empty(hi - lo, dtype=np.int64)
        w = lo
        for s in range(n_saved[qi]):
            w0 = w
            w = emit_windows(ranges[qi, s, 0], ranges[qi, s, 1], ranges[qi, s, 2], m, e, pos, ref_starts, w,
                             win_start, win_end, win_diag)
            seed[w0 - lo:w - lo] = s
        n = hi - lo
        need = adjacency if n_saved[qi] == e + adjacency and n_saved[qi] <= 64 else 1  # (64: seed bitmask)
        if need > 1 and n > 0:
            n = _adjacent(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi], seed, e, need)
        sort_windows(win_start[lo:lo + n], win_end[lo:lo + n], win_diag[lo:lo + n])
        cand_len[qi] = n
