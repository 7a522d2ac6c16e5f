"""seedmap: a fully sensitive short-read mapper.

    >>> import seedmap
    >>> ix = seedmap.Index("ref.fa")          # doctest: +SKIP
    >>> ix.map("ACGT...")                     # doctest: +SKIP

`seedmap.Index`, `seedmap.Hit` and `seedmap.Mapped` are the Python API (seedmap/api.py, docs/api.md). Importing
seedmap changes nothing in numba: its entry points set numba up for seedmap's kernels (seedmap/jit).
"""

import os
import sys

from seedmap.version import __version__

# numpy's OpenBLAS starts a thread per core as numpy is imported, each spinning about 0.1 s before it sleeps. seedmap
# calls no BLAS: in its own processes (the `seedmap` command, `python -m seedmap...`, the compiling workers) those
# threads only take CPU from the run's (2 cores: 0.1-0.2 CPU-s a run). A process that imports seedmap as a library
# keeps its BLAS as it is, and a value already set is kept.
if sys.argv and os.path.basename(sys.argv[0]) in ("seedmap", "-m"):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__all__ = ["Counts", "Hit", "Index", "Mapped", "__version__"]


def __getattr__(name: str) -> object:
    """The API's names, imported at first use: `import seedmap` alone imports neither numba nor a kernel."""
    if name in ("Counts", "Hit", "Index", "Mapped"):
        from seedmap import api

        return getattr(api, name)
    raise AttributeError(f"module 'seedmap' has no attribute {name!r}")
