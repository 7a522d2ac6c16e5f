"""Bulk verification on an OpenCL device: the twin of verify.bulk.bulk_distances (same arguments, same int32
results), with bulk.cl's kernels (the CUDA backend's two, verify_kernels.py): `bitvector` by default, or
`banded` (--gpu-verify banded) for candidates whose band fits its LANES work-items, the rest by the bit-vector
kernel. Reads longer than the kernels hold are verified by the CPU twin (the window verifier says so once)."""

from __future__ import annotations

import numpy as np

from seedmap.backends.opencl.locations import MAX_READ
from seedmap.backends.opencl.program import GROUP, OpenClDevice
from seedmap.io.reference import Reference
from seedmap.verify.bulk import band_diagonals, bulk_distances

BITVECTOR = "bitvector"
BANDED = "banded"
LANES = 32  # bulk.cl's LANES: work-items (band diagonals) per candidate in the banded kernel
I64 = np.int64


def kernel_of(device: OpenClDevice, method: str) -> str:
    """The kernel --gpu-verify `method` gets on `device`: banded needs whole work-groups of GROUP work-items
    (SLOTS x LANES in bulk.cl); on a device with smaller ones it is the bit-vector kernel."""
    return BANDED if method == BANDED and device.device.max_work_group_size >= GROUP else BITVECTOR


class OpenClBulkVerifier:
    """Callable with bulk_distances' arguments; one per worker (its own queue and kernel objects: setting a
    kernel's arguments is not thread-safe), the device's reference copy shared."""

    def __init__(self, device: OpenClDevice, ref: Reference, method: str = BITVECTOR) -> None:
        if method not in (BITVECTOR, BANDED):
            raise ValueError(f"unknown GPU verification method {method!r}")
        cl = self.cl = device.cl
        self.device = device
        self.queue = cl.CommandQueue(device.context)
        self.bitvector = {nb: cl.Kernel(p, "bitvector_distances") for nb, p in device.programs.items()}
        self.banded = (cl.Kernel(device.programs[1], "banded_distances")  # (any NB's program: it reads no words)
                       if kernel_of(device, method) == BANDED else None)
        self.packed, self.nmask = ref.packed, ref.nmask
        self.d_packed, self.d_nmask = device.resident(ref)

    def __call__(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, cand_q: np.ndarray,
                 win_start: np.ndarray, win_end: np.ndarray, packed: np.ndarray | None = None,
                 nmask: np.ndarray | None = None) -> np.ndarray:
        if packed is not None and packed is not self.packed:
            raise ValueError("this verifier holds another reference")
        cands = [np.ascontiguousarray(x, dtype=I64) for x in (cand_q, win_start, win_end)]
        cand_q = cands[0]
        out = np.empty(cand_q.size, dtype=np.int32)
        if cand_q.size == 0:
            return out
        qoff64 = np.asarray(qoff, dtype=I64)
        if cand_q.min() < 0 or cand_q.max() >= qoff64.size - 1:
            raise ValueError("cand_q must index the queries of qoff")
        m = qoff64[cand_q + 1] - qoff64[cand_q]
        on_cpu = m > MAX_READ
        if on_cpu.any():  # reads too long for the kernels' private memory: the CPU twin
            idx = np.flatnonzero(on_cpu)
            q, start, end = (x[idx] for x in cands)
            out[idx] = bulk_distances(qcodes, qoff, qerr, q, start, end, self.packed, self.nmask)
        if on_cpu.all():
            return out
        banded = np.zeros_like(on_cpu)
        if self.banded is not None:
            e = np.asarray(qerr, dtype=I64)[cand_q >> 1]
            width = band_diagonals(m, e, cands[1], cands[2])
            banded = ~on_cpu & (m > e) & (width >= 1) & (width <= LANES)
        self._launch(qcodes, qoff64, qerr, cands, m, ~on_cpu & ~banded, banded, out)
        return out

    def _launch(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, cands: list[np.ndarray],
                m: np.ndarray, bitvector: np.ndarray, banded: np.ndarray, out: np.ndarray) -> None:
        """The selected candidates' distances into out: each by the program of its read's words, or banded."""
        cl, dev = self.cl, self.device
        ins = [dev.buffer(np.asarray(a, dtype=t)) for a, t in ((qcodes, np.uint8), (qoff, I64), (qerr, I64))]
        ins += [dev.buffer(x) for x in cands]
        d_out = cl.Buffer(dev.context, cl.mem_flags.WRITE_ONLY, out.nbytes)
        words = np.maximum((m + 63) >> 6, 1)
        runs = [(kernel, 1, bitvector & (words == nb)) for nb, kernel in self.bitvector.items()]
        runs.append((self.banded, LANES, banded))
        for kernel, lanes, sel in runs:
            idx = np.flatnonzero(sel)
            if idx.size:
                dev.launch(kernel, self.queue, lanes * idx.size, dev.buffer(idx.astype(I64)), *ins, self.d_packed,
                           self.d_nmask, d_out)
        host = np.empty_like(out)
        cl.enqueue_copy(self.queue, host, d_out)
        done = bitvector | banded
        out[done] = host[done]
