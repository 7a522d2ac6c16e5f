"""Stratified search for --best and -n: search each read with growing edits and stop early.

Round k searches the reads still open with min(k, need) edits (need: the read's full e until its
stop stratum is known). Every engine is fully sensitive at any e, and a smaller e gives fewer,
longer, far more selective seeds (pigeonhole windows, FM search schemes), so early rounds are cheap.
What a search learns of a read that holds at every e stays in a QueryMemo between its rounds (the FM
engine's D arrays: 250 Mbp human-like genome, 20,000 reads, -t 2, e = 5: candidates 6.7 -> 5.3 s).

    stop   --best: the best distance found (every location within the edits searched is found, so it is exact);
           -n N:   the distance of the N-th location, once N are known;
    need = min(e, stop + extra): the deepest stratum searched, so MAPQ sees the runner-up strata;
           extra = MapOptions.extra_strata: by default 1 after a unique best (the strata MAPQ counts,
           mapq.py: all-mapping's MAPQ), 0 after a tie (MAPQ 0 whatever follows).

A read whose best location is unique needs the stratum behind it for MAPQ, and that round mostly finds nothing but
the best again (150 bp reads on the 250 Mbp human-like genome, e = 4: a third of the reads have a unique best at 1
edit, and 95 % of those have no other location within 4). Before such a round, the engine is asked
whether its index proves the location alone (Engine.spans_alone, filter/fm_alone.py: every piece of its span
occurs there only); a read proved so counts as searched to its need with the locations it has, which are those the
round would find.

The first round is k = the least extra (a read whose best distance is 0 needs those strata anyway); after k = 1
the rounds step by two (next_round): a read whose best distance b is found needs b + 1 searched when it is
unique, and one round a stratum deeper costs less than two rounds (fm engine, e = 5, 250 Mbp human-like genome:
rounds 0, 1, 3, 5 are the fastest schedule, 3.0-3.4 s against 3.9 s for 0, 1, 2, 3, 4, 5). Where no read needs a
stratum beyond its best (paired --best's mates, pair_strata.py) they step by one: a read found at b is done, and
a round at b + 1 costs less than one at b + 2 (150 bp reads, 250 Mbp human-like genome, fm engine: 13 % of
the reads are not found within 1 edit, 97 % are within 2, and a round at 3 costs 2.6x one at 2). Locations
found with fewer edits than e are widened to their runs at e (verify/runs.py), so a read's locations up to
`need` are exactly those the all-mapping search reports; records.make_records applies the same `need`
to an all-mapping result, which is how the two are tested equal. A caller may ask for more strata of some reads
between searches (StrataSearch.raise_extra: the pairs' rounds); the next search runs the rounds they need.

Round 0 pays only where many reads have tied exact locations (those it settles; a read with a unique exact
location needs round 1 anyway, one with none learns nothing): a batch tries it on its first ROUND0_SAMPLE reads and
runs it for the rest only if at least the engine's round0_min of those were settled (what an e = 0 search costs
against an e = 1 one: a quarter for the FM engine, over two thirds for the seed engines); otherwise the rest start
at round 1. The records do not depend on it (a read's locations up to its `need` are the same whichever rounds
found them).
"""

from __future__ import annotations

import numpy as np

from seedmap.engines.base import Engine, QueryMemo
from seedmap.io.reference import Reference
from seedmap.options import MapOptions
from seedmap.order import lex_order
from seedmap.pipeline.timings import StageClock
from seedmap.ranges import gather_ranges
from seedmap.records import best_and_ties
from seedmap.verify.runs import run_heads

# A read settled by round 0 costs an e = 0 search instead of an e = 1 one; every other read pays both. 250 Mbp
# human-like genome: 73 of 20,000 reads settled (0.4 %); ragout16 (16 related bacterial genomes): about half.
ROUND0_SAMPLE = 128
# A round searches the reads that are done again, each at the stratum it needs (the same locations), when they are
# at most 1/RESEARCH of the batch: copying the open reads' queries costs about a twentieth of a search (ragout16,
# --best, neighborhood: the copy after a trial that settled too few was 3 % of the workers' time).
RESEARCH = 32


def query_ids(reads: np.ndarray) -> np.ndarray:
    """The queries (both strands) of the given reads, in that order."""
    return (2 * reads[:, None] + np.arange(2)).ravel()


