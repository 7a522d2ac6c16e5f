"""Runs the paired pipeline over two read files (or one interleaved file).

The insert size model is fixed before any pair is written: given (-I), or estimated from the first
ESTIMATE_PAIRS pairs whatever the batch size, so the output does not depend on batching or threads.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import numba
import numpy as np

from seedmap.insert_size import FALLBACK, InsertModel
from seedmap.io.output import open_sink
from seedmap.io.pairs import read_pair_batches
from seedmap.io.reads import ReadBatch
from seedmap.io.sam import header
from seedmap.paired import PairOptions, estimate_insert, map_pair_batch
from seedmap.pipeline import MapOptions
from seedmap.runner import _progress, prefetch, prepare

log = logging.getLogger("seedmap")

ESTIMATE_PAIRS = 10_000


def _head_and_rest(batches: Iterator[ReadBatch], pairs: int) -> tuple[list[ReadBatch], Iterator[ReadBatch]]:
    """The first batches holding at least `pairs` pairs (or all), and the iterator of the rest."""
    head: list[ReadBatch] = []
    n = 0
    for batch in batches:
        head.append(batch)
        n += batch.size // 2
        if n >= pairs:
            break
    return head, batches


def _sample(head: list[ReadBatch], pairs: int) -> ReadBatch:
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


def run_map_pairs(fasta: str, reads1: str, reads2: str | None, out: str | None, opts: MapOptions,
                  popts: PairOptions, insert: InsertModel | None, *, index_path: str | None, engine_options: dict,
                  batch_pairs: int, command_line: str, progress: bool, kind: str = "neighborhood",
                  read_group: object = None) -> None:
    t0 = time.perf_counter()
    ref, _, engine, fmt, warn = prepare(fasta, index_path, kind, engine_options, opts)
    batches = prefetch(read_pair_batches(reads1, reads2, batch_pairs))
    head, rest = _head_and_rest(batches, ESTIMATE_PAIRS)
    if insert is None:
        insert, used = estimate_insert(_sample(head, ESTIMATE_PAIRS), engine, fmt, opts, popts.orientation)
        if insert is None:
            insert = InsertModel(*FALLBACK)
            log.warning("only %d uniquely mapped %s pairs: insert size not estimated, using %s (give -I MEAN,SD)",
                        used, popts.orientation, insert.describe())
        else:
            log.info("insert size from %d unique %s pairs: %s", used, popts.orientation, insert.describe())
    else:
        log.info("insert size (given): %s", insert.describe())
    n = dict.fromkeys(("reads", "mapped", "records", "pairs", "proper", "rescued"), 0)
    t_map = time.perf_counter()
    with open_sink(out, read_group, numba.get_num_threads()) as sink, _progress(progress, reads1) as advance:
        sink.header(header(ref, command_line))
        for batch in _chain(head, rest):
            warn.check(batch.lengths)
            text, stats = map_pair_batch(batch, engine, fmt, opts, popts, insert)
            sink.records(text)
            for key in n:
                n[key] += getattr(stats, key)
            advance(stats.reads)
    elapsed = time.perf_counter() - t_map
    log.info("mapped %d pairs (%d reads): %d (%.2f%%) reads with a location, %d (%.2f%%) pairs properly paired, "
             "%d mates rescued, %d records; %.0f reads/s (%.1f s mapping, %.1f s total)", n["pairs"], n["reads"],
             n["mapped"], 100.0 * n["mapped"] / max(n["reads"], 1), n["proper"],
             100.0 * n["proper"] / max(n["pairs"], 1), n["rescued"], n["records"], n["reads"] / max(elapsed, 1e-9),
             elapsed, time.perf_counter() - t0)


def _chain(head: list[ReadBatch], rest: Iterator[ReadBatch]) -> Iterator[ReadBatch]:
    yield from head
    yield from rest
