"""How numba compiles and caches seedmap's kernels, applied by `activate()` at seedmap's entry points.

`import seedmap` leaves numba as it is. The entry points (the command line, `seedmap.Index`, the Dask and
compiling workers) call `activate()` before they import a kernel module: numba binds a `cache=True` function to
its cache directory as the function is defined (its locator reads `numba.config.CACHE_DIR` then), so the
directory chosen here must be set first. A kernel module imported before `activate()` (a script importing
seedmap's internals) still works, cached where numba would cache it by itself.

What `activate()` changes in numba, once per process:
- `numba.config.CACHE_DIR`: seedmap's cache directory (`cache.choose_cache`), unless NUMBA_CACHE_DIR names it;
- `Dispatcher.get_call_template`: seedmap's kernels are typed for their arguments' plain types (`literals.py`);
  other functions as numba would;
- only where no directory can be written: `Dispatcher.enable_caching` leaves seedmap's kernels uncached (numba
  alone fails as they are defined); other functions as numba would;
- a listener on numba's compile events: one log line when a seedmap kernel compiles (`compile_log.py`).

Also here, what compiles ahead of a run: `warmup.py` (a run's warm-up: a few reads through the stages the run hands
it, so its clock never counts compiling), `precompile.py` (the kernels of a kind of run compiled in worker processes
first, and `seedmap compile`), `kernel_list.py` (which kernels, with which argument types: recorded, not written
by hand), and for the warm-up and the first reads `quick_load.cached_kernels_load_quickly` and
`lazy_bitcode.bitcode_parsed_lazily`, numba's cache loads made quicker within a block, undone after it. The
package imports only `io` (the warm-up's reads) and the bottom layer; the kernels it compiles it finds by name.
"""

from __future__ import annotations

import os
import threading

from seedmap.jit.cache import choose_cache

# Where numba caches seedmap's compiled kernels (None: nowhere writable, they compile in every run), and the
# one warning line saying why it is not the usual place ("" when it is); logged once by the warm-up. Set by
# activate().
KERNEL_CACHE: str | None = None
CACHE_WARNING = ""

_activated = False
_lock = threading.Lock()


def activate(cache_dir: str | None = None) -> None:
    """Set numba up for seedmap's kernels (above); the calls after the first change nothing. `cache_dir`: the
    cache directory to use instead of choosing one (a compiling worker uses its caller's)."""
    global KERNEL_CACHE, CACHE_WARNING, _activated
    with _lock:
        if _activated:
            return
        from seedmap.jit.literals import no_literal_specialisations, no_seedmap_caching

        KERNEL_CACHE, CACHE_WARNING = (cache_dir, "") if cache_dir else choose_cache()
        if KERNEL_CACHE is None:
            no_seedmap_caching()
        elif KERNEL_CACHE != os.environ.get("NUMBA_CACHE_DIR"):  # (numba reads that one itself)
            import numba

            numba.config.CACHE_DIR = KERNEL_CACHE
        no_literal_specialisations()
        if not cache_dir:  # (a compiling worker's compiles are its caller's to report)
            from seedmap.jit.compile_log import log_compiles

            log_compiles(KERNEL_CACHE)
        _activated = True


def activated() -> bool:
    """Whether `activate()` has run in this process."""
    return _activated
