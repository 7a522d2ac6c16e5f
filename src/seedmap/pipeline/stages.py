"""The stages of one batch of single-end reads, run by one worker thread:

    reads -> queries (both strands) -> candidate windows (engine) -> locations (verifier: CPU or the engine's GPU)
          -> alignments (CIGAR, MD) -> records (flags, MAPQ, order) -> SAM text or BAM records

Every stage is a nogil kernel or numpy over the whole batch, so workers on different batches run in
parallel; the clock records each stage's seconds for `seedmap map -v`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seedmap.engines.base import Engine
from seedmap.io.bam_encode import encode_records
from seedmap.io.columns import Alignments, Records, RefNames
from seedmap.io.md_letters import restore_iupac
from seedmap.io.read_group import ReadGroup
from seedmap.io.reads import ReadBatch
from seedmap.io.reference import Reference
from seedmap.io.sam import format_records
from seedmap.mapq import GAP_LOG, MISMATCH_LOG, MISMATCH_WEIGHTS, mean_mismatch_weights
from seedmap.options import MapOptions
from seedmap.pipeline.strata import stratified_locate
from seedmap.pipeline.timings import StageClock
from seedmap.records import make_records
from seedmap.verify.align import Traceback
from seedmap.verify.likelihood import log_likelihoods
from seedmap.verify.shifts import shifted_placements


@dataclass
class Locations:
    """Verified locations of a batch, ordered by query then start. Query 2i is read i, 2i + 1 its
    reverse complement; start/end are global reference coordinates, end exclusive."""

    query: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dist: np.ndarray


def locate(batch: ReadBatch, engine: Engine, ref: Reference, qerr: np.ndarray,
           clock: StageClock | None = None) -> tuple[Locations, tuple]:
    clock = clock or StageClock()
    qcodes, qoff = batch.queries()
    clock.lap("queries")
    win_q, windows = engine.candidate_windows(qcodes, qoff, qerr)
    clock.lap("candidates")
    loc = Locations(*engine.verify_windows(qcodes, qoff, qerr, win_q, windows, ref.packed, ref.nmask))
    clock.lap("verify")
    return loc, (qcodes, qoff)


class SamFormatter:
    """Turns a batch's records into output bytes: SAM lines, or BAM records when bam=True; adds the read
    group tag. Secondary records get SEQ and QUAL '*' unless secondary_seq. Holds the reference names in
    the flat layout the kernels read."""

    def __init__(self, ref: Reference, read_group: ReadGroup | None = None, bam: bool = False,
                 secondary_seq: bool = False) -> None:
        self.ref = ref
        names = [n.encode() for n in ref.names]
        name_off = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum([len(n) for n in names], out=name_off[1:])
        self.starts = np.ascontiguousarray(ref.starts, dtype=np.int64)
        self.refs = RefNames(self.starts, np.frombuffer(b"".join(names), dtype=np.uint8), name_off)
        self.bam = bam
        self.secondary_seq = secondary_seq
        rg = read_group.id.encode() if read_group is not None else b""
        self.rg = np.frombuffer(rg, dtype=np.uint8)
        self.rg_tag = b"\tRG:Z:" + rg + b"\n" if rg else b""

    def alignments(self, loc_s: np.ndarray, loc_d: np.ndarray, aln: Traceback) -> Alignments:
        """The locations' alignments as the writers take them, MD naming the reference's IUPAC letters."""
        restore_iupac(aln.md, aln.md_off, aln.md_len, loc_s, self.ref.iupac_pos, self.ref.iupac_code)
        return Alignments(loc_s, loc_d, aln.cig_off, aln.ops, aln.lens, aln.n_runs, aln.md_off, aln.md, aln.md_len)

    def records(self, recs: Records, batch: ReadBatch, loc_s: np.ndarray, loc_d: np.ndarray,
                aln: Traceback) -> np.ndarray:
        """The batch's output bytes as the kernel's own uint8 array: copying them into a bytes object
        held the GIL (numpy's tobytes), a serial step of every worker thread. Writers take any buffer.
        loc_s, loc_d and aln: each location's start, distance and alignment (Engine.align_locations); MD
        strings name the reference's IUPAC letters (rewritten in aln.md)."""
        alns = self.alignments(loc_s, loc_d, aln)
        if self.bam:
            return encode_records(recs, batch.columns, alns, self.refs, self.secondary_seq, rg=self.rg)
        text = format_records(recs, batch.columns, alns, self.refs, self.secondary_seq)
        if self.rg_tag:
            return np.frombuffer(text.tobytes().replace(b"\n", self.rg_tag), dtype=np.uint8)
        return text


def quality_weights(batch: ReadBatch, loc_q: np.ndarray,
                    aln: Traceback) -> tuple[np.ndarray | None, np.ndarray | None]:
    """What MAPQ weighs the locations by when the reads have base qualities (mapq.py): each location's
    log-likelihood and each read's weight of an edit beyond them; (None, None) for FASTA reads."""
    if not batch.has_quals:
        return None, None
    loglik = log_likelihoods(loc_q, batch.offsets, batch.quals, MISMATCH_LOG, GAP_LOG, aln)
    return loglik, mean_mismatch_weights(batch.offsets, batch.quals, MISMATCH_WEIGHTS)


@dataclass
class BatchStats:
    reads: int
    mapped: int
    records: int
    short: int  # shorter than --min-length: not searched, reported unmapped


def map_batch(batch: ReadBatch, engine: Engine, fmt: SamFormatter, opts: MapOptions,
              clock: StageClock | None = None) -> tuple[np.ndarray, BatchStats]:
    clock = clock or StageClock()
    ref = fmt.ref
    qerr = opts.read_errors(batch.lengths)
    if opts.stratified:
        qcodes, qoff = batch.queries()
        clock.lap("queries")
        loc = Locations(*stratified_locate(qcodes, qoff, qerr, batch.lengths > qerr, engine, ref, opts, clock))
    else:
        loc, (qcodes, qoff) = locate(batch, engine, ref, qerr, clock)
    aln = engine.align_locations(qcodes, qoff, qerr, loc.query, loc.start, loc.end, loc.dist, ref.packed,
                                 ref.nmask, ref.starts)
    loc.start, loc.end = aln.start, aln.end  # each alignment's interval: the records' POS
    clock.lap("traceback")
    shifted = shifted_placements(qcodes, qoff, qerr, loc.query, loc.dist, aln, ref.packed, ref.nmask, ref.starts,
                                 batch.size)
    loglik, edit_weight = quality_weights(batch, loc.query, aln)
    recs = make_records(batch.size, loc.query, loc.start, loc.dist, opts.best_only, opts.max_hits, qerr,
                        opts.extra_strata, shifted, loglik, edit_weight)
    mapped = int(np.count_nonzero(np.diff(loc.query >> 1, prepend=-1)))  # queries are sorted
    clock.lap("records")
    data = fmt.records(recs, batch, loc.start, loc.dist, aln)
    clock.lap("format")
    stats = BatchStats(batch.size, mapped, int(recs.read.size), int(np.count_nonzero(batch.lengths < opts.min_length)))
    return data, stats
