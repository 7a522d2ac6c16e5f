"""FM-index kernels: rank (O), backward search, locate through the sampled SA (see index/fm.py).

Symbols are 0..4 = A C G T N (text codes 1..5). Intervals are half-open row ranges [lo, hi).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.index.fm_layout import COUNTS_AT
from seedmap.index.fm_occ import ONE, ZERO, block_row, occ, popcount, super_row  # noqa: F401  (occ: re-exported)
from seedmap.intrinsics import prefetch_row


@njit(cache=True, nogil=True, inline="always")
def rank(table: np.ndarray, width: int, c: int, i: int) -> int:
    """Rows before i whose bit c is set, in a (blocks, 2 * width) count/bit table."""
    w = i >> 6
    below = (ONE << np.uint64(i & 63)) - ONE
    return np.int64(table[w, c]) + popcount(table[w, width + c] & below)


@njit(cache=True, nogil=True, inline="always")
def occ_all(occ_tab: np.ndarray, i: int) -> tuple[int, int, int, int, int]:
    """(O(0, i), ..., O(4, i)): occ() of every symbol, the block's bit planes and masks read once (the right
    walk's five children of a node: 250 Mbp human-like genome, e = 5, the search 5-8 % faster than five
    extends, which read them again for each symbol)."""
    r = block_row(i)
    s = super_row(i)
    below = (ONE << np.uint64(i & 63)) - ONE
    second = ZERO - np.uint64((i >> 6) & 1)
    m0, m1 = below | second, below & second  # the rows below i in the block's first and second half
    a0, a1 = occ_tab[r, 0], occ_tab[r, 1]  # bit plane 0 of the codes (1..5 = A C G T N), then 1 and 2
    b0, b1 = occ_tab[r, 2], occ_tab[r, 3]
    c0, c1 = occ_tab[r, 4], occ_tab[r, 5]
    w0, w1 = occ_tab[r, COUNTS_AT], occ_tab[r, COUNTS_AT + 1]
    mask = np.uint64(0xFFFF)
    return (np.int64(occ_tab[s, 0] + (w0 & mask)) + popcount(a0 & ~b0 & ~c0 & m0) + popcount(a1 & ~b1 & ~c1 & m1),
            np.int64(occ_tab[s, 1] + ((w0 >> np.uint64(16)) & mask)) + popcount(~a0 & b0 & ~c0 & m0)
            + popcount(~a1 & b1 & ~c1 & m1),
            np.int64(occ_tab[s, 2] + ((w0 >> np.uint64(32)) & mask)) + popcount(a0 & b0 & ~c0 & m0)
            + popcount(a1 & b1 & ~c1 & m1),
            np.int64(occ_tab[s, 3] + ((w0 >> np.uint64(48)) & mask)) + popcount(~a0 & ~b0 & c0 & m0)
            + popcount(~a1 & ~b1 & c1 & m1),
            np.int64(occ_tab[s, 4] + (w1 & mask)) + popcount(a0 & ~b0 & c0 & m0) + popcount(a1 & ~b1 & c1 & m1))


@njit(cache=True, nogil=True, inline="always")
def prefetch_occ(occ_tab: np.ndarray, i: int) -> None:
    """Ask for what occ(occ_tab, ., i) reads, row i's block and its superblock's row, while other work goes on
    (no effect on results). A search's extends wait on such misses one after another; asked for early, the misses
    of independent searches overlap. The CUDA twins take a stand-in that does nothing (backends/cuda/fm_kernels.py)."""
    prefetch_row(occ_tab, block_row(i))
    prefetch_row(occ_tab, super_row(i))


@njit(cache=True, nogil=True, inline="always")
def extend(occ_tab: np.ndarray, counts: np.ndarray, lo: int, hi: int, c: int) -> tuple[int, int]:
    """Backward-search step: the rows of c + (rows [lo, hi))."""
    return counts[c] + occ(occ_tab, c, lo), counts[c] + occ(occ_tab, c, hi)


@njit(cache=True, nogil=True, inline="always")
def extend_right(rev_occ: np.ndarray, counts: np.ndarray, lo: int, hi: int, flo: int, c: int) -> tuple[int, int, int]:
    """Bidirectional step: string X (rows [lo, hi) of the reverse-text index, its forward rows from flo) becomes
    Xc. The forward rows of Xc follow those of X with a separator or a symbol below c after X, which the
    reverse index's BWT of X's rows counts: one occ_all per end instead of a backward step in each index."""
    below_lo, below_hi = occ_all(rev_occ, lo), occ_all(rev_occ, hi)
    at_or_above = 0  # X's rows followed by c or a larger symbol (the forward rows of Xc and after)
    for x in range(c, 5):
        at_or_above += below_hi[x] - below_lo[x]
    return counts[c] + below_lo[c], counts[c] + below_hi[c], flo + (hi - lo) - at_or_above


@njit(cache=True, nogil=True)
def backward_search(occ_tab: np.ndarray, counts: np.ndarray, n: int, p: np.ndarray) -> tuple[int, int]:
    """Rows of the suffixes starting with p (symbols 0..3; anything else, an N, matches nothing)."""
    lo, hi = 0, n
    for k in range(p.size - 1, -1, -1):
        c = p[k]
        if c > 3:
            return 0, 0
        lo, hi = extend(occ_tab, counts, lo, hi, c)
        if lo >= hi:
            return 0, 0
    return lo, hi


@njit(cache=True, nogil=True)
def bwt_symbol(occ_tab: np.ndarray, i: int) -> np.int64:
    """B[i] as a symbol 0..4, or -1 for a separator (code 0)."""
    r = block_row(i)
    half = (i >> 6) & 1
    bit = np.uint64(i & 63)
    code = ((occ_tab[r, half] >> bit) & ONE) | (((occ_tab[r, 2 + half] >> bit) & ONE) << ONE)
    code |= ((occ_tab[r, 4 + half] >> bit) & ONE) << np.uint64(2)
    return np.int64(code) - 1


@njit(cache=True, nogil=True, inline="always")
def lf_unless_marked(occ_tab: np.ndarray, counts: np.ndarray, mark: np.ndarray, i: int) -> tuple[int, int]:
    """(row, 0) for a sampled row i, else (LF(i), 1): one step of locate."""
    if (mark[i >> 6, 1] >> np.uint64(i & 63)) & ONE:
        return i, 0
    c = bwt_symbol(occ_tab, i)
    return counts[c] + occ(occ_tab, c, i), 1


@njit(cache=True, nogil=True, inline="always")
def sampled_position(mark: np.ndarray, ssa: np.ndarray, i: int, steps: int) -> np.int64:
    """SA of the row that reached sampled row i after `steps` LF steps: i's SA sample plus the steps."""
    return np.int64(ssa[rank(mark, 1, 0, i)]) + steps


