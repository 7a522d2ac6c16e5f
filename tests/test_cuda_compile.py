"""Every CUDA kernel compiles for real GPUs (Ampere cc 8.0, Hopper cc 9.0) with the signatures the code
launches it with, on a machine without a GPU: NVVM comes with numba-cuda[cu12] (the `test` extra).

The simulator accepts code NVVM rejects (e.g. a shared array shaped by an expression, which only a real
GPU refused), so this is the check that the kernels build for hardware. It runs in subprocesses with the
simulator off (see tests/cuda_compile_check.py) and skips, saying why, when NVVM is unavailable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ARCHITECTURES = ("8.0", "9.0")


@pytest.mark.slow
def test_kernels_compile_for_real_gpus():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent / "src"), env.get("PYTHONPATH", "")])
    procs = {cc: subprocess.Popen([sys.executable, str(HERE / "cuda_compile_check.py"), cc], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for cc in ARCHITECTURES}
    results = {}
    for cc, p in procs.items():  # both architectures compile at once
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"cc {cc}: {err[-3000:]}"
        results[cc] = json.loads(out.strip().splitlines()[-1])
    skips = [r["skip"] for r in results.values() if "skip" in r]
    if skips:
        pytest.skip(f"cannot compile CUDA kernels here: {skips[0]}")
    errors = [e for r in results.values() for e in r["errors"]]
    assert not errors, "\n\n".join(errors)
    for cc, r in results.items():
        names = {c.split("(")[0] for c in r["compiled"]}
        assert {"verify_kernels.bitvector_kernel", "verify_kernels.banded_kernel", "seed_filter_kernels.count_kernel",
                "seed_filter_kernels.fill_kernel", "seed_filter_kernels.sort_kernel",
                "seed_filter_kernels.merge_kernel", "locate_kernels.window_locations_kernel",
                "fm_kernels.search_kernel", "fm_kernels.fill_kernel", "align_kernels.align_kernel"} <= names, cc
