"""Stratified --best / -n: the early-stopping search gives exactly the records of the all-mapping search
filtered to the same strata, and the best stratum is the oracle's, on every engine."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest
from helpers import batch_of, make_engine, random_genome, repetitive_genome, sample_reads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import oracle_locations

from seedmap.engines.fm import FmEngine
from seedmap.index import fm
from seedmap.io.reference import Reference
from seedmap.options import MapOptions, errors_per_read
from seedmap.pipeline import strata
from seedmap.pipeline.stages import SamFormatter, StageClock, map_batch
from seedmap.pipeline.strata import stratified_locate, subset_queries
from seedmap.pipeline.timings import RunTimings
from seedmap.records import make_records, searched_depth
from seedmap.verify.bulk import bulk_distances

ENGINES = ["neighborhood", "ph", "bpr", "kmer", "fm"]


def engine_of(kind: str, ref: Reference):
    if kind == "fm":
        return FmEngine(fm.build(ref, 4), ref.starts, bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask)
    if kind in ("ph", "bpr"):
        return make_engine(ref, u=6, l=8, filter=kind, **({"fe": 1} if kind == "bpr" else {}))
    return make_engine(ref, kind, u=6, l=8, k=6)


def tandem_genome(rng: np.random.Generator) -> list[np.ndarray]:
    """Repeats whose copies a search with few edits keeps apart and one with all e joins: tandem arrays of a unit
    (1-7 bp) with a few substitutions, next to random sequence."""
    parts = [random_genome(rng, 120)]
    for unit in (1, 2, 3, 5, 7):
        arr = np.tile(random_genome(rng, unit), 240 // unit)
        for k in rng.integers(0, arr.size, 3):
            arr[k] = rng.integers(0, 4)
        parts += [arr, random_genome(rng, 60)]
    return [np.concatenate(parts), random_genome(rng, 400)]


def both_ways(ref: Reference, engine, reads: list[np.ndarray], opts: MapOptions) -> tuple[bytes, bytes]:
    batch = batch_of(reads)
    fmt = SamFormatter(ref)
    early, _ = map_batch(batch, engine, fmt, opts)
    full, _ = map_batch(batch, engine, fmt, MapOptions(**{**vars(opts), "early_stop": False}))
    return bytes(early), bytes(full)


@pytest.mark.parametrize("kind", ENGINES)
@pytest.mark.parametrize("genome", ["random", "repetitive", "tandem"])
def test_same_records_as_all_mapping(rng, kind, genome):
    seqs = {"random": lambda: [random_genome(rng, 2500), random_genome(rng, 900)],
            "repetitive": lambda: repetitive_genome(rng), "tandem": lambda: tandem_genome(rng)}[genome]()
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    engine = engine_of(kind, ref)
    reads = sample_reads(rng, seqs, 60, (30, 90), 5)
    for opts in (MapOptions(errors=4, best_only=True, strata=1), MapOptions(errors=4, best_only=True),
                 MapOptions(errors=4, best_only=True, strata=2), MapOptions(errors=4, max_hits=1),
                 MapOptions(errors=4, max_hits=3, strata=0), MapOptions(errors=0.06, best_only=True, max_hits=2)):
        early, full = both_ways(ref, engine, reads, opts)
        assert early == full, (kind, genome, opts)


@pytest.mark.parametrize("kind", ["neighborhood", "fm"])
def test_best_stratum_is_the_oracles(rng, kind):
    """--best reports every location of the best stratum of the whole-genome DP, nothing else."""
    seqs = tandem_genome(rng) + repetitive_genome(rng)[:2]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    engine = engine_of(kind, ref)
    reads = sample_reads(rng, seqs, 40, (30, 80), 4)
    batch = batch_of(reads)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, 4)
    opts = MapOptions(errors=4, best_only=True, strata=0)
    q, s, e, d = stratified_locate(qcodes, qoff, qerr, batch.lengths > qerr, engine, ref, opts, StageClock())
    codes = ref.codes()
    checked = 0
    for i, read in enumerate(reads):
        want = oracle_locations(read, codes, ref.starts, 4)
        best = min((w[3] for w in want), default=None)
        want = {w for w in want if w[3] == best}
        got = {(int(q[k] & 1), int(s[k]), int(e[k]), int(d[k])) for k in np.flatnonzero(q >> 1 == i)}
        assert got == want, f"read {i}: missing {want - got}, extra {got - want}"
        checked += len(want)
    assert checked > 60


def test_tandem_repeats_join_runs(rng):
    """A test that can fail: in a tandem array a search with 0 edits sees many exact copies, one with all e
    run; without joining, --best would report more locations than the all-mapping search."""
    unit = np.array([0, 1, 2], np.uint8)
    g = np.concatenate([random_genome(rng, 100), np.tile(unit, 60), random_genome(rng, 100)])
    ref = Reference.from_codes(["a"], [g])
    read = g[100:130].copy()
    batch = batch_of([read])
    qcodes, qoff = batch.queries()
    qerr = np.array([3])
    engine = engine_of("neighborhood", ref)
    q, s, e, d = stratified_locate(qcodes, qoff, qerr, np.array([True]), engine, ref,
                                        MapOptions(errors=3, best_only=True, strata=0), StageClock())
    want = {w for w in oracle_locations(read, ref.codes(), ref.starts, 3) if w[3] == 0}
    assert len(want) == 1
    assert {(int(q[k] & 1), int(s[k]), int(e[k]), int(d[k])) for k in range(q.size)} == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 4), st.integers(0, 2), st.integers(0, 3), st.booleans(), st.integers(0, 2**31))
def test_property_tandem(rng, unit, strata, n_hits, best, seed):
    r = np.random.default_rng(seed)
    arr = np.tile(random_genome(r, unit), 150 // unit)
    for k in r.integers(0, arr.size, int(r.integers(0, 6))):
        arr[k] = r.integers(0, 4)
    g = np.concatenate([random_genome(r, 60), arr, random_genome(r, 60), arr[:90], random_genome(r, 40)])
    ref = Reference.from_codes(["a"], [g])
    engine = engine_of("neighborhood", ref)
    reads = sample_reads(r, [g], 12, (24, 50), 4)
    opts = MapOptions(errors=4, best_only=best, max_hits=n_hits if (n_hits or not best) else 0, strata=strata)
    if not opts.best_only and opts.max_hits == 0:
        opts = MapOptions(errors=4, max_hits=1, strata=strata)
    early, full = both_ways(ref, engine, reads, opts)
    assert early == full


def test_searched_depth():
    read = np.array([0, 0, 0, 1, 1, 2])
    dist = np.array([1, 1, 3, 0, 2, 4])
    rank = np.array([0, 1, 2, 0, 1, 0])
    edits = np.array([5, 5, 5, 5])
    assert searched_depth(4, read, dist, rank, edits, True, 0, (1, 1)).tolist() == [2, 1, 5, 5]
    assert searched_depth(4, read, dist, rank, edits, False, 2, (0, 0)).tolist() == [1, 2, 5, 5]
    assert searched_depth(4, read, dist, rank, edits, True, 2, (2, 2)).tolist() == [3, 2, 5, 5]
    # the default: a stratum beyond a unique best (reads 1 and 2), none beyond a tie (read 0)
    assert searched_depth(4, read, dist, rank, edits, True, 0, (1, 0)).tolist() == [1, 1, 5, 5]


def test_mapq_counts_the_best_stratum_and_the_next():
    """--best: a location two edits behind the best does not lower MAPQ (MAPQ counts one stratum behind the best,
    mapq.py); one edit behind does; --strata 0 leaves the next stratum unsearched, the virtual location there."""
    def mapq(dists: list[int], strata: tuple[int, int] = (1, 1)) -> int:
        n = len(dists)
        recs = make_records(1, np.zeros(n, dtype=np.int64), np.arange(n) * 500 + 10, np.array(dists), True, 0,
                            np.array([5]), strata=strata)
        return int(recs.mapq[0])

    assert mapq([0, 2]) == mapq([0]) == 60
    assert mapq([0, 1]) < 30
    assert mapq([0], (0, 0)) == mapq([0, 1], (0, 0)) < 30


def test_default_best_mapq_is_all_mappings(rng):
    """--best's default MAPQ is all-mapping's, read by read: a unique best location with nothing one edit behind
    gets 60 (it got 40: the strata beyond the next were an unseen prior only there), one with a runner-up one edit
    behind about 20 (reads without base qualities: one edit, EDIT_RATIO), a tie 0."""
    seg = random_genome(rng, 70)
    near = seg.copy()
    near[35] = (near[35] + 1) % 4  # a copy one substitution away
    g = np.concatenate([random_genome(rng, 400), seg, random_genome(rng, 300), near, random_genome(rng, 300),
                        seg[:50], random_genome(rng, 200)])
    ref = Reference.from_codes(["a"], [g])
    engine = engine_of("neighborhood", ref)
    unique, runner_up, tie = g[50:110].copy(), seg[:60].copy(), seg[:45].copy()
    reads = [unique, runner_up, tie] + sample_reads(rng, [g], 40, (40, 90), 3)
    fmt = SamFormatter(ref)
    mapq = {}
    for best in (True, False):
        text, _ = map_batch(batch_of(reads, quals=False), engine, fmt, MapOptions(errors=4, best_only=best))
        mapq[best] = {f[0]: int(f[4]) for f in (x.split("\t") for x in bytes(text).decode().splitlines())
                      if not int(f[1]) & 256}
    assert [mapq[True][r] for r in ("r0", "r1", "r2")] == [60, 20, 0]
    assert mapq[True] == mapq[False]


@pytest.mark.parametrize("kind", ["neighborhood", "fm"])
@pytest.mark.parametrize("settles", [True, False])
def test_round_0_is_tried_on_a_sample(rng, monkeypatch, kind, settles):
    """A batch searches its first ROUND0_SAMPLE reads at e = 0; the rest too only where enough of those were
    settled there (the engine's round0_min; else they start at e = 1). The records are all-mapping's either way."""
    monkeypatch.setattr(strata, "ROUND0_SAMPLE", 8)
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    engine = engine_of(kind, ref)
    engine.round0_min = 0.0 if settles else 1.01
    at_0 = []
    search = engine.candidate_windows

    def logged(qcodes, qoff, qerr, memo=None):
        if qerr.max(initial=-1) == 0:
            at_0.append(qerr.size)
        return search(qcodes, qoff, qerr, memo)

    engine.candidate_windows = logged
    reads = sample_reads(rng, seqs, 40, (30, 90), 4)
    early, full = both_ways(ref, engine, reads, MapOptions(errors=4, best_only=True))
    assert early == full
    assert at_0 == ([8, 32] if settles else [8])


@pytest.mark.parametrize("kind", ["neighborhood", "fm"])
@pytest.mark.parametrize("genome", ["repetitive", "tandem"])
def test_done_reads_searched_again(rng, monkeypatch, kind, genome):
    """Where only a few reads of a batch are done (RESEARCH), a round searches them again with the rest, each at
    the stratum it needs, instead of copying the others' queries: the records stay all-mapping's, for every
    kind of stop and strata."""
    monkeypatch.setattr(strata, "ROUND0_SAMPLE", 8)
    monkeypatch.setattr(strata, "RESEARCH", 1)  # any number of done reads is few enough
    seqs = repetitive_genome(rng) if genome == "repetitive" else tandem_genome(rng)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    engine = engine_of(kind, ref)
    engine.round0_min = 1.01  # the trial's settled reads are done, the rest start at e = 1
    sizes = []
    search = engine.candidate_windows

    def logged(qcodes, qoff, qerr, memo=None):
        sizes.append(qerr.size)
        return search(qcodes, qoff, qerr, memo)

    engine.candidate_windows = logged
    reads = sample_reads(rng, seqs, 40, (30, 90), 4)
    for opts in (MapOptions(errors=4, best_only=True), MapOptions(errors=4, best_only=True, strata=1),
                 MapOptions(errors=4, max_hits=2)):
        sizes.clear()
        early, full = both_ways(ref, engine, reads, opts)
        assert early == full, opts
        assert sizes[1] == 40  # the round after the trial: every read


def test_subset_queries():
    codes = np.arange(20, dtype=np.uint8)
    off = np.array([0, 3, 6, 10, 14, 17, 20])
    sub, sub_off = subset_queries(codes, off, np.array([2, 0]))
    assert sub_off.tolist() == [0, 3, 6, 9, 12]
    assert sub.tolist() == [14, 15, 16, 17, 18, 19, 0, 1, 2, 3, 4, 5]


def test_the_rounds_are_tallied_for_verbose(rng, caplog):
    """-v's breakdown of the search by round (StageClock.tally): the first round's reads are every searchable read
    (fewer than a round-0 trial's sample), a later round's those still open, the index's proofs those it was asked
    about; their seconds are part of the stages' (not added to them), and the report lists them with their reads."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    reads = sample_reads(rng, seqs, 60, (30, 90), 4) + [random_genome(rng, 3)]  # (the last one no longer than e)
    batch = batch_of(reads)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, 4)
    searchable = batch.lengths > qerr
    clock = StageClock()
    stratified_locate(qcodes, qoff, qerr, searchable, engine_of("fm", ref), ref, MapOptions(errors=4, best_only=True),
                      clock)
    rounds = {k: n for k, (_, n) in clock.parts.items() if k.startswith("round k = ")}
    assert rounds.pop("round k = 0") == np.count_nonzero(searchable) < len(reads)
    assert rounds and all(0 < n < np.count_nonzero(searchable) for n in rounds.values())
    assert 0 < clock.parts["proving unique bests alone"][1] <= len(reads)
    parts = sum(value for value, _ in clock.parts.values())
    assert 0 < parts <= clock.seconds["candidates"] + clock.seconds["verify"] + clock.seconds["runs"] + 1e-9
    timings = RunTimings()
    timings.merge(clock.seconds, clock.parts)
    timings.merge(clock.seconds, clock.parts)  # a second batch's
    with caplog.at_level(logging.INFO, logger="seedmap"):
        timings.report(1.0, 1, None)
    line = rf"round k = 0 +{2 * clock.parts['round k = 0'][0]:.2f}  {2 * np.count_nonzero(searchable):,} reads"
    assert re.search(line, caplog.text)
