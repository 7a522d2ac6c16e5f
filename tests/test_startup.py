"""Start-up: numba's registries load without importing scipy.linalg, and nothing is left blocked."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
import numpy as np
from numba import njit
from seedmap.pipeline.warmup import load_numba_registries

load_numba_registries()
assert "scipy.linalg" not in sys.modules, "scipy.linalg was imported"

@njit
def total(a):
    return a.sum()

assert total(np.arange(5)) == 10  # kernels compile after the registries were loaded that way
try:
    import scipy.linalg  # a later import is not blocked (when SciPy is installed)
except ImportError as exc:
    assert "scipy" in str(exc) and "None in sys.modules" not in str(exc), exc
print("ok")
"""


def test_registries_load_without_scipy_linalg():
    # A fresh interpreter: this test process may have loaded numba's registries already.
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
