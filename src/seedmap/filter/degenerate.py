"""Degenerated patterns (Tran §3.2): every pattern within `fe` substitutions of a neighborhood.

Both lookups of the neighborhood index (binary search and perfect hash) enumerate the same patterns in
the same order, so they find the same candidates.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def max_patterns(r: int, fe: int) -> int:
    """How many patterns hamming_patterns writes for an r-base word: sum over k <= fe of C(r, k) 3^k."""
    total, comb = 0, 1
    for k in range(min(fe, r) + 1):
        total += comb * 3**k
        comb = comb * (r - k) // (k + 1)
    return total


@njit(cache=True, nogil=True, _nrt=False)
def hamming_patterns(base: int, r: int, fe: int, out: np.ndarray, last: np.ndarray) -> int:
    """Every r-base word (2-bit codes, first base in the highest bits) within Hamming distance fe of
    `base`, each exactly once, into out[:n]; returns n (= max_patterns(r, fe)). last: scratch of the
    same size.

    Level by level: the words with k substitutions extend those with k - 1 by one substitution right of
    their last one (last[t]), so each set of positions comes once, in increasing order, and each word
    costs one addition. A substitution is a difference to the base's own code at p: no division, no branch, and
    nothing allocated (a kernel without reference counting calls this per lookup)."""
    out[0] = base
    last[0] = -1
    n = 1
    lo, hi = 0, 1
    for _ in range(min(fe, r)):
        for t in range(lo, hi):
            v = out[t]
            for p in range(last[t] + 1, r):
                bit = 2 * (r - 1 - p)
                old = (base >> bit) & 3
                for j in range(3):
                    out[n] = v + ((((old + 1 + j) & 3) - old) << bit)
                    last[n] = p
                    n += 1
        lo, hi = hi, n
    return n


def device_enumerates(l: int, fe: int, max_fe: int) -> bool:
    """Whether a device kernel that holds max_fe substitution positions (a private array) enumerates the
    patterns of an l-base neighborhood within fe substitutions, and counts them in 32 bits."""
    return min(fe, l) <= max_fe and max_patterns(l, fe) < 2**31
