"""The mapping pipeline, one batch at a time:

    reads -> queries (both strands) -> candidate windows (engine) -> locations (verifier)
          -> alignments (CIGAR, MD) -> records (flags, MAPQ, order) -> SAM bytes
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seedmap.backends import cpu
from seedmap.io.reads import ReadBatch
from seedmap.io.reference import Reference
from seedmap.io.sam import format_records
from seedmap.records import make_records
from seedmap.verify.align import align


@dataclass
class MapOptions:
    errors: float = 0.05  # edits if >= 1 (an integer), else a rate of the read length
    best_only: bool = False
    max_hits: int = 0  # 0 = all locations


@dataclass
class Locations:
    """Verified locations of a batch, ordered by query then start. Query 2i is read i, 2i + 1 its
    reverse complement; start/end are global reference coordinates, end exclusive."""

    query: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dist: np.ndarray


def errors_per_read(lengths: np.ndarray, errors: float) -> np.ndarray:
    if errors >= 1 or errors == 0:
        return np.full(lengths.size, int(errors), dtype=np.int64)
    return np.floor(lengths * errors + 1e-9).astype(np.int64)


def locate(batch: ReadBatch, engine: object, ref: Reference, qerr: np.ndarray) -> tuple[Locations, tuple]:
    qcodes, qoff = batch.queries()
    win_q, windows = engine.candidate_windows(qcodes, qoff, qerr)
    loc = Locations(*cpu.verify(qcodes, qoff, qerr, win_q, windows, ref.packed, ref.nmask))
    return loc, (qcodes, qoff)


class SamFormatter:
    """Holds the reference names in the flat layout the formatting kernel reads."""

    def __init__(self, ref: Reference) -> None:
        self.ref = ref
        names = [n.encode() for n in ref.names]
        self.names = np.frombuffer(b"".join(names), dtype=np.uint8)
        self.name_off = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum([len(n) for n in names], out=self.name_off[1:])
        self.starts = np.ascontiguousarray(ref.starts, dtype=np.int64)


@dataclass
class BatchStats:
    reads: int
    mapped: int
    records: int
    skipped_short: int


def map_batch(batch: ReadBatch, engine: object, fmt: SamFormatter, opts: MapOptions) -> tuple[bytes, BatchStats]:
    ref = fmt.ref
    qerr = errors_per_read(batch.lengths, opts.errors)
    loc, (qcodes, qoff) = locate(batch, engine, ref, qerr)
    aln = align(qcodes, qoff, qerr, loc.query, loc.start, loc.end, loc.dist, ref.packed, ref.nmask)
    recs = make_records(batch.size, loc.query, loc.start, loc.dist, opts.best_only, opts.max_hits, qerr)
    text = format_records(recs.read, recs.loc, recs.flag, recs.mapq, recs.nh, batch.names, batch.name_offsets,
                          batch.codes, batch.offsets, batch.quals, batch.has_quals, loc.start, loc.dist,
                          fmt.starts, fmt.names, fmt.name_off, aln["cig_off"], aln["ops"], aln["lens"],
                          aln["n_runs"], aln["md_off"], aln["md"], aln["md_len"])
    mapped = int(np.unique(loc.query >> 1).size)
    stats = BatchStats(batch.size, mapped, int(recs.read.size), int(np.count_nonzero(batch.lengths <= qerr)))
    return text.tobytes(), stats
