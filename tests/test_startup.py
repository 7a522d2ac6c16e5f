"""Start-up: cached kernels load without numba's registry refresh, without importing scipy.linalg and without
parsing their bitcode (the symbols their machine code defines are those of the bitcode),
nothing is left changed after the warm-up, and a kernel missing from the cache still compiles; `seedmap
index` compiles what a single-end map run needs and leaves the other kinds of run to their first run; seedmap's own
processes start no spinning BLAS threads."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import random_dna

KERNELS = """
import numpy as np
from numba import njit

@njit(cache=True)
def total(a):
    return np.sort(a)[::-1].sum()  # numpy implementations: their module probes for a BLAS
"""

SCRIPT = """
import sys
import numpy as np
from numba import njit
from numba.core import caching
from numba.core.base import BaseContext
from seedmap.jit.quick_load import cached_kernels_load_quickly

refreshes = []
original_refresh = BaseContext.refresh
BaseContext.refresh = lambda self: refreshes.append(1) or original_refresh(self)
original_load = caching.Cache.load_overload
import kernels

with cached_kernels_load_quickly():
    assert kernels.total(np.arange(5)) == 10
    loaded = kernels.total.stats.cache_hits
    loaded_refreshes = len(refreshes)
    library = kernels.total.overloads[kernels.total.signatures[0]].library
    assert sum(loaded.values()) == 0 or library._shared_module is None, "bitcode parsed at load"

    @njit
    def fresh(a):  # not cached: compiles inside the block, registries and all
        return a.max()

    assert fresh(np.arange(5)) == 4

    @njit
    def linking(a):  # links the loaded kernel in: its bitcode, left unparsed by the load, is parsed now
        return kernels.total(a) + 1

    assert linking(np.arange(5)) == 11
assert library._shared_module is not None
assert "scipy.linalg" not in sys.modules, "scipy.linalg was imported"
assert caching.Cache.load_overload is original_load
try:
    import scipy.linalg  # a later import is not blocked (when SciPy is installed)
except ImportError as exc:
    assert "scipy" in str(exc) and "None in sys.modules" not in str(exc), exc
print(sum(loaded.values()), loaded_refreshes)
"""


def _run(tmp_path) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path),
                                            "NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr
    hits, refreshes = out.stdout.split()
    return int(hits), int(refreshes)


@pytest.mark.slow
def test_cached_kernels_load_without_registry_refresh(tmp_path):
    # Fresh interpreters: this test process has loaded numba's registries already.
    (tmp_path / "kernels.py").write_text(KERNELS)
    assert _run(tmp_path)[0] == 0  # the first run compiles (and refreshes to compile)
    assert _run(tmp_path) == (1, 0)  # the second loads it from the cache, with no refresh


def test_index_compiles_single_end_runs_and_defers_the_others(tmp_path, monkeypatch, caplog):
    """`seedmap index` warms up a single-end run writing SAM (what a first map run most likely is) and no other:
    --best/-n, paired and BAM runs compile in the first run that needs them, and say so; the single-end run
    after the index announces nothing."""
    import numpy as np

    from seedmap.index.neighborhood import NeighborhoodParams
    from seedmap.jit import warmup
    from seedmap.kinds import build_index
    from seedmap.options import MapOptions
    from seedmap.pipeline.run import compile_for_index, run_map
    from seedmap.pipeline.run_options import RunOptions

    real = warmup._marker
    monkeypatch.setattr(warmup, "_marker", lambda *key: tmp_path / "cache" / real(*key).name)
    asked = []
    monkeypatch.setattr(warmup, "compile_listed", lambda kind, name: asked.append((kind, name)) or 0, raising=False)
    (tmp_path / "cache").mkdir()
    rng = np.random.default_rng(3)
    genome = "".join("ACGT"[c] for c in rng.integers(0, 4, 3000))
    (tmp_path / "ref.fa").write_text(f">a\n{genome}\n")
    (tmp_path / "reads.fa").write_text(f">r0\n{genome[100:200]}\n")
    index = build_index(str(tmp_path / "ref.fa"), None, "neighborhood", NeighborhoodParams(10, 16))
    compile_for_index(str(tmp_path / "ref.fa"), str(index), "neighborhood")
    assert {p.name for p in (tmp_path / "cache").iterdir()} == {"seedmap-compiled-neighborhood"}
    assert asked == [("neighborhood", "se")]  # its listed kernels went to the worker processes
    for output, best, notice in (("out.sam", False, None), ("out.sam", True, "for --best/-n"),
                                 ("out.bam", False, "with BAM output")):
        with caplog.at_level("INFO", logger="seedmap"):
            run_map(RunOptions(reference=str(tmp_path / "ref.fa"), reads=str(tmp_path / "reads.fa"),
                               output=str(tmp_path / output), map=MapOptions(best_only=best)))
        assert "mapped 1 reads" in caplog.text
        if notice is None:
            assert "compiling" not in caplog.text
        else:
            assert f"compiling the neighborhood mapping kernels {notice}" in caplog.text
        caplog.clear()
    assert asked[1:] == [("neighborhood", "se-best"), ("neighborhood", "se-bam")]



def test_index_compiles_while_it_builds(tmp_path, monkeypatch, capsys):
    """`seedmap index` hands the mapping kernels to the compiling workers before it builds the index (a core
    would idle meanwhile), from a thread of its own, and the warm-up after the build announces nothing more."""
    import threading

    import numpy as np

    from seedmap import cli
    from seedmap.jit import warmup

    real = warmup._marker
    monkeypatch.setattr(warmup, "_marker", lambda *key: tmp_path / "cache" / real(*key).name)
    asked = []
    monkeypatch.setattr(warmup, "compile_listed",
                        lambda kind, name: asked.append((kind, name, threading.current_thread().name)) or 0)
    (tmp_path / "cache").mkdir()
    genome = "".join("ACGT"[c] for c in np.random.default_rng(4).integers(0, 4, 3000))
    (tmp_path / "ref.fa").write_text(f">a\n{genome}\n")
    assert cli.main(["index", str(tmp_path / "ref.fa")]) == 0
    log = capsys.readouterr().err
    assert asked == [("neighborhood", "se", "seedmap-compile")]
    assert log.count("compiling the") == 1 and "while the index is built" in log
    assert log.index("while the index is built") < log.index("built the neighborhood index")


def test_object_symbols_are_those_of_the_bitcode():
    """What lazy_bitcode reads from a kernel's machine code is what numba reads from its bitcode: the functions and
    data it defines, callees' copies and the environment included; anything not an ELF object falls back."""
    import llvmlite.binding as ll
    import numpy as np
    from numba import njit

    from seedmap.jit.lazy_bitcode import elf_defined_symbols

    @njit
    def callee(a, k):
        return np.sort(a)[k]

    @njit
    def kernel(a):
        out = np.empty(3, dtype=np.int64)  # allocates: NRT references and an environment
        for k in range(3):
            out[k] = callee(a, k)
        return out

    kernel(np.arange(5))
    for fn in (kernel, callee):
        name, kind, (obj, bitcode) = fn.overloads[fn.signatures[0]].library.serialize_using_object_code()
        module = ll.parse_bitcode(bitcode)
        expected = {g.name for gs in (module.functions, module.global_variables) for g in gs if not g.is_declaration}
        assert kind == "object" and len(expected) > 2
        assert elf_defined_symbols(obj) == expected
    assert elf_defined_symbols(b"\x00" * 100) is None
    assert elf_defined_symbols(bitcode) is None
    assert elf_defined_symbols(obj[:200]) is None  # cut short: its section headers lie beyond the end


