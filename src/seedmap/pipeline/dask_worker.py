"""The Dask workers' side of `seedmap map --dask`: tasks that each map one raw batch, in worker processes
that keep what a run needs from one batch to the next.

A worker process keeps the indexes it opened (memory-mapped, with their engines; the last KEEP_INDEXES)
for its whole life, and each run's own state (record formatter, sensitivity warnings, insert size,
warm-up done) for the last KEEP_RUNS runs. So nothing of the index travels with a batch: a task carries
the run's small Job (options, where the index is) and the batch's raw record bytes, and returns the
batch's output bytes and counts. An index that the workers cannot read at the client's path comes as a
ShippedIndex, scattered once to every worker (Dask keeps one copy per worker), written to the worker's
local directory and memory-mapped from there.

Errors the user can act on (bad input, an unreadable index, no GPU) come back as a Failure value, not as
an exception: Dask would log a traceback on the worker, retry, and hand the client a remote traceback.
The "seedmap" logger's messages during a task (the plan warnings, the set-up lines) travel back with its
result, and the client logs them.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from seedmap.errors import SeedmapError
from seedmap.io.chunks import RawBatch
from seedmap.io.reads import ReadBatch
from seedmap.pipeline.run_options import RunOptions

if TYPE_CHECKING:
    from seedmap.backends.base import EngineMaker
    from seedmap.paired.insert_size import InsertModel
    from seedmap.pipeline.stages import BatchStats
    from seedmap.pipeline.threads import ThreadShares

    Mapper = Callable[..., tuple[bytes, BatchStats]]  # a GPU worker thread's: a batch -> (output bytes, stats)

log = logging.getLogger("seedmap")

KEEP_INDEXES = 2  # opened indexes (with their engines) a worker process keeps for later runs
KEEP_RUNS = 4  # runs whose state a worker process keeps (several clients may share a cluster)


@dataclass(frozen=True)
class Job:
    """One run, as every task of it sees it."""

    token: str  # unique per run: the key of the run's state on a worker
    opts: RunOptions
    index: str  # the index directory at the client's (absolute) path
    index_id: str  # sha1 of its header.json (which holds every array's CRC): the same index at any path


@dataclass
class ShippedIndex:
    """An index directory's files, for workers that cannot read the client's path."""

    index_id: str
    files: dict[str, bytes]


@dataclass
class Done:
    data: np.ndarray  # the batch's SAM lines or BAM records, as bytes in an array: pickled out of band (no copy)
    stats: BatchStats  # or a PairStats
    seconds: dict[str, float]  # per stage (seedmap map -v)
    busy: float  # seconds the task took on the worker
    finished: float  # time.time() when it ended (the client measures how long the result took to arrive)
    logs: list[tuple[int, str]] = field(default_factory=list)
    worker: str = ""
    parts: dict[str, tuple[float, int]] = field(default_factory=dict)  # StageClock.tally's (seconds, reads)


@dataclass
class Ready:
    """A worker's set-up (index, engine, warm-up) for a run; `value` is what the task computed, if anything."""

    value: object = None
    seconds: float = 0.0
    logs: list[tuple[int, str]] = field(default_factory=list)
    worker: str = ""


@dataclass
class Failure:
    message: str  # a SeedmapError's: the client raises it as the run's one-line error
    logs: list[tuple[int, str]] = field(default_factory=list)
    worker: str = ""


def header_id(index_dir: str | Path) -> str:
    return hashlib.sha1((Path(index_dir) / "header.json").read_bytes()).hexdigest()


def sees_index(index_dir: str, index_id: str) -> bool:
    """Whether this worker reads the same index at `index_dir` (run by the client on every worker)."""
    try:
        return header_id(index_dir) == index_id
    except OSError:
        return False


def ship(index_dir: Path, index_id: str) -> ShippedIndex:
    return ShippedIndex(index_id, {p.name: p.read_bytes() for p in sorted(index_dir.iterdir()) if p.is_file()})


# -- the tasks -------------------------------------------------------------------------------------------


def prepare_task(job: Job, shipped: ShippedIndex | None) -> Ready | Failure:
    """Open the index and warm the kernels up on this worker before the batches come."""
    with _Captured() as logs:
        t0 = time.perf_counter()
        try:
            _state(job, shipped)
        except SeedmapError as exc:
            return Failure(str(exc), logs, _worker_name())
        return Ready(None, time.perf_counter() - t0, logs, _worker_name())


