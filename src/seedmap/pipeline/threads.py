"""Threading set by the program, not left to the environment.

Workers map whole batches side by side, each calling numba's parallel kernels from its own Python
thread, so numba needs a thread-safe threading layer (OpenMP or TBB; its default 'workqueue' aborts on
concurrent calls). OpenMP threads wait passively: spinning idle threads took cores from the next run's
workers on small machines. Without a thread-safe layer there is one worker whose kernels use every thread.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading

log = logging.getLogger("seedmap")

_SAFE_LAYERS = ("omp", "tbb")


def set_environment() -> None:
    """Before numba loads a threading layer (the first parallel kernel): passive OpenMP waiting. And
    glibc's malloc keeps the batches' large arrays in its heap instead of mapping and unmapping them for
    every batch (page faults and zeroing: 0.9 s of system time per million reads, measured)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("KMP_BLOCKTIME", "0")
    _keep_large_allocations()


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
LARGE = 256 << 20


def _keep_large_allocations() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(M_MMAP_THRESHOLD, LARGE)
        libc.mallopt(M_TRIM_THRESHOLD, 2 * LARGE)
    except (OSError, AttributeError):  # not glibc: its defaults stay
        pass


def safe_layer() -> str | None:
    """A thread-safe numba threading layer that loads here, set as numba's layer; None if there is none."""
    import numba

    wanted = os.environ.get("NUMBA_THREADING_LAYER", "")
    for layer in ((wanted,) if wanted in _SAFE_LAYERS else _SAFE_LAYERS):
        try:
            if layer == "omp":
                from numba.np.ufunc import omppool  # noqa: F401
            else:
                from numba.np.ufunc import tbbpool  # noqa: F401
        except ImportError:
            continue
        numba.config.THREADING_LAYER = layer
        return layer
    return None


class ThreadShares:
    """Splits `threads` among the workers busy right now: a worker alone (one batch left, or a small
    input) runs its kernels on every thread; with all workers busy each kernel is serial."""

    def __init__(self, threads: int, concurrent: bool) -> None:
        import numba

        self.threads = max(1, min(threads, numba.config.NUMBA_NUM_THREADS))
        self.workers = self.threads if concurrent else 1
        self.busy = 0
        self.lock = threading.Lock()

    def enter(self) -> None:
        with self.lock:
            self.busy += 1
        self.refresh()

    def refresh(self) -> None:
        """This worker's share of the threads now, for its next kernels (called between stages, so a
        worker left alone at the end of the input takes over the idle threads at its next stage)."""
        import numba

        with self.lock:
            share = max(1, self.threads // max(self.busy, 1))
        if numba.get_num_threads() != share:
            numba.set_num_threads(share)  # per calling thread in numba

    def leave(self) -> None:
        with self.lock:
            self.busy -= 1


def thread_shares(threads: int) -> ThreadShares:
    layer = safe_layer()
    if layer is None and threads > 1:
        log.info("no thread-safe numba threading layer (OpenMP or TBB): one batch at a time on %d threads",
                 threads)
    return ThreadShares(threads, concurrent=layer is not None)
