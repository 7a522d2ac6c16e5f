from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


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
