from __future__ import annotations

import numpy as np
import pytest

from seedmap import jit

jit.activate()  # as seedmap's entry points do, before the kernel modules below import

from seedmap.backends.opencl import device, program  # noqa: E402
from seedmap.errors import SeedmapError  # noqa: E402


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def opencl_device() -> program.OpenClDevice:
    """The OpenCL device the kernel tests run on (the first GPU, else device 0: PoCL's CPU device in CI); the
    modules using it skip themselves without PyOpenCL. Skipped where the device builds no kernel at all: the PoCL
    of PyOpenCL's wheel (PoCL 3.0, LLVM 14) knows no CPU newer than Zen 3, so on a Zen 5 machine its LLVM names
    the CPU "generic" and every build fails ("unknown target CPU 'generic'"; a user sees that one line)."""
    try:
        return program.OpenClDevice(device.pick(None))  # (it builds the verification kernels)
    except SeedmapError as exc:
        pytest.skip(f"this OpenCL device builds no kernel: {exc}")


@pytest.fixture(autouse=True)
def _seedmap_logger_restored() -> object:
    """cli.main() in a test gives the "seedmap" logger its own stderr handler and stops propagation (which
    caplog, listening on the root logger, needs): undone after each test."""
    import logging

    logger = logging.getLogger("seedmap")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:] = saved[0]
    logger.setLevel(saved[1])
    logger.propagate = saved[2]
