"""Paired --best: both mates searched stratum by stratum, as far as the best pair and its MAPQ need.

By default each mate is first searched to its best stratum only (pipeline/strata.py); with --strata S, S strata
beyond it. A pair (i, j) of locations has delta = the edits of i and j beyond their mates' best single locations;
the primary pair is the proper pair of least delta when that is at most the unpaired penalty P, else each mate's
best (pairing.py). What the search has not seen of a pair searched to need_a and need_b edits:

- a location i found whose mate's partner j lies beyond need_b: every location found that pairs with no location
  found of its mate is an anchor, and its mate is looked for within e in its insert window (paired/rescue.py,
  "near the partner"), so every proper pair with one mate found is seen;
- a proper pair with neither mate found: its delta is at least u = (need_a + 1 - best_a) + (need_b + 1 - best_b).

So the choice is that of the all-mapping search once u > d*, the least delta of the pairs seen (u > P where none is
within P). Pairs that fall short are searched again with more strata (raise_extra), split between the mates; a mate
searched to its e (or with no location within it) leaves nothing unseen within e.

MAPQ, by default (pair strata): the rounds go on until u >= d* + 2, so every proper pair within one edit of the best
one is seen, as single-end MAPQ sees every location within one edit of the best, but for those of a mate's locations
beyond the MAX_ANCHORS it is looked near: each such location is taken for one pair d* + 1 behind (a bound, not a
search: MAPQ 20 or less where a mate has more than MAX_ANCHORS locations); the pairs further behind are left out, as
single-end MAPQ leaves out the strata behind that one, and each mate's virtual location lies at e + 1 as in
all-mapping. A pair with no proper pair within P is scored from its mates' single locations, so each of them is
searched MAPQ_STRATA beyond its best, as single-end --best searches it. With --strata S each mate's locations within
S of its best are counted and what it was not searched to is a pair of weight EDIT_RATIO ** u (S >= MAPQ_STRATA:
every location MAPQ counts is found, and MAPQ is all-mapping's).

Guarantee: the primary pair (and proper flag) is the one the all-mapping search chooses, unless a read has more than
MAX_ANCHORS found locations without a partner (the anchors tried). MAPQ is all-mapping's with --strata 1 or more,
unless a mate has no location within e and is rescued (its rescue's anchors are the locations found of its mate,
fewer than all-mapping's); by default a proper pair's MAPQ may be lower than all-mapping's where a mate has more
than MAX_ANCHORS locations (the bound above), and higher where all-mapping counts a pair two or more edits behind
the best (its mates each a stratum behind theirs) or a mate's location a stratum behind its best that pairs with
nothing (both weigh 1/10,000 of the best pair or less: MAPQ 40 at most against 60), or where a mate has a second
location one edit behind its best in the insert window of its partner (a tandem copy of the mate within a fragment's
length: that location is not looked for).
Records: the primary, then each mate's other locations at its best distance, as all-mapping's --best.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from seedmap.io.columns import PackedRef, Queries
from seedmap.io.reference import Reference, sequences_of
from seedmap.mapq import MAPQ_STRATA
from seedmap.options import MapOptions
from seedmap.order import lex_order
from seedmap.paired.pairing import Library, MateLocations, PairChoice, PairWeights, choose_pairs
from seedmap.paired.rescue import rescue, unlocated_anchors, unpartnered_anchors, untried_anchors
from seedmap.pipeline.strata import raise_need
from seedmap.pipeline.timings import StageClock
from seedmap.records import best_and_ties, best_locations


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

    @property
    def mates(self) -> MateLocations:
        return MateLocations(self.off, self.start, self.end, self.dist, self.rev, self.ref_id)


def sorted_locations(n_reads: int, q: np.ndarray, s: np.ndarray, e: np.ndarray, d: np.ndarray,
                     ref_starts: np.ndarray) -> PairLocations:
    order = lex_order(q >> 1, s, q & 1)
    q, s, e, d = q[order], s[order], e[order], d[order]
    read = q >> 1
    off = np.zeros(n_reads + 1, dtype=np.int64)
    np.cumsum(np.bincount(read, minlength=n_reads), out=off[1:])
    ref_id = sequences_of(ref_starts, s)
    return PairLocations(read, q, s, e, d, (q & 1).astype(np.bool_), ref_id.astype(np.int64), off)


class MateSearch(Protocol):
    """What the pairs' rounds ask of a search of the batch's reads (strata.StrataSearch, FilteredSearch): per read
    the edits it is searched to (need) and its best distance (best, -1: none found)."""

    need: np.ndarray
    best: np.ndarray

    def search(self) -> None: ...

    def raise_extra(self, reads: np.ndarray, extra: np.ndarray) -> None: ...

    def locations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


class FilteredSearch:
    """StrataSearch's interface over the locations of a search to every read's e (`--no-early-stop`): each read
    keeps those up to its need, so a stratified run's records can be tested equal to it."""

    def __init__(self, locations: tuple[np.ndarray, ...], qerr: np.ndarray, searchable: np.ndarray,
                 opts: MapOptions) -> None:
        self.q, self.s, self.e, self.d = locations
        self.qerr = qerr
        best, at_best = best_and_ties(qerr.size, self.q >> 1, self.d)
        self.best = best
        extra = np.where(at_best > 1, *opts.extra_strata[::-1])
        self.need = np.where((best >= 0) & searchable, np.minimum(qerr, best + extra), qerr)
        self.extra = np.zeros(qerr.size, dtype=np.int64)

    def search(self) -> None:
        pass

    def raise_extra(self, reads: np.ndarray, extra: np.ndarray) -> None:
        raise_need(self.need, self.best, self.qerr, self.extra, reads, extra)

    def locations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        keep = self.d <= self.need[self.q >> 1]
        return self.q[keep], self.s[keep], self.e[keep], self.d[keep]


