from __future__ import annotations

import numpy as np
import pytest

from seedmap.backends.opencl import device, program


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def opencl_device() -> program.OpenClDevice:
    """The OpenCL device the kernel tests run on (the first GPU, else device 0: PoCL's CPU device in CI); the
    modules using it skip themselves without PyOpenCL."""
    return program.OpenClDevice(device.pick(None))


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
