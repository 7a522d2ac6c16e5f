"""Long positional signatures (benchmarks/long_signatures.py): a function that would need more than 12 positional
parameters takes named structures (NamedTuples of arrays) instead."""

from __future__ import annotations

import importlib.util
from pathlib import Path

# Loaded from its file: benchmarks/ on sys.path would shadow packages (benchmarks/dask.py) in every process the
# tests start after this one.
_spec = importlib.util.spec_from_file_location(
    "long_signatures", Path(__file__).resolve().parent.parent / "benchmarks" / "long_signatures.py")
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
long_signatures = _module.long_signatures

# The CUDA launch functions (backends/cuda/*_kernels.py) keep flat arguments, the array and scalar types their
# SIGNATURES declare and tests/test_cuda_compile.py compiles for real GPUs; they build the CPU kernels'
# NamedTuples on the device.
LAUNCHES = 6


def test_long_signatures_are_only_cuda_launches():
    found = long_signatures(12)
    assert all(p.startswith("seedmap/backends/cuda/") for _, p, _, _ in found), found
    assert len(found) <= LAUNCHES, "\n".join(f"{p}:{line} {name} ({n})" for n, p, line, name in found)


def test_the_count_sees_a_long_signature(tmp_path):
    (tmp_path / "m.py").write_text("def f(a, b, c, d, e, f, g, h, i, j, k, l, m):\n    pass\n"
                                   "class C:\n    def g(self, a, b, c, d, e, f, g, h, i, j, k, l):\n        pass\n")
    assert [(n, name) for n, _, _, name in long_signatures(12, tmp_path)] == [(13, "f")]
