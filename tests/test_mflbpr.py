"""The mflBPR kernel against a plain dynamic program, and the bpr window plan's structure."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.filter import plan
from seedmap.filter.mflbpr import match_words, pack_words

ENC = {"A": 0, "C": 1, "G": 2, "T": 3, "N": 4}


def codes(text: str) -> np.ndarray:
    return np.array([ENC[c] for c in text], dtype=np.uint8)


def dp_distance(p: list[int], w: list[int], anchored: bool) -> int:
    """Least edits of p against a piece of w that ends anywhere and starts at 0 (anchored) or anywhere."""
    prev = list(range(len(w) + 1)) if anchored else [0] * (len(w) + 1)
    for i in range(1, len(p) + 1):
        cur = [i] + [0] * len(w)
        for j in range(1, len(w) + 1):
            cost = int(p[i - 1] != w[j - 1] or p[i - 1] > 3)
            cur[j] = min(prev[j - 1] + cost, prev[j] + 1, cur[j - 1] + 1)
        prev = cur
    return min(prev)


def test_paper_worked_example():
    """Paper 001, Fig. 3: p = ATC, e = 1, words ATCG GGAC AGCG AGTC: all four match (ATC exact, AC with
    one insertion, AGC with one substitution, AGTC with one deletion); exactly only ATCG."""
    words = pack_words(np.array([codes(w) for w in ("ATCG", "GGAC", "AGCG", "AGTC")]))
    p = codes("ATC")
    assert match_words(p, words, 4, 1, False).tolist() == [True, True, True, True]
    assert match_words(p, words, 4, 0, False).tolist() == [True, False, False, False]
    # Anchored at the word start (what the filter uses): GGAC needs 2 edits for a prefix.
    assert match_words(p, words, 4, 1, True).tolist() == [True, False, True, True]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), l=st.integers(1, 16), r=st.integers(1, 16), fe=st.integers(0, 3),
       anchored=st.booleans(), n=st.integers(1, 40), alphabet=st.sampled_from([2, 4]))
def test_matches_plain_dp(data, l, r, fe, anchored, n, alphabet):
    """Random words (binary alphabet too, for many near matches), several registers per block, N in the
    pattern never matching."""
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    words = rng.integers(0, alphabet, (n, l))
    p = rng.integers(0, alphabet, r).astype(np.uint8)
    if rng.random() < 0.2:
        p[rng.integers(0, r)] = 4
    if rng.random() < 0.5 and l >= 2:  # plant a mutated copy of the pattern in some words
        for k in range(0, n, 3):
            piece = list(p[: max(1, l - 1)])
            words[k, : len(piece)] = np.minimum(piece, 3)
    got = match_words(p, pack_words(words), l, fe, anchored)
    want = [dp_distance(p.tolist(), w.tolist(), anchored) <= fe for w in words]
    assert got.tolist() == want


def _windows_of(offsets: np.ndarray, g: int) -> list[np.ndarray]:
    return [offsets[i:i + g] for i in range(0, offsets.size, g)]


@pytest.mark.parametrize("u,l", [(10, 16), (4, 8), (6, 2), (3, 0)])
def test_plan_structure_and_guarantee(u, l):
    """For every read length, e and fe: each window holds fe + 1 lookups inside the read with pairwise
    disjoint seeds, windows are disjoint, neighborhood parts are at most l - fe long, K * (fe + 1) >= e + 1,
    and bpr_guarantee says FULL."""
    for fe in range(0, min(3, l) + 1):
        g = fe + 1
        for e in range(0, 8):
            for m in range(e + 1, 130, 3):
                length, offsets = plan.lookup_plan(m, e, u, l, fe, 0, 0)
                if length == 0:
                    assert plan.bpr_guarantee(m, e, u, l, fe, 0, 0) == plan.NONE
                    continue
                assert length - u <= l - fe
                windows = _windows_of(offsets, g)
                assert len(windows) * g >= e + 1
                seed = min(u, length)
                end = 0
                for win in windows:
                    assert win[0] >= end and win[-1] + length <= m
                    assert np.all(np.diff(win) >= seed)
                    end = win[-1] + length
                assert plan.bpr_guarantee(m, e, u, l, fe, 0, 0) == plan.FULL, (m, e, fe)


def test_guarantee_warns_on_too_few_windows_and_sparse_steps():
    # 100 bp, e = 5, fe = 1: 3 windows are needed; 2 are not enough.
    assert plan.bpr_guarantee(100, 5, 10, 16, 1, 3, 0) == plan.FULL
    assert plan.bpr_guarantee(100, 5, 10, 16, 1, 2, 0) == plan.NONE
    # Sliding lookups every base hold the groups; every 20 bases do not.
    assert plan.bpr_guarantee(100, 5, 10, 16, 2, 0, 1) == plan.FULL
    assert plan.bpr_guarantee(100, 5, 10, 16, 2, 0, 20) == plan.NONE
    # bs: fe never makes up for missing windows (the seeds are exact).
    assert plan.guarantee(100, 5, 26, 2, 0, 2) == plan.NONE
    assert plan.guarantee(100, 5, 26, 0, 0, 2) == plan.FULL


def test_seed_disjoint_groups():
    # lookups of 14 bases, seeds of 10, groups of 2: [0, 10] -> window ends at 24; [24, 34] -> 48.
    offs = np.arange(0, 60, 5)
    assert plan.seed_disjoint_groups(offs, 14, 10, 2) == 2
    assert plan.seed_disjoint_groups(offs, 14, 10, 1) == 4  # 0, 15, 30, 45
