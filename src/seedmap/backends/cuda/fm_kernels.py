"""The FM-index engine's search on the GPU (Salavert): the CPU's search scheme (filter/fm_scheme.py) run by
one thread per query, the very same code made into device functions (twins.py), so the accepted strings,
the candidates and their windows are exactly the CPU's.

A search walks the index depth first with its edit-distance columns and stacks in scratch memory: each
thread gets one column of a global (width, threads) scratch array (width: fm_scheme.scratch_size), so a
launch covers as many queries as the scratch holds, and the threads of a warp reading the same word of
their scratch read neighbouring addresses (coalesced). Two passes, as on the CPU: search_kernel finds each query's
accepted strings (the first few kept, all of them counted) and its number of candidates; queries with
more strings than were kept are searched again into room of their own; then fill_kernel locates every
row of every string (sampled SA walk) and writes the query's windows into its slots. The windows are then
sorted and merged per query by seed_filter_kernels' sort and merge kernels.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, types

from seedmap.backends.cuda.twins import device_twins
from seedmap.filter import fm_scheme, fm_search
from seedmap.filter.fm_scheme import Bidir, Locator, Slots

THREADS = 128


def _no_prefetch(occ_tab: object, i: int) -> None:
    """fm_search.prefetch_occ on the device: nothing (its CPU cache hint has no device spelling)."""


_dev = device_twins(fm_scheme.search, fm_scheme.row_windows, stand_ins={fm_search.prefetch_occ: _no_prefetch})
search = _dev.search
row_windows = _dev.row_windows

_I = types.int64
_U8 = types.Array(types.uint8, 1, "C")
_I64 = types.Array(types.int64, 1, "C")
_I64_2D = types.Array(types.int64, 2, "C")
_U64_2D = types.Array(types.uint64, 2, "C")
_U32_2D = types.Array(types.uint32, 2, "C")  # the k-mer tables (filter/fm_lookup.py)


def fill_signature(ssa: types.Array) -> tuple:
    """fill_kernel's argument types for an index whose sampled SA (ssa) has this type (index/fm.py ssa_dtype)."""
    return (_I64, _I64, _I, _I, _I64, _I64, _U64_2D, _U64_2D, ssa, _I64, _I64_2D, _I64, _I64, _I64, _I64, _I64,
            _I64)


# Every kernel and the argument types CudaFmEngine launches it with (see seed_filter_kernels.SIGNATURES).
SIGNATURES = {
    "search_kernel": [(_U8, _I64, _I64, _I64, _I, _I, _I, _I64, _U64_2D, _U64_2D, _U32_2D, _U32_2D, _I, _I64_2D,
                       _I64_2D, _I64, _I64, _I64)],
    "fill_kernel": [fill_signature(types.Array(types.int32, 1, "C")),
                    fill_signature(types.Array(types.uint32, 1, "C")),
                    fill_signature(types.Array(types.int64, 1, "C"))],
}


@cuda.jit(cache=True)
def search_kernel(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, ids: np.ndarray, first: int, last: int,
                  n: int, counts: np.ndarray, fwd_occ: np.ndarray, rev_occ: np.ndarray, fwd_table: np.ndarray,
                  rev_table: np.ndarray, small: int, scratch: np.ndarray, rows: np.ndarray, row_off: np.ndarray,
                  n_rows: np.ndarray, cand: np.ndarray) -> None:
    """Query ids[j], j = first + thread, searched: its first row_off[j + 1] - row_off[j] accepted strings
    written from rows[row_off[j]], their number to n_rows[j] and its candidates to cand[j]."""
    t = cuda.grid(1)
    j = first + t
    if j >= last:
        return
    qi = ids[j]
    q = qcodes[qoff[qi]:qoff[qi + 1]]
    ix = Bidir(n, counts, fwd_occ, rev_occ, fwd_table, rev_table)
    n_rows[j], cand[j] = search(q, qerr[qi >> 1], ix, small, rows[row_off[j]:row_off[j + 1]], scratch[:, t], False)


@cuda.jit(cache=True)
def fill_kernel(qoff: np.ndarray, qerr: np.ndarray, first: int, last: int, counts: np.ndarray,
                text_starts: np.ndarray, fwd_occ: np.ndarray, fwd_mark: np.ndarray, fwd_ssa: np.ndarray,
                ref_starts: np.ndarray, rows: np.ndarray, row_at: np.ndarray, n_rows: np.ndarray,
                cand_off: np.ndarray, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray) -> None:
    """Query first + thread writes the windows of its accepted strings (rows[row_at[q]:], n_rows[q] of
    them) from slot cand_off[q] - cand_off[first] on, unsorted."""
    qi = first + cuda.grid(1)
    if qi >= last:
        return
    a = row_at[qi]
    fwd = Locator(counts, fwd_occ, fwd_mark, fwd_ssa)
    slots = Slots(text_starts, ref_starts, win_s, win_e, win_d)
    row_windows(rows[a:a + n_rows[qi]], n_rows[qi], qoff[qi + 1] - qoff[qi], qerr[qi >> 1], fwd, slots,
                cand_off[qi] - cand_off[first])