def pair_search_options(opts: MapOptions) -> MapOptions:
    """The per-mate strata of a paired --best search: by default (pair strata, module notes) each mate's best
    stratum only, the pairs asking for more where their choice or MAPQ needs it; --strata S where given."""
    return replace(opts, strata=max(opts.strata, 0))


def stratified_pairs(search: MateSearch, n_reads: int, qerr: np.ndarray, rescue_qerr: np.ndarray,
                     qcodes: np.ndarray, qoff: np.ndarray, ref: Reference, lib: Library, w: PairWeights,
                     clock: StageClock, pair_strata: bool = False) -> tuple[PairLocations, PairChoice, np.ndarray]:
    """The pairs of a batch by the module's rounds: (locations, the pairing's choice, edits searched per read).
    pair_strata: the default MAPQ of the module notes, else that of the mates' --strata."""
    search.search()
    found = Rescued.none()
    redo = np.ones(n_reads, dtype=np.bool_)  # reads whose locations changed since their rescue
    while True:
        searched = sorted_locations(n_reads, *search.locations(), ref.starts)
        found = found.without(redo).plus(rescued(searched, redo, n_reads, qerr, rescue_qerr, qcodes, qoff, ref, lib,
                                                 w, near=True))
        pl, edits = joined(searched, found, search.need, rescue_qerr, ref.starts)
        clock.lap("rescue")
        se_best = best_locations(n_reads, pl.read, pl.query & 1, pl.start, pl.dist)
        choice = choose_pairs(pl.mates, se_best, _prior_edits(search, qerr, edits), lib, w,
                              _unseen_weight(search, qerr, w))
        clock.lap("pairing")
        reads, extra = _more_strata(search, qerr, choice.delta, w.penalty)
        if pair_strata:
            reads, extra = _unpaired_strata(search, qerr, choice.proper, reads, extra)
        if reads.size == 0:
            if pair_strata:  # the choice stands; the MAPQ of the proper pairs counts what the notes say
                settled = np.repeat(choice.proper, 2)
                prior = np.where(settled, np.maximum(edits, qerr), _prior_edits(search, qerr, edits))
                unseen = np.where(choice.proper, _untried_weight(choice, np.diff(searched.off), w),
                                  _unseen_weight(search, qerr, w))
                choice = choose_pairs(pl.mates, se_best, prior, lib, w, unseen)
                clock.lap("pairing")
            return pl, choice, edits
        search.raise_extra(reads, extra)
        search.search()
        redo[:] = False
        redo[reads] = True


