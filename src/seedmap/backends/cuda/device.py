"""Device selection (`--device cpu|cuda|cuda:0,1|auto`) and the dynamic work queue shared by several GPUs.

numba.cuda is imported only here and only when a CUDA device is asked for: the CPU path never loads it,
and a missing driver or GPU gives one clear error line instead of a traceback.
"""

from __future__ import annotations

import importlib.metadata
import logging
from dataclasses import dataclass

from seedmap.errors import SeedmapError

log = logging.getLogger("seedmap")


@dataclass(frozen=True)
class DeviceChoice:
    """cpu, or the CUDA device ids to use (a device listed twice gets two workers: testing aid)."""

    kind: str  # "cpu" or "cuda"
    ids: tuple[int, ...] = ()

    def describe(self) -> str:
        return "cpu" if self.kind == "cpu" else "cuda:" + ",".join(map(str, self.ids))


def parse_device(text: str) -> tuple[str, tuple[int, ...] | None]:
    """'cpu', 'auto', 'cuda' (all GPUs) or 'cuda:0,1' -> (kind, ids or None for all)."""
    t = text.strip().lower()
    if t in ("cpu", "auto", "cuda"):
        return t, None
    if t.startswith("cuda:"):
        try:
            ids = tuple(int(x) for x in t[5:].split(","))
        except ValueError:
            ids = ()
        if ids and min(ids) >= 0:
            return "cuda", ids
    raise SeedmapError(f"--device {text}: expected cpu, cuda, cuda:0,1 (device ids) or auto")


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cuda_module() -> object:
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


def resolve(text: str) -> DeviceChoice:
    """The device(s) to map on. `auto` takes every GPU when one is found, else the CPU, and logs which."""
    kind, ids = parse_device(text)
    if kind == "cpu":
        return DeviceChoice("cpu")
    try:
        n = gpu_count()
    except SeedmapError as exc:
        if kind != "auto":
            raise
        log.info("--device auto: %s; mapping on the CPU", exc)
        return DeviceChoice("cpu")
    if kind == "auto":
        choice = DeviceChoice("cuda", tuple(range(n))) if n else DeviceChoice("cpu")
        log.info("--device auto: %s", f"{n} CUDA GPU(s), mapping on {choice.describe()}" if n
                 else "no CUDA GPU found, mapping on the CPU")
        return choice
    if n == 0:
        raise SeedmapError("--device cuda: no CUDA GPU found (numba-cuda sees none; use --device cpu or auto)")
    ids = ids if ids is not None else tuple(range(n))
    bad = [i for i in ids if i >= n]
    if bad:
        raise SeedmapError(f"--device cuda:{bad[0]}: only {n} CUDA GPU(s) found")
    return DeviceChoice("cuda", ids)
