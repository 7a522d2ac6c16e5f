"""Mapping on one or several GPUs: one dynamic queue of read batches shared by worker threads, results
written in read order. Each worker has its own CUDA stream (one batch's transfers overlap another's kernels)
and maps whole batches: the device stages on its GPU, the host stages (parsing, traceback, records, SAM) on
its share of the -t threads. The workers of a device share its copies of the reference and the index, so a
device can have as many workers as the host has threads for them."""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings
from collections.abc import Callable, Iterable

from numba import config, cuda

from seedmap.backends.cuda.device import DeviceChoice
from seedmap.backends.cuda.engines import cpu_stages, quiet_performance_warnings, warm_up
from seedmap.backends.cuda.resident import DeviceShare
from seedmap.io.reference import Reference
from seedmap.kinds import device_engine
from seedmap.options import EngineOptions
from seedmap.pipeline.scheduler import Scheduler

# What a run does with one batch, given the engine to find its candidates with: called as
# map_on(batch, engine=engine, ...), returns (output bytes, stats): SingleRun.work (parses a raw batch, then
# map_batch or map_pair_batch, the host kernels on the worker's share of the threads).
MapOn = Callable[..., tuple]

log = logging.getLogger("seedmap")
_SIM_LOCK = threading.Lock()  # the CUDA simulator runs one kernel at a time


def simulated() -> bool:
    return bool(config.ENABLE_CUDASIM)


def device_mapper(dev: int, kind: str, ix: object, ref: Reference, engine_options: EngineOptions,
                  map_on: MapOn, share: DeviceShare | None = None) -> Callable[[object], tuple[bytes, object]]:
    """Binds the calling thread to GPU `dev` with its own stream and engine (the device's copies of the
    reference and index taken from `share`); returns the function that maps one batch (single-end or pairs,
    as map_on does) with that engine: (output bytes, stats)."""
    lock = _SIM_LOCK if simulated() else contextlib.nullcontext()
    with lock:
        cuda.select_device(dev)  # binds this thread to its GPU
        stream = 0 if simulated() else cuda.stream()
        engine = device_engine(kind, ix, ref, engine_options, stream, share)

    def run(batch: object, **more: object) -> tuple[bytes, object]:
        with lock:
            return map_on(batch, engine=engine, **more)

    return run


def prepare_devices(choice: DeviceChoice, kind: str, ix: object, engine_options: EngineOptions) -> None:
    """Before any mapper: what stays on the CPU logged (once, not per worker), numba-cuda's warnings
    silenced, every kernel loaded (compiled the first time) in this one thread, on every device."""
    for level, line in cpu_stages(kind, ix, engine_options):
        log.log(level, line)
    if simulated():  # uint64 wrap-around is intended in the bit-vector kernels (their column step) and the FM
        # popcount, whose twins (backends/cuda/twins.py) run the CPU module's code: numpy warns in the simulator
        warnings.filterwarnings("ignore", category=RuntimeWarning,
                                module=r"seedmap\.(backends\.cuda|filter\.fm_|verify\.bulk)")
    quiet_performance_warnings()
    warm_up(choice.ids, kind, ix, engine_options)


def device_scheduler(batches: Iterable[object], choice: DeviceChoice, kind: str, ix: object, ref: Reference,
                     engine_options: EngineOptions, map_on: MapOn, workers_per_device: int) -> Scheduler:
    """The devices set up (kernels loaded), and the scheduler whose results() are (output bytes, stats) of
    each batch, in order; the batches are shared dynamically by `workers_per_device` workers per listed
    device (a device listed twice gets twice as many), each device's workers sharing its resident copies."""
    shares = {dev: DeviceShare() for dev in choice.ids}

    def worker(dev: int) -> Callable[[], Callable[[object], tuple[bytes, object]]]:
        return lambda: device_mapper(dev, kind, ix, ref, engine_options, map_on, shares[dev])

    prepare_devices(choice, kind, ix, engine_options)
    workers = [worker(d) for d in choice.ids for _ in range(workers_per_device)]
    log.info("mapping on %s: %d worker threads, %d per device", choice.describe(), len(workers), workers_per_device)
    return Scheduler(batches, workers)
