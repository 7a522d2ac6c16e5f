"""The dedupe stage on the device, for every engine that fills raw candidate windows there: each query's
windows sorted by start and overlapping ones merged (seed_filter_kernels' sort and merge kernels), one
query chunk at a time (engines.base.in_chunks); only the merged windows come back."""

from __future__ import annotations

import numpy as np
from numba import cuda

from seedmap.backends.cuda import seed_filter_kernels as sf
from seedmap.backends.cuda.verify_kernels import sync
from seedmap.engines.base import no_windows


def merged_windows(stream: object, first: int, last: int, slot_off: np.ndarray,
                   win: list) -> tuple[np.ndarray, np.ndarray]:
    """Queries [first, last) whose raw windows (win: device start, end, diag) fill the slots
    [slot_off[i], slot_off[i + 1]) each: (query of each merged window, rows (start, end, min diag, max diag)),
    ordered by query then start."""
    st = stream
    nqc = last - first
    qgrid = (nqc + sf.THREADS - 1) // sf.THREADS
    d_slot_off = cuda.to_device(np.ascontiguousarray(slot_off, dtype=np.int64), stream=st)
    sf.sort_kernel[qgrid, sf.THREADS, st](d_slot_off, *win)
    d_out_off = cuda.to_device(np.zeros(nqc + 1, dtype=np.int64), stream=st)
    dummy = cuda.device_array((1, 4), dtype=np.int64, stream=st)
    sf.merge_kernel[qgrid, sf.THREADS, st](d_slot_off, *win, d_out_off, dummy, False)
    out_off = np.cumsum(d_out_off.copy_to_host(stream=st))
    sync(st)
    total = int(out_off[-1])
    if total == 0:
        return no_windows()
    d_out_off = cuda.to_device(out_off, stream=st)
    d_rows = cuda.device_array((total, 4), dtype=np.int64, stream=st)
    sf.merge_kernel[qgrid, sf.THREADS, st](d_slot_off, *win, d_out_off, d_rows, True)
    rows = d_rows.copy_to_host(stream=st)
    sync(st)
    return np.repeat(np.arange(first, last, dtype=np.int64), np.diff(out_off)), rows
