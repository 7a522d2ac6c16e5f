"""`seedmap map --dask ADDRESS`: the batches are mapped by the workers of a Dask cluster; this process (the
client) reads them and writes their output, in read order, through the same sink as a local run, so the
output is byte for byte a local run's.

    client:   index header (names, lengths) -> raw batches (record bytes, cut as a local run cuts them)
              -> tasks, at most WINDOW batches read and not yet written (back-pressure: bounded memory
              for any input size) -> results in read order -> SAM or BAM
    workers:  dask_worker.py: each opens the index once (memory-mapped) and keeps it between batches

Set-up: the client checks that every worker reads the same index at the client's path (the sha1 of its
header.json, which holds every array's CRC); when one does not, the index files are scattered once to
every worker instead. One task per worker then opens the index and warms the kernels up, before the
mapping clock starts. A paired run's insert size comes from its first pairs as in a local run (one task
on a worker, which holds the index), and every batch is mapped with it.

Faults: the client holds the future of every batch not yet written, so when a worker dies Dask runs its
batches again elsewhere; each batch is written once, at its place in the order. A batch whose input is
bad comes back as a Failure (dask_worker.py): the run stops with its one-line error, and the output
(written under a temporary name) is removed.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from seedmap.errors import SeedmapError
from seedmap.io.chunks import RawBatch
from seedmap.io.output import open_sink
from seedmap.io.reference import Reference
from seedmap.io.sam import header
from seedmap.options import MIN_GPU_WORKERS
from seedmap.pipeline.dask_worker import (
    Done,
    Failure,
    Job,
    Ready,
    estimate_task,
    header_id,
    map_task,
    prepare_task,
    sees_index,
    ship,
)
from seedmap.pipeline.empty import header_only
from seedmap.pipeline.inputs import ESTIMATE_PAIRS, Head, check_reference, open_reads, warn_if_slow
from seedmap.pipeline.pairs import chosen_insert, pair_summary, sample
from seedmap.pipeline.run_options import RunOptions
from seedmap.pipeline.single import DEPTH, progress, single_summary
from seedmap.pipeline.timings import RunTimings

if TYPE_CHECKING:
    from dask.typing import Key
    from distributed import Client, Future

    from seedmap.paired.insert_size import InsertModel

log = logging.getLogger("seedmap")

WORKER_WAIT = 60.0  # seconds to wait for a first worker at a scheduler's address
CONNECT_WAIT = 30.0
# A local cluster's background work, which takes cores from the mapping on a small machine: no statistical
# profiler in the workers (it samples every thread's stack every 10 ms, for a dashboard not served), and
# the event-loop watchdog of the scheduler, nannies and workers ticking every second instead of every
# 20 ms (idle, the client's process and the workers spent 4x less CPU: 0.11 s per 10 s instead of 0.47).
LOCAL_CONFIG = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s"}
INSTALL = 'seedmap map --dask needs Dask: pip install "seedmap[dask]"'


def need_distributed() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise SeedmapError(INSTALL) from None


def run_on_dask(opts: RunOptions) -> None:
    t0 = time.perf_counter()
    # The workers' devices are theirs to resolve: a GPU's batch is the one of its fewest workers.
    opts = opts.with_batch_size(MIN_GPU_WORKERS if opts.device.startswith(("cuda", "opencl")) else 0)
    need_distributed()
    check_reference(opts)
    head = open_reads(opts)  # bad reads, or an -e too large for them, fail before the cluster starts
    index, index_id, ref = stored_index(opts)
    if head.empty():
        header_only(opts, ref)
        return
    warn_if_slow(opts.map, head.lengths(), ref.total)
    timings = RunTimings()
    relay = Relay(opts.verbose)
    import dask

    # A batch travels inside its task, so that the scheduler holds it and can run it again when the worker
    # dies (data scattered to a worker would die with it): Dask's warning about graphs over 10 MB is moot.
    assert opts.dask is not None  # (the map command's --dask)
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "64GB"}), connect(opts.dask) as client:
        threads = sum(client.nthreads().values())
        shipped = share_or_ship(client, index, index_id)
        job = Job(uuid.uuid4().hex, opts, str(index), index_id)
        t1 = time.perf_counter()
        timings.add("set-up (index header, cluster)", t1 - t0)
        prepare_workers(client, job, shipped, relay)
        t2 = time.perf_counter()
        timings.add("workers' set-up (index, warm-up)", t2 - t1)
        items, insert = batches(client, job, shipped, relay, head)
        if opts.paired:
            timings.add("insert size estimate", time.perf_counter() - t2)

        def submit(i: int, raw: RawBatch) -> Future:
            return client.submit(map_task, job, shipped, raw, insert, key=f"seedmap-map-{job.token}-{i}", retries=0)

        flow = Flow(client, DEPTH * max(threads, 1), relay)
        totals: dict[str, int] = {}
        t_map = time.perf_counter()
        with (open_sink(opts.output, ref, opts.threads, opts.reference) as sink,
              progress(opts.progress, opts.progress_every) as advance):
            text = header(ref, opts.command_line)
            sink.header(opts.read_group.add_to_header(text) if opts.read_group else text)
            for done in flow.results(items, submit, lambda d: advance(d.stats.reads)):
                t = time.perf_counter()
                sink.records(done.data)
                timings.add("write", time.perf_counter() - t)
                timings.merge(done.seconds, done.parts)
                for key, value in vars(done.stats).items():
                    totals[key] = totals.get(key, 0) + value
        elapsed = time.perf_counter() - t_map
    _summary(opts, totals, elapsed, time.perf_counter() - t0)
    if opts.verbose:
        timings.add("read (client)", flow.reading)
        timings.add("client waiting for results", flow.waiting)
        timings.report(elapsed, threads, flow.busy)
        if flow.count:
            log.info("  dask: %d batches, %.2f MB sent and %.2f MB received per batch, results arrived %.1f ms "
                     "after their task ended (mean); client process CPU %.1f s", flow.count,
                     flow.sent / flow.count / 1e6, flow.received / flow.count / 1e6,
                     1000 * flow.latency / flow.count, _cpu_seconds())


def stored_index(opts: RunOptions) -> tuple[Path, str, Reference]:
    """The index the workers map with (absolute path), its identity, and its reference (names, lengths for
    the header), loaded here with the checks a load makes (the FASTA's stamp; every byte once per state of the
    index's files)."""
    from seedmap.index import store
    from seedmap.kinds import KINDS

    kind = opts.engine.kind
    path = Path(opts.index) if opts.index else store.default_path(opts.reference, kind)
    if not opts.index and not path.exists():
        flag = "" if kind == "neighborhood" else f" --kind {kind}"
        raise SeedmapError(f"{path}: no {kind} index; --dask workers map with a stored index "
                           f"(run: seedmap index{flag} {opts.reference})")
    st = store.load(path, kind, KINDS[kind].header_arrays, opts.reference)
    return path.resolve(), header_id(path), st.reference


@contextmanager
def connect(address: str) -> Iterator[Client]:
    """A client of the scheduler at `address` (or of a scheduler file), or of a LocalCluster of N worker
    processes for local:N (one thread each: each maps one batch at a time on -t threads)."""
    import dask
    from distributed import Client, LocalCluster

    if address == "local" or address.startswith("local:"):
        n = _local_workers(address)
        # No memory limit: the mapped index counts in a worker's RSS but is the page cache's, shared. Dask's
        # own log lines are not the user's business here: warnings (a worker slow to exit, killed at the end)
        # nor errors (a heartbeat racing the scheduler's shutdown prints a traceback); a failed task or a
        # lost worker still reaches seedmap as an exception. LOCAL_CONFIG holds while the cluster lives (a
        # worker restarted after a crash reads it again).
        with (dask.config.set(LOCAL_CONFIG),
              LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                           memory_limit=0, silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client):
            log.info("Dask: a local cluster of %d worker process%s", n, "" if n == 1 else "es")
            yield client
        return
    try:
        client = (Client(scheduler_file=address, timeout=CONNECT_WAIT) if os.path.isfile(address)
                  else Client(address, timeout=CONNECT_WAIT))
    except (OSError, ValueError, TypeError) as exc:
        raise SeedmapError(f"--dask {address}: cannot reach a Dask scheduler ({_first_line(exc)})") from None
    try:
        try:
            client.wait_for_workers(1, timeout=WORKER_WAIT)
        except TimeoutError:
            raise SeedmapError(f"--dask {address}: no Dask worker joined in {WORKER_WAIT:.0f} s (start some: "
                               f"dask worker {address})") from None
        workers = client.nthreads()
        log.info("Dask: scheduler %s, %d workers, %d threads", address, len(workers), sum(workers.values()))
        yield client
    finally:
        client.close()


def _local_workers(address: str) -> int:
    if address == "local":
        return max(1, os.cpu_count() or 1)
    text = address.split(":", 1)[1]
    if not text.isdigit() or int(text) < 1:
        raise SeedmapError(f"--dask {address}: give local:N with N worker processes, at least 1")
    return int(text)


def share_or_ship(client: Client, index: Path, index_id: str) -> Future | None:
    """None when every worker reads the index at `index`, else the future of its files scattered to every
    worker (once: Dask keeps them on each worker and gives them to workers that join later)."""
    seen = client.run(sees_index, str(index), index_id)
    blind = sorted(w for w, ok in seen.items() if not ok)
    if not blind:
        log.info("index %s: every worker (%d) reads it at this path (memory-mapped)", index, len(seen))
        return None
    files = ship(index, index_id)
    size = sum(len(b) for b in files.files.values())
    log.info("index %s: not at this path on %d of %d workers: sending it (%.1f MB) once to each worker", index,
             len(blind), len(seen), size / 1e6)
    return client.scatter(files, broadcast=True, hash=False)


def prepare_workers(client: Client, job: Job, shipped: Future | None, relay: Relay) -> None:
    """Every worker opens the index and warms its kernels up (a worker that joins later does so on its
    first batch)."""
    workers = list(client.nthreads())
    log.info("preparing %d Dask worker%s: each opens the index and loads (the first time: compiles) the kernels",
             len(workers), "" if len(workers) == 1 else "s")
    t0 = time.perf_counter()
    futures = [client.submit(prepare_task, job, shipped, key=f"seedmap-prepare-{job.token}-{k}", workers=[w],
                             allow_other_workers=True, retries=0) for k, w in enumerate(workers)]
    try:
        for f in futures:
            relay.value(_outcome(f, f.result(), "the set-up"))
    finally:
        client.cancel(futures)
    log.info("workers ready in %.1f s", time.perf_counter() - t0)


def batches(client: Client, job: Job, shipped: Future | None, relay: Relay,
            head: Head) -> tuple[Iterable[RawBatch], InsertModel | None]:
    """The run's raw batches (`head`: the opened reads), and the insert size of a paired run (estimated from
    its first pairs on a worker, exactly as a local run does; None for single-end reads)."""
    o = job.opts
    if not o.paired:
        return head.raw_then_rest(), None
    if o.insert is not None:
        log.info("insert size (given): %s", o.insert.describe())
        return head.raw_then_rest(), o.insert
    f = client.submit(estimate_task, job, shipped, sample(head.parsed, ESTIMATE_PAIRS),
                      key=f"seedmap-insert-{job.token}", retries=0)
    value = relay.value(_outcome(f, f.result(), "the insert size estimate"))
    assert isinstance(value, tuple)  # estimate_task's (model or None, pairs used)
    found, used = value
    return head.raw_then_rest(), chosen_insert(o, found, used)


class Relay:
    """Logs what the workers' tasks logged: each warning once (every worker warns for itself), the
    workers' other lines with -v, named by worker."""

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.seen: set[str] = set()

    def __call__(self, result: Done | Ready | Failure) -> None:
        for level, message in result.logs:
            if level >= logging.WARNING:
                if message not in self.seen:
                    self.seen.add(message)
                    log.log(level, "%s", message)
            elif self.verbose:
                log.log(level, "worker %s: %s", result.worker, message)

    def value(self, result: Done | Ready | Failure) -> object:
        """The result's logs, then its value; a Failure raises its error."""
        self(result)
        if isinstance(result, Failure):
            raise SeedmapError(result.message)
        return result.value if isinstance(result, Ready) else result


class Flow:
    """Batches to tasks and results back in order, at most `window` batches read and not yet written."""

    def __init__(self, client: Client, window: int, relay: Relay) -> None:
        self.client, self.window, self.relay = client, window, relay
        self.reading = self.waiting = self.busy = self.latency = 0.0
        self.count = self.sent = self.received = 0

    def results(self, items: Iterable[RawBatch], submit: Callable[[int, RawBatch], Future],
                arrived: Callable[[Done], None]) -> Iterator[Done]:
        from distributed import as_completed

        ac = as_completed(with_results=True, raise_errors=False, loop=self.client.loop)
        inflight: dict[Key, tuple[int, Future, int]] = {}  # (batch number, future, its first read)
        done: dict[int, Done] = {}
        it = iter(items)
        read = written = 0
        more = True
        try:
            while True:
                while more and read - written < self.window:
                    t = time.perf_counter()
                    raw = next(it, None)
                    self.reading += time.perf_counter() - t
                    if raw is None:
                        more = False
                        break
                    f = submit(read, raw)
                    inflight[f.key] = (read, f, raw.first)
                    self.sent += sum(len(b) for b in raw.blocks)
                    ac.add(f)
                    read += 1
                if written == read:
                    return
                t = time.perf_counter()
                f, result = next(ac)
                self.waiting += time.perf_counter() - t
                i, _, first = inflight.pop(f.key)
                res = _outcome(f, result, f"the batch of reads from read {first + 1}")
                self.relay.value(res)
                assert isinstance(res, Done)  # (value raised a Failure; map_task returns no Ready)
                self._account(res)
                arrived(res)
                done[i] = res
                while written in done:
                    yield done.pop(written)
                    written += 1
        finally:
            if inflight:
                self.client.cancel([f for _, f, _ in inflight.values()])

    def _account(self, d: Done) -> None:
        self.count += 1
        self.busy += d.busy
        self.received += len(d.data)
        self.latency += max(0.0, time.time() - d.finished)


def _outcome(future: Future, result: object, what: str) -> Done | Ready | Failure:
    """A task's value, or its error as seedmap's: a worker that died too often, a cancelled task."""
    status = future.status
    if status == "finished":
        assert isinstance(result, Done | Ready | Failure)  # what the tasks return
        return result
    if status == "error":
        assert isinstance(result, tuple)  # as_completed's (type, exception, traceback)
        _, exc, tb = result
        from distributed import KilledWorker

        if isinstance(exc, KilledWorker):
            raise SeedmapError(f"Dask workers died while running {what}, too often to try again "
                               "(see the workers' logs)") from None
        raise exc.with_traceback(tb)
    raise SeedmapError(f"Dask lost {what} ({status}): did the scheduler stop?")


def _summary(opts: RunOptions, totals: dict, elapsed: float, total: float) -> None:
    (pair_summary if opts.paired else single_summary)(opts, totals, elapsed, total)


def _cpu_seconds() -> float:
    """This process's CPU time: reading, writing, Dask's client (and a local cluster's scheduler)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
