"""Alignment of verified locations: banded global traceback of read vs ref[start:end) -> CIGAR, MD.

The location's start is the largest start among optimal alignments ending at its end, so a global
alignment of exactly `dist` edits exists, and a band of dist diagonals on either side of the main one
(2 dist + 1 cells a row) holds every cell the traceback reads: a cell of value v <= dist is reached at
that cost on diagonals within v, so it is exact in the band, and a cell worth more is never taken (its
value plus a step exceeds any cell on an optimal path); the CIGAR is the one any wider band gives.
When the ungapped alignment of the read against ref[start:end) has exactly `dist` mismatches, that
alignment is reported (no DP: the usual case); otherwise the traceback prefers match/mismatch, then
deletion, then insertion. Either way the CIGAR is a deterministic function of read, reference and
location.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from seedmap.io.reference import unpack_into

OP_M, OP_I, OP_D = 0, 1, 2
CIGAR_CHARS = np.frombuffer(b"MID", dtype=np.uint8)
BASES = np.frombuffer(b"ACGTN", dtype=np.uint8)


@njit(cache=True, nogil=True)
def _write_int(buf: np.ndarray, p: int, value: int) -> int:
    if value == 0:
        buf[p] = 48
        return p + 1
    digits = 0
    v = value
    while v > 0:
        digits += 1
        v //= 10
    for k in range(digits - 1, -1, -1):
        buf[p + k] = 48 + value % 10
        value //= 10
    return p + digits


@njit(cache=True, nogil=True)
def align_one(q: np.ndarray, t: np.ndarray, band: int, dist: int, ops: np.ndarray, lens: np.ndarray,
              md: np.ndarray, scratch: np.ndarray, rev: np.ndarray) -> tuple[int, int, int]:
    """Global alignment within the band, of cost `dist` (the verified distance). Returns (edit distance,
    number of CIGAR runs, MD length). scratch: (m + 1) * (2 * band + 1) int32; rev: m + len(t) uint8."""
    m, n = q.size, t.size
    if m == n:
        mismatches = 0
        for i in range(m):
            if q[i] != t[i] or t[i] > 3:
                mismatches += 1
        if mismatches == dist:
            return _ungapped(q, t, mismatches, ops, lens, md)
    width = 2 * band + 1
    big = 1 << 28
    dp = scratch[:(m + 1) * width]  # cell (i, c) at i * width + c - i + band (flat: no reshape on the GPU)
    dp[:] = big
    for c in range(0, min(n, band) + 1):
        dp[c + band] = c
    for i in range(1, m + 1):
        row, up = i * width, (i - 1) * width
        for b in range(width):
            c = i + b - band
            if c < 0 or c > n:
                continue
            best = big
            if c == 0:
                best = i
            else:
                cost = 0 if (q[i - 1] == t[c - 1] and t[c - 1] < 4) else 1
                best = dp[up + b] + cost  # diagonal keeps the band index
                if b > 0 and dp[row + b - 1] + 1 < best:  # deletion: (i, c - 1)
                    best = dp[row + b - 1] + 1
            if b + 1 < width and dp[up + b + 1] + 1 < best:  # insertion: (i - 1, c)
                best = dp[up + b + 1] + 1
            dp[row + b] = best
    dist = dp[m * width + n - m + band]  # (the caller checks it equals the verified distance)
    # Traceback from (m, n); ops collected backwards.
    k = 0
    i, c = m, n
    while i > 0 or c > 0:
        b = c - i + band
        cur = dp[i * width + b]
        if i > 0 and c > 0 and cur == dp[(i - 1) * width + b] + (0 if (q[i - 1] == t[c - 1] and t[c - 1] < 4) else 1):
            rev[k] = OP_M
            i -= 1
            c -= 1
        elif c > 0 and b > 0 and cur == dp[i * width + b - 1] + 1:
            rev[k] = OP_D
            c -= 1
        else:
            rev[k] = OP_I
            i -= 1
        k += 1
    # Run-length CIGAR and MD, forwards.
    runs = 0
    md_len = 0
    matched = 0
    qi = 0
    ti = 0
    for x in range(k - 1, -1, -1):
        op = rev[x]
        if runs > 0 and ops[runs - 1] == op:
            lens[runs - 1] += 1
        else:
            ops[runs] = op
            lens[runs] = 1
            runs += 1
        if op == OP_M:
            if q[qi] == t[ti] and t[ti] < 4:
                matched += 1
            else:
                md_len = _write_int(md, md_len, matched)
                md[md_len] = BASES[t[ti]]
                md_len += 1
                matched = 0
            qi += 1
            ti += 1
        elif op == OP_I:
            qi += 1
        else:
            if x == k - 1 or rev[x + 1] != OP_D:  # first base of a deletion run
                md_len = _write_int(md, md_len, matched)
                md[md_len] = 94  # '^'
                md_len += 1
                matched = 0
            md[md_len] = BASES[t[ti]]
            md_len += 1
            ti += 1
    md_len = _write_int(md, md_len, matched)
    return dist, runs, md_len


@njit(cache=True, nogil=True)
def _ungapped(q: np.ndarray, t: np.ndarray, mismatches: int, ops: np.ndarray, lens: np.ndarray,
              md: np.ndarray) -> tuple[int, int, int]:
    ops[0] = OP_M
    lens[0] = q.size
    md_len = 0
    matched = 0
    for i in range(q.size):
        if q[i] == t[i] and t[i] < 4:
            matched += 1
        else:
            md_len = _write_int(md, md_len, matched)
            md[md_len] = BASES[t[i]]
            md_len += 1
            matched = 0
    md_len = _write_int(md, md_len, matched)
    return mismatches, 1, md_len


def md_capacity(m: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Upper bound of an MD string's length: dist + 1 numbers of at most len(str(m)) digits, plus bases."""
    digits = np.floor(np.log10(np.maximum(m, 1))).astype(np.int64) + 1
    return (dist + 1) * digits + 3 * dist


