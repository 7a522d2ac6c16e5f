"""One `seedmap map` run, single-end or paired: set-up, the threaded pipeline, the summary (or on Dask:
dask_run.py); and the kernels a map run will need, compiled after `seedmap index` (compile_for_index).

    set-up:    index (memory-mapped) -> engine -> formatter -> warm-up (compiles, outside the clock)
    pipeline:  reader thread (cuts raw batches) -> workers (parse, then every stage of a batch)
               -> this thread (write, in order)
    paired:    the insert size is estimated from the first pairs before any pair is written, so the
               output does not depend on batching or threads
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial

from seedmap.io.output import open_sink
from seedmap.io.reference import Reference
from seedmap.io.sam import header
from seedmap.jit.precompile import VARIANTS
from seedmap.jit.warmup import warm_up
from seedmap.kinds import reference_only
from seedmap.options import EngineOptions, MapOptions, gpu_workers
from seedmap.pipeline import threads as threading_setup
from seedmap.pipeline.devices import device_scheduler
from seedmap.pipeline.empty import header_only
from seedmap.pipeline.inputs import check_reference, open_reads, warn_if_slow
from seedmap.pipeline.pairs import PairRun
from seedmap.pipeline.run_options import RunOptions
from seedmap.pipeline.scheduler import Scheduler
from seedmap.pipeline.single import DEPTH, SingleRun, device_backend, engine_inputs, prepare, progress
from seedmap.pipeline.stages import SamFormatter
from seedmap.pipeline.timings import RunTimings
from seedmap.spread import set_share

log = logging.getLogger("seedmap")

def run_map(opts: RunOptions) -> None:
    if opts.dask:
        from seedmap.pipeline.dask_run import run_on_dask

        run_on_dask(opts)
        return
    t0 = time.perf_counter()
    check_reference(opts)  # before anything is loaded, logged or written
    backend = device_backend(opts)  # before the index is loaded: a missing GPU fails fast
    per_device = gpu_workers(opts.threads, len(backend.ids)) if backend is not None else 0
    opts = opts.with_batch_size(per_device)
    shares = threading_setup.ThreadShares(opts.threads)
    workers = per_device * len(backend.ids) if backend is not None and per_device else shares.threads
    head = open_reads(opts, workers)  # bad reads, or an -e too large for them, fail before the index loads
    if head.empty():  # (no index built in memory for it, no kernels compiled)
        header_only(opts, reference_only(opts.reference, opts.index, opts.engine.kind))
        return
    timings = RunTimings()
    s = prepare(opts)
    warn_if_slow(opts.map, head.lengths(), s.ref.total)
    timings.add("set-up (index, engine)", time.perf_counter() - t0)
    run = PairRun(opts, s) if opts.paired else SingleRun(opts, s)
    set_share(shares.threads)  # this thread's kernels: warm-up, insert size estimate
    t1 = time.perf_counter()
    warm_up(s.ref, opts.paired, opts.engine.kind, run.warm, opts.map.stratified, s.fmt.bam)
    t2 = time.perf_counter()
    timings.add("warm-up (compile or load kernels)", t2 - t1)
    batches = run.batches(head)  # paired runs estimate the insert size here
    if opts.paired:
        timings.add("insert size estimate", time.perf_counter() - t2)
    totals: dict[str, int] = {}
    t_map = time.perf_counter()
    if backend is None:
        sched = Scheduler(batches, [run.worker(shares, timings)] * shares.threads, DEPTH)
    else:
        sched = device_scheduler(batches, backend, engine_inputs(opts, s),
                                 partial(run.work, shares=shares, timings=timings), per_device)
    results = sched.results()
    with (open_sink(opts.output, s.ref, shares.threads, opts.reference) as sink,
          progress(opts.progress, opts.progress_every) as advance):
        text = header(s.ref, opts.command_line)
        sink.header(opts.read_group.add_to_header(text) if opts.read_group else text)
        for data, stats, *_ in results:
            t = time.perf_counter()
            sink.records(data)
            timings.add("write", time.perf_counter() - t)
            for key, value in vars(stats).items():
                totals[key] = totals.get(key, 0) + value
            advance(stats.reads)
    elapsed = time.perf_counter() - t_map
    run.summary(totals, elapsed, time.perf_counter() - t0)
    if opts.verbose:
        timings.add("read (reader thread)", sched.reader_seconds)
        timings.add("reader waiting for a free slot", sched.reader_blocked)
        timings.add("writer waiting for the next batch", sched.caller_waiting)
        timings.report(elapsed, len(sched.workers), sched.worker_seconds)


def variant_run(fasta: str, index_path: str | None, kind: str, name: str) -> tuple[Reference, bool, Callable]:
    """(reference, paired, the run's warm) of this kind of run (a precompile.variant key; one "-memory" needs
    a FASTA without an index) with default options."""
    paired, stratified, bam = VARIANTS[name.removesuffix("-memory")]
    opts = RunOptions(reference=fasta, reads="", index=index_path, engine=EngineOptions(kind=kind),
                      map=MapOptions(best_only=stratified))
    s = prepare(opts)
    if bam:
        s.fmt = SamFormatter(s.ref, bam=True)
    return s.ref, paired, (PairRun(opts, s) if paired else SingleRun(opts, s)).warm


def compile_for_index(fasta: str, index_path: str, kind: str, names: tuple[str, ...] = ("se",),
                      announced: bool = False) -> None:
    """After `seedmap index`: compile the kernels that mapping with this index needs, of the kinds of run
    `names` (precompile.VARIANTS keys). By default a single-end run writing SAM, what a first map run most
    likely is; the others (--best/-n, paired, BAM) compile in the first run that needs them, a few seconds."""
    for name in names:
        paired, stratified, bam = VARIANTS[name]
        ref, _, warm = variant_run(fasta, index_path, kind, name)
        warm_up(ref, paired, kind, warm, stratified, bam, announced=announced)