@dataclass
class Rescued:
    """Locations found near the partner or rescued (query, start, end, dist)."""

    query: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dist: np.ndarray

    @staticmethod
    def none() -> Rescued:
        z = np.zeros(0, dtype=np.int64)
        return Rescued(z, z, z, np.zeros(0, dtype=np.int32))

    def columns(self) -> tuple[np.ndarray, ...]:
        return self.query, self.start, self.end, self.dist

    def without(self, reads: np.ndarray) -> Rescued:
        """Those of the pairs of none of the given reads (a mask)."""
        keep = ~(reads[self.query >> 1] | reads[(self.query >> 1) ^ 1])
        return Rescued(*(c[keep] for c in self.columns()))

    def plus(self, other: Rescued) -> Rescued:
        return Rescued(*map(np.concatenate, zip(self.columns(), other.columns(), strict=True)))


def rescued(pl: PairLocations, redo: np.ndarray, n_reads: int, qerr: np.ndarray, rescue_qerr: np.ndarray,
            qcodes: np.ndarray, qoff: np.ndarray, ref: Reference, lib: Library, w: PairWeights,
            near: bool) -> Rescued:
    """The locations rescued (with --rescue-edits) and, with `near`, found near the partner (within e) of the pairs
    of the reads in `redo` (a mask), from the search's locations `pl`."""
    lost = unlocated_anchors(pl.read, pl.start, pl.dist, n_reads, qerr, rescue_qerr)
    task_edits = rescue_qerr[pl.read[lost] ^ 1]
    anchors = lost
    if near:
        se_best = best_locations(n_reads, pl.read, pl.query & 1, pl.start, pl.dist)
        # Which locations pair with one of their mate's (choose_pairs' partnered), before anything is added.
        first = choose_pairs(pl.mates, se_best, qerr, lib, w, np.zeros(n_reads // 2))
        pair_redo = redo | redo[np.arange(n_reads) ^ 1]
        near_at = unpartnered_anchors(pl.read, pl.start, pl.dist, first.partnered, n_reads)
        near_at, lost = near_at[pair_redo[pl.read[near_at]]], lost[pair_redo[pl.read[lost]]]
        anchors = np.concatenate([near_at, lost])
        task_edits = np.concatenate([qerr[pl.read[near_at] ^ 1], rescue_qerr[pl.read[lost] ^ 1]])
    return Rescued(*rescue(anchors, task_edits, pl.read, pl.mates, Queries(qcodes, qoff, qerr), ref.starts,
                           PackedRef(ref.packed, ref.nmask), lib))


def joined(searched: PairLocations, found: Rescued, searched_edits: np.ndarray, rescue_qerr: np.ndarray,
           ref_starts: np.ndarray) -> tuple[PairLocations, np.ndarray]:
    """The search's locations and those rescued or found near the partner, and the edits searched per read (a read
    rescued, without locations of its own, counts the edits the rescue searched: its MAPQ sees them)."""
    n_reads = searched_edits.size
    edits = searched_edits.copy()
    if found.query.size == 0:
        return searched, edits
    reads = np.unique(found.query >> 1)
    beyond = reads[np.bincount(searched.read, minlength=n_reads)[reads] == 0]
    edits[beyond] = rescue_qerr[beyond]
    own = (searched.query, searched.start, searched.end, searched.dist)
    q, s, e, d = (np.concatenate(pair) for pair in zip(own, found.columns(), strict=True))
    return sorted_locations(n_reads, q, s, e, d, ref_starts), edits


def _short(search: MateSearch, qerr: np.ndarray) -> np.ndarray:
    """Per read: searched short of the strata MAPQ counts (MAPQ_STRATA beyond its best, at most its e)."""
    return (search.need < np.minimum(qerr, search.best + MAPQ_STRATA)) & (search.best >= 0)


def _prior_edits(search: MateSearch, qerr: np.ndarray, edits: np.ndarray) -> np.ndarray:
    """Per read, the edits whose next stratum MAPQ's virtual location takes (mapq.py): e where the search reached
    the strata MAPQ counts, as all-mapping's; the edits searched where it did not; a rescued read's rescue edits."""
    return np.maximum(edits, np.where(_short(search, qerr), search.need, qerr))


def _unseen_weight(search: MateSearch, qerr: np.ndarray, w: PairWeights) -> np.ndarray:
    """Per pair, the weight of the proper pairs with neither mate found: EDIT_RATIO ** u (module notes); 0 where a
    mate reached the strata MAPQ counts (a pair beyond them is in the mates' virtual locations, mapq.py)."""
    need, best = search.need, search.best
    short = _short(search, qerr)
    u = (need + 1 - best).reshape(-1, 2).sum(axis=1)
    both = short.reshape(-1, 2).all(axis=1)
    return np.where(both, w.ratio ** u.astype(np.float64), 0.0)


def _unpaired_strata(search: MateSearch, qerr: np.ndarray, proper: np.ndarray, reads: np.ndarray,
                     extra: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(reads, extra) of _more_strata and the mates of pairs without a proper pair that are short of the strata
    their single-end MAPQ counts (MAPQ_STRATA beyond the best), each asked for those (module notes)."""
    short = _short(search, qerr) & ~np.repeat(proper, 2)
    if not short.any():
        return reads, extra
    want = np.where(short, MAPQ_STRATA, 0)
    np.maximum.at(want, reads, extra)  # a read asked for by both keeps the more
    asked = np.flatnonzero(want)
    return asked, want[asked]


def _untried_weight(choice: PairChoice, located: np.ndarray, w: PairWeights) -> np.ndarray:
    """Per proper pair of delta d*, the weight of the pairs the default MAPQ may not have seen (module notes): a
    location of a mate beyond the MAX_ANCHORS it was looked near may pair with one of its partner's a stratum behind
    the partner's searched ones, one pair of weight EDIT_RATIO ** (d* + 1) for each."""
    untried = untried_anchors(located).reshape(-1, 2).sum(axis=1)
    return np.where(choice.proper, untried * w.ratio ** (choice.delta + 1.0), 0.0)


def _more_strata(search: MateSearch, qerr: np.ndarray, delta: np.ndarray,
                 penalty: int) -> tuple[np.ndarray, np.ndarray]:
    """(reads, extra strata) of the pairs whose unseen pairs could still change their choice or its runner-up:
    u < d* + 2 (d* <= P), or u <= P (no proper pair within P); the extra strata split between the mates, the
    first mate the larger half."""
    need, best = search.need, search.best
    short = ((need < qerr) & (best >= 0)).reshape(-1, 2)
    extra = (need - best).reshape(-1, 2)
    want = np.where((delta >= 0) & (delta <= penalty), delta, penalty - 1)  # extra strata the pair needs in all
    lacking = short.all(axis=1) & (extra.sum(axis=1) < want)
    pairs = np.flatnonzero(lacking)
    if pairs.size == 0:
        return pairs, pairs
    total = want[pairs]
    first = (total + 1) // 2
    reads = np.concatenate([2 * pairs, 2 * pairs + 1])
    return reads, np.concatenate([first, total - first])
