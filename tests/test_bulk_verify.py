"""Bulk bit-parallel verification against a plain dynamic-programming oracle written here.

The oracle knows nothing of the kernels: the window [diag - e, diag + m + e) clipped to the candidate's
sequence, a semi-global DP (row 0 all zeros: free start; N never matches), the minimum over the last row
(column 0 included), capped at e + 1.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seedmap.io.reference import Reference
from seedmap.verify.bulk import AUTO, MYERS, bulk_distances

METHODS = [AUTO, MYERS]
SPECIAL_LENGTHS = [1, 2, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 191, 192, 193, 256, 257, 300]


# ----------------------------------------------------------------------------------------------- oracle


def dp_last_row(q: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Last row of the semi-global DP of q (rows) against t (columns), one column at a time."""
    m, n = q.size, t.size
    col = np.arange(m + 1, dtype=np.int64)  # column 0: i insertions
    last = np.empty(n + 1, dtype=np.int64)
    last[0] = m
    rows = np.arange(m + 1)
    qv = q.astype(np.int64)
    for j in range(1, n + 1):
        c = int(t[j - 1])
        cost = ((qv != c) | (qv > 3) | (c > 3)).astype(np.int64)
        new = np.empty(m + 1, dtype=np.int64)
        new[0] = 0
        new[1:] = np.minimum(col[:-1] + cost, col[1:] + 1)  # diagonal, horizontal (deletion)
        new = rows + np.minimum.accumulate(new - rows)  # vertical (insertion) chains
        col = new
        last[j] = col[m]
    return last


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


def oracle(genome: np.ndarray, q: np.ndarray, e: int, diag: int, s0: int, s1: int) -> int:
    lo = max(diag - e, s0)
    hi = min(diag + q.size + e, s1)
    t = genome[lo:hi] if hi > lo else genome[:0]
    return min(int(dp_last_row(q, t).min()), e + 1)


# ----------------------------------------------------------------------------------------------- inputs


def make_genome(rng: np.random.Generator, lengths: list[int]) -> tuple[np.ndarray, np.ndarray, Reference]:
    """Sequences with N runs (and a poly-A and a tandem repeat in the first one)."""
    seqs = []
    for n in lengths:
        s = rng.integers(0, 4, n).astype(np.uint8)
        for _ in range(int(rng.integers(0, 4))):
            a = int(rng.integers(0, n))
            s[a:a + int(rng.integers(1, 30))] = 4
        seqs.append(s)
    if lengths[0] > 400:
        seqs[0][100:160] = 0
        seqs[0][200:320] = np.tile(np.array([0, 1, 3], np.uint8), 40)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    return np.concatenate(seqs), ref.starts, ref


def mutate(rng: np.random.Generator, read: np.ndarray, edits: int) -> np.ndarray:
    """Random substitutions, insertions, deletions and N."""
    r = list(read)
    for _ in range(edits):
        op = int(rng.integers(0, 4))
        k = int(rng.integers(0, len(r) + 1))
        if op == 0 and k < len(r):
            r[k] = (r[k] + int(rng.integers(1, 4))) % 4
        elif op == 1:
            r.insert(k, int(rng.integers(0, 4)))
        elif op == 2 and k < len(r) and len(r) > 1:
            del r[k]
        elif k < len(r):
            r[k] = 4
    return np.array(r, dtype=np.uint8)


