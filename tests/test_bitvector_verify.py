"""The CPU verifier's window kernel (verify/bitvector.py) against the brute-force oracle (tests/oracle.py).

The oracle computes D(j) by a row-wise DP over the whole window and each hit's largest optimal start by
a reversed global DP, then groups runs of consecutive ends: every location, its start, end and distance
must match. Windows are random or repetitive (tandem copies with a few edits, where runs, ties and
several locations per window occur), with N on either side; reads span one to four 64-bit blocks.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import mutate_acgt, read_from, window, window_locations
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import _last_row

from seedmap.io.reference import Reference
from seedmap.verify import windows
from seedmap.verify.bitvector import build_masks, locations, start_of

BLOCK_EDGES = [1, 2, 31, 63, 64, 65, 100, 127, 128, 129, 200]



def found(q: np.ndarray, t: np.ndarray, e: int) -> list[tuple[int, int, int]]:
    s, en, d = locations(q, t, e)
    return [(int(a), int(b), int(c)) for a, b, c in zip(s, en, d, strict=True)]



@given(seed=st.integers(0, 2**32 - 1), m=st.sampled_from(BLOCK_EDGES), e=st.integers(0, 6),
       repetitive=st.booleans(), n_rate=st.sampled_from([0.0, 0.0, 0.02]))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_locations_equal_the_oracle(seed, m, e, repetitive, n_rate):
    rng = np.random.default_rng(seed)
    t = window(rng, m, repetitive, n_rate)
    q = read_from(rng, t, m, e, n_rate)
    if q.size <= e:
        return
    assert found(q, t, e) == window_locations(q, t, e)


@given(seed=st.integers(0, 2**32 - 1), m=st.sampled_from(BLOCK_EDGES), e=st.integers(0, 6),
       repetitive=st.booleans(), n_rate=st.sampled_from([0.0, 0.0, 0.02]))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_candidate_sized_windows_equal_the_oracle(seed, m, e, repetitive, n_rate):
    """Windows as the filter makes them, the read's length and a few diagonals: where the band of
    diagonals [-e, n - m + e + 1] fits a word, the one-word banded kernel gives the distances."""
    rng = np.random.default_rng(seed)
    n = max(1, m - e + int(rng.integers(0, 64 - e)))  # up to m + 63 - 2e: the widest band that fits, and one more
    t = window(rng, m, repetitive, n_rate)
    t = np.concatenate([t, t])[:n]
    q = read_from(rng, t, m, e, n_rate)
    if q.size <= e:
        return
    assert found(q, t, e) == window_locations(q, t, e)


@pytest.mark.parametrize("m", [40, 100, 150])
def test_tandem_repeat_gives_several_locations(rng, m):
    """A homopolymer-rich tandem repeat: the read fits at several shifts, so a window holds several runs
    of hit ends, some with tied best ends. The check on the oracle's answer keeps the case a hard one."""
    unit = np.array([0, 0, 0, 1, 2, 0, 0, 3], dtype=np.uint8)
    t = mutate_acgt(rng, np.tile(unit, 60), 3)
    q = mutate_acgt(rng, t[30:30 + m].copy(), 2)
    counts = []
    for e in range(1, 9):
        want = window_locations(q, t, e)
        assert found(q, t, e) == want
        counts.append(len(want))
    assert max(counts) >= 10


def test_n_never_matches():
    q = np.array([0, 1, 2, 3] * 10, dtype=np.uint8)
    t = np.concatenate([np.full(20, 2, dtype=np.uint8), q, np.full(20, 2, dtype=np.uint8)])
    assert found(q, t, 0) == [(20, 60, 0)]
    tn = t.copy()
    tn[35] = 4
    assert found(q, tn, 0) == []
    assert found(q, tn, 1) == window_locations(q, tn, 1) != []
    qn = q.copy()
    qn[5] = 4
    assert found(qn, t, 0) == []
    assert found(qn, t, 1) == window_locations(qn, t, 1) != []


