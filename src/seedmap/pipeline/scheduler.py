"""Several batches in flight: a reader thread, worker threads sharing one dynamic queue, results in order.

    reader thread:  items -> task queue               (parsing overlaps mapping)
    worker threads: task -> fn(task)                  (one whole batch each, kernels release the GIL)
    caller:         results, in item order            (writes while the workers map the next batches)

At most `depth` items per worker are read and not yet handed to the caller, so memory stays bounded
whatever the input size; an error (in a worker, or raised by the item iterator) surfaces in the caller
where its item's result would have been, and stops the rest.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence


class Scheduler:
    """Runs worker factories over items; iterate results() once. reader_seconds: time the reader spent
    producing items (parsing), worker_seconds: time workers spent in fn (busy)."""

    def __init__(self, items: Iterable, workers: Sequence[Callable[[], Callable[..., object]]],
                 depth: int = 2) -> None:
        self.items = items
        self.workers = workers
        self.slots = threading.Semaphore(max(1, depth) * len(workers))  # items read, not yet yielded
        self.tasks: queue.Queue = queue.Queue()
        self.done: dict[int, tuple[bool, object]] = {}
        self.cond = threading.Condition()
        self.stop = threading.Event()
        self.end: int | None = None  # number of items, once the reader is done
        self.reader_seconds = 0.0
        self.worker_seconds = 0.0
        self.reader_blocked = 0.0  # the reader waiting for a slot: the writer is behind
        self.caller_waiting = 0.0  # the caller waiting for the next result in order

    def _post(self, i: int, ok: bool, value: object) -> None:
        with self.cond:
            self.done[i] = (ok, value)
            self.cond.notify_all()

    def _work(self, factory: Callable[[], Callable[[object], object]]) -> None:
        fn = None
        while True:
            task = self.tasks.get()
            if task is None or self.stop.is_set():
                return
            i, item = task
            t0 = time.perf_counter()
            try:
                if fn is None:
                    fn = factory()
                self._post(i, True, fn(item))
            except BaseException as exc:  # handed to the caller, in order
                self._post(i, False, exc)
            with self.cond:
                self.worker_seconds += time.perf_counter() - t0

    def _read(self) -> None:
        i = 0
        it = iter(self.items)
        try:
            while True:
                t0 = time.perf_counter()
                while not self.slots.acquire(timeout=0.1):
                    if self.stop.is_set():
                        return
                self.reader_blocked += time.perf_counter() - t0
                if self.stop.is_set():
                    return
                t0 = time.perf_counter()
                item = next(it, _END)
                self.reader_seconds += time.perf_counter() - t0
                if item is _END:
                    break
                self.tasks.put((i, item))
                i += 1
        except BaseException as exc:
            self._post(i, False, exc)
            i += 1
        finally:
            with self.cond:
                self.end = i
                self.cond.notify_all()
            for _ in self.workers:
                self.tasks.put(None)

    def results(self) -> Iterator:
        threads = [threading.Thread(target=self._work, args=(w,), daemon=True, name=f"seedmap-worker-{k}")
                   for k, w in enumerate(self.workers)]
        threads.append(threading.Thread(target=self._read, daemon=True, name="seedmap-reader"))
        for t in threads:
            t.start()
        try:
            i = 0
            while True:
                t0 = time.perf_counter()
                with self.cond:
                    while i not in self.done and (self.end is None or i < self.end):
                        self.cond.wait()
                    if i not in self.done:
                        return
                    ok, value = self.done.pop(i)
                self.caller_waiting += time.perf_counter() - t0
                if not ok:
                    assert isinstance(value, BaseException)
                    raise value
                yield value
                self.slots.release()
                i += 1
        finally:
            self.stop.set()
            for _ in self.workers:  # wake idle workers so they end
                self.tasks.put(None)


_END = object()


def ordered_queue(items: Iterable, workers: list[Callable[[], Callable[[object], object]]],
                  depth: int = 2) -> Iterator:
    """Results of items processed by several workers sharing one dynamic queue, yielded in item order.
    Each worker is a factory called once in its own thread (where it binds a GPU or sets its thread
    count) that returns the function applied to the items it takes."""
    return Scheduler(items, workers, depth).results()
