"""A kernel call's ranges spread over threads (seedmap/spread.py): every item exactly once, on up to this
thread's share of threads, errors raised in the caller; and no kernel compiled with numba's parallel=True
(which compiled each one twice over: the reason spread.py exists)."""

from __future__ import annotations

import importlib
import pkgutil
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import seedmap
from seedmap import spread as sp


@pytest.fixture
def share():
    """Sets this thread's share for a test, and puts the default back."""
    def set_to(n: int) -> None:
        sp.set_share(n)

    yield set_to
    sp._local.share = sp._local.now = None


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 3000), threads=st.integers(1, 6), grain=st.integers(1, 300))
def test_every_item_once(n, threads, grain):
    sp.set_share(threads)
    try:
        seen = [0] * n
        lock = threading.Lock()

        def mark(lo: int, hi: int) -> None:
            assert 0 <= lo < hi <= n or lo == hi == n == 0
            with lock:
                for i in range(lo, hi):
                    seen[i] += 1

        sp.spread(n, mark, grain=grain)
        assert seen == [1] * n
        bounds = sp.pieces(n, grain)
        assert bounds[0] == 0 and bounds[-1] == n and bounds == sorted(bounds)
        assert len(bounds) - 1 <= max(1, threads * sp.PIECES_PER_THREAD)
        if threads > 1 and n >= 2 * grain:
            assert len(bounds) > 2 and min(b - a for a, b in zip(bounds, bounds[1:], strict=False)) >= grain
    finally:
        sp._local.share = None


def test_one_thread_runs_in_the_caller(share):
    share(1)
    names = []
    sp.spread(1000, lambda lo, hi: names.append(threading.current_thread().name))
    assert names == [threading.current_thread().name]


def test_share_runs_side_by_side(share):
    """With a share of 3, three ranges run at once (each waits for the others to have started)."""
    share(3)
    started = threading.Barrier(3, timeout=10)
    names = set()

    def wait(lo: int, hi: int) -> None:
        if len(names) < 3:
            names.add(threading.current_thread().name)
            started.wait()

    sp.spread(3, wait)
    assert len(names) == 3


def test_a_share_that_grows_gets_a_helper_in_the_call():
    """A worker alone after the others finished (its share now() grows from 1 to 2 during a call) takes the freed
    thread over at its next range: two of the later ranges run at once (each waits for the other)."""
    live = [1]
    sp.set_share(2, lambda: live[0])
    try:
        both = threading.Barrier(2, timeout=10)
        waiting = []
        lock = threading.Lock()

        def work(lo: int, hi: int) -> None:
            if lo == 0:
                live[0] = 2  # the other worker is done
                return
            with lock:
                waiting.append(lo)
                first_two = len(waiting) <= 2
            if first_two:
                both.wait()

        sp.spread(8, work)
        assert len(waiting) == 7
    finally:
        sp._local.share = sp._local.now = None


def test_ranges_are_cut_for_the_most_threads(share):
    """The ranges do not depend on the share at the moment (one, while every worker is busy): a call cut for two
    threads runs its eight ranges in the caller alone."""
    sp.set_share(2, lambda: 1)
    try:
        names = []
        sp.spread(100, lambda lo, hi: names.append(threading.current_thread().name))
        assert len(sp.pieces(100)) - 1 == 2 * sp.PIECES_PER_THREAD
        assert names == [threading.current_thread().name] * (2 * sp.PIECES_PER_THREAD)
    finally:
        sp._local.now = None


def test_error_reaches_the_caller(share):
    share(2)

    def fail(lo: int, hi: int) -> None:
        time.sleep(0.001)
        if lo == 0:
            raise ValueError("range 0")

    with pytest.raises(ValueError, match="range 0"):
        sp.spread(100, fail)


def test_no_kernel_is_parallel():
    """Every numba kernel of the package is serial: parallel=True compiles a prange loop twice."""
    from numba.core.registry import CPUDispatcher

    parallel = []
    for info in pkgutil.walk_packages(seedmap.__path__, "seedmap."):
        if ".backends.cuda" in info.name or ".backends.opencl" in info.name or info.name.endswith("__main__"):
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.targetoptions.get("parallel"):
                parallel.append(f"{info.name}.{name}")
    assert parallel == []