def make_case(rng: np.random.Generator, nreads: int, lengths: list[int] | None = None, emax: int = 15,
              ncand: int = 6, glens: list[int] | None = None) -> dict:
    """Reads (both 'strands' share e: qerr[i >> 1]) sampled from the genome with edits; candidates near
    the true diagonal, far away, at or past sequence ends (clipped windows), sorted by query."""
    genome, starts, ref = make_genome(rng, glens or [3000, 700, 150, 1200])
    nseq = starts.size - 1
    reads, qerr, cq, cd, cs0, cs1 = [], [], [], [], [], []
    for i in range(nreads):
        if i % 2 == 0:
            qerr.append(int(rng.integers(0, emax + 1)))
        e = qerr[i >> 1]
        if lengths is not None:
            m = lengths[i % len(lengths)]
        else:
            m = int(rng.choice(SPECIAL_LENGTHS)) if rng.random() < 0.4 else int(rng.integers(1, 301))
        sid = int(rng.integers(0, nseq))
        s0, s1 = int(starts[sid]), int(starts[sid + 1])
        if s1 - s0 >= m + 1:
            p = int(rng.integers(s0, s1 - m + 1))
            read = genome[p:p + m].copy()
            read = mutate(rng, read, int(rng.integers(0, e + 3)))
        else:  # the sequence is shorter than the read: random read
            p = s0
            read = rng.integers(0, 5, m).astype(np.uint8)
        if read.size == 0:
            read = np.zeros(1, np.uint8)
        reads.append(read)
        for _ in range(ncand):
            kind = int(rng.integers(0, 6))
            if kind <= 1:
                d = p + int(rng.integers(-3, 4))  # near the true location
            elif kind == 2:
                d = p + int(rng.integers(-2 * e - 40, 2 * e + 41))  # overlapping windows
            elif kind == 3:
                d = int(rng.integers(s0, s1))  # anywhere in the sequence
            elif kind == 4:
                d = s0 + int(rng.integers(-read.size - e - 5, e + 6))  # clipped at the sequence start
            else:
                d = s1 + int(rng.integers(-read.size - e - 5, e + 6))  # clipped at the sequence end
            cq.append(i)
            cd.append(d)
            cs0.append(s0)
            cs1.append(s1)
    qoff = np.zeros(nreads + 1, dtype=np.int64)
    np.cumsum([r.size for r in reads], out=qoff[1:])
    return dict(genome=genome, ref=ref, reads=reads, qcodes=np.concatenate(reads), qoff=qoff,
                qerr=np.array(qerr, dtype=np.int64), cand_q=np.array(cq, dtype=np.int64),
                cand_diag=np.array(cd, dtype=np.int64), s0=np.array(cs0, dtype=np.int64),
                s1=np.array(cs1, dtype=np.int64))


def run(case: dict, method: int = AUTO, order: np.ndarray | None = None) -> np.ndarray:
    sel = np.arange(case["cand_q"].size) if order is None else order
    return bulk_distances(case["qcodes"], case["qoff"], case["qerr"], case["cand_q"][sel], case["cand_diag"][sel],
                          case["s0"][sel], case["s1"][sel], case["ref"].packed, case["ref"].nmask, method=method)


def expected(case: dict) -> np.ndarray:
    out = np.empty(case["cand_q"].size, dtype=np.int64)
    for k, qi in enumerate(case["cand_q"]):
        out[k] = oracle(case["genome"], case["reads"][qi], int(case["qerr"][qi >> 1]), int(case["cand_diag"][k]),
                        int(case["s0"][k]), int(case["s1"][k]))
    return out


def check(case: dict, methods: list[int] = METHODS) -> np.ndarray:
    want = expected(case)
    for method in methods:
        got = run(case, method)
        assert got.dtype == np.int32
        bad = np.flatnonzero(got != want)
        if bad.size:
            k = int(bad[0])
            qi = int(case["cand_q"][k])
            pytest.fail(f"method {method}: {bad.size} of {want.size} differ; first: candidate {k}, m="
                        f"{case['reads'][qi].size}, e={case['qerr'][qi >> 1]}, diag={case['cand_diag'][k]}, "
                        f"sequence [{case['s0'][k]}, {case['s1'][k]}): got {got[k]}, want {want[k]}")
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
    case = make_case(np.random.default_rng(seed), nreads=120)
    want = check(case)
    e_of = case["qerr"][case["cand_q"] >> 1]
    assert np.any(want <= e_of) and np.any(want > e_of)  # both outcomes are exercised


@pytest.mark.parametrize("m", [1, 63, 64, 65, 127, 128, 129, 300])
def test_word_boundaries(m):
    """Reads of exactly one word, one bit more, two words..., every e from 0 to 15."""
    rng = np.random.default_rng(1000 + m)
    case = make_case(rng, nreads=64, lengths=[m], emax=15, ncand=5)
    case["qerr"] = np.arange(32, dtype=np.int64) % 16
    check(case)


def test_long_reads_multiword():
    """Up to 1000 bp: the Myers path with several blocks and the banded path with long funnel shifts."""
    case = make_case(np.random.default_rng(7), nreads=12, lengths=[700, 1000, 513, 999], emax=15, ncand=5,
                     glens=[6000, 2500])
    check(case)


