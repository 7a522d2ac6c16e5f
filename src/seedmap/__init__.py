"""seedmap: a fully sensitive short-read mapper."""

import hashlib
import os
from pathlib import Path

__version__ = "0.1.0"


def _numba_cache_dir() -> str:
    """A cache directory keyed by this package's sources.

    numba's cache=True revalidates a cached function against its own file only: a kernel that calls a
    function from another module keeps the old callee after that module changes (an upgrade, an edit).
    Keying the directory by every source file's size and mtime makes stale machine code impossible.
    """
    here = Path(__file__).parent
    h = hashlib.sha1(__version__.encode())
    for f in sorted(here.rglob("*.py")):
        st = f.stat()
        h.update(f"{f.relative_to(here)}:{st.st_size}:{st.st_mtime_ns}".encode())
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "seedmap", f"numba-{h.hexdigest()[:16]}")


if "NUMBA_CACHE_DIR" not in os.environ:
    import numba

    numba.config.CACHE_DIR = _numba_cache_dir()
