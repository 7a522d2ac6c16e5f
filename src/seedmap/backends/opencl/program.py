"""One OpenCL device as its workers share it: its context, the kernels built for it (locate.cl and bulk.cl
over myers.cl, align.cl; seed_filter.cl when a run filters there, fm_index.cl and fm_scheme.cl when it searches
an FM index there), and its resident copies of the reference and the index. A build failure is one SeedmapError
line with the first lines of the compiler's log."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, TypeVar, cast

import numpy as np

from seedmap.backends.opencl.device import all_devices, check_int64, cl_module, name_of
from seedmap.errors import SeedmapError
from seedmap.io.reference import Reference

if TYPE_CHECKING:
    import pyopencl
    from pyopencl.typing import KernelArg

T = TypeVar("T")

SOURCE = "locate.cl"
VERIFY_SOURCES = ("myers.cl", SOURCE, "bulk.cl")  # the programs[nb]: the bit-vector helpers, then their kernels
ALIGN_SOURCES = ("myers.cl", "align.cl")  # (align.cl takes ref_code of myers.cl)
FILTER_SOURCE = "seed_filter.cl"
WINDOWS_SOURCE = "windows.cl"  # built in front of each program whose fill pass writes windows
POS_TYPES = {np.dtype(np.uint32): "uint", np.dtype(np.int64): "long"}  # seed_filter.cl's POS_T per index pos dtype
WORDS = (1, 2, 3, 4)  # locate.cl's NB: one program per number of 64-bit words of a read (reads up to 256 bp)
LOG_LINES = 3  # of the compiler's build log, in the error line
# Work-items per work-group, fixed: PoCL compiles a kernel again for each work-group size it meets (a
# quarter to half a second), and a size left to the driver follows the global size, which every batch changes.
GROUP = 64


def source(name: str = SOURCE) -> str:
    return resources.files("seedmap.backends.opencl").joinpath(name).read_text()


def sources(names: tuple[str, ...]) -> str:
    return "\n".join(source(name) for name in names)


def build_log_head(text: str, lines: int = LOG_LINES) -> str:
    """The first `lines` lines of a build log (pyopencl puts it after "Build on <device>:"), joined with
    ' | ' to keep the error on one line."""
    body = text.split("Build on", 1)[1].split(">:", 1)[-1] if "Build on" in text else text
    kept = [line.strip() for line in body.splitlines() if line.strip() and not line.startswith("(")]
    return " | ".join(kept[:lines]) or text.strip().splitlines()[0]


def build(context: pyopencl.Context, device: pyopencl.Device, text: str | None = None,
          options: tuple[str, ...] = ()) -> pyopencl.Program:
    """The program of `text` (VERIFY_SOURCES' by default) built for `device` with compiler `options`."""
    cl = cl_module()
    with warnings.catch_warnings():  # a build log with only remarks is not the user's business
        warnings.simplefilter("ignore", cl.CompilerWarning)
        try:
            return cl.Program(context, sources(VERIFY_SOURCES) if text is None else text).build(options=list(options))
        except cl.Error as exc:
            raise SeedmapError(f"the OpenCL kernels do not build on {name_of(device)}: "
                               f"{build_log_head(str(exc))}") from None


class OpenClDevice:
    """Device `index` (device.all_devices's order): a context, the programs built once (`programs[nb]`: the
    window and bulk verification kernels for reads of nb words; `align_program`: the traceback;
    `filter_program`: seed + filter, built when first asked for), and one resident copy of each reference and
    index its workers map against (the first worker to need it copies it, the others take it)."""

    def __init__(self, index: int) -> None:
        cl = self.cl = cl_module()
        self.device = all_devices()[index]
        self.name = name_of(self.device)
        check_int64(self.device)
        self.context = cl.Context([self.device])
        self.programs = {nb: build(self.context, self.device, options=(f"-DNB={nb}",)) for nb in WORDS}
        self.align_program = build(self.context, self.device, sources(ALIGN_SOURCES))
        self._lock = threading.Lock()
        self._refs: dict[int, tuple[Reference, pyopencl.Buffer, pyopencl.Buffer]] = {}
        self._built: dict[tuple[tuple[str, ...], tuple[str, ...]], pyopencl.Program] = {}
        self._copies: dict[tuple[int, str], tuple[object, object]] = {}

    def buffer(self, a: np.ndarray) -> pyopencl.Buffer:
        """A read-only device copy of `a` (one byte at least: OpenCL has no empty buffers)."""
        host = np.ascontiguousarray(a) if a.size else np.zeros(1, dtype=a.dtype)
        return self.cl.Buffer(self.context, self.cl.mem_flags.READ_ONLY | self.cl.mem_flags.COPY_HOST_PTR,
                              hostbuf=host)

    def resident(self, ref: Reference) -> tuple[pyopencl.Buffer, pyopencl.Buffer]:
        """The device's copies of the reference's packed bases and N mask."""
        with self._lock:
            if id(ref) not in self._refs:  # the entry keeps ref alive, so its id stays its own
                self._refs[id(ref)] = (ref, self.buffer(ref.packed), self.buffer(ref.nmask))
            return self._refs[id(ref)][1:]

    def holds(self, arrays: list[np.ndarray]) -> bool:
        """Whether copies of `arrays` fit: each in one allocation, all in half the device's memory (the rest is
        the reference's, the batches' and the driver's)."""
        sizes = [a.nbytes for a in arrays]
        dev = self.device
        return max(sizes, default=0) <= dev.max_mem_alloc_size and sum(sizes) <= dev.global_mem_size // 2

    def program(self, names: tuple[str, ...], options: tuple[str, ...] = ()) -> pyopencl.Program:
        """The sources `names`, in this order, built as one program with compiler `options`, once."""
        with self._lock:
            key = (names, options)
            if key not in self._built:
                self._built[key] = build(self.context, self.device, "\n".join(source(n) for n in names), options)
            return self._built[key]

    def filter_program(self, pos_dtype: np.dtype) -> pyopencl.Program:
        """seed_filter.cl built for an index whose positions are of `pos_dtype` (uint32 or int64), once."""
        return self.program((WINDOWS_SOURCE, FILTER_SOURCE), (f"-DPOS_T={POS_TYPES[np.dtype(pos_dtype)]}",))

    def copies(self, owner: object, what: str, make: Callable[[], T]) -> T:
        """make()'s device copies of `owner`'s arrays (`what` of it), made once for all the device's workers."""
        with self._lock:
            key = (id(owner), what)
            if key not in self._copies:  # the entry keeps owner alive, so its id stays its own
                self._copies[key] = (owner, make())
            return cast(T, self._copies[key][1])  # what make() returned for this key: a T

    def launch(self, kernel: pyopencl.Kernel, queue: pyopencl.CommandQueue, n: int,
               *args: KernelArg) -> None:
        """`kernel` on n work-items, in work-groups of GROUP (or the device's most, if fewer): its first
        argument is n, and the work-items past it (the last group's rest) return at once."""
        group = min(GROUP, self.device.max_work_group_size)
        kernel(queue, (-(-n // group) * group,), (group,), np.int64(n), *args)
