"""Verification of merged candidate windows on an OpenCL device: the twin of verify.windows.verify (same
arguments, same locations), with locate.cl's window kernel in place of the CPU's; the two-pass slot scheme
(SLOTS per window, overflowing windows again with room for all) is the CPU's own code. Reads longer than
the kernel holds, and batches searched exactly (e = 0 everywhere), stay on the CPU."""

from __future__ import annotations

import threading

import numpy as np

from seedmap.backends.base import verify_short_on_device
from seedmap.backends.opencl.program import WORDS, OpenClDevice
from seedmap.io.reference import Reference
from seedmap.verify import windows

MAXW = max(WORDS)  # 64-bit words of a read in a work-item's private memory
MAX_READ = 64 * MAXW  # longer reads are verified on the CPU
_LONG_READS_SAID = threading.Event()  # the CPU fallback for long reads is logged once per process


class OpenClLocator:
    """Callable with verify.windows.verify's arguments; one per worker (its own queue and kernel objects:
    setting a kernel's arguments is not thread-safe), the device's reference copy shared."""

    def __init__(self, device: OpenClDevice, ref: Reference) -> None:
        cl = self.cl = device.cl
        self.device = device
        self.queue = cl.CommandQueue(device.context)
        self.kernels = {nb: cl.Kernel(program, "window_locations") for nb, program in device.programs.items()}
        self.packed, self.nmask = ref.packed, ref.nmask
        self.d_packed, self.d_nmask = device.resident(ref)

    def __call__(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win: np.ndarray,
                 packed: np.ndarray | None = None, nmask: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        if packed is not None and packed is not self.packed:
            raise ValueError("this locator holds another reference")
        return verify_short_on_device(qcodes, qoff, qerr, win_q, win, self.packed, self.nmask, self._run, MAX_READ,
                                      _LONG_READS_SAID, f"the OpenCL kernel holds a read in {MAXW} 64-bit words")

    def _run(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win: np.ndarray,
             packed: np.ndarray, nmask: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, ...]:
        """verify.windows._run on the device: (slot offsets, starts, ends, distances, count per window)."""
        nw = win_q.size
        slot_off, total = windows.slot_offsets(cap)
        start = np.empty(max(total, 1), dtype=np.int64)
        end = np.empty(max(total, 1), dtype=np.int64)
        dist = np.empty(max(total, 1), dtype=np.int32)
        count = np.zeros(max(nw, 1), dtype=np.int64)
        if nw:
            cl, dev = self.cl, self.device
            ins = [dev.buffer(np.asarray(a, dtype=t)) for a, t in
                   ((qcodes, np.uint8), (qoff, np.int64), (qerr, np.int64), (win_q, np.int64), (win, np.int64))]
            outs = [cl.Buffer(dev.context, cl.mem_flags.WRITE_ONLY, a.nbytes) for a in (start, end, dist, count)]
            d_slot_off = dev.buffer(slot_off)
            qoff64 = np.asarray(qoff, dtype=np.int64)
            words = np.maximum((qoff64[win_q + 1] - qoff64[win_q] + 63) >> 6, 1)
            for nb, kernel in self.kernels.items():  # each window by the program of its read's words
                sel = np.flatnonzero(words == nb)
                if sel.size:
                    dev.launch(kernel, self.queue, sel.size, dev.buffer(sel), *ins, self.d_packed, self.d_nmask,
                               d_slot_off, *outs)
            for host, buf in zip((start, end, dist, count), outs, strict=True):
                cl.enqueue_copy(self.queue, host, buf, is_blocking=False)
            self.queue.finish()
        return slot_off, start[:total], end[:total], dist[:total], count[:nw]
