"""Start-up: numba's registries load without importing scipy.linalg, and nothing is left blocked; `seedmap index`
compiles what every kind of map run needs."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
import numpy as np
from numba import njit
from seedmap.pipeline.warmup import load_numba_registries

load_numba_registries()
assert "scipy.linalg" not in sys.modules, "scipy.linalg was imported"

@njit
def total(a):
    return a.sum()

assert total(np.arange(5)) == 10  # kernels compile after the registries were loaded that way
try:
    import scipy.linalg  # a later import is not blocked (when SciPy is installed)
except ImportError as exc:
    assert "scipy" in str(exc) and "None in sys.modules" not in str(exc), exc
print("ok")
"""


def test_registries_load_without_scipy_linalg():
    # A fresh interpreter: this test process may have loaded numba's registries already.
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_index_compiles_every_kind_of_run_it_announces(tmp_path, monkeypatch, caplog):
    """`seedmap index` warms up single-end, --best/-n and paired runs, each writing SAM and BAM, so no later
    map run compiles unannounced: the markers it leaves are the ones each kind of map run looks for, and a
    BAM run after it announces no compilation."""
    import numpy as np

    from seedmap.index.kinds import build_index
    from seedmap.pipeline import warmup
    from seedmap.pipeline.options import MapOptions, RunOptions
    from seedmap.pipeline.run import run_map

    real = warmup._marker
    monkeypatch.setattr(warmup, "_marker", lambda *key: tmp_path / "cache" / real(*key).name)
    (tmp_path / "cache").mkdir()
    rng = np.random.default_rng(3)
    genome = "".join("ACGT"[c] for c in rng.integers(0, 4, 3000))
    (tmp_path / "ref.fa").write_text(f">a\n{genome}\n")
    (tmp_path / "reads.fa").write_text(f">r0\n{genome[100:200]}\n")
    index = build_index(str(tmp_path / "ref.fa"), None, "neighborhood", {"u": 10, "l": 16})
    warmup.compile_for_index(str(tmp_path / "ref.fa"), str(index), "neighborhood")
    names = {p.name for p in (tmp_path / "cache").iterdir()}
    assert names == {f"seedmap-compiled-neighborhood{pe}{best}{bam}" for pe, best in (("", ""), ("", "-best"),
                                                                                    ("-pe", ""))
                     for bam in ("", "-bam")}
    for output, best in (("out.bam", False), ("out.sam", True), ("out.bam", True)):
        with caplog.at_level("INFO", logger="seedmap"):
            run_map(RunOptions(reference=str(tmp_path / "ref.fa"), reads=str(tmp_path / "reads.fa"),
                               output=str(tmp_path / output), map=MapOptions(best_only=best)))
        assert "mapped 1 reads" in caplog.text and "compiling" not in caplog.text
        caplog.clear()
    (tmp_path / "cache" / "seedmap-compiled-neighborhood-bam").unlink()
    with caplog.at_level("INFO", logger="seedmap"):
        run_map(RunOptions(reference=str(tmp_path / "ref.fa"), reads=str(tmp_path / "reads.fa"),
                           output=str(tmp_path / "out.bam")))
    assert "compiling the neighborhood mapping kernels with BAM output" in caplog.text
