"""An engine over a neighborhood index in genome segments (MAROSE): every segment's engine finds its
candidate windows, and each query's windows from all segments are merged once more.

The merge is exact: a segment's merged window is a chain of overlapping raw windows, so merging the
segments' merged windows gives the same unions (and diagonal ranges) as merging all raw windows, which
is what the unsegmented index does. The SAM is byte-identical.

A segment's pages are dropped from the resident set when the last batch using it is done with it (they
stay in the page cache), so a run holds about one segment per worker rather than the whole index.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np
from numba import njit

from seedmap.engines.base import CandidateEngine
from seedmap.index.store import release_pages


@njit(cache=True, nogil=True)
def _merge_sorted(q: np.ndarray, rows: np.ndarray, out: np.ndarray) -> int:
    """Merge rows (start, end, min diag, max diag) sorted by query then start: overlapping windows of one
    query become one (the rule of filter.neighborhood_bs._merge_one). Returns the rows written to out;
    out[:, 4] gets each merged row's query."""
    n = 0
    i = 0
    while i < q.size:
        qi, s, e, dmin, dmax = q[i], rows[i, 0], rows[i, 1], rows[i, 2], rows[i, 3]
        i += 1
        while i < q.size and q[i] == qi and rows[i, 0] < e:
            e = max(e, rows[i, 1])
            dmin = min(dmin, rows[i, 2])
            dmax = max(dmax, rows[i, 3])
            i += 1
        out[n, 0], out[n, 1], out[n, 2], out[n, 3], out[n, 4] = s, e, dmin, dmax, qi
        n += 1
    return n


def merge_segments(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Each query's windows from several segments, merged: (query, rows) ordered by query then start."""
    q = np.concatenate([p[0] for p in parts])
    rows = np.concatenate([p[1] for p in parts])
    order = np.lexsort((rows[:, 0], q))
    q, rows = q[order], np.ascontiguousarray(rows[order])
    out = np.empty((q.size, 5), dtype=np.int64)
    n = _merge_sorted(q, rows, out)
    return out[:n, 4].copy(), np.ascontiguousarray(out[:n, :4])


class _Residency:
    """Counts the batches using a segment; the last one out drops its pages."""

    def __init__(self, arrays: Iterable[np.ndarray]) -> None:
        self.arrays = list(arrays)
        self.users = 0
        self.lock = threading.Lock()

    def enter(self) -> None:
        with self.lock:
            self.users += 1

    def leave(self) -> None:
        with self.lock:
            self.users -= 1
            if self.users == 0:
                release_pages(self.arrays)


class SegmentedEngine(CandidateEngine):
    def __init__(self, parts: list, arrays: list[Iterable[np.ndarray]]) -> None:
        self.parts = parts
        self.residency = [_Residency(a) for a in arrays]
        self.max_window = parts[0].max_window

    def guarantee(self, m: int, e: int) -> str:
        return self.parts[0].guarantee(m, e)

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray,
                          qerr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = []
        for part, residency in zip(self.parts, self.residency, strict=True):
            residency.enter()
            try:
                found.append(part.candidate_windows(qcodes, qoff, qerr))
            finally:
                residency.leave()
        return merge_segments(found)
