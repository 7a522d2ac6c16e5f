"""Bulk bit-parallel verification against a plain dynamic-programming bulk_oracle written here.

The bulk_oracle knows nothing of the kernels: the candidate's window [ws, we) (a seed's [diag - e, diag + m + e)
clipped to its sequence, or a cluster's, wider), a semi-global DP (row 0 all zeros: free start; N never
matches), the minimum over the last row (column 0 included), capped at e + 1.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    SPECIAL_LENGTHS,
    bulk_case,
    bulk_expected,
    bulk_genome,
    bulk_run,
    dp_last_row,
    mutate_with_n,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seedmap.verify.bulk import AUTO, MYERS, window_of

METHODS = [AUTO, MYERS]

# ----------------------------------------------------------------------------------------------- bulk_oracle



def dp_slow(q: list[int], t: list[int]) -> int:
    """The textbook recurrence, cell by cell (for checking dp_last_row on small inputs)."""
    m, n = len(q), len(t)
    d = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(1, m + 1):
        d[i][0] = i
        for j in range(1, n + 1):
            sub = 0 if (q[i - 1] == t[j - 1] and q[i - 1] < 4) else 1
            d[i][j] = min(d[i - 1][j - 1] + sub, d[i - 1][j] + 1, d[i][j - 1] + 1)
    return min(d[m])



# ----------------------------------------------------------------------------------------------- inputs



def check(case: dict, methods: list[int] = METHODS) -> np.ndarray:
    want = bulk_expected(case)
    for method in methods:
        got = bulk_run(case, method)
        assert got.dtype == np.int32
        bad = np.flatnonzero(got != want)
        if bad.size:
            k = int(bad[0])
            qi = int(case["cand_q"][k])
            pytest.fail(f"method {method}: {bad.size} of {want.size} differ; first: candidate {k}, m="
                        f"{case['reads'][qi].size}, e={case['qerr'][qi >> 1]}, window [{case['ws'][k]}, "
                        f"{case['we'][k]}): got {got[k]}, want {want[k]}")
    return want


# ------------------------------------------------------------------------------------------------ tests


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=0, max_size=9), st.lists(st.integers(0, 4), min_size=0, max_size=12))
def test_oracle_matches_textbook_dp(q, t):
    if not q:
        return
    assert dp_last_row(np.array(q, np.uint8), np.array(t, np.uint8)).min() == dp_slow(q, t)


@pytest.mark.parametrize("seed", range(4))
def test_random_candidates(seed):
    case = bulk_case(np.random.default_rng(seed), nreads=120)
    want = check(case)
    e_of = case["qerr"][case["cand_q"] >> 1]
    assert np.any(want <= e_of) and np.any(want > e_of)  # both outcomes are exercised


@pytest.mark.parametrize("m", [1, 63, 64, 65, 127, 128, 129, 300])
def test_word_boundaries(m):
    """Reads of exactly one word, one bit more, two words..., every e from 0 to 15."""
    rng = np.random.default_rng(1000 + m)
    case = bulk_case(rng, nreads=64, lengths=[m], emax=15, ncand=5)
    case["qerr"] = np.arange(32, dtype=np.int64) % 16
    check(case)


def test_cluster_windows():
    """Windows up to 45 columns wider than a seed's (engines/base.py verifies a cluster of a read's nearby
    candidates as one): the one-word band while it fits (62 - 4e columns wider), Myers beyond."""
    rng = np.random.default_rng(17)
    case = bulk_case(rng, nreads=120, lengths=[100, 150, 64], emax=8, ncand=6)
    left, right = rng.integers(0, 46, (2, case["ws"].size))
    case["ws"] = np.maximum(case["ws"] - left, 0)
    case["we"] = np.minimum(case["we"] + right, case["genome"].size)
    want = check(case)
    e_of = case["qerr"][case["cand_q"] >> 1]
    assert np.any(want <= e_of) and np.any(want > e_of)


def test_long_reads_multiword():
    """Up to 1000 bp: the Myers path with several blocks and the banded path with long funnel shifts."""
    case = bulk_case(np.random.default_rng(7), nreads=12, lengths=[700, 1000, 513, 999], emax=15, ncand=5,
                     glens=[6000, 2500])
    check(case)


def test_large_e_myers_blocks():
    """e beyond the one-word band (e >= 16): Myers with Ukkonen's block cut-off (blocks added and dropped)."""
    case = bulk_case(np.random.default_rng(11), nreads=60, emax=80, ncand=5)
    case["qerr"] = np.random.default_rng(12).integers(16, 81, case["qerr"].size)
    check(case)