def subset_queries(qcodes: np.ndarray, qoff: np.ndarray, reads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes and offsets of the queries (both strands) of the given reads, in that order."""
    return gather_ranges(qcodes, qoff, query_ids(reads))


def _nth_dist(read: np.ndarray, dist: np.ndarray, n_reads: int, n: int) -> np.ndarray:
    """Distance of each read's n-th best location (-1 with fewer)."""
    out = np.full(n_reads, -1, dtype=np.int64)
    order = lex_order(read, dist)
    r, d = read[order], dist[order]
    first = np.searchsorted(r, np.arange(n_reads))
    count = np.bincount(r, minlength=n_reads)
    has = count >= n
    out[has] = d[first[has] + n - 1]
    return out


def _to_merge(q: np.ndarray, partial: np.ndarray, at_best: np.ndarray, opts: MapOptions, tie_rule: bool) -> np.ndarray:
    """Which of a round's locations found with fewer edits than e must be joined into whole runs now: all of
    them for -n (it counts locations), those of reads with several at their best distance (at_best, per read)
    where a tie decides the strata (parts of one run are one location); none otherwise (joined at the end)."""
    if opts.max_hits > 0 and not opts.best_only:
        return partial
    if not tie_rule or not partial.any():
        return np.zeros(partial.size, dtype=np.bool_)
    return partial & (at_best > 1)[q >> 1]


def next_round(k: int, extra: int = 1) -> int:
    """The edits of the round after round k (see the notes); `extra`: the most strata a read needs beyond its best."""
    return k + 1 if k < 1 or extra == 0 else k + 2


def raise_need(need: np.ndarray, best: np.ndarray, qerr: np.ndarray, extra: np.ndarray, reads: np.ndarray,
               more: np.ndarray) -> None:
    """In place: `reads`' extra strata (extra) at least `more`, and their need at least best + extra, at most their
    e (reads without a location, best -1, keep theirs: they were searched to their e)."""
    extra[reads] = np.maximum(extra[reads], more)
    known = reads[best[reads] >= 0]
    need[known] = np.minimum(qerr[known], np.maximum(need[known], best[known] + extra[known]))


class StrataSearch:
    """The rounds of a stratified search over one batch's queries, resumable: search() runs rounds until no read
    is open; raise_extra() lets a caller (the pairs' search, pipeline/pair_strata.py) ask for more strata of some
    reads, and search() again runs the rounds they now need; locations() joins what the rounds found."""

    def __init__(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, searchable: np.ndarray,
                 engine: Engine, ref: Reference, opts: MapOptions, clock: StageClock) -> None:
        self.qcodes, self.qoff, self.qerr, self.searchable = qcodes, qoff, qerr, searchable
        self.engine, self.ref, self.opts, self.clock = engine, ref, opts, clock
        n_reads = qerr.size
        self.need = qerr.copy()
        self.searched = np.where(searchable, -1, self.need)  # reads not searched at all count as done
        self.best = np.full(n_reads, -1, dtype=np.int64)  # each read's best distance (-1: none found yet)
        self.extra = np.zeros(n_reads, dtype=np.int64)  # strata asked for beyond the stop stratum (raise_extra)
        none = np.zeros(0, dtype=np.int64)
        self.rounds = [(none, none, none, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.bool_))]
        self.last = np.full(n_reads, -1, dtype=np.int64)  # the round whose locations a read keeps: its last open
        # a read's best location's span where it is the only one at its best distance (for spans_alone), -1 else
        self.alone_s = np.full(n_reads, -1, dtype=np.int64)
        self.alone_e = np.zeros(n_reads, dtype=np.int64)
        self.k = min(opts.extra_strata)
        self.memo = QueryMemo(qoff)  # what the engine may reuse from a read's earlier rounds
        self.tie_rule = opts.extra_strata[0] != opts.extra_strata[1]
        self.trial = self.k == 0 and int(np.count_nonzero(searchable)) >= 2 * ROUND0_SAMPLE  # round 0 on a sample

    def search(self) -> None:
        """Rounds until every read is searched to its need."""
        n_reads = self.qerr.size
        opts, engine, ref, clock, qerr = self.opts, self.engine, self.ref, self.clock, self.qerr
        need, searched, searchable = self.need, self.searched, self.searchable
        while True:
            self._prove_alone()
            open_ = np.flatnonzero((searched < need) & (searched < self.k))  # (searched < k: the rest after a trial)
            if self.trial:
                open_ = open_[:ROUND0_SAMPLE]
            if open_.size == 0:
                if not (searched < need).any():
                    break
                self.k = next_round(self.k, max(self.opts.extra_strata))  # reads asked for more (raise_extra)
                continue
            since = clock.t  # (the round's time from here, for -v: StageClock.tally)
            done = n_reads - open_.size
            if 0 < done and done * RESEARCH <= n_reads and not self.trial and searchable.all():
                open_ = np.arange(n_reads)  # the few done (a trial's sample) searched again: cheaper than a copy
            round_e = np.minimum(self.k, need[open_])
            if open_.size == n_reads:  # every read open (the first round): its queries as they are, no copy
                sub_codes, sub_off = self.qcodes, self.qoff
                subset_queries(self.qcodes, self.qoff, open_[:0])  # (empty: the warm-up, whose reads may all stay
                # open, compiles it)
            else:
                sub_codes, sub_off = subset_queries(self.qcodes, self.qoff, open_)
            self.memo.ids = query_ids(open_)
            win_q, windows = engine.candidate_windows(sub_codes, sub_off, round_e, self.memo)
            clock.lap("candidates")
            q, s, e, d = engine.verify_windows(sub_codes, sub_off, round_e, win_q, windows, ref.packed, ref.nmask)
            partial = round_e[q >> 1] < qerr[open_[q >> 1]]  # found with fewer edits than the read's e: runs merge
            q = 2 * open_[q >> 1] + (q & 1)  # back to the batch's query numbers
            clock.lap("verify")
            searched[open_] = round_e
            best, at_best = best_and_ties(n_reads, q >> 1, d)
            merge = _to_merge(q, partial, at_best, opts, self.tie_rule)
            if merge.any():
                keep = run_heads(self.qcodes, self.qoff, qerr, q, s, e, d, merge, ref.starts, ref.packed, ref.nmask)
                q, s, e, d, partial = q[keep], s[keep], e[keep], d[keep], (partial & ~merge)[keep]
                best, at_best = best_and_ties(n_reads, q >> 1, d)  # (joined parts count once)
                clock.lap("runs")
            clock.tally(f"round k = {self.k}", since, open_.size)
            # This round's locations (query, start, end, dist, partial) replace the open reads' earlier ones (a
            # search with more edits finds them all again), so only the open reads' strata can change.
            self.last[open_] = len(self.rounds)
            self.rounds.append((q, s, e, d, partial))
            read = q >> 1
            stop = best if opts.best_only else _nth_dist(read, d, n_reads, opts.max_hits)
            known = (stop >= 0) & searchable
            self.best[open_] = best[open_]
            self._unique_spans(open_, read, s, e, d, best, at_best)
            extra = np.maximum(np.where(at_best > 1, *opts.extra_strata[::-1]), self.extra)
            need[known] = np.minimum(qerr[known], stop[known] + extra[known])
            if self.trial:  # round 0 again, for the rest of the batch, where it settled enough of the sample
                self.trial = False
                if np.count_nonzero(searched[open_] >= need[open_]) >= engine.round0_min * open_.size:
                    continue
            self.k = next_round(self.k, max(self.opts.extra_strata))

    def _unique_spans(self, open_: np.ndarray, read: np.ndarray, s: np.ndarray, e: np.ndarray, d: np.ndarray,
                      best: np.ndarray, at_best: np.ndarray) -> None:
        """The spans of this round's unique best locations (its reads' only ones at their best distance)."""
        self.alone_s[open_] = -1
        one = (d == best[read]) & (at_best[read] == 1)
        self.alone_s[read[one]] = s[one]
        self.alone_e[read[one]] = e[one]

    def _prove_alone(self) -> None:
        """Reads whose next round is the stratum behind a unique best b, which the engine's index proves empty:
        searched to their need (module notes). Tried once per read (alone_s is cleared) and only where the read's
        e is at least 2b + 1 (filter/fm_alone.py)."""
        best, need, searched = self.best, self.need, self.searched
        ask = np.flatnonzero((self.alone_s >= 0) & (best >= 1) & (searched == best) & (need == best + 1)
                             & (self.qerr >= 2 * best + 1))
        if ask.size == 0:
            return
        since = self.clock.t
        alone = self.engine.spans_alone(self.ref.packed, self.ref.nmask, self.ref.starts, self.alone_s[ask],
                                        self.alone_e[ask], 2 * best[ask] + 2)
        self.alone_s[ask] = -1
        searched[ask[alone]] = need[ask[alone]]
        self.clock.lap("candidates")
        self.clock.tally("proving unique bests alone", since, ask.size)

    def raise_extra(self, reads: np.ndarray, extra: np.ndarray) -> None:
        """Reads `reads` to be searched `extra` strata beyond their stop stratum (at most their e) by the next
        search(); reads without any location were searched to their e already."""
        raise_need(self.need, self.best, self.qerr, self.extra, reads, extra)

    def locations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Locations (query, start, end, dist; by query then start) up to each read's `need`."""
        ref, qerr, need, last = self.ref, self.qerr, self.need, self.last
        kept = [[a[last[loc[0] >> 1] == i] for a in loc] for i, loc in enumerate(self.rounds)]
        q, s, e, d, partial = (np.concatenate(col) for col in zip(*kept, strict=True))
        keep = d <= need[q >> 1]
        if partial.any():
            keep &= run_heads(self.qcodes, self.qoff, qerr, q, s, e, d, partial, ref.starts, ref.packed, ref.nmask)
            self.clock.lap("runs")
        q, s, e, d = q[keep], s[keep], e[keep], d[keep]
        order = lex_order(q, s)
        return q[order], s[order], e[order], d[order]


def stratified_locate(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, searchable: np.ndarray,
                      engine: Engine, ref: Reference, opts: MapOptions, clock: StageClock) -> tuple[np.ndarray, ...]:
    """Locations (query, start, end, dist; by query then start) up to each read's `need` (which
    records.searched_depth derives again from them)."""
    search = StrataSearch(qcodes, qoff, qerr, searchable, engine, ref, opts, clock)
    search.search()
    return search.locations()
