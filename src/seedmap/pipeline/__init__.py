"""The mapping pipeline (its options: seedmap.options): the stages of one batch (stages.py, strata.py; pairs:
pair_stages.py), several batches in flight (scheduler.py, threads.py; on GPUs: devices.py), a run's set-up and
its batches (single.py, pairs.py), a whole run (run.py), a run on a Dask cluster (dask_run.py, the client;
dask_worker.py, the workers), and what it reports (timings.py, guarantee.py). What compiles ahead of a run (the warm-up,
the compiling workers, the kernel list) is seedmap.jit's.

Importing this package sets numba up for seedmap's kernels (`seedmap.jit.activate`) before its modules import
theirs: the run's entry points (the command line, `seedmap.Index`) do so first anyway, but a Dask worker's
first task, unpickled, enters here (a compiling worker, `python -m seedmap.jit.precompile`, activates its
caller's cache itself)."""

from seedmap import jit

jit.activate()

from seedmap.options import EngineOptions, MapOptions, PairOptions, errors_per_read  # noqa: E402
from seedmap.pipeline.run_options import RunOptions  # noqa: E402
from seedmap.pipeline.stages import BatchStats, Locations, SamFormatter, locate, map_batch  # noqa: E402

__all__ = ["BatchStats", "EngineOptions", "Locations", "MapOptions", "PairOptions", "RunOptions", "SamFormatter",
           "errors_per_read", "locate", "map_batch"]
