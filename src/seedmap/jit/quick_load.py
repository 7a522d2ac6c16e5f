"""Cached kernels loaded quickly: `cached_kernels_load_quickly`, around a run's warm-up and its first reads."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from seedmap.jit.lazy_bitcode import bitcode_parsed_lazily

_QUICK_LOAD = threading.Lock()


@contextmanager
def cached_kernels_load_quickly() -> Iterator[None]:
    """Within the block, numba loads a cached CPU kernel without first refreshing its registries.

    numba refreshes every registry before loading from its cache (0.1-0.2 s: importing and installing
    the typing and lowering of everything it can compile), though a cached kernel needs only the NRT;
    compiling refreshes them anyway, so a kernel missing from the cache compiles as usual. The numpy
    implementations a kernel's environment imports still probe for a BLAS by importing scipy.linalg,
    0.25 s wherever SciPy is installed; no seedmap kernel uses BLAS (np.dot, np.linalg), so that probe
    is made to fail at once (its only effect: np.correlate/np.convolve use a plain loop). And a kernel's
    bitcode is parsed only if something links it in (lazy_bitcode.py). All three last only for the block;
    a later `import scipy.linalg` works as usual."""
    from numba.core import caching
    from numba.core.cpu import CPUContext
    from numba.core.registry import cpu_target
    from numba.core.runtime import nrt

    with _QUICK_LOAD:  # one warm-up at a time (Dask may start several in a process)
        original = caching.Cache.load_overload
        known = all(hasattr(caching.Cache, a) for a in ("_load_overload", "_guard_against_spurious_io_errors"))

        def load_overload(cache: caching.Cache, sig: object, target_context: object) -> object:
            if not isinstance(target_context, CPUContext):  # a GPU target initialises its own way
                return original(cache, sig, target_context)
            nrt.rtsys.initialize(target_context)  # what a cached kernel needs of the refresh
            with cache._guard_against_spurious_io_errors():
                return cache._load_overload(sig, target_context)

        blocked = "scipy.linalg" not in sys.modules
        if blocked:
            sys.modules["scipy.linalg"] = None  # type: ignore[assignment]  # import raises ImportError
        if known:
            caching.Cache.load_overload = load_overload
        else:  # a numba whose cache is laid out otherwise: its own refresh
            cpu_target.target_context.refresh()
        try:
            with bitcode_parsed_lazily():
                yield
        finally:
            caching.Cache.load_overload = original
            if blocked:
                del sys.modules["scipy.linalg"]
