"""MAPQ: a phred-scaled posterior that the reported location is the read's origin.

Every location within MAPQ_STRATA edits of the read's best is a candidate origin with likelihood
proportional to EDIT_RATIO ** d (one more edit makes a location EDIT_RATIO times less likely: a per-base
error rate p gives p / (1 - p)). Everything further (more edits behind the best, or beyond e) enters as
one virtual location of UNSEEN_WEIGHT at e + 1 edits. The posterior of the chosen location is its weight
over the total; MAPQ = -10 log10(1 - posterior), capped at MAX_MAPQ, and 0 when another location is as
likely (a tie). So MAPQ depends only on the locations in the best stratum and the next one and on e,
grows with the gap to the second best, and is calibrated on mason reads by benchmarks/mapq.py.

Why only those strata: --best and -n search each read only a stratum beyond the one they stop at
(options.AUTO_STRATA), so they see the best stratum and the next one and nothing further; counting those
alone gives a read the same MAPQ whatever the run reports (a unique read gets 60 under --best as in
all-mapping). The price: a location two or more edits behind the best (MAPQ 40 or more where it is the only
competitor) no longer lowers MAPQ below the prior's. A search that stopped short of those strata (--strata 0)
puts the virtual location just beyond what it searched instead.

Pairs use the same weights over pairs of locations (pairing.py): an improper pair pays
UNPAIRED_PENALTY extra edits, and a mate's posterior is the summed weight of the pairs it is in.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EDIT_RATIO = 0.01  # likelihood ratio of one more edit (calibrated: benchmarks/mapq.py)
UNSEEN_WEIGHT = 1.0  # prior weight of an origin beyond e edits (one virtual location at e + 1)
MAX_MAPQ = 60
MAPQ_STRATA = 1  # strata behind the best that MAPQ counts (module notes); --best's search must reach them


@njit(cache=True, nogil=True)
def phred_of_rest(rest: float) -> int:
    """MAPQ of a location of weight 1 when the alternatives weigh `rest` in total."""
    if rest <= 0.0:
        return MAX_MAPQ
    q = -10.0 * np.log10(rest / (1.0 + rest))
    return min(MAX_MAPQ, int(np.floor(q + 0.5)))


@njit(cache=True, nogil=True)
def _tally(read: np.ndarray, dist: np.ndarray, rank: np.ndarray, n_reads: int,
           weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per read: its best distance (that of rank 0), the weights weight[d - best] of its other locations
    summed in location order (as np.bincount sums them; weight is 0 beyond MAPQ_STRATA), and how many
    locations it has at the best distance and in all."""
    best = np.zeros(n_reads, dtype=np.int64)
    for i in range(read.size):
        if rank[i] == 0:
            best[read[i]] = dist[i]
    others = np.zeros(n_reads, dtype=np.float64)
    n_best = np.zeros(n_reads, dtype=np.int64)
    n_loc = np.zeros(n_reads, dtype=np.int64)
    for i in range(read.size):
        r = read[i]
        delta = dist[i] - best[r]
        if rank[i] != 0:
            others[r] += weight[delta]
        n_best[r] += delta == 0
        n_loc[r] += 1
    return best, others, n_best, n_loc


def unseen_edits(best: np.ndarray, edits: np.ndarray, searched: np.ndarray) -> np.ndarray:
    """Per read, the edits of its virtual location beyond what MAPQ counts: e + 1 where the search reached
    MAPQ_STRATA behind the best (or e), else one beyond the stratum it reached (best: -1 without locations)."""
    reached = searched >= np.minimum(edits, best + MAPQ_STRATA)
    return np.where(reached, edits, searched) + 1


def single_end_mapq(read: np.ndarray, dist: np.ndarray, rank: np.ndarray, edits: np.ndarray,
                    n_reads: int, shifted: np.ndarray | None = None,
                    searched: np.ndarray | None = None) -> np.ndarray:
    """MAPQ of each read's best location (rank 0), per read (0 for reads without locations).
    read/dist/rank: the locations searched, rank 0 = the best; edits: e per read; searched: the edits
    searched per read where fewer (--best, -n; default: edits); shifted: per read, the placements inside
    its best location g = 0, 1, ... edits behind it (verify/shifts.py), counted as locations where g is
    within MAPQ_STRATA and the edits searched."""
    searched = edits if searched is None else searched
    gaps = np.arange(int(dist.max(initial=0)) + 1)
    weight = np.where(gaps <= MAPQ_STRATA, EDIT_RATIO ** gaps.astype(np.float64), 0.0)  # of an edit gap
    best, others, n_best, n_loc = _tally(read, dist, rank, n_reads, weight)
    unseen = UNSEEN_WEIGHT * EDIT_RATIO ** (unseen_edits(best, edits, searched) - best).astype(np.float64)
    rest = others + unseen
    if shifted is not None:
        gaps = np.arange(shifted.shape[1])
        seen = gaps[None, :] <= np.minimum(searched - best, MAPQ_STRATA)[:, None]
        rest = rest + (shifted * seen * EDIT_RATIO ** gaps.astype(np.float64)).sum(axis=1)
        n_best = n_best + shifted[:, 0]
    with np.errstate(divide="ignore"):
        q = -10.0 * np.log10(rest / (1.0 + rest))
    mapq = np.minimum(MAX_MAPQ, np.floor(q + 0.5)).astype(np.int64)
    mapq[n_best > 1] = 0
    mapq[n_loc == 0] = 0
    return mapq