BLOCK = 64  # locations per parallel task: scratch allocated once per block


@njit(cache=True, nogil=True, inline="always")  # per location: a call with 21 array arguments cost 20%
def align_location(k: int, qcodes: np.ndarray, qoff: np.ndarray, loc_q: np.ndarray, loc_s: np.ndarray,
                   loc_e: np.ndarray, loc_d: np.ndarray, packed: np.ndarray, nmask: np.ndarray, cig_off: np.ndarray,
                   md_off: np.ndarray, ops: np.ndarray, lens: np.ndarray, md: np.ndarray, n_runs: np.ndarray,
                   md_len: np.ndarray, dist: np.ndarray, scratch: np.ndarray, rev: np.ndarray, t: np.ndarray) -> None:
    """Location k's CIGAR runs and MD string into its slots (cig_off, md_off); scratch, rev and t as
    scratch_sizes gives them (nothing is allocated here: the GPU runs this very code, backends/cuda)."""
    qi = loc_q[k]
    q = qcodes[qoff[qi]:qoff[qi + 1]]
    tk = t[:loc_e[k] - loc_s[k]]
    unpack_into(packed, nmask, loc_s[k], tk)
    a, b = cig_off[k], md_off[k]
    d, r, ml = align_one(q, tk, loc_d[k], loc_d[k], ops[a:cig_off[k + 1]], lens[a:cig_off[k + 1]],
                         md[b:md_off[k + 1]], scratch, rev)
    n_runs[k] = r
    md_len[k] = ml
    dist[k] = d


