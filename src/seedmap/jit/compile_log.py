"""One log line when a process compiles a kernel of seedmap's instead of loading it from the cache.

numba compiles a function on its first call with argument types its cache lacks, silently: a run that
finds the cache empty, stale or somewhere else (a copied installation, another user's) then spends
minutes that look like a hang. numba's "numba:compile" event fires on real compiles only (a cache load
fires none), so a listener on it says so the first time, with the kernel and the cache directory.
"""

from __future__ import annotations

import logging

from numba.core import event

log = logging.getLogger("seedmap")


class CompileLine(event.Listener):
    """Logs the first compile of a seedmap kernel in this process (info: `-q` leaves it out)."""

    def __init__(self, cache_dir: str | None) -> None:
        self.cache_dir = cache_dir
        self.said = False

    def on_start(self, ev: event.Event) -> None:
        if self.said:
            return
        disp = (ev.data or {}).get("dispatcher")
        func = getattr(disp, "py_func", None)  # (a CPU or a CUDA dispatcher)
        if func is None:
            return
        module = func.__module__ or ""
        if not module.startswith("seedmap."):
            return
        self.said = True
        where = f"the cache in {self.cache_dir}" if self.cache_dir else "no cache"
        log.info("compiling kernels (%s.%s first): not in %s; later runs load them (`seedmap compile` compiles "
                 "them all at once)", module, func.__qualname__, where)

    def on_end(self, ev: event.Event) -> None:
        pass


def log_compiles(cache_dir: str | None) -> CompileLine:
    """Listen for this process's compiles from now on."""
    listener = CompileLine(cache_dir)
    event.register("numba:compile", listener)
    return listener
