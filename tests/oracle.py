"""Brute-force oracle: every end position of every read within e edits, by plain dynamic programming.

Written independently of seedmap's kernels (row-wise numpy DP over whole sequences). For each hit end j
it derives the largest start among optimal alignments by a second, reversed global DP. Locations are
runs of consecutive hit ends; each keeps its best hit (lowest distance, then the span closest to the read
length, then leftmost end): the definition seedmap documents.
"""

from __future__ import annotations

import numpy as np

COMP = np.array([3, 2, 1, 0, 4], dtype=np.uint8)


def _last_row(q: np.ndarray, t: np.ndarray, free_start: bool) -> np.ndarray:
    """Last DP row of q (rows) against t (columns); row 0 is 0 (free start) or 0, 1, 2, ... (global)."""
    w = t.size
    cols = np.arange(w + 1)
    prev = np.zeros(w + 1, dtype=np.int64) if free_start else cols.copy()
    for i in range(1, q.size + 1):
        cost = ((t != q[i - 1]) | (t > 3) | (q[i - 1] > 3)).astype(np.int64)
        cur = np.empty(w + 1, dtype=np.int64)
        cur[0] = i
        cur[1:] = np.minimum(prev[:-1] + cost, prev[1:] + 1)
        cur = cols + np.minimum.accumulate(cur - cols)  # horizontal moves (deletions)
        prev = cur
    return prev


def hits_one(q: np.ndarray, t: np.ndarray, e: int) -> list[tuple[int, int, int]]:
    """(start, end, dist) for every end with distance <= e in one sequence t; start = largest optimal."""
    m = q.size
    if m <= e:
        raise ValueError("reads not longer than e match everywhere")
    row = _last_row(q, t, free_start=True)
    out = []
    for j in np.flatnonzero(row <= e):
        if j == 0:
            continue
        d = int(row[j])
        back = t[max(0, j - m - e):j][::-1]
        g = _last_row(q[::-1], back, free_start=False)
        k = int(np.flatnonzero(g == d)[0])
        out.append((int(j) - k, int(j), d))
    return out


def group(hits: list[tuple[int, int, int]], m: int) -> list[tuple[int, int, int]]:
    """Runs of consecutive ends; best per run: lowest dist, then span closest to m, then leftmost end."""
    runs: list[list[tuple[int, int, int]]] = []
    for h in sorted(hits, key=lambda h: h[1]):
        if runs and runs[-1][-1][1] + 1 == h[1]:
            runs[-1].append(h)
        else:
            runs.append([h])
    return [min(run, key=lambda h: (h[2], abs(h[1] - h[0] - m), h[1])) for run in runs]


def oracle_locations(read: np.ndarray, ref_codes: np.ndarray, ref_starts: np.ndarray, e: int,
                     ends_only: bool = False) -> set[tuple[int, int, int, int]]:
    """{(strand, start, end, dist)} in global coordinates; both strands; never across sequences."""
    result = set()
    for strand, q in ((0, read), (1, COMP[read[::-1]])):
        for s in range(ref_starts.size - 1):
            a, b = int(ref_starts[s]), int(ref_starts[s + 1])
            hits = hits_one(q, ref_codes[a:b], e)
            chosen = hits if ends_only else group(hits, read.size)
            result.update((strand, a + st, a + en, d) for st, en, d in chosen)
    return result


GAP = 1 << 20  # cost of fewest_gaps: edits * GAP + gaps


def fewest_gaps(q: np.ndarray, t: np.ndarray, x: int) -> np.ndarray:
    """Least edits * GAP + gaps (runs of insertions or deletions) of q against t from any start column in
    [0, x] to each end column: plain Gotoh over the whole matrix, row by row (horizontal gaps by a running
    minimum)."""
    w = t.size
    cols = np.arange(w + 1)
    inf = np.int64(1) << 50
    h = np.where(cols <= x, 0, inf).astype(np.int64)
    v = np.full(w + 1, inf)
    for i in range(1, q.size + 1):
        cost = ((t != q[i - 1]) | (t > 3) | (q[i - 1] > 3)).astype(np.int64) * GAP
        v = np.minimum(h + GAP + 1, v + GAP)  # insertion: from the row above, same column
        diag = np.full(w + 1, inf)
        diag[1:] = h[:-1] + cost
        best = np.minimum(v, diag)
        # a deletion run into c from some j < c: best[j] + GAP + 1 + (c - j - 1) * GAP
        run = np.minimum.accumulate(best - cols * GAP)
        dele = np.full(w + 1, inf)
        dele[1:] = run[:-1] + cols[1:] * GAP + 1
        h = np.minimum(best, dele)
    return h


def aligned_interval(q: np.ndarray, codes: np.ndarray, ref_starts: np.ndarray, start: int, end: int,
                     d: int) -> tuple[int, int]:
    """The reference interval of the alignment reported for location (start, end, d) of read q: starts in
    [start - d, start] and ends from `end` on through its run (every end of cost d), within its sequence;
    the fewest gaps, then the leftmost end, then the latest start (a leading or trailing insertion is a
    substitution one base further out, at the same edit distance and one gap fewer)."""
    seq = int(np.searchsorted(ref_starts, start, side="right")) - 1
    lo, hi = max(start - d, int(ref_starts[seq])), min(end + d, int(ref_starts[seq + 1]))
    costs = fewest_gaps(q, codes[lo:hi], start - lo)[end - lo:]
    run = costs[:int(np.argmax(np.append(costs // GAP != d, True)))]
    best_end = end + int(np.argmin(run))
    for a in range(start, lo - 1, -1):
        if fewest_gaps(q, codes[a:best_end], 0)[-1] == run.min():
            return a, best_end
    raise AssertionError("no start reaches the end's cost")
