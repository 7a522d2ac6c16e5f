"""Runs at the full e (verify/runs.py): whether two neighbouring locations found with a smaller e lie
in one run, against the plain DP's last row (every end between them a hit), and which location stands for
each run."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import dp_last_row, mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seedmap.io.reference import pack_codes
from seedmap.verify.runs import joined, run_heads


def joined_pairs(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray, loc_end: np.ndarray,
                 pairs: np.ndarray, packed: np.ndarray, nmask: np.ndarray) -> list[bool]:
    """joined() of locations pairs[k] and pairs[k] + 1 (one sequence starting at 0)."""
    nw = (int(np.diff(qoff).max()) + 63) >> 6
    peq, pv, mv = np.empty(8 * (nw + 2), np.uint64), np.empty(nw, np.uint64), np.empty(nw, np.uint64)
    out = []
    for i in pairs:
        qi = loc_q[i]
        out.append(bool(joined(qcodes, qoff[qi], qoff[qi + 1] - qoff[qi], qerr[qi >> 1], loc_end[i], loc_end[i + 1], 0,
                               packed, nmask, peq, pv, mv)))
    return out


def _tandem_text(rng: np.random.Generator, period: int, copies: int, flank: int, n_rate: float) -> np.ndarray:
    """Random flanks around a tandem array of a diverged unit: runs join across copies at a large e."""
    unit = rng.integers(0, 4, period).astype(np.uint8)
    parts = [rng.integers(0, 4, flank).astype(np.uint8)]
    for _ in range(copies):
        parts.append(mutate(rng, unit, int(rng.integers(0, 2))) if period > 4 else unit)
    parts.append(rng.integers(0, 4, flank).astype(np.uint8))
    t = np.concatenate(parts)
    t[rng.random(t.size) < n_rate] = 4
    return t


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), period=st.sampled_from([1, 2, 3, 7, 20]), m=st.sampled_from([30, 70, 130]),
       e=st.integers(1, 8), n_rate=st.sampled_from([0.0, 0.01]))
def test_joined_runs_match_the_dp(seed, period, m, e, n_rate):
    rng = np.random.default_rng(seed)
    t = _tandem_text(rng, period, copies=(2 * m) // period + 2, flank=m + 20, n_rate=n_rate)
    start = int(rng.integers(m // 2, t.size - 2 * m))
    read = mutate(rng, t[start:start + m], int(rng.integers(0, e + 1)))
    read = read[:m] if read.size >= m else np.concatenate([read, t[:m - read.size]])
    last = dp_last_row(read, t)  # last[j]: best cost of an alignment ending at column j (global end j)
    hit_ends = np.flatnonzero(last <= e)
    if hit_ends.size < 2:
        return
    # pairs of hit ends, near and far, the second after the first (the locations' ends, sorted)
    a = np.sort(rng.choice(hit_ends, size=min(12, hit_ends.size), replace=False))
    pairs = np.flatnonzero(a[1:] > a[:-1])
    packed, nmask = pack_codes(t)
    qcodes = read.astype(np.uint8)
    qoff = np.array([0, m, 2 * m], dtype=np.int64)
    out = joined_pairs(np.concatenate([qcodes, qcodes]), qoff, np.array([e]), np.zeros(a.size, dtype=np.int64),
                       a.astype(np.int64), pairs, packed, nmask)
    want = [bool((last[a[k]:a[k + 1] + 1] <= e).all()) for k in pairs]
    assert out == want


def test_joined_runs_inside_a_homopolymer_and_not_across_a_gap():
    rng = np.random.default_rng(3)
    t = np.concatenate([rng.integers(0, 4, 60), np.zeros(80), rng.integers(0, 4, 60)]).astype(np.uint8)
    read = np.zeros(40, dtype=np.uint8)
    last = dp_last_row(read, t)
    ends = np.flatnonzero(last <= 2)
    packed, nmask = pack_codes(t)
    loc_end = np.array([ends[0], ends[-1], ends[-1] + 30], dtype=np.int64)
    out = joined_pairs(read, np.array([0, 40], dtype=np.int64), np.array([2]), np.zeros(3, dtype=np.int64), loc_end,
                       np.array([0, 1]), packed, nmask)
    assert out == [True, False]


@pytest.mark.parametrize("seed", range(4))
def test_joined_runs_of_several_reads_in_one_call(seed):
    """Pairs of two reads of different lengths (one and three 64-base words) and edits, interleaved in one
    call: each pair is decided with its own read's masks and e."""
    rng = np.random.default_rng(seed)
    array = _tandem_text(rng, 3, copies=100, flank=200, n_rate=0.0)
    t = np.concatenate([array, array])  # two copies of a flanked array: pairs within one join, across the flank not
    reads, locs = [], []
    for r, (m, e) in enumerate([(40, 3), (150, 8)]):
        start = int(rng.integers(200, 500 - m))  # inside the array
        read = mutate(rng, t[start:start + m], int(rng.integers(0, e + 1)))[:m]
        reads.append((read, e))
        last = dp_last_row(read, t)
        hits = np.flatnonzero(last <= e)
        ends = np.sort(rng.choice(hits, size=min(40, hits.size), replace=False))
        ends = ends[np.r_[True, ends[1:] > ends[:-1]]]
        locs.append([(2 * r, int(a), int(b), bool((last[a:b + 1] <= e).all())) for a, b in
                     zip(ends[:-1], ends[1:], strict=True)])
    qcodes = np.concatenate([np.concatenate([x, x]) for x, _ in reads]).astype(np.uint8)
    sizes = [x.size for x, _ in reads for _ in range(2)]
    qoff = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=qoff[1:])
    mixed = [p for pair in itertools.zip_longest(*locs) for p in pair if p is not None]  # reads alternating
    loc_q = np.array([q for q, *_ in mixed for _ in range(2)], dtype=np.int64)
    loc_end = np.array([x for _, a, b, _ in mixed for x in (a, b)], dtype=np.int64)
    pairs = np.arange(0, loc_end.size, 2)
    out = joined_pairs(qcodes, qoff, np.array([e for _, e in reads]), loc_q, loc_end, pairs, *pack_codes(t))
    want = [w for *_, w in mixed]
    assert any(want) and not all(want)
    assert out == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), period=st.sampled_from([1, 3, 20]), m=st.sampled_from([30, 100]),
       e=st.integers(1, 6))