@given(seed=st.integers(0, 2**32 - 1), m=st.sampled_from(BLOCK_EDGES), d=st.integers(1, 40),
       repetitive=st.booleans(), n_rate=st.sampled_from([0.0, 0.0, 0.05]))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_start_of_every_end(seed, m, d, repetitive, n_rate):
    """S(j) of every end j whose distance D(j) is d or less, against the oracle's reversed global DP:
    on the one-word band (d <= 31) and on Myers' blocks beyond, for ends close to the window's start
    (fewer than m + d columns to the left) and with N on either side."""
    rng = np.random.default_rng(seed)
    if m <= d:
        return
    t = window(rng, m, repetitive, n_rate)
    q = read_from(rng, t, m, d, n_rate)
    m = q.size
    if m <= d:
        return
    nw = (m + 63) >> 6
    peq = np.empty(8 * (nw + 2), dtype=np.uint64)
    rpeq = np.empty(8 * (nw + 2), dtype=np.uint64)
    build_masks(q, 0, m, peq, rpeq, np.empty(m, dtype=np.uint8))
    pv, mv, fb = (np.empty(nw, dtype=np.uint64), np.empty(nw, dtype=np.uint64), np.empty(8, dtype=np.uint64))
    row = _last_row(q, t, free_start=True)
    ends = np.flatnonzero((row <= d) & (np.arange(t.size + 1) > 0))
    for j in ends.tolist():
        g = _last_row(q[::-1], t[:j][::-1], free_start=False)
        want = j - int(np.flatnonzero(g == row[j])[0])
        assert start_of(rpeq, m, t, j, int(row[j]), pv, mv, fb) == want, (j, int(row[j]))


@given(seed=st.integers(0, 2**32 - 1), m=st.sampled_from([1, 2, 5, 31, 64, 100, 129]), copies=st.integers(0, 7),
       n_rate=st.sampled_from([0.0, 0.02]))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_zero_edit_windows_equal_the_oracle(seed, m, copies, n_rate):
    """verify.windows at e = 0 (its exact comparison): each window holds the read's copies, exact or one
    edit off, some back to back (one run), a homopolymer read in a homopolymer, Ns in the reference (the windows
    compared base by base) or in a read: the oracle's locations, the windows with more than SLOTS of them
    included. Reads of 1 to 129 bases: the packed comparison's partial last word, and every shift of the
    reference's bytes."""
    rng = np.random.default_rng(seed)
    q = np.zeros(m, dtype=np.uint8) if rng.random() < 0.2 else rng.integers(0, 4, m).astype(np.uint8)
    parts = [rng.integers(0, 4, int(rng.integers(0, 8))).astype(np.uint8)]
    for _ in range(copies):
        parts.append(q if rng.random() < 0.7 else mutate_acgt(rng, q, 1))
        parts.append(rng.integers(0, 4, int(rng.integers(0, 3))).astype(np.uint8))
    t = np.concatenate(parts + [np.zeros(m, dtype=np.uint8)])
    t[rng.random(t.size) < n_rate] = 4
    qs = [q, q[::-1].copy()]
    if n_rate and m > 1:  # a read N never matches either
        qs[1][int(rng.integers(0, m))] = 4
    ref = Reference.from_codes(["w"], [t])
    qcodes = np.concatenate(qs)
    qoff = np.array([0, m, 2 * m], dtype=np.int64)
    win = np.array([[0, t.size, 0, t.size]] * 2, dtype=np.int64)
    got = windows.verify(qcodes, qoff, np.zeros(1, dtype=np.int64), np.arange(2), win, ref.packed, ref.nmask)
    for qi, read in enumerate(qs):
        mine = got[0] == qi
        assert [(int(s), int(en), int(d)) for s, en, d in zip(got[1][mine], got[2][mine], got[3][mine],
                                                               strict=True)] == window_locations(read, t, 0)


def _windows_of(rng: np.random.Generator, size: int, m: int, count: int) -> list[tuple[int, int]]:
    """Up to `count` disjoint windows of t[:size], in order: candidate-sized (m - 2 to m + 8 bases) or wider,
    the first sometimes at base 0."""
    out, at = [], 0 if rng.random() < 0.3 else int(rng.integers(0, 8))
    for _ in range(count):
        width = max(1, m + int(rng.integers(-2, 9)) if rng.random() < 0.7 else m + int(rng.integers(9, 70)))
        if at + width > size:
            break
        out.append((at, at + width))
        at += width + int(rng.integers(0, 6))
    return out


