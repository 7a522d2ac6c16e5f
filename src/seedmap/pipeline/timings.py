"""Where a run's time went, for `seedmap map -v`: seconds per stage summed over the worker threads,
the serial parts (set-up, parsing, writing), how busy the workers were, and a breakdown of some stages by what
their time went to with how many reads (StageClock.tally: the rounds of a stratified search)."""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict

log = logging.getLogger("seedmap")

BATCH_STAGES = ("parse", "queries", "candidates", "verify", "traceback", "records", "format", "pairing")


class StageClock:
    """Seconds per stage of one thread's work: lap(stage) charges the time since the last lap."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.parts: dict[str, tuple[float, int]] = {}  # tally's parts: (seconds, reads)
        self.t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] += now - self.t
        self.t = now

    def tally(self, part: str, since: float, reads: int) -> None:
        """The laps since `since` (an earlier self.t) charged to `part` as well, with `reads` reads: a breakdown
        of those stages, reported beside them, not added to them."""
        seconds, n = self.parts.get(part, (0.0, 0))
        self.parts[part] = (seconds + self.t - since, n + reads)


class RunTimings:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.parts: dict[str, tuple[float, int]] = {}  # StageClock.tally's parts: (seconds, reads)
        self.lock = threading.Lock()

    def add(self, stage: str, seconds: float) -> None:
        with self.lock:
            self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds

    def merge(self, seconds: dict[str, float], parts: dict[str, tuple[float, int]]) -> None:
        for stage, value in seconds.items():
            self.add(stage, value)
        with self.lock:
            for part, (value, reads) in parts.items():
                had, n = self.parts.get(part, (0.0, 0))
                self.parts[part] = (had + value, n + reads)

    def report(self, wall: float, workers: int, busy: float | None) -> None:
        lines = ["stage timings (s; batch stages summed over the worker threads):"]
        staged = [k for k in BATCH_STAGES if k in self.seconds]
        other = [k for k in self.seconds if k not in BATCH_STAGES]
        in_batches = sum(self.seconds[k] for k in staged)
        for k in staged:
            lines.append(f"  {k:<34} {self.seconds[k]:8.2f}  {100 * self.seconds[k] / max(in_batches, 1e-9):5.1f}%")
        if self.parts:
            lines.append("  of which (candidates, verify, runs), by round of the stratified search:")
        for k, (value, reads) in self.parts.items():  # in the order the first batch made them
            lines.append(f"    {k:<32} {value:8.2f}  {reads:,} reads")
        for k in other:
            lines.append(f"  {k:<34} {self.seconds[k]:8.2f}")
        lines.append(f"  {'mapping wall time':<34} {wall:8.2f}")
        if busy is not None:
            lines.append(f"  workers busy: {workers} x {wall:.2f} s, {100 * busy / max(workers * wall, 1e-9):.0f}%")
        for line in lines:
            log.info("%s", line)
