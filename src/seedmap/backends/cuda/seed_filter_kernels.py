"""MAROSE seed + filter on the GPU: the twin of filter/neighborhood_passes.py (count_candidates,
fill_windows) and windows.py (merge_windows) with the same result: per query, the merged
verification windows (start, end, min diag, max diag), ordered by query then start.

One thread per (query, window): the window's seed block is looked up in the SeedBlocks resident on the
device and every degenerated pattern (<= fe substitutions of the neighborhood part) is binary searched in
it, or (--filter ph) looked up in the block's BDZ perfect hash with the CPU filter's own code. No fixed
per-read list: a count kernel, an exclusive scan, then a fill kernel writing each (query, window)'s
candidates into its own slots; then per query a sort by start (heap sort in place: a repeat with
thousands of hits costs time, never hits) and the merge of overlapping windows (count, scan, fill): the
deduplication happens on the device, and only the merged windows come back.

An index larger than its share of the device memory is cut into slices of consecutive seed addresses (each
window looks up one seed block, or a range of blocks for short windows, split cleanly at slice borders);
slices are loaded in turn and each (query, window) appends its candidates behind those of the previous
slices, so the result does not depend on the cut.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int64, types

from seedmap.backends.cuda.seed_filter_args import IndexSlice, Window
from seedmap.backends.cuda.twins import device_twins
from seedmap.filter import neighborhood_bs, plan, windows
from seedmap.filter.degenerate import device_enumerates
from seedmap.filter.windows import Slots
from seedmap.index import perfect_hash as ph
from seedmap.index.perfect_hash import Tables

MAX_FE = 8  # substitutions per window the kernel can enumerate (local array size)
THREADS = 128

_I = types.int64  # Python ints at the launch sites
_U8 = types.Array(types.uint8, 1, "C")
_U32 = types.Array(types.uint32, 1, "C")
_I64 = types.Array(types.int64, 1, "C")
_I64_2D = types.Array(types.int64, 2, "C")
# The perfect hashes (--filter ph): on, then ph_off, ph_block, ph_g, ph_table (index/perfect_hash.py).
_PH = (types.boolean, _I64, types.Array(types.uint32, 2, "C"), _U8, _I64)

# The BDZ lookup of the CPU's perfect-hash filter, the same code on the device (twins.py).
_find = device_twins(ph.find).find
# The window plan, the binary search of a seed block and the windows of its hits: the CPU filter's code.
plan_window = device_twins(plan.plan_window).plan_window
_search = device_twins(neighborhood_bs.lower_bound, neighborhood_bs.prefix_end)
lower_bound, prefix_end = _search.lower_bound, _search.prefix_end
emit_windows = device_twins(windows.emit_windows).emit_windows


def fill_signature(pos: types.Array) -> tuple:
    """fill_kernel's argument types for an index whose positions (pos) have this type."""
    return (_U8, _I64, _I64) + (_I,) * 9 + (_I64, _U32, _I64, pos, _I64, _I, _I) + _PH + (_I64,) * 4


# Every kernel of this module and the argument types CudaNeighborhoodEngine launches it with (compiled
# ahead by engines.warm_up, checked against the real launches under the simulator, compiled for real GPUs
# by tests/test_cuda_compile.py). The index's pos is uint32 (references < 4 Gbp) or int64.
SIGNATURES = {
    "count_kernel": [(_U8, _I64, _I64) + (_I,) * 8 + (_I64, _U32, _I64, _I, _I) + _PH + (_I64,)],
    "fill_kernel": [fill_signature(_U32), fill_signature(_I64)],
    "sort_kernel": [(_I64,) * 4],
    "merge_kernel": [(_I64,) * 5 + (_I64_2D, types.boolean)],
}


