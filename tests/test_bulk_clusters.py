"""Bulk verification's clusters (engines/base.py): which of a read's candidate windows are verified as one, and
that the engines built on them still report the oracle's locations with fewer windows verified."""

from __future__ import annotations

import numpy as np
from helpers import assert_oracle, engine_locations, repetitive_genome, sample_reads
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.engines import base
from seedmap.engines.base import CLUSTER_GAP, CLUSTER_SPREAD, _bulk_clusters, _passed
from seedmap.engines.fm import FmEngine
from seedmap.index import fm
from seedmap.io.reference import Reference
from seedmap.verify.bulk import bulk_distances

M = 20  # read length of the generated queries


def chunk(queries: list[list[tuple[int, int, int]]], first: int) -> tuple[np.ndarray, ...]:
    """cand_off, cand_len and the windows of queries[first:] (each sorted by start, as the engines fill them):
    a candidate (step, extra, diag) starts `step` after the one before, is M + 2e + extra long."""
    cand_len = np.array([len(q) for q in queries], dtype=np.int64)
    cand_off = np.zeros(cand_len.size + 1, dtype=np.int64)
    np.cumsum(cand_len, out=cand_off[1:])
    ws, we, wd = [], [], []
    for q in queries[first:]:
        at = 1000
        for step, extra, diag in q:
            at += step
            ws.append(at)
            we.append(at + M + 2 * 3 + extra)
            wd.append(at + diag)
    return cand_off, cand_len, *(np.array(x, dtype=np.int64) for x in (ws, we, wd))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from([0, 0, 1, 2, 3, 5, 40]), st.sampled_from([0, 0, 3, 20]),
                                   st.integers(0, 1)), max_size=10), min_size=1, max_size=8),
       st.integers(0, 3), st.integers(0, 3))
def test_clusters_join_close_overlapping_windows(queries, bulk_min, first):
    first = min(first, len(queries) - 1)
    last = len(queries)
    cand_off, cand_len, ws, we, wd = chunk(queries, first)
    qoff = np.arange(0, M * (2 * last + 1), M, dtype=np.int64)
    qerr = np.full(last, 3, dtype=np.int64)
    member, cq, cs, ce = _bulk_clusters(first, last, cand_off, cand_len, bulk_min, qoff, qerr, ws, we, wd)
    widest = M + 2 * 3 + min(CLUSTER_SPREAD, 62 - 4 * 3)
    base_ = cand_off[first]
    seen = 0
    for qi in range(first, last):
        lo, hi = cand_off[qi] - base_, cand_off[qi] - base_ + cand_len[qi]
        if cand_len[qi] <= bulk_min:
            assert np.all(member[lo:hi] == -1)
            continue
        prev = -1
        for k in range(lo, hi):
            if prev >= 0 and (ws[k], we[k], wd[k]) == (ws[prev], we[prev], wd[prev]):
                assert member[k] == -1  # a copy of the window before it
                continue
            c = member[k]
            assert cq[c] == qi and cs[c] <= ws[k] and we[k] <= ce[c] and ce[c] - cs[c] <= widest
            if prev < 0 or member[prev] != c:
                assert c == seen  # clusters in order, each starting at its first window
                assert cs[c] == ws[k]
                if prev >= 0:  # why the window did not join the cluster before it
                    p = member[prev]
                    assert (ws[k] - ws[prev] > CLUSTER_GAP or ws[k] >= ce[p]
                            or max(ce[p], we[k]) - cs[p] > widest)
                seen += 1
            else:
                assert ws[k] - ws[prev] <= CLUSTER_GAP and ws[k] < ce[c]
            prev = k
    assert seen == cq.size
    ends = np.zeros(cq.size, dtype=np.int64)
    np.maximum.at(ends, member[member >= 0], we[member >= 0])
    assert np.array_equal(ends, ce)
    verdict = np.arange(cq.size) % 2 == 0
    ok = _passed(first, last, cand_off, cand_len, bulk_min, member, verdict)
    kept = np.zeros(member.size, dtype=np.bool_)
    kept[member >= 0] = verdict[member[member >= 0]]
    bulk_q = np.repeat(np.arange(first, last), cand_len[first:last]) if last > first else np.zeros(0, np.int64)
    assert np.array_equal(ok, np.where(cand_len[bulk_q] > bulk_min, kept, True))


def test_repeat_family_candidates_are_verified_as_fewer_windows(rng, monkeypatch):
    """A test that can fail: on a repetitive genome the fm engine's candidates (seeds of one copy on nearby
    diagonals) are verified as fewer windows than there are distinct candidates, and the engine still reports
    exactly the oracle's locations."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    engine = FmEngine(fm.build(ref, 4), ref.starts, bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask)
    calls = []

    def counting(qcodes, qoff, qerr, cq, cs, ce, *rest):
        calls.append(cq.size)
        return bulk_distances(qcodes, qoff, qerr, cq, cs, ce, *rest)

    engine.bulk = counting
    distinct = []
    real = base._bulk_clusters

    def spy(first, last, cand_off, cand_len, bulk_min, qoff, qerr, ws, we, wd):
        out = real(first, last, cand_off, cand_len, bulk_min, qoff, qerr, ws, we, wd)
        distinct.append(int(np.count_nonzero(out[0] >= 0)))
        return out

    monkeypatch.setattr(base, "_bulk_clusters", spy)
    reads = sample_reads(rng, seqs, 40, (60, 100), 4)
    assert assert_oracle(engine_locations(engine, ref, reads, 4), ref, reads, 4) > 40
    assert sum(calls) < sum(distinct)
