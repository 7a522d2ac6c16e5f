"""The scheduler of a map run: a reader thread, workers sharing one dynamic queue, results in order, a
bounded number of batches in flight, errors where their batch would have been."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from seedmap.pipeline.scheduler import Scheduler, ordered_queue


def test_queue_keeps_order_and_shares_work():
    """Workers of different speeds take items dynamically; results come back in item order."""
    taken = {"slow": 0, "fast": 0}

    def make(name: str, delay: float) -> object:
        def start() -> object:
            def fn(x: int) -> int:
                taken[name] += 1
                time.sleep(delay * (1 + (x % 3)))
                return x * x
            return fn
        return start

    got = list(ordered_queue(iter(range(60)), [make("slow", 0.01), make("fast", 0.0005)]))
    assert got == [x * x for x in range(60)]
    assert taken["fast"] > taken["slow"] > 0


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
    before = threading.active_count()
    assert list(ordered_queue(iter([]), [lambda: (lambda x: x)])) == []
    assert list(ordered_queue(iter(np.arange(3)), [lambda: (lambda x: int(x) + 1)] * 2)) == [1, 2, 3]
    time.sleep(0.2)
    assert threading.active_count() <= before + 1


def test_items_in_flight_are_bounded():
    """The reader stays at most depth x workers items ahead of the consumer (memory stays bounded)."""
    read = []

    def items() -> object:
        for i in range(100):
            read.append(i)
            yield i

    sched = Scheduler(items(), [lambda: (lambda x: x)] * 2, depth=2)
    it = sched.results()
    assert next(it) == 0
    time.sleep(0.3)
    assert len(read) <= 1 + 2 * 2
    assert list(it) == list(range(1, 100))
    assert sched.worker_seconds >= 0 and sched.reader_seconds >= 0
