"""The CUDA backend as the pipeline sees it (a backends.base.DeviceBackend): its GPUs, the kernels loaded on each
before the workers start, and one engine maker per GPU whose engines share that GPU's resident copies."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import warnings
from contextlib import AbstractContextManager

from numba import config, cuda

from seedmap.backends.base import EngineInputs, EngineMaker
from seedmap.backends.cuda.kinds import cpu_stages, device_engine, launched_kernels
from seedmap.backends.cuda.resident import DeviceShare
from seedmap.engines.base import Engine
from seedmap.options import EngineOptions

log = logging.getLogger("seedmap")
_SIM_LOCK = threading.Lock()  # the CUDA simulator runs one kernel at a time


def simulated() -> bool:
    return bool(config.ENABLE_CUDASIM)


class CudaBackend:
    """The CUDA devices `ids` (a device listed twice gets twice the workers: a testing aid)."""

    def __init__(self, ids: tuple[int, ...]) -> None:
        self.ids = ids

    def describe(self) -> str:
        return "cuda:" + ",".join(map(str, self.ids))

    def prepare(self, inputs: EngineInputs) -> None:
        """What stays on the CPU logged, numba-cuda's warnings silenced, every kernel loaded (compiled the
        first time) in this one thread, on every device."""
        for level, line in cpu_stages(inputs.kind, inputs.index, inputs.options):
            log.log(level, line)
        if simulated():  # uint64 wrap-around is intended in the bit-vector kernels (their column step) and the FM
            # occ's popcount, whose twins (backends/cuda/twins.py) run the CPU module's code: numpy warns in the
            # simulator
            warnings.filterwarnings("ignore", category=RuntimeWarning,
                                    module=r"seedmap\.(backends\.cuda|filter\.fm_|index\.fm_occ|verify\.bulk)")
        quiet_performance_warnings()
        warm_up(self.ids, inputs.kind, inputs.index, inputs.options)

    def engine_maker(self, dev: int) -> EngineMaker:
        share = DeviceShare()  # this device's copies of the reference and index, for all its workers

        def make(inputs: EngineInputs) -> Engine:
            cuda.select_device(dev)  # binds the calling (worker) thread to its GPU
            stream = 0 if simulated() else cuda.stream()  # each worker its own stream
            return device_engine(inputs.kind, inputs.index, inputs.ref, inputs.options, stream, share)

        return make

    def serialized(self) -> AbstractContextManager[object]:
        return _SIM_LOCK if simulated() else contextlib.nullcontext()


def warm_up(device_ids: tuple[int, ...], kind: str, ix: object, options: EngineOptions) -> None:
    """Compile (or load from numba's disk cache) every kernel this run launches and load it onto each
    device, in the calling thread, before the worker threads start: numba-cuda's module loading is not
    thread-safe (two workers' first launches of a kernel raced: "key already in dictionary: <CUlibrary>").
    Only the list is made under the simulator (nothing to compile or load)."""
    t0 = time.perf_counter()
    launches = launched_kernels(kind, ix, options)
    if config.ENABLE_CUDASIM:
        return
    for dev in dict.fromkeys(device_ids):
        with cuda.gpus[dev]:  # the device's context, popped after (the workers select theirs)
            for kernel, sig in launches:
                kernel.compile(sig).bind()  # compiled or loaded from the disk cache; loaded onto the device
    log.info("CUDA kernels ready in %.1f s", time.perf_counter() - t0)


def quiet_performance_warnings() -> None:
    """No NumbaPerformanceWarning for the user ("Grid size 16 will likely result in GPU under-utilization":
    small batches and the last batch launch small grids on purpose)."""
    from numba.core.errors import NumbaPerformanceWarning

    classes = {NumbaPerformanceWarning}
    try:  # numba-cuda has its own class
        # (mypy may find numba's own numba.cuda, which numba-cuda replaces at run time)
        from numba.cuda.core.errors import (  # type: ignore[import-not-found, unused-ignore]
            NumbaPerformanceWarning as CudaPerformanceWarning,
        )

        classes.add(CudaPerformanceWarning)
    except ImportError:
        pass
    for cls in classes:
        warnings.filterwarnings("ignore", category=cls)
