"""The CUDA backend: device selection, the multi-GPU work queue, and (in a subprocess with
NUMBA_ENABLE_CUDASIM=1, see tests/cuda_sim_cases.py) every CUDA kernel against its CPU twin."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from seedmap.backends import select
from seedmap.backends.cuda import device
from seedmap.backends.cuda.backend import CudaBackend
from seedmap.backends.opencl import device as opencl_device
from seedmap.cli import main
from seedmap.errors import SeedmapError
from seedmap.pipeline import EngineOptions

HERE = Path(__file__).parent


@pytest.mark.cudasim
@pytest.mark.slow
def test_kernels_under_cuda_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent / "src"), str(HERE), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-o", "addopts=",
                        str(HERE / "cuda_sim_cases.py")], capture_output=True, text=True, env=env, cwd=HERE.parent)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and "skipped" not in r.stdout


@pytest.mark.parametrize("text,want", [("cpu", ("cpu", None)), ("auto", ("auto", None)), ("CUDA", ("cuda", None)),
                                       ("cuda:1", ("cuda", (1,))), ("cuda:0,1", ("cuda", (0, 1)))])
def test_parse_device(text, want):
    assert select.parse_device(text) == want


@pytest.mark.parametrize("text", ["gpu", "cuda:", "cuda:a", "cuda:-1", ""])
def test_parse_device_rejects(text):
    with pytest.raises(SeedmapError):
        select.parse_device(text)


def test_resolve_without_gpu(monkeypatch, caplog):
    monkeypatch.setattr(device, "gpu_count", lambda: 0)
    monkeypatch.setattr(opencl_device, "first_gpu", lambda: None)  # auto's second choice: none here
    assert select.resolve("cpu") is None  # the CPU
    with caplog.at_level("INFO", logger="seedmap"):
        assert select.resolve("auto") is None
    assert "no CUDA GPU found, no OpenCL GPU found, mapping on the CPU" in caplog.text
    with pytest.raises(SeedmapError, match="no CUDA GPU"):
        select.resolve("cuda")


def test_resolve_with_gpus(monkeypatch, caplog):
    monkeypatch.setattr(device, "gpu_count", lambda: 2)
    with caplog.at_level("INFO", logger="seedmap"):
        auto = select.resolve("auto")
    assert isinstance(auto, CudaBackend) and auto.ids == (0, 1) and auto.describe() == "cuda:0,1"
    assert "2 CUDA GPU(s), mapping on cuda:0,1" in caplog.text
    assert select.resolve("cuda:1").ids == (1,)
    with pytest.raises(SeedmapError, match="only 2"):
        select.resolve("cuda:0,2")


def small_inputs(tmp_path) -> list[str]:
    """A reference and reads that pass the input checks (which come before the device's)."""
    seq = "ACGTTGCATGCAAGTCCGATGACTGATCGATGCTAGCTAGGCTAGCATCGACTAGCTACGAT" * 3
    (tmp_path / "ref.fa").write_text(f">r\n{seq}\n")
    (tmp_path / "reads.fq").write_text(f"@a\n{seq[10:60]}\n+\n{'I' * 50}\n")
    return [str(tmp_path / "ref.fa"), str(tmp_path / "reads.fq")]


def test_cli_device_cuda_without_gpu_is_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(device, "gpu_count", lambda: 0)
    out = tmp_path / "out.sam"
    assert main(["map", "--device", "cuda", "-o", str(out), *small_inputs(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["seedmap: error: --device cuda: no CUDA GPU found (numba-cuda sees none; use --device cpu or auto)"]
    assert not out.exists()


def broken_numba_cuda(monkeypatch):
    """`from numba import cuda` fails as numba-cuda 0.30.4 does with numpy 2.5."""
    import builtins

    real = builtins.__import__

    def fake(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "numba.cuda" or (name == "numba" and fromlist and "cuda" in fromlist):
            raise AttributeError("`np.row_stack` was removed in the NumPy 2.0 release. Use `np.vstack` instead.")
        return real(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", fake)


def test_broken_numba_cuda_is_one_line(monkeypatch, capsys, caplog, tmp_path):
    monkeypatch.setattr(opencl_device, "first_gpu", lambda: None)
    broken_numba_cuda(monkeypatch)
    with pytest.raises(SeedmapError) as err:
        device.cuda_module()
    text = str(err.value)
    assert "\n" not in text and "AttributeError" in text and "row_stack" in text
    assert "numba-cuda " in text and "numpy " in text and "seedmap[cuda]" in text
    with caplog.at_level("INFO", logger="seedmap"):  # auto: the CPU, saying why
        assert select.resolve("auto") is None
    assert "numba.cuda cannot be imported" in caplog.text
    out = tmp_path / "out.sam"
    assert main(["map", "--device", "cuda", "-o", str(out), *small_inputs(tmp_path)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("seedmap: error: numba.cuda cannot be imported (AttributeError")


def test_cli_logs_on_the_seedmap_logger_only(capsys):
    """numba-cuda's loggers (e.g. one INFO line per deallocation) do not reach stderr; seedmap's do."""
    import logging

    from seedmap.cli import _setup_logging

    _setup_logging(quiet=False)
    _setup_logging(quiet=False)  # idempotent: main() called again
    logging.getLogger("numba.cuda.cudadrv.driver").info("add pending dealloc: cuMemFree 800000 bytes")
    logging.getLogger("seedmap").info("mapped 3 reads")
    assert capsys.readouterr().err == "[seedmap] mapped 3 reads\n"


def test_numba_performance_warnings_silenced():
    import warnings

    from numba.core.errors import NumbaPerformanceWarning

    from seedmap.backends.cuda.backend import quiet_performance_warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        quiet_performance_warnings()
        warnings.warn(NumbaPerformanceWarning("Grid size 16 will likely result in GPU under-utilization"),
                      stacklevel=1)
    assert seen == []


def test_warm_up_loads_every_kernel_on_every_device_once(monkeypatch):
    """warm_up (called by CudaBackend.prepare before the workers start) compiles and loads each (kernel,
    signature) of the run on each device, one device after the other, in the calling thread."""
    from seedmap.backends.cuda import backend

    loaded = []
    current = [None]

    class Gpu:
        def __init__(self, i):
            self.i = i

        def __enter__(self):
            current[0] = self.i

        def __exit__(self, *exc):
            current[0] = None

    class Kernel:
        def __init__(self, name):
            self.name = name

        def compile(self, sig):
            kernel = self

            class Compiled:
                def bind(self):
                    loaded.append((current[0], kernel.name, sig, threading.current_thread().name))

            return Compiled()

    a, b = Kernel("a"), Kernel("b")
    monkeypatch.setattr(backend, "launched_kernels", lambda kind, ix, options: [(a, (1,)), (b, (2,)), (b, (3,))])
    monkeypatch.setattr(backend.config, "ENABLE_CUDASIM", False)
    monkeypatch.setattr(backend.cuda, "gpus", {0: Gpu(0), 1: Gpu(1)}, raising=False)
    backend.warm_up((1, 0, 1), "kmer", None, EngineOptions())
    me = threading.current_thread().name
    assert loaded == [(1, "a", (1,), me), (1, "b", (2,), me), (1, "b", (3,), me),
                      (0, "a", (1,), me), (0, "b", (2,), me), (0, "b", (3,), me)]


@pytest.mark.parametrize(("kind", "options", "want"), [
    ("fm", EngineOptions(kind="fm"), []),  # the search scheme runs on the GPU
    ("kmer", EngineOptions(kind="kmer"), []),
    ("neighborhood", EngineOptions(), []),
    ("neighborhood", EngineOptions(filter="ph"), []),  # the perfect hashes are looked up on the GPU
    ("neighborhood", EngineOptions(filter="bpr"), [("WARNING", "contiguous seeds: --filter bpr filters on the CPU")]),
    ("neighborhood", EngineOptions(fe=9), [("WARNING", "--fe 9: more substitutions than the GPU filter")]),
])
def test_what_stays_on_the_cpu_is_logged_once(monkeypatch, caplog, kind, options, want):
    """CudaBackend.prepare (once per run, before the workers) logs what of the search runs on the CPU, and
    why; the engines of the workers (two per GPU) log nothing more."""
    from seedmap.backends import base
    from seedmap.backends.cuda import backend
    from seedmap.index import neighborhood
    from seedmap.io.reference import Reference

    monkeypatch.setattr(backend, "warm_up", lambda *args: None)
    rng = np.random.default_rng(0)
    ref = Reference.from_codes(["a"], [rng.integers(0, 4, 500).astype(np.uint8)])
    ix = neighborhood.build(ref, 5, 10) if kind == "neighborhood" else None
    with caplog.at_level("INFO", logger="seedmap"):
        backend.CudaBackend((0, 0)).prepare(base.EngineInputs(kind, ix, ref, options, cpu=None))
    got = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert len(got) == len(want)
    assert all(level == lv and text in msg for (level, text), (lv, msg) in zip(want, got, strict=True))


def test_batch_size_defaults_by_device():
    """--batch-size unset: 10,000 reads on the CPU; on a GPU, 200,000 reads in flight per device shared by
    its workers (100,000 each for the fewest, two), never less than the CPU's batch; a size given is kept."""
    from dataclasses import replace

    from seedmap.options import CPU_BATCH, GPU_BATCH
    from seedmap.pipeline.run_options import RunOptions

    opts = RunOptions("ref.fa", "reads.fq")
    assert opts.batch_size is None
    assert opts.with_batch_size().batch_size == CPU_BATCH == 10_000
    assert opts.with_batch_size(2).batch_size == GPU_BATCH == 100_000
    assert opts.with_batch_size(16).batch_size == 12_500
    assert opts.with_batch_size(64).batch_size == CPU_BATCH
    assert replace(opts, batch_size=7).with_batch_size(2).batch_size == 7


@pytest.mark.parametrize(("threads", "devices", "per_device"), [(1, 1, 2), (2, 1, 2), (3, 1, 3), (16, 1, 16),
                                                                 (16, 2, 8), (5, 2, 3), (1, 4, 2)])
def test_gpu_workers_spread_the_threads_over_the_devices(threads, devices, per_device):
    """-t host threads for a GPU run: one worker per thread, spread over the devices, at least two each (one
    batch's transfers and host stages overlap another's kernels)."""
    from seedmap.options import gpu_workers

    assert gpu_workers(threads, devices) == per_device


def test_the_cuda_backend_knows_every_index_kind():
    """backends/cuda/kinds.py keys its table by the names of seedmap.kinds.KINDS: a kind added there and not
    here would fail at its first --device cuda run."""
    from seedmap.backends.cuda.kinds import CUDA_KINDS
    from seedmap.kinds import KINDS

    assert set(CUDA_KINDS) == set(KINDS)
