"""Compile a run's kernels in worker processes before its warm-up: a first run waits for the slowest share
instead of the sum.

numba compiles one function at a time in a process (a global lock, and the GIL), so threads cannot share the
work; processes can. Each worker compiles the kernels it is handed with cache=True, which writes them to
numba's on-disk cache, and the run's warm-up then loads them as any later run does. Which kernels, with which
argument types, each kind of run calls from Python is listed in kernel_list.py, recorded from the warm-ups
themselves (`python -m seedmap.jit.precompile --record`; tests/test_precompile.py checks that it is
current). A kernel the list misses is compiled by the warm-up in the run's own process, as before: slower,
never wrong.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger("seedmap")

# The kinds of run the warm-up tells apart, each with kernels of its own: (paired, --best/-n, BAM output).
VARIANTS = {"se": (False, False, False), "se-best": (False, True, False), "pe": (True, False, False),
            "pe-best": (True, True, False), "se-bam": (False, False, True), "se-best-bam": (False, True, True),
            "pe-bam": (True, False, True), "pe-best-bam": (True, True, True)}

MAX_PROCESSES = 4  # more share out a few large kernels no better, and compile more shared callees twice
MIN_SECONDS = 4.0  # less listed compile time than this: starting workers (about a second) would not pay

# What the log calls the kernels of a module (the first prefix that matches).
GROUPS = (("seedmap.io.sam", "SAM output"), ("seedmap.io.bam_encode", "BAM output"),
          ("seedmap.io", "reading the input"), ("seedmap.filter", "seeds and filter"),
          ("seedmap.index", "seeds and filter"), ("seedmap.engines", "candidates"), ("seedmap.ranges", "candidates"),
          ("seedmap.verify", "verification"), ("seedmap.backends", "verification"),
          ("seedmap.records", "records and MAPQ"), ("seedmap.mapq", "records and MAPQ"),
          ("seedmap.paired", "pairing"))

Task = tuple[str, str, str, float]  # module, function, argument types (numba's repr), seconds to compile


def variant(paired: bool, stratified: bool, bam: bool, stored: bool = True) -> str:
    """The key of a kind of run in kernel_list.RUNS: a VARIANTS key (a paired -n run's kernels are among a paired
    --best run's: its insert size estimate searches as all-mapping does), then "-memory" for an index built in
    memory: its arrays are writable where a stored index's are read-only, and numba compiles a kernel for each."""
    return (f"{'pe' if paired else 'se'}{'-best' if stratified else ''}{'-bam' if bam else ''}"
            f"{'' if stored else '-memory'}")


def group(module: str) -> str:
    return next((label for prefix, label in GROUPS if module == prefix or module.startswith(prefix + ".")), "other")


def dispatcher(module: str, name: str) -> Any:
    """The object `name` (dotted) of `module`: a kernel's numba dispatcher, CPU or CUDA, or a NamedTuple class."""
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def signature(text: str) -> tuple:
    """The argument types written by signature_text (kernel_list.py holds numba's own reprs of them)."""
    from numba.core import types

    names = {**vars(types), "cls": _named_class}  # our own list: numba's type names, and our NamedTuple classes
    value = eval(text, {"__builtins__": {}}, names)
    return value if isinstance(value, tuple) else (value,)


def signature_text(sig: tuple) -> str:
    """Argument types as text that signature() reads back: numba's reprs, as str(tuple) writes them, but a
    NamedTuple's (whose repr is not Python) spelled out, its class by name."""
    parts = [_type_text(t) for t in sig]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _type_text(t: object) -> str:
    # numba.core.types' stub omits these two
    from numba.core.types.containers import NamedTuple as NumbaNamedTuple
    from numba.core.types.containers import NamedUniTuple

    if isinstance(t, NamedUniTuple):
        return f"NamedUniTuple({_type_text(t.dtype)}, {t.count}, cls({_class_name(t.instance_class)!r}))"
    if isinstance(t, NumbaNamedTuple):
        inner = "".join(_type_text(x) + ", " for x in t.types)
        return f"NamedTuple(({inner.rstrip()}), cls({_class_name(t.instance_class)!r}))"
    return repr(t)


def _class_name(c: type) -> str:
    return f"{c.__module__}:{c.__qualname__}"


def _named_class(name: str) -> type:
    module, qualname = name.split(":")
    return dispatcher(module, qualname)


def listed(kind: str, name: str) -> list[Task]:
    from seedmap.jit.kernel_list import KERNELS, RUNS

    return [KERNELS[i] for i in RUNS.get(kind, {}).get(name, ())]


def _cached(disp: Any, sig: tuple) -> bool:  # numba's cache internals, which its stubs do not type
    """Whether numba's cache holds this overload, read from its index without loading it."""
    try:
        cache = disp._cache
        return cache._index_key(sig, disp.targetctx.codegen()) in cache._cache_file._load_index()
    except Exception:  # no cache, or a numba that keeps it otherwise: a worker finds out
        return False


def pending(kind: str, name: str) -> list[Task]:
    """The listed kernels of this kind of run that the cache lacks, largest first (a worker that finishes
    takes the next: the last to start are the shortest)."""
    out = []
    for task in listed(kind, name):
        try:
            disp, sig = dispatcher(task[0], task[1]), signature(task[2])
        except Exception:  # renamed since the list was made: the warm-up compiles what the run calls
            continue
        if not _cached(disp, sig):
            out.append(task)
    return sorted(out, key=lambda t: -t[3])


def processes() -> int:
    """Worker processes for compiling: the cores this process may run on (at most MAX_PROCESSES), 1 where
    the cache saves cannot be serialized."""
    if _lock_path() is None:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return min(cores, MAX_PROCESSES)


def compile_listed(kind: str, name: str) -> int:
    """Compile the listed kernels of this kind of run that the cache lacks, in worker processes when there are
    enough of them and more than one core; the number of processes used (0: left to the warm-up). A group's
    line is logged when its last kernel is done, with the seconds its kernels took to compile."""
    tasks = pending(kind, name)
    n = min(processes(), len(tasks))
    if n < 2 or sum(t[3] for t in tasks) < MIN_SECONDS:
        return 0
    t0 = time.perf_counter()
    todo: queue.SimpleQueue[Task] = queue.SimpleQueue()
    for task in tasks:
        todo.put(task)
    done: queue.SimpleQueue[tuple | None] = queue.SimpleQueue()
    workers: list[_Worker] = []
    try:
        for _ in range(n):
            workers.append(_Worker())
    except OSError as exc:  # cannot start processes here: the warm-up compiles in this one
        log.debug("compiling in this process: no worker processes (%s)", exc)
        for w in workers:
            w.stop()
        return 0
    for w in workers:
        threading.Thread(target=w.serve, args=(todo, done), daemon=True).start()
    count = {g: sum(1 for t in tasks if group(t[0]) == g) for g in {group(t[0]) for t in tasks}}
    left, seconds, alive, compiled = dict(count), dict.fromkeys(count, 0.0), n, 0
    try:
        while alive:
            result = done.get()
            if result is None:  # a worker finished, or gone (its kernel is left to the warm-up)
                alive -= 1
                continue
            module, fn, took, error = result
            compiled += 1
            g = group(module)
            left[g] -= 1
            seconds[g] += took
            if error:  # a listed signature the code no longer takes: the warm-up compiles what it calls
                log.debug("could not compile %s.%s from the list: %s", module, fn, error)
            if not left[g]:
                log.info("  %s: %d kernel%s, %.1f s", g, count[g], "s" if count[g] > 1 else "", seconds[g])
    finally:  # Ctrl-C and SIGTERM land here too: no worker outlives the run
        for w in workers:
            w.stop()
    log.info("compiled %d kernels in %.1f s in %d processes", compiled, time.perf_counter() - t0, n)
    return n


class _Worker:
    """A compiling process, `python -m seedmap.jit.precompile --worker CACHE_DIR`: a task as a line of
    JSON in, its result as a line out. A plain subprocess, not multiprocessing: it imports nothing of the
    caller's main module (a script run as a library would run again in each worker), and needs neither
    semaphores nor a non-daemonic parent (a Dask worker process)."""

    def __init__(self) -> None:
        import numba

        env = dict(os.environ)  # the worker imports this very seedmap, whatever put it on sys.path here
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen([sys.executable, "-m", "seedmap.jit.precompile", "--worker",
                                      numba.config.CACHE_DIR], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both piped
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout

    def serve(self, todo: queue.SimpleQueue, done: queue.SimpleQueue) -> None:
        """Hand this worker one task at a time until none is left (a worker that finishes takes the next),
        each result to `done`, then None: this worker is finished (or gone, its last task with it)."""
        try:
            while True:
                try:
                    task = todo.get_nowait()
                except queue.Empty:
                    return
                self.stdin.write(json.dumps(task) + "\n")
                self.stdin.flush()
                line = ""
                while not line.startswith(_RESULT):  # numba may print too (NUMBA_DEBUG...)
                    line = self.stdout.readline()
                    if not line:
                        return
                done.put(tuple(json.loads(line[len(_RESULT):])))
        except (OSError, ValueError):  # exited, or stopped by the caller
            pass
        finally:
            self._close()
            done.put(None)

    def _close(self) -> None:
        try:
            self.stdin.close()  # the worker's end of input: it exits
        except OSError:
            pass

    def stop(self) -> None:
        """Kill the worker if it is still compiling (Ctrl-C, SIGTERM); else wait for it to exit (at once, its
        input closed), so that no process outlives the run and its CPU time counts in the caller's."""
        if not self.stdin.closed:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_RESULT = "seedmap-compiled "


def compile_all() -> int:
    """`seedmap compile`: every listed kernel of every kind of run that the cache lacks, in worker processes where
    there are enough of them, else in this one; how many were pending."""
    from seedmap.jit.kernel_list import RUNS

    total = 0
    for kind, runs in RUNS.items():
        for name in runs:
            tasks = pending(kind, name)
            total += len(tasks)
            if tasks and not compile_listed(kind, name):
                for module, fn, text, _ in tasks:
                    try:
                        dispatcher(module, fn).compile(signature(text))
                    except Exception as exc:  # a signature the code no longer takes (a stale list)
                        log.debug("could not compile %s.%s from the list: %s", module, fn, exc)
    return total


def _worker(cache_dir: str) -> None:
    """A worker's life: compile each task read from stdin, with the caller's cache and saves serialized."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle: it stops the workers
    from seedmap.jit import activate

    activate(cache_dir)  # the caller's cache, whatever this process would have chosen; before any kernel module
    with serialized_cache_saves():
        for line in sys.stdin:
            module, fn, text, _ = json.loads(line)
            t = time.perf_counter()
            try:
                dispatcher(module, fn).compile(signature(text))
                error = ""
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"[:300]
            sys.stdout.write(_RESULT + json.dumps([module, fn, time.perf_counter() - t, error]) + "\n")
            sys.stdout.flush()


def _lock_path() -> str | None:
    """The lock file that serializes cache saves, None where there can be none (no fcntl, no cache, or a
    numba whose cache files are laid out otherwise)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return None
    import numba
    from numba.core import caching

    if not numba.config.CACHE_DIR or not hasattr(caching, "IndexDataCacheFile"):
        return None
    return os.path.join(numba.config.CACHE_DIR, "seedmap-saves.lock")


@contextmanager
def serialized_cache_saves() -> Iterator[None]:
    """Within the block, saving an overload to numba's cache holds a lock shared by every process.

    numba saves an overload by reading the function's index, adding the new entry and writing the index
    back, then the machine code under the entry's file name: two processes saving two overloads of one
    function at once lose one entry, or give one's entry the other's code (numba issue 10128). Workers
    compiling side by side do save overloads of shared callees at once, and so may Dask workers warming up."""
    path = _lock_path()
    if path is None:
        yield
        return
    import fcntl

    from numba.core import caching

    original = caching.IndexDataCacheFile.save

    def save(self: object, key: object, data: object) -> None:
        with open(path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            original(self, key, data)  # the lock goes with the file

    caching.IndexDataCacheFile.save = save
    try:
        yield
    finally:
        caching.IndexDataCacheFile.save = original


class CompileClock:
    """What numba compiles in this process within `with clock:`: seconds by group (outermost compiles only: a
    kernel's callees are in its time), and how many kernels."""

    def __init__(self) -> None:
        self.kernels = 0
        self.seconds: dict[str, float] = {}
        self.count: dict[str, int] = {}
        self._depth = 0
        self._start = (0.0, "")

    def __enter__(self) -> CompileClock:
        from numba.core import event

        clock = self

        class Listener(event.Listener):
            def on_start(self, ev: event.Event) -> None:
                if clock._depth == 0:
                    clock._start = (time.perf_counter(), group(ev.data["dispatcher"].py_func.__module__))
                clock._depth += 1

            def on_end(self, ev: event.Event) -> None:
                clock._depth -= 1
                if clock._depth == 0:
                    t0, g = clock._start
                    clock.kernels += 1
                    clock.seconds[g] = clock.seconds.get(g, 0.0) + time.perf_counter() - t0
                    clock.count[g] = clock.count.get(g, 0) + 1

        self._listener = Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc: object) -> None:
        from numba.core import event

        event.unregister("numba:compile", self._listener)

    def report(self, more: bool) -> None:
        """A line per group, then the total (`more`: after the worker processes' kernels)."""
        for g, seconds in self.seconds.items():
            log.info("  %s: %d kernel%s, %.1f s", g, self.count[g], "s" if self.count[g] > 1 else "", seconds)
        log.info("compiled %d %skernel%s in %.1f s%s", self.kernels, "more " if more else "",
                 "s" if self.kernels > 1 else "", sum(self.seconds.values()), " in this process" if more else "")


# -- recording the list (a development tool) ----------------------------------------------------------------

RECORD = """
import json, sys, time
from numba.core import event, sigutils
from numba.core.dispatcher import Dispatcher
from seedmap.jit.precompile import signature_text
from seedmap.pipeline.run import variant_run
from seedmap.jit.quick_load import cached_kernels_load_quickly
from seedmap.jit.warmup import warmup_batch
from seedmap.spread import set_share

set_share(1)  # kernels called from this thread only: the depth count below is not per thread
depth, seen, compiled = [0], {}, []
compile_now = Dispatcher.compile

def compile_recorded(self, sig):
    top = depth[0] == 0
    depth[0] += 1
    t = time.process_time()  # CPU seconds: what a busy machine does not inflate
    try:
        return compile_now(self, sig)
    finally:
        depth[0] -= 1
        f = self.py_func
        if top and f.__module__.startswith("seedmap."):
            key = (f.__module__, f.__qualname__, signature_text(tuple(sigutils.normalize_signature(sig)[0])))
            seen[key] = max(seen.get(key, 0.0), time.process_time() - t)

class Compiled(event.Listener):
    def on_start(self, ev):
        compiled.append(1)

    def on_end(self, ev):
        pass

Dispatcher.compile = compile_recorded
event.register("numba:compile", Compiled())
fasta, index, kind, name = sys.argv[1:]
ref, paired, warm = variant_run(fasta, index if index != "-" else None, kind, name)
with cached_kernels_load_quickly():
    warm(warmup_batch(ref, paired))
print(json.dumps({"compiled": len(compiled), "kernels": [[*k, v] for k, v in seen.items()]}))
"""


def record_run(fasta: str, index: str | None, kind: str, name: str, env: dict[str, str],
               warm: bool = True) -> list[Task]:
    """The kernels a warm-up of this kind of run calls from Python, with the seconds each took: a fresh
    process runs it with numba's Dispatcher.compile watched. warm: from a warm cache, running it again
    if the first run compiled anything (a process that first compiles a kernel as another's callee does
    not ask for it again, while a run that loads the caller from the cache does)."""
    while True:
        out = subprocess.run([sys.executable, "-c", RECORD, fasta, index or "-", kind, name], capture_output=True,
                             text=True, env=env, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"recording {kind} {name} failed:\n{out.stderr}")
        result = json.loads(out.stdout.splitlines()[-1])
        if not warm or not result["compiled"]:
            return [tuple(t) for t in result["kernels"]]


def record(path: str, kinds: tuple[str, ...] = ("neighborhood", "kmer", "fm"),
           say: Callable[[str], None] = print) -> None:
    """Write kernel_list.py: for each kind of index and run, the kernels its warm-up calls, recorded in a fresh
    numba cache (so the seconds are compile times; a kernel's are the most any run took), with a stored index
    and with one built in memory."""
    import shutil
    import tempfile

    kernels: dict[tuple[str, str, str], float] = {}
    runs: dict[str, dict[str, list[tuple[str, str, str]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        fasta = write_genome(os.path.join(tmp, "ref.fa"))
        unindexed = os.path.join(tmp, "memory.fa")  # no index next to it: runs build one in memory
        shutil.copy(fasta, unindexed)
        for kind in kinds:
            env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(tmp, f"cache-{kind}")}
            index = build_in(env, fasta, kind)
            runs[kind] = {}
            names = [*VARIANTS, *(f"{v}-memory" for v in VARIANTS)]
            for warm in (False, True):  # from the empty cache, compile seconds; then each run's kernels
                for name in names:
                    t = time.perf_counter()
                    found = record_run(fasta if name in VARIANTS else unindexed,
                                       index if name in VARIANTS else None, kind, name, env, warm)
                    for module, fn, text, seconds in found:
                        key = (module, fn, text)
                        kernels[key] = max(kernels.get(key, 0.0), 0.0 if warm else seconds)
                    if warm:
                        runs[kind][name] = sorted(k[:3] for k in found)
                    say(f"{kind} {name}{' (warm)' if warm else ''}: {len(found)} kernels, "
                        f"{time.perf_counter() - t:.1f} s")
    _write(path, kernels, runs)


def write_genome(path: str) -> str:
    """The recording's reference: two random sequences (the kernels' argument types do not depend on it)."""
    import numpy as np

    rng = np.random.default_rng(7)
    with open(path, "w") as f:
        for k, n in enumerate((60_000, 20_000)):
            f.write(f">s{k}\n{''.join('ACGT'[c] for c in rng.integers(0, 4, n))}\n")
    return path


def build_in(env: dict[str, str], fasta: str, kind: str) -> str:
    """The index of `fasta` (default parameters), built in a process using `env`'s cache."""
    code = "import sys; from seedmap.kinds import build_index; print(build_index(sys.argv[1], None, sys.argv[2]))"
    out = subprocess.run([sys.executable, "-c", code, fasta, kind], capture_output=True, text=True, env=env,
                         check=True)
    return out.stdout.split()[-1]


def _write(path: str, kernels: dict[tuple[str, str, str], float], runs: dict) -> None:
    order = sorted(kernels)
    number = {k: i for i, k in enumerate(order)}
    lines = ["# ruff: noqa: E501",
             '"""The kernels each kind of run calls from Python, with their argument types: what precompile.py',
             "compiles in worker processes. Written by `python -m seedmap.jit.precompile --record`, do not edit.",
             '"""', "", "# (module, function, argument types, seconds it took to compile on the recording machine)",
             "KERNELS = ("]
    lines += [f"    ({m!r}, {f!r}, {s!r}, {kernels[(m, f, s)]:.2f})," for m, f, s in order]
    lines += [")", "", "# the KERNELS each kind of index and run calls", "RUNS = {"]
    for kind, names in runs.items():
        lines.append(f"    {kind!r}: {{")
        for name, keys in names.items():
            lines.append(f"        {name!r}: {tuple(number[k] for k in keys)!r},")
        lines.append("    },")
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2])
    elif sys.argv[1:] == ["--record"]:
        record(os.path.join(os.path.dirname(__file__), "kernel_list.py"))
    else:
        sys.exit("usage: python -m seedmap.jit.precompile --record  (writes kernel_list.py)")
