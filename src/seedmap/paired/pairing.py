"""Choosing each pair's primary locations and their MAPQ from all locations of both mates.

A pair (i, j) of locations of mates 1 and 2 is proper when both lie on one reference sequence, in the
library's orientation, and the fragment they span (leftmost start to rightmost end) is inside the
insert bounds. The primary pair is the proper pair with the fewest edits in total, when that total is
at most the two best single locations plus the unpaired penalty (bwa's rule; ties go to the proper
pair), then the insert closest to the mean, then the leftmost locations; otherwise each mate's best
location (fewest edits, then leftmost, then forward). MAPQ of a mate is the posterior of mapq.py
summed over the pairs its location is in, over each mate's locations within MAPQ_STRATA of its best (and the
chosen ones), as single-end MAPQ counts them: so paired --best, which searches each mate that far, gives
all-mapping's MAPQ. One numba task per pair; locations of mate 2 within the
insert bound of a mate-1 location are found by binary search, so a pair costs O(n1 log n2 + proper).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.mapq import MAPQ_STRATA, phred_of_rest
from seedmap.spread import spread

ORIENTATIONS = {"fr": 0, "rf": 1, "ff": 2}


@njit(cache=True, nogil=True)
def proper_insert(sa: int, ea: int, ra: int, rev_a: bool, sb: int, eb: int, rb: int, rev_b: bool, orient: int,
                  lo: int, hi: int) -> int:
    """Fragment length of mates a (mate 1) and b (mate 2) when they form a proper pair, else -1.
    fr: opposite strands, the forward mate's 5' end not after the reverse mate's; rf: the reverse
    mate's 5' end before the forward mate's; ff: one strand, mate 1 first in the strand's direction."""
    if ra != rb:
        return -1
    ins = max(ea, eb) - min(sa, sb)
    if ins < lo or ins > hi:
        return -1
    if orient == 2:
        if rev_a != rev_b:
            return -1
        ok = sa <= sb if not rev_a else ea >= eb
    else:
        if rev_a == rev_b:
            return -1
        f5, r5 = (sa, eb - 1) if not rev_a else (sb, ea - 1)
        ok = f5 <= r5 if orient == 0 else r5 < f5
    return ins if ok else -1


class MateLocations(NamedTuple):
    """Every location of a pair batch's reads (2p, 2p + 1: the mates of pair p), read r's at off[r]:off[r + 1]
    sorted by start: start, end (exclusive), dist, rev (reverse strand), ref_id (its sequence)."""

    off: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dist: np.ndarray
    rev: np.ndarray
    ref_id: np.ndarray


class Library(NamedTuple):
    """The library's orientation (ORIENTATIONS), the proper fragment lengths lo..hi and their mean."""

    orient: int
    lo: int
    hi: int
    mean: float


class PairWeights(NamedTuple):
    """The weights of the pairs' posterior (mapq.py): one more edit costs `ratio`, an improper pair `penalty`
    edits, an origin beyond the edits searched weighs `unseen`."""

    penalty: int
    ratio: float
    unseen: float


class PairChoice(NamedTuple):
    """Per read: chosen (its primary location, -1: none) and mapq; per pair: proper, and delta, the edits of its
    best proper pair beyond its mates' best single locations (-1: no proper pair); per location: partnered,
    whether it forms a proper pair with any location of its mate."""

    chosen: np.ndarray
    proper: np.ndarray
    mapq: np.ndarray
    delta: np.ndarray
    partnered: np.ndarray