@cuda.jit(device=True)
def visit_window(win: Window, u: int, l: int, fe: int, part: IndexSlice, ph_on: bool, hashes: Tables, emit: bool,
                 out: Slots, w: int) -> int:
    """Candidates of window `win` in the index slice `part`: their number, or (emit) the next free slot
    after writing them into `out` from slot w. ph_on: a full-length pattern is looked up in its block's
    perfect hash (`hashes`, global tables) rather than binary searched (the same neighborhood either way;
    windows shorter than u + l keep the search)."""
    qcodes, qa, o, length, m, e = win
    slice_lo, slice_hi, seed_start, nbs, nb_pos, pos, nb_base, pos_base = part
    count = 0
    vs = cuda.local.array(3, int64)
    for i in range(length):
        if qcodes[qa + o + i] > 3:
            return w if emit else 0  # N never matches: this window cannot be the exact one
    if length <= u:  # short window: a range of seed blocks
        a = 0
        for i in range(length):
            a = (a << 2) | int64(qcodes[qa + o + i])
        shift = 2 * (u - length)
        s_lo = max(a << shift, slice_lo)
        s_hi = min((a + 1) << shift, slice_hi)
        if s_lo >= s_hi:
            return w if emit else 0
        lo = nb_pos[seed_start[s_lo - slice_lo] - nb_base] - pos_base
        hi = nb_pos[seed_start[s_hi - slice_lo] - nb_base] - pos_base
        if emit:
            return emit_windows(o, lo, hi, m, e, pos, out.ref_starts, w, out.start, out.end, out.diag)
        return hi - lo
    a = 0
    for i in range(u):
        a = (a << 2) | int64(qcodes[qa + o + i])
    if a < slice_lo or a >= slice_hi:
        return w if emit else 0
    b0 = seed_start[a - slice_lo] - nb_base
    b1 = seed_start[a - slice_lo + 1] - nb_base
    if b0 == b1:
        return w if emit else 0
    r = length - u
    base = 0
    for i in range(r):
        base = (base << 2) | int64(qcodes[qa + o + u + i])
    shift = 2 * (l - r)
    idx = cuda.local.array(MAX_FE, int64)
    kmax = min(fe, r)
    for k in range(kmax + 1):
        for i in range(k):
            idx[i] = i
        while True:
            p3 = 1
            for _ in range(k):
                p3 *= 3
            for digits in range(p3):
                value = base
                d = digits
                for i in range(k):
                    bit = 2 * (r - 1 - idx[i])
                    old = (base >> bit) & 3
                    new = (old + 1 + d % 3) & 3
                    d //= 3
                    value += (new - old) << bit
                if ph_on and r == l:
                    lo = b0 + _find(value, a, hashes.off, hashes.block, hashes.g, hashes.table, vs)
                    hi = lo + 1 if lo >= b0 else lo
                else:
                    lo = lower_bound(nbs, b0, b1, value << shift)
                    hi = prefix_end(nbs, lo, b1, value, r, l)
                if hi > lo:
                    plo = nb_pos[lo] - pos_base
                    phi = nb_pos[hi] - pos_base
                    if emit:
                        w = emit_windows(o, plo, phi, m, e, pos, out.ref_starts, w, out.start, out.end,
                                         out.diag)
                    else:
                        count += phi - plo
            j = k - 1  # next combination of k positions out of r
            while j >= 0 and idx[j] == r - k + j:
                j -= 1
            if j < 0:
                break
            idx[j] += 1
            for i in range(j + 1, k):
                idx[i] = idx[i - 1] + 1
    return w if emit else count


@cuda.jit(cache=True)
def count_kernel(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, nwin: int, u: int, l: int, windows: int,
                 step: int, fe: int, slice_lo: int, slice_hi: int, seed_start: np.ndarray, nbs: np.ndarray,
                 nb_pos: np.ndarray, nb_base: int, pos_base: int, ph_on: bool, ph_off: np.ndarray,
                 ph_block: np.ndarray, ph_g: np.ndarray, ph_table: np.ndarray, counts: np.ndarray) -> None:
    """counts[q * nwin + w] += candidates of window w of query q in this index slice."""
    t = cuda.grid(1)
    if t >= counts.size:
        return
    qi = t // nwin
    qa = qoff[qi]
    m = qoff[qi + 1] - qa
    e = qerr[qi >> 1]
    if m <= e:
        return
    length, o = plan_window(m, e, u + l, windows, step, t - qi * nwin)
    if o < 0:
        return
    # (no positions, nothing written: the count pass passes nb_pos and counts in their places)
    part = IndexSlice(slice_lo, slice_hi, seed_start, nbs, nb_pos, nb_pos, nb_base, pos_base)
    counts[t] += visit_window(Window(qcodes, qa, o, length, m, e), u, l, fe, part, ph_on,
                              Tables(ph_off, ph_block, ph_g, ph_table), False, Slots(counts, counts, counts, counts), 0)


