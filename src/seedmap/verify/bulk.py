"""Bulk bit-parallel verification: the edit distance of many (query, diagonal) candidates at once.

This is the interface every device backend implements (a GPU one follows Nouri's mrFAST GPU
verification): one minimum semi-global edit distance per candidate, capped at e + 1.

Candidate k of query i = cand_q[k] (codes qcodes[qoff[i]:qoff[i + 1]], m = its length, e = qerr[i >> 1]:
the two strands of a read share e) is checked against the reference window
[cand_diag[k] - e, cand_diag[k] + m + e) clipped to [cand_seq_start[k], cand_seq_end[k]). The result is
min(D, e + 1) with D = min over window columns j (0..n, column 0 included, so D <= m) of the DP cell
(m, j), where row 0 is 0 everywhere (free start) and N (code 4) never matches on either side.

Two kernels, both bit-parallel (Myers 1999 in Hyyro's formulation):

- Banded (the default whenever it fits one word): every alignment of cost <= e inside the window starts
  at a column >= 0 and ends at a column <= n, so it stays within the window diagonals [-e, n - m + e]
  (at most 4e + 1 of them). The band (one diagonal more on top, W = n - m + 2e + 2 rows, W <= 64, so
  e <= 15 for an unclipped window) is one 64-bit word whose bit k always follows the same diagonal
  (Hyyro 2003): each text column shifts the vertical deltas down one bit, enters the row below the band
  as "+1 over the row above" and the row above the band as a horizontal "+1" (both are real paths, so
  every computed cell lies between the true value and the band-restricted value: the minimum over the
  last row is exact whenever it is <= e). The pattern bits of the band come from one funnel shift of
  the query's match masks, padded with 64 "virtual" rows above row 1 that match every character
  (their cells stay 0: the free start). The band's bottom cell is followed along its diagonal until it
  reaches row m, then row m is followed across the band. Early exit: every later cell is >= the band's
  minimum, which is >= (bottom cell - number of +1 vertical deltas), and the last row changes by at
  most 1 per column.
- Myers (m <= 64: one word; longer reads: blocks of 64 rows with the horizontal delta carried between
  blocks, and Ukkonen's cut-off on blocks: only blocks up to the last one holding a cell <= e are
  computed, a block is added when the row above it is <= e in this or the previous column, and
  re-entered blocks start as "+1 per row"). Early exit: the last row cannot fall by more than the
  columns left. Used when the band does not fit (e >= 16) or m <= e.

Both kernels read the 2-bit packed reference directly (base | N bit << 2 indexes an 8-row mask table
whose rows 4..7 are N). Candidates are processed in parallel blocks; the masks are built once per run
of equal queries (candidates arrive sorted by query), scratch once per block.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

BLOCK = 512  # candidates per parallel task

ONE = np.uint64(1)
ZERO = np.uint64(0)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
B63 = np.uint64(63)
B8 = np.uint64(8)

AUTO = 0  # banded where the band fits one word, else Myers
MYERS = 1  # Myers everywhere (reference path, benchmarks)


@intrinsic
def _popcount(typingctx: object, x: types.Type) -> tuple:
    """Number of set bits of a uint64 (llvm.ctpop: one instruction on x86-64 with popcnt)."""
    if x != types.uint64:
        return None

    def codegen(context: object, builder: ir.IRBuilder, sig: object, args: list) -> ir.Value:
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, args)

    return types.uint64(types.uint64), codegen


@njit(cache=True, nogil=True, inline="always")
def _load64(a: np.ndarray, i: np.uint64) -> np.uint64:
    """Bytes a[i:i + 8] as a little-endian uint64 (bytes past the end read as 0)."""
    v = ZERO
    if i + B8 <= np.uint64(a.size):
        v = (np.uint64(a[i]) | (np.uint64(a[i + ONE]) << B8) | (np.uint64(a[i + np.uint64(2)]) << np.uint64(16))
             | (np.uint64(a[i + np.uint64(3)]) << np.uint64(24)) | (np.uint64(a[i + np.uint64(4)]) << np.uint64(32))
             | (np.uint64(a[i + np.uint64(5)]) << np.uint64(40)) | (np.uint64(a[i + np.uint64(6)]) << np.uint64(48))
             | (np.uint64(a[i + np.uint64(7)]) << np.uint64(56)))
    else:
        for k in range(8):
            if i + np.uint64(k) < np.uint64(a.size):
                v |= np.uint64(a[i + np.uint64(k)]) << np.uint64(8 * k)
    return v


@njit(cache=True, nogil=True, inline="always")
def _text32(packed: np.ndarray, nmask: np.ndarray, p: np.uint64) -> tuple[np.uint64, np.uint64, int]:
    """Reference bases from p on: 2-bit codes (base p in bits 0-1), N bits (base p in bit 0), and how
    many bases (29..32) both hold."""
    tw = _load64(packed, p >> np.uint64(2)) >> ((p & np.uint64(3)) << ONE)
    nw = _load64(nmask, p >> np.uint64(3)) >> (p & np.uint64(7))
    return tw, nw, 32 - np.int64(p & np.uint64(3))


@njit(cache=True, nogil=True, inline="always")
def _build_peq(qcodes: np.ndarray, a: int, m: int, peq: np.ndarray) -> None:
    """Match masks of query qcodes[a:a+m], word w of character c at peq[8w + c]: word 1 + v bit b <=>
    query[64v + b] == c (c < 4; c = 4..7, N, matches nothing). Word 0 is all ones for every character:
    64 virtual rows above row 1 that match anything (the banded kernel's free start); word nw + 1 is 0
    (padding for funnel shifts)."""
    nw = (m + 63) >> 6
    for c in range(8):
        peq[c] = ALL
    for i in range(8, 8 * (nw + 2)):
        peq[i] = ZERO
    for i in range(m):
        c = np.int64(qcodes[a + i])
        if c < 4:
            peq[(((i >> 6) + 1) << 3) + c] |= ONE << np.uint64(i & 63)


@njit(cache=True, nogil=True, inline="always")
def _band_step(eq: np.uint64, vp: np.uint64, vn: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64]:
    """One column of the band (see _banded); returns the new vp, vn and xv."""
    xv = eq | vn
    xh = (((eq & vp) + vp) ^ vp) | eq
    ph = vn | ~(xh | vp)
    mh = vp & xh
    xs = xv >> ONE
    return mh | ~(xs | ph), ph & xs, xv


@njit(cache=True, nogil=True, inline="always")
def _has_n(nmask: np.ndarray, lo: int, hi: int) -> bool:
    """Whether the N mask has a bit set in the bytes covering bases [lo, hi)."""
    acc = 0
    for i in range(lo >> 3, ((hi - 1) >> 3) + 1):
        acc |= nmask[i]
    return acc != 0


@njit(cache=True, nogil=True, inline="always")
def _banded(peq: np.ndarray, m: int, e: int, ws: int, n: int, packed: np.ndarray, nmask: np.ndarray,
            fb: np.ndarray) -> int:
    """min(D, e + 1) by the diagonal band. Requires m > e, n >= m - e and n - m + 2e + 2 <= 64.

    Bit k of column j is row j - dhi + k. Rows <= 0 are virtual: their match bits are all ones, so
    their deltas stay 0 (the free start). The vertical deltas (vp, vn) are kept aligned to the next
    column: after column j's step, bit k is row j + 1 - dhi + k, the band's new bottom row (bit wd - 1)
    comes out as "row above + 1" by itself (eq is masked to the band, so xv and ph have bit wd - 1 clear),
    and the horizontal delta entering above the band only concerns the dropped top row. st is the top
    cell of column j (bit 0): st(j) = st(j - 1) + 1 - (bit 0 of xv), 0 while it is virtual. Bits of vp
    at or above wd hold garbage that never moves down into the band (carries and shifts go up).

    Columns go in chunks without refills: text (29..32 bases per load) and match bits (one funnel
    shift per character gives 64 rows from the band's top: 65 - wd columns, fb[c] >> column offset).
    Within a chunk, three phases: 1..j1 (top row virtual, row m not reached: no bookkeeping), then
    the top cell followed for the early exit, then row m in the band (jm..n).
    """
    cap = e + 1
    dhi = n - m + e + 1  # band: window diagonals [-e, dhi]
    wd = dhi + e + 1  # band width, 2..64
    maskw = ALL >> np.uint64(64 - wd)
    span = 65 - wd  # columns served by one set of funnel shifts
    vp = (ALL >> np.uint64(63 - e)) << np.uint64(dhi)  # column 0 (D(i, 0) = i), aligned to column 1
    vn = ZERO
    jm = m - e  # first column where row m is in the band (its bottom row), 1 <= jm <= n
    j1 = min(dhi, jm - 1)  # columns 1..j1: top row virtual (st = 0), row m not reached
    with_n = _has_n(nmask, ws, ws + n)
    tw = ZERO  # 2-bit codes of the text from column jt - left on
    nw = ZERO  # N bits, same
    jt = 1  # next column that needs a text refill
    jf = 1  # next column that needs new funnel shifts
    fbase = 1  # column of fb's shift 0
    st = 0
    best = cap
    j = 1
    while j <= n:
        if j == jt:
            p = np.uint64(ws + j - 1)
            tw, nw, left = _text32(packed, nmask, p)
            jt = j + left
        if j == jf:
            off = np.uint64(63 + j - dhi)  # bit of the band's top row in the match masks (row r <-> 63 + r)
            w8 = (off >> np.uint64(6)) << np.uint64(3)
            s = off & B63
            for c in range(5):
                fb[c] = (peq[w8 + np.uint64(c)] >> s) | ((peq[w8 + np.uint64(c + 8)] << ONE) << (B63 - s))
            fb[5] = fb[4]
            fb[6] = fb[4]
            fb[7] = fb[4]
            jf = j + span
            fbase = j
        je = min(jt, jf, n + 1)  # this chunk: columns j..je - 1
        for jj in range(j, min(je, j1 + 1)):
            c = tw & np.uint64(3)
            tw >>= np.uint64(2)
            if with_n:
                c |= (nw & ONE) << np.uint64(2)
                nw >>= ONE
            vp, vn, xv = _band_step((fb[c] >> np.uint64(jj - fbase)) & maskw, vp, vn)
        for jj in range(max(j, j1 + 1), min(je, jm)):
            c = tw & np.uint64(3)
            tw >>= np.uint64(2)
            if with_n:
                c |= (nw & ONE) << np.uint64(2)
                nw >>= ONE
            vp, vn, xv = _band_step((fb[c] >> np.uint64(jj - fbase)) & maskw, vp, vn)
            st += 1 - np.int64(xv & ONE)
            if st - np.int64(_popcount(vn)) >= best:
                return best  # every cell of the band exceeds e: no later cell can do better
        for jj in range(max(j, jm), je):
            c = tw & np.uint64(3)
            tw >>= np.uint64(2)
            if with_n:
                c |= (nw & ONE) << np.uint64(2)
                nw >>= ONE
            vp, vn, xv = _band_step((fb[c] >> np.uint64(jj - fbase)) & maskw, vp, vn)
            st += 1 - np.int64(xv & ONE)
            mk = (ONE << np.uint64(m - jj + dhi)) - ONE  # rows below the top, down to row m
            vnm = np.int64(_popcount(vn & mk))
            dm = st + np.int64(_popcount(vp & mk)) - vnm  # D(m, jj)
            if dm < best:
                best = dm
            if dm - (n - jj) >= best or st - vnm >= best:
                return best
        j = je
    return best


@njit(cache=True, nogil=True, inline="always")
def _advance(pv: np.ndarray, mv: np.ndarray, b: int, eq: np.uint64, hin: int, hbit: np.uint64) -> int:
    """One column step of block b (Myers' block algorithm) given the horizontal delta above it; returns
    the horizontal delta at the block's last row (bit hbit)."""
    p = pv[b]
    mm = mv[b]
    xv = eq | mm
    if hin < 0:
        eq |= ONE
    xh = (((eq & p) + p) ^ p) | eq
    ph = mm | ~(xh | p)
    mh = p & xh
    hout = 0
    if ph & hbit:
        hout = 1
    elif mh & hbit:
        hout = -1
    ph = ph << ONE
    mh = mh << ONE
    if hin < 0:
        mh |= ONE
    elif hin > 0:
        ph |= ONE
    pv[b] = mh | ~(xv | ph)
    mv[b] = ph & xv
    return hout


@njit(cache=True, nogil=True, inline="always")
def _myers(peq: np.ndarray, m: int, e: int, ws: int, n: int, packed: np.ndarray, nmask: np.ndarray,
           pv: np.ndarray, mv: np.ndarray, sc: np.ndarray) -> int:
    """min(D, e + 1) by Myers' column-wise bit vectors (any m, any e)."""
    cap = e + 1
    best = min(m, cap)  # column 0: D(m, 0) = m
    if n <= 0 or best == 0:
        return best
    nb = (m + 63) >> 6
    p = np.uint64(ws)
    tw = ZERO
    nw = ZERO
    left = 0
    if nb == 1:
        hs = np.uint64(m - 1)
        vp = ALL
        vn = ZERO
        score = m
        for j in range(1, n + 1):
            if left == 0:
                tw, nw, left = _text32(packed, nmask, p)
            c = (tw & np.uint64(3)) | ((nw & ONE) << np.uint64(2))
            tw >>= np.uint64(2)
            nw >>= ONE
            left -= 1
            p += ONE
            eq = peq[B8 + c]
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
    hlast = ONE << np.uint64(last_rows - 1)
    hfull = ONE << B63
    y = 0 if e < 1 else min(nb - 1, (e - 1) >> 6)  # last active block: column 0 has D(i, 0) = i
    for b in range(y + 1):
        pv[b] = ALL
        mv[b] = ZERO
        sc[b] = min((b + 1) << 6, m)  # D at the block's last row
    for j in range(1, n + 1):
        if left == 0:
            tw, nw, left = _text32(packed, nmask, p)
        c = np.int64((tw & np.uint64(3)) | ((nw & ONE) << np.uint64(2)))
        tw >>= np.uint64(2)
        nw >>= ONE
        left -= 1
        p += ONE
        h = 0  # row 0 is 0 in every column (free start)
        for b in range(y + 1):
            h = _advance(pv, mv, b, peq[((b + 1) << 3) + c], h, hlast if b == nb - 1 else hfull)
            sc[b] += h
        # Ukkonen: a block below can only get a cell <= e through the last row of block y, at this
        # column or the previous one (its cells were all > e in the previous column).
        while y + 1 < nb and (sc[y] <= e or sc[y] - h <= e):
            y += 1
            pv[y] = ALL
            mv[y] = ZERO
            sc[y] = sc[y - 1] - h + (64 if y < nb - 1 else last_rows)
            h = _advance(pv, mv, y, peq[((y + 1) << 3) + c], h, hlast if y == nb - 1 else hfull)
            sc[y] += h
        while y > 0 and sc[y] - (64 if y < nb - 1 else last_rows) >= e:
            y -= 1  # every cell of block y is > e
        rest = n - j
        if y == nb - 1:
            if sc[y] < best:
                best = sc[y]
            if sc[y] - rest >= best:
                break
        elif m - ((y + 1) << 6) - rest >= best:
            break  # row m is out of reach: too many rows left below the active blocks
    return best


@njit(cache=True, nogil=True, parallel=True)
def _bulk(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, cand_q: np.ndarray, cand_diag: np.ndarray,
          cand_seq_start: np.ndarray, cand_seq_end: np.ndarray, packed: np.ndarray, nmask: np.ndarray,
          nwmax: int, method: int, out: np.ndarray) -> None:
    nc = cand_q.size
    for blk in prange((nc + BLOCK - 1) // BLOCK):
        lo = blk * BLOCK
        hi = min(nc, lo + BLOCK)
        peq = np.empty(8 * (nwmax + 2), dtype=np.uint64)
        pv = np.empty(nwmax, dtype=np.uint64)
        mv = np.empty(nwmax, dtype=np.uint64)
        sc = np.empty(nwmax, dtype=np.int64)
        fb = np.empty(8, dtype=np.uint64)
        cur = -1
        for k in range(lo, hi):
            qi = np.int64(cand_q[k])
            a = np.int64(qoff[qi])
            m = np.int64(qoff[qi + 1]) - a
            e = np.int64(qerr[qi >> 1])
            if qi != cur:
                _build_peq(qcodes, a, m, peq)
                cur = qi
            d = np.int64(cand_diag[k])
            ws = max(d - e, np.int64(cand_seq_start[k]))
            n = max(min(d + m + e, np.int64(cand_seq_end[k])) - ws, 0)
            if m <= e or method == MYERS or n - m + 2 * e + 2 > 64:
                out[k] = _myers(peq, m, e, ws, n, packed, nmask, pv, mv, sc)
            elif n < m - e:
                out[k] = e + 1  # more than e read bases would be inserted
            else:
                out[k] = _banded(peq, m, e, ws, n, packed, nmask, fb)


def bulk_distances(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, cand_q: np.ndarray,
                   cand_diag: np.ndarray, cand_seq_start: np.ndarray, cand_seq_end: np.ndarray,
                   packed: np.ndarray, nmask: np.ndarray, method: int = AUTO) -> np.ndarray:
    """min(edit distance, e + 1) of every candidate (int32), see the module docstring.

    Candidates should be sorted by query (masks are rebuilt whenever the query changes); results do not
    depend on the order or on the thread count. method=MYERS forces the Myers kernel everywhere.
    """
    qcodes = np.ascontiguousarray(qcodes, dtype=np.uint8)
    qoff = np.ascontiguousarray(qoff, dtype=np.int64)
    qerr = np.ascontiguousarray(qerr, dtype=np.int64)
    cand_q = np.ascontiguousarray(cand_q, dtype=np.int64)
    cand_diag = np.ascontiguousarray(cand_diag, dtype=np.int64)
    cand_seq_start = np.ascontiguousarray(cand_seq_start, dtype=np.int64)
    cand_seq_end = np.ascontiguousarray(cand_seq_end, dtype=np.int64)
    out = np.empty(cand_q.size, dtype=np.int32)
    if cand_q.size == 0:
        return out
    nwmax = int((np.diff(qoff).max() + 63) >> 6) if qoff.size > 1 else 0
    _bulk(qcodes, qoff, qerr, cand_q, cand_diag, cand_seq_start, cand_seq_end, packed, nmask, nwmax,
          int(method), out)
    return out