def estimate_task(job: Job, shipped: ShippedIndex | None, first_pairs: ReadBatch) -> Ready | Failure:
    """The insert size of a paired run from its first pairs, as a local run estimates it: (model, pairs used)."""
    with _Captured() as logs:
        t0 = time.perf_counter()
        try:
            from seedmap.pipeline.pairs import PairRun

            st = _state(job, shipped)
            assert isinstance(st.run, PairRun), "the insert size of a paired run"
            with st.cpu():
                value = st.run.estimate(first_pairs)
        except SeedmapError as exc:
            return Failure(str(exc), logs, _worker_name())
        return Ready(value, time.perf_counter() - t0, logs, _worker_name())


def map_task(job: Job, shipped: ShippedIndex | None, raw: RawBatch,
             insert: InsertModel | None = None) -> Done | Failure:
    """One batch: parse, map, format; the paired run's insert size is the client's."""
    with _Captured() as logs:
        t0 = time.perf_counter()
        try:
            st = _state(job, shipped)
            if insert is not None:
                from seedmap.pipeline.pairs import PairRun

                assert isinstance(st.run, PairRun), "the insert size of a paired run"
                st.run.insert = insert
            data, stats, seconds, parts = st.map(raw)
        except SeedmapError as exc:
            return Failure(str(exc), logs, _worker_name())
        return Done(np.frombuffer(data, dtype=np.uint8), stats, seconds, time.perf_counter() - t0, time.time(), logs,
                    _worker_name(), parts)


# -- what a worker process keeps ---------------------------------------------------------------------------

_lock = threading.Lock()
_indexes: OrderedDict[tuple, tuple] = OrderedDict()
_runs: OrderedDict[str, _RunState] = OrderedDict()
_shares: dict[int, ThreadShares] = {}
_started = False


class _RunState:
    """A run on this worker process: its SingleRun/PairRun over the shared index, its share of the threads (-t),
    or its GPU mappers (one per worker thread, the GPUs taken in turn; the threads on one GPU share its
    copies of the reference and index)."""

    def __init__(self, job: Job, loaded: tuple) -> None:
        from seedmap.pipeline import threads
        from seedmap.pipeline.single import SingleRun, device_backend, engine_inputs, prepare

        opts = job.opts
        s = prepare(opts, loaded)
        if opts.paired:
            from seedmap.pipeline.pairs import PairRun

            self.run: SingleRun = PairRun(opts, s)
        else:
            self.run = SingleRun(opts, s)
        self.backend = device_backend(opts)  # None: the CPU
        self.inputs = engine_inputs(opts, s)
        shares = _shares.get(opts.threads)
        if shares is None:
            shares = _shares[opts.threads] = threads.ThreadShares(opts.threads)
        self.shares = shares
        # -t 1: one batch at a time in this process (Dask may run several).
        self.serial = threading.Lock() if self.shares.threads == 1 else None
        self.mappers: dict[int, Mapper] = {}
        self.makers: dict[int, EngineMaker] = {}
        self.turn = itertools.count()
        self._warm_up()

    def cpu(self) -> _Share:
        return _Share(self.shares, self.serial)

    def _warm_up(self) -> None:
        from seedmap.jit.warmup import warm_up

        s, opts = self.run.s, self.run.opts
        if self.backend is not None:
            self.backend.prepare(self.inputs)
            return
        with self.cpu():
            # In this process alone: the Dask workers of a machine already compile side by side, each one
            # set of the kernels (with compiling processes of their own each, a first local:2 run took 41 s, not 35).
            warm_up(s.ref, opts.paired, opts.engine.kind, self.run.warm, opts.map.stratified, s.fmt.bam,
                    processes=False)

    def map(self, raw: RawBatch) -> tuple[bytes, BatchStats, dict[str, float], dict[str, tuple[float, int]]]:
        from seedmap.pipeline.timings import RunTimings

        timings = RunTimings()
        if self.backend is not None:
            data, stats = self._device_mapper()(raw, shares=self.shares, timings=timings)
        else:
            with self.serial or contextlib.nullcontext():
                data, stats = self.run.work(raw, self.shares, timings)
        return data, stats, timings.seconds, timings.parts

    def _device_mapper(self) -> Mapper:
        me = threading.get_ident()
        fn = self.mappers.get(me)
        if fn is None:
            from seedmap.pipeline.devices import device_mapper

            backend = self.backend
            assert backend is not None  # (map calls this for a device run only)
            dev = backend.ids[next(self.turn) % len(backend.ids)]
            # one maker per device (setdefault: the first thread's): this run's threads on it share its copies
            make = self.makers.setdefault(dev, backend.engine_maker(dev))
            fn = self.mappers[me] = device_mapper(backend, make, self.inputs, self.run.work)
        return fn


