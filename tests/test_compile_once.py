"""Compiling once (docs/compiling.md): a line on stderr whenever a kernel compiles (none when it loads from the
cache), a copied installation's own cache directory, `seedmap compile`, and users of a read-only installation
starting from its cache instead of compiling."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import seedmap
from seedmap.jit import cache

SRC = str(Path(seedmap.__file__).parent.parent)

# A small kernel, compiled or loaded: what a run's first call of any kernel does.
CALL = """
import logging, sys
logging.basicConfig(level=logging.INFO, format="[seedmap] %(message)s", stream=sys.stderr)
from seedmap import jit
jit.activate()
from seedmap.mapq import phred_of_rest
phred_of_rest(0.5)
"""


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**env, "PYTHONPATH": SRC})


def _compile_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("[seedmap] compiling kernels")]


def test_a_compile_says_so_and_a_cache_load_does_not(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    first = _run(CALL, env)
    assert first.returncode == 0, first.stderr
    lines = _compile_lines(first.stderr)
    assert len(lines) == 1 and "seedmap.mapq.phred_of_rest" in lines[0] and str(tmp_path / "cache") in lines[0]
    warm = _run(CALL, env)
    assert warm.returncode == 0 and _compile_lines(warm.stderr) == [], warm.stderr


def test_the_cache_key_names_the_installation(monkeypatch, tmp_path):
    """A copy of the installation elsewhere (the same files, the same mtimes) gets a cache directory of its own."""
    here = cache._source_key()
    copy = tmp_path / "seedmap"
    copy.mkdir()
    for f in Path(cache.PACKAGE).rglob("*.py"):
        if "__pycache__" not in f.parts:
            dest = copy / f.relative_to(cache.PACKAGE)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(f.read_bytes())
            os.utime(dest, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns))
    monkeypatch.setattr(cache, "PACKAGE", copy)
    assert cache._source_key() != here
    monkeypatch.setattr(cache, "PACKAGE", Path(str(copy)))
    assert cache._source_key() == cache._source_key()


def test_a_read_only_installations_cache_starts_each_users(monkeypatch, tmp_path):
    """Another user (a home of their own) of an installation they cannot write: their cache starts as a copy of
    the installation's (what `seedmap compile` filled), and nothing of theirs is replaced later."""
    install = tmp_path / "site" / "seedmap"
    install.mkdir(parents=True)
    monkeypatch.setattr(cache, "PACKAGE", install)
    key = f"numba-{cache._source_key()}"
    kernels = install / "__pycache__" / key / "mapq_0123"
    kernels.mkdir(parents=True)
    (kernels / "mapq.phred_of_rest-27.py311.nbi").write_bytes(b"index")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if str(path).startswith(str(install))
                        else real_access(path, mode, **kw))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home" / ".cache"))
    where, warning = cache.choose_cache()
    assert (where, warning) == (str(tmp_path / "home" / ".cache" / "seedmap" / key), "")
    copied = Path(where) / "mapq_0123" / "mapq.phred_of_rest-27.py311.nbi"
    assert copied.read_bytes() == b"index"
    copied.write_bytes(b"the user's own")
    assert cache.choose_cache()[0] == where and copied.read_bytes() == b"the user's own"


COMPILE = """
import sys
from seedmap import cli
from seedmap.jit import kernel_list
kind = next(iter(kernel_list.RUNS))
name = next(iter(kernel_list.RUNS[kind]))
few = min(kernel_list.RUNS[kind][name], key=lambda i: kernel_list.KERNELS[i][3])
kernel_list.RUNS = {kind: {name: (few,)}}  # (the quickest kernel: all of them take minutes)
print(kernel_list.KERNELS[few][1])
sys.exit(cli.main(["compile"]))
"""


def test_seedmap_compile_fills_the_cache(tmp_path):
    """`seedmap compile` compiles the listed kernels the cache lacks into it and says where; run again, it finds
    nothing to do."""
    where = tmp_path / "cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(where)}
    first = _run(COMPILE, env)
    assert first.returncode == 0, first.stderr
    assert f"1 kernels compiled into {where}" in first.stderr
    kernel = first.stdout.strip()
    assert any(f.name.split("-")[0].endswith("." + kernel) and f.suffix == ".nbi" for f in where.rglob("*"))
    again = _run(COMPILE, env)
    assert again.returncode == 0 and f"every kernel is in the cache already ({where})" in again.stderr
