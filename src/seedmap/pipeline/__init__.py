"""The mapping pipeline (its options: seedmap.options): the stages of one batch (stages.py; paired batches in
seedmap.paired.mapping), several batches in flight (scheduler.py, threads.py), a run's set-up and its
batches (single.py, pairs.py), a whole run (run.py), a run on a Dask cluster (dask_run.py, the client;
dask_worker.py, the workers), and what it reports (timings.py, guarantee.py)."""

from seedmap.options import EngineOptions, MapOptions, PairOptions, RunOptions, errors_per_read
from seedmap.pipeline.stages import BatchStats, Locations, SamFormatter, locate, map_batch

__all__ = ["BatchStats", "EngineOptions", "Locations", "MapOptions", "PairOptions", "RunOptions", "SamFormatter",
           "errors_per_read", "locate", "map_batch"]