def choose_pairs(loc: MateLocations, se_best: np.ndarray, edits: np.ndarray, lib: Library, w: PairWeights,
                 unseen_pair: np.ndarray) -> PairChoice:
    """Per pair p (reads 2p, 2p + 1): its primary locations, proper flag, MAPQ (module notes). se_best: per read,
    its best single location (-1: none); edits: per read, the edits searched; unseen_pair: per pair, the weight
    of proper pairs its search cannot have seen (a stratified search's, else 0)."""
    n = loc.off.size - 1
    out = PairChoice(np.empty(n, dtype=np.int64), np.empty(n // 2, dtype=np.bool_), np.empty(n, dtype=np.int64),
                     np.empty(n // 2, dtype=np.int64), np.empty(loc.start.size, dtype=np.bool_))
    partner_w = np.empty(loc.start.size, dtype=np.float64)  # scratch, one per location (a pair touches its own)
    spread(n // 2, lambda p0, p1: _choose_pairs(loc, se_best, edits, lib, w, unseen_pair, out, partner_w, p0, p1),
           grain=64)
    return out


@njit(cache=True, nogil=True)
def _choose_pairs(loc: MateLocations, se_best: np.ndarray, edits: np.ndarray, lib: Library, w: PairWeights,
                  unseen_pair: np.ndarray, out: PairChoice, partner_w: np.ndarray, p0: int, p1: int) -> None:
    """choose_pairs of pairs [p0, p1): the choice from every pair, the weights from the counted locations."""
    off, ls, le, ld, lrev, lref = loc
    ratio, penalty = w.ratio, w.penalty
    chosen, mapq = out.chosen, out.mapq
    ru = ratio ** penalty
    for p in range(p0, p1):
        a, b = 2 * p, 2 * p + 1
        a0, a1, b0, b1 = off[a], off[a + 1], off[b], off[b + 1]
        chosen[a] = se_best[a]
        chosen[b] = se_best[b]
        out.proper[p] = False
        out.delta[p] = -1
        for i in range(a0, a1):
            out.partnered[i] = False
        for j in range(b0, b1):
            out.partnered[j] = False
        if a0 == a1 and b0 == b1:
            mapq[a] = 0
            mapq[b] = 0
            continue
        ba = ld[se_best[a]] if a1 > a0 else 0
        bb = ld[se_best[b]] if b1 > b0 else 0
        # The choice: proper pairs (mate-2 starts within hi of each mate-1 start).
        bi, bj, bdelta, bdev = -1, -1, 0, 0.0
        for i in range(a0, a1):
            j = b0 + np.searchsorted(ls[b0:b1], ls[i] - lib.hi)
            while j < b1 and ls[j] <= ls[i] + lib.hi:
                ins = proper_insert(ls[i], le[i], lref[i], lrev[i], ls[j], le[j], lref[j], lrev[j], lib.orient,
                                    lib.lo, lib.hi)
                if ins >= 0:
                    out.partnered[i] = True
                    out.partnered[j] = True
                    delta = ld[i] - ba + ld[j] - bb
                    dev = abs(ins - lib.mean)
                    if bi < 0 or delta < bdelta or (delta == bdelta and dev < bdev):
                        bi, bj, bdelta, bdev = i, j, delta, dev
                j += 1
        if bi >= 0:
            out.delta[p] = bdelta
        if bi >= 0 and bdelta <= penalty:
            chosen[a] = bi
            chosen[b] = bj
            out.proper[p] = True
        # The weights: the locations within MAPQ_STRATA of their mate's best, and the chosen ones (mapq.py);
        # the rest, like origins beyond e, are the virtual location at edits + 1 of each mate.
        ca, cb = chosen[a], chosen[b]
        sa_w = w.unseen * ratio ** (edits[a] + 1 - ba)
        sb_w = w.unseen * ratio ** (edits[b] + 1 - bb)
        for i in range(a0, a1):
            partner_w[i] = 0.0
            if ld[i] - ba <= MAPQ_STRATA or i == ca:
                sa_w += ratio ** (ld[i] - ba)
        for j in range(b0, b1):
            partner_w[j] = 0.0
            if ld[j] - bb <= MAPQ_STRATA or j == cb:
                sb_w += ratio ** (ld[j] - bb)
        proper_w = 0.0
        for i in range(a0, a1):
            if ld[i] - ba > MAPQ_STRATA and i != ca:
                continue
            j = b0 + np.searchsorted(ls[b0:b1], ls[i] - lib.hi)
            while j < b1 and ls[j] <= ls[i] + lib.hi:
                if ((ld[j] - bb <= MAPQ_STRATA or j == cb)
                        and proper_insert(ls[i], le[i], lref[i], lrev[i], ls[j], le[j], lref[j], lrev[j],
                                          lib.orient, lib.lo, lib.hi) >= 0):
                    wi = ratio ** (ld[i] - ba)
                    wj = ratio ** (ld[j] - bb)
                    proper_w += wi * wj
                    partner_w[i] += wj
                    partner_w[j] += wi
                j += 1
        # An unseen proper pair competes with every seen one (it may hold either mate's chosen location or not).
        z = ru * sa_w * sb_w + (1.0 - ru) * proper_w + unseen_pair[p]
        mapq[a] = _mate_mapq(ca, a0, a1, ba, sb_w, ld, partner_w, ratio, ru, z)
        mapq[b] = _mate_mapq(cb, b0, b1, bb, sa_w, ld, partner_w, ratio, ru, z)


@njit(cache=True, nogil=True)
def _mate_mapq(c: int, r0: int, r1: int, best: int, other_w: float, ld: np.ndarray, partner_w: np.ndarray,
               ratio: float, ru: float, z: float) -> int:
    """MAPQ of location c of a mate (locations r0:r1): its pairs' weight against the total z; 0 on a tie with a
    counted location (_choose_pairs)."""
    if c < 0:
        return 0
    mc = ratio ** (ld[c] - best) * (ru * other_w + (1.0 - ru) * partner_w[c])
    for k in range(r0, r1):
        if (k != c and ld[k] - best <= MAPQ_STRATA
                and ratio ** (ld[k] - best) * (ru * other_w + (1.0 - ru) * partner_w[k]) >= mc * (1.0 - 1e-9)):
            return 0
    return phred_of_rest(max(z - mc, 0.0) / mc)


@njit(cache=True, nogil=True)
def pair_inserts(ia: np.ndarray, ib: np.ndarray, ls: np.ndarray, le: np.ndarray, lrev: np.ndarray,
                 lref: np.ndarray, orient: int) -> np.ndarray:
    """Fragment length of location pairs (ia[k], ib[k]) in the given orientation, any length; -1 if not."""
    out = np.empty(ia.size, dtype=np.int64)
    for k in range(ia.size):
        i, j = ia[k], ib[k]
        out[k] = proper_insert(ls[i], le[i], lref[i], lrev[i], ls[j], le[j], lref[j], lrev[j], orient, 0,
                               1 << 62)
    return out
