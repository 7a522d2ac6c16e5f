"""Where numba caches seedmap's compiled kernels: `choose_cache` (applied by `seedmap.jit.activate`)."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from seedmap.version import __version__

PACKAGE = Path(__file__).parent.parent  # seedmap's sources: they key the cache, which may lie beside them


def _source_key() -> str:
    """A key of this package's sources.

    numba's cache=True revalidates a cached function against its own file only: a kernel that calls a
    function from another module keeps the old callee after that module changes (an upgrade, an edit).
    Keying the cache directory by every source file's size and mtime makes stale machine code impossible.
    """
    here = PACKAGE
    # The installation's path too: numba's cache index names each source file by its path, so a copied
    # installation (a virtual environment copied elsewhere) finds nothing of its original's but recompiles
    # behind the same directory name; a key of its own makes its first run a visible, clean compile.
    h = hashlib.sha1(__version__.encode() + str(here.resolve()).encode())
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


def install_cache(key: str | None = None) -> Path:
    """The installation's own cache directory (`seedmap compile` fills it once for every user)."""
    return PACKAGE / "__pycache__" / (key or f"numba-{_source_key()}")


def _copy_installed(installed: Path, private: Path) -> None:
    """A user who cannot write the installation starts a private cache from its own one, when it has kernels
    (an administrator ran `seedmap compile`): numba needs a cache directory it can write, and the installation's
    files are as trusted as its code. Only into an empty cache, so nothing of the user's is replaced."""
    try:
        if not installed.is_dir() or any(private.iterdir()):
            return
        shutil.copytree(installed, private, dirs_exist_ok=True)
    except OSError:  # unreadable, or a partial copy: numba compiles what it cannot load
        pass


def choose_cache() -> tuple[str | None, str]:
    """(directory, warning). NUMBA_CACHE_DIR when set; else next to the installed package (its __pycache__),
    shared by every user of an installation they can write; else the user's cache directory, started from the
    installation's cache. When none of
    these is writable (a read-only home in a container or a shared account), this user's private directory
    in the temporary directory, with a warning; when not even that, no cache, with a warning."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given and _writable(Path(given)):
        return given, ""  # (no source key: the user keeps this directory fresh)
    key = f"numba-{_source_key()}"
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path(os.path.expanduser("~")) / ".cache") / "seedmap"
    installed = install_cache(key)
    wanted = [Path(given)] if given else [installed, user / key]
    if not given:
        for path in wanted:
            if _writable(path):
                if path != installed:
                    _copy_installed(installed, path)
                return str(path), ""
    tmp = _private_tmp()
    if tmp is not None and _writable(tmp / key):
        if not given:
            _copy_installed(installed, tmp / key)
        return str(tmp / key), f"cannot write the compiled kernels' cache in {wanted[-1]}: using {tmp / key} instead"
    return None, (f"cannot write the compiled kernels' cache in {wanted[-1]} nor in a temporary directory: the "
                  "kernels are compiled in every run (NUMBA_CACHE_DIR names a writable directory)")
