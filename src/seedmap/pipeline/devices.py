"""Mapping on devices: one dynamic queue of read batches shared by worker threads, results written in read
order. Each worker maps whole batches with its own engine, made by its device's engine maker (the device's
copies of the reference and the index shared by its workers): the device stages on its device, the host
stages (parsing, traceback, records, SAM) on its share of the -t threads, so a device can have as many
workers as the host has threads for them. Only the backends.base.DeviceBackend interface is used here."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from seedmap.backends.base import DeviceBackend, EngineInputs, EngineMaker
from seedmap.pipeline.scheduler import Scheduler

if TYPE_CHECKING:
    from seedmap.pipeline.stages import BatchStats

# What a run does with one batch, given the engine to find its candidates with: called as
# map_on(batch, engine=engine, ...), returns (output bytes, stats): SingleRun.work (parses a raw batch, then
# map_batch or map_pair_batch, the host kernels on the worker's share of the threads).
MapOn = Callable[..., tuple]

log = logging.getLogger("seedmap")


def device_mapper(backend: DeviceBackend, make: EngineMaker, inputs: EngineInputs,
                  map_on: MapOn) -> Callable[..., tuple[bytes, BatchStats]]:
    """The calling thread's engine, made by `make` (one device's maker: it binds the thread to its device);
    returns the function that maps one batch (single-end or pairs, as map_on does) with that engine:
    (output bytes, stats)."""
    with backend.serialized():
        engine = make(inputs)

    def run(batch: object, **more: object) -> tuple[bytes, BatchStats]:
        with backend.serialized():
            return map_on(batch, engine=engine, **more)

    return run


def device_scheduler(batches: Iterable[object], backend: DeviceBackend, inputs: EngineInputs, map_on: MapOn,
                     workers_per_device: int) -> Scheduler:
    """The devices set up (kernels loaded), and the scheduler whose results() are (output bytes, stats) of
    each batch, in order; the batches are shared dynamically by `workers_per_device` workers per listed
    device (a device listed twice gets twice as many), each device's workers sharing its resident copies."""
    makers = {dev: backend.engine_maker(dev) for dev in backend.ids}

    def worker(dev: int) -> Callable[[], Callable[..., object]]:
        return lambda: device_mapper(backend, makers[dev], inputs, map_on)

    backend.prepare(inputs)
    workers = [worker(d) for d in backend.ids for _ in range(workers_per_device)]
    log.info("mapping on %s: %d worker threads, %d per device", backend.describe(), len(workers), workers_per_device)
    return Scheduler(batches, workers)
