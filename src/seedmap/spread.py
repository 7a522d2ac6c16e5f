"""A kernel call's blocks spread over Python threads.

The kernels are compiled serial: numba's parallel=True compiles each prange kernel's body twice (the loop,
then its gufunc), which took a first run's compile of the neighborhood engine's kernels from 49 to 83 CPU
seconds. They release the GIL, so the caller runs ranges of their outer loop side by side on a shared pool
of threads instead. A call uses this thread's share of the run's threads (set_share, by the pipeline's
ThreadShares: every thread for a worker alone, one when every worker is busy), looked at again before each
range: a worker whose partner finished its last batch takes the freed thread over in the middle of a call (the
last batch's may hold a low-complexity read whose candidates keep one call busy for seconds). The ranges split the
loop at fixed points, cut for the most threads the call may get, so results do not depend on how many threads ran
them.
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


def set_share(threads: int, now: Callable[[], int] | None = None) -> None:
    """How many threads this thread's kernel calls may use from now on: `threads`; with `now`, at most `threads`,
    and as many as now() says at each range of a call."""
    _local.share = max(1, int(threads))
    _local.now = now


def most() -> int:
    """The most threads this thread's calls may get (every core where none was set: an index build, a library
    call): their ranges are cut for this many."""
    return getattr(_local, "share", None) or os.cpu_count() or 1


def share() -> int:
    """The threads this thread's call may use at this moment."""
    now = getattr(_local, "now", None)
    return most() if now is None else max(1, min(most(), now()))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:  # (threads start as calls need them, up to the most any share asks for)
            _pool = ThreadPoolExecutor(max_workers=256, thread_name_prefix="seedmap-kernel")
        return _pool


def pieces(n: int, grain: int = 1) -> list[int]:
    """Where the ranges of a call over [0, n) start, then n: PIECES_PER_THREAD per thread this thread's calls may
    get (most), at least `grain` items each where n allows (one range, [0, n), for a call that is not split)."""
    grain = max(grain, 1)
    k = min(most() * PIECES_PER_THREAD, max(1, n // grain)) if most() > 1 else 1
    return [n * i // k for i in range(k + 1)]


def spread(n: int, fn: Callable[[int, int], object], grain: int = 1) -> None:
    """fn(lo, hi) over the ranges of pieces(n, grain), on up to share() threads, this one among them; returns
    when all have run, raising the first error of any. n = 0 calls fn(0, 0)."""
    bounds = pieces(n, grain)
    count = len(bounds) - 1
    todo = iter(range(count))  # (n = 0: fn(0, 0) all the same, so that a warm-up compiles what runs call)
    lock = threading.Lock()

    def take() -> int | None:
        with lock:
            return next(todo, None)

    def run() -> None:
        while (k := take()) is not None:
            fn(bounds[k], bounds[k + 1])

    helpers: list[Future] = []
    try:
        while True:
            # Helpers up to this thread's share now (it grows when another worker is done), never more than the
            # call's ranges.
            for _ in range(min(share(), count) - 1 - len(helpers)):
                helpers.append(_executor().submit(run))
            k = take()
            if k is None:
                break
            fn(bounds[k], bounds[k + 1])
    finally:
        for f in helpers:
            f.result()
