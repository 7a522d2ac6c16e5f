"""Degenerated patterns (filter/degenerate.py) against brute force: every word within Hamming distance fe
of the base, each exactly once."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.filter.degenerate import hamming_patterns, max_patterns


def brute_force(base: int, r: int, fe: int) -> set[int]:
    def hamming(a: int, b: int) -> int:
        return sum(((a >> (2 * i)) & 3) != ((b >> (2 * i)) & 3) for i in range(r))

    return {w for w in range(4**r) if hamming(w, base) <= fe}


@settings(max_examples=60, deadline=None)
@given(r=st.integers(0, 7), fe=st.integers(0, 4), data=st.data())
def test_every_pattern_once(r, fe, data):
    base = data.draw(st.integers(0, 4**r - 1))
    cap = max_patterns(r, fe)
    out = np.full(cap + 1, -1, dtype=np.int64)
    n = hamming_patterns(base, r, fe, out, np.empty(cap + 1, dtype=np.int64))
    assert n == cap
    assert out[0] == base
    assert out[cap] == -1  # nothing written past the count
    got = out[:n].tolist()
    assert len(set(got)) == n  # each once
    assert set(got) == brute_force(base, r, fe)


@pytest.mark.parametrize("r,fe,expected", [(16, 0, 1), (16, 1, 49), (16, 2, 1129), (4, 2, 67), (3, 5, 64)])
def test_max_patterns(r, fe, expected):
    assert max_patterns(r, fe) == expected
    assert expected == sum(len(list(itertools.combinations(range(r), k))) * 3**k for k in range(min(fe, r) + 1))
