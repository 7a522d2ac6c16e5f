"""The FM-index engine on a CUDA device: the search scheme, the locates and the dedupe all run there
(fm_kernels, merge); only the merged windows come back. Same windows as the CPU FmEngine, exactly."""

from __future__ import annotations

import numpy as np
from numba import cuda

from seedmap.backends.cuda import fm_kernels as fk
from seedmap.backends.cuda.merge import merged_windows
from seedmap.backends.cuda.resident import DeviceShare
from seedmap.backends.cuda.verify_kernels import sync
from seedmap.engines.base import DEVICE_CANDIDATE_CAP, CandidateEngine, QueryMemo, in_chunks, no_windows
from seedmap.engines.fm import ANY_WINDOW, DEFAULT_VERIFY_BELOW, SAVED_ROWS, FmEngine, index_spans_alone
from seedmap.filter.fm_lookup import tables
from seedmap.filter.fm_scheme import ROW, scratch_size
from seedmap.index.fm import FmIndex

# Search scratch per engine (each worker has its own): at 100 bp and e = 5 a query takes 42 kB, so about
# 12,000 queries are searched per launch, and a device's workers launch side by side.
SCRATCH_BYTES = 512 << 20


class CudaFmEngine(CandidateEngine):
    """Candidates of an FM index (or of one genome segment's: ref_starts are then its sequences' starts)
    found on the current device; the index copied there once per device (`share`)."""

    round0_min = FmEngine.round0_min

    def __init__(self, index: FmIndex, ref_starts: np.ndarray, stream: object = 0, share: DeviceShare | None = None,
                 verify_below: int = DEFAULT_VERIFY_BELOW, candidate_cap: int = DEVICE_CANDIDATE_CAP,
                 scratch_bytes: int = SCRATCH_BYTES, saved_rows: int = SAVED_ROWS) -> None:
        super().__init__(ref_starts)
        self.saved_rows = saved_rows
        self.index = index
        self.small = verify_below
        self.max_window = ANY_WINDOW
        self.stream = stream
        self.candidate_cap = candidate_cap
        self.scratch_bytes = scratch_bytes
        share = share if share is not None else DeviceShare()
        self.d_ref_starts = cuda.to_device(self.ref_starts, stream=stream)
        fwd_table, rev_table = tables(index)
        self.d_ix = share.get(index, "fm index", lambda: {
            name: cuda.to_device(np.ascontiguousarray(a), stream=0)
            for name, a in {**index.arrays(), "fwd_table": fwd_table, "rev_table": rev_table}.items()})

    def spans_alone(self, packed: np.ndarray, nmask: np.ndarray, seq_starts: np.ndarray, start: np.ndarray,
                    end: np.ndarray, parts: np.ndarray) -> np.ndarray:
        return index_spans_alone(self.index, packed, nmask, seq_starts, start, end, parts)

    def _search(self, d_q: object, d_qoff: object, d_qerr: object, ids: np.ndarray, width: int, d_rows: object,
                row_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """search_kernel over queries `ids` (as many per launch as the scratch holds): (accepted strings,
        candidates) of each."""
        st, ix, d = self.stream, self.index, self.d_ix
        k = ids.size
        per_launch = max(1, min(k, self.scratch_bytes // (8 * width)))
        d_scratch = cuda.device_array((width, per_launch), dtype=np.int64, stream=st)  # a column per thread
        d_ids = cuda.to_device(ids, stream=st)
        d_row_off = cuda.to_device(row_off, stream=st)
        d_n = cuda.device_array(k, dtype=np.int64, stream=st)
        d_cand = cuda.device_array(k, dtype=np.int64, stream=st)
        for first in range(0, k, per_launch):
            last = min(k, first + per_launch)
            grid = (last - first + fk.THREADS - 1) // fk.THREADS
            fk.search_kernel[grid, fk.THREADS, st](d_q, d_qoff, d_qerr, d_ids, first, last, ix.n, d["counts"],
                                                   d["fwd_occ"], d["rev_occ"], d["fwd_table"], d["rev_table"],
                                                   self.small, d_scratch, d_rows, d_row_off, d_n, d_cand)
        n_rows, cand = d_n.copy_to_host(stream=st), d_cand.copy_to_host(stream=st)
        sync(st)
        return n_rows, cand

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
                          memo: QueryMemo | None = None) -> tuple[np.ndarray, np.ndarray]:
        # memo is not used: each device thread computes its query's D arrays in its own scratch.
        nq = qoff.size - 1
        if nq <= 0:
            return no_windows()
        st = self.stream
        qoff = np.ascontiguousarray(qoff, dtype=np.int64)
        qerr = np.ascontiguousarray(qerr, dtype=np.int64)
        width = int(scratch_size(int(np.diff(qoff).max()), int(qerr.max())))
        d_q = cuda.to_device(np.ascontiguousarray(qcodes, dtype=np.uint8), stream=st)
        d_qoff = cuda.to_device(qoff, stream=st)
        d_qerr = cuda.to_device(qerr, stream=st)
        # Pass 1: every query, its first saved_rows accepted strings kept.
        keep = self.saved_rows
        row_at = np.arange(nq + 1, dtype=np.int64) * keep
        d_rows = cuda.device_array((nq * keep, ROW), dtype=np.int64, stream=st)
        n_rows, cand = self._search(d_q, d_qoff, d_qerr, np.arange(nq, dtype=np.int64), width, d_rows, row_at)
        more = np.flatnonzero(n_rows > keep)
        if more.size:  # searched again into room for all their strings, behind the kept ones
            extra_off = np.zeros(more.size + 1, dtype=np.int64)
            np.cumsum(n_rows[more], out=extra_off[1:])
            extra_off += nq * keep
            grown = cuda.device_array((int(extra_off[-1]), ROW), dtype=np.int64, stream=st)
            grown[:nq * keep].copy_to_device(d_rows, stream=st)
            d_rows = grown
            self._search(d_q, d_qoff, d_qerr, more, width, d_rows, extra_off)
            row_at[more] = extra_off[:-1]
        d_row_at = cuda.to_device(row_at, stream=st)
        d_n_rows = cuda.to_device(n_rows, stream=st)
        cand_off = np.zeros(nq + 1, dtype=np.int64)
        np.cumsum(cand, out=cand_off[1:])
        d_cand_off = cuda.to_device(cand_off, stream=st)
        return in_chunks(cand_off, self.candidate_cap, lambda first, last: self._chunk(
            d_qoff, d_qerr, first, last, d_rows, d_row_at, d_n_rows, cand_off, d_cand_off))

    def _chunk(self, d_qoff: object, d_qerr: object, first: int, last: int, d_rows: object, d_row_at: object,
               d_n_rows: object, cand_off: np.ndarray, d_cand_off: object) -> tuple[np.ndarray, np.ndarray]:
        """Windows of queries [first, last): located and written on the device, then sorted and merged."""
        st, d = self.stream, self.d_ix
        base = int(cand_off[first])
        size = int(cand_off[last]) - base
        win = [cuda.device_array(max(size, 1), dtype=np.int64, stream=st) for _ in range(3)]
        grid = (last - first + fk.THREADS - 1) // fk.THREADS
        fk.fill_kernel[grid, fk.THREADS, st](d_qoff, d_qerr, first, last, d["counts"], d["text_starts"],
                                             d["fwd_occ"], d["fwd_mark"], d["fwd_ssa"], self.d_ref_starts, d_rows,
                                             d_row_at, d_n_rows, d_cand_off, *win)
        return merged_windows(st, first, last, cand_off[first:last + 1] - base, win)
