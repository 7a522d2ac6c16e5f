"""Alignment of verified locations: banded traceback of read vs reference -> CIGAR, MD and the
alignment's interval (the record's POS and reference span).

A location is its best end and the latest start of an optimal alignment ending there (semiglobal.py).
Among the alignments of that edit distance, the one reported is what bwa and yara report: the ungapped
one when it costs as much (no DP: the usual case), else the fewest gaps (runs of insertions or deletions;
one gap mostly needs no DP either), then the leftmost end, then the latest start (align_one). It may start
up to `dist` bases before the location's start and end up to `dist` bases after its end, within its sequence
and the location's run of ends: k insertions at a read end are k substitutions k bases further out at the same
edit distance, so `1I99M` at p + 1 is reported as `100M` at p. The location itself (its end, its
distance) is unchanged, so every engine still reports the same records. The CIGAR is a deterministic
function of read, reference and location, on the CPU and on the GPU (the same code, backends/cuda; the
OpenCL twin, align.cl, runs the DP for every gapped alignment and gives the same).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.intrinsics import prefetch
from seedmap.io.ascii import write_int as _write_int  # (the name backends/cuda/align_kernels.py twins)
from seedmap.io.columns import PackedRef, Queries
from seedmap.io.reference import sequences_of, unpack_into
from seedmap.spread import spread

OP_M, OP_I, OP_D = 0, 1, 2
BASES = np.frombuffer(b"ACGTN", dtype=np.uint8)


@njit(cache=True, nogil=True, inline="always")
def _mismatch(q: np.ndarray, t: np.ndarray, i: int, c: int) -> int:
    """1 unless read base i - 1 matches text base c - 1 (N never matches)."""
    return 0 if (q[i - 1] == t[c - 1] and t[c - 1] < 4) else 1


@njit(cache=True, nogil=True, _nrt=False)
def _forward(q: np.ndarray, t: np.ndarray, rev: np.ndarray, k: int, first: int, ops: np.ndarray, lens: np.ndarray,
             md: np.ndarray) -> tuple[int, int]:
    """Run-length CIGAR (ops, lens) and MD of the alignment whose operations are rev[:k], last first, from text
    column `first`: (CIGAR runs, MD length)."""
    runs = 0
    md_len = 0
    matched = 0
    qi = 0
    ti = first
    for y in range(k - 1, -1, -1):
        op = rev[y]
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
            if y == k - 1 or rev[y + 1] != OP_D:  # first base of a deletion run
                md_len = _write_int(md, md_len, matched)
                md[md_len] = 94  # '^'
                md_len += 1
                matched = 0
            md[md_len] = BASES[t[ti]]
            md_len += 1
            ti += 1
    md_len = _write_int(md, md_len, matched)
    return runs, md_len


@njit(cache=True, nogil=True, _nrt=False)
def _diagonal_mismatches(q: np.ndarray, t: np.ndarray, s0: int, most: int) -> int:
    """Mismatches of q against t[s0:s0 + len(q)] (N never matches), counted up to most + 1."""
    k = 0
    for i in range(q.size):
        if q[i] != t[s0 + i] or t[s0 + i] > 3:
            k += 1
            if k > most:
                break
    return k


@njit(cache=True, nogil=True, _nrt=False)
def _one_gap(q: np.ndarray, t: np.ndarray, x: int, n: int, dist: int, scratch: np.ndarray,
             rev: np.ndarray) -> tuple[int, int]:
    """align_one's alignment ending at column n when it has one gap, without the DP: (number of operations in
    rev, last first; start column), or (0, 0) when this cannot tell (the DP decides then).

    The ungapped alignment ending at n does not cost `dist` (align_one checked), so one gap is the fewest an
    alignment of cost `dist` ending there can have, when any has one. One gap of g bases shifts the diagonal
    by g: an insertion run starts on diagonal n - m + g, a deletion run on n - m - g, so each (kind, g) is
    one start column, and the DP's order (latest start) takes insertions from the longest, then deletions
    from the shortest. For one of them, the read's alignment is a prefix on the start diagonal, the gap at
    read position i, the rest on the end diagonal n - m: cost(i) = prefix mismatches + g + suffix mismatches;
    the DP's traceback (a match before a gap, from the end) places the gap at the least i of least cost. The
    DP would end further on only at an ungapped alignment of cost `dist` there (fewer gaps, same run of
    ends); where one exists, and where the gap would lead or trail a deletion, the DP decides.
    scratch: m + 1 int64 (suffix mismatches on the end diagonal)."""
    m = q.size
    dn = n - m  # the end diagonal
    for c in range(max(n + 1, m), min(t.size, x + m) + 1):  # an ungapped end further on, its start free
        if _diagonal_mismatches(q, t, c - m, dist) == dist:
            return 0, 0
    suffix = scratch[:m + 1]  # suffix[j]: mismatches of q[j:] on the end diagonal
    suffix[m] = 0
    for j in range(m - 1, -1, -1):
        tj = dn + j
        suffix[j] = suffix[j + 1] + (1 if tj < 0 or q[j] != t[tj] or t[tj] > 3 else 0)
    for step in range(2 * dist):
        g = dist - step if step < dist else step - dist + 1
        ins = step < dist
        s0 = dn + g if ins else dn - g
        if s0 < 0 or s0 > x:
            continue
        last = m - g if ins else m  # the gap's read positions i: 0..last
        pre = 0
        for i in range(last + 1):
            if pre + g > dist:  # the prefix alone costs too much already (it only grows)
                break
            if pre + g + suffix[i + g if ins else i] == dist:
                if not ins and (i == 0 or i == m):
                    return 0, 0
                # rev: the operations from the end: the suffix's matches, the gap, the prefix's matches.
                tail = m - i - g if ins else m - i
                for r in range(tail):
                    rev[r] = OP_M
                for r in range(tail, tail + g):
                    rev[r] = OP_I if ins else OP_D
                for r in range(tail + g, tail + g + i):
                    rev[r] = OP_M
                return tail + g + i, s0
            if i < last and (q[i] != t[s0 + i] or t[s0 + i] > 3):
                pre += 1
    return 0, 0


@njit(cache=True, nogil=True, _nrt=False)
def align_one(q: np.ndarray, t: np.ndarray, x: int, y: int, band: int, dist: int, ops: np.ndarray,
              lens: np.ndarray, md: np.ndarray, scratch: np.ndarray, rev: np.ndarray) -> tuple[int, int, int, int, int]:
    """Alignment of the read q at edit distance `dist` (the verified one) that starts at one of t's first
    x + 1 columns and ends at column n = len(t) - y (the location's end) or one of the y after it: the
    fewest gaps (runs of insertions or deletions) among such alignments, then the leftmost end, then the
    latest start. Returns (edit distance at n, number of CIGAR runs, MD length, start column, end column).
    scratch: 3 * (m + 1) * (x + 2 * band + 3) int64; rev: m + len(t) uint8.

    Among alignments of equal edit distance, bwa and yara report the one with fewest gaps: `100M` at p,
    not `1I99M` at p + 1 nor `99M1I` at p (k insertions at a read end are k substitutions k bases
    further out). The ungapped alignment ending at n has none, so it comes first when it costs `dist`;
    then one with a single gap, where _one_gap can tell which the DP would give without it (most gapped
    alignments: 250 Mbp human-like genome, e = 5, 2.6 us instead of 6.9 a gapped location); otherwise
    (_gotoh) a Gotoh DP (H: any last step, D: a deletion, I: an insertion) of the cost
    (edits * (band + 1) + gaps) * (x + 1) + (x - start column), which orders alignments by edits, gaps,
    then start (a gap costs at least one edit, so gaps <= edits <= band on every cell read), over the
    diagonals [-band, x + band]: a path of v <= band edits stays within v diagonals of its free start in
    [0, x], so every cell on one is exact in the band, and the traceback reads no other (the rows compute only
    the diagonals such a path can meet on its way to an end in [n, len(t)]: see below). Ties go to
    match/mismatch, then deletion, then insertion, from the end: gaps are placed leftmost."""
    m, nt = q.size, t.size
    n = nt - y
    if 0 <= n - m <= x:
        mismatches = 0
        for i in range(m):
            if q[i] != t[n - m + i] or t[n - m + i] > 3:
                mismatches += 1
        if mismatches == dist:
            d, r, ml = _ungapped(q, t[n - m:n], mismatches, ops, lens, md)
            return d, r, ml, n - m, n
    k, first = _one_gap(q, t, x, n, dist, scratch, rev)
    if k > 0:
        runs, md_len = _forward(q, t, rev, k, first, ops, lens, md)
        return dist, runs, md_len, first, n
    return _gotoh(q, t, x, y, band, dist, ops, lens, md, scratch, rev)


@njit(cache=True, nogil=True, _nrt=False)
def _gotoh(q: np.ndarray, t: np.ndarray, x: int, y: int, band: int, dist: int, ops: np.ndarray,
           lens: np.ndarray, md: np.ndarray, scratch: np.ndarray, rev: np.ndarray) -> tuple[int, int, int, int, int]:
    """align_one's DP (its arguments and result), whatever the alignment's gaps."""
    m, nt = q.size, t.size
    n = nt - y
    w = x + 2 * band + 3  # a row: the band's x + 2 band + 1 cells between two that stay out of it
    cells = (m + 1) * w
    gap = x + 1  # a gap; below it, how much earlier than the latest free start an alignment starts
    edit = (band + 1) * gap
    big = 1 << 60  # out of the band (sums of a few steps past it stay far from overflow)
    off = band + 1
    h = scratch[:cells]  # cell (i, c) at i * w + c - i + off (flat: no reshape on the GPU)
    dl = scratch[cells:2 * cells]
    il = scratch[2 * cells:3 * cells]
    # A path of at most `band` edits from a free start (diagonal 0..x) to an end in [n, nt] (diagonal n - m..nt - m)
    # changes diagonal once per insertion or deletion, so it only meets diagonals k whose distances to both ranges
    # sum to at most band: [k_lo, k_hi], usually a third narrower than [-band, x + band]. Rows compute only those;
    # the cells just outside them are out of the band.
    k_lo, k_hi = x + band + 1, -band - 1
    for kd in range(-band, x + band + 1):
        if max(0, -kd, kd - x) + max(0, n - m - kd, kd - nt + m) <= band:
            k_lo = min(k_lo, kd)
            k_hi = kd
    if k_lo > k_hi:  # (no path within band: the caller's check on the distance fails)
        k_lo, k_hi = -band, x + band
    # Only row 0 and the cells beside the band are read before they are written.
    h[:w] = big
    dl[:w] = big
    il[:w] = big
    for c in range(0, min(nt, x + band) + 1):
        if c <= x:
            h[c + off] = x - c  # a free start
        else:  # never optimal: a leading deletion
            dl[c + off] = (c - x) * edit + gap
            h[c + off] = dl[c + off]
    for i in range(1, m + 1):
        row = i * w - i + off  # cell (i, c) at row + c
        for side in (row + i + k_lo - 1, row + i + k_hi + 1):
            h[side] = big
            dl[side] = big
            il[side] = big
        qi = q[i - 1]
        c0 = max(0, i + k_lo)
        if c0 == 0:  # column 0: insertions only
            il[row] = min(h[row - w + 1] + edit + gap, il[row - w + 1] + edit)
            h[row] = il[row]
            dl[row] = big
            c0 = 1
        # The cell to the left stays in registers: h, dl and il are slices of one scratch array, so the compiler
        # cannot tell that a store does not change the next cell's operands, and reloads them all otherwise.
        h_left, dl_left = h[row + c0 - 1], dl[row + c0 - 1]
        for c in range(c0, min(nt, i + k_hi) + 1):
            k = row + c
            up = k - w + 1
            ins = min(h[up] + edit + gap, il[up] + edit)  # from (i - 1, c)
            dl_left = min(h_left + edit + gap, dl_left + edit)  # from (i, c - 1)
            tc = t[c - 1]
            dg = h[k - w] + (0 if (qi == tc and tc < 4) else edit)  # from (i - 1, c - 1)
            h_left = min(ins, dl_left, dg)
            il[k] = ins
            dl[k] = dl_left
            h[k] = h_left
    last = m * w - m + off  # cell (m, c) at last + c
    dist = h[last + n] // edit  # (the caller checks it equals the verified distance)
    end = n
    for c in range(n + 1, min(nt, m + k_hi) + 1):  # an end further on with fewer gaps, in the same run
        if h[last + c] // edit != dist:
            break
        if h[last + c] // gap < h[last + end] // gap:
            end = c
    # Traceback from (m, end) to a free start in row 0, in state 0 (H), 1 (D) or 2 (I); ops backwards.
    k = 0
    i, c = m, end
    state = 0
    while i > 0 or c > x:
        cur = i * w - i + off + c
        if state == 0:
            if i > 0 and c > 0 and h[cur] == h[cur - w] + _mismatch(q, t, i, c) * edit:
                rev[k] = OP_M
                i -= 1
                c -= 1
                k += 1
                continue
            state = 1 if c > 0 and h[cur] == dl[cur] else 2
        if state == 1:
            rev[k] = OP_D
            if dl[cur] == h[cur - 1] + edit + gap:  # the gap opens here
                state = 0
            c -= 1
        else:
            rev[k] = OP_I
            if il[cur] == h[cur - w + 1] + edit + gap:
                state = 0
            i -= 1
        k += 1
    runs, md_len = _forward(q, t, rev, k, c, ops, lens, md)
    return dist, runs, md_len, c, end


@njit(cache=True, nogil=True, _nrt=False)
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


BLOCK = 64  # locations per block: scratch allocated once per block
AHEAD = 4  # locations ahead whose reference is prefetched


class Locations(NamedTuple):
    """The locations aligned: location k is query query[k]'s [start[k], end[k]) at dist[k] edits, and its
    alignment starts in [lo[k], start[k]] and ends in [end[k], hi[k]] (free_bounds)."""

    query: np.ndarray
    start: np.ndarray
    end: np.ndarray
    dist: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


class Scratch(NamedTuple):
    """One aligner's scratch, as scratch_sizes gives it: the DP's cells (int64), the operations of the traceback
    last first and the location's reference window (uint8)."""

    cells: np.ndarray
    rev: np.ndarray
    window: np.ndarray


@njit(cache=True, nogil=True, inline="always")  # per location: a call with 21 array arguments cost 20%
def align_location(k: int, queries: Queries, locs: Locations, ref: PackedRef, aln: Traceback,
                   scratch: Scratch) -> None:
    """Location k's CIGAR runs and MD string into its slots in aln (cig_off, md_off), and the reference interval
    of that alignment (aln.start, aln.end: locs.lo[k] <= start <= locs.start[k], locs.end[k] <= end <= locs.hi[k]);
    nothing is allocated here: the GPU runs this very code, backends/cuda."""
    qi = locs.query[k]
    q = queries.codes[queries.off[qi]:queries.off[qi + 1]]
    a, b = aln.cig_off[k], aln.md_off[k]
    if locs.dist[k] == 0:  # exact (align_one's ungapped alignment at the location; --best on ragout16: two thirds
        aln.ops[a] = OP_M  # of the locations): nothing to unpack or compare
        aln.lens[a] = q.size
        aln.n_runs[k] = 1
        aln.md_len[k] = _write_int(aln.md[b:aln.md_off[k + 1]], 0, q.size)
        aln.dist[k] = 0
        aln.start[k] = locs.start[k]
        aln.end[k] = locs.end[k]
        return
    lo = locs.lo[k]
    tk = scratch.window[:locs.hi[k] - lo]
    unpack_into(ref.packed, ref.nmask, lo, tk)
    d, r, ml, first, last = align_one(q, tk, locs.start[k] - lo, locs.hi[k] - locs.end[k], locs.dist[k],
                                      locs.dist[k], aln.ops[a:aln.cig_off[k + 1]], aln.lens[a:aln.cig_off[k + 1]],
                                      aln.md[b:aln.md_off[k + 1]], scratch.cells, scratch.rev)
    aln.n_runs[k] = r
    aln.md_len[k] = ml
    aln.dist[k] = d
    aln.start[k] = lo + first
    aln.end[k] = lo + last


@njit(cache=True, nogil=True)
def scratch_sizes(qoff: np.ndarray, loc_q: np.ndarray, loc_s: np.ndarray, loc_d: np.ndarray, loc_lo: np.ndarray,
                  loc_hi: np.ndarray, lo: int, hi: int) -> tuple[int, int]:
    """(DP cells, reference span) that align_location needs for any of locations [lo, hi)."""
    cells, span = 1, 1
    for k in range(lo, hi):
        qi = loc_q[k]
        m = qoff[qi + 1] - qoff[qi]
        cells = max(cells, 3 * (m + 1) * (loc_s[k] - loc_lo[k] + 2 * loc_d[k] + 3))
        span = max(span, m + loc_hi[k] - loc_lo[k])
    return cells, span


@njit(cache=True, nogil=True)
def _align_all(queries: Queries, locs: Locations, ref: PackedRef, aln: Traceback, b0: int, b1: int) -> None:
    """Blocks [b0, b1) of BLOCK locations: scratch per block, its locations aligned by _align_block."""
    nl = locs.query.size
    for blk in range(b0, b1):
        lo, hi = blk * BLOCK, min(nl, (blk + 1) * BLOCK)
        cells, span = scratch_sizes(queries.off, locs.query, locs.start, locs.dist, locs.lo, locs.hi, lo, hi)
        _align_block(lo, hi, queries, locs, ref, aln, Scratch(np.empty(cells, dtype=np.int64),
                                                              np.empty(span, dtype=np.uint8),
                                                              np.empty(span, dtype=np.uint8)))


# Compiled without reference counting: in a kernel with it, each slice of an array takes an atomic increment and
# decrement of the array's count, five a location here (1 Gbp human-like genome, e = 5, all-mapping, one thread:
# 12 % of the samples sat on those atomic instructions; the traceback stage took 1.17 s, 0.95 with the leaf kernels
# compiled without it, 0.77 with this loop too). Such a kernel allocates nothing; neither may anything it calls.
@njit(cache=True, nogil=True, _nrt=False)
def _align_block(lo: int, hi: int, queries: Queries, locs: Locations, ref: PackedRef, aln: Traceback,
                 scratch: Scratch) -> None:
    """Locations [lo, hi) (align_location)."""
    for k in range(lo, hi):
        if k + AHEAD < hi:  # the reference of a location a few ahead: random lines of a large array (ragout16,
            ahead = locs.lo[k + AHEAD]  # 48 Mbp, --best: 550 -> 410 ns a location)
            prefetch(ref.packed, ahead >> 2)
            prefetch(ref.packed, (ahead >> 2) + 31)
            prefetch(ref.nmask, ahead >> 3)
        align_location(k, queries, locs, ref, aln, scratch)


def free_bounds(loc_s: np.ndarray, loc_e: np.ndarray, loc_d: np.ndarray,
                seq_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The leftmost start and rightmost end each location's alignment may take: d bases beyond its own
    (k insertions at a read end are k mismatches k bases further out, at the same cost), never beyond its
    sequence."""
    seq = sequences_of(seq_starts, loc_s)
    lo = np.maximum(loc_s - loc_d, seq_starts[seq]).astype(np.int64)
    hi = np.minimum(loc_e + loc_d, seq_starts[seq + 1]).astype(np.int64)
    return lo, hi


class Traceback(NamedTuple):
    """The alignments of a batch's locations: CIGAR runs (ops, lens: location k's at cig_off[k], n_runs[k] of
    them), MD bytes (at md_off[k], md_len[k] of them), the distance of each traceback (dist, checked against the
    verification's) and each alignment's reference interval [start, end) (the record's POS)."""

    cig_off: np.ndarray
    ops: np.ndarray
    lens: np.ndarray
    n_runs: np.ndarray
    md_off: np.ndarray
    md: np.ndarray
    md_len: np.ndarray
    dist: np.ndarray
    start: np.ndarray
    end: np.ndarray


def layout(qoff: np.ndarray, loc_q: np.ndarray, loc_d: np.ndarray) -> Traceback:
    """Empty outputs of an alignment of the locations: CIGAR runs (ops, lens) and MD bytes, room for the
    worst case of each location at cig_off / md_off; n_runs, md_len, dist and the alignment's start and
    end per location."""
    m = (qoff[loc_q + 1] - qoff[loc_q]).astype(np.int64)
    cig_cap = 2 * loc_d.astype(np.int64) + 1
    md_cap = md_capacity(m, loc_d.astype(np.int64))
    cig_off = np.zeros(loc_q.size + 1, dtype=np.int64)
    np.cumsum(cig_cap, out=cig_off[1:])
    md_off = np.zeros(loc_q.size + 1, dtype=np.int64)
    np.cumsum(md_cap, out=md_off[1:])
    return Traceback(cig_off, np.empty(int(cig_off[-1]), dtype=np.uint8), np.empty(int(cig_off[-1]), dtype=np.int32),
                     np.empty(loc_q.size, dtype=np.int64), md_off, np.empty(int(md_off[-1]), dtype=np.uint8),
                     np.empty(loc_q.size, dtype=np.int64), np.empty(loc_q.size, dtype=np.int32),
                     np.empty(loc_q.size, dtype=np.int64), np.empty(loc_q.size, dtype=np.int64))


def checked(aln: Traceback, loc_d: np.ndarray) -> Traceback:
    """The alignments, once their distances are the verified ones (an internal error otherwise)."""
    if not np.array_equal(aln.dist, loc_d):
        raise AssertionError("internal error: traceback distance differs from verification distance")
    return aln


def align(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray, loc_s: np.ndarray,
          loc_e: np.ndarray, loc_d: np.ndarray, packed: np.ndarray, nmask: np.ndarray,
          seq_starts: np.ndarray) -> Traceback:
    """CIGAR runs and MD strings of all locations, in flat arrays with offsets, and each alignment's
    reference interval (start, end: the location's own, or up to d bases further out where that avoids
    an insertion at a read end; the record's POS). (qerr belongs to the stage's interface, which the GPU's
    twin shares; the band of a location is its own distance.)"""
    aln = layout(qoff, loc_q, loc_d)
    locs = Locations(loc_q, loc_s, loc_e, loc_d, *free_bounds(loc_s, loc_e, loc_d, seq_starts))
    queries, ref = Queries(qcodes, qoff, qerr), PackedRef(packed, nmask)
    spread((loc_q.size + BLOCK - 1) // BLOCK, lambda b0, b1: _align_all(queries, locs, ref, aln, b0, b1))
    return checked(aln, loc_d)