LATE = """
import sys
from numba.core.dispatcher import Dispatcher
import seedmap.pipeline.run as run
from seedmap.cli import main

late, warmed = set(), []
compile_now = Dispatcher.compile

def compile_counted(self, sig):
    if warmed and tuple(sig) not in self.overloads:
        late.add(self.py_func.__qualname__)
    return compile_now(self, sig)

Dispatcher.compile = compile_counted
warm_up = run.warm_up
run.warm_up = lambda *a, **k: (warm_up(*a, **k), warmed.append(1))
code = main(sys.argv[1:])
print(code, sorted(late))
"""


def _genome_with_repeats(rng) -> tuple[str, str]:
    """A random sequence, and a shorter one holding a 300 bp element 30 times: reads from that have more
    candidates than the neighborhood engine verifies merged (its bulk verification path). The warm-up cuts
    its reads from the longest sequence, so it meets no repeat."""
    element = random_dna(rng, 300)
    parts = []
    for _ in range(30):
        parts += [random_dna(rng, 200), element]
    return random_dna(rng, 20_000), "".join(parts)


@pytest.mark.slow
def test_warm_up_loads_every_kernel_a_run_calls(tmp_path):
    """After the warm-up no kernel is loaded or compiled in the middle of a run (the first load refreshes
    numba's registries, holding the GIL): not for repetitive reads, a new read length, the insert size
    estimate, --best, or BAM."""
    import numpy as np

    rng = np.random.default_rng(5)
    unique, repeats = _genome_with_repeats(rng)
    (tmp_path / "ref.fa").write_text(f">a\n{unique}\n>b\n{repeats}\n")
    genome = repeats + unique

    def revcomp(s: str) -> str:
        return s[::-1].translate(str.maketrans("ACGT", "TGCA"))

    starts = rng.integers(0, len(genome) - 400, 60)
    with open(tmp_path / "r1.fq", "w") as f1, open(tmp_path / "r2.fq", "w") as f2:
        for k, a in enumerate(starts.tolist()):
            m = 80 + k % 3 * 10  # three read lengths
            f1.write(f"@p{k}\n{genome[a:a + m]}\n+\n{'I' * m}\n")
            f2.write(f"@p{k}\n{revcomp(genome[a + 400 - m:a + 400])}\n+\n{'I' * m}\n")
    for args in (["r1.fq", "-o", "out.sam"], ["--best", "r1.fq", "-o", "out.sam"],
                 ["r1.fq", "r2.fq", "-o", "out.bam"], ["--engine", "kmer", "r1.fq", "-o", "out.sam"],
                 ["--engine", "fm", "r1.fq", "-o", "out.sam"]):
        out = subprocess.run([sys.executable, "-c", LATE, "map", "-q", "-t", "2", "-e", "3", "ref.fa", *args],
                             capture_output=True, text=True, timeout=900, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "0 []", (args, out.stdout, out.stderr)


@pytest.mark.parametrize("argv0,preset,want", [
    ("/usr/local/bin/seedmap", None, "1"),  # the command
    ("-m", None, "1"),  # python -m seedmap..., the compiling workers
    ("-m", "4", "4"),  # a value already set is kept
    ("analysis.py", None, "None"),  # a library user's process keeps its BLAS threads
])
def test_seedmap_processes_start_no_blas_threads(argv0, preset, want):
    """numpy's OpenBLAS threads spin as numpy is imported; seedmap's own processes start one thread only."""
    code = (f"import sys; sys.argv = [{argv0!r}]; import os, seedmap, numpy; "
            "print(os.environ.get('OPENBLAS_NUM_THREADS'))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset:
        env["OPENBLAS_NUM_THREADS"] = preset
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == want
