"""The OpenCL backend as the pipeline sees it (a backends.base.DeviceBackend): one OpenCL device, its
kernels built before the workers start, and engines that find their candidates as kinds.py has it for the
index kind (the neighborhood engine's seed + filter, the k-mer engine's bulk verification and the FM engine's
search on the device, the rest with the run's CPU engine), verify the merged windows (locations.py) and align
them (alignments.py) on the device."""

from __future__ import annotations

import contextlib
import logging
import threading
from contextlib import AbstractContextManager

from seedmap.backends.base import DeviceEngine, EngineInputs, EngineMaker
from seedmap.backends.opencl.alignments import OpenClAligner
from seedmap.backends.opencl.device import all_devices, name_of
from seedmap.backends.opencl.kinds import OPENCL_KINDS
from seedmap.backends.opencl.locations import OpenClLocator
from seedmap.backends.opencl.program import OpenClDevice
from seedmap.engines.base import Engine

log = logging.getLogger("seedmap")


class OpenClBackend:
    """OpenCL device `index` (device.all_devices's order)."""

    def __init__(self, index: int) -> None:
        self.ids: tuple[int, ...] = (index,)  # DeviceBackend.ids: one device here
        self.name = name_of(all_devices()[index])
        self._lock = threading.Lock()
        self._devices: dict[int, OpenClDevice] = {}

    def describe(self) -> str:
        return f"opencl:{self.ids[0]} ({self.name})"

    def _device(self, dev: int) -> OpenClDevice:
        with self._lock:  # built once, by prepare (a build failure stops the run before any worker)
            if dev not in self._devices:
                self._devices[dev] = OpenClDevice(dev)
            return self._devices[dev]

    def prepare(self, inputs: EngineInputs) -> None:
        on_device, on_cpu = OPENCL_KINDS[inputs.kind].steps(inputs, self._device(self.ids[0]))  # (one device)
        done_here = "the windows' verification and the traceback (CIGAR, MD)"
        done_here = f"{on_device}, {done_here}" if on_device else done_here
        log.info("--device opencl: %s run on %s; %s run on the CPU", done_here, self.name, on_cpu)

    def engine_maker(self, dev: int) -> EngineMaker:
        def make(inputs: EngineInputs) -> Engine:
            device = self._device(dev)
            candidates = OPENCL_KINDS[inputs.kind].candidates(inputs, device)
            return DeviceEngine(candidates, OpenClLocator(device, inputs.ref), OpenClAligner(device, inputs.ref))

        return make

    def serialized(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()
