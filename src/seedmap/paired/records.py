"""From paired locations to SAM records: mate order, flags 1/2/8/32/64/128, mate location, TLEN.

Reads 2p and 2p + 1 are the mates of pair p. Per mate: its chosen location (pairing.py) is the
primary record, its other locations follow as secondaries by distance, then position, then strand
(--best and -n apply to those). Every record of a mate points (RNEXT, PNEXT, MC, MQ) at the other
mate's primary; TLEN is set on primaries whose mates lie on one sequence (positive for the leftmost
mate, mate 1 on a tie), 0 elsewhere; flag 2 on both primaries of a proper pair. The records are built by
the single-end records' kernels (records.py), which write the mate fields from the pairing's choices.
"""

from __future__ import annotations

import numpy as np

from seedmap.io.columns import Records
from seedmap.records import Mates, pair_records


def make_pair_records(n_reads: int, start: np.ndarray, end: np.ndarray, dist: np.ndarray, strand: np.ndarray,
                      ref_id: np.ndarray, read: np.ndarray, chosen: np.ndarray, proper: np.ndarray,
                      mapq: np.ndarray, best_only: bool, max_hits: int) -> Records:
    """Per location: start, end (exclusive), dist, strand (1: reverse), ref_id (its sequence), read; per
    read: chosen (its primary location, -1: unmapped) and mapq; per pair: proper."""
    return Records(*pair_records(n_reads, read, strand, dist, mapq, best_only, max_hits,
                                 Mates(chosen, proper, start, end, ref_id)))
