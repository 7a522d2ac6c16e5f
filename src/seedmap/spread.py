"""A kernel call's blocks spread over Python threads.

The kernels are compiled serial: numba's parallel=True compiles each prange kernel's body twice (the loop,
then its gufunc), which took a first run's compile of the neighborhood engine's kernels from 49 to 83 CPU
seconds. They release the GIL, so the caller runs ranges of their outer loop side by side on a shared pool
of threads instead. A call uses this thread's share of the run's threads (set_share, by the pipeline's
ThreadShares: every thread for a worker alone, one when every worker is busy). The ranges split the loop
at fixed points, so results do not depend on how many threads ran them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

PIECES_PER_THREAD = 4  # ranges a call is cut into per thread it may use: the slow ones even out

_local = threading.local()
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def set_share(threads: int) -> None:
    """How many threads this thread's kernel calls may use from now on."""
    _local.share = max(1, int(threads))


def share() -> int:
    """This thread's share (every core where none was set: an index build, a library call)."""
    return getattr(_local, "share", None) or os.cpu_count() or 1


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:  # (threads start as calls need them, up to the most any share asks for)
            _pool = ThreadPoolExecutor(max_workers=256, thread_name_prefix="seedmap-kernel")
        return _pool


def pieces(n: int, grain: int = 1) -> list[int]:
    """Where the ranges of a call over [0, n) start, then n: PIECES_PER_THREAD per thread of this thread's share,
    at least `grain` items each where n allows (one range, [0, n), for a call that is not split)."""
    grain = max(grain, 1)
    k = min(share() * PIECES_PER_THREAD, max(1, n // grain)) if share() > 1 else 1
    return [n * i // k for i in range(k + 1)]


def spread(n: int, fn: Callable[[int, int], object], grain: int = 1) -> None:
    """fn(lo, hi) over the ranges of pieces(n, grain), on up to share() threads, this one among them; returns
    when all have run, raising the first error of any. n = 0 calls fn(0, 0)."""
    bounds = pieces(n, grain)
    count = len(bounds) - 1
    threads = min(share(), count)
    if threads <= 1:
        for k in range(count):  # (n = 0: fn(0, 0) all the same, so that a warm-up compiles what runs call)
            fn(bounds[k], bounds[k + 1])
        return
    todo = iter(range(count))
    lock = threading.Lock()

    def run() -> None:
        while True:
            with lock:
                k = next(todo, None)
            if k is None:
                return
            fn(bounds[k], bounds[k + 1])

    helpers: list[Future] = [_executor().submit(run) for _ in range(threads - 1)]
    try:
        run()
    finally:
        for f in helpers:
            f.result()
