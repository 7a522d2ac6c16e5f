"""The traceback's band (verify/align.py): a location at distance d aligned within d diagonals gives the
CIGAR and MD that any wider band gives, ties included, and the verified distance itself.

Reads are copied from random or tandem-repeat windows with up to 8 edits (indels too, so the DP and its
tie-breaking run, not only the ungapped path); N on either side; the text is the read's own span, so the
global distance is the location's.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import mutate_acgt, window
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import _last_row

from seedmap.verify.align import _gotoh, _one_gap, align_one


def traceback(q: np.ndarray, t: np.ndarray, band: int, dist: int) -> tuple:
    m, n = q.size, t.size
    cap = 2 * dist + 1
    ops, lens = np.empty(cap, dtype=np.uint8), np.empty(cap, dtype=np.int32)
    md = np.empty(8 * (dist + 1) + 3 * dist + 8, dtype=np.uint8)
    scratch = np.empty(3 * (m + 1) * (2 * band + 3), dtype=np.int64)
    d, runs, md_len, first, last = align_one(q, t, 0, 0, band, dist, ops, lens, md, scratch,
                                             np.empty(m + n, dtype=np.uint8))
    assert (first, last) == (0, n)
    return d, ops[:runs].tolist(), lens[:runs].tolist(), bytes(md[:md_len])


@pytest.mark.slow
@given(seed=st.integers(0, 2**32 - 1), m=st.sampled_from([5, 20, 64, 100, 150]), edits=st.integers(0, 8),
       repetitive=st.booleans(), n_rate=st.sampled_from([0.0, 0.0, 0.03]), wider=st.integers(1, 6))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_band_of_the_distance_gives_the_wider_bands_alignment(seed, m, edits, repetitive, n_rate, wider):
    rng = np.random.default_rng(seed)
    t = window(rng, m, repetitive, n_rate)[:m]
    q = np.minimum(mutate_acgt(rng, t.copy(), edits), 3)
    q[rng.random(q.size) < n_rate] = 4
    d = int(_last_row(q, t, free_start=False)[-1])
    if d >= q.size or abs(q.size - t.size) > d:
        return
    narrow = traceback(q, t, d, d)
    assert narrow[0] == d
    assert narrow == traceback(q, t, d + wider, d)


def traceback_free(q: np.ndarray, t: np.ndarray, x: int, y: int, band: int, dist: int, how=align_one) -> tuple:
    """align_one's result (or that of `how`, a function with its arguments: _gotoh, the DP alone) as lists."""
    m = q.size
    cap = 2 * dist + 1
    ops, lens = np.empty(cap, dtype=np.uint8), np.empty(cap, dtype=np.int32)
    md = np.empty(8 * (dist + 1) + 3 * dist + 8, dtype=np.uint8)
    scratch = np.empty(3 * (m + 1) * (x + 2 * band + 3), dtype=np.int64)
    rev = np.empty(m + t.size, dtype=np.uint8)
    d, runs, md_len, first, last = how(q, t, x, y, band, dist, ops, lens, md, scratch, rev)
    return d, ops[:runs].tolist(), lens[:runs].tolist(), bytes(md[:md_len]), first, last


@given(seed=st.integers(0, 2**32 - 1), m=st.sampled_from([5, 20, 64, 100]), edits=st.integers(0, 6),
       repetitive=st.booleans(), x=st.integers(0, 6), y=st.integers(0, 6), wider=st.integers(1, 6))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_free_ends_band_of_the_distance_gives_the_wider_bands_alignment(seed, m, edits, repetitive, x, y, wider):
    """With free starts (x) and later ends (y), as a location's alignment has them: the band of the verified
    distance computes only the diagonals a path within it can meet (verify/align.py), and gives the alignment,
    start and end that a wider band gives."""
    rng = np.random.default_rng(seed)
    t = window(rng, m + x + y + 8, repetitive, 0.0)[:m + x + y + 8]
    n = t.size - y
    q = np.minimum(mutate_acgt(rng, t[x:n].copy(), edits), 3)[:m]
    d = min(int(_last_row(q, t[s:n], free_start=False)[-1]) for s in range(x + 1))
    if d >= q.size:
        return
    narrow = traceback_free(q, t, x, y, d, d)
    assert narrow[0] == d and x - narrow[4] >= 0 and narrow[5] >= n
    assert narrow == traceback_free(q, t, x, y, d + wider, d)


def one_gap_case(rng: np.random.Generator, m: int, repetitive: bool, x: int, y: int, n_rate: float) -> tuple:
    """A text with x free starts and y ends after n, and a read copied from t[x:n] (m bases) with one insertion
    or deletion run (1-3 bases) and 0-4 substitutions, or with any 1-6 edits; its distance at end n."""
    t = window(rng, m + x + y, repetitive, n_rate)[:m + x + y]
    n = t.size - y
    src = t[x:n].copy()
    if rng.random() < 0.7:
        g, i = int(rng.integers(1, 4)), int(rng.integers(0, src.size))
        if rng.random() < 0.5:
            src = np.concatenate([src[:i], rng.integers(0, 4, g).astype(np.uint8), src[i:]])
        else:
            src = np.concatenate([src[:i], src[i + g:]])
        q = mutate_acgt(rng, np.minimum(src, 3), 0)
        for j in rng.integers(0, q.size, int(rng.integers(0, 5))):
            q[j] = (q[j] + 1 + rng.integers(3)) % 4
    else:
        q = np.minimum(mutate_acgt(rng, src, int(rng.integers(1, 7))), 3)
    d = min(int(_last_row(q, t[s:n], free_start=False)[-1]) for s in range(x + 1))
    return q, t, d


@given(seed=st.integers(0, 2**32 - 1), m=st.sampled_from([8, 20, 64, 100, 150]), repetitive=st.booleans(),
       x=st.integers(0, 6), y=st.integers(0, 6), n_rate=st.sampled_from([0.0, 0.0, 0.03]))
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_one_gap_path_gives_the_dps_alignment(seed, m, repetitive, x, y, n_rate):
    """align_one's shortcut for alignments with one gap (verify/align._one_gap) gives what its DP gives: the
    same CIGAR, MD, start and end, wherever it answers (and the DP where it does not)."""
    q, t, d = one_gap_case(np.random.default_rng(seed), m, repetitive, x, y, n_rate)
    if d >= q.size or d == 0:
        return
    assert traceback_free(q, t, x, y, d, d) == traceback_free(q, t, x, y, d, d, how=_gotoh)


def test_one_gap_path_answers_most_one_gap_reads():
    """The shortcut is taken (not only the DP): most reads with one indel run get their alignment from it."""
    rng = np.random.default_rng(5)
    taken = tried = 0
    for _ in range(300):
        x, y = int(rng.integers(0, 6)), int(rng.integers(0, 6))
        q, t, d = one_gap_case(rng, 100, False, x, y, 0.0)
        if d == 0 or d >= q.size:
            continue
        m = q.size
        n = t.size - y
        ungapped = 0 <= n - m <= x and _last_row(q, t[n - m:n], free_start=False)[-1] == d and \
            np.count_nonzero((q != t[n - m:n]) | (t[n - m:n] > 3)) == d
        if ungapped:
            continue
        tried += 1
        rev = np.empty(m + t.size, dtype=np.uint8)
        k, _ = _one_gap(q, t, x, n, d, np.empty(m + 1, dtype=np.int64), rev)
        taken += k > 0
    assert tried > 100 and taken > 0.6 * tried
