"""The count pass looks a chunk's windows up in sweeps (keys, then seed blocks, then searches) so that cache
misses overlap. It must give exactly what looking each window up on its own gives: the same counts, the
same saved ranges in the same order, the same 'did not fit' marks. The reference here is the unstaged
lookup, one window after another, over every plan, index shape, fe, both lookups (binary search and
perfect hash), reads with N and reads too short for a window."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import batch_of, genome_with_n, mutate, repetitive_genome, sample_reads

from seedmap.filter.degenerate import max_patterns
from seedmap.filter.neighborhood_passes import (
    KNOWN_COLUMNS,
    Memo,
    Plan,
    SeedBlocks,
    _lookup,
    count_candidates,
    new_scratch,
    no_memo,
)
from seedmap.filter.plan import window_plan
from seedmap.filter.windows import Saved
from seedmap.index import neighborhood
from seedmap.index.perfect_hash import Tables
from seedmap.io.columns import Queries
from seedmap.io.reference import Reference
from seedmap.pipeline import errors_per_read
from seedmap.ranges import gather_ranges


def one_at_a_time(qcodes, qoff, qerr, care, l, windows, step, fe, ix, ph, room):
    """Counts, saved ranges and n_saved from _lookup called window by window (the unstaged lookup)."""
    nq = qoff.size - 1
    counts = np.zeros(nq, dtype=np.int64)
    saved = [[] for _ in range(nq)]
    cap = max_patterns(l, fe)
    out = np.empty((cap, 2), dtype=np.int64)
    scratch = new_scratch(ph, cap)
    for qi in range(nq):
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        e = int(qerr[qi >> 1])
        if q.size <= e:
            continue
        length, offsets = window_plan(q.size, e, int(care[-1]) + 1 + l, windows, step)
        for o in offsets:
            n = _lookup(q, o, length, Plan(care, l, windows, step, fe), blocks_of(ix), ph, out, scratch)
            for i in range(n):
                counts[qi] += out[i, 1] - out[i, 0]
                saved[qi].append((o, out[i, 0], out[i, 1]))
    n_saved = np.array([len(s) if len(s) <= room else -1 for s in saved], dtype=np.int64)
    return counts, saved, n_saved


def blocks_of(ix):
    return SeedBlocks(ix.seed_start, ix.nbs, ix.nb_pos, ix.pos)


def tables_of(ix, perfect_hash):
    return Tables(ix.ph.ph_off, ix.ph.ph_block, ix.ph.ph_g, ix.ph.ph_table) if perfect_hash else None


def reads_with_n(rng, seqs, n):
    reads = sample_reads(rng, seqs, n, (3, 140), 3)
    for r in reads[::5]:  # an N in every fifth read, somewhere
        r[int(rng.integers(0, r.size))] = 4
    reads.append(np.full(30, 4, dtype=np.uint8))
    return reads


@pytest.mark.parametrize("u,l,shape", [(4, 8, ""), (6, 16, ""), (10, 16, ""), (3, 0, ""), (0, 8, "##-#-##")])
@pytest.mark.parametrize("fe,windows,step,room", [(0, 0, 0, 4), (1, 0, 0, 12), (2, 2, 0, 3), (0, 0, 3, 1),
                                                  (0, 0, 0, 1)])
@pytest.mark.parametrize("perfect_hash", [False, True])
def test_staged_count_equals_one_lookup_at_a_time(rng, u, l, shape, fe, windows, step, room, perfect_hash):
    if fe > l:
        pytest.skip("more substitutions than neighborhood bases")
    seqs = repetitive_genome(rng) + [genome_with_n(rng, 2000)]
    ref = Reference.from_codes(["r1", "r2", "tiny", "n"], seqs)
    ix = neighborhood.build(ref, u, l, shape, ph=perfect_hash)
    ph = tables_of(ix, perfect_hash)
    reads = reads_with_n(rng, seqs, 120) + [mutate(rng, seqs[0][:90].copy(), 1)]
    batch = batch_of(reads)
    qerr = errors_per_read(batch.lengths, 3)
    qcodes, qoff = batch.queries()
    care = np.ascontiguousarray(ix.care)
    nq = qoff.size - 1
    saved = np.full((nq, room, 3), -7, dtype=np.int64)
    n_saved = np.full(nq, -7, dtype=np.int64)
    counts = np.zeros(nq, dtype=np.int64)
    count_candidates(Queries(qcodes, qoff, qerr), Plan(care, ix.l, windows, step, fe), blocks_of(ix), ph, no_memo(),
                     Saved(saved, n_saved), counts, 0, nq)
    want_counts, want_saved, want_n = one_at_a_time(qcodes, qoff, qerr, care, ix.l, windows, step, fe, ix, ph, room)
    assert np.array_equal(counts, want_counts)
    assert np.array_equal(n_saved, want_n)
    for qi in range(nq):
        k = min(len(want_saved[qi]), room)
        assert [tuple(r) for r in saved[qi, :k].tolist()] == want_saved[qi][:k]
    assert counts.sum() > 0 and (n_saved == -1).any() == (max(map(len, want_saved)) > room)


@pytest.mark.parametrize("fe", [0, 1])
@pytest.mark.parametrize("perfect_hash", [False, True])
def test_strata_rounds_reuse_their_lookups(rng, fe, perfect_hash):
    """The count pass with a memo (--best's rounds at e = 0, 1, 2, 3 on shrinking sets of queries) counts and
    saves what the unstaged lookup does at each e, and the memo is read: spoiled, it changes the counts."""
    seqs = repetitive_genome(rng) + [genome_with_n(rng, 2000)]
    ref = Reference.from_codes(["r1", "r2", "tiny", "n"], seqs)
    ix = neighborhood.build(ref, 10, 16, "", ph=perfect_hash)
    ph = tables_of(ix, perfect_hash)
    reads = reads_with_n(rng, seqs, 120) + [mutate(rng, seqs[0][:100].copy(), 1)]
    qcodes, qoff = batch_of(reads).queries()
    care = np.ascontiguousarray(ix.care)
    nq = qoff.size - 1
    room = 8

    def count(ids, known, e, queries):
        sub_codes, sub_off = gather_ranges(qcodes, qoff, queries)
        qerr = np.full(queries.size, e, dtype=np.int64)  # (one e for all: the kernel reads qerr[query >> 1])
        saved = np.full((queries.size, room, 3), -7, dtype=np.int64)
        n_saved = np.full(queries.size, -7, dtype=np.int64)
        counts = np.zeros(queries.size, dtype=np.int64)
        count_candidates(Queries(sub_codes, sub_off, qerr), Plan(care, ix.l, 0, 0, fe), blocks_of(ix), ph,
                         Memo(ids[queries], known), Saved(saved, n_saved), counts, 0, queries.size)
        return counts, saved, n_saved, sub_codes, sub_off

    def expected(e, sub_codes, sub_off):
        qerr = np.full(sub_off.size, e, dtype=np.int64)
        return one_at_a_time(sub_codes, sub_off, qerr, care, ix.l, 0, 0, fe, ix, ph, room)

    ids = np.arange(nq, dtype=np.int64)
    known = np.zeros((nq, KNOWN_COLUMNS), dtype=np.int64)
    queries = np.arange(nq, dtype=np.int64)
    for e in (0, 1, 2, 3):
        counts, saved, n_saved, sub_codes, sub_off = count(ids, known, e, queries)
        want_counts, want_saved, want_n = expected(e, sub_codes, sub_off)
        assert np.array_equal(counts, want_counts)
        assert np.array_equal(n_saved, want_n)
        for qi in range(queries.size):
            k = min(len(want_saved[qi]), room)
            assert [tuple(r) for r in saved[qi, :k].tolist()] == want_saved[qi][:k]
        queries = queries[::2]  # the next round searches some of the queries again
    assert (known[:, 0] > 0).any()

    # Spoiled (every kept range empty), the memo of the e = 0 round takes the e = 1 round's first windows' hits.
    known = np.zeros((nq, KNOWN_COLUMNS), dtype=np.int64)
    everything = np.arange(nq, dtype=np.int64)
    count(ids, known, 0, everything)
    known[:, 4] = known[:, 3]
    spoiled = count(ids, known, 1, everything)[0]
    fresh = count(ids, np.zeros((nq, KNOWN_COLUMNS), dtype=np.int64), 1, everything)[0]
    assert (spoiled <= fresh).all() and (spoiled < fresh).any()
