"""MAROSE seed + filter on an OpenCL device: the CPU's neighborhood engine (engines/neighborhood.py) with its
count and fill passes done by seed_filter.cl, one work-item per (query, window of its plan; the count pass
keeps each one's hits for the fill pass where they are one position range), each query's windows sorted by
start there too. What follows the fill (the bulk verification of a repetitive read's
candidates, the merge of overlapping windows) is the CPU engine's own code (engines.base.CandidateEngine),
so the merged windows are the CPU's, the same rows in the same order."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from seedmap.backends.opencl.program import OpenClDevice
from seedmap.engines.base import QueryMemo
from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.filter import plan
from seedmap.index.neighborhood import NeighborhoodIndex
from seedmap.index.perfect_hash import PerfectHash

I64 = np.int64


class OpenClNeighborhoodEngine(NeighborhoodEngine):
    """The bs filter (or, with `ph`, the perfect-hash one) over contiguous seeds on `device`; one per worker
    (its own queue and kernel objects: setting a kernel's arguments is not thread-safe), the device's
    copies of the index shared. `bulk`, `packed`, `nmask`: the CPU engine's verifier."""

    def __init__(self, device: OpenClDevice, index: NeighborhoodIndex, ref_starts: np.ndarray, windows: int = 0,
                 step: int = 0, fe: int = 0, ph: PerfectHash | None = None, *,
                 bulk: Callable[..., np.ndarray] | None = None, packed: np.ndarray | None = None,
                 nmask: np.ndarray | None = None) -> None:
        super().__init__(index, ref_starts, windows=windows, step=step, fe=fe, bulk=bulk, packed=packed, nmask=nmask)
        cl = self.cl = device.cl
        self.device = device
        self.queue = cl.CommandQueue(device.context)
        program = device.filter_program(index.pos.dtype)
        self.open_k, self.count_k, self.fill_k, self.sort_k = (
            cl.Kernel(program, name) for name in ("open_kernel", "count_kernel", "fill_kernel", "sort_kernel"))
        self.d_index = device.copies(index, "index", lambda: tuple(
            device.buffer(a) for a in (index.seed_start, index.nbs, index.nb_pos, index.pos)))
        self.d_starts = device.copies(index, "reference starts", lambda: device.buffer(self.ref_starts))
        # --filter ph: the perfect hashes; placeholders (one entry each) for the bs filter
        self.ph_on = np.int32(ph is not None)
        tables = (ph.ph_off, ph.ph_block, ph.ph_g, ph.ph_table) if ph is not None else (
            np.zeros(1, I64), np.zeros(2, np.uint32), np.zeros(1, np.uint8), np.zeros(1, I64))
        self.d_ph = device.copies(ph if ph is not None else index, f"perfect hashes {ph is not None}",
                                  lambda: tuple(device.buffer(np.ascontiguousarray(a).reshape(-1)) for a in tables))

    def _plan_args(self) -> tuple:
        """u, l, windows, step, fe: the kernels' plan arguments (open_kernel takes all but fe)."""
        ix = self.index
        return I64(ix.u), I64(ix.l), I64(self.windows), I64(self.step), I64(self.fe)

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
               memo: QueryMemo | None = None) -> tuple[np.ndarray, tuple]:
        """Candidates per query; the state: the queries' device copies and each (query, window)'s first slot."""
        nq = qoff.size - 1
        dev = self.device
        m = np.diff(np.asarray(qoff, dtype=I64))
        e = np.asarray(qerr, dtype=I64)[np.arange(nq) >> 1]
        nwin = plan.windows_per_query(m, e, self.max_window, self.windows, self.step)
        queries = tuple(dev.buffer(np.asarray(a, dtype=t)) for a, t in ((qcodes, np.uint8), (qoff, I64), (qerr, I64)))
        counts = np.zeros(max(nq * nwin, 1), dtype=I64)
        # each (query, window)'s seed block, and its hits as one position range where they are one (the fill
        # pass's shortcut)
        d_blocks, d_ranges = (self.cl.Buffer(dev.context, self.cl.mem_flags.READ_WRITE, 2 * counts.nbytes)
                              for _ in range(2))
        if nq:
            d_counts = self.cl.Buffer(dev.context, self.cl.mem_flags.WRITE_ONLY, counts.nbytes)
            seed_start, nbs, nb_pos, _ = self.d_index
            plan_args = self._plan_args()
            dev.launch(self.open_k, self.queue, nq * nwin, *queries, I64(nwin), *plan_args[:-1], seed_start, d_blocks)
            dev.launch(self.count_k, self.queue, nq * nwin, *queries, I64(nwin), *plan_args, d_blocks, nbs, nb_pos,
                       self.ph_on, *self.d_ph, d_counts, d_ranges)
            self.cl.enqueue_copy(self.queue, counts, d_counts)
        counts = counts[:nq * nwin]
        slots = np.zeros(nq * nwin + 1, dtype=I64)  # each (query, window)'s first slot, queries in order
        np.cumsum(counts, out=slots[1:])
        return counts.reshape(nq, nwin).sum(axis=1), (queries, nwin, slots, d_blocks, d_ranges)

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        """The windows of queries [first, last) into win_s, win_e, win_d, sorted by start per query."""
        if win_s.size == 0:
            return
        cl, dev = self.cl, self.device
        queries, nwin, slots, d_blocks, d_ranges = state
        base = int(cand_off[first])
        nt = (last - first) * nwin
        cursor = dev.buffer(slots[first * nwin:last * nwin] - base)
        outs = [cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, win_s.nbytes) for _ in range(3)]
        _, nbs, nb_pos, pos = self.d_index
        dev.launch(self.fill_k, self.queue, nt, I64(first * nwin), *queries, I64(nwin), *self._plan_args(), d_blocks,
                   nbs, nb_pos, pos, self.d_starts, I64(self.ref_starts.size), self.ph_on, *self.d_ph, d_ranges, cursor,
                   *outs)
        seg_off = dev.buffer(np.asarray(cand_off[first:last + 1], dtype=I64) - base)
        dev.launch(self.sort_k, self.queue, last - first, seg_off, *outs)
        for host, buf in zip((win_s, win_e, win_d), outs, strict=True):
            cl.enqueue_copy(self.queue, host, buf, is_blocking=False)
        self.queue.finish()
