"""The seed + filter benchmark's inputs, shared by gpu.py and opencl.py: reads sampled from a reference
(each followed by its reverse complement, as a batch holds them) and the work a plan's windows make (the
unique neighborhoods of the SeedBlocks they search, times the patterns searched in each)."""

from __future__ import annotations

import numpy as np

from seedmap.filter.degenerate import max_patterns
from seedmap.filter.plan import window_plan


def sample_queries(codes: np.ndarray, nreads: int, m: int, e: int, rng: np.random.Generator,
                   substitutions: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(qcodes, qoff, qerr) of nreads reads of m bases from random reference places, each followed by its
    reverse complement, with up to `substitutions` substitutions each (random places, may coincide)."""
    pos = rng.integers(0, codes.size - m, nreads)
    reads = codes[pos[:, None] + np.arange(m)[None, :]].copy()
    rows = np.arange(nreads)
    for _ in range(substitutions):
        col = rng.integers(0, m, nreads)
        reads[rows, col] = (reads[rows, col] + 1) % 4
    qcodes = np.concatenate([reads, 3 - reads[:, ::-1]], axis=1).reshape(-1)  # read, reverse complement
    qcodes = np.where(qcodes > 3, 4, qcodes).astype(np.uint8)
    return qcodes, np.arange(2 * nreads + 1, dtype=np.int64) * m, np.full(nreads, e, dtype=np.int64)


def filter_work(ix: object, qcodes: np.ndarray, m: int, e: int, windows: int, fe: int) -> tuple[int, int]:
    """(windows looked up, neighborhoods searched) of the queries (all of length m) under the plan."""
    u = ix.u
    length, offsets = window_plan(m, e, u + ix.l, windows, 0)
    q2 = qcodes.reshape(-1, m).astype(np.int64)
    nbs = 0
    for o in offsets:  # neighborhoods in the SeedBlocks searched, times the patterns searched in them
        a = np.zeros(q2.shape[0], dtype=np.int64)
        for i in range(u):
            a = (a << 2) | np.minimum(q2[:, o + i], 3)
        nbs += int((ix.seed_start[a + 1] - ix.seed_start[a]).sum()) * max_patterns(length - u, fe)
    return q2.shape[0] * len(offsets), nbs