def test_large_e_myers_blocks():
    """e beyond the one-word band (e >= 16): Myers with Ukkonen's block cut-off (blocks added and dropped)."""
    case = make_case(np.random.default_rng(11), nreads=60, emax=80, ncand=5)
    case["qerr"] = np.random.default_rng(12).integers(16, 81, case["qerr"].size)
    check(case)


def test_exact_and_all_n():
    """Exact matches give 0; reads of only N never match (distance min(m, e + 1))."""
    rng = np.random.default_rng(5)
    case = make_case(rng, nreads=40, emax=15, ncand=3)
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
    genome, starts, ref = make_genome(np.random.default_rng(3), [500, 300])
    reads = [np.zeros(0, np.uint8), np.zeros(0, np.uint8), genome[10:40].copy(), genome[10:40].copy()]
    case = dict(genome=genome, ref=ref, reads=reads, qcodes=np.concatenate(reads),
                qoff=np.array([0, 0, 0, 30, 60], dtype=np.int64), qerr=np.array([3, 40], dtype=np.int64),
                cand_q=np.array([0, 1, 2, 2, 3, 3], dtype=np.int64),
                cand_diag=np.array([5, 600, 10, 900, -100, 10], dtype=np.int64),
                s0=np.array([0, 500, 0, 500, 0, 0], dtype=np.int64),
                s1=np.array([500, 800, 500, 800, 500, 500], dtype=np.int64))
    want = check(case)
    assert list(want) == [0, 0, 0, 30, 30, 0]


def test_bad_input():
    case = make_case(np.random.default_rng(4), nreads=4, ncand=2)
    with pytest.raises(ValueError):
        run({**case, "cand_q": case["cand_q"] + 4})
    with pytest.raises(ValueError):
        run({**case, "s1": case["s1"] + 10**6})
    with pytest.raises(ValueError):
        run({**case, "qerr": case["qerr"] - 100})


def test_unsorted_candidates_and_empty():
    case = make_case(np.random.default_rng(9), nreads=50, ncand=4)
    base = run(case)
    perm = np.random.default_rng(10).permutation(case["cand_q"].size)
    assert np.array_equal(run(case, order=perm), base[perm])
    empty = run(case, order=np.zeros(0, dtype=np.int64))
    assert empty.size == 0 and empty.dtype == np.int32


def test_thread_count_invariance():
    numba = pytest.importorskip("numba")
    case = make_case(np.random.default_rng(13), nreads=200, ncand=8)
    base = run(case)
    prev = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert np.array_equal(run(case), base)
    finally:
        numba.set_num_threads(prev)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), m=st.one_of(st.sampled_from(SPECIAL_LENGTHS), st.integers(1, 300)),
       e=st.integers(0, 15), edits=st.integers(0, 18), shift=st.integers(-25, 25),
       edge=st.sampled_from(["none", "start", "end"]))
def test_hypothesis_single_read(seed, m, e, edits, shift, edge):
    """One read sampled with edits, candidates around its true diagonal, optionally at a sequence end."""
    rng = np.random.default_rng(seed)
    case = make_case(rng, nreads=2, lengths=[m], emax=15, ncand=1, glens=[900, 400])
    s0, s1 = 0, 900
    if edge == "start":
        p = int(rng.integers(0, 10))
    elif edge == "end":
        p = max(0, s1 - m - int(rng.integers(0, 10)))
    else:
        p = int(rng.integers(0, max(1, s1 - m)))
    read = mutate(rng, case["genome"][p:p + m].copy(), edits)
    if read.size == 0:
        read = np.zeros(1, np.uint8)
    case["reads"] = [read, read[::-1].copy()]
    case["qcodes"] = np.concatenate(case["reads"])
    case["qoff"] = np.array([0, read.size, 2 * read.size], dtype=np.int64)
    case["qerr"] = np.array([e], dtype=np.int64)
    diags = [p + shift, p, p - e, p + e, p + shift // 3]
    case["cand_q"] = np.array([0] * len(diags) + [1], dtype=np.int64)
    case["cand_diag"] = np.array(diags + [p + shift], dtype=np.int64)
    case["s0"] = np.full(len(diags) + 1, s0, dtype=np.int64)
    case["s1"] = np.full(len(diags) + 1, s1, dtype=np.int64)
    check(case)
