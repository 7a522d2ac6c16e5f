"""The FM engine's candidate search on an OpenCL device: the CPU's FmEngine (engines/fm.py) with its count and
fill passes done by fm_scheme.cl (the search scheme over the bidirectional index, one work-item per query) and
fm_index.cl (rank, locate), each query's windows sorted by start there too. As on CUDA (backends/cuda/fm_engine.py)
the count pass keeps each query's first SAVED_ROWS accepted strings and searches the queries with more again
into room of their own; the fill pass locates every row of every string. What follows (the bulk verification of
the candidates, the merge of overlapping windows) is the CPU engine's own code, so the merged windows are the
CPU's, the same rows in the same order."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from seedmap.backends.opencl.program import WINDOWS_SOURCE, OpenClDevice
from seedmap.engines.base import QueryMemo
from seedmap.engines.fm import DEFAULT_VERIFY_BELOW, SAVED_ROWS, FmEngine
from seedmap.filter import fm_pieces, fm_scheme
from seedmap.filter.fm_scheme import ROW, scratch_size
from seedmap.index import fm
from seedmap.index.fm import FmIndex

if TYPE_CHECKING:
    import pyopencl

I64 = np.int64
SOURCES = (WINDOWS_SOURCE, "fm_index.cl", "fm_scheme.cl")
SSA_TYPES = {np.dtype(np.int32): "int", np.dtype(np.uint32): "uint", np.dtype(np.int64): "long"}  # fm_index.cl's SSA_T
# Search scratch per engine (each worker has its own): at 100 bp and e = 5 a query takes 42 kB, so about 1,500
# queries are searched per launch.
SCRATCH_BYTES = 64 << 20
# The Python constants the kernels use, as build options: one definition for the CPU and the device.
CONSTANTS = {"BLOCK_SHIFT": fm.BLOCK_SHIFT, "SUPER_SHIFT": fm.SUPER_SHIFT, "COUNTS_AT": fm.COUNTS_AT,
             "OCC_WORDS": fm.OCC_WORDS, "MAX_PIECE": fm_pieces.MAX_PIECE, "CUT_FROM": fm_pieces.CUT_FROM,
             "CUT_ABOVE": fm_pieces.CUT_ABOVE, "CUT_WORK": fm_pieces.CUT_WORK, "GRID": fm_pieces.GRID,
             "BIG": fm_scheme.BIG, "ROW": ROW,
             "KIDS": fm_scheme.KIDS, "SMALL_FROM": fm_scheme.SMALL_FROM,
             "WALK_BASE": fm_scheme.WALK_BASE, "WALK_PER_ROW": fm_scheme.WALK_PER_ROW,
             "WALK_FULL_E": fm_scheme.WALK_FULL_E, "WALK_PER_ROW_MAX": fm_scheme.WALK_PER_ROW_MAX,
             "WALK_MAX": fm_scheme.WALK_MAX,
             "D_FROM_E": fm_scheme.D_FROM_E, "STOP_AT": fm_scheme.STOP_AT, "REST_MIN": fm_scheme.REST_MIN}


def fm_program(device: OpenClDevice, ssa_dtype: np.dtype) -> pyopencl.Program:
    """The FM kernels built for an index whose SA samples are of `ssa_dtype` (SSA_TYPES), once per device."""
    options = tuple(f"-D{name}={int(value)}L" for name, value in CONSTANTS.items())
    return device.program(SOURCES, (*options, f"-DSSA_T={SSA_TYPES[np.dtype(ssa_dtype)]}"))


class OpenClFmEngine(FmEngine):
    """Candidates of an FM index (or of one genome segment's: ref_starts are then its sequences' starts) found on
    `device`; one per worker (its own queue and kernel objects: setting a kernel's arguments is not
    thread-safe), the device's copies of the index shared. `bulk`, `packed`, `nmask`: the CPU engine's verifier."""

    def __init__(self, device: OpenClDevice, index: FmIndex, ref_starts: np.ndarray,
                 verify_below: int = DEFAULT_VERIFY_BELOW, saved_rows: int = SAVED_ROWS,
                 scratch_bytes: int = SCRATCH_BYTES, *, bulk: Callable[..., np.ndarray] | None = None,
                 packed: np.ndarray | None = None, nmask: np.ndarray | None = None) -> None:
        super().__init__(index, ref_starts, bulk=bulk, packed=packed, nmask=nmask, verify_below=verify_below,
                         saved_rows=saved_rows)
        cl = self.cl = device.cl
        self.device = device
        self.scratch_bytes = scratch_bytes
        self.queue = cl.CommandQueue(device.context)
        program = fm_program(device, index.fwd_ssa.dtype)
        self.search_k, self.fill_k = (cl.Kernel(program, name) for name in ("search_kernel", "fill_kernel"))
        self.d_ix = device.copies(index, "fm index", lambda: {
            name: device.buffer(np.ascontiguousarray(a).reshape(-1)) for name, a in index.arrays().items()})
        self.d_starts = device.copies(index, "reference starts", lambda: device.buffer(self.ref_starts))

    def _buffer(self, nbytes: int) -> pyopencl.Buffer:
        return self.cl.Buffer(self.device.context, self.cl.mem_flags.READ_WRITE, max(nbytes, 8))

    def _search(self, queries: tuple[pyopencl.Buffer, ...], ids: np.ndarray, width: int, d_rows: pyopencl.Buffer,
                row_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """search_kernel over queries `ids` (as many per launch as the scratch holds): (accepted strings,
        candidates) of each; query ids[j]'s first row_off[j + 1] - row_off[j] strings written from row row_off[j]."""
        d, dev, k = self.d_ix, self.device, ids.size
        per_launch = max(1, min(k, self.scratch_bytes // (8 * width)))
        d_scratch = self._buffer(8 * width * per_launch)  # a contiguous run of width words per work-item
        d_ids, d_row_off = dev.buffer(np.asarray(ids, dtype=I64)), dev.buffer(row_off)
        d_n, d_cand = self._buffer(8 * k), self._buffer(8 * k)
        for first in range(0, k, per_launch):
            dev.launch(self.search_k, self.queue, min(k, first + per_launch) - first, *queries, d_ids, I64(first),
                       I64(self.index.n), d["counts"], d["fwd_occ"], d["rev_occ"], I64(self.small), d_scratch,
                       I64(width), d_rows, d_row_off, d_n, d_cand)
        n_rows, cand = np.empty(k, dtype=I64), np.empty(k, dtype=I64)
        self.cl.enqueue_copy(self.queue, n_rows, d_n, is_blocking=False)
        self.cl.enqueue_copy(self.queue, cand, d_cand, is_blocking=False)
        self.queue.finish()
        return n_rows, cand

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
               memo: QueryMemo | None = None) -> tuple[np.ndarray, tuple]:
        """Candidates per query; the state: the queries' device copies, the accepted strings (rows) and where
        each query's start (row_at) and how many there are (n_rows)."""
        nq = qoff.size - 1
        if nq <= 0:
            return np.zeros(0, dtype=I64), ()
        dev = self.device
        qoff = np.asarray(qoff, dtype=I64)
        width = int(scratch_size(int(np.diff(qoff).max()), int(np.max(qerr))))
        queries = tuple(dev.buffer(np.asarray(a, dtype=t)) for a, t in ((qcodes, np.uint8), (qoff, I64), (qerr, I64)))
        keep = self.saved_rows
        row_at = np.arange(nq + 1, dtype=I64) * keep
        d_rows = self._buffer(8 * ROW * nq * keep)
        n_rows, cand = self._search(queries, np.arange(nq, dtype=I64), width, d_rows, row_at)
        more = np.flatnonzero(n_rows > keep)
        if more.size:  # searched again into room for all their strings, behind the kept ones
            extra_off = np.zeros(more.size + 1, dtype=I64)
            np.cumsum(n_rows[more], out=extra_off[1:])
            extra_off += nq * keep
            grown = self._buffer(8 * ROW * int(extra_off[-1]))
            if nq * keep:
                self.cl.enqueue_copy(self.queue, grown, d_rows, byte_count=8 * ROW * nq * keep)
            d_rows = grown
            self._search(queries, more, width, d_rows, extra_off)
            row_at[more] = extra_off[:-1]
        return cand, (queries, d_rows, dev.buffer(row_at[:nq]), dev.buffer(n_rows))

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        """The windows of queries [first, last) into win_s, win_e, win_d, sorted by start per query."""
        if win_s.size == 0:
            return
        cl, dev, d = self.cl, self.device, self.d_ix
        (_, d_qoff, d_qerr), d_rows, d_row_at, d_n_rows = state
        slot_off = dev.buffer(np.asarray(cand_off[first:last + 1], dtype=I64) - int(cand_off[first]))
        outs = [self._buffer(win_s.nbytes) for _ in range(3)]
        dev.launch(self.fill_k, self.queue, last - first, I64(first), d_qoff, d_qerr, d["counts"], d["text_starts"],
                   I64(self.index.text_starts.size), d["fwd_occ"], d["fwd_mark"], d["fwd_ssa"], self.d_starts, d_rows,
                   d_row_at, d_n_rows, slot_off, *outs)
        for host, buf in zip((win_s, win_e, win_d), outs, strict=True):
            cl.enqueue_copy(self.queue, host, buf, is_blocking=False)
        self.queue.finish()
