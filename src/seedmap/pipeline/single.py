"""A map run's set-up (the index, the engine, the record formatter) and its single-end batches (SingleRun;
pairs.py: PairRun): what a local run (run.py) and a Dask worker (dask_worker.py) both do."""


from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

import numpy as np

from seedmap.backends.base import DeviceBackend, EngineInputs
from seedmap.backends.select import resolve
from seedmap.engines.base import Engine
from seedmap.io.chunks import RawBatch
from seedmap.io.output import bam_records
from seedmap.io.reads import ReadBatch
from seedmap.io.reference import Reference
from seedmap.kinds import cpu_engine, load_or_build
from seedmap.options import MAX_ERROR_RATE
from seedmap.pipeline import threads as threading_setup
from seedmap.pipeline.guarantee import GuaranteeWarnings
from seedmap.pipeline.inputs import Head
from seedmap.pipeline.run_options import RunOptions
from seedmap.pipeline.stages import SamFormatter, map_batch
from seedmap.pipeline.timings import RunTimings, StageClock

log = logging.getLogger("seedmap")

DEPTH = 4  # batches per worker read and not yet written: slack for batches that finish out of order


@dataclass
class Setup:
    ref: Reference
    ix: object
    engine: Engine
    fmt: SamFormatter
    warn: GuaranteeWarnings


def load_engine(opts: RunOptions) -> tuple[Reference, object, Engine]:
    """The reference, its index (memory-mapped when stored, else built in memory) and the engine."""
    ref, ix = load_or_build(opts.reference, opts.index, opts.engine.kind)
    return ref, ix, cpu_engine(opts.engine.kind, ix, ref, opts.engine)


def prepare(opts: RunOptions, loaded: tuple[Reference, object, Engine] | None = None) -> Setup:
    """What a map run needs before its first read: the reference and its index, the engine the options
    ask for (`loaded`, when already open: a Dask worker keeps them between runs), the record formatter,
    and the warnings for plans that lose sensitivity (a run's own: they warn once per read length)."""
    ref, ix, engine = loaded if loaded is not None else load_engine(opts)
    o = opts.engine
    warn = GuaranteeWarnings(opts.map, engine.max_window, o.windows, o.step, o.fe, engine.guarantee)
    fmt = SamFormatter(ref, opts.read_group, bam=bam_records(opts.output), secondary_seq=opts.secondary_seq)
    return Setup(ref, ix, engine, fmt, warn)


def device_backend(opts: RunOptions) -> DeviceBackend | None:
    """The devices the options ask for (None: the CPU; a missing GPU is an error)."""
    return resolve(opts.device)


def engine_inputs(opts: RunOptions, s: Setup) -> EngineInputs:
    """What a device backend makes the run's engines from."""
    return EngineInputs(opts.engine.kind, s.ix, s.ref, opts.engine, s.engine)


class SingleRun:
    """Single-end reads: batches of reads, each through map_batch."""

    def __init__(self, opts: RunOptions, s: Setup) -> None:
        self.opts, self.s = opts, s

    def batches(self, head: Head) -> Iterator[RawBatch | ReadBatch]:
        """The opened reads' first batch (parsed already), then raw batches: the workers parse them."""
        return head.parsed_then_rest()

    def parsed(self, item: RawBatch | ReadBatch) -> ReadBatch:
        batch = item.parse() if isinstance(item, RawBatch) else item
        self.s.warn.check(batch.lengths)
        return batch

    def map(self, batch: ReadBatch, clock: StageClock | None = None, engine: Engine | None = None) -> tuple:
        """(output bytes, stats) of a batch; its candidates from `engine` (a GPU's), else the run's engine."""
        return map_batch(batch, self.s.engine if engine is None else engine, self.s.fmt, self.opts.map, clock)

    def warm(self, batch: ReadBatch) -> None:
        """The warm-up's batch through every kernel the run's batches may call: the stages, the bulk
        verification that only repetitive reads take, and the sensitivity check of a new read length."""
        for m in np.unique(batch.lengths).tolist():
            self.s.warn.warm(m)
        with self.s.engine.bulk_verifying_all():
            self.map(batch)

    def worker(self, shares: threading_setup.ThreadShares, timings: RunTimings) -> Callable[[], Callable]:
        """A CPU worker factory: each worker maps whole batches, its kernels on its share of the threads."""
        return lambda: partial(self.work, shares=shares, timings=timings)

    def work(self, item: RawBatch | ReadBatch, shares: threading_setup.ThreadShares, timings: RunTimings,
             engine: Engine | None = None) -> tuple:
        """(output bytes, stats) of a batch, parsed here, mapped with `engine` (a GPU worker's) or the run's,
        the host kernels on this worker's share of the threads; its stage seconds added to `timings`."""
        shares.enter()
        try:
            clock = StageClock()
            batch = self.parsed(item)
            clock.lap("parse")
            data, stats = self.map(batch, clock, engine)
            timings.merge(clock.seconds, clock.parts)
            return data, stats
        finally:
            shares.leave()

    def summary(self, n: dict, elapsed: float, total: float) -> None:
        single_summary(self.opts, n, elapsed, total)


def single_summary(opts: RunOptions, n: dict, elapsed: float, total: float) -> None:
    """A single-end run's summary from its totals `n` (a Dask client has the options, not the run's set-up)."""
    reads = n.get("reads", 0)
    mapped = n.get("mapped", 0)
    log.info("mapped %d reads: %d (%.2f%%) with at least one location, %d records%s; %.0f reads/s "
             "(%.1f s mapping, %.1f s total)", reads, mapped, 100.0 * mapped / max(reads, 1), n.get("records", 0),
             short_note(n.get("short", 0), opts.map.min_length), reads / max(elapsed, 1e-9), elapsed, total)
    unplaced_note(reads - mapped - n.get("short", 0), reads, opts.map.errors)


def short_note(short: int, min_length: int) -> str:
    return f"; {short} reads shorter than {min_length} bp reported unmapped (--min-length)" if short else ""


def unplaced_note(unplaced: int, reads: int, errors: float) -> None:
    """Log the reads searched and not placed: a search within e edits finds every location there and none
    beyond, so to a bwa user (whose aligner places nearly every read, clipped) these would look lost."""
    if unplaced <= 0:
        return
    within = f"{int(errors)} edits" if errors >= 1 or errors == 0 else f"{100 * errors:g}% of their length in edits"
    further = ("" if 0 < errors < 1 and errors >= MAX_ERROR_RATE - 1e-12
               else "; a larger -e searches further (up to a quarter of the read length)")
    log.info("%d reads (%.2f%%) have no location within e = %s (-e %g), reported unmapped%s", unplaced,
             100.0 * unplaced / max(reads, 1), within, errors, further)


@contextmanager
def progress(bar: bool, every: float = 0.0) -> Iterator:
    """advance(reads) after each batch written: a live count on a terminal (`bar`), else, when every > 0, a
    log line every `every` seconds (a cluster job's log), as bwa's 'Processed N reads'."""
    if not bar:
        yield _progress_lines(every) if every > 0 else (lambda n: None)
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("mapping {task.completed:,} reads"), TimeElapsedColumn(),
                  transient=True, console=Console(stderr=True)) as live:
        task = live.add_task("map", total=None)
        yield lambda n: live.advance(task, n)


def _progress_lines(every: float) -> Callable[[int], None]:
    start = last = time.monotonic()
    done = 0

    def advance(n: int) -> None:
        nonlocal done, last
        done += n
        now = time.monotonic()
        if now - last >= every:
            last = now
            log.info("processed %d reads (%.0f reads/s)", done, done / max(now - start, 1e-9))

    return advance

