"""seedmap: a fully sensitive short-read mapper.

Importing seedmap changes nothing in numba: its entry points set numba up for seedmap's kernels (seedmap/jit).
"""

import os
import sys

__version__ = "0.1.0"

# numpy's OpenBLAS starts a thread per core as numpy is imported, each spinning about 0.1 s before it sleeps. seedmap
# calls no BLAS: in its own processes (the `seedmap` command, `python -m seedmap...`, the compiling workers) those
# threads only take CPU from the run's (2 cores: 0.1-0.2 CPU-s a run). A process that imports seedmap as a library
# keeps its BLAS as it is, and a value already set is kept.
if sys.argv and os.path.basename(sys.argv[0]) in ("seedmap", "-m"):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
