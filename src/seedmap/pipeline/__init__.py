"""The mapping pipeline (its options: seedmap.options): the stages of one batch (stages.py, strata.py; pairs:
pair_stages.py), several batches in flight (scheduler.py, threads.py; on GPUs: devices.py), a run's set-up and
its batches (single.py, pairs.py), a whole run (run.py), a run on a Dask cluster (dask_run.py, the client;
dask_worker.py, the workers), what it reports (timings.py, guarantee.py), and the kernels it compiles ahead
(warmup.py, precompile.py, kernel_list.py)."""

from seedmap.options import EngineOptions, MapOptions, PairOptions, RunOptions, errors_per_read
from seedmap.pipeline.stages import BatchStats, Locations, SamFormatter, locate, map_batch

__all__ = ["BatchStats", "EngineOptions", "Locations", "MapOptions", "PairOptions", "RunOptions", "SamFormatter",
           "errors_per_read", "locate", "map_batch"]
