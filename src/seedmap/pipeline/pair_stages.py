"""The paired-end pipeline, one batch of pairs at a time (read 2p = mate 1 of pair p, 2p + 1 = mate 2):

    mates -> locations of both mates (one engine call, as single-end) -> rescue of mates without
          -> pairing (primary pair, proper flag, MAPQ) -> alignments -> records with mate fields -> SAM
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seedmap.engines.base import Engine
from seedmap.flags import FLAG_PROPER
from seedmap.io.reads import ReadBatch
from seedmap.io.reference import sequences_of
from seedmap.mapq import EDIT_RATIO, UNSEEN_WEIGHT
from seedmap.options import MapOptions, PairOptions, errors_per_read
from seedmap.order import lex_order
from seedmap.paired.insert_size import InsertModel, estimate
from seedmap.paired.pairing import ORIENTATIONS, choose_pairs
from seedmap.paired.records import make_pair_records
from seedmap.paired.rescue import rescue
from seedmap.pipeline.stages import BatchStats, SamFormatter, StageClock, locate
from seedmap.records import best_locations


@dataclass
class PairStats(BatchStats):
    pairs: int
    proper: int
    rescued: int


@dataclass
class PairLocations:
    """All locations of a pair batch sorted by read then start (each read's locations contiguous)."""

    read: np.ndarray
    query: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dist: np.ndarray
    rev: np.ndarray
    ref_id: np.ndarray
    off: np.ndarray  # read r's locations: off[r]:off[r + 1]


def _sorted_locations(n_reads: int, q: np.ndarray, s: np.ndarray, e: np.ndarray, d: np.ndarray,
                      ref_starts: np.ndarray) -> PairLocations:
    order = lex_order(q >> 1, s, q & 1)
    q, s, e, d = q[order], s[order], e[order], d[order]
    read = q >> 1
    off = np.zeros(n_reads + 1, dtype=np.int64)
    np.cumsum(np.bincount(read, minlength=n_reads), out=off[1:])
    ref_id = sequences_of(ref_starts, s)
    return PairLocations(read, q, s, e, d, (q & 1).astype(np.bool_), ref_id.astype(np.int64), off)


def locate_pairs(batch: ReadBatch, engine: Engine, ref_starts: np.ndarray, qerr: np.ndarray,
                 ref: object, clock: StageClock | None = None) -> tuple[PairLocations, tuple]:
    loc, queries = locate(batch, engine, ref, qerr, clock)
    return _sorted_locations(batch.size, loc.query, loc.start, loc.end, loc.dist, ref_starts), queries


def estimate_insert(batch: ReadBatch, engine: Engine, fmt: SamFormatter, opts: MapOptions,
                    orientation: str) -> tuple[InsertModel | None, int]:
    qerr = opts.read_errors(batch.lengths)
    pl, _ = locate_pairs(batch, engine, fmt.starts, qerr, fmt.ref)
    return estimate(pl.read, pl.start, pl.end, pl.rev, pl.ref_id, batch.size, ORIENTATIONS[orientation])


def map_pair_batch(batch: ReadBatch, engine: Engine, fmt: SamFormatter, opts: MapOptions, popts: PairOptions,
                   model: InsertModel, clock: StageClock | None = None) -> tuple[np.ndarray, PairStats]:
    clock = clock or StageClock()
    ref = fmt.ref
    n = batch.size
    orient = ORIENTATIONS[popts.orientation]
    lo, hi = model.bounds
    qerr = opts.read_errors(batch.lengths)
    pl, (qcodes, qoff) = locate_pairs(batch, engine, fmt.starts, qerr, ref, clock)
    # Rescue: mates without locations, searched near their mate with --rescue-edits.
    rescue_qerr = errors_per_read(batch.lengths, popts.rescue_edits) if popts.rescue_edits > 0 else qerr
    rescue_qerr = np.maximum(rescue_qerr, qerr)
    rq, rs, re, rd = rescue(pl.read, pl.start, pl.end, pl.dist, pl.rev, pl.ref_id, n, qerr, rescue_qerr, qcodes, qoff,
                            fmt.starts, ref.packed, ref.nmask, orient, (lo, hi), model.mean)
    edits = qerr.copy()
    if rq.size:
        edits[rq >> 1] = rescue_qerr[rq >> 1]
        pl = _sorted_locations(n, np.concatenate([pl.query, rq]), np.concatenate([pl.start, rs]),
                               np.concatenate([pl.end, re]), np.concatenate([pl.dist, rd]), fmt.starts)
    # Each read's best single location: fewest edits, then leftmost, then forward.
    strand = pl.query & 1
    se_best = best_locations(n, pl.read, strand, pl.start, pl.dist)
    chosen = np.empty(n, dtype=np.int64)
    proper = np.empty(n // 2, dtype=np.bool_)
    mapq = np.empty(n, dtype=np.int64)
    choose_pairs(pl.off, pl.start, pl.end, pl.dist, pl.rev, pl.ref_id, se_best, edits, orient, lo, hi, model.mean,
                 popts.unpaired_penalty, EDIT_RATIO, UNSEEN_WEIGHT, chosen, proper, mapq,
                 np.empty(pl.read.size, dtype=np.float64))
    clock.lap("pairing")
    aln = engine.align_locations(qcodes, qoff, edits, pl.query, pl.start, pl.end, pl.dist, ref.packed, ref.nmask,
                             ref.starts)
    pl.start, pl.end = aln.pop("start"), aln.pop("end")  # each alignment's interval: POS and TLEN
    clock.lap("traceback")
    recs = make_pair_records(n, pl.start, pl.end, pl.dist, strand, pl.ref_id, pl.read, chosen, proper, mapq,
                             opts.best_only, opts.max_hits)
    clock.lap("records")
    data = fmt.records(recs, batch, pl.start, pl.dist, aln)
    clock.lap("format")
    mapped = int(np.count_nonzero(chosen >= 0))
    n_proper = int(np.count_nonzero(recs.flag & FLAG_PROPER)) // 2
    stats = PairStats(n, mapped, int(recs.read.size), int(np.count_nonzero(batch.lengths < opts.min_length)),
                      n // 2, n_proper, int(np.unique(rq >> 1).size))
    return data, stats
