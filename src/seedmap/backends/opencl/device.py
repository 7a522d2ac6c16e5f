"""The OpenCL devices PyOpenCL finds: `opencl` (the first GPU, else the first device), `opencl:N` (the N-th
device, counted over every platform in order), and whether `auto` has an OpenCL GPU to take. Each problem a
user can meet is one SeedmapError line."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from seedmap.errors import SeedmapError

if TYPE_CHECKING:
    import pyopencl

INSTALL = "pip install seedmap[opencl] (PyOpenCL and PoCL, a CPU device)"


def cl_module() -> ModuleType:
    """pyopencl, imported on first use; SeedmapError (one line) when it cannot be."""
    try:
        import pyopencl
    except Exception as exc:  # missing, or a broken ICD loader
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise SeedmapError(f"pyopencl cannot be imported ({type(exc).__name__}: {first}); {INSTALL}") from None
    return pyopencl


def all_devices() -> list[pyopencl.Device]:
    """Every OpenCL device of every platform, platforms in their order; [] when there is no platform."""
    cl = cl_module()
    try:
        platforms = cl.get_platforms()
    except cl.Error:  # clGetPlatformIDs: PLATFORM_NOT_FOUND_KHR, no ICD installed
        return []
    found: list[pyopencl.Device] = []
    for platform in platforms:
        try:
            found += platform.get_devices()
        except cl.Error:  # a platform without devices
            continue
    return found


def is_gpu(device: pyopencl.Device) -> bool:
    return bool(device.type & cl_module().device_type.GPU)


def name_of(device: pyopencl.Device) -> str:
    return f"{device.platform.name.strip()}: {device.name.strip()}"


def check_int64(device: pyopencl.Device) -> None:
    """The kernels compute in 64-bit integers (bit vectors, positions), which every full-profile device has;
    an embedded-profile one needs cles_khr_int64. They use no atomics."""
    if device.profile.strip() == "EMBEDDED_PROFILE" and "cles_khr_int64" not in device.extensions:
        raise SeedmapError(f"--device opencl: {name_of(device)} has no 64-bit integers (an embedded-profile device "
                           "without cles_khr_int64), which the kernels need")


def pick(index: int | None) -> int:
    """The device index `opencl` (None: the first GPU, else device 0) or `opencl:N` means."""
    found = all_devices()
    if not found:
        raise SeedmapError(f"--device opencl: no OpenCL platform or device found; {INSTALL}, or Debian's "
                           "pocl-opencl-icd")
    if index is None:
        gpus = [i for i, d in enumerate(found) if is_gpu(d)]
        return gpus[0] if gpus else 0
    if index >= len(found):
        names = "; ".join(f"{i}: {name_of(d)}" for i, d in enumerate(found))
        raise SeedmapError(f"--device opencl:{index}: only {len(found)} OpenCL device(s) found ({names})")
    return index


def first_gpu() -> int | None:
    """The first OpenCL GPU's index (auto's second choice after CUDA), None without one or without pyopencl."""
    try:
        found = all_devices()
    except SeedmapError:
        return None
    return next((i for i, d in enumerate(found) if is_gpu(d)), None)