def test_exact_and_all_n():
    """Exact matches give 0; reads of only N never match (distance min(m, e + 1))."""
    rng = np.random.default_rng(5)
    case = bulk_case(rng, nreads=40, emax=15, ncand=3)
    for i, r in enumerate(case["reads"]):
        if i % 4 == 3:
            r[:] = 4
    case["qcodes"] = np.concatenate(case["reads"])
    want = check(case)
    for k, qi in enumerate(case["cand_q"]):
        if qi % 4 == 3:
            assert want[k] == min(case["reads"][qi].size, case["qerr"][qi >> 1] + 1)


def test_empty_read_and_empty_windows():
    """An empty read costs 0 anywhere; a window clipped to nothing leaves only column 0 (m insertions)."""
    genome, starts, ref = bulk_genome(np.random.default_rng(3), [500, 300])
    reads = [np.zeros(0, np.uint8), np.zeros(0, np.uint8), genome[10:40].copy(), genome[10:40].copy()]
    case = dict(genome=genome, ref=ref, reads=reads, qcodes=np.concatenate(reads),
                qoff=np.array([0, 0, 0, 30, 60], dtype=np.int64), qerr=np.array([3, 40], dtype=np.int64),
                cand_q=np.array([0, 1, 2, 2, 3, 3], dtype=np.int64))
    m = np.diff(case["qoff"])[case["cand_q"]]
    case["ws"], case["we"] = window_of(np.array([5, 600, 10, 900, -100, 10]), m, case["qerr"][case["cand_q"] >> 1],
                                       np.array([0, 500, 0, 500, 0, 0]), np.array([500, 800, 500, 800, 500, 500]))
    want = check(case)
    assert list(want) == [0, 0, 0, 30, 30, 0]


def test_bad_input():
    case = bulk_case(np.random.default_rng(4), nreads=4, ncand=2)
    with pytest.raises(ValueError):
        bulk_run({**case, "cand_q": case["cand_q"] + 4})
    with pytest.raises(ValueError):
        bulk_run({**case, "we": case["we"] + 10**6})
    with pytest.raises(ValueError):
        bulk_run({**case, "qerr": case["qerr"] - 100})


def test_unsorted_candidates_and_empty():
    case = bulk_case(np.random.default_rng(9), nreads=50, ncand=4)
    base = bulk_run(case)
    perm = np.random.default_rng(10).permutation(case["cand_q"].size)
    assert np.array_equal(bulk_run(case, order=perm), base[perm])
    empty = bulk_run(case, order=np.zeros(0, dtype=np.int64))
    assert empty.size == 0 and empty.dtype == np.int32


def test_thread_count_invariance():
    from seedmap import spread

    case = bulk_case(np.random.default_rng(13), nreads=200, ncand=8)
    try:
        spread.set_share(3)
        base = bulk_run(case)
        spread.set_share(1)
        assert np.array_equal(bulk_run(case), base)
    finally:
        spread._local.share = None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), m=st.one_of(st.sampled_from(SPECIAL_LENGTHS), st.integers(1, 300)),
       e=st.integers(0, 15), edits=st.integers(0, 18), shift=st.integers(-25, 25),
       edge=st.sampled_from(["none", "start", "end"]))
def test_hypothesis_single_read(seed, m, e, edits, shift, edge):
    """One read sampled with edits, candidates around its true diagonal, optionally at a sequence end."""
    rng = np.random.default_rng(seed)
    case = bulk_case(rng, nreads=2, lengths=[m], emax=15, ncand=1, glens=[900, 400])
    s0, s1 = 0, 900
    if edge == "start":
        p = int(rng.integers(0, 10))
    elif edge == "end":
        p = max(0, s1 - m - int(rng.integers(0, 10)))
    else:
        p = int(rng.integers(0, max(1, s1 - m)))
    read = mutate_with_n(rng, case["genome"][p:p + m].copy(), edits)
    if read.size == 0:
        read = np.zeros(1, np.uint8)
    case["reads"] = [read, read[::-1].copy()]
    case["qcodes"] = np.concatenate(case["reads"])
    case["qoff"] = np.array([0, read.size, 2 * read.size], dtype=np.int64)
    case["qerr"] = np.array([e], dtype=np.int64)
    diags = [p + shift, p, p - e, p + e, p + shift // 3]
    case["cand_q"] = np.array([0] * len(diags) + [1], dtype=np.int64)
    case["ws"], case["we"] = window_of(np.array(diags + [p + shift], dtype=np.int64), m, e, s0, s1)
    check(case)
