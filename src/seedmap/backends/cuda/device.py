"""The CUDA devices numba-cuda finds (backends/select.py turns --device into a backend with them).

numba.cuda is imported only here and only when a CUDA device is asked for: the CPU path never loads it,
and a missing driver or GPU gives one clear error line instead of a traceback.
"""

from __future__ import annotations

import importlib.metadata
from types import ModuleType

from seedmap.errors import SeedmapError


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cuda_module() -> ModuleType:
    """numba.cuda, imported on first use; SeedmapError (one line) when it cannot be imported, e.g. numba-cuda
    0.30 with numpy 2.5: AttributeError, np.row_stack was removed."""
    try:
        from numba import cuda
    except Exception as exc:  # numba-cuda missing or broken: one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise SeedmapError(f"numba.cuda cannot be imported ({type(exc).__name__}: {first}) with numba-cuda "
                           f"{_version('numba-cuda')}, numba {_version('numba')}, numpy {_version('numpy')}; "
                           "install seedmap[cuda] (numba-cuda and a numpy it supports)") from None
    return cuda


def gpu_count() -> int:
    """Number of CUDA GPUs numba-cuda finds (0 without a driver or a GPU; 1 under the simulator);
    SeedmapError when numba.cuda cannot be imported."""
    cuda = cuda_module()
    try:
        if not cuda.is_available():
            return 0
        return len(cuda.gpus)
    except Exception:  # no driver: no GPU
        return 0
