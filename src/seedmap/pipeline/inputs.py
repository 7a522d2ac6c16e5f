"""What a map run checks before it loads the index or writes a byte: the reference opens as FASTA, the reads
open and their first batch parses, and -e is a meaningful number of edits for them. A run that fails here leaves no
output (not even a SAM header on stdout) and no misleading log line."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from seedmap.errors import SeedmapError
from seedmap.io.chunks import RawBatch, raw_batches, raw_pair_batches
from seedmap.io.output import is_cram
from seedmap.io.reads import ReadBatch
from seedmap.io.reference import check_fasta
from seedmap.jit.quick_load import cached_kernels_load_quickly
from seedmap.options import MAX_ERROR_RATE, MapOptions
from seedmap.pipeline.run_options import RunOptions

log = logging.getLogger("seedmap")

# A paired run's insert size comes from its first pairs, whatever the batch size: a few hundred unique pairs fix the
# mean and sd to a few percent, and the estimate's search (pair_stages.estimate_insert) costs a few percent of a run.
ESTIMATE_PAIRS = 2_000
# Random pigeonhole-piece hits per read above which a run is called very slow: each is verified (about
# 0.6 us on one core), so past this a read costs milliseconds instead of microseconds.
SLOW_CANDIDATES = 10_000
# Random 100 bp reads align within 36-39 edits somewhere in a random genome of 30 Mbp-300 kbp (about 33
# extrapolated to 3 Gbp): a quarter of the length keeps every location found well clear of such noise.
WHY = ("random reads align within about a third of their length somewhere in a genome, and the search would align "
       "every read nearly everywhere")


@dataclass
class Head:
    """The reads, opened: the first batches read (raw) and parsed, and the iterator of the rest (raw)."""

    raw: list[RawBatch]
    parsed: list[ReadBatch]
    rest: Iterator[RawBatch]

    def empty(self) -> bool:
        """The input holds no reads (the first batch is all of it)."""
        return not any(b.size for b in self.parsed)

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
    """The rate of -e, then the reference: before anything is loaded, logged or written."""
    check_error_rate(opts.map.errors)
    check_fasta(opts.reference)
    if is_cram(opts.output) and not os.path.isfile(opts.reference):  # a pipe is read once, to map
        raise SeedmapError(f"{opts.output}: CRAM is encoded against the reference, which must be a file, not "
                           f"{opts.reference}")


def open_reads(opts: RunOptions, workers: int = 0) -> Head:
    """The first batch of reads (a paired run: its first ESTIMATE_PAIRS pairs, for the insert size), read and
    parsed here: a missing, unreadable or broken input fails now. Then -e is checked against their lengths.
    `workers`: the threads that will take single-end batches (they taper near the end of a plain FASTQ)."""
    assert opts.batch_size is not None  # (RunOptions.with_batch_size settles it)
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
    head = Head(raw, parsed, batches)
    check_error_count(opts.map, head.lengths())
    return head


def check_error_rate(errors: float) -> None:
    if 0 < errors < 1 and errors > MAX_ERROR_RATE + 1e-12:
        raise SeedmapError(f"-e {errors:g}: an error rate above {MAX_ERROR_RATE:g} is not a meaningful search "
                           f"({WHY}); give at most -e {MAX_ERROR_RATE:g}")


def typical_length(opts: MapOptions, lengths: np.ndarray) -> int:
    """The median length of the reads that are searched (not shorter than --min-length); 0 if none is."""
    searched = lengths[lengths >= max(opts.min_length, 1)]
    return int(np.median(searched)) if searched.size else 0


def check_error_count(opts: MapOptions, lengths: np.ndarray) -> None:
    """An -e count more than a quarter of the typical read's length is refused. Reads shorter than the typical
    one are searched with at most a quarter of their length (options.errors_per_read clips their e)."""
    if opts.errors < 1:
        return
    m = typical_length(opts, lengths)
    e = int(opts.errors)
    if m and e > MAX_ERROR_RATE * m:
        raise SeedmapError(f"-e {e}: more than a quarter of these {m} bp reads (the median length of the first "
                           f"{lengths.size:,}) is not a meaningful search ({WHY}); give at most "
                           f"-e {int(MAX_ERROR_RATE * m)}")


def warn_if_slow(opts: MapOptions, lengths: np.ndarray, genome: int) -> None:
    """A warning when the typical read's pigeonhole pieces (e + 1 of m // (e + 1) bases: every engine looks
    up at least these exactly) match so many random places of the genome that verifying them dominates."""
    m = typical_length(opts, lengths)
    if not m:
        return
    e = int(opts.read_errors(np.array([m]))[0])
    piece = m // (e + 1)
    expected = 2 * (e + 1) * genome / 4.0 ** piece  # both strands
    if expected >= SLOW_CANDIDATES:
        log.warning("-e %d on %d bp reads: their %d pigeonhole pieces of %d bases match about %s random places "
                    "of this %s genome per read, each verified: a very slow run (a lower -e is much faster)",
                    e, m, e + 1, piece, f"{expected:,.0f}", _size(genome))


def _size(bases: int) -> str:
    for unit, scale in (("Gbp", 1e9), ("Mbp", 1e6), ("kbp", 1e3)):
        if bases >= scale:
            return f"{bases / scale:.3g} {unit}"
    return f"{bases} bp"
