"""The paired-end pipeline, one batch of pairs at a time (read 2p = mate 1 of pair p, 2p + 1 = mate 2):

    mates -> locations of both mates (one engine call, as single-end) -> rescue of mates without
          -> pairing (primary pair, proper flag, MAPQ) -> alignments -> records with mate fields -> SAM
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seedmap.insert_size import InsertModel, estimate
from seedmap.io.reads import ReadBatch
from seedmap.io.sam import format_records
from seedmap.mapq import EDIT_RATIO, UNSEEN_WEIGHT
from seedmap.pair_records import FLAG_PROPER, make_pair_records
from seedmap.pairing import ORIENTATIONS, choose_pairs
from seedmap.pipeline import BatchStats, MapOptions, SamFormatter, errors_per_read, locate
from seedmap.rescue import rescue
from seedmap.verify.align import align


@dataclass
class PairOptions:
    orientation: str = "fr"
    rescue_edits: float = 0.1  # edits (>= 1) or a rate of the read length; 0 = no rescue
    unpaired_penalty: int = 3  # edits an improper pair pays against a proper one (bwa: 17 score ~ 3 edits)


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
    order = np.lexsort((q & 1, s, q >> 1))
    q, s, e, d = q[order], s[order], e[order], d[order]
    read = q >> 1
    off = np.zeros(n_reads + 1, dtype=np.int64)
    np.cumsum(np.bincount(read, minlength=n_reads), out=off[1:])
    ref_id = np.searchsorted(ref_starts, s, side="right") - 1
    return PairLocations(read, q, s, e, d, (q & 1).astype(np.bool_), ref_id.astype(np.int64), off)


def locate_pairs(batch: ReadBatch, engine: object, ref_starts: np.ndarray, qerr: np.ndarray,
                 ref: object) -> tuple[PairLocations, tuple]:
    loc, queries = locate(batch, engine, ref, qerr)
    return _sorted_locations(batch.size, loc.query, loc.start, loc.end, loc.dist, ref_starts), queries


def estimate_insert(batch: ReadBatch, engine: object, fmt: SamFormatter, opts: MapOptions,
                    orientation: str) -> tuple[InsertModel | None, int]:
    qerr = errors_per_read(batch.lengths, opts.errors)
    pl, _ = locate_pairs(batch, engine, fmt.starts, qerr, fmt.ref)
    return estimate(pl.read, pl.start, pl.end, pl.rev, pl.ref_id, batch.size, ORIENTATIONS[orientation])


def map_pair_batch(batch: ReadBatch, engine: object, fmt: SamFormatter, opts: MapOptions, popts: PairOptions,
                   model: InsertModel) -> tuple[bytes, PairStats]:
    ref = fmt.ref
    n = batch.size
    orient = ORIENTATIONS[popts.orientation]
    lo, hi = model.bounds
    qerr = errors_per_read(batch.lengths, opts.errors)
    pl, (qcodes, qoff) = locate_pairs(batch, engine, fmt.starts, qerr, ref)
    # Rescue: mates without locations, searched near their mate with the rescue budget.
    rbudget = errors_per_read(batch.lengths, popts.rescue_edits) if popts.rescue_edits > 0 else qerr
    rbudget = np.maximum(rbudget, qerr)
    rq, rs, re, rd = rescue(pl.read, pl.start, pl.end, pl.dist, pl.rev, pl.ref_id, n, qerr, rbudget, qcodes, qoff,
                            fmt.starts, ref.packed, ref.nmask, orient, (lo, hi), model.mean)
    budget = qerr.copy()
    if rq.size:
        budget[rq >> 1] = rbudget[rq >> 1]
        pl = _sorted_locations(n, np.concatenate([pl.query, rq]), np.concatenate([pl.start, rs]),
                               np.concatenate([pl.end, re]), np.concatenate([pl.dist, rd]), fmt.starts)
    # Each read's best single location: fewest edits, then leftmost, then forward.
    se_order = np.lexsort((pl.rev, pl.start, pl.dist, pl.read))
    first = np.r_[True, pl.read[se_order][1:] != pl.read[se_order][:-1]] if se_order.size else se_order.astype(bool)
    se_best = np.full(n, -1, dtype=np.int64)
    se_best[pl.read[se_order[first]]] = se_order[first]
    chosen = np.empty(n, dtype=np.int64)
    proper = np.empty(n // 2, dtype=np.bool_)
    mapq = np.empty(n, dtype=np.int64)
    choose_pairs(pl.off, pl.start, pl.end, pl.dist, pl.rev, pl.ref_id, se_best, budget, orient, lo, hi, model.mean,
                 popts.unpaired_penalty, EDIT_RATIO, UNSEEN_WEIGHT, chosen, proper, mapq,
                 np.empty(pl.read.size, dtype=np.float64))
    aln = align(qcodes, qoff, budget, pl.query, pl.start, pl.end, pl.dist, ref.packed, ref.nmask)
    recs = make_pair_records(n, pl.start, pl.end, pl.dist, pl.rev, pl.ref_id, pl.read, chosen, proper, mapq,
                             opts.best_only, opts.max_hits)
    text = format_records(recs.read, recs.loc, recs.flag, recs.mapq, recs.nh, batch.names, batch.name_offsets,
                          batch.codes, batch.offsets, batch.quals, batch.has_quals, pl.start, pl.dist,
                          fmt.starts, fmt.names, fmt.name_off, aln["cig_off"], aln["ops"], aln["lens"],
                          aln["n_runs"], aln["md_off"], aln["md"], aln["md_len"], recs.mate_loc, recs.mate_mapq,
                          recs.tlen)
    mapped = int(np.count_nonzero(chosen >= 0))
    n_proper = int(np.count_nonzero(recs.flag & FLAG_PROPER)) // 2
    stats = PairStats(n, mapped, int(recs.read.size), int(np.count_nonzero(batch.lengths <= qerr)), n // 2,
                      n_proper, int(np.unique(rq >> 1).size))
    return text.tobytes(), stats
