"""--device (cpu, cuda, cuda:0,1, auto) made into the backend a run maps on, in this one place: None for the
CPU, else a backends.base.DeviceBackend. A backend's package is imported only when its device is asked for
(numba.cuda is not loaded by CPU runs), hence the imports inside _cuda."""

from __future__ import annotations

import logging

from seedmap.backends.base import DeviceBackend
from seedmap.backends.cuda import device as cuda_device
from seedmap.errors import SeedmapError

log = logging.getLogger("seedmap")


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
        log.info("--device auto: %s; mapping on the CPU", exc)
        return ()
    if kind == "auto":
        log.info("--device auto: %s", f"{n} CUDA GPU(s), mapping on cuda:{','.join(map(str, range(n)))}" if n
                 else "no CUDA GPU found, mapping on the CPU")
        return tuple(range(n))
    if n == 0:
        raise SeedmapError("--device cuda: no CUDA GPU found (numba-cuda sees none; use --device cpu or auto)")
    ids = ids if ids is not None else tuple(range(n))
    bad = [i for i in ids if i >= n]
    if bad:
        raise SeedmapError(f"--device cuda:{bad[0]}: only {n} CUDA GPU(s) found")
    return ids


def resolve(text: str) -> DeviceBackend | None:
    """The backend of --device `text` (None: the CPU). `auto` takes every CUDA GPU when one is found, else
    the CPU, and logs which."""
    kind, ids = parse_device(text)
    if kind == "cpu":
        return None
    found = _cuda_ids(kind, ids)
    return _cuda(found) if found else None
