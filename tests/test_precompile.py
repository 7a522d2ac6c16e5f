"""Compiling in worker processes (jit/precompile.py): the list of kernels is current, workers compile
listed kernels into numba's cache for the caller to load and log a line per group, and cache saves from
several processes at once keep every overload."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from seedmap.jit import precompile

TOY = """
from numba import njit

@njit(cache=True)
def twice(a):
    return a * 2

@njit(cache=True)
def total(a):
    s = 0
    for x in a:
        s += twice(x)
    return s
"""

TASKS = [("toy", "total", "(Array(int64, 1, 'C', False, aligned=True),)", 3.0), ("toy", "twice", "(int64,)", 2.0),
         ("toy", "twice", "(float64,)", 1.0)]

POOL = f"""
import logging, sys
import numpy as np
from seedmap.jit import precompile

logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
precompile.listed = lambda kind, name: {TASKS!r}
precompile.processes = lambda: 2  # whatever the cores here
print("processes", precompile.compile_listed("neighborhood", "se"))
print("pending", len(precompile.pending("neighborhood", "se")))
import toy
assert toy.total(np.arange(4)) == 12 and toy.twice(1.5) == 3.0 and toy.twice(2) == 4
print("loaded", sum(toy.total.stats.cache_hits.values()), sum(toy.twice.stats.cache_hits.values()),
      "compiled", sum(toy.total.stats.cache_misses.values()) + sum(toy.twice.stats.cache_misses.values()))
"""


def _env(tmp_path, cache: str = "cache") -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
            "NUMBA_CACHE_DIR": str(tmp_path / cache)}


def test_workers_compile_listed_kernels_for_the_caller_to_load(tmp_path):
    """The workers compile every listed kernel into the caller's cache: the caller then loads each from it,
    compiling nothing, and nothing is pending; the log names each group with its seconds, then the total."""
    (tmp_path / "toy.py").write_text(TOY)
    out = subprocess.run([sys.executable, "-c", POOL], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env=_env(tmp_path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "processes 2" in lines and "pending 0" in lines, out.stdout
    assert "loaded 1 2 compiled 0" in lines, out.stdout
    assert any(line.startswith("  other: 3 kernels, ") and line.endswith(" s") for line in lines), out.stdout
    assert any(line.startswith("compiled 3 kernels in ") and line.endswith(" in 2 processes") for line in lines)
    assert not list(tmp_path.glob("cache/**/*.tmp.*"))  # no save left half-done


RACE = """
import os, sys, time
from numba.core import caching, types
from seedmap.jit.precompile import serialized_cache_saves

save_index = caching.IndexDataCacheFile._save_index

def slow(self, overloads):  # widen the window between reading a function's index and writing it back
    time.sleep(1.0)
    save_index(self, overloads)

caching.IndexDataCacheFile._save_index = slow
import toy

mine, theirs, kind = sys.argv[1:]
open(mine, "w").close()
while not os.path.exists(theirs):  # both start saving together
    time.sleep(0.01)
with serialized_cache_saves():
    toy.twice.compile((getattr(types, kind),))
"""


@pytest.mark.slow
def test_concurrent_cache_saves_keep_every_overload(tmp_path):
    """Two processes saving two overloads of one function at once: numba alone rewrites the function's index
    from what each read before the other wrote (numba issue 10128); serialized, both overloads are kept and
    each loads as its own."""
    (tmp_path / "toy.py").write_text(TOY)
    env = _env(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", RACE, str(tmp_path / a), str(tmp_path / b), kind], cwd=tmp_path,
                              env=env, stderr=subprocess.PIPE, text=True)
             for a, b, kind in (("a", "b", "int64"), ("b", "a", "float64"))]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    check = ("import toy; assert toy.twice(2) == 4 and toy.twice(1.5) == 3.0; "
             "print(sum(toy.twice.stats.cache_hits.values()))")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2"]


# Each kind of run whose list the index compiles (single-end, SAM), and the other runs of the default engine.
CHECKED = [("neighborhood", name) for name in (*precompile.VARIANTS, "se-memory")] + [("kmer", "se"), ("fm", "se")]


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """A reference, with an index of each kind checked, built with the test run's kernel cache."""
    tmp = tmp_path_factory.mktemp("recording")
    fasta = precompile.write_genome(str(tmp / "ref.fa"))
    (tmp / "memory.fa").write_text((tmp / "ref.fa").read_text())
    return tmp, {kind: precompile.build_in(dict(os.environ), fasta, kind) for kind in {k for k, _ in CHECKED}}


def test_kinds_of_run():
    assert precompile.variant(False, False, False) == "se"
    assert precompile.variant(False, True, True, stored=False) == "se-best-bam-memory"
    assert precompile.variant(True, True, True) == "pe-best-bam"  # paired --best: strata of its own (pair_strata.py)
    from seedmap.jit.kernel_list import KERNELS

    assert {precompile.group(k[0]) for k in KERNELS} == {
        "reading the input", "seeds and filter", "candidates", "verification", "records and MAPQ", "SAM output",
        "BAM output", "pairing"}
    assert precompile.group("elsewhere") == "other"


