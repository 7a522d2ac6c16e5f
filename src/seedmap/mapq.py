"""MAPQ: a phred-scaled posterior that the reported location is the read's origin.

Every location within MAPQ_STRATA edits of the read's best is a candidate origin, weighted by its likelihood
relative to the best's. Reads with base qualities (FASTQ): the likelihood of an alignment is the product,
over its mismatched bases, of the chance that such a base reads as it does, p / 3 + MISMATCH_FLOOR (p: the
error rate its quality states; MISMATCH_FLOOR: the chance of a variant of the sample there, or of an error
its quality understates), and GAP_RATE per inserted or deleted base (verify/likelihood.py). So a competitor
that differs from the best at one base read with Q40 weighs 1e-3 of the best (MAPQ 30 where it is the only
one), one that differs only where the read has a low-quality base up to 0.2. Reads without qualities
(FASTA): one more edit makes a location EDIT_RATIO times less likely (a per-base error rate p gives p / (1 - p)).

Everything further (more edits behind the best, or beyond e) enters as one virtual location of
UNSEEN_WEIGHT at e + 1 edits, each edit beyond the best weighing the read's mean mismatch weight (FASTA:
EDIT_RATIO). The posterior of the chosen location is its weight over the total; MAPQ = -10 log10(1 -
posterior), capped at MAX_MAPQ, and 0 when another location has as few edits (a tie). So MAPQ depends only
on the locations in the best stratum and the next one and on e, grows with the gap to the second best, and
is calibrated on mason reads by benchmarks/mapq.py.

Why only those strata: --best and -n search each read only a stratum beyond the one they stop at
(options.AUTO_STRATA), so they see the best stratum and the next one and nothing further; counting those
alone gives a read the same MAPQ whatever the run reports (a unique read gets 60 under --best as in
all-mapping). The price: a location two or more edits behind the best (MAPQ 40 or more where it is the only
competitor) no longer lowers MAPQ below the prior's. A search that stopped short of those strata (--strata 0)
puts the virtual location just beyond what it searched instead.

Pairs use the edit weights over pairs of locations (pairing.py: the pairing chooses before the traceback
that base qualities are read from): an improper pair pays UNPAIRED_PENALTY extra edits, and a mate's
posterior is the summed weight of the pairs it is in.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EDIT_RATIO = 0.01  # likelihood ratio of one more edit without base qualities (calibrated: benchmarks/mapq.py)
MISMATCH_FLOOR = 1e-3  # a mismatch's least chance at any quality: human heterozygosity (checked: benchmarks/mapq.py)
GAP_RATE = 1e-4  # per inserted or deleted base: Illumina's indel errors and human indel variants
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


def mismatch_weights() -> np.ndarray:
    """Per ASCII quality code, the likelihood of a mismatched base read with it (module notes): p / 3 +
    MISMATCH_FLOOR, codes below '!' read as quality 0."""
    q = np.maximum(np.arange(256) - 33, 0).astype(np.float64)
    return 10.0 ** (-q / 10.0) / 3.0 + MISMATCH_FLOOR


MISMATCH_WEIGHTS = mismatch_weights()
MISMATCH_LOG = np.log(MISMATCH_WEIGHTS)  # verify/likelihood.py's base_log
GAP_LOG = float(np.log(GAP_RATE))


@njit(cache=True, nogil=True)
def mean_mismatch_weights(offsets: np.ndarray, quals: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per read, the mean of weights[Q] over its bases: the weight of one more edit where it falls is unknown."""
    n = offsets.size - 1
    out = np.empty(n, dtype=np.float64)
    for r in range(n):
        s = 0.0
        for i in range(offsets[r], offsets[r + 1]):
            s += weights[quals[i]]
        out[r] = s / max(offsets[r + 1] - offsets[r], 1)
    return out


