"""Verification of candidate windows on the GPU: the twin of verify.windows.verify (same arguments, same
locations), with the window kernel of locate_kernels in place of the CPU's; the two-pass slot scheme
(SLOTS per window, overflowing windows again with room for all) is the CPU's own code.

The reference and the batch's reads are the DeviceVerifier's resident copies (the k-mer and FM engines
share them with their bulk verification); each call sends its windows and brings back only locations.
Reads too long for a GPU thread, and batches searched exactly (e = 0 everywhere), stay on the CPU.
"""

from __future__ import annotations

import logging
import threading

import numpy as np
from numba import cuda

from seedmap.backends.cuda import locate_kernels as lk
from seedmap.backends.cuda.verify_kernels import MAX_READ, MAXW, DeviceVerifier, sync
from seedmap.verify import windows

log = logging.getLogger("seedmap")
_LONG_READS_SAID = threading.Event()  # the CPU fallback for long reads is logged once per process


class DeviceLocator:
    """Callable with verify.windows.verify's arguments; verifies on the stream of `device`."""

    def __init__(self, device: DeviceVerifier) -> None:
        self.device = device

    def __call__(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win: np.ndarray,
                 packed: np.ndarray | None = None, nmask: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        dev = self.device
        if packed is not None and packed is not dev.packed:
            raise ValueError("this locator holds another reference")
        qoff64 = np.asarray(qoff, dtype=np.int64)
        long = (qoff64[win_q + 1] - qoff64[win_q]) > MAX_READ
        if not long.any():
            return windows.verify(qcodes, qoff, qerr, win_q, win, dev.packed, dev.nmask, run=self._run)
        if not _LONG_READS_SAID.is_set():
            _LONG_READS_SAID.set()
            log.info("reads longer than %d bp are verified on the CPU (the GPU kernel holds a read in %d "
                     "64-bit words)", MAX_READ, MAXW)
        # A query's windows all go one way (the read's length decides), so each part keeps its queries'
        # order, and a stable sort by query merges them.
        parts = [windows.verify(qcodes, qoff, qerr, win_q[~long], win[~long], dev.packed, dev.nmask, run=self._run),
                 windows.verify(qcodes, qoff, qerr, win_q[long], win[long], dev.packed, dev.nmask)]
        cols = [np.concatenate(c) for c in zip(*parts, strict=True)]
        order = np.argsort(cols[0], kind="stable")
        return tuple(c[order] for c in cols)

    def _run(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win: np.ndarray,
             packed: np.ndarray, nmask: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, ...]:
        """verify.windows._run on the device: (slot offsets, starts, ends, distances, count per window)."""
        nw = win_q.size
        slot_off = np.zeros(nw + 1, dtype=np.int64)
        np.cumsum(cap, out=slot_off[1:])
        total = int(slot_off[-1])
        if nw == 0:
            return (slot_off, np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int32),
                    np.zeros(0, dtype=np.int64))
        dev = self.device
        st = dev.stream
        d_qcodes, d_qoff, d_qerr = dev.resident_reads(qcodes, qoff, qerr)
        d_win_q = cuda.to_device(np.ascontiguousarray(win_q, dtype=np.int64), stream=st)
        d_win = cuda.to_device(np.ascontiguousarray(win, dtype=np.int64), stream=st)
        d_slot_off = cuda.to_device(slot_off, stream=st)
        room = max(total, 1)
        d_start = cuda.device_array(room, dtype=np.int64, stream=st)
        d_end = cuda.device_array(room, dtype=np.int64, stream=st)
        d_dist = cuda.device_array(room, dtype=np.int32, stream=st)
        d_count = cuda.device_array(nw, dtype=np.int64, stream=st)
        lk.window_locations_kernel[(nw + lk.THREADS - 1) // lk.THREADS, lk.THREADS, st](
            d_qcodes, d_qoff, d_qerr, d_win_q, d_win, dev.d_packed, dev.d_nmask, d_slot_off, d_start, d_end, d_dist,
            d_count)
        out = [d.copy_to_host(stream=st) for d in (d_start, d_end, d_dist, d_count)]
        sync(st)
        return slot_off, out[0][:total], out[1][:total], out[2][:total], out[3]
