"""Where the compiled kernels are cached (seedmap/jit/cache.py): next to an installation that can be written,
else the user's cache directory, else a private temporary directory, else nowhere, each fallback with one
warning line, never a traceback.

Tests run as root here, where a read-only directory can still be written: directories that cannot be made
(under a regular file) stand for a read-only home, and os.access refusing the package's directory, with
numba's own fallback to each module's __pycache__ left out, for a read-only installation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import seedmap
from seedmap import jit
from seedmap.jit import cache

PACKAGE = str(Path(seedmap.__file__).parent)

READ_ONLY_INSTALL = f"""
import os
real_access = os.access
os.access = lambda path, mode, **kw: False if str(path).startswith({PACKAGE!r}) else real_access(path, mode, **kw)
"""


def _read_only_env(tmp_path: Path, tmpdir: Path) -> dict[str, str]:
    (tmp_path / "file").write_text("")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    return {**env, "HOME": str(tmp_path / "file" / "home"), "XDG_CACHE_HOME": str(tmp_path / "file" / "cache"),
            "TMPDIR": str(tmpdir), "NUMBA_CACHE_LOCATOR_CLASSES": "UserProvidedCacheLocator,UserWideCacheLocator"}


def test_read_only_home_maps_with_a_private_temporary_cache(tmp_path):
    """A read-only installation and home: one warning line naming the temporary directory used instead, and
    the run maps. (Its cache there is the test run's, linked, so that the kernels load instead of compiling.)"""
    import numba
    import numpy as np

    rng = np.random.default_rng(2)
    genome = "".join("ACGT"[c] for c in rng.integers(0, 4, 5000))
    (tmp_path / "ref.fa").write_text(f">a\n{genome}\n")
    (tmp_path / "reads.fa").write_text(f">r0\n{genome[100:200]}\n>r1\n{genome[900:1000]}\n")
    tmpdir = tmp_path / "tmp"
    private = tmpdir / f"seedmap-{os.getuid()}"
    private.mkdir(parents=True, mode=0o700)
    # The test run's kernel cache, under the name the run picks (NUMBA_CACHE_DIR, where the tests have it set,
    # names a directory of any name).
    ours = Path(numba.config.CACHE_DIR)
    key = f"numba-{cache._source_key()}"
    (private / key).symlink_to(ours)
    script = READ_ONLY_INSTALL + "import sys; from seedmap.cli import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run([sys.executable, "-c", script, "map", "ref.fa", "reads.fa", "-o", "out.sam"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, env=_read_only_env(tmp_path, tmpdir))
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    warnings = [line for line in out.stderr.splitlines() if "cache" in line and "cannot" in line]
    assert warnings == [f"[seedmap] cannot write the compiled kernels' cache in {tmp_path / 'file' / 'cache'}"
                        f"/seedmap/{key}: using {private / key} instead"], out.stderr
    assert "mapped 2 reads: 2 (100.00%)" in out.stderr
    assert sum(1 for line in (tmp_path / "out.sam").read_text().splitlines() if not line.startswith("@")) == 2


def test_nowhere_to_cache_still_compiles(tmp_path):
    """Not even a temporary directory to write in: one warning line, and seedmap's cache=True kernels compile
    uncached (numba alone fails as they are defined: 'no locator available'), while another module's
    cache=True function still fails as numba alone would: seedmap changes numba for its own kernels only."""
    script = READ_ONLY_INSTALL + f"""
import tempfile
tempfile.gettempdir = lambda: {str(tmp_path / "file" / "tmp")!r}
import seedmap.cli  # every kernel module
import numpy as np
from numba import njit
from seedmap import jit
from seedmap.io.reference import sequence_of

print(sequence_of(np.array([0, 10, 20]), 15), jit.KERNEL_CACHE)
print(jit.CACHE_WARNING)
try:
    @njit(cache=True)
    def f(x):
        return x + 1
    print("defined")
except RuntimeError as exc:
    print(exc)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env=_read_only_env(tmp_path, tmp_path / "file" / "tmp"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "1 None"
    assert "the kernels are compiled in every run" in lines[1]
    assert "no locator available" in lines[2]


def test_a_writable_installation_is_preferred(tmp_path, monkeypatch):
    """Next to the package when it can be written (every user of the installation shares the kernels), else
    the user's cache directory, with no warning; NUMBA_CACHE_DIR when set."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    path, warning = cache.choose_cache()
    assert Path(path).parent == Path(PACKAGE) / "__pycache__" and not warning
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **kw: False if str(p).startswith(PACKAGE) else real_access(p, m))
    path, warning = cache.choose_cache()
    assert Path(path).parent == tmp_path / "user" / "seedmap" and not warning
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.choose_cache() == (str(tmp_path / "mine"), "")


IMPORT_CHANGES_NOTHING = """
import numba
from numba.core.dispatcher import Dispatcher
before = (Dispatcher.get_call_template, Dispatcher.enable_caching, numba.config.CACHE_DIR)
import seedmap
from seedmap import jit
assert (Dispatcher.get_call_template, Dispatcher.enable_caching, numba.config.CACHE_DIR) == before
assert not jit.activated()
print(seedmap.Index.__name__)
jit.activate()
assert Dispatcher.get_call_template is not before[0] and numba.config.CACHE_DIR == jit.KERNEL_CACHE
"""


def test_import_leaves_numba_as_it_is(tmp_path):
    """`import seedmap` (and its API's names) patches nothing in numba and sets no cache directory: only an entry
    point's `jit.activate()` does."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    out = subprocess.run([sys.executable, "-c", IMPORT_CHANGES_NOTHING], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["Index"]


def test_activated_in_tests():
    """The tests run as seedmap's entry points do (conftest.py activates): kernels cache where a run's do."""
    assert jit.activated() and jit.KERNEL_CACHE
