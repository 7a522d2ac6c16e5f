"""Bulk bit-parallel verification: the edit distance of a read in many reference windows at once.

This is the interface every device backend implements (a GPU one follows Nouri's mrFAST GPU
verification): one minimum semi-global edit distance per candidate window, capped at e + 1.

Candidate k of query i = cand_q[k] (codes qcodes[qoff[i]:qoff[i + 1]], 0..4, m = its length, e =
qerr[i >> 1]: the two strands of a read share e) is checked against the reference window
[win_start[k], win_end[k]) (n columns): a seed's window [diag - e, diag + m + e) clipped to its
sequence (window_of), or the union of several overlapping ones (engines/base.py verifies a cluster of
a read's nearby candidates as one window).
The result is min(D, e + 1), D = min over the window's columns j = 0..n (column 0 included, so D <= m)
of the DP cell (m, j), where row 0 is 0 everywhere (free start in the text) and N (code 4) never
matches on either side. Results are exact (the early exits below never change them).

Two kernels, both bit-parallel (Myers 1999, in Hyyro's formulation):

- Banded (used whenever the band fits one 64-bit word): every alignment of cost <= e inside the
  window starts at a column >= 0 and ends at a column <= n, so it stays within the window diagonals
  [-e, n - m + e] (Hyyro 2003 bands the diagonals [-e, e] of the candidate; this band is wider because
  a seed's window allows starts at any of its first 2e + 1 columns, up to 4e + 1 diagonals). The band
  (one diagonal more on top: W = n - m + 2e + 2 <= 64 rows, e <= 15 for a seed's window) is one
  word whose bit k always follows the same diagonal. Cells just outside the band enter as real paths
  ("row above + 1" at the bottom, a horizontal "+1" at the top), so every computed cell lies between
  the true value and the band-restricted one: the minimum over the last row is exact when <= e. The
  query's match masks are padded with 64 virtual rows above row 1 that match every character: their
  cells stay 0, the free start. Early exit: every later cell is >= the band's minimum (>= the top cell
  minus the number of -1 vertical deltas), and the last row falls by at most 1 per column. Two windows
  of the same query and length run in lockstep (two independent dependency chains per column).
- Myers (m <= 64: one word; longer reads: blocks of 64 rows with the horizontal delta carried between
  blocks, and Ukkonen's cut-off on blocks: only blocks up to the last one holding a cell <= e are
  computed, a block is added when the row above it is <= e in this or the previous column, and a
  re-entered block starts as "+1 per row"). Early exit: row m cannot fall by more than the columns
  left, nor be reached from the last active row for less than the rows left beyond the columns left.
  Used when the band does not fit (e >= 16) or m <= e; method=MYERS forces it everywhere.

Masks are built once per run of equal queries (eight codes at a time); the window is decoded from
the 2-bit packed reference with a byte table (N adds 4 to the code: rows 4..7 of the 8-row mask table
are N). Candidates are processed in blocks (scratch allocated once per block; ranges of blocks spread over
threads), with the reference windows of the next candidates prefetched.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.intrinsics import popcount as _popcount
from seedmap.intrinsics import prefetch as _prefetch
from seedmap.io.columns import PackedRef, Queries
from seedmap.spread import spread

# Kernels taking arrays are compiled with _nrt=False: they allocate nothing, and without reference
# counting a call costs no atomic increments on arrays shared between threads (the reference); small
# helpers are inlined. (Inlining the kernels too is as fast but compiles 4x longer.)

BLOCK = 512  # candidates per block (scratch is allocated once per block)
PREFETCH = 4  # candidates ahead whose reference window is prefetched

ONE = np.uint64(1)
ZERO = np.uint64(0)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
B63 = np.uint64(63)
B8 = np.uint64(8)
BYTE_LSB = np.uint64(0x0101010101010101)
GATHER = np.uint64(0x0102040810204080)  # (x & BYTE_LSB) * GATHER >> 56: bit 0 of byte k -> bit k
# packed byte -> its four codes, one per byte (little-endian)
DECODE4 = np.array([sum(((b >> (2 * k)) & 3) << (8 * k) for k in range(4)) for b in range(256)], dtype=np.uint32)

AUTO = 0  # banded where the band fits one word, else Myers
MYERS = 1  # Myers everywhere (reference path, benchmarks)


@njit(cache=True, nogil=True, _nrt=False)
def build_peq(qcodes: np.ndarray, a: int, m: int, peq: np.ndarray) -> None:
    """Match masks of query qcodes[a:a+m], word w of character c at peq[8w + c]: word 1 + v bit b <=>
    query[64v + b] == c (c < 4; c = 4..7, N, matches nothing). Word 0 is all ones for every character:
    64 virtual rows above row 1 that match anything (the banded kernel's free start); word nw + 1 is 0
    (padding for funnel shifts). Eight codes at a time: bit planes gathered by a multiplication."""
    nw = (m + 63) >> 6
    for c in range(8):
        peq[c] = ALL
        peq[8 * (nw + 1) + c] = ZERO
    for w in range(nw):
        lo = ZERO
        hi = ZERO
        nn = ZERO
        for g in range(8):
            i = (w << 6) + (g << 3)
            if i >= m:
                break
            x = ZERO  # codes a + i .. a + i + 7 (loaded directly: no helper call taking an array here)
            if a + i + 8 <= qcodes.size:
                for k in range(8):
                    x |= np.uint64(qcodes[a + i + k]) << np.uint64(8 * k)
            else:
                for k in range(qcodes.size - a - i):
                    x |= np.uint64(qcodes[a + i + k]) << np.uint64(8 * k)
            sh = np.uint64(g << 3)
            lo |= (((x & BYTE_LSB) * GATHER) >> np.uint64(56)) << sh
            hi |= ((((x >> ONE) & BYTE_LSB) * GATHER) >> np.uint64(56)) << sh
            nn |= ((((x >> np.uint64(2)) & BYTE_LSB) * GATHER) >> np.uint64(56)) << sh
        rows = m - (w << 6)
        valid = ALL if rows >= 64 else (ONE << np.uint64(rows)) - ONE
        valid &= ~nn
        b = 8 * (w + 1)
        peq[b] = ~lo & ~hi & valid
        peq[b + 1] = lo & ~hi & valid
        peq[b + 2] = ~lo & hi & valid
        peq[b + 3] = lo & hi & valid
        for c in range(4, 8):
            peq[b + c] = ZERO


@njit(cache=True, nogil=True, inline="always")
def no_n(nmask: np.ndarray, a: int, b: int) -> bool:
    """Whether reference bases [a, b) (b > a) hold no N, by the mask's bytes: a byte further either side may say
    there is one, which only sends the caller to its slower path."""
    acc = 0
    for i in range(a >> 3, ((b - 1) >> 3) + 1):
        acc |= nmask[i]
    return acc == 0


@njit(cache=True, nogil=True, _nrt=False)
def _decode(packed: np.ndarray, nmask: np.ndarray, ws: int, n: int, t32: np.ndarray, t8: np.ndarray) -> int:
    """Reference bases [ws, ws + n) as one code per byte, t8[o + i] for base ws + i (o returned):
    0..3, or 4 for N (its packed code is 0, so the byte becomes 4..7 with the N bit added)."""
    b0 = ws >> 2
    for k in range(((ws + n + 3) >> 2) - b0):
        t32[1 + k] = DECODE4[packed[b0 + k]]
    o = 4 + (ws & 3)  # (>= 4: views from o - 1 on need no negative start)
    if not no_n(nmask, ws, ws + n):
        for i in range(n):
            q = ws + i
            t8[o + i] |= ((nmask[q >> 3] >> (q & 7)) & 1) << 2
    return o


@njit(cache=True, nogil=True, inline="always")
def band_step(eq: np.uint64, vp: np.uint64, vn: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64]:
    """One column of the band (see band_run); returns the new vp, vn and xv."""
    xv = eq | vn
    xh = (((eq & vp) + vp) ^ vp) | eq
    nph = ~vn & (xh | vp)  # ~ph, ph = vn | ~(xh | vp) (written for andn)
    mh = vp & xh
    xs = xv >> ONE
    return mh | (~xs & nph), ~nph & xs, xv


@njit(cache=True, nogil=True, inline="always")
def band_fill(fb: np.ndarray, peq: np.ndarray, j: int, dhi: int) -> None:
    """fb[c] = the match bits of character c for the 64 rows from column j's band top (row j - dhi)."""
    off = 63 + j - dhi  # row r <-> bit 63 + r of the masks
    w8 = np.uint64((off >> 6) << 3)
    s = np.uint64(off & 63)
    for c in range(5):
        fb[c] = (peq[w8 + np.uint64(c)] >> s) | ((peq[w8 + np.uint64(c + 8)] << ONE) << (B63 - s))
    fb[5] = fb[4]
    fb[6] = fb[4]
    fb[7] = fb[4]


@njit(cache=True, nogil=True, inline="always")
def _band_last(st: int | np.int64, vp: np.uint64, vn: np.uint64, mk: np.uint64, best: int | np.int64,
               rest: int) -> tuple[int | np.int64, bool | np.bool_]:
    """Column with row m in the band: D(m, j) from the top cell and the deltas down to row m (mask mk);
    returns the new best and whether nothing later can improve it."""
    vnm = np.int64(_popcount(vn & mk))
    dm = st + np.int64(_popcount(vp & mk)) - vnm
    if dm < best:
        best = dm
    return best, dm - rest >= best or st - vnm >= best


@njit(cache=True, nogil=True, _nrt=False)
def band_run(fb: np.ndarray, peq: np.ndarray, t8: np.ndarray, o: int, m: int, e: int, n: int, j: int,
              vp: np.uint64, vn: np.uint64, st: int | np.int64, best: int | np.int64) -> int | np.int64:
    """The banded kernel (see the module docstring) from column j to the end; returns min(D, e + 1).
    Requires m > e, n >= m - e and n - m + 2e + 2 <= 64.

    Bit k of column j is row j - dhi + k. Rows <= 0 are virtual: their match bits are all ones, so
    their deltas stay 0 (the free start). The vertical deltas (vp, vn) are kept aligned to the next
    column: after column j's step, bit k is row j + 1 - dhi + k, the band's new bottom row (bit wd - 1)
    comes out as "row above + 1" by itself (eq is masked to the band, so xv and ph have bit wd - 1 clear),
    and the horizontal delta entering above the band only concerns the dropped top row. st is the top
    cell of column j (bit 0): st(j) = st(j - 1) + 1 - (bit 0 of xv), 0 while it is virtual. Bits of vp
    at or above wd hold garbage that never moves down into the band (carries and shifts go up).

    Chunks of 65 - wd columns share one set of funnel shifts (fb[c] >> column offset). Within a chunk,
    three phases: columns 1..j1 (top row virtual, row m not reached: no bookkeeping), then the top
    cell followed for the early exit (every later cell is >= the band's minimum >= st - #(-1 deltas)),
    then row m in the band (jm..n; the last row also falls by at most 1 per column).
    """
    dhi = n - m + e + 1  # band: window diagonals [-e, dhi]
    wd = dhi + e + 1  # band width, 2..64
    maskw = ALL >> np.uint64(64 - wd)
    span = 65 - wd
    jm = m - e  # first column where row m is in the band (its bottom row), 1 <= jm <= n
    j1 = min(dhi, jm - 1)
    t = t8[o - 1:]  # t[j]: code of column j
    while j <= n:
        band_fill(fb, peq, j, dhi)
        je = min(j + span, n + 1)
        for jj in range(j, min(je, j1 + 1)):
            vp, vn, xv = band_step((fb[t[np.uint64(jj)]] >> np.uint64(jj - j)) & maskw, vp, vn)
        for jj in range(max(j, j1 + 1), min(je, jm)):
            vp, vn, xv = band_step((fb[t[np.uint64(jj)]] >> np.uint64(jj - j)) & maskw, vp, vn)
            st -= np.int64(xv & ONE) - 1
            if st - np.int64(_popcount(vn)) >= best:
                return best
        for jj in range(max(j, jm), je):
            vp, vn, xv = band_step((fb[t[np.uint64(jj)]] >> np.uint64(jj - j)) & maskw, vp, vn)
            st -= np.int64(xv & ONE) - 1
            best, done = _band_last(st, vp, vn, (ONE << np.uint64(m - jj + dhi)) - ONE, best, n - jj)
            if done:
                return best
        j = je
    return best


@njit(cache=True, nogil=True, inline="always")
def band_fits(m: int, e: int, n: int) -> bool:
    """Whether the band of a window of n columns (diagonals [-e, n - m + e + 1], W = n - m + 2e + 2 rows)
    fits one word, for a read longer than its e."""
    return m > e and n - m + 2 * e + 2 <= 64


@njit(cache=True, nogil=True, inline="always")
def band_init(e: int, n: int, m: int) -> np.uint64:
    """vp of column 0 (D(i, 0) = i), aligned to column 1."""
    return (ALL >> np.uint64(63 - e)) << np.uint64(n - m + e + 1)


@njit(cache=True, nogil=True, _nrt=False)
def _band_pair(fb: np.ndarray, peq: np.ndarray, ta8: np.ndarray, oa: int, tb8: np.ndarray, ob: int, m: int,
               e: int, n: int) -> tuple[int | np.int64, int | np.int64]:
    """Two windows of one query with the same length in lockstep (two independent dependency chains
    per column instead of one); when one finishes, the other goes on alone. Returns both results."""
    cap = e + 1
    dhi = n - m + e + 1
    wd = dhi + e + 1
    maskw = ALL >> np.uint64(64 - wd)
    span = 65 - wd
    jm = m - e
    j1 = min(dhi, jm - 1)
    ta = ta8[oa - 1:]  # ta[j]: code of column j
    tb = tb8[ob - 1:]
    vpa = band_init(e, n, m)
    vpb = vpa
    vna = ZERO
    vnb = ZERO
    sta: int | np.int64 = 0  # numba's int64 throughout; numpy's hints tell np.int64 from int
    stb: int | np.int64 = 0
    besta: int | np.int64 = cap
    bestb: int | np.int64 = cap
    da: bool | np.bool_ = False
    db: bool | np.bool_ = False
    j = 1
    while j <= n and not (da or db):
        band_fill(fb, peq, j, dhi)
        je = min(j + span, n + 1)
        for jj in range(j, min(je, j1 + 1)):
            s = np.uint64(jj - j)
            vpa, vna, xva = band_step((fb[ta[np.uint64(jj)]] >> s) & maskw, vpa, vna)
            vpb, vnb, xvb = band_step((fb[tb[np.uint64(jj)]] >> s) & maskw, vpb, vnb)
        for jj in range(max(j, j1 + 1), min(je, jm)):
            s = np.uint64(jj - j)
            vpa, vna, xva = band_step((fb[ta[np.uint64(jj)]] >> s) & maskw, vpa, vna)
            vpb, vnb, xvb = band_step((fb[tb[np.uint64(jj)]] >> s) & maskw, vpb, vnb)
            sta += 1 - np.int64(xva & ONE)
            stb += 1 - np.int64(xvb & ONE)
            da = sta - np.int64(_popcount(vna)) >= besta
            db = stb - np.int64(_popcount(vnb)) >= bestb
            if da or db:
                j = jj + 1
                break
        if da or db:
            break
        for jj in range(max(j, jm), je):
            s = np.uint64(jj - j)
            vpa, vna, xva = band_step((fb[ta[np.uint64(jj)]] >> s) & maskw, vpa, vna)
            vpb, vnb, xvb = band_step((fb[tb[np.uint64(jj)]] >> s) & maskw, vpb, vnb)
            sta += 1 - np.int64(xva & ONE)
            stb += 1 - np.int64(xvb & ONE)
            mk = (ONE << np.uint64(m - jj + dhi)) - ONE
            besta, da = _band_last(sta, vpa, vna, mk, besta, n - jj)
            bestb, db = _band_last(stb, vpb, vnb, mk, bestb, n - jj)
            if da or db:
                j = jj + 1
                break
        if da or db:
            break
        j = je
    if not da:
        besta = band_run(fb, peq, ta8, oa, m, e, n, j, vpa, vna, sta, besta)
    if not db:
        bestb = band_run(fb, peq, tb8, ob, m, e, n, j, vpb, vnb, stb, bestb)
    return besta, bestb


@njit(cache=True, nogil=True, inline="always")
def advance(vp: np.uint64, vn: np.uint64, eq: np.uint64, hin: int | np.int64,
             hs: np.uint64) -> tuple[np.uint64, np.uint64, np.int64]:
    """One column step of a 64-row block (Myers' block algorithm, branch-free) given the horizontal
    delta above it; returns the new vertical deltas and the horizontal delta at the block's last row
    (bit hs)."""
    hn = np.uint64(hin < 0)
    hp = np.uint64(hin > 0)
    xv = eq | vn
    eq |= hn
    xh = (((eq & vp) + vp) ^ vp) | eq
    ph = vn | ~(xh | vp)
    mh = vp & xh
    hout = np.int64((ph >> hs) & ONE) - np.int64((mh >> hs) & ONE)
    ph = (ph << ONE) | hp
    mh = (mh << ONE) | hn
    return mh | ~(xv | ph), ph & xv, hout


@njit(cache=True, nogil=True, _nrt=False)
def _myers(peq: np.ndarray, m: int, e: int, n: int, t8: np.ndarray, o: int, pv: np.ndarray, mv: np.ndarray,
           sc: np.ndarray) -> int | np.int64:
    """min(D, e + 1) by Myers' column-wise bit vectors (any m, any e); text codes t8[o:o + n]."""
    cap = e + 1
    best: int | np.int64 = min(m, cap)  # column 0: D(m, 0) = m
    if n <= 0 or best == 0:
        return best
    nb = (m + 63) >> 6
    t = t8[o - 1:]  # t[j]: code of column j
    if nb == 1:
        hs = np.uint64(m - 1)
        vp = ALL
        vn = ZERO
        score: int | np.int64 = m
        for j in range(1, n + 1):
            eq = peq[B8 + t[np.uint64(j)]]
            xv = eq | vn
            xh = (((eq & vp) + vp) ^ vp) | eq
            ph = vn | ~(xh | vp)
            mh = vp & xh
            score += np.int64((ph >> hs) & ONE) - np.int64((mh >> hs) & ONE)
            ph = ph << ONE
            mh = mh << ONE
            vp = mh | ~(xv | ph)
            vn = ph & xv
            if score < best:
                best = score
            if score - (n - j) >= best:
                break  # the last row falls by at most 1 per column
        return best
    last_rows = m - ((nb - 1) << 6)
    hlast = np.uint64(last_rows - 1)
    y = 0 if e < 1 else min(nb - 1, (e - 1) >> 6)  # last active block: column 0 has D(i, 0) = i
    ex = y  # blocks 0..ex have been active since column 0: their values are exact
    for b in range(y + 1):
        pv[b] = ALL
        mv[b] = ZERO
        sc[b] = min((b + 1) << 6, m)  # D at the block's last row
    for j in range(1, n + 1):
        c = np.uint64(t[np.uint64(j)])
        h = 0  # row 0 is 0 in every column (free start)
        for b in range(y + 1):
            vp, vn, h = advance(pv[b], mv[b], peq[np.uint64((b + 1) << 3) + c], h, hlast if b == nb - 1 else B63)
            pv[b] = vp
            mv[b] = vn
            sc[b] += h
        # Ukkonen: a block below can only get a cell <= e through the last row of block y, at this
        # column or the previous one (its cells were all > e in the previous column).
        while y + 1 < nb and (sc[y] <= e or sc[y] - h <= e):
            y += 1
            sc[y] = sc[y - 1] - h + (64 if y < nb - 1 else last_rows)  # re-entered: "+1 per row"
            vp, vn, h = advance(ALL, ZERO, peq[np.uint64((y + 1) << 3) + c], h, hlast if y == nb - 1 else B63)
            pv[y] = vp
            mv[y] = vn
            sc[y] += h
        while y > 0 and sc[y] - (64 if y < nb - 1 else last_rows) >= e:
            y -= 1  # every cell of block y is > e
            ex = min(ex, y)
        if y == nb - 1 and sc[y] < best:
            best = sc[y]
        # Every later D(m, .) is >= min(e + 1, D(r, j) + (m - r) - (n - j)) for r = the last row of block
        # y: a path from column j to row m crosses row r (which rises at most 1 per column) or an
        # inactive cell (> e). sc[y] is exact for blocks active since column 0 (y <= ex); others may
        # exceed the true D(r, j), but only when both are > e.
        if (sc[y] if y <= ex else min(sc[y], cap)) + m - min(m, (y + 1) << 6) - (n - j) >= best:
            break
    return best


def band_diagonals(m: np.ndarray, e: np.ndarray, win_start: np.ndarray, win_end: np.ndarray) -> np.ndarray:
    """The diagonals of each candidate window's band [-e, n - m + e] (n: the window's length): the lanes a device's
    banded kernel, one lane per diagonal, needs for it."""
    return np.maximum(win_end - win_start, 0) - m + 2 * e + 1


def window_of(diag: np.ndarray, m: np.ndarray, e: np.ndarray, s0: np.ndarray,
              s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The window [diag - e, diag + m + e) of a seed on diagonal diag, clipped to its sequence [s0, s1):
    (start, end), s0 <= start <= end <= s1."""
    ws = np.minimum(np.maximum(diag - e, s0), s1)
    return ws, np.maximum(np.minimum(diag + m + e, s1), ws)


class Candidates(NamedTuple):
    """Candidate windows: candidate k is query q[k] against reference [start[k], end[k])."""

    q: np.ndarray
    start: np.ndarray
    end: np.ndarray


@njit(cache=True, nogil=True)
def _bulk(queries: Queries, cands: Candidates, ref: PackedRef, nwmax: int, tmax: int, method: int, out: np.ndarray,
          b0: int, b1: int) -> None:
    """Blocks [b0, b1) of BLOCK candidates, the scratch for reads of up to nwmax words and windows of up to tmax
    bases."""
    qcodes, qoff, qerr = queries
    cand_q, win_start, win_end = cands
    packed, nmask = ref
    nc = cand_q.size
    last_p = max(packed.size - 1, 0)
    last_n = max(nmask.size - 1, 0)
    for blk in range(b0, b1):
        lo = blk * BLOCK
        hi = min(nc, lo + BLOCK)
        peq = np.empty(8 * (nwmax + 2), dtype=np.uint64)
        pv = np.empty(nwmax, dtype=np.uint64)
        mv = np.empty(nwmax, dtype=np.uint64)
        sc = np.empty(nwmax, dtype=np.int64)
        fb = np.empty(8, dtype=np.uint64)
        tlen = tmax // 4 + 3  # the longest window
        ta32 = np.empty(tlen, dtype=np.uint32)
        tb32 = np.empty(tlen, dtype=np.uint32)
        ta8 = ta32.view(np.uint8)
        tb8 = tb32.view(np.uint8)
        cur: int | np.int64 = -1
        k = lo
        while k < hi:
            if k + PREFETCH < nc:  # the reference windows of later candidates are usually cache misses
                d = np.int64(win_start[k + PREFETCH])
                _prefetch(packed, min(d >> 2, last_p))
                _prefetch(packed, min((d + 160) >> 2, last_p))
                _prefetch(nmask, min(d >> 3, last_n))
            qi = np.int64(cand_q[k])
            a = np.int64(qoff[qi])
            m = np.int64(qoff[qi + 1]) - a
            e = np.int64(qerr[qi >> 1])
            if qi != cur:
                build_peq(qcodes, a, m, peq)
                cur = qi
            ws = np.int64(win_start[k])
            n: int | np.int64 = max(np.int64(win_end[k]) - ws, 0)  # type: ignore[assignment]
            if method == MYERS or not band_fits(m, e, n):
                oa = _decode(packed, nmask, ws, n, ta32, ta8) if n > 0 else 0
                out[k] = _myers(peq, m, e, n, ta8, oa, pv, mv, sc)
            elif n < m - e:
                out[k] = e + 1  # more than e read bases would be inserted
            else:
                oa = _decode(packed, nmask, ws, n, ta32, ta8)
                paired = False
                if k + 1 < hi and np.int64(cand_q[k + 1]) == qi:
                    ws2 = np.int64(win_start[k + 1])
                    if np.int64(win_end[k + 1]) - ws2 == n:
                        ob = _decode(packed, nmask, ws2, n, tb32, tb8)
                        out[k], out[k + 1] = _band_pair(fb, peq, ta8, oa, tb8, ob, m, e, n)
                        paired = True
                        k += 1
                if not paired:
                    out[k] = band_run(fb, peq, ta8, oa, m, e, n, 1, band_init(e, n, m), ZERO, 0, e + 1)
            k += 1


def bulk_distances(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, cand_q: np.ndarray,
                   win_start: np.ndarray, win_end: np.ndarray, packed: np.ndarray, nmask: np.ndarray,
                   method: int = AUTO) -> np.ndarray:
    """min(edit distance, e + 1) of every candidate window (int32), see the module docstring.

    Candidates should be sorted by query (masks are rebuilt whenever the query changes); results do not
    depend on the order or on the thread count. method=MYERS forces the Myers kernel everywhere.
    """
    qcodes = np.ascontiguousarray(qcodes, dtype=np.uint8)
    qoff = np.ascontiguousarray(qoff, dtype=np.int64)
    qerr = np.ascontiguousarray(qerr, dtype=np.int64)
    cand_q = np.ascontiguousarray(cand_q, dtype=np.int64)
    win_start = np.ascontiguousarray(win_start, dtype=np.int64)
    win_end = np.ascontiguousarray(win_end, dtype=np.int64)
    out = np.empty(cand_q.size, dtype=np.int32)
    if cand_q.size == 0:
        return out
    nq = qoff.size - 1
    if nq < 1 or cand_q.min() < 0 or cand_q.max() >= nq:
        raise ValueError("cand_q must index the queries of qoff")
    if qerr.size < (nq + 1) // 2 or (qerr.size and qerr.min() < 0):
        raise ValueError("qerr needs one e >= 0 per pair of queries")
    if not (win_start.size == win_end.size == cand_q.size):
        raise ValueError("one window per candidate")
    total = min(4 * packed.size, 8 * nmask.size)
    if win_start.min() < 0 or win_end.max() > total:
        raise ValueError("candidate windows must lie within the reference")
    mmax = int(np.diff(qoff).max())
    tmax = max(int((win_end - win_start).max()), 0) + 8  # longest window (+ decoding slack)
    queries, cands, ref = Queries(qcodes, qoff, qerr), Candidates(cand_q, win_start, win_end), PackedRef(packed, nmask)
    spread((cand_q.size + BLOCK - 1) // BLOCK,
           lambda b0, b1: _bulk(queries, cands, ref, (mmax + 63) >> 6, tmax, int(method), out, b0, b1))
    return out
