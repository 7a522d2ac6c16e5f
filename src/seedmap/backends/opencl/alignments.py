"""The traceback stage on an OpenCL device: the twin of verify.align.align (same arguments, same CIGAR and MD,
byte for byte), with align.cl's kernel, one work-item per location. Locations of reads longer than MAX_READ
are aligned on the CPU (logged once): a launch's scratch is sized by its largest location, and those reads'
windows were verified on the CPU too."""

from __future__ import annotations

import logging
import threading

import numpy as np

from seedmap.backends.opencl.locations import MAX_READ
from seedmap.backends.opencl.program import OpenClDevice
from seedmap.io.reference import Reference
from seedmap.verify import align

log = logging.getLogger("seedmap")
SCRATCH_BYTES = 1 << 28  # per launch at most (a 100 bp location at distance 5 takes up to 39 kB: 6,800 a launch)
OUTPUTS = ("ops", "lens", "md", "n_runs", "md_len", "dist", "start", "end")
_LONG_READS_SAID = threading.Event()  # the CPU fallback for long reads is logged once per process
I64 = np.int64


class OpenClAligner:
    """Callable with verify.align.align's arguments; one per worker (its own queue and kernel object), the
    device's reference copy shared."""

    def __init__(self, device: OpenClDevice, ref: Reference, scratch_bytes: int = SCRATCH_BYTES) -> None:
        cl = self.cl = device.cl
        self.device = device
        self.queue = cl.CommandQueue(device.context)
        self.kernel = cl.Kernel(device.align_program, "align_locations")
        self.packed, self.nmask = ref.packed, ref.nmask
        self.d_packed, self.d_nmask = device.resident(ref)
        self.scratch_bytes = min(scratch_bytes, device.device.max_mem_alloc_size)  # (one allocation)

    def __call__(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray,
                 loc_s: np.ndarray, loc_e: np.ndarray, loc_d: np.ndarray, packed: np.ndarray,
                 nmask: np.ndarray, seq_starts: np.ndarray) -> align.Traceback:
        if packed is not self.packed:
            raise ValueError("this aligner holds another reference")
        aln = align.layout(qoff, loc_q, loc_d)
        if loc_q.size == 0:
            return align.checked(aln, loc_d)
        qoff64 = np.asarray(qoff, dtype=I64)
        long = (qoff64[loc_q + 1] - qoff64[loc_q]) > MAX_READ
        if long.any():
            if not _LONG_READS_SAID.is_set():
                _LONG_READS_SAID.set()
                log.info("reads longer than %d bp are aligned on the CPU (the OpenCL traceback takes reads up to "
                         "the window kernel's length)", MAX_READ)
            idx = np.flatnonzero(long)
            on_cpu = align.align(qcodes, qoff, qerr, loc_q[idx], loc_s[idx], loc_e[idx], loc_d[idx], packed, nmask,
                                 seq_starts)
            place(aln._asdict(), on_cpu._asdict(), idx, loc_d)
        sel = np.flatnonzero(~long)
        if sel.size:
            aln = self._run(qcodes, qoff64, sel, loc_q, loc_s, loc_e, loc_d, seq_starts, aln)
        return align.checked(aln, loc_d)

    def _run(self, qcodes: np.ndarray, qoff: np.ndarray, sel: np.ndarray, loc_q: np.ndarray, loc_s: np.ndarray,
             loc_e: np.ndarray, loc_d: np.ndarray, seq_starts: np.ndarray,
             aln: align.Traceback) -> align.Traceback:
        """aln with locations `sel` aligned on the device, in launches whose scratch fits scratch_bytes."""
        cl, dev = self.cl, self.device
        loc_lo, loc_hi = align.free_bounds(loc_s, loc_e, loc_d, seq_starts)
        locs = [np.ascontiguousarray(x, dtype=I64) for x in (loc_q, loc_s, loc_e, loc_d, loc_lo, loc_hi)]
        q, s, _, d, lo, hi = (x[sel] for x in locs)
        cells, span = align.scratch_sizes(qoff, q, s, d, lo, hi, 0, sel.size)
        per_launch = max(1, min(sel.size, self.scratch_bytes // (8 * cells + 2 * span)))
        ins = [dev.buffer(sel.astype(I64)), dev.buffer(np.asarray(qcodes, dtype=np.uint8)), dev.buffer(qoff)]
        ins += [dev.buffer(x) for x in locs] + [self.d_packed, self.d_nmask]
        fields = aln._asdict()
        ins += [dev.buffer(aln.cig_off), dev.buffer(aln.md_off)]
        outs = [cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, max(fields[name].nbytes, 1)) for name in OUTPUTS]
        scratch = [cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, per_launch * size)
                   for size in (8 * cells, 2 * span)]
        for first in range(0, sel.size, per_launch):
            n = min(sel.size, first + per_launch) - first
            dev.launch(self.kernel, self.queue, n, I64(first), *ins, *outs, *scratch, I64(cells), I64(span))
        # whole arrays back, then the device's locations kept (the long reads' slots are the CPU's)
        got = {name: np.empty_like(fields[name]) for name in OUTPUTS}
        for name, buf in zip(OUTPUTS, outs, strict=True):
            if got[name].size:
                cl.enqueue_copy(self.queue, got[name], buf, is_blocking=False)
        self.queue.finish()
        if sel.size == loc_q.size:
            return aln._replace(**got)
        place(fields, got, sel, loc_d, from_whole=True)
        return aln


def place(aln: dict[str, np.ndarray], part: dict[str, np.ndarray], idx: np.ndarray, loc_d: np.ndarray,
          from_whole: bool = False) -> None:
    """Locations idx's alignments from `part` into aln's arrays (a Traceback's fields by name): part is
    align.align's result for those locations alone (its own slots), or with from_whole, arrays of aln's layout."""
    for name in ("n_runs", "md_len", "start", "end"):
        aln[name][idx] = part[name][idx] if from_whole else part[name]
    aln["dist"][idx] = part["dist"][idx] if from_whole else loc_d[idx]
    for off, names in (("cig_off", ("ops", "lens")), ("md_off", ("md",))):
        starts = aln[off][idx]
        sizes = aln[off][idx + 1] - starts
        dst = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        src = dst if from_whole else np.arange(sizes.sum())  # (a part's slots are its locations' in order)
        for name in names:
            aln[name][dst] = part[name][src]
