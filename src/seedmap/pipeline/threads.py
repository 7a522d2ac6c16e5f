"""Threading set by the program, not left to the environment.

Workers map whole batches side by side, each on its own Python thread; a worker's kernel calls spread their
blocks over its share of the threads (seedmap/spread.py: all of them for a worker alone, one each when every
worker is busy). The kernels are serial numba functions that release the GIL, so no numba threading layer is
loaded.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

from seedmap.spread import set_share


def set_environment() -> None:
    """Before the first batch: glibc's malloc keeps the batches' large arrays in its heap instead of mapping and
    unmapping them for every batch (page faults and zeroing: 0.9 s of system time per million reads,
    measured)."""
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


class ThreadShares:
    """Splits `threads` among the workers busy right now: a worker alone (one batch left, or a small
    input) spreads its kernels over every thread; with all workers busy each kernel runs on its own. A worker's
    share is looked at again before each range of its kernel calls (seedmap/spread.py), so one left alone takes
    the threads of the others over in the middle of a stage."""

    def __init__(self, threads: int) -> None:
        self.threads = max(1, min(threads, os.cpu_count() or 1))  # one worker per thread
        self.busy = 0
        self.lock = threading.Lock()

    def enter(self) -> None:
        with self.lock:
            self.busy += 1
        set_share(self.threads, self.now)

    def now(self) -> int:
        """A busy worker's share of the threads at this moment."""
        return self.threads // max(self.busy, 1)

    def leave(self) -> None:
        with self.lock:
            self.busy -= 1