def test_every_listed_kernel_is_found():
    from seedmap.jit.kernel_list import KERNELS, RUNS

    for module, fn, text, seconds in KERNELS:
        assert precompile.dispatcher(module, fn).py_func.__module__ == module
        assert all(t is not None for t in precompile.signature(text)) and seconds >= 0
    assert {name for runs in RUNS.values() for name in runs} == {
        f"{v}{m}" for v in precompile.VARIANTS for m in ("", "-memory")}


def test_named_tuple_signatures_read_back():
    """A NamedTuple argument's type (its repr is not Python) is written as text that signature() reads back; other
    types are written as numba's reprs, as the list holds them."""
    from numba import typeof

    from seedmap.io.columns import Records
    from seedmap.records import SINGLE

    # a NamedUniTuple, where SINGLE's types differ (a NamedTuple)
    uniform = Records(*[SINGLE.chosen] * len(Records._fields))
    sig = (typeof(SINGLE), typeof(uniform), typeof(SINGLE.chosen), typeof(True), typeof(tuple(SINGLE)))
    text = precompile.signature_text(sig)
    assert "cls('seedmap.records:Mates')" in text and "cls('seedmap.io.columns:Records')" in text
    assert precompile.signature(text) == sig
    assert precompile.signature_text(sig[2:3]) == f"({sig[2]!r},)"


@pytest.mark.slow
@pytest.mark.parametrize("kind,name", CHECKED)
def test_kernel_list_is_current(recording, kind, name):
    """kernel_list.py names every kernel the run calls from Python with the argument types it calls it with (a
    kernel added or changed since: `python -m seedmap.jit.precompile --record` writes the list again)."""
    from seedmap.jit.kernel_list import KERNELS, RUNS

    tmp, indexes = recording
    memory = name.endswith("-memory")
    found = precompile.record_run(str(tmp / ("memory.fa" if memory else "ref.fa")), None if memory else indexes[kind],
                                  kind, name, dict(os.environ))
    assert sorted(k[:3] for k in found) == sorted(KERNELS[i][:3] for i in RUNS[kind][name])


def _array_expression(node: ast.expr) -> bool:
    """A subscript, or a call other than a numpy scalar's constructor (np.int64(x))."""
    if isinstance(node, ast.Call):
        return not (isinstance(node.func, ast.Attribute) and node.func.attr[:3] in ("int", "uin", "flo", "boo"))
    return isinstance(node, ast.Subscript)


def _slice_assignments_of_arrays(tree: ast.AST) -> list[int]:
    """Lines in njit functions that assign an array expression (_array_expression) to a slice."""
    lines = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or not any(
                "njit" in ast.unparse(d) for d in fn.decorator_list):
            continue
        for node in ast.walk(fn):
            if (isinstance(node, ast.Assign) and _array_expression(node.value)
                    and any(isinstance(t, ast.Subscript) and any(isinstance(x, ast.Slice) for x in ast.walk(t.slice))
                            for t in node.targets)):
                lines.append(node.lineno)
    return lines


def test_slice_check_is_found():
    """The check below sees the forms it forbids, and lets a scalar fill be."""
    code = ("from numba import njit\n@njit(cache=True)\ndef f(a, b, o):\n    a[1:3] = b[o]\n    a[:] = 0\n"
            "    a[2:] = g(b)\n    a[:2] = np.int64(b[0])\n")
    assert _slice_assignments_of_arrays(ast.parse(code)) == [4, 6]


def test_no_kernel_assigns_an_array_to_a_slice():
    """numba compiles a slice assignment from an array with its shape-mismatch message (str, repr, unicode):
    2.5-3 s of each first compile of a kernel holding one (ranges.put is the loop to use)."""
    src = Path(precompile.__file__).resolve().parents[1]
    found = [f"{path.relative_to(src)}:{line}" for path in sorted(src.rglob("*.py"))
             for line in _slice_assignments_of_arrays(ast.parse(path.read_text()))]
    assert found == []


LITERALS = """
from numba import njit

@njit
def callee(a, b):
    return a + b

@njit
def caller(x):
    n = 0
    for i in range(x):
        n = callee(n, 3)
    return n
"""


@pytest.mark.parametrize("module", ["seedmap._toy_literals", "elsewhere._toy_literals"])
def test_seedmap_callees_compile_once_per_type(module):
    """numba compiles a callee for each literal argument it meets (here two copies, neither of them the plain
    one); seedmap's callees are compiled for the plain types (seedmap/jit/literals.py), other code's as numba does."""
    from seedmap import jit

    jit.activate()  # (the hook; conftest.py has activated it already)

    mod = types.ModuleType(module)
    exec(compile(LITERALS, "<toy>", "exec"), mod.__dict__)
    assert mod.caller(5) == 15
    got = [tuple(str(t) for t in sig) for sig in mod.callee.signatures]
    if module.startswith("seedmap."):
        assert got == [("int64", "int64")]
    else:  # (a numba that stops doing this makes the hook needless)
        assert any("Literal" in t for sig in got for t in sig)