@njit(cache=True, nogil=True)
def locate(occ_tab: np.ndarray, counts: np.ndarray, mark: np.ndarray, ssa: np.ndarray, i: int) -> int:
    """SA[i]: walk LF to a sampled row (every separator row is one) and add the steps taken."""
    steps = 0
    while True:
        i, k = lf_unless_marked(occ_tab, counts, mark, i)
        if k == 0:
            break
        steps += 1
    return sampled_position(mark, ssa, i, steps)


@njit(cache=True, nogil=True)
def locate_four(occ_tab: np.ndarray, counts: np.ndarray, mark: np.ndarray, ssa: np.ndarray, a: int, b: int,
                c: int, d: int) -> tuple[int, int, int, int]:
    """locate() of four rows, walked in step: each step of one row is a cache miss or two that waits for the
    one before, so four independent walks overlap their misses (250 Mbp human-like genome: random rows 0.75-0.85 us
    each instead of 1.2-1.5; the fill pass, whose rows lie in ranges that share cache lines, 6 % faster)."""
    sa = sb = sc = sd = 0
    while True:
        a, ka = lf_unless_marked(occ_tab, counts, mark, a)
        b, kb = lf_unless_marked(occ_tab, counts, mark, b)
        c, kc = lf_unless_marked(occ_tab, counts, mark, c)
        d, kd = lf_unless_marked(occ_tab, counts, mark, d)
        if ka + kb + kc + kd == 0:
            break
        sa += ka
        sb += kb
        sc += kc
        sd += kd
    return (sampled_position(mark, ssa, a, sa), sampled_position(mark, ssa, b, sb),
            sampled_position(mark, ssa, c, sc), sampled_position(mark, ssa, d, sd))


@njit(cache=True, nogil=True, inline="always")
def table_k(table: np.ndarray) -> int:
    """k of a k-mer table (fm_lookup.py: its 4^k rows, then the shorter levels': level_row(k, k) in all)."""
    k = 0
    while level_row(k, k) < table.shape[0]:
        k += 1
    return k


@njit(cache=True, nogil=True, inline="always")
def level_row(k: int, j: int) -> int:
    """Where the strings of length j < k start in a k-mer table (after its 4^k k-mers, the levels 0, 1, ...);
    level_row(k, k): the table's rows."""
    return (1 << (2 * k)) + ((1 << (2 * j)) - 1) // 3


