"""Window plans: where on a read the windows (seed + neighborhood) are taken, and what they guarantee.

Pigeonhole: an alignment with at most e edits touches at most e of any set of pairwise disjoint read
windows (each substitution or insertion lies in one window, a deletion between two read bases touches at
most one). So with e + 1 disjoint windows one window matches the reference exactly: looking every window
up exactly finds every location. Windows are as long as the index allows (u + l) but no longer than
m // (e + 1); a window shorter than u is still a single range lookup in the big-endian index.

`fe` substitutions in a window's neighborhood do NOT buy fewer windows for the binary-search filter:
the seed part of a lookup must be exact, and one edit in each seed kills every window, so k windows
with k * (fe + 1) >= e + 1 are not even guaranteed for substitutions. Such plans are warned about.

The bpr plan (mflBPR, `lookup_plan`): k disjoint windows, each holding g = fe + 1 lookups whose seeds
(u bases each, exact) are pairwise disjoint, every lookup (seed + r neighborhood bases, r <= l - fe)
lying inside its window. A lookup is found when its seed matches exactly and its neighborhood part
aligns to a prefix of the indexed l-base neighborhood with at most fe edits (anchored mflBPR).
Claim: if k * (fe + 1) >= e + 1, every alignment with at most e edits is found.
Proof. Attribute every edit to one read base: a substitution or insertion to its base, a deletion to
the read base that follows it (an optimal semi-global alignment has no deletion after its last base).
The windows are disjoint, so their edit counts add up to at most e < k * (fe + 1): some window W holds
at most fe edits. W holds g = fe + 1 disjoint seeds, so one seed S has no edit: its u bases match u
consecutive reference bases ref[P, P + u) (no deletion inside, since one would be attributed to a seed
base). The r bases N after S lie in W, so they carry at most fe edits, including any deletion right
after S: N aligns to ref[P + u, P + u + t) with t <= r + fe <= l, a prefix of the neighborhood indexed
at P, with at most fe edits. So P is in S's seed block and its neighborhood passes the anchored mflBPR
test. The alignment passes through (read offset of S, P), so its diagonals lie within e of P - offset,
which is the diagonal the candidate gets. A reference N is indexed as A, which can only turn a true
mismatch into a match: the test accepts a superset. When a window is shorter than g * u + 1, its g
lookups are exact prefixes of length (window // g) <= u (no neighborhood part), the same argument with
r = 0. With g = 1 (fe = 0) this is the e + 1 exact plan.

Sliding lookups (--step) keep the guarantee when a greedy pass finds such groups among them (k groups
of g seed-disjoint lookups in disjoint windows with k * g >= e + 1), or e + 1 disjoint lookups; the
check is sufficient, not necessary, so a few valid step plans may be warned about.

Spaced seeds (shape '##-##'): a seed covers its span; an edit anywhere in the span may spoil it (an
indel shifts the care positions), so the proofs above hold with u = span; substitutions at don't-care
positions are simply also tolerated.
"""

from __future__ import annotations

import numpy as np
from numba import njit

FULL = "full"
SUBSTITUTIONS_ONLY = "substitutions-only"
NONE = "none"


