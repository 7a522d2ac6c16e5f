"""An engine over a neighborhood index in genome segments (MAROSE): every segment's engine finds its
candidate windows, and each query's windows from all segments are merged once more.

The merge is exact: a segment's merged window is a chain of overlapping raw windows, so merging the
segments' merged windows gives the same unions (and diagonal ranges) as merging all raw windows, which
is what the unsegmented index does. The SAM is byte-identical.

At most two segments are in use at once, whatever the thread count. Where the whole index takes more than
a quarter of the machine's memory (RESIDENT_SHARE), a segment's pages are dropped from the resident set when
the last batch using it is done with it (they stay in the page cache): a run holds about two segments of
the index resident, not all of it. A smaller index stays resident: dropping and faulting its pages back in
every round cost more than its search (1 Gbp human-like genome, fm index of 2.0 GB in three segments, 20,000
reads, --best, -t 2: 0.79 M page faults, 6 s of system time, candidates 21 s of CPU and 12.5-16.1 s in all;
kept: 75 k faults, candidates 11.5 s, 8.0 s in all, peak 2.39 GB instead of 1.90).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager

import numpy as np
from numba import njit

from seedmap.engines.base import CandidateEngine, QueryMemo
from seedmap.index.segments import machine_memory
from seedmap.index.store import release_pages
from seedmap.order import lex_order


@njit(cache=True, nogil=True)
def _merge_sorted(q: np.ndarray, rows: np.ndarray, out: np.ndarray) -> int:
    """Merge rows (start, end, min diag, max diag) sorted by query then start: overlapping windows of one
    query become one (the rule of filter.windows.merge_one). Returns the rows written to out;
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
    order = lex_order(q, rows[:, 0])
    q, rows = q[order], np.ascontiguousarray(rows[order])
    out = np.empty((q.size, 5), dtype=np.int64)
    n = _merge_sorted(q, rows, out)
    return out[:n, 4].copy(), np.ascontiguousarray(out[:n, :4])


RESIDENT_SHARE = 4  # an index taking at most 1 / RESIDENT_SHARE of the machine's memory stays resident (see above)


def drops_pages(arrays: list[list[np.ndarray]]) -> bool:
    """Whether a run drops each segment's pages when no batch uses it: where the whole index takes more than
    1 / RESIDENT_SHARE of the machine's memory, or that memory is unknown."""
    memory = machine_memory()
    return not memory or RESIDENT_SHARE * sum(a.nbytes for part in arrays for a in part) > memory


class SegmentGate:
    """At most `open_max` segments in use at once, whatever the thread count: a batch waits to enter a
    segment that is not open while others are, and the last batch to leave a segment drops its pages (when
    `release`). Every batch takes the segments in the same order and holds one at a time, so nobody waits
    forever."""

    def __init__(self, arrays: Sequence[Iterable[np.ndarray]], open_max: int = 2, release: bool = True) -> None:
        self.arrays = [list(a) for a in arrays]
        self.open_max = open_max
        self.release = release
        self.users: dict[int, int] = {}
        self.cond = threading.Condition()

    def enter(self, s: int) -> None:
        with self.cond:
            self.cond.wait_for(lambda: s in self.users or len(self.users) < self.open_max)
            self.users[s] = self.users.get(s, 0) + 1

    def leave(self, s: int) -> None:
        with self.cond:
            self.users[s] -= 1
            if self.users[s] == 0:
                del self.users[s]
                if self.release:
                    release_pages(self.arrays[s])
                self.cond.notify_all()


class SegmentedEngine(CandidateEngine):
    """`parts`: each segment's engine (CPU or CUDA), whose `index` holds the segment's arrays."""

    def __init__(self, parts: list) -> None:
        self.parts = parts
        arrays = [list(part.index.arrays().values()) for part in parts]
        self.gate = SegmentGate(arrays, release=drops_pages(arrays))
        self.max_window = parts[0].max_window
        self.round0_min = parts[0].round0_min

    def guarantee(self, m: int, e: int) -> str:
        return self.parts[0].guarantee(m, e)

    @contextmanager
    def bulk_verifying_all(self) -> Iterator[None]:
        with ExitStack() as stack:
            for part in self.parts:
                stack.enter_context(part.bulk_verifying_all())
            yield

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
                          memo: QueryMemo | None = None) -> tuple[np.ndarray, np.ndarray]:
        found = []
        for s, part in enumerate(self.parts):
            self.gate.enter(s)
            try:
                found.append(part.candidate_windows(qcodes, qoff, qerr, memo))
            finally:
                self.gate.leave(s)
        return merge_segments(found)