@njit(cache=True, nogil=True, inline="always")
def key_leftwards(q: np.ndarray, a: int, k: int) -> int:
    """The key of q[a:a + k], searched leftwards (from q[a + k - 1] to q[a]); -1 where it holds an N."""
    key = 0
    for i in range(a, a + k):
        c = q[i]
        if c > 3:
            return -1
        key = key * 4 + c
    return key


@njit(cache=True, nogil=True, inline="always")
def key_rightwards(q: np.ndarray, a: int, k: int) -> int:
    """The key of q[a:a + k] searched rightwards (from q[a] to q[a + k - 1]) in the reverse-text index: that
    of the reversed string; -1 where it holds an N."""
    key = 0
    for i in range(a + k - 1, a - 1, -1):
        c = q[i]
        if c > 3:
            return -1
        key = key * 4 + c
    return key


@njit(cache=True, nogil=True, inline="always")
def _bound_step(occ_tab: np.ndarray, counts: np.ndarray, n: int, ext: np.ndarray, bound: np.ndarray,
                table: np.ndarray, kk: int, i: int, k: int, lo: int, hi: int,
                fresh: bool) -> tuple[int, int, int, int, bool]:
    """One step of lower_bounds at read position i (state: the pieces cut so far k, the rows [lo, hi) of the
    current one, fresh: a new piece starts here): a k-mer lookup or a backward-search step. Returns the
    state at the next position."""
    if fresh and kk and i + 1 >= kk:  # a new piece's first kk symbols, looked up
        key = key_leftwards(ext, i + 1 - kk, kk)
        if key >= 0 and table[key, 0] < table[key, 1]:
            for t in range(i + 1 - kk, i + 1):
                bound[t] = k
            # numba's np.int64 is the int of the other paths; numpy's hints keep it apart
            return i - kk, k, np.int64(table[key, 0]), np.int64(table[key, 1]), False  # type: ignore[return-value]
    c = ext[i]
    if c <= 3:
        lo, hi = extend(occ_tab, counts, lo, hi, c)
    fresh = c > 3 or lo >= hi
    if fresh:
        k += 1
        lo, hi = 0, n
    bound[i] = k
    return i - 1, k, lo, hi, fresh


@njit(cache=True, nogil=True)
def lower_bounds(occ_tab: np.ndarray, counts: np.ndarray, n: int, ext: np.ndarray, length: int,
                 bound: np.ndarray, table: np.ndarray) -> None:
    """BWA's D array: bound[i] = edits that ext[i:length] needs to match anywhere in the text (greedy cut
    into pieces that do not occur; each costs one edit). occ_tab must index the text in which extending the
    piece by ext[i] is a backward-search step (the other index than the one the pattern is searched in);
    table is its k-mer table (fm_lookup.py), which starts each piece. The search computes both of a read's
    arrays at once (lower_bounds_pair); this single walk is their reference in the tests."""
    bound[length] = 0
    kk = table_k(table)
    i, k, lo, hi, fresh = length - 1, 0, 0, n, True
    while i >= 0:
        i, k, lo, hi, fresh = _bound_step(occ_tab, counts, n, ext, bound, table, kk, i, k, lo, hi, fresh)


@njit(cache=True, nogil=True, _nrt=False)
def lower_bounds_pair(counts: np.ndarray, n: int, length: int, occ_a: np.ndarray, ext_a: np.ndarray,
                      bound_a: np.ndarray, table_a: np.ndarray, occ_b: np.ndarray, ext_b: np.ndarray,
                      bound_b: np.ndarray, table_b: np.ndarray) -> None:
    """lower_bounds() of two patterns of one length (a read's suffixes in one index, its reversed prefixes in
    the other), walked in step: each step is a cache miss or two that waits for the one before, so the two
    walks overlap their misses (as locate_four's do)."""
    bound_a[length] = bound_b[length] = 0
    ka = table_k(table_a)
    kb = table_k(table_b)
    ia, da, loa, hia, fa = length - 1, 0, 0, n, True
    ib, db, lob, hib, fb = length - 1, 0, 0, n, True
    while ia >= 0 or ib >= 0:  # (one loop: each inlined copy of _bound_step costs seconds of compiling)
        if ia >= 0:
            ia, da, loa, hia, fa = _bound_step(occ_a, counts, n, ext_a, bound_a, table_a, ka, ia, da, loa, hia, fa)
        if ib >= 0:
            ib, db, lob, hib, fb = _bound_step(occ_b, counts, n, ext_b, bound_b, table_b, kb, ib, db, lob, hib, fb)
