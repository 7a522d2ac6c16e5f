"""The paired-end pipeline, one batch of pairs at a time (read 2p = mate 1 of pair p, 2p + 1 = mate 2):

    mates -> locations of both mates (all: one engine call, as single-end; --best: pair_strata.py's rounds)
          -> rescue of mates without locations -> pairing (primary pair, proper flag, MAPQ) -> alignments
          -> records with mate fields -> SAM
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seedmap.engines.base import Engine
from seedmap.flags import FLAG_PROPER
from seedmap.io.reads import ReadBatch
from seedmap.io.reference import Reference
from seedmap.mapq import EDIT_RATIO, UNSEEN_WEIGHT
from seedmap.options import MapOptions, PairOptions, errors_per_read
from seedmap.paired.insert_size import InsertModel, estimate
from seedmap.paired.pairing import ORIENTATIONS, Library, PairChoice, PairWeights, choose_pairs
from seedmap.paired.records import make_pair_records
from seedmap.pipeline.pair_strata import (
    FilteredSearch,
    MateSearch,
    PairLocations,
    joined,
    pair_search_options,
    rescued,
    sorted_locations,
    stratified_pairs,
)
from seedmap.pipeline.stages import BatchStats, SamFormatter, locate
from seedmap.pipeline.strata import StrataSearch
from seedmap.pipeline.timings import StageClock
from seedmap.records import best_locations

ESTIMATE_EDITS = 1  # the insert size estimate's search: mates with one location within this many edits


@dataclass
class PairStats(BatchStats):
    pairs: int
    proper: int
    rescued: int


def library(popts: PairOptions, model: InsertModel) -> Library:
    lo, hi = model.bounds
    return Library(ORIENTATIONS[popts.orientation], lo, hi, model.mean)


def estimate_insert(batch: ReadBatch, engine: Engine, fmt: SamFormatter, opts: MapOptions,
                    orientation: str) -> tuple[InsertModel | None, int]:
    """The insert size from the pairs of `batch` whose mates each have one location within ESTIMATE_EDITS: a
    search that costs a fraction of the run's, the same whatever the run reports (--best or all)."""
    qerr = np.minimum(opts.read_errors(batch.lengths), ESTIMATE_EDITS)
    loc, _ = locate(batch, engine, fmt.ref, qerr)
    pl = sorted_locations(batch.size, loc.query, loc.start, loc.end, loc.dist, fmt.starts)
    return estimate(pl.read, pl.start, pl.end, pl.rev, pl.ref_id, batch.size, ORIENTATIONS[orientation])


def _all_pairs(batch: ReadBatch, engine: Engine, ref: Reference, qerr: np.ndarray, rescue_qerr: np.ndarray,
               lib: Library, w: PairWeights, clock: StageClock) -> tuple[PairLocations, PairChoice, np.ndarray, tuple]:
    """Every location of both mates within e, mates without any rescued near their mate's best: (locations,
    the pairing's choice, edits searched per read, the queries)."""
    n = batch.size
    loc, (qcodes, qoff) = locate(batch, engine, ref, qerr, clock)
    searched = sorted_locations(n, loc.query, loc.start, loc.end, loc.dist, ref.starts)
    found = rescued(searched, np.ones(n, dtype=np.bool_), n, qerr, rescue_qerr, qcodes, qoff, ref, lib, w,
                    near=False)
    pl, edits = joined(searched, found, qerr, rescue_qerr, ref.starts)
    clock.lap("rescue")
    se_best = best_locations(n, pl.read, pl.query & 1, pl.start, pl.dist)
    choice = choose_pairs(pl.mates, se_best, edits, lib, w, np.zeros(n // 2))
    clock.lap("pairing")
    return pl, choice, edits, (qcodes, qoff)


def _best_pairs(batch: ReadBatch, engine: Engine, ref: Reference, opts: MapOptions, qerr: np.ndarray,
                rescue_qerr: np.ndarray, lib: Library, w: PairWeights,
                clock: StageClock) -> tuple[PairLocations, PairChoice, np.ndarray, tuple]:
    """Paired --best: both mates searched only as deep as their pair needs (pair_strata.py)."""
    searchable = batch.lengths > qerr
    mate_opts = pair_search_options(opts)
    search: MateSearch
    if opts.early_stop:
        qcodes, qoff = batch.queries()
        clock.lap("queries")
        search = StrataSearch(qcodes, qoff, qerr, searchable, engine, ref, mate_opts, clock)
    else:
        loc, (qcodes, qoff) = locate(batch, engine, ref, qerr, clock)
        search = FilteredSearch((loc.query, loc.start, loc.end, loc.dist), qerr, searchable, mate_opts)
    pl, choice, edits = stratified_pairs(search, batch.size, qerr, rescue_qerr, qcodes, qoff, ref, lib, w, clock,
                                         pair_strata=opts.strata < 0)
    return pl, choice, edits, (qcodes, qoff)


def map_pair_batch(batch: ReadBatch, engine: Engine, fmt: SamFormatter, opts: MapOptions, popts: PairOptions,
                   model: InsertModel, clock: StageClock | None = None) -> tuple[np.ndarray, PairStats]:
    clock = clock or StageClock()
    ref = fmt.ref
    n = batch.size
    lib = library(popts, model)
    w = PairWeights(popts.unpaired_penalty, EDIT_RATIO, UNSEEN_WEIGHT)
    qerr = opts.read_errors(batch.lengths)
    # Rescue: mates without locations, searched near their mate with --rescue-edits.
    rescue_qerr = errors_per_read(batch.lengths, popts.rescue_edits) if popts.rescue_edits > 0 else qerr
    rescue_qerr = np.maximum(rescue_qerr, qerr)
    if opts.best_only and opts.max_hits <= 0:
        pl, choice, edits, (qcodes, qoff) = _best_pairs(batch, engine, ref, opts, qerr, rescue_qerr, lib, w, clock)
    else:
        pl, choice, edits, (qcodes, qoff) = _all_pairs(batch, engine, ref, qerr, rescue_qerr, lib, w, clock)
    aln = engine.align_locations(qcodes, qoff, edits, pl.query, pl.start, pl.end, pl.dist, ref.packed, ref.nmask,
                                 ref.starts)
    pl.start, pl.end = aln.start, aln.end  # each alignment's interval: POS and TLEN
    clock.lap("traceback")
    recs = make_pair_records(n, pl.start, pl.end, pl.dist, pl.query & 1, pl.ref_id, pl.read, choice.chosen,
                             choice.proper, choice.mapq, opts.best_only, opts.max_hits)
    clock.lap("records")
    data = fmt.records(recs, batch, pl.start, pl.dist, aln)
    clock.lap("format")
    mapped = int(np.count_nonzero(choice.chosen >= 0))
    n_proper = int(np.count_nonzero(recs.flag & FLAG_PROPER)) // 2
    rescued = int(np.count_nonzero(edits > qerr))  # mates found by rescue beyond e
    stats = PairStats(n, mapped, int(recs.read.size), int(np.count_nonzero(batch.lengths < opts.min_length)),
                      n // 2, n_proper, rescued)
    return data, stats