@cuda.jit(cache=True)
def fill_kernel(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, nwin: int, t_first: int, u: int, l: int,
                windows: int, step: int, fe: int, slice_lo: int, slice_hi: int, seed_start: np.ndarray,
                nbs: np.ndarray, nb_pos: np.ndarray, pos: np.ndarray, ref_starts: np.ndarray, nb_base: int,
                pos_base: int, ph_on: bool, ph_off: np.ndarray, ph_block: np.ndarray, ph_g: np.ndarray,
                ph_table: np.ndarray, cursor: np.ndarray, win_s: np.ndarray, win_e: np.ndarray,
                win_d: np.ndarray) -> None:
    """Window (t_first + t) writes its candidates of this index slice from slot cursor[t] on (and moves it)."""
    t = cuda.grid(1)
    if t >= cursor.size:
        return
    g = t_first + t
    qi = g // nwin
    qa = qoff[qi]
    m = qoff[qi + 1] - qa
    e = qerr[qi >> 1]
    if m <= e:
        return
    length, o = plan_window(m, e, u + l, windows, step, g - qi * nwin)
    if o < 0:
        return
    part = IndexSlice(slice_lo, slice_hi, seed_start, nbs, nb_pos, pos, nb_base, pos_base)
    cursor[t] = visit_window(Window(qcodes, qa, o, length, m, e), u, l, fe, part, ph_on,
                             Tables(ph_off, ph_block, ph_g, ph_table), True, Slots(ref_starts, win_s, win_e, win_d),
                             cursor[t])


@cuda.jit(device=True, inline=True)
def _swap(a: np.ndarray, b: np.ndarray, c: np.ndarray, i: int, j: int) -> None:
    a[i], a[j] = a[j], a[i]
    b[i], b[j] = b[j], b[i]
    c[i], c[j] = c[j], c[i]


@cuda.jit(device=True, inline=True)
def _sift(a: np.ndarray, b: np.ndarray, c: np.ndarray, lo: int, root: int, n: int) -> None:
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and a[lo + child + 1] > a[lo + child]:
            child += 1
        if a[lo + root] >= a[lo + child]:
            return
        _swap(a, b, c, lo + root, lo + child)
        root = child


@cuda.jit(cache=True)
def sort_kernel(slot_off: np.ndarray, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray) -> None:
    """Sort each query's windows [slot_off[q], slot_off[q + 1]) by start: insertion sort for the usual
    handful, heap sort (in place, O(n log n)) for repeats. The merge does not depend on the order of
    equal starts."""
    q = cuda.grid(1)
    if q >= slot_off.size - 1:
        return
    lo = slot_off[q]
    n = slot_off[q + 1] - lo
    if n <= 32:
        for i in range(lo + 1, lo + n):
            j = i
            while j > lo and win_s[j - 1] > win_s[j]:
                _swap(win_s, win_e, win_d, j - 1, j)
                j -= 1
        return
    for root in range(n // 2 - 1, -1, -1):
        _sift(win_s, win_e, win_d, lo, root, n)
    for end in range(n - 1, 0, -1):
        _swap(win_s, win_e, win_d, lo, lo + end)
        _sift(win_s, win_e, win_d, lo, 0, end)


@cuda.jit(cache=True)
def merge_kernel(slot_off: np.ndarray, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray, out_off: np.ndarray,
                 rows: np.ndarray, write: bool) -> None:
    """Union of overlapping windows per query (sorted by start), as windows.merge_one: counts
    into out_off[q + 1] (write=False), or rows (start, end, min diag, max diag) from out_off[q]."""
    q = cuda.grid(1)
    if q >= slot_off.size - 1:
        return
    i = slot_off[q]
    hi = slot_off[q + 1]
    n = 0
    r = out_off[q] if write else 0
    while i < hi:
        s = win_s[i]
        end = win_e[i]
        dmin = win_d[i]
        dmax = dmin
        i += 1
        while i < hi and win_s[i] < end:
            end = max(end, win_e[i])
            dmin = min(dmin, win_d[i])
            dmax = max(dmax, win_d[i])
            i += 1
        if write:
            rows[r + n, 0] = s
            rows[r + n, 1] = end
            rows[r + n, 2] = dmin
            rows[r + n, 3] = dmax
        n += 1
    if not write:
        out_off[q + 1] = n


def check_fe(l: int, fe: int) -> bool:
    """Whether the kernel enumerates this many substitutions (else the CPU filter is used)."""
    return device_enumerates(l, fe, MAX_FE)
