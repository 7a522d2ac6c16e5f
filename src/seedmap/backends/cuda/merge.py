"""The dedupe stage on the device, for every engine that fills raw candidate windows there: each query's
windows sorted by start and overlapping ones merged (seed_filter_kernels' sort and merge kernels), in query
chunks whose raw candidates fit a budget; only the merged windows come back."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import cuda

from seedmap.backends.cuda import seed_filter_kernels as sf
from seedmap.backends.cuda.verify_kernels import sync


def none() -> tuple[np.ndarray, np.ndarray]:
    """No windows: (queries, rows) both empty."""
    return np.zeros(0, dtype=np.int64), np.zeros((0, 4), dtype=np.int64)


def in_chunks(cand_off: np.ndarray, budget: int,
              chunk: Callable[[int, int], tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """chunk(first, last) over query ranges whose candidates (cand_off: per query, scanned) fit `budget`
    (a query with more is a chunk of its own); the results concatenated."""
    nq = cand_off.size - 1
    parts = []
    first = 0
    while first < nq:
        last = int(np.searchsorted(cand_off, cand_off[first] + budget, side="right")) - 1
        last = min(max(last, first + 1), nq)
        parts.append(chunk(first, last))
        first = last
    if not parts:
        return none()
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def merged_windows(stream: object, first: int, last: int, seg_off: np.ndarray,
                   win: list) -> tuple[np.ndarray, np.ndarray]:
    """Queries [first, last) whose raw windows (win: device start, end, diag) fill the slots
    [seg_off[i], seg_off[i + 1]) each: (query of each merged window, rows (start, end, min diag, max diag)),
    ordered by query then start."""
    st = stream
    nqc = last - first
    qgrid = (nqc + sf.THREADS - 1) // sf.THREADS
    d_seg = cuda.to_device(np.ascontiguousarray(seg_off, dtype=np.int64), stream=st)
    sf.sort_kernel[qgrid, sf.THREADS, st](d_seg, *win)
    d_out_off = cuda.to_device(np.zeros(nqc + 1, dtype=np.int64), stream=st)
    dummy = cuda.device_array((1, 4), dtype=np.int64, stream=st)
    sf.merge_kernel[qgrid, sf.THREADS, st](d_seg, *win, d_out_off, dummy, False)
    out_off = np.cumsum(d_out_off.copy_to_host(stream=st))
    sync(st)
    total = int(out_off[-1])
    if total == 0:
        return none()
    d_out_off = cuda.to_device(out_off, stream=st)
    d_rows = cuda.device_array((total, 4), dtype=np.int64, stream=st)
    sf.merge_kernel[qgrid, sf.THREADS, st](d_seg, *win, d_out_off, d_rows, True)
    rows = d_rows.copy_to_host(stream=st)
    sync(st)
    return np.repeat(np.arange(first, last, dtype=np.int64), np.diff(out_off)), rows
