"""What the worker threads on one GPU share: the device copies of the reference and the index (and the
CPU engine that filters what the GPU does not).

Each worker has its own CUDA stream and its own batch on the device, but the reference and the index are
read-only, so one copy per device serves every worker: the first worker to need a copy makes it (a
synchronous copy, so it is complete before any stream reads it) and the others wait for it and take it.
Memory on the device then does not grow with the number of workers, and a run can have as many workers as
host threads: their host stages (parsing, traceback, records, SAM) run side by side.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")


class DeviceShare:
    """Device copies made once per device: get(owner, what, make) returns make()'s result for that host
    object and purpose, made by the first caller; the share keeps the owner alive while it holds its copy."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, int], tuple[object, object]] = {}

    def get(self, owner: object, what: str, make: Callable[[], T]) -> T:
        key = (what, id(owner))
        with self._lock:  # held while copying: the other workers wait for the copy, not make their own
            if key not in self._held:
                self._held[key] = (owner, make())
            return cast(T, self._held[key][1])  # what make() returned for this key: a T
