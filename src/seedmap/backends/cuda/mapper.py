"""Mapping on one or several GPUs: one dynamic queue of read batches shared by worker threads (two per
device, each with its own CUDA stream, so one batch's transfers overlap another's kernels), results
written in read order."""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings
from collections.abc import Callable, Iterable

from numba import config, cuda

from seedmap.backends.cuda.device import DeviceChoice
from seedmap.backends.cuda.engines import cpu_stages, make_engine, quiet_performance_warnings, warm_up
from seedmap.io.reads import ReadBatch
from seedmap.io.reference import Reference
from seedmap.pipeline.options import EngineOptions
from seedmap.pipeline.scheduler import Scheduler

# What a run does with one batch, given the engine to find its candidates with: SingleRun.map (map_batch)
# or PairRun.map (map_pair_batch); called as map_on(batch, engine=engine), returns (output bytes, stats).
MapOn = Callable[..., tuple]

log = logging.getLogger("seedmap")

WORKERS_PER_DEVICE = 2
_SIM_LOCK = threading.Lock()  # the CUDA simulator runs one kernel at a time


def simulated() -> bool:
    return bool(config.ENABLE_CUDASIM)


def device_mapper(dev: int, kind: str, ix: object, ref: Reference, engine_options: EngineOptions,
                  map_on: MapOn) -> Callable[[ReadBatch], tuple[bytes, object]]:
    """Binds the calling thread to GPU `dev` with its own stream and engine; returns the function that maps
    one batch (single-end or pairs, as map_on does) with that engine: (output bytes, stats)."""
    lock = _SIM_LOCK if simulated() else contextlib.nullcontext()
    with lock:
        cuda.select_device(dev)  # binds this thread to its GPU
        stream = 0 if simulated() else cuda.stream()
        engine = make_engine(kind, ix, ref, engine_options, stream)

    def run(batch: ReadBatch) -> tuple[bytes, object]:
        with lock:
            return map_on(batch, engine=engine)

    return run


def prepare_devices(choice: DeviceChoice, kind: str, ix: object, engine_options: EngineOptions) -> None:
    """Before any mapper: what stays on the CPU logged (once, not per worker), numba-cuda's warnings
    silenced, every kernel loaded (compiled the first time) in this one thread, on every device."""
    for level, line in cpu_stages(kind, ix, engine_options):
        log.log(level, line)
    if simulated():  # uint64 wrap-around is intended in the bit-vector kernels (numpy warns in the simulator)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"seedmap\.backends\.cuda")
    quiet_performance_warnings()
    warm_up(choice.ids, kind, ix, engine_options)


def device_scheduler(batches: Iterable[ReadBatch], choice: DeviceChoice, kind: str, ix: object, ref: Reference,
                     engine_options: EngineOptions, map_on: MapOn) -> Scheduler:
    """The devices set up (kernels loaded), and the scheduler whose results() are (output bytes, stats) of
    each batch, in order; the batches are shared dynamically by the devices' workers."""

    def worker(dev: int) -> Callable[[], Callable[[ReadBatch], tuple[bytes, object]]]:
        return lambda: device_mapper(dev, kind, ix, ref, engine_options, map_on)

    prepare_devices(choice, kind, ix, engine_options)
    return Scheduler(batches, [worker(d) for d in choice.ids for _ in range(WORKERS_PER_DEVICE)])
