"""Paired-end runs: batches of pairs, the insert size fixed from the first pairs, each batch through
map_pair_batch."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np

from seedmap.engines.base import Engine
from seedmap.io.chunks import RawBatch
from seedmap.io.reads import ReadBatch
from seedmap.paired.insert_size import FALLBACK, InsertModel
from seedmap.pipeline.inputs import ESTIMATE_PAIRS, Head
from seedmap.pipeline.pair_stages import estimate_insert, map_pair_batch
from seedmap.pipeline.run_options import RunOptions
from seedmap.pipeline.single import Setup, SingleRun, short_note, unplaced_note
from seedmap.pipeline.timings import StageClock

log = logging.getLogger("seedmap")


class PairRun(SingleRun):
    def __init__(self, opts: RunOptions, s: Setup) -> None:
        super().__init__(opts, s)
        self.insert: InsertModel = opts.insert or InsertModel(*FALLBACK)  # the warm-up's, until estimated

    def batches(self, head: Head) -> Iterator[ReadBatch | RawBatch]:
        """The opened pairs: the first ones (parsed, for the insert size estimate), then raw batches of pairs."""
        o = self.opts
        if o.insert is not None:
            log.info("insert size (given): %s", o.insert.describe())
        else:
            self.insert = chosen_insert(o, *self.estimate(sample(head.parsed, ESTIMATE_PAIRS)))
        return head.parsed_then_rest()

    def estimate(self, first_pairs: ReadBatch) -> tuple[InsertModel | None, int]:
        """The insert size from the first pairs (None when too few map uniquely), and the pairs it used."""
        o = self.opts
        return estimate_insert(first_pairs, self.s.engine, self.s.fmt, o.map, o.pairs.orientation)

    def warm(self, batch: ReadBatch) -> None:
        super().warm(batch)
        self.estimate(batch)  # its own kernels (the run estimates before its workers start)

    def map(self, batch: ReadBatch, clock: StageClock | None = None, engine: Engine | None = None) -> tuple:
        engine = self.s.engine if engine is None else engine
        return map_pair_batch(batch, engine, self.s.fmt, self.opts.map, self.opts.pairs, self.insert, clock)

    def summary(self, n: dict, elapsed: float, total: float) -> None:
        pair_summary(self.opts, n, elapsed, total)


def pair_summary(opts: RunOptions, n: dict, elapsed: float, total: float) -> None:
    """A paired run's summary from its totals `n` (a Dask client has the options, not the run's set-up)."""
    reads, pairs = n.get("reads", 0), n.get("pairs", 0)
    log.info("mapped %d pairs (%d reads): %d (%.2f%%) reads with a location, %d (%.2f%%) pairs properly paired, "
             "%d mates rescued, %d records%s; %.0f reads/s (%.1f s mapping, %.1f s total)", pairs, reads,
             n.get("mapped", 0), 100.0 * n.get("mapped", 0) / max(reads, 1), n.get("proper", 0),
             100.0 * n.get("proper", 0) / max(pairs, 1), n.get("rescued", 0), n.get("records", 0),
             short_note(n.get("short", 0), opts.map.min_length), reads / max(elapsed, 1e-9), elapsed, total)
    unplaced_note(reads - n.get("mapped", 0) - n.get("short", 0), reads, opts.map.errors)


def chosen_insert(opts: RunOptions, insert: InsertModel | None, used: int) -> InsertModel:
    """The estimate, or the fallback when there was none, logged."""
    if insert is None:
        insert = InsertModel(*FALLBACK)
        log.warning("only %d uniquely mapped %s pairs: insert size not estimated, using %s (give -I MEAN,SD)",
                    used, opts.pairs.orientation, insert.describe())
    else:
        log.info("insert size from %d unique %s pairs: %s", used, opts.pairs.orientation, insert.describe())
    return insert


def sample(head: list[ReadBatch], pairs: int) -> ReadBatch:
    """The first `pairs` pairs of the head batches as one batch (sequences only: what the estimate needs)."""
    n = min(2 * pairs, sum(b.size for b in head))
    lengths = np.concatenate([b.lengths for b in head])[:n]
    name_lengths = np.concatenate([np.diff(b.name_offsets) for b in head])[:n]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    name_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(name_lengths, out=name_offsets[1:])
    codes = np.concatenate([b.codes for b in head])[:offsets[-1]]
    names = np.concatenate([b.names for b in head])[:name_offsets[-1]]
    return ReadBatch(0, names, name_offsets, codes, offsets, np.zeros(0, dtype=np.uint8), False)
