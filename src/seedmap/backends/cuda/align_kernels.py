"""Traceback (CIGAR runs and MD strings of verified locations) on the GPU: verify/align.py's own code,
one thread per location, made into device functions (twins.py), so the output is the CPU's byte for byte.

Each thread gets its own contiguous slices of two scratch arrays (the banded DP matrices, int64, indexed
flat by align_one; the reference window and the reversed operations, uint8). A launch covers as many
locations as the scratch holds."""

from __future__ import annotations

import numpy as np
from numba import cuda, types

from seedmap.backends.cuda.twins import device_twins
from seedmap.io.columns import PackedRef, Queries
from seedmap.verify import align
from seedmap.verify.align import Locations, Scratch, Traceback

THREADS = 128

align_location = device_twins(align.align_location).align_location

_I = types.int64
_U8 = types.Array(types.uint8, 1, "C")
_I32 = types.Array(types.int32, 1, "C")
_I64 = types.Array(types.int64, 1, "C")

# The kernel and the argument types DeviceAligner launches it with (see seed_filter_kernels.SIGNATURES).
SIGNATURES = {
    "align_kernel": [(_U8, _I64) + (_I64,) * 6 + (_U8, _U8, _I64, _I64, _U8, _I32, _U8, _I64, _I64, _I32, _I64, _I64)
                     + (_I, _I, _I64, _U8, _I, _I)],
}


@cuda.jit(cache=True)
def align_kernel(qcodes: np.ndarray, qoff: np.ndarray, loc_q: np.ndarray, loc_s: np.ndarray, loc_e: np.ndarray,
                 loc_d: np.ndarray, loc_lo: np.ndarray, loc_hi: np.ndarray, packed: np.ndarray, nmask: np.ndarray,
                 cig_off: np.ndarray, md_off: np.ndarray, ops: np.ndarray, lens: np.ndarray, md: np.ndarray,
                 n_runs: np.ndarray, md_len: np.ndarray, dist: np.ndarray, start: np.ndarray, end: np.ndarray,
                 first: int, last: int,
                 cells_buf: np.ndarray, bytes_buf: np.ndarray, cells: int, span: int) -> None:
    """Location first + thread aligned (align.align_location): `cells` DP cells and 2 x `span` bytes of
    scratch each."""
    t = cuda.grid(1)
    k = first + t
    if k >= last:
        return
    b = 2 * span * t
    queries = Queries(qcodes, qoff, qoff)  # (qoff in err's place: unread, a location's band is its own distance)
    locs = Locations(loc_q, loc_s, loc_e, loc_d, loc_lo, loc_hi)
    aln = Traceback(cig_off, ops, lens, n_runs, md_off, md, md_len, dist, start, end)
    scratch = Scratch(cells_buf[cells * t:cells * (t + 1)], bytes_buf[b:b + span], bytes_buf[b + span:b + 2 * span])
    align_location(k, queries, locs, PackedRef(packed, nmask), aln, scratch)
