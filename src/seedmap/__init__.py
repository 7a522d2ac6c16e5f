"""seedmap: a fully sensitive short-read mapper."""

import hashlib
import os
import sys
import tempfile
from pathlib import Path

__version__ = "0.1.0"

# numpy's OpenBLAS starts a thread per core as numpy is imported, each spinning about 0.1 s before it sleeps. seedmap
# calls no BLAS: in its own processes (the `seedmap` command, `python -m seedmap...`, the compiling workers) those
# threads only take CPU from the run's (2 cores: 0.1-0.2 CPU-s a run). A process that imports seedmap as a library
# keeps its BLAS as it is, and a value already set is kept.
if sys.argv and os.path.basename(sys.argv[0]) in ("seedmap", "-m"):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Where numba caches seedmap's compiled kernels (None: nowhere writable, they compile in every run), and the
# one warning line saying why it is not the usual place ("" when it is); logged once by the warm-up.
KERNEL_CACHE: str | None = None
CACHE_WARNING = ""


def _source_key() -> str:
    """A key of this package's sources.

    numba's cache=True revalidates a cached function against its own file only: a kernel that calls a
    function from another module keeps the old callee after that module changes (an upgrade, an edit).
    Keying the cache directory by every source file's size and mtime makes stale machine code impossible.
    """
    here = Path(__file__).parent
    h = hashlib.sha1(__version__.encode())
    files = []
    for root, dirs, names in os.walk(here):
        dirs[:] = [d for d in dirs if d != "__pycache__"]  # where the kernels may be cached: many files
        files += [os.path.join(root, n) for n in names if n.endswith(".py")]
    for f in sorted(files, key=lambda f: Path(f).relative_to(here).parts):
        st = os.stat(f)
        h.update(f"{Path(f).relative_to(here)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _writable(path: Path) -> bool:
    """Whether `path` is (or could be made) a directory this process can write in. os.access, not a test file:
    it answers read-only filesystems too, and costs no write at every start-up."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:  # read-only, or a parent that is a file or not ours
        return False
    return os.access(path, os.W_OK | os.X_OK)


def _private_tmp() -> Path | None:
    """This user's directory in the temporary directory, if it is ours alone: numba's cache files are pickles,
    and loading ones that another user could have written would run their code."""
    base = Path(tempfile.gettempdir()) / f"seedmap-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    try:
        base.mkdir(mode=0o700, exist_ok=True)
        st = base.lstat()
    except OSError:
        return None
    if base.is_symlink() or (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & 0o022:
        return None
    return base


def _choose_cache() -> tuple[str | None, str]:
    """(directory, warning). NUMBA_CACHE_DIR when set; else next to the installed package (its __pycache__),
    shared by every user of an installation they can write; else the user's cache directory. When none of
    these is writable (a read-only home in a container or a shared account), this user's private directory
    in the temporary directory, with a warning; when not even that, no cache, with a warning."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given and _writable(Path(given)):
        return given, ""  # (no source key: the user keeps this directory fresh)
    key = f"numba-{_source_key()}"
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path(os.path.expanduser("~")) / ".cache") / "seedmap"
    wanted = [Path(given)] if given else [Path(__file__).parent / "__pycache__" / key, user / key]
    if not given:
        for path in wanted:
            if _writable(path):
                return str(path), ""
    tmp = _private_tmp()
    if tmp is not None and _writable(tmp / key):
        return str(tmp / key), f"cannot write the compiled kernels' cache in {wanted[-1]}: using {tmp / key} instead"
    return None, (f"cannot write the compiled kernels' cache in {wanted[-1]} nor in a temporary directory: the "
                  "kernels are compiled in every run (NUMBA_CACHE_DIR names a writable directory)")


def _no_cache() -> None:
    """cache=True with nowhere to write fails as the kernels are defined (numba: 'no locator available'):
    they stay uncached instead, compiled in every run."""
    from numba.core.dispatcher import Dispatcher

    Dispatcher.enable_caching = lambda self: None


def _no_literal_specialisations() -> None:
    """A call between seedmap's kernels compiles its callee for the arguments' types, not their values.

    numba types a constant argument (`f(buf, p, 78, 77, d)`, a counter's first `n = 0`) as a literal and
    compiles the callee once for each literal it meets, then again for the plain type once inference has
    unified a variable's assignments: the FM search compiled its right walk four times, ~10 s each; the
    first fm run spent a third of its 60-110 s a kernel on such copies, the SAM and BAM tags one per tag.
    No seedmap kernel needs a literal argument, so its callees are typed with the plain types."""
    from numba.core import types
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.get_call_template

    def get_call_template(self: Dispatcher, args: tuple, kws: dict) -> tuple:
        if getattr(self.py_func, "__module__", "").startswith("seedmap."):
            args = tuple(types.unliteral(a) for a in args)
            kws = {k: types.unliteral(v) for k, v in kws.items()}
        return original(self, args, kws)

    Dispatcher.get_call_template = get_call_template


KERNEL_CACHE, CACHE_WARNING = _choose_cache()
if KERNEL_CACHE is None:
    _no_cache()
elif KERNEL_CACHE != os.environ.get("NUMBA_CACHE_DIR"):  # (numba reads that itself: no import here then)
    import numba

    numba.config.CACHE_DIR = KERNEL_CACHE
_no_literal_specialisations()
