"""What a map run checks before it loads the index or writes a byte: the reference opens as FASTA, and the reads
open and their first batch parses. A run that fails here leaves no output (not even a SAM header on stdout) and no
misleading log line."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from seedmap.io.chunks import RawBatch, raw_batches, raw_pair_batches
from seedmap.io.reads import ReadBatch
from seedmap.io.reference import check_fasta
from seedmap.pipeline.options import RunOptions
from seedmap.pipeline.warmup import cached_kernels_load_quickly

ESTIMATE_PAIRS = 10_000  # a paired run's insert size comes from its first pairs, whatever the batch size


@dataclass
class Head:
    """The reads, opened: the first batches read (raw) and parsed, and the iterator of the rest (raw)."""

    raw: list[RawBatch]
    parsed: list[ReadBatch]
    rest: Iterator[RawBatch]

    def lengths(self) -> np.ndarray:
        return np.concatenate([b.lengths for b in self.parsed]) if self.parsed else np.zeros(0, np.int64)

    def parsed_then_rest(self) -> Iterator[ReadBatch | RawBatch]:
        """Every batch once: the parsed head, then the raw rest (the head is let go as it is taken)."""
        parsed, self.raw, self.parsed = self.parsed, [], []
        yield from parsed
        yield from self.rest

    def raw_then_rest(self) -> Iterator[RawBatch]:
        """Every batch once, all raw (for workers elsewhere, which parse them)."""
        raw, self.raw, self.parsed = self.raw, [], []
        yield from raw
        yield from self.rest


def check_reference(opts: RunOptions) -> None:
    """The reference: before anything is loaded, logged or written."""
    check_fasta(opts.reference)


def open_reads(opts: RunOptions, workers: int = 0) -> Head:
    """The first batch of reads (a paired run: its first ESTIMATE_PAIRS pairs, for the insert size), read and
    parsed here: a missing, unreadable or broken input fails now.
    `workers`: the threads that will take single-end batches (they taper near the end of a plain FASTQ)."""
    if opts.paired:
        batches = raw_pair_batches(opts.reads, opts.reads2, opts.batch_size)
        reads = 2 * ESTIMATE_PAIRS
    else:
        batches = raw_batches(opts.reads, opts.batch_size, workers)
        reads = 1  # the first batch
    raw: list[RawBatch] = []
    parsed: list[ReadBatch] = []
    n = 0
    with cached_kernels_load_quickly():  # the reader's and parser's kernels, loaded as the warm-up loads its own
        for item in batches:
            raw.append(item)
            parsed.append(item.parse())
            n += parsed[-1].size
            if n >= reads:
                break
    return Head(raw, parsed, batches)

