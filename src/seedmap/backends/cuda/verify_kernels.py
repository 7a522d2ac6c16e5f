"""Bulk verification on the GPU: the twin of seedmap.verify.bulk.bulk_distances (same arguments, same
int32 results: min(semi-global edit distance, e + 1) of a read in each candidate window, see that module).

Two kernels, both exact (the tests compare them with the CPU kernel on every candidate):

- BITVECTOR (default): Myers' bit-vector algorithm, one thread per candidate, reads up to 64 * MAXW bp
  (the match masks and the block state live in registers/local memory), early exit when the last row
  cannot come back under the best value found (it falls by at most 1 per column).
- BANDED: Nouri's banded Levenshtein DP, one warp-sized group of lanes per alignment, one lane per
  diagonal of the band, cells computed in anti-diagonal order (cell (i, k) at step 2i + k) with the
  band's latest values in shared memory. The band is the window's diagonals [-e, n - m + e] (every
  alignment of cost <= e inside the window stays there; 4e + 1 lanes for a seed's window, where
  Nouri's global formulation needs 2e + 1): e <= 7 fits 32 lanes. Early exit: once no unfinished
  diagonal's latest cell is <= e, no later cell of the last row can be (every path to the last row
  leaves the computed region through one of those cells), so the result is fixed.

Candidates the kernels do not take (reads longer than 64 * MAXW, or bands wider than 32 for BANDED,
which then go to BITVECTOR) are routed on the host; the longest go to the CPU kernel.
The reference (2-bit packed + N mask) is copied once per device (its workers share it) and stays
resident; the reads of a batch are sent once for all the calls on that batch; each call sends only the
candidates (query, window start, window end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import cuda, int32, types, uint64

from seedmap.backends.cuda.resident import DeviceShare
from seedmap.backends.cuda.twins import device_twins
from seedmap.io import reference
from seedmap.verify import bulk
from seedmap.verify.bulk import band_diagonals, bulk_distances

if TYPE_CHECKING:
    from numba.cuda.cudadrv.driver import Stream
    from numba.cuda.dispatcher import CUDADispatcher

BITVECTOR = "bitvector"
BANDED = "banded"
METHODS = (BITVECTOR, BANDED)

MAXW = 4  # 64-bit words per read on the device: reads up to 256 bp
MAX_READ = 64 * MAXW  # longer reads are verified on the CPU
LANES = 32  # lanes (diagonals) per alignment in the banded kernel
SLOTS = 4  # alignments per block in the banded kernel (they step in lockstep)
BAND_COLS = LANES + 1  # columns of the banded kernel's shared array (a literal for NVVM's typing)
THREADS = 128  # threads per block in the bit-vector kernel

ONE = np.uint64(1)
ZERO = np.uint64(0)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
B63 = np.uint64(63)

_U8 = types.Array(types.uint8, 1, "C")
_I64 = types.Array(types.int64, 1, "C")
_I32 = types.Array(types.int32, 1, "C")
# The argument types DeviceVerifier._launch gives both kernels: reads (codes, offsets, errors), candidates
# (query, window start, window end), the packed reference and its N mask, the results.
VERIFY_SIGNATURE = (_U8, _I64, _I64, _I64, _I64, _I64, _U8, _U8, _I32)
# Every kernel of this module and the signatures it is launched with (compiled ahead by engines.warm_up,
# checked against the real launches under the simulator, compiled for real GPUs by tests/test_cuda_compile.py).
SIGNATURES = {"bitvector_kernel": [VERIFY_SIGNATURE], "banded_kernel": [VERIFY_SIGNATURE]}

# The CPU's code of: a reference base (4 for N) and one column step of a 64-row block of Myers' bit vectors.
ref_code = device_twins(reference.ref_code).ref_code
advance = device_twins(bulk.advance).advance


@cuda.jit(device=True, inline=True)
def match_masks(qcodes: np.ndarray, a: int, m: int, backwards: bool, peq: np.ndarray) -> None:
    """peq[c, w] bit b <=> read base 64w + b is c, for the read qcodes[a:a + m] (read backwards when
    `backwards`); N in the read matches nothing."""
    for b in range((m + 63) >> 6):
        for c in range(4):
            peq[c, b] = ZERO
    for i in range(m):
        c = qcodes[a + m - 1 - i] if backwards else qcodes[a + i]
        if c < 4:
            peq[c, i >> 6] |= ONE << uint64(i & 63)


@cuda.jit(device=True, inline=True)
def start_column(pv: np.ndarray, mv: np.ndarray, nb: int) -> None:
    """Column 0, D(i, 0) = i: every vertical delta +1."""
    for b in range(nb):
        pv[b] = ALL
        mv[b] = ZERO


@cuda.jit(device=True, inline=True)
def column(peq: np.ndarray, pv: np.ndarray, mv: np.ndarray, nb: int, hlast: np.uint64, c: int, hin: int) -> int:
    """One text column (code c; N matches nothing) through the nb words of a read's match masks peq[code,
    word] (Myers' block algorithm, each word's step the CPU's, bulk.advance): pv, mv updated; returns the
    last row's change. hin is row 0's change (0: free start in the text, 1: start anchored)."""
    h = hin
    for b in range(nb):
        pv[b], mv[b], h = advance(pv[b], mv[b], peq[c, b] if c < 4 else ZERO, h, hlast if b == nb - 1 else B63)
    return h


@cuda.jit(cache=True)
def bitvector_kernel(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, cand_q: np.ndarray,
                     win_start: np.ndarray, win_end: np.ndarray, packed: np.ndarray, nmask: np.ndarray,
                     out: np.ndarray) -> None:
    k = cuda.grid(1)
    if k >= cand_q.size:
        return
    peq = cuda.local.array((4, MAXW), uint64)
    pv = cuda.local.array(MAXW, uint64)
    mv = cuda.local.array(MAXW, uint64)
    qi = cand_q[k]
    a = qoff[qi]
    m = qoff[qi + 1] - a
    e = qerr[qi >> 1]
    ws = win_start[k]
    n = max(win_end[k] - ws, 0)
    cap = e + 1
    best = min(m, cap)  # column 0: D(m, 0) = m
    if n <= 0 or best == 0:
        out[k] = best
        return
    nb = (m + 63) >> 6
    match_masks(qcodes, a, m, False, peq)
    start_column(pv, mv, nb)
    hlast = uint64((m - 1) & 63)
    score = m
    for j in range(1, n + 1):
        h = column(peq, pv, mv, nb, hlast, ref_code(packed, nmask, ws + j - 1), 0)
        score += h
        if score < best:
            best = score
        if score - (n - j) >= best:
            break  # the last row falls by at most 1 per column
    out[k] = min(best, cap)


@cuda.jit(cache=True)
def banded_kernel(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, cand_q: np.ndarray,
                  win_start: np.ndarray, win_end: np.ndarray, packed: np.ndarray, nmask: np.ndarray,
                  out: np.ndarray) -> None:
    """Block (LANES, SLOTS): threadIdx.y picks the alignment, threadIdx.x the band diagonal."""
    lane = cuda.threadIdx.x
    slot = cuda.threadIdx.y
    k = cuda.blockIdx.x * SLOTS + slot
    latest = cuda.shared.array((SLOTS, BAND_COLS), int32)  # latest value of each diagonal
    alive = cuda.shared.array((SLOTS, 2), int32)  # some unfinished diagonal is <= e (double-buffered)
    valid = k < cand_q.size
    m = 0
    e = 0
    a = 0
    ws = 0
    n = 0
    width = 0
    if valid:
        qi = cand_q[k]
        a = qoff[qi]
        m = qoff[qi + 1] - a
        e = qerr[qi >> 1]
        ws = win_start[k]
        n = max(win_end[k] - ws, 0)
        width = n - m + 2 * e + 1  # the host sends only 1 <= width <= LANES, m > e
    cap = e + 1
    kd = lane - e  # this lane's diagonal (window column - read row)
    mine = cap
    if lane < width and kd >= 0:
        mine = 0  # row 0: free start
    latest[slot, lane] = mine
    if lane == 0:
        alive[slot, 0] = 0
        alive[slot, 1] = 0
    best = cap
    done = not valid
    last = 2 * m + width - 1  # the step of the last cell
    s = 1
    cuda.syncthreads()
    while True:
        s += 1
        i2 = s - lane
        active = (not done) and lane < width and i2 >= 2 and (i2 & 1) == 0 and i2 <= 2 * m
        val = cap
        i = i2 >> 1
        if active:
            j = i + kd
            if j >= 0 and j <= n:
                left = latest[slot, lane - 1] if lane > 0 else cap  # D(i, j - 1), written at step s - 1
                up = latest[slot, lane + 1] if lane + 1 < width else cap  # D(i - 1, j), step s - 1
                val = min(left, up) + 1
                if j >= 1:
                    qc = qcodes[a + i - 1]
                    tc = ref_code(packed, nmask, ws + j - 1)
                    val = min(val, mine + (0 if (qc == tc and qc < 4) else 1))
                val = min(val, cap)
        cuda.syncthreads()
        p = s & 1
        if active:
            latest[slot, lane] = val
            mine = val
            if i == m:
                best = min(best, val)
        if (not done) and lane < width and s - lane < 2 * m and mine <= e:
            alive[slot, p] = 1
        if lane == 0:
            alive[slot, 1 - p] = 0  # read by everyone at step s - 1, written again at step s + 1
        cuda.syncthreads()
        if not done and (alive[slot, p] == 0 or s >= last):
            done = True
        if not cuda.syncthreads_or(0 if done else 1):
            break
    latest[slot, lane] = best
    cuda.syncthreads()
    if lane == 0 and valid:
        r = best
        for x in range(1, LANES):
            r = min(r, latest[slot, x])
        out[k] = r


def sync(stream: int | Stream) -> None:
    """Wait for a stream's work (its copies to the host included); stream 0, the simulator's, is synchronous."""
    if not isinstance(stream, int):
        stream.synchronize()


class DeviceVerifier:
    """GPU twin of bulk_distances bound to one reference: callable with bulk_distances' arguments."""

    def __init__(self, packed: np.ndarray, nmask: np.ndarray, method: str = BITVECTOR, stream: int | Stream = 0,
                 share: DeviceShare | None = None) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown GPU verification method {method!r}")
        self.method = method
        self.stream = stream
        self.packed = packed
        self.nmask = nmask
        share = share if share is not None else DeviceShare()  # the device's workers share the reference
        self.d_packed = share.get(packed, "packed", lambda: cuda.to_device(np.ascontiguousarray(packed, np.uint8)))
        self.d_nmask = share.get(nmask, "nmask", lambda: cuda.to_device(np.ascontiguousarray(nmask, np.uint8)))
        self._reads: tuple = (None, None, None)
        self._reads_dev: tuple = ()

    def resident_reads(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray) -> tuple:
        """Device copies of the batch's queries: sent once for all the calls on the same arrays."""
        if not (self._reads[0] is qcodes and self._reads[1] is qoff and self._reads[2] is qerr):
            st = self.stream
            self._reads_dev = (cuda.to_device(np.ascontiguousarray(qcodes, dtype=np.uint8), stream=st),
                               cuda.to_device(np.ascontiguousarray(qoff, dtype=np.int64), stream=st),
                               cuda.to_device(np.ascontiguousarray(qerr, dtype=np.int64), stream=st))
            self._reads = (qcodes, qoff, qerr)
        return self._reads_dev

    def __call__(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, cand_q: np.ndarray,
                 win_start: np.ndarray, win_end: np.ndarray, packed: np.ndarray | None = None,
                 nmask: np.ndarray | None = None) -> np.ndarray:
        if packed is not None and packed is not self.packed:
            raise ValueError("this verifier holds another reference")
        cand_q = np.ascontiguousarray(cand_q, dtype=np.int64)
        win_start = np.ascontiguousarray(win_start, dtype=np.int64)
        win_end = np.ascontiguousarray(win_end, dtype=np.int64)
        out = np.empty(cand_q.size, dtype=np.int32)
        if cand_q.size == 0:
            return out
        qoff64 = np.asarray(qoff, dtype=np.int64)
        qerr64 = np.asarray(qerr, dtype=np.int64)
        if cand_q.min() < 0 or cand_q.max() >= qoff64.size - 1:
            raise ValueError("cand_q must index the queries of qoff")
        m = qoff64[cand_q + 1] - qoff64[cand_q]
        e = qerr64[cand_q >> 1]
        on_cpu = m > MAX_READ
        if np.any(on_cpu):  # reads too long for the device's registers: the CPU twin
            idx = np.flatnonzero(on_cpu)
            out[idx] = bulk_distances(qcodes, qoff, qerr, cand_q[idx], win_start[idx], win_end[idx], self.packed,
                                      self.nmask)
        cands = (cand_q, win_start, win_end)
        if self.method == BANDED:
            width = band_diagonals(m, e, win_start, win_end)
            banded = ~on_cpu & (m > e) & (width >= 1) & (width <= LANES)
            self._launch(banded_kernel, banded, qcodes, qoff, qerr, cands, out)
            self._launch(bitvector_kernel, ~on_cpu & ~banded, qcodes, qoff, qerr, cands, out)
        else:
            self._launch(bitvector_kernel, ~on_cpu, qcodes, qoff, qerr, cands, out)
        return out

    def _launch(self, kernel: CUDADispatcher, sel: np.ndarray, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
                cands: tuple[np.ndarray, ...], out: np.ndarray) -> None:
        idx = np.flatnonzero(sel)
        if idx.size == 0:
            return
        st = self.stream
        d_qcodes, d_qoff, d_qerr = self.resident_reads(qcodes, qoff, qerr)
        every = idx.size == cands[0].size
        args = [cuda.to_device(x if every else x[idx], stream=st) for x in cands]
        d_out = cuda.device_array(idx.size, dtype=np.int32, stream=st)
        if kernel is banded_kernel:
            kernel[(idx.size + SLOTS - 1) // SLOTS, (LANES, SLOTS), st](
                d_qcodes, d_qoff, d_qerr, *args, self.d_packed, self.d_nmask, d_out)
        else:
            kernel[(idx.size + THREADS - 1) // THREADS, THREADS, st](
                d_qcodes, d_qoff, d_qerr, *args, self.d_packed, self.d_nmask, d_out)
        host = d_out.copy_to_host(stream=st)
        sync(st)
        out[idx] = host
