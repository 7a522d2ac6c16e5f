"""The traceback stage on the GPU: the twin of verify.align.align (same arguments, same CIGAR and MD), with
the reads and the reference already resident on the device (the verifier's copies)."""

from __future__ import annotations

import numpy as np
from numba import cuda

from seedmap.backends.cuda import align_kernels as ak
from seedmap.backends.cuda.verify_kernels import DeviceVerifier, sync
from seedmap.verify.align import Traceback, checked, free_bounds, layout, scratch_sizes

SCRATCH_BYTES = 1 << 30  # per worker: a 100 bp location at distance 5 takes up to 39 kB, 27,000 a launch


class DeviceAligner:
    """Callable with verify.align.align's arguments; aligns on the stream of `device`."""

    def __init__(self, device: DeviceVerifier, scratch_bytes: int = SCRATCH_BYTES) -> None:
        self.device = device
        self.scratch_bytes = scratch_bytes

    def __call__(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray,
                 loc_s: np.ndarray, loc_e: np.ndarray, loc_d: np.ndarray, packed: np.ndarray,
                 nmask: np.ndarray, seq_starts: np.ndarray) -> Traceback:
        dev = self.device
        if packed is not dev.packed:
            raise ValueError("this aligner holds another reference")
        aln = layout(qoff, loc_q, loc_d)
        n = loc_q.size
        if n == 0:
            return checked(aln, loc_d)
        st = dev.stream
        loc_lo, loc_hi = free_bounds(loc_s, loc_e, loc_d, seq_starts)
        locs = [np.ascontiguousarray(x, dtype=np.int64) for x in (loc_q, loc_s, loc_e, loc_d, loc_lo, loc_hi)]
        q, s, _, d, lo, hi = locs
        cells, span = scratch_sizes(np.asarray(qoff, dtype=np.int64), q, s, d, lo, hi, 0, n)
        per_launch = max(1, min(n, self.scratch_bytes // (8 * cells + 2 * span)))
        d_codes, d_qoff, _ = dev.resident_reads(qcodes, qoff, qerr)  # the verifier's copies
        d_locs = [cuda.to_device(x, stream=st) for x in locs]
        d_off = [cuda.to_device(a, stream=st) for a in (aln.cig_off, aln.md_off)]
        outputs = (aln.ops, aln.lens, aln.md, aln.n_runs, aln.md_len, aln.dist, aln.start, aln.end)
        d_out = [cuda.device_array(max(a.size, 1), dtype=a.dtype, stream=st) for a in outputs]
        d_cells = cuda.device_array(per_launch * cells, dtype=np.int64, stream=st)
        d_bytes = cuda.device_array(per_launch * 2 * span, dtype=np.uint8, stream=st)
        for first in range(0, n, per_launch):
            last = min(n, first + per_launch)
            ak.align_kernel[(last - first + ak.THREADS - 1) // ak.THREADS, ak.THREADS, st](
                d_codes, d_qoff, *d_locs, dev.d_packed, dev.d_nmask, *d_off, *d_out, first, last, d_cells, d_bytes,
                cells, span)
        for a, d in zip(outputs, d_out, strict=True):
            if a.size:
                d.copy_to_host(a, stream=st)
        sync(st)
        return checked(aln, loc_d)