@njit(cache=True, nogil=True)
def plan_shape(m: int, e: int, lmax: int, windows: int, step: int) -> tuple[int, int]:
    """(window length, number of windows) of window_plan(m, e, lmax, windows, step), allocating nothing."""
    k = windows if windows > 0 else e + 1
    length = min(lmax, m // k)
    if length <= 0:
        return 0, 0
    if step > 0:
        return length, (m - length) // step + 1
    return length, k


@njit(cache=True, nogil=True)
def plan_offset(m: int, length: int, k: int, step: int, i: int) -> int:
    """Offset of window i of a plan of shape (length, k) for a read of length m."""
    if step > 0:
        return i * step
    # Spread the slack between windows; they stay disjoint. A single window (e = 0) is the read's first, as in
    # every plan of more: --best's first round looks up a window its next rounds reuse (engines/neighborhood.py).
    slack = m - k * length
    return i * length + (slack * i // (k - 1) if k > 1 else 0)


@njit(cache=True, nogil=True)
def plan_window(m: int, e: int, lmax: int, windows: int, step: int, w: int) -> tuple[int, int]:
    """(length, offset) of window w of window_plan(m, e, lmax, windows, step), allocating nothing (one
    window per GPU thread); offset -1 when the plan has no window w."""
    length, k = plan_shape(m, e, lmax, windows, step)
    if w >= k:
        return length, -1
    return length, plan_offset(m, length, k, step, w)


@njit(cache=True, nogil=True)
def window_plan(m: int, e: int, lmax: int, windows: int, step: int) -> tuple[int, np.ndarray]:
    """(window length, window offsets) for a read of length m. windows = 0 means e + 1."""
    length, k = plan_shape(m, e, lmax, windows, step)
    offsets = np.empty(k, dtype=np.int64)
    for i in range(k):
        offsets[i] = plan_offset(m, length, k, step, i)
    return length, offsets


def max_disjoint(offsets: np.ndarray, length: int) -> int:
    """Largest number of pairwise disjoint windows among those given (greedy by start)."""
    count, end = 0, -1
    for off in np.sort(offsets):
        if off >= end:
            count += 1
            end = off + length
    return count


def guarantee(m: int, e: int, lmax: int, windows: int, step: int, fe: int) -> str:
    """What the plan guarantees for reads of length m with up to e edits."""
    if m <= e:
        return NONE
    length, offsets = window_plan(m, e, lmax, windows, step)
    if length == 0:
        return NONE
    if max_disjoint(offsets, length) >= e + 1:
        return FULL
    return NONE  # fe does not help: every seed part must be exact (see above)


@njit(cache=True, nogil=True)
def lookup_plan(m: int, e: int, u: int, l: int, fe: int, windows: int, step: int) -> tuple[int, np.ndarray]:
    """The bpr plan: (lookup length, lookup offsets) for a read of length m. A lookup of length L > u is
    a u-base exact seed and L - u <= l - fe neighborhood bases; L <= u is an exact prefix lookup.
    windows = 0 means ceil((e + 1) / (fe + 1)); step > 0 slides lookups of the plan's length."""
    g = fe + 1
    k = windows if windows > 0 else (e + 1 + g - 1) // g
    w = m // k
    if w < g and windows == 0:  # too short a read for g lookups a window: the e + 1 exact plan, still full
        g, k = 1, e + 1
        w = m // k
    if w >= g * u + 1:
        length = u + min(l - fe, w - g * u)
    else:
        length = w // g
    if length <= 0:
        return 0, np.zeros(0, dtype=np.int64)
    if step > 0:
        return length, np.arange(0, m - length + 1, step).astype(np.int64)
    offsets = np.empty(k * g, dtype=np.int64)
    slack = m - k * w
    # Seeds spread over the window: stride >= u (>= length when the lookups are exact prefixes).
    seed = min(u, length)
    free = w - (g - 1) * seed - length
    stride = seed + (free // (g - 1) if g > 1 else 0)
    for i in range(k):
        start = i * w + (slack * i // (k - 1) if k > 1 else slack // 2)
        for j in range(g):
            offsets[i * g + j] = start + j * stride
    return length, offsets


def seed_disjoint_groups(offsets: np.ndarray, length: int, seed: int, g: int) -> int:
    """Greedy count of disjoint windows each holding g lookups with pairwise disjoint seeds."""
    groups, boundary = 0, 0
    taken, last_seed, first = 0, -1, True
    for off in np.sort(offsets).tolist():
        if first:
            if off < boundary:
                continue
            taken, last_seed, first = 1, off, False
        elif off >= last_seed + seed:
            taken, last_seed = taken + 1, off
        if not first and taken == g:
            groups, boundary, first = groups + 1, last_seed + length, True
    return groups


def bpr_guarantee(m: int, e: int, u: int, l: int, fe: int, windows: int, step: int) -> str:
    """What the bpr plan guarantees for reads of length m with up to e edits (u: the seed's span)."""
    if m <= e:
        return NONE
    length, offsets = lookup_plan(m, e, u, l, fe, windows, step)
    if length == 0:
        return NONE
    if max_disjoint(offsets, length) >= e + 1:
        return FULL
    if length > u and seed_disjoint_groups(offsets, length, u, fe + 1) * (fe + 1) >= e + 1:
        return FULL
    if length <= u and seed_disjoint_groups(offsets, length, length, fe + 1) * (fe + 1) >= e + 1:
        return FULL
    return NONE


def windows_per_query(m: np.ndarray, e: np.ndarray, lmax: int, windows: int, step: int) -> int:
    """Most windows any query's plan has (numpy, over a batch's lengths m and errors e): the stride of a
    device's (query, window) grid of work-items."""
    if m.size == 0:
        return 1
    k = np.full(m.size, windows, dtype=np.int64) if windows > 0 else e + 1
    length = np.minimum(lmax, m // k)
    if step > 0:
        n = np.where(length > 0, (m - length) // step + 1, 0)
    else:
        n = np.where(length > 0, k, 0)
    return max(int(n.max()), 1)