@njit(cache=True, nogil=True)
def _tally(read: np.ndarray, dist: np.ndarray, rank: np.ndarray, n_reads: int, weight: np.ndarray,
           loglik: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per read: its best distance (that of rank 0), the weights of its other locations within MAPQ_STRATA
    summed in location order (as np.bincount sums them): weight[d - best] (0 beyond MAPQ_STRATA), or where
    loglik holds each location's log-likelihood, exp(loglik - the best's); and how many locations it has at
    the best distance and in all."""
    best = np.zeros(n_reads, dtype=np.int64)
    best_ll = np.zeros(n_reads, dtype=np.float64)
    for i in range(read.size):
        if rank[i] == 0:
            best[read[i]] = dist[i]
            if loglik.size:
                best_ll[read[i]] = loglik[i]
    others = np.zeros(n_reads, dtype=np.float64)
    n_best = np.zeros(n_reads, dtype=np.int64)
    n_loc = np.zeros(n_reads, dtype=np.int64)
    for i in range(read.size):
        r = read[i]
        delta = dist[i] - best[r]
        if rank[i] != 0:
            if loglik.size == 0:
                others[r] += weight[delta]
            elif weight[delta] > 0.0:
                others[r] += np.exp(loglik[i] - best_ll[r])
        n_best[r] += delta == 0
        n_loc[r] += 1
    return best, others, n_best, n_loc


def unseen_edits(best: np.ndarray, edits: np.ndarray, searched: np.ndarray) -> np.ndarray:
    """Per read, the edits of its virtual location beyond what MAPQ counts: e + 1 where the search reached
    MAPQ_STRATA behind the best (or e), else one beyond the stratum it reached (best: -1 without locations)."""
    reached = searched >= np.minimum(edits, best + MAPQ_STRATA)
    return np.where(reached, edits, searched) + 1


def single_end_mapq(read: np.ndarray, dist: np.ndarray, rank: np.ndarray, edits: np.ndarray,
                    n_reads: int, shifted: np.ndarray | None = None, searched: np.ndarray | None = None,
                    loglik: np.ndarray | None = None, edit_weight: np.ndarray | None = None) -> np.ndarray:
    """MAPQ of each read's best location (rank 0), per read (0 for reads without locations).
    read/dist/rank: the locations searched, rank 0 = the best; edits: e per read; searched: the edits
    searched per read where fewer (--best, -n; default: edits); shifted: per read, the placements inside
    its best location g = 0, 1, ... edits behind it (verify/shifts.py), counted as locations where g is
    within MAPQ_STRATA and the edits searched. loglik (per location, with edit_weight per read: reads with
    base qualities): each location's log-likelihood (verify/likelihood.py) and the weight of an edit beyond
    them (mean_mismatch_weights); without them, EDIT_RATIO per edit."""
    searched = edits if searched is None else searched
    gaps = np.arange(int(dist.max(initial=0)) + 1)
    weight = np.where(gaps <= MAPQ_STRATA, EDIT_RATIO ** gaps.astype(np.float64), 0.0)  # of an edit gap
    if loglik is None or edit_weight is None:
        loglik, ratio = np.zeros(0, dtype=np.float64), np.full(n_reads, EDIT_RATIO)
    else:
        ratio = edit_weight
    best, others, n_best, n_loc = _tally(read, dist, rank, n_reads, weight, loglik)
    unseen = UNSEEN_WEIGHT * ratio ** (unseen_edits(best, edits, searched) - best).astype(np.float64)
    rest = others + unseen
    if shifted is not None:
        gaps = np.arange(shifted.shape[1])
        seen = gaps[None, :] <= np.minimum(searched - best, MAPQ_STRATA)[:, None]
        rest = rest + (shifted * seen * ratio[:, None] ** gaps.astype(np.float64)).sum(axis=1)
        n_best = n_best + shifted[:, 0]
    with np.errstate(divide="ignore"):
        q = -10.0 * np.log10(rest / (1.0 + rest))
    mapq = np.minimum(MAX_MAPQ, np.floor(q + 0.5)).astype(np.int64)
    mapq[n_best > 1] = 0
    mapq[n_loc == 0] = 0
    return mapq
