"""The scheduler of a map run: a reader thread, workers sharing one dynamic queue, results in order, a
bounded number of batches in flight, errors where their batch would have been."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from seedmap.pipeline.scheduler import Scheduler, ordered_queue


def test_queue_keeps_order_and_shares_work():
    """Workers take items from one dynamic queue: while one worker is held on its first item, the other
    takes three more (of the depth x workers = 4 read ahead; split item by item, it would get two); results
    come back in item order. Events, not sleeps, order the two workers."""
    taken = {"slow": 0, "fast": 0}
    slow_started, fast_took_three = threading.Event(), threading.Event()

    def slow() -> object:
        def fn(x: int) -> int:
            taken["slow"] += 1
            if taken["slow"] == 1:
                slow_started.set()
                assert fast_took_three.wait(60), "the other worker took no items while this one was busy"
            return x * x
        return fn

    def fast() -> object:
        def fn(x: int) -> int:
            taken["fast"] += 1
            if taken["fast"] == 1:
                assert slow_started.wait(60), "the slow worker never started"
            if taken["fast"] == 3:
                fast_took_three.set()
            return x * x
        return fn

    got = list(ordered_queue(iter(range(60)), [slow, fast], depth=2))
    assert got == [x * x for x in range(60)]
    assert fast_took_three.is_set() and taken["slow"] >= 1
    assert taken["slow"] + taken["fast"] == 60


def test_queue_surfaces_errors_in_order():
    def start() -> object:
        def fn(x: int) -> int:
            if x == 5:
                raise ValueError("bad batch 5")
            return x
        return fn

    seen = []
    with pytest.raises(ValueError, match="bad batch 5"):
        for x in ordered_queue(iter(range(20)), [start, start, start]):
            seen.append(x)
    assert seen == [0, 1, 2, 3, 4]

    def items() -> object:
        yield 1
        yield 2
        raise OSError("unreadable reads")

    seen = []
    with pytest.raises(OSError, match="unreadable"):
        for x in ordered_queue(items(), [start]):
            seen.append(x)
    assert seen == [1, 2]


def test_queue_empty_and_threads_end():
    before = set(threading.enumerate())
    assert list(ordered_queue(iter([]), [lambda: (lambda x: x)])) == []
    assert list(ordered_queue(iter(np.arange(3)), [lambda: (lambda x: int(x) + 1)] * 2)) == [1, 2, 3]
    started = [t for t in threading.enumerate() if t not in before]
    for t in started:
        t.join(timeout=30)
    assert not [t.name for t in started if t.is_alive()]


class WatchedSlots:
    """The scheduler's slot semaphore, noting when the reader finds no slot free (it then waits)."""

    def __init__(self, slots: threading.Semaphore) -> None:
        self.slots = slots
        self.full = threading.Event()

    def acquire(self, timeout: float | None = None) -> bool:
        got = self.slots.acquire(timeout=timeout)
        if not got:
            self.full.set()
        return got

    def release(self) -> None:
        self.slots.release()


def test_items_in_flight_are_bounded():
    """The reader stays exactly depth x workers items ahead of the consumer (memory stays bounded): once it
    waits for a slot, the items read are the one the caller holds and three more."""
    read = []

    def items() -> object:
        for i in range(100):
            read.append(i)
            yield i

    sched = Scheduler(items(), [lambda: (lambda x: x)] * 2, depth=2)
    sched.slots = watched = WatchedSlots(sched.slots)
    it = sched.results()
    assert next(it) == 0
    assert watched.full.wait(60), "the reader never ran out of slots"
    assert read == [0, 1, 2, 3]
    assert list(it) == list(range(1, 100))


def busy(seconds: float) -> None:
    """Keep the thread busy (not asleep) for this long."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_busy_seconds_are_counted():
    """worker_seconds: the time spent in fn (20 items of 5 ms on 2 workers: at least 0.1 s, at most the
    workers' wall time); reader_seconds: the time spent producing items (20 of 2 ms: at least 0.04 s)."""

    def items() -> object:
        for i in range(20):
            busy(0.002)
            yield i

    def work(x: int) -> int:
        busy(0.005)
        return x

    sched = Scheduler(items(), [lambda: work] * 2, depth=2)
    t0 = time.perf_counter()
    assert list(sched.results()) == list(range(20))
    wall = time.perf_counter() - t0
    assert 20 * 0.005 <= sched.worker_seconds <= 2 * wall
    assert 20 * 0.002 <= sched.reader_seconds <= wall