class _Share:
    """This task's share of the worker's -t threads (and the process lock when batches must take turns)."""

    def __init__(self, shares: ThreadShares, serial: threading.Lock | None) -> None:
        self.shares, self.serial = shares, serial

    def __enter__(self) -> ThreadShares:
        if self.serial is not None:
            self.serial.acquire()
        self.shares.enter()
        return self.shares

    def __exit__(self, *exc: object) -> None:
        self.shares.leave()
        if self.serial is not None:
            self.serial.release()


def _state(job: Job, shipped: ShippedIndex | None) -> _RunState:
    """The run's state on this process, set up on its first task (the others wait for it)."""
    global _started
    with _lock:
        st = _runs.get(job.token)
        if st is not None:
            _runs.move_to_end(job.token)
            return st
        if not _started:
            from seedmap.pipeline import threads

            threads.set_environment()  # before the first batch's arrays
            _started = True
        st = _RunState(job, _loaded(job, shipped))
        _runs[job.token] = st
        while len(_runs) > KEEP_RUNS:
            _runs.popitem(last=False)
        return st


def _loaded(job: Job, shipped: ShippedIndex | None) -> tuple:
    """(reference, index, engine) for the job, opened once per worker process and kept."""
    from seedmap.index import store
    from seedmap.kinds import KINDS

    opts = job.opts
    key = (job.index_id, opts.engine)
    if key in _indexes:
        _indexes.move_to_end(key)
        return _indexes[key]
    path = _received(shipped) if shipped is not None else Path(job.index)
    t0 = time.perf_counter()
    spec = KINDS[opts.engine.kind]
    st = store.load(path, opts.engine.kind, spec.header_arrays)  # the client checked the FASTA's stamp
    ix = spec.load(st)
    log.info("loaded index %s in %.1f s", path, time.perf_counter() - t0)
    loaded = (st.reference, ix, spec.engine(ix, st.reference, opts.engine))
    _indexes[key] = loaded
    while len(_indexes) > KEEP_INDEXES:
        _indexes.popitem(last=False)
    return loaded


def _received(shipped: ShippedIndex) -> Path:
    """The shipped index written once into this worker's local directory (removed with the worker)."""
    from distributed import get_worker

    home = Path(get_worker().local_directory) / f"seedmap-index-{shipped.index_id[:16]}"
    if not home.is_dir():
        tmp = home.with_name(f"{home.name}.tmp-{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        for name, data in shipped.files.items():
            (tmp / name).write_bytes(data)
        os.replace(tmp, home)
    return home


def _worker_name() -> str:
    try:
        from distributed import get_worker

        w = get_worker()
        return str(w.name if w.name is not None else w.address)
    except ValueError:  # not in a Dask worker (a test calling the task directly)
        return "local"


class _Captured:
    """Collects the "seedmap" logger's records made by this thread during a task, instead of printing them
    here: (level, message) pairs that travel back to the client."""

    _tls = threading.local()
    _installed = False
    _install_lock = threading.Lock()

    def __enter__(self) -> list[tuple[int, str]]:
        logger = logging.getLogger("seedmap")
        with _Captured._install_lock:
            if not _Captured._installed:
                logger.addFilter(_Captured._filter)
                if logger.level == logging.NOTSET:  # a worker process: let INFO through to the filter
                    logger.setLevel(logging.INFO)
                _Captured._installed = True
        self.records: list[tuple[int, str]] = []
        _Captured._tls.records = self.records
        return self.records

    def __exit__(self, *exc: object) -> None:
        _Captured._tls.records = None

    @staticmethod
    def _filter(record: logging.LogRecord) -> bool:
        records = getattr(_Captured._tls, "records", None)
        if records is None:
            return True
        records.append((record.levelno, record.getMessage()))
        return False