def test_run_heads_keep_the_best_part_of_each_run(seed, period, m, e):
    """Locations at hit ends of two sequences (a tandem array cut in two), in any order: the partial ones are
    joined where every end between two neighbours of one sequence is a hit (never across the cut, where the
    array runs on in the packed reference), and each run keeps its part of least distance, then span closest to
    m, then leftmost end; the others are all kept."""
    rng = np.random.default_rng(seed)
    text = _tandem_text(rng, period, copies=(4 * m) // period + 4, flank=m + 20, n_rate=0.0)
    cut = text.size // 2
    seqs = [text[:cut], text[cut:]]
    starts = np.array([0, seqs[0].size, seqs[0].size + seqs[1].size], dtype=np.int64)
    begin = int(rng.integers(m // 2, seqs[0].size - m))
    read = mutate(rng, seqs[0][begin:begin + m], int(rng.integers(0, e + 1)))
    read = read[:m] if read.size >= m else np.concatenate([read, seqs[0][:m - read.size]])
    rows = []  # (end, start, dist, hit ends of its sequence)
    for k, t in enumerate(seqs):
        last = dp_last_row(read, t)
        hits = np.flatnonzero(last <= e)
        hits = hits[hits >= 1]
        for end in np.sort(rng.choice(hits, size=min(15, hits.size), replace=False)) if hits.size else []:
            rows.append((int(starts[k] + end), int(starts[k] + end - m + rng.integers(-2, 3)), int(last[end]),
                         k, last <= e))
    if len(rows) < 2:
        return
    partial = rng.random(len(rows)) < 0.8
    # the oracle: partial rows by end, neighbours of one sequence joined where every end between is a hit
    want = ~partial.copy()
    idx = sorted(np.flatnonzero(partial), key=lambda i: rows[i][0])
    runs = []
    for i in idx:
        if runs:
            j = runs[-1][-1]
            hit, base = rows[i][4], starts[rows[i][3]]
            if rows[j][3] == rows[i][3] and hit[rows[j][0] - base:rows[i][0] - base + 1].all():
                runs[-1].append(i)
                continue
        runs.append([i])
    for run in runs:
        want[min(run, key=lambda i: (rows[i][2], abs(rows[i][0] - rows[i][1] - m), rows[i][0]))] = True
    order = rng.permutation(len(rows))
    q = np.zeros(len(rows), dtype=np.int64)
    s = np.array([rows[i][1] for i in order], dtype=np.int64)
    end = np.array([rows[i][0] for i in order], dtype=np.int64)
    d = np.array([rows[i][2] for i in order], dtype=np.int32)
    packed, nmask = pack_codes(np.concatenate(seqs))
    got = run_heads(np.concatenate([read, read]).astype(np.uint8), np.array([0, m, 2 * m], dtype=np.int64),
                    np.array([e]), q, s, end, d, partial[order], starts, packed, nmask)
    assert got.tolist() == want[order].tolist()