def _copies_of_a_read(rng: np.random.Generator, m: int, copies: int, exact: float, most: int,
                      n_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """A read of m bases (a homopolymer, periodic or random) and a reference of `copies` copies of it, each exact
    with probability `exact`, else with 1 to `most` edits, some back to back (runs), then m + 40 random bases; Ns at
    n_rate."""
    kind = rng.integers(3)
    if kind == 0:
        q = np.full(m, int(rng.integers(4)), dtype=np.uint8)
    elif kind == 1:
        q = np.tile(rng.integers(0, 4, int(rng.integers(1, 4))).astype(np.uint8), m)[:m]
    else:
        q = rng.integers(0, 4, m).astype(np.uint8)
    parts = [rng.integers(0, 4, int(rng.integers(0, 12))).astype(np.uint8)]
    for _ in range(copies):
        parts.append(q if rng.random() < exact else mutate_acgt(rng, q, int(rng.integers(1, most + 1))))
        parts.append(rng.integers(0, 4, int(rng.integers(0, 4))).astype(np.uint8))
    parts.append(rng.integers(0, 4, m + 40).astype(np.uint8))
    t = np.concatenate(parts)
    t[rng.random(t.size) < n_rate] = 4
    return q, t


def _windows_equal_the_oracle(rng: np.random.Generator, reads: list[np.ndarray], qerr: np.ndarray,
                              t: np.ndarray) -> None:
    """verify.windows on up to 4 windows a read of t (_windows_of; query i searched with qerr[i // 2]) gives the
    oracle's locations of every window."""
    ref = Reference.from_codes(["w"], [t])
    win_q, win, want = [], [], []
    for qi, read in enumerate(reads):
        e = int(qerr[qi >> 1])
        if read.size <= e:
            continue
        for ws, we in _windows_of(rng, t.size, read.size, 4):
            win_q.append(qi)
            win.append((ws, we, ws, we))
            want += [(qi, s + ws, en + ws, d) for s, en, d in window_locations(read, t[ws:we], e)]
    if not win_q:
        return
    qoff = np.zeros(len(reads) + 1, dtype=np.int64)
    qoff[1:] = np.cumsum([r.size for r in reads])
    got = windows.verify(np.concatenate(reads), qoff, qerr, np.array(win_q), np.array(win, dtype=np.int64),
                         ref.packed, ref.nmask)
    assert [tuple(int(x) for x in row) for row in zip(*got, strict=True)] == sorted(want)


@given(seed=st.integers(0, 2**32 - 1), m=st.sampled_from([2, 3, 5, 31, 32, 33, 64, 100, 129]),
       copies=st.integers(0, 6), n_rate=st.sampled_from([0.0, 0.0, 0.01]))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_one_edit_windows_equal_the_oracle(seed, m, copies, n_rate):
    """verify.windows at e <= 1 (verify/one_edit.py on the packed read and reference): a reference of the
    read's copies with 0-2 edits (some back to back: runs; homopolymer and periodic reads: several ends per
    run), windows of candidate size and wider, one at base 0 or holding an N (the columns' path), reads
    searched at e = 1 and e = 0 in one call: the oracle's locations of every window, slots overflowing too."""
    rng = np.random.default_rng(seed)
    q, t = _copies_of_a_read(rng, m, copies, 0.4, 2, n_rate)
    other = mutate_acgt(rng, q, 1)[:m] if m > 2 else q.copy()
    reads = [q, q[::-1].copy(), other, other[::-1].copy()]
    if n_rate:
        reads[1][int(rng.integers(0, m))] = 4
    _windows_equal_the_oracle(rng, reads, np.array([1, int(rng.integers(0, 2))], dtype=np.int64), t)


@given(seed=st.integers(0, 2**32 - 1), m=st.sampled_from([3, 4, 5, 31, 32, 33, 64, 65, 100, 129]),
       copies=st.integers(0, 6), n_rate=st.sampled_from([0.0, 0.0, 0.01]))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_two_edit_windows_equal_the_oracle(seed, m, copies, n_rate):
    """verify.windows with reads searched at e = 2 (verify/two_edit.py on the packed read and reference) beside
    reads at 0 to 3 in one call (the others' kernels per window): copies of the read with 1-3 edits of every kind
    (two gaps in a row: the three-diagonal cases), homopolymer and periodic reads, windows of candidate size and
    wider, at base 0 or 1 or holding an N (the columns' path): the oracle's locations of every window. Each cost
    case of two_edit switched off in turn made this fail."""
    rng = np.random.default_rng(seed)
    q, t = _copies_of_a_read(rng, m, copies, 0.3, 3, n_rate)
    reads = [q, q[::-1].copy(), mutate_acgt(rng, q, 2), mutate_acgt(rng, q, 1)]
    if n_rate:
        reads[1][int(rng.integers(0, m))] = 4
    _windows_equal_the_oracle(rng, reads, np.array([2, int(rng.integers(0, 4))], dtype=np.int64), t)