@njit(cache=True, nogil=True)
def scratch_sizes(qoff: np.ndarray, loc_q: np.ndarray, loc_s: np.ndarray, loc_e: np.ndarray, loc_d: np.ndarray,
                  lo: int, hi: int) -> tuple[int, int]:
    """(DP cells, reference span) that align_location needs for any of locations [lo, hi)."""
    cells, span = 1, 1
    for k in range(lo, hi):
        qi = loc_q[k]
        m = qoff[qi + 1] - qoff[qi]
        cells = max(cells, (m + 1) * (2 * loc_d[k] + 1))
        span = max(span, m + loc_e[k] - loc_s[k])
    return cells, span


@njit(cache=True, nogil=True, parallel=True)
def _align_all(qcodes: np.ndarray, qoff: np.ndarray, loc_q: np.ndarray, loc_s: np.ndarray, loc_e: np.ndarray,
               loc_d: np.ndarray, packed: np.ndarray, nmask: np.ndarray, cig_off: np.ndarray, md_off: np.ndarray,
               ops: np.ndarray, lens: np.ndarray, md: np.ndarray, n_runs: np.ndarray, md_len: np.ndarray,
               dist: np.ndarray) -> None:
    nl = loc_q.size
    for blk in prange((nl + BLOCK - 1) // BLOCK):
        lo, hi = blk * BLOCK, min(nl, (blk + 1) * BLOCK)
        cells, span = scratch_sizes(qoff, loc_q, loc_s, loc_e, loc_d, lo, hi)
        scratch = np.empty(cells, dtype=np.int32)
        rev = np.empty(span, dtype=np.uint8)
        t = np.empty(span, dtype=np.uint8)
        for k in range(lo, hi):
            align_location(k, qcodes, qoff, loc_q, loc_s, loc_e, loc_d, packed, nmask, cig_off, md_off, ops, lens,
                           md, n_runs, md_len, dist, scratch, rev, t)


def layout(qoff: np.ndarray, loc_q: np.ndarray, loc_d: np.ndarray) -> dict:
    """Empty outputs of an alignment of the locations: CIGAR runs (ops, lens) and MD bytes, room for the
    worst case of each location at cig_off / md_off; n_runs, md_len and dist per location."""
    m = (qoff[loc_q + 1] - qoff[loc_q]).astype(np.int64)
    cig_cap = 2 * loc_d.astype(np.int64) + 1
    md_cap = md_capacity(m, loc_d.astype(np.int64))
    cig_off = np.zeros(loc_q.size + 1, dtype=np.int64)
    np.cumsum(cig_cap, out=cig_off[1:])
    md_off = np.zeros(loc_q.size + 1, dtype=np.int64)
    np.cumsum(md_cap, out=md_off[1:])
    return {"cig_off": cig_off, "ops": np.empty(int(cig_off[-1]), dtype=np.uint8),
            "lens": np.empty(int(cig_off[-1]), dtype=np.int32), "n_runs": np.empty(loc_q.size, dtype=np.int64),
            "md_off": md_off, "md": np.empty(int(md_off[-1]), dtype=np.uint8),
            "md_len": np.empty(loc_q.size, dtype=np.int64), "dist": np.empty(loc_q.size, dtype=np.int32)}


def checked(aln: dict, loc_d: np.ndarray) -> dict:
    """The alignments, once their distances are the verified ones (an internal error otherwise)."""
    if not np.array_equal(aln.pop("dist"), loc_d):
        raise AssertionError("internal error: traceback distance differs from verification distance")
    return aln


def align(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray, loc_s: np.ndarray,
          loc_e: np.ndarray, loc_d: np.ndarray, packed: np.ndarray, nmask: np.ndarray) -> dict:
    """CIGAR runs and MD strings of all locations, in flat arrays with offsets. (qerr belongs to the stage's
    interface, which the GPU's twin shares; the band of a location is its own distance.)"""
    aln = layout(qoff, loc_q, loc_d)
    _align_all(qcodes, qoff, loc_q, loc_s, loc_e, loc_d, packed, nmask, aln["cig_off"], aln["md_off"],
               aln["ops"], aln["lens"], aln["md"], aln["n_runs"], aln["md_len"], aln["dist"])
    return checked(aln, loc_d)
