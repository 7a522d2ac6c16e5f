"""Verification of candidate windows on the GPU: the twin of verify.windows.verify (same arguments, same
locations), with the window kernel of locate_kernels in place of the CPU's; the two-pass slot scheme
(SLOTS per window, overflowing windows again with room for all) is the CPU's own code.

The reference and the batch's reads are the DeviceVerifier's resident copies (the k-mer and FM engines
share them with their bulk verification); each call sends its windows and brings back only locations.
Reads too long for a GPU thread, and batches searched exactly (e = 0 everywhere), stay on the CPU.
"""

from __future__ import annotations

import threading

import numpy as np
from numba import cuda

from seedmap.backends.base import verify_short_on_device
from seedmap.backends.cuda import locate_kernels as lk
from seedmap.backends.cuda.verify_kernels import MAX_READ, MAXW, DeviceVerifier, sync
from seedmap.verify import windows

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
        return verify_short_on_device(qcodes, qoff, qerr, win_q, win, dev.packed, dev.nmask, self._run, MAX_READ,
                                      _LONG_READS_SAID, f"the GPU kernel holds a read in {MAXW} 64-bit words")

    def _run(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win: np.ndarray,
             packed: np.ndarray, nmask: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, ...]:
        """verify.windows._run on the device: (slot offsets, starts, ends, distances, count per window)."""
        nw = win_q.size
        slot_off, total = windows.slot_offsets(cap)
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
