"""--device (cpu, cuda, cuda:0,1, opencl, opencl:N, auto) made into the backend a run maps on, in this one
place: None for the CPU, else a backends.base.DeviceBackend. `auto` takes the CUDA GPUs, else an OpenCL GPU,
else the CPU. A backend's libraries are loaded only when its device is asked for (numba.cuda and pyopencl
are not loaded by CPU runs), hence the import inside _cuda."""

from __future__ import annotations

import logging

from seedmap.backends.base import DeviceBackend
from seedmap.backends.cuda import device as cuda_device
from seedmap.backends.opencl import device as opencl_device
from seedmap.backends.opencl.backend import OpenClBackend
from seedmap.errors import SeedmapError

log = logging.getLogger("seedmap")
KINDS = ("cpu", "auto", "cuda", "opencl")


def parse_device(text: str) -> tuple[str, tuple[int, ...] | None]:
    """'cpu', 'auto', 'cuda' (all GPUs), 'cuda:0,1', 'opencl' or 'opencl:N' -> (kind, ids or None)."""
    t = text.strip().lower()
    if t in KINDS:
        return t, None
    kind, _, rest = t.partition(":")
    if kind in ("cuda", "opencl") and rest:
        try:
            ids = tuple(int(x) for x in rest.split(","))
        except ValueError:
            ids = ()
        if ids and min(ids) >= 0 and (kind == "cuda" or len(ids) == 1):
            return kind, ids
    raise SeedmapError(f"--device {text}: expected cpu, cuda, cuda:0,1 (device ids), opencl, opencl:N (a device "
                       "number) or auto")


def _cuda(ids: tuple[int, ...]) -> DeviceBackend:
    from seedmap.backends.cuda.backend import CudaBackend  # loads numba.cuda: only for a CUDA run

    return CudaBackend(ids)


def _cuda_ids(kind: str, ids: tuple[int, ...] | None) -> tuple[int, ...]:
    """The CUDA GPUs to map on: those asked for (all with None), or none for `auto` when numba-cuda finds
    none or cannot be imported (logged); SeedmapError for `cuda` then, or for ids past the GPUs found."""
    try:
        n = cuda_device.gpu_count()
    except SeedmapError as exc:
        if kind != "auto":
            raise
        log.info("--device auto: %s", exc)
        return ()
    if kind == "auto":
        if n:
            log.info("--device auto: %d CUDA GPU(s), mapping on cuda:%s", n, ",".join(map(str, range(n))))
        return tuple(range(n))
    if n == 0:
        raise SeedmapError("--device cuda: no CUDA GPU found (numba-cuda sees none; use --device cpu or auto)")
    ids = ids if ids is not None else tuple(range(n))
    bad = [i for i in ids if i >= n]
    if bad:
        raise SeedmapError(f"--device cuda:{bad[0]}: only {n} CUDA GPU(s) found")
    return ids


def _auto() -> DeviceBackend | None:
    found = _cuda_ids("auto", None)
    if found:
        return _cuda(found)
    gpu = opencl_device.first_gpu()
    if gpu is not None:
        backend = OpenClBackend(gpu)
        log.info("--device auto: no CUDA GPU found, mapping on the OpenCL GPU %s", backend.describe())
        return backend
    log.info("--device auto: no CUDA GPU found, no OpenCL GPU found, mapping on the CPU")
    return None


def resolve(text: str) -> DeviceBackend | None:
    """The backend of --device `text` (None: the CPU)."""
    kind, ids = parse_device(text)
    if kind == "cpu":
        return None
    if kind == "auto":
        return _auto()
    if kind == "opencl":
        return OpenClBackend(opencl_device.pick(ids[0] if ids else None))
    return _cuda(_cuda_ids(kind, ids))
