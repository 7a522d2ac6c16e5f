"""The options of a map run, typed, from the command line down to the engines."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CPU_BATCH = 10_000  # reads per batch on the CPU: a worker thread's share, small enough to keep all busy
# Pairs per batch on the CPU: an all-mapping batch of pairs holds every location of both mates, their alignments and
# records, a few batches of them in flight (250 Mbp human-like genome, 2x150 bp, e = 4, -t 2: peak RSS 1.17 GB with
# 10,000 pairs a batch, 0.94 GB with 2,500, the same speed).
CPU_PAIRS = 2_500
GPU_READS = 200_000  # reads per device in its workers' batches: a million windows, enough threads to fill a GPU
MIN_GPU_WORKERS = 2  # per device: one batch's transfers and host stages overlap another's kernels
GPU_BATCH = GPU_READS // MIN_GPU_WORKERS  # per GPU worker, with the fewest workers
DEFAULT_MIN_LENGTH = 20  # shorter reads are reported unmapped (bwa mem's smallest seed is 19 bases)
MAX_ERROR_RATE = 0.25  # -e above this share of a read's length is refused (pipeline/inputs.py says why)
# --best / -n by default search the next stratum beyond a read's stop stratum when its best location is
# unique, none after a tie (MAPQ 0 whatever lies beyond): MAPQ counts the best stratum and the next one
# (mapq.MAPQ_STRATA), so a read gets the MAPQ all-mapping gives it (60 for a unique read, 30 or less with a
# location one edit behind); one round more for those reads, not two. Paired --best searches each mate to its
# best stratum and counts the pairs within one edit of the best pair (pipeline/pair_strata.py).
AUTO_STRATA = 1


@dataclass(frozen=True)
class MapOptions:
    """What is reported per read."""

    errors: float = 0.05  # edits if >= 1 (an integer), else a rate of the read length
    best_only: bool = False
    max_hits: int = 0  # 0 = all locations
    strata: int = -1  # --best / -n: strata searched beyond the stop stratum (they set MAPQ); -1: AUTO_STRATA
    early_stop: bool = True  # --best / -n stop at their strata (False: search everything, then filter)
    min_length: int = DEFAULT_MIN_LENGTH  # shorter reads are not searched: reported unmapped

    @property
    def extra_strata(self) -> tuple[int, int]:
        """Strata --best / -n search beyond a read's stop stratum: (after a unique best, after a tie)."""
        return (AUTO_STRATA, 0) if self.strata < 0 else (self.strata, self.strata)

    @property
    def stratified(self) -> bool:
        """--best and -n stop early: each read is searched only up to the strata they report."""
        return (self.best_only or self.max_hits > 0) and self.early_stop

    def read_errors(self, lengths: np.ndarray) -> np.ndarray:
        """Edits searched per read in a map run: -e, at most a quarter of the read's length (a count that the
        run accepted for its typical read may exceed that for a shorter one); none for reads under min_length."""
        return errors_per_read(lengths, self.errors, self.min_length, MAX_ERROR_RATE)


@dataclass(frozen=True)
class EngineOptions:
    """How candidates are found: the index kind and its engine's settings."""

    kind: str = "neighborhood"
    windows: int = 0  # neighborhood: disjoint windows per read (0 = e + 1)
    step: int = 0  # neighborhood: sliding windows with this step (0 = disjoint)
    fe: int = 0  # neighborhood: errors inside one lookup
    filter: str = "bs"  # neighborhood: bs, ph or bpr
    adjacency: int = 1  # kmer: agreeing seeds a candidate needs
    gpu_verify: str = "bitvector"  # kmer/fm on a GPU: bitvector or banded


@dataclass(frozen=True)
class PairOptions:
    orientation: str = "fr"
    rescue_edits: float = 0.1  # edits (>= 1) or a rate of the read length; 0 = no rescue
    unpaired_penalty: int = 3  # edits an improper pair pays against a proper one (bwa: 17 score ~ 3 edits)


def gpu_workers(threads: int, devices: int) -> int:
    """Worker threads per GPU: the -t threads spread over the devices (each worker runs its batches' host
    stages on one thread while its device stages run on the GPU), at least MIN_GPU_WORKERS."""
    return max(MIN_GPU_WORKERS, -(-threads // max(devices, 1)))


def errors_per_read(lengths: np.ndarray, errors: float, min_length: int = 0, max_rate: float = 0.0) -> np.ndarray:
    """Edits searched per read, at most max_rate of its length when given. A read shorter than min_length gets
    its own length: a read not longer than its edits e would match everywhere, so it is never searched and
    is reported unmapped."""
    if errors >= 1 or errors == 0:
        e = np.full(lengths.size, int(errors), dtype=np.int64)
    else:
        e = np.floor(lengths * errors + 1e-9).astype(np.int64)
    if max_rate > 0:
        np.minimum(e, np.floor(lengths * max_rate + 1e-9).astype(np.int64), out=e)
    if min_length > 0:
        short = lengths < min_length
        e[short] = np.maximum(e[short], lengths[short])
    return e
