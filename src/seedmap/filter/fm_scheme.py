"""Inexact FM-index search (edit distance, any e): a pigeonhole search scheme, one step per piece.

The read is cut into e + 1 disjoint pieces (filter/fm_pieces.py: where they occur least); an alignment with
at most e edits leaves one of them exact (filter/plan.py). Step j searches piece j exactly, then extends the
match, base by base, towards the longer side of the read to its end: the forward index extends leftwards,
the reverse-text index rightwards. The extension is a depth-first walk over the reference strings that
continue the piece, each carrying the edit-distance DP column of the read part against it (insertions,
deletions, substitutions; a read N or a reference N always costs one edit). So every reference string is
visited once per step, which subsumes Salavert's equivalence rules (no I-D / D-I pairs, no reordered I-M /
M-I) and interval-shrinkage rule (children with an empty interval are never entered). A branch is pruned
when no cell of its column plus BWA's lower bound of the rest of the read (the D array) stays within e; it
is accepted, and not walked further, as soon as the whole read part fits within e. A string with at most
`small` rows (an option; 0 = never) is not walked further either: its rows go straight to verification, which
is cheaper than walking a near-unique string base by base, and loses nothing (its windows hold every alignment
its subtree could accept). There is no cap on branches or hits.

Each alignment is searched by one step only, its first that can find it (the smallest j whose right phase
keeps it within the caps). Why step j - t cannot find it bounds its left part from below: after t of
the left phase's pieces the alignment holds at least t edits in all, and at least j once the read part
is done (by induction on t: step j - t fails in some piece y, before j or after it, see search). The left
walk drops the cells under these floors and accepts only strings whose whole part costs at least j, so a
repeat family's close copies are not walked again by every later step (250 Mbp human-like genome, e = 5:
the last steps' left walks had most of the search's work). A cell is a minimum over paths, so a path
through a dropped cell is no better than its cheaper path, which an earlier step finds at the same
reference string. The floors count the right part at its least cost, so the right walk goes on past an
accepted string while a longer one could end the read part with fewer edits.

An accepted string gives the exact piece's reference position for each of its rows, hence the diagonal
of an alignment within e; its window [diag - e, diag + m + e) holds that alignment, which the shared
verification stage then finds (the part of the read beyond the piece's far side is checked there).

A step's walk has a budget of nodes, WALK_BASE + walk_per_row(e) per row of its exact piece, at most WALK_MAX. A
walk that runs past it stops, keeps the strings it accepted, and hands what it has not walked to verification:
the rows of the node it was in and of every child not yet entered of the nodes on its way there (by forward
rows, as the piece's). Every alignment the step could find has the piece exact and lies in a subtree walked or
handed on, so its window is found (pigeonhole), and later steps' floors still hold (250 Mbp human-like genome,
e = 5, 20,000 reads: 13.3 M raw candidates -> 10.3 M, search, locate and bulk verification on one thread 13.4 ->
11.6 s, against handing on all the piece's rows). A young repeat family's piece has thousands of rows whose
copies differ a few bases apart, each walked on for most of the read; locating and verifying a row costs about
as much as two nodes with SA samples every 8 bases. The budget is counted, not timed, so every run and device
records the same strings.

Each node the walks enter reads an occurrence-table block, and those reads are most of a walk's time. A perf
profile at instruction level (benchmarks/perf_kernels.py --annotate _left_walk), one thread, e = 5, 250 Mbp
human-like genome, two runs (occurrence tables memory-mapped, then in 2 MB pages): 39-44 % of _left_walk's
samples wait on the block read of a single-row node, 15-18 % on its superblock row, and 6-7 % on a multi-row
node's block.

Why each walk runs alone rather than several queries' walks taking turns (a resumable walk that stops at each
node after prefetching its rows): on a 2-core VM that finds the same strings but makes a whole --best run slower
(250 Mbp, 20,000 reads: 1.08x the wall time, 1.12x the candidates CPU). The waits move onto the prefetch
instructions, most likely the page walk of a guest's 2 MB pages over the host's, which a prefetch that misses
the TLB performs before it retires; passing a lane's arrays between the walk's functions costs a reference count
or two per node unless compiled with `_nrt=False`; inlining them at numba's IR level takes minutes to compile.
Hardware that hides a page walk behind a prefetch may gain. Gathering the superblock rows into one region (119
pages of 4 kB instead of 7,600) gains nothing either: their waits are most likely page walks too.

What the walks do instead: each prefetches a child's blocks as soon as it knows its rows (the one child of a
one-row node while its column is computed): 250 Mbp --best, -t 2, 0.967x wall, 0.949x candidates CPU, the same
records.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.filter.fm_located import located_windows, string_window
from seedmap.filter.fm_lookup import tables
from seedmap.filter.fm_pieces import CUT_FROM, cut_scratch, equal_pieces, pieces
from seedmap.filter.fm_search import (
    bwt_symbol,
    extend,
    extend_right,
    key_leftwards,
    key_rightwards,
    locate_four,
    lower_bounds_pair,
    occ,
    occ_all,
    prefetch_occ,
    table_k,
)
from seedmap.filter.windows import SORT_FEW, sort_few
from seedmap.filter.windows import sort_windows as _sort_windows
from seedmap.index.fm import FmIndex
from seedmap.io.columns import Queries

ROW = 4  # an accepted string: piece start in the read, depth (its bases left of the piece), forward lo, hi
BIG = 1 << 40
# Every step's rare strings go to verification, whatever its exact piece's rows: a repeat family's copy close
# enough to the read to stay one row would otherwise be walked base by base, one occurrence-table miss each, while
# verifying it is one locate (eight LF walks in step) and a share of a bulk verification. (250 Mbp human-like
# genome, e = 5, 20,000 reads, -t 2, ab.py, the same records: --best 0.973x wall and all-mapping 0.958x against
# walking them on; 1 Gbp, -t 1: 0.940x and 0.880x. Waiting until a string has been one row for K bases only lost.)

# Strings of at least this many pieces' length may go to verification when rare enough; 1: a step's exact piece
# itself, as soon as it is down to `small` rows, so a unique read's pieces are verified, not each walked on for a
# piece's length (250 Mbp and 1 Gbp human-like genomes, e = 5: the candidates stage 4-15 % less CPU than with 2).
SMALL_FROM = 1
# A piece's exact search stops where its rows (forward index: the piece's last t bases) are down to `small`, once
# t >= STOP_AT bases are matched and at least REST_MIN of the piece are still to go: the rows go to verification (a
# locate and a window) instead of each remaining base costing an extend or two. Every alignment of the step holds
# the whole piece exact, so it lies in the window of the part's row. STOP_AT >= fm_lookup.LOOKUP_MAX: where the
# k-mer table starts a search does not change the strings (a device's twin has no table).
STOP_AT = 12
REST_MIN = 16
# A step's walk may take WALK_BASE + WALK_PER_ROW x (its exact piece's rows) nodes; past that the piece's rows go to
# verification instead (see the notes). A locate costs about two nodes with SA samples every 8 bases, so a small
# budget per row pays: on the 250 Mbp human-like genome (e = 5, one thread) the candidates stage takes 11.0-11.7 s
# at (1-2 per row, 512), 12 s at 4 per row or a base of 256, and 18.5 s with no budget at all.
# Below e = WALK_FULL_E the budget per row doubles for each edit fewer, up to WALK_PER_ROW_MAX: a walk with fewer
# edits costs less per row, and --best's rounds search most reads at e = 0..4 (--best 3-19 % faster than with 2
# at every e; all-mapping at e = 3 and 4 the same within noise).
WALK_PER_ROW = 2
WALK_FULL_E = 5
WALK_PER_ROW_MAX = 8
WALK_BASE = 512
# No step walks more than WALK_MAX nodes, however many rows its piece has: a low-complexity read's pieces (poly-T,
# (GT)n) have 10^5 rows whose strings stay close to the read for most of it, so its budget would buy 10^5 nodes a
# step and the walk still hand on most rows. Handing them on sooner costs more candidates (clustered, cheap to
# verify: the rows are neighbours in one run) and saves most of the walk: the 9 heaviest reads of the 1 Gbp
# human-like genome take 3.7-3.8 s of candidates CPU instead of 7.0-8.5 s (16384 nodes: 3.9-4.3 s); the same
# records.
WALK_MAX = 65536
MEMO_E = 126  # a memo keeps D values up to 127 (int8): enough for e up to this
# The D arrays cost two backward searches of the read (restarted where a piece does not occur), a cache miss or two
# a step; they pay only where their pruning spares walks, and a read that walks nowhere never makes them: from e = 2
# on (250 Mbp human-like genome, -t 2, benchmarks/ab.py against e = 3, the same records: 150 bp --best 0.985x wall,
# 150 bp pairs --best 0.983x, 150 bp all-mapping at e = 2 0.943x, 100 bp at e = 2 0.949x and --best 0.930x; from
# e = 1 on, no faster than from 2). Below D_FROM_E the bounds are zero.
D_FROM_E = 2
EXACT = 6  # words of a piece's exact search (exact_pieces)
# Queries whose pieces' exact searches go in step (exact_group): more misses in flight than one query's pieces give.
# 250 Mbp human-like genome, 150 bp, e = 4, -t 2, benchmarks/ab.py, the same records: 8 against one query at a time
# 0.926x wall for 200,000 reads --best; 16 against 8 0.975x; 32 against 16 0.977x.
GROUP = 32
KIDS = 15  # per depth of the right walk: (lo, hi, forward lo) of the five children; of the left walk: (lo, hi)


class Part(NamedTuple):
    """A phase's read part, in walking order, and its edit-distance columns: the bases ext[:length], bound[i]
    BWA's lower bound of the edits ext[i:length] needs, cap[i] and low[i] the most and least edits a cell of
    read column i may hold, cols the band columns of every depth (_at)."""
    ext: np.ndarray
    length: int
    bound: np.ndarray
    cap: np.ndarray
    low: np.ndarray
    cols: np.ndarray


class Stack(NamedTuple):
    """A depth-first walk's nodes, one entry per depth: rows [lo, hi), the next child c, every child's rows
    (kids, KIDS per depth); the right walk's also its forward rows' start flo and the least cost accepted on the
    way there (acc), the left walk's are empty. work: the step's nodes so far and its budget, shared by both
    walks (they return once it is spent)."""
    lo: np.ndarray
    hi: np.ndarray
    c: np.ndarray
    flo: np.ndarray
    acc: np.ndarray
    kids: np.ndarray
    work: np.ndarray


class Phase(NamedTuple):
    """One phase of a step (the right or the left): its read part and its walk's stack."""
    part: Part
    stack: Stack


class Step(NamedTuple):
    """What a step's walks share: its exact piece starts at read position js; e edits in all; strings of at most
    `small` rows go to verification (from SMALL_FROM pieces' length on); out: the accepted strings (ROW words
    each), those past its size counted only."""
    js: int
    e: int
    small: int
    out: np.ndarray


class Bidir(NamedTuple):
    """The bidirectional index as the search reads it: n rows, counts[c] the rows before symbol c's, the
    occurrence tables of the forward index and of the reverse text's, and their k-mer tables (fm_lookup.py), where
    the exact searches start."""
    n: int
    counts: np.ndarray
    fwd_occ: np.ndarray
    rev_occ: np.ndarray
    fwd_table: np.ndarray
    rev_table: np.ndarray


class Locator(NamedTuple):
    """The forward index as a locate reads it (fm_search.locate_four): counts, its occurrence table, the marks
    of its sampled rows and their SA samples."""
    counts: np.ndarray
    occ: np.ndarray
    mark: np.ndarray
    ssa: np.ndarray


class Slots(NamedTuple):
    """Where the windows go, and what places them there: slots start, end, diag; sequence s starts at
    text_starts[s] in the index's text and at ref_starts[s] in the genome (each window clipped to it)."""
    text_starts: np.ndarray
    ref_starts: np.ndarray
    start: np.ndarray
    end: np.ndarray
    diag: np.ndarray


class Saved(NamedTuple):
    """The queries' accepted strings kept for the fill pass: query qi's n[qi] strings (ROW words each) from row
    at[qi] of rows (count_candidates: the pool, one slab per piece of the batch, at flattened over it and
    -1 - (where in the spill) for a spilled query; fill_windows: the pool with the spills behind it)."""
    rows: np.ndarray
    at: np.ndarray
    n: np.ndarray


class Memo(NamedTuple):
    """A batch's D arrays (_search_memo): query qi's memo slot is slots[at[ids[qi]]:at[ids[qi] + 1]]; all three
    empty: none (no_memo)."""
    ids: np.ndarray
    at: np.ndarray
    slots: np.ndarray


@njit(cache=True, nogil=True, inline="always")
def walk_per_row(e: int) -> int:
    """A step's walk budget per row of its exact piece at e edits (see WALK_FULL_E)."""
    return min(WALK_PER_ROW_MAX, WALK_PER_ROW << max(0, WALK_FULL_E - e))


@njit(cache=True, nogil=True, inline="always")
def _handed_on(t: int, length: int, rows: int, small: int) -> bool:
    """Whether a piece's exact search stops after t of its length bases with `rows` forward rows (see STOP_AT)."""
    return t >= STOP_AT and length - t >= REST_MIN and rows <= small


@njit(cache=True, nogil=True)
def scratch_size(m: int, e: int) -> int:
    """int64 words of search()'s scratch for a query of length m (its band columns, stacks and children)."""
    dim = m + e + 1
    k = e + 1
    return (2 * m + 4 * (m + 1) + 2 * (m + 2) + 2 * dim * (2 * e + 1) + 8 * dim + 2 * KIDS * dim + 2 + EXACT * k + k
            + 1 + m + cut_scratch(m, k))


@njit(cache=True, nogil=True, inline="always")
def d_arrays_span(m: int) -> tuple[int, int]:
    """Where search()'s scratch holds a query's two D arrays (bound_r, then bound_l: m + 1 words each)."""
    return 2 * m, 4 * m + 2


@njit(cache=True, nogil=True, inline="always")
def d_arrays_made(scratch: np.ndarray, m: int) -> bool:
    """Whether search() left a query's D arrays in scratch (d_arrays_span): it makes them before the step's first
    walk only, and marks their absence by bound_r[m] = -1 (lower_bounds_pair sets it to 0)."""
    return scratch[d_arrays_span(m)[0] + m] == 0


@njit(cache=True, nogil=True, inline="always")
def _at(d: int, i: int, e: int) -> int:
    """Where cell (depth d, read position i) of a column store lives: only the band |i - d| <= e is kept
    (cells outside it exceed e), 2e + 1 cells per depth."""
    return d * (2 * e + 1) + i - d + e


@njit(cache=True, nogil=True, inline="always")
def _column(cols: np.ndarray, d: int, ext: np.ndarray, length: int, e: int, c: int, cap: np.ndarray,
            low: np.ndarray, bound: np.ndarray) -> int:
    """Column d + 1 from column d for one more reference symbol c, cells over their cap or under their floor
    (low) dropped (BIG).
    Returns the smallest cell + lower bound of the rest. Only the band |i - depth| <= e is computed:
    cells outside it exceed e."""
    nd = d + 1
    ilo, ihi = max(0, nd - e), min(length, nd + e)
    old_hi = min(length, d + e)
    best = BIG
    prev = BIG
    for i in range(ilo, ihi + 1):
        if i == 0:
            v = cols[_at(d, 0, e)] + 1
        else:
            v = cols[_at(d, i - 1, e)] + (0 if ext[i - 1] == c and c < 4 else 1)
            if i <= old_hi:
                v = min(v, cols[_at(d, i, e)] + 1)
            v = min(v, prev + 1)
        if v > cap[i] or v < low[i]:
            v = BIG
        cols[_at(nd, i, e)] = v
        prev = v
        best = min(best, v + bound[i])
    return best


@njit(cache=True, nogil=True, inline="always")
def _first_column(cols: np.ndarray, cost0: int, length: int, e: int, cap: np.ndarray, low: np.ndarray,
                  bound: np.ndarray) -> int:
    """Column 0 (cost0 + i, within the caps); returns its smallest cell + lower bound of the rest. Cells
    beyond i = e exceed every cap (at most e), so the band holds all the others."""
    best = BIG
    for i in range(min(length, e) + 1):
        v = cost0 + i if low[i] <= cost0 + i <= cap[i] else BIG
        cols[_at(0, i, e)] = v
        best = min(best, v + bound[i])
    return best


@njit(cache=True, nogil=True, inline="always")
def _last_cell(cols: np.ndarray, d: int, length: int, e: int) -> int:
    """Cell (d, length): the cost of the whole read part against a string of length d (BIG off the band)."""
    return cols[_at(d, length, e)] if abs(length - d) <= e else BIG


@njit(cache=True, nogil=True, inline="always")
def _record(out: np.ndarray, n_out: int, js: int, depth: int, lo: int, hi: int) -> int:
    """Rows [lo, hi) of the forward index: strings whose piece (read position js) starts `depth` bases in."""
    if n_out < out.shape[0]:
        out[n_out, 0], out[n_out, 1], out[n_out, 2], out[n_out, 3] = js, depth, lo, hi
    return n_out + 1


@njit(cache=True, nogil=True, _nrt=False)
def _left_walk(occ_tab: np.ndarray, counts: np.ndarray, lo0: int, hi0: int, phase: Phase, cost0: int, step: Step,
               done: int, n_out: int) -> tuple[int, int]:
    """Last phase: walk the strings extending rows [lo0, hi0) (of the forward index: leftwards) for the
    phase's part, starting at cost0, total within e and no cell under its floor (low; low[length + 1]: of the
    whole part); record accepted strings, and strings with at most `small` rows once `done` + depth
    reaches SMALL_FROM (see search), in out (rows beyond out's size are counted only). Returns (rows
    recorded, candidates)."""
    ext, length, bound, cap, low, cols = phase.part
    stack = phase.stack
    s_lo, s_hi, s_c, kids, work = stack.lo, stack.hi, stack.c, stack.kids, stack.work
    js, e, small, out = step
    total = 0
    best = _first_column(cols, cost0, length, e, cap, low, bound)
    if low[length + 1] <= _last_cell(cols, 0, length, e) <= e or (hi0 - lo0 <= small and done >= 0 and best <= e):
        return _record(out, n_out, js, 0, lo0, hi0), hi0 - lo0
    if best > e:
        return n_out, 0
    max_depth = length + e
    d = 0
    s_lo[0], s_hi[0], s_c[0] = lo0, hi0, 0
    while d >= 0:
        work[0] += 1
        if work[0] > work[1]:
            return n_out, total
        c = s_c[d]
        if c == 5 or d == max_depth:
            d -= 1
            continue
        lo = s_lo[d]
        if s_hi[d] - lo == 1:  # one row, one child: its symbol is B[lo] (most nodes: one rank, not ten)
            x = bwt_symbol(occ_tab, lo)
            if x < c:
                s_c[d] = 5
                continue
            c = x
            s_c[d] = 5
            nlo = counts[c] + occ(occ_tab, c, lo)
            nhi = nlo + 1
            prefetch_occ(occ_tab, nlo)  # its block, read next, while its column is computed
        else:
            k = KIDS * d
            if c == 0:  # every child's rows from two reads of the blocks (five extends read them ten times)
                below_lo, below_hi = occ_all(occ_tab, lo), occ_all(occ_tab, s_hi[d])
                for x in range(5):
                    kids[k + 2 * x], kids[k + 2 * x + 1] = counts[x] + below_lo[x], counts[x] + below_hi[x]
                    if below_lo[x] < below_hi[x]:  # the children's blocks, read when they are entered
                        prefetch_occ(occ_tab, kids[k + 2 * x])
                        prefetch_occ(occ_tab, kids[k + 2 * x + 1])
            s_c[d] = c + 1
            nlo, nhi = kids[k + 2 * c], kids[k + 2 * c + 1]
            if nlo >= nhi:
                continue
        best = _column(cols, d, ext, length, e, c, cap, low, bound)
        nd = d + 1
        if low[length + 1] <= _last_cell(cols, nd, length, e) <= e or (nhi - nlo <= small and done + nd >= 0
                                                                       and best <= e):
            # accepted, or so few rows that verifying them is cheaper than walking on
            n_out = _record(out, n_out, js, nd, nlo, nhi)
            total += nhi - nlo
            continue
        if best > e:
            continue
        d = nd
        s_lo[d], s_hi[d], s_c[d] = nlo, nhi, 0
    return n_out, total


@njit(cache=True, nogil=True, _nrt=False)
def _record_rest(stack: Stack, d: int, js: int, lo: int, hi: int, flo: int, out: np.ndarray,
                 n_out: int) -> tuple[int, int]:
    """A right walk out of budget at depth d: record what it has not walked for verification, by forward rows
    (as the piece's, depth 0): rows [lo, hi) (forward from flo; none where lo = hi) whole, the node it was in
    (its left walk may be cut short, its subtree is not walked), then every child not yet entered of the nodes
    on the stack up to depth d. Returns (strings recorded, candidates)."""
    total = hi - lo
    if hi > lo:
        n_out = _record(out, n_out, js, 0, flo, flo + hi - lo)
    s_c, kids = stack.c, stack.kids
    for dd in range(d, -1, -1):
        k = KIDS * dd
        for x in range(max(s_c[dd], 0), 5):
            a, b = kids[k + 3 * x], kids[k + 3 * x + 1]
            if a < b:
                n_out = _record(out, n_out, js, 0, kids[k + 3 * x + 2], kids[k + 3 * x + 2] + b - a)
                total += b - a
    return n_out, total


@njit(cache=True, nogil=True, _nrt=False)
def _right_walk(rev_occ: np.ndarray, fwd_occ: np.ndarray, counts: np.ndarray, lo0: int, hi0: int, flo0: int,
                right: Phase, left: Phase, step: Step, done: int, n_out: int) -> tuple[int, int]:
    """First phase: walk the strings extending rows [lo0, hi0) of the reverse-text index (rightwards) for
    the right phase's part within the caps, keeping the forward index's rows of the same string in step
    (bidirectional: the rows of Xc start after those of X followed by a smaller symbol, which the
    reverse index counts in its BWT of X's rows). Each accepted string starts the left phase, and is walked on
    while a longer one could end the read part with fewer edits (the left phase's floors need the right part's
    least cost, see search; s_acc: the least cost accepted on the way to a node). Strings handed to
    verification are recorded by their forward rows, so that only the forward index is located.
    kids[KIDS * d + 3 * x + k]: child x of the node at depth d (k: its lo, hi, forward lo). The occurrence tables
    come flat rather than in a Bidir: so its arguments arrive in the order its register allocation was tuned
    with (x86-64, search's code: 2,711 instructions either way; with a Bidir 25 more, some spills in the loop)."""
    ext, length, bound, cap, low, cols = right.part
    stack = right.stack
    js, e, small, out = step
    s_lo, s_hi, s_flo, s_c, s_acc, kids = stack.lo, stack.hi, stack.flo, stack.c, stack.acc, stack.kids
    work = stack.work
    total = 0
    best = _first_column(cols, 0, length, e, cap, low, bound)
    if best > e:
        return n_out, 0
    last = _last_cell(cols, 0, length, e)
    acc = BIG
    if last <= e:
        n_out, total = _left_walk(fwd_occ, counts, flo0, flo0 + hi0 - lo0, left, last, step, done, n_out)
        if work[0] > work[1]:  # the piece's rows, whole
            n_out, got = _record_rest(stack, -1, js, lo0, hi0, flo0, out, n_out)
            return n_out, total + got
        if best >= last:
            return n_out, total
        acc = last
    max_depth = length + e
    d = 0
    s_lo[0], s_hi[0], s_flo[0], s_c[0], s_acc[0] = lo0, hi0, flo0, -1, acc
    while d >= 0:
        work[0] += 1
        if work[0] > work[1]:
            if s_c[d] == -1:  # a node not entered yet: whole (and its parent's children after it)
                n_out, got = _record_rest(stack, d - 1, js, s_lo[d], s_hi[d], s_flo[d], out, n_out)
            else:
                n_out, got = _record_rest(stack, d, js, 0, 0, 0, out, n_out)
            return n_out, total + got
        c = s_c[d]
        k = KIDS * d
        if c == -1:  # children of this node, with the forward rows in step
            lo, hi = s_lo[d], s_hi[d]
            if hi - lo == 1:  # one row, one child (B[lo]), with the same forward row
                x = bwt_symbol(rev_occ, lo)
                if x < 0:
                    d -= 1
                    continue
                kids[k + 3 * x] = counts[x] + occ(rev_occ, x, lo)
                kids[k + 3 * x + 1] = kids[k + 3 * x] + 1
                kids[k + 3 * x + 2] = s_flo[d]
                prefetch_occ(rev_occ, kids[k + 3 * x])  # its block, read next, while its column is computed
                c = x
                s_c[d] = 5  # after this child: done
            else:
                before = s_flo[d] + (hi - lo)  # separators sort first: the rest is counted down from the end
                below_lo, below_hi = occ_all(rev_occ, lo), occ_all(rev_occ, hi)
                for x in range(5):
                    a, b = counts[x] + below_lo[x], counts[x] + below_hi[x]
                    kids[k + 3 * x], kids[k + 3 * x + 1] = a, b
                    before -= b - a
                    if a < b:  # the children's blocks, read when they are entered
                        prefetch_occ(rev_occ, a)
                        prefetch_occ(rev_occ, b)
                for x in range(5):
                    kids[k + 3 * x + 2] = before
                    before += kids[k + 3 * x + 1] - kids[k + 3 * x]
                c = 0
        if c == 5 or d == max_depth:
            d -= 1
            continue
        s_c[d] = max(c + 1, s_c[d])
        nlo, nhi, nflo = kids[k + 3 * c], kids[k + 3 * c + 1], kids[k + 3 * c + 2]
        if nlo >= nhi:
            continue
        best = _column(cols, d, ext, length, e, c, cap, low, bound)
        nd = d + 1
        if best > e:
            continue
        last = _last_cell(cols, nd, length, e)
        acc = s_acc[d]
        if last <= cap[length] and last < acc:
            n_out, got = _left_walk(fwd_occ, counts, nflo, nflo + nhi - nlo, left, last, step, done + nd, n_out)
            total += got
            if work[0] > work[1]:  # this child whole, and the children after it
                n_out, got = _record_rest(stack, d, js, nlo, nhi, nflo, out, n_out)
                return n_out, total + got
            if best >= last:  # no longer string ends the read part with fewer edits
                continue
            acc = last
        if nhi - nlo <= small and done + nd >= 0:
            n_out = _record(out, n_out, js, 0, nflo, nflo + nhi - nlo)
            total += nhi - nlo
            continue
        d = nd
        s_lo[d], s_hi[d], s_flo[d], s_c[d], s_acc[d] = nlo, nhi, nflo, -1, acc
    return n_out, total


@njit(cache=True, nogil=True, _nrt=False)
def exact_pieces(q: np.ndarray, bounds: np.ndarray, k: int, ix: Bidir, kk: int, small: int, ex: np.ndarray) -> None:
    """exact_runs of the pieces [bounds[j], bounds[j + 1]) of one query."""
    exact_runs(q, bounds[:k], bounds[1:k + 1], k, ix, kk, small, ex)


@njit(cache=True, nogil=True, _nrt=False)
def exact_runs(q: np.ndarray, starts: np.ndarray, ends: np.ndarray, k: int, ix: Bidir, kk: int, small: int,
               ex: np.ndarray) -> None:
    """Every piece's exact search (piece j: q[starts[j]:ends[j]]; k > 1), a base of each in turn: ex[EXACT * j:] =
    (lo, hi) of the reverse-text index, (flo, fhi) of the forward one, and where the part handed on to verification
    starts in the read (-1: none). The searches are independent, and each extend waits on an occurrence-table miss:
    taken in turn, with the blocks of each piece's next extend prefetched, the misses of different pieces overlap. 250
    Mbp human-like genome, --best, -t 2, benchmarks/ab.py, 4 rounds, the same records: in turn alone 0.995x wall; with
    the prefetches 0.929x wall, 0.898x the candidates stage's CPU (the search's own code had 23 % of the samples, half
    of them on one such load).

    A piece long enough to be handed on part way (STOP_AT + REST_MIN: 28 bases or more, most of e <= 2's at 100 bp)
    is searched from both ends: its far end drops most pieces that do not occur exactly before their rows cost a
    locate (searched first to last alone, e = 1 gave 10 % more candidates). A shorter one is searched first to last
    in the reverse-text index, the forward rows kept in step (extend_right): one index's occurrence rows a base
    instead of both. Count pass, 5,000 reads, six alternating runs, median ratios at e = 2, 3, 5: 250 Mbp human-like
    genome 0.95, 0.96, 0.96; 1 Gbp 0.95, 0.93, 1.01; benchmarks/ab.py --best, 20,000 reads, -t 2, four rounds: 250
    Mbp 1.00x wall, 1 Gbp 0.96x; the same strings and records. ex[EXACT * j + 5]: the piece's next base (its length
    once its search is over)."""
    n, counts, fwd_occ, rev_occ, fwd_table, rev_table = ix
    busy = 0
    for j in range(k):
        js, je = starts[j], ends[j]
        length = je - js
        lo, hi, flo, fhi = 0, n, 0, n  # ints; the tables' rows below are numba's int64 too (numpy's hints differ)
        t0 = 0
        if length >= STOP_AT + REST_MIN:
            if kk and length >= kk:  # the piece's first kk symbols each way, looked up
                rkey, fkey = key_rightwards(q, js, kk), key_leftwards(q, je - kk, kk)
                if rkey >= 0 and fkey >= 0:
                    lo, hi = np.int64(rev_table[rkey, 0]), np.int64(rev_table[rkey, 1])  # type: ignore[assignment]
                    flo, fhi = np.int64(fwd_table[fkey, 0]), np.int64(fwd_table[fkey, 1])  # type: ignore[assignment]
                    t0 = kk if lo < hi else length
        elif kk and length >= kk:
            rkey, fkey = key_rightwards(q, js, kk), key_leftwards(q, js, kk)
            if rkey >= 0:
                lo, hi = np.int64(rev_table[rkey, 0]), np.int64(rev_table[rkey, 1])  # type: ignore[assignment]
                flo = np.int64(fwd_table[fkey, 0])  # type: ignore[assignment]
                t0 = kk if lo < hi else length
        x = EXACT * j
        ex[x], ex[x + 1], ex[x + 2], ex[x + 3], ex[x + 4], ex[x + 5] = lo, hi, flo, fhi, -1, t0
        busy += t0 < length
    while busy:
        for j in range(k):
            x = EXACT * j
            js, je = starts[j], ends[j]
            length = je - js
            t = ex[x + 5]
            if t >= length:
                continue
            lo, hi, flo, fhi = ex[x], ex[x + 1], ex[x + 2], ex[x + 3]
            both = length >= STOP_AT + REST_MIN  # piece j in both indexes (reverse text: first to last)
            if both and _handed_on(t, length, fhi - flo, small):
                ex[x + 4] = je - t
                over = True
            else:
                c = q[js + t]
                if c > 3:  # an N matches nothing exactly
                    hi = lo
                    over = True
                elif both:
                    lo, hi = extend(rev_occ, counts, lo, hi, c)
                    over = lo >= hi
                    if not over:
                        flo, fhi = extend(fwd_occ, counts, flo, fhi, q[je - 1 - t])
                else:  # the reverse-text index alone, the forward rows kept in step
                    lo, hi, flo = extend_right(rev_occ, counts, lo, hi, flo, c)
                    over = lo >= hi
            ex[x], ex[x + 1], ex[x + 2], ex[x + 3] = lo, hi, flo, fhi
            t = length if over else t + 1
            ex[x + 5] = t
            busy -= t >= length
            if t < length:  # the rows the piece's next extend reads, asked for while the other pieces take theirs
                prefetch_occ(rev_occ, lo)
                prefetch_occ(rev_occ, hi)
                if both:
                    prefetch_occ(fwd_occ, flo)
                    prefetch_occ(fwd_occ, fhi)


@njit(cache=True, nogil=True, inline="always")
def _walk_parts(q: np.ndarray, m: int, e: int, k: int, bounds: np.ndarray, piece: np.ndarray, ext_r: np.ndarray,
                ext_l: np.ndarray, cap_l: np.ndarray, low_r: np.ndarray, bound_r: np.ndarray,
                bound_l: np.ndarray) -> None:
    """What the walks read, whichever step walks first: each base's piece, the read and the reversed read, the left
    phase's caps, the right phase's floors (none), and below D_FROM_E the D arrays (zero: cheaper without them).
    A read whose every piece goes straight to verification or occurs nowhere (most, at e <= 2) needs none of it."""
    for j in range(k):
        for i in range(bounds[j], bounds[j + 1]):
            piece[i] = j
    for i in range(m):
        ext_r[i] = q[i]
        ext_l[i] = q[m - 1 - i]
        cap_l[i] = e
        low_r[i] = 0
    cap_l[m] = e
    low_r[m] = low_r[m + 1] = 0  # the right phase has no floors
    if e < D_FROM_E:
        for i in range(m + 1):
            bound_r[i] = bound_l[i] = 0


@njit(cache=True, nogil=True, _nrt=False)
def search(q: np.ndarray, e: int, ix: Bidir, small: int, out: np.ndarray, scratch: np.ndarray,
           given: bool) -> tuple[int, int]:
    """search_after with the pieces' exact searches its own."""
    return search_after(q, e, ix, small, out, scratch, given, scratch[:0])


@njit(cache=True, nogil=True, _nrt=False)
def search_after(q: np.ndarray, e: int, ix: Bidir, small: int, out: np.ndarray, scratch: np.ndarray,
                 given: bool, exact: np.ndarray) -> tuple[int, int]:
    """All steps of the scheme for one query: (accepted strings, candidates); the first out.shape[0]
    accepted strings are written to out. The exact searches start in ix's k-mer tables. scratch:
    int64[scratch_size(q.size, e)] or more (nothing is allocated here: the GPU kernels run this very code, see
    backends/cuda/fm_kernels.py). given: the query's D arrays are in scratch already (d_arrays_span; from an
    earlier search of it, _search_memo). exact: the pieces' exact searches (EXACT words each, as exact_pieces
    leaves them) where done already (exact_group), else empty.

    Step j: piece j exact, then rightwards pieces j + 1 .. K - 1 with at most t errors in the t pieces
    after j, then leftwards pieces j - 1 .. 0 within e in all. Complete by the cycle lemma: with K = e + 1
    pieces and a_p <= e errors in all (a deletion between two pieces counted in the right one), some
    cyclic rotation j has every prefix of a_j, a_j+1, ... within (its length - 1) errors; its first
    K - j pieces are step j's right phase.

    Floors (see the module's notes): let j be the first step that keeps an alignment within its caps. Step
    j - t (t >= 1) fails it at some piece y: a_(j-t) + ... + a_y >= y - (j - t) + 1. If y >= j, the left
    pieces j - t .. j - 1 and the right part hold at least t + 1 edits (the right part's share from j to y
    is at most y - j); if y < j, pieces j - t .. y hold y - j + t + 1 and, by induction, pieces y + 1 ..
    j - 1 with the right part at least j - 1 - y. Either way at least t edits after t left pieces."""
    m = q.size
    if m <= e:
        return 0, 0
    n, counts, fwd_occ, rev_occ, fwd_table, rev_table = ix
    k = e + 1
    dim = m + e + 1
    band = dim * (2 * e + 1)
    ext_r, ext_l = scratch[:m], scratch[m:2 * m]
    at, end = d_arrays_span(m)
    bound_r, bound_l = scratch[at:at + m + 1], scratch[at + m + 1:end]
    at = end
    cap_r, cap_l = scratch[at:at + m + 1], scratch[at + m + 1:at + 2 * m + 2]
    at += 2 * m + 2
    low_r, low_l = scratch[at:at + m + 2], scratch[at + m + 2:at + 2 * m + 4]
    at += 2 * m + 4
    cols_r, cols_l = scratch[at:at + band], scratch[at + band:at + 2 * band]
    at += 2 * band
    s0, s1, s2 = scratch[at:at + dim], scratch[at + dim:at + 2 * dim], scratch[at + 2 * dim:at + 3 * dim]
    s3, s4 = scratch[at + 3 * dim:at + 4 * dim], scratch[at + 4 * dim:at + 5 * dim]
    s5, s6 = scratch[at + 5 * dim:at + 6 * dim], scratch[at + 6 * dim:at + 7 * dim]
    s7 = scratch[at + 7 * dim:at + 8 * dim]
    at += 8 * dim
    kids, left_kids = scratch[at:at + KIDS * dim], scratch[at + KIDS * dim:at + 2 * KIDS * dim]
    at += 2 * KIDS * dim
    work = scratch[at:at + 2]  # the step's walk: nodes so far, and its limit
    at += 2
    ex = scratch[at:at + EXACT * k]  # each piece's exact search (exact_pieces)
    at += EXACT * k
    bounds, piece = scratch[at:at + k + 1], scratch[at + k + 1:at + k + 1 + m]  # the pieces, each base's piece
    pieces(q, m, k, n, counts, fwd_occ, fwd_table, bounds, scratch[at + k + 1 + m:], ex)  # (ex: free until the steps)
    # BWA's D array of every read suffix and of every reversed read prefix: the greedy cut runs from the
    # far end, so each step's read parts and bounds are the tails of these (computed once, not per step).
    # Only the walks read them, so they are made before the first walk: a read whose pieces are all rare
    # enough to go straight to verification never walks. Most reads of a large genome are such at e = 3..5
    # (250 Mbp human-like genome, 8,000 queries, search alone, one thread: e = 3 median 85 -> 45 us, mean
    # 128 -> 93 us; e = 5 median 85 -> 44 us, mean 178 -> 141 us; a rare piece's rows go to verification
    # before, not after, the right walk's first column, whose D bound only drops reads that occur nowhere
    # within e: candidates +0.04 % and +0.001 %).
    make_d = e >= D_FROM_E and not given
    if make_d:
        bound_r[m] = -1  # none yet (lower_bounds_pair sets it to 0)
    kk = table_k(fwd_table)
    none = s0[:0]
    left_stack = Stack(s0, s1, s2, none, none, left_kids, work)
    right_stack = Stack(s3, s4, s6, s5, s7, kids, work)
    if k > 1 and exact.size:
        for i in range(EXACT * k):
            ex[i] = exact[i]
    elif k > 1:
        exact_pieces(q, bounds, k, ix, kk, small, ex)
    n_out = 0
    total = 0
    ready = False
    for j in range(k):
        js, je = bounds[j], bounds[j + 1]
        lo, hi = 0, n
        flo, fhi = 0, n
        handed = -1  # where the part of the piece handed on to verification starts in the read (STOP_AT)
        if k == 1:  # e = 0: the read is the piece, nothing extends it: the forward index alone, backwards
            t0 = 0
            if kk and m >= kk:  # its last kk symbols looked up
                fkey = key_leftwards(q, m - kk, kk)
                if fkey >= 0:
                    flo, fhi = np.int64(fwd_table[fkey, 0]), np.int64(fwd_table[fkey, 1])  # type: ignore[assignment]
                    t0 = kk if flo < fhi else m
            for t in range(t0, m):
                if _handed_on(t, m, fhi - flo, small):
                    handed = m - t
                    break
                c = q[m - 1 - t]
                if c > 3:
                    fhi = flo
                    break
                flo, fhi = extend(fwd_occ, counts, flo, fhi, c)
                if flo >= fhi:
                    break
            hi = max(fhi - flo, 0)  # only the row count of the reverse index's rows is used from here
        else:  # searched before the steps, every piece at once (exact_pieces)
            x = EXACT * j
            lo, hi, flo, fhi, handed = ex[x], ex[x + 1], ex[x + 2], ex[x + 3], ex[x + 4]
        if handed >= 0:
            if flo < fhi:
                n_out = _record(out, n_out, handed, 0, flo, fhi)
                total += fhi - flo
            continue
        if lo >= hi:
            continue
        # Strings this long and this rare are verified rather than walked on: -(bases still to go).
        done = je - js - min(m, SMALL_FROM * (je - js))
        if hi - lo <= small and done >= 0:  # a rare piece: its rows to verification (forward rows, the
            n_out = _record(out, n_out, js, 0, flo, flo + hi - lo)  # piece starts the string), no walk, no D
            total += hi - lo
            continue
        if not ready:  # the walks' read parts and caps, made before the first walk only (as the D arrays)
            _walk_parts(q, m, e, k, bounds, piece, ext_r, ext_l, cap_l, low_r, bound_r, bound_l)
            ready = True
        len_r, len_l = m - je, js
        for i in range(len_r):
            cap_r[i] = piece[je + i] - j  # the piece holding read base je + i, counted from j
        cap_r[len_r] = k - 1 - j
        # Floors of the left phase: after t of its pieces (walking leftwards) at least t edits in all, else an
        # earlier step finds the alignment (see above); low_l[i]: the pieces done before read column i's piece.
        low_l[0] = 0
        for i in range(1, len_l + 1):
            low_l[i] = j - 1 - piece[js - i]
        low_l[len_l + 1] = j
        left = Phase(Part(ext_l[m - js:], len_l, bound_l[m - js:], cap_l, low_l, cols_l), left_stack)
        if make_d:
            lower_bounds_pair(counts, n, m, fwd_occ, ext_r, bound_r, fwd_table, rev_occ, ext_l, bound_l, rev_table)
            make_d = False
        work[0], work[1] = 0, min(WALK_MAX, WALK_BASE + walk_per_row(e) * (hi - lo))
        right = Phase(Part(ext_r[je:], len_r, bound_r[je:], cap_r, low_r, cols_r), right_stack)
        n_out, c = _right_walk(rev_occ, fwd_occ, counts, lo, hi, flo, right, left, Step(js, e, small, out), done, n_out)
        total += c
    return n_out, total


@njit(cache=True, nogil=True)
def search_query(q: np.ndarray, e: int, ix: Bidir, small: int, out: np.ndarray) -> tuple[int, int]:
    """search() with scratch of its own."""
    return search(q, e, ix, small, out, np.empty(scratch_size(q.size, e), dtype=np.int64), False)


def memo_size(m: np.ndarray) -> np.ndarray:
    """int8 slots a query of length m takes in a memo: a flag (1: filled), then its two D arrays."""
    return 2 * m + 3


@njit(cache=True, nogil=True, _nrt=False)
def _search_memo(q: np.ndarray, e: int, ix: Bidir, small: int, out: np.ndarray, memo: np.ndarray,
                 scratch: np.ndarray, exact: np.ndarray) -> tuple[int, int]:
    """search_query() that takes the query's D arrays from its memo slot (int8[memo_size(m)], or empty: none)
    when an earlier search filled it, and fills it otherwise. The D arrays do not depend on e, and the
    strata of --best search a read at e = 0, 1, 3, 5, ...: computing them took 12 % of an e = 5 search (250 Mbp
    human-like genome); searches below D_FROM_E neither use nor fill them, nor does a search that walks nowhere
    (search makes them before its first walk only: d_arrays_made). Values above e + 1 prune exactly
    as e + 1 does, so they are kept as min(value, 127) and the memo serves e <= MEMO_E only. scratch: search()'s,
    int64[scratch_size(q.size, e)] or more (allocated once per call of count_candidates, not per query); exact:
    search_after's."""
    m = q.size
    keep = memo.size > 0 and D_FROM_E <= e <= MEMO_E and m > e
    given = keep and memo[0] == 1
    a, b = d_arrays_span(m)
    if given:
        for i in range(a, b):
            scratch[i] = memo[1 + i - a]
    got = search_after(q, e, ix, small, out, scratch, given, exact)
    if keep and not given and d_arrays_made(scratch, m):
        for i in range(a, b):
            memo[1 + i - a] = min(scratch[i], 127)
        memo[0] = 1
    return got


@njit(cache=True, nogil=True, inline="always")
def _slot(memo: Memo, qi: int) -> np.ndarray:
    """Query qi's memo slot (empty without a memo)."""
    if memo.slots.size == 0:
        return memo.slots
    g = memo.ids[qi]
    return memo.slots[memo.at[g]:memo.at[g + 1]]


def no_memo() -> Memo:
    """count_candidates' memo for a search with none."""
    return Memo(np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int8))


def bidir(ix: FmIndex) -> Bidir:
    """An index as the search reads it, its k-mer tables made on first use (fm_lookup.tables)."""
    return Bidir(ix.n, ix.counts, ix.fwd_occ, ix.rev_occ, *tables(ix))


@njit(cache=True, nogil=True)
def count_candidates(queries: Queries, ix: Bidir, small: int, saved: Saved, memo: Memo, cand: np.ndarray, slab: int,
                     q_lo: int, q_hi: int, scratch: np.ndarray) -> np.ndarray:
    """Candidates per query of queries [q_lo, q_hi) in cand, and their accepted strings kept for
    fill_windows in saved.rows[slab] (the pool), one query's after another while there is room (a repeat-family
    read has thousands, a unique one a few, so a shared slab holds far more queries whole than a fixed share each
    would). saved.at[qi]: where query qi's saved.n[qi] strings start in the pool (flattened); a query whose strings
    do not fit goes to the spill, returned (its strings from -1 - saved.at[qi] on). Each query is searched into
    scratch (strings, ROW) first, so a spilled one is not searched again unless it has more strings than scratch
    holds (then once more, into room of its own). memo: the batch's D arrays (_search_memo)."""
    qcodes, qoff, qerr = queries
    pool, row_at, n_saved = saved
    room = pool.shape[1]
    used = 0
    spill = np.empty((0, ROW), dtype=np.int64)
    n_spill = 0
    m_max = e_max = 0
    for qi in range(q_lo, q_hi):
        m_max = max(m_max, qoff[qi + 1] - qoff[qi])
        e_max = max(e_max, qerr[qi >> 1])
    work = np.empty(scratch_size(m_max, e_max), dtype=np.int64)  # search()'s scratch, for every query
    group = np.empty(group_size(e_max + 1), dtype=np.int64)
    kk = table_k(ix.fwd_table)
    for qi in range(q_lo, q_hi):
        g = (qi - q_lo) % GROUP
        if g == 0:
            exact_group(qcodes, qoff, qerr, qi, min(q_hi, qi + GROUP), ix, kk, small, group, e_max + 1)
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        slot = _slot(memo, qi)
        e = qerr[qi >> 1]
        exact = group_exact(group, g, e_max + 1)
        got, cand[qi] = _search_memo(q, e, ix, small, scratch, slot, work, exact)
        n_saved[qi] = got
        found = scratch[:got]
        if got > scratch.shape[0]:  # more than scratch holds: searched again into room of its own
            found = np.empty((got, ROW), dtype=np.int64)
            _search_memo(q, e, ix, small, found, slot, work, exact)
        if used + got <= room:
            _put_rows(pool[slab], used, found, got)
            row_at[qi] = slab * room + used
            used += got
            continue
        if n_spill + got > spill.shape[0]:
            grown = np.empty((max(2 * spill.shape[0], n_spill + got), ROW), dtype=np.int64)
            _put_rows(grown, 0, spill, n_spill)
            spill = grown
        _put_rows(spill, n_spill, found, got)
        row_at[qi] = -1 - n_spill
        n_spill += got
    return spill[:n_spill]


@njit(cache=True, nogil=True, inline="always")
def _group_at(k_max: int) -> tuple[int, int]:
    """Where exact_group's group holds each query's first piece, and (after one query's bounds) the pieces' EXACT
    words."""
    return 2 * GROUP * k_max, 2 * GROUP * k_max + GROUP + k_max + 1


@njit(cache=True, nogil=True)
def group_size(k_max: int) -> int:
    """int64 words of exact_group's group for queries of at most k_max pieces."""
    return _group_at(k_max)[1] + EXACT * GROUP * k_max


@njit(cache=True, nogil=True, _nrt=False)
def exact_group(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, q_lo: int, q_hi: int, ix: Bidir, kk: int,
                small: int, group: np.ndarray, k_max: int) -> None:
    """The exact searches of the pieces of queries [q_lo, q_hi) (at most GROUP), all in step (exact_runs), for
    search_after: one query's two to five pieces leave too few extends' memory waits to overlap. Queries whose cut
    depends on the pieces' counts (CUT_FROM pieces or more) or that have no pieces are left out (group_exact gives
    them none). group: int64[group_size(k_max)]: the pieces' starts and ends in qcodes, each query's first piece
    (-1: left out), one query's bounds, the pieces' EXACT words (_group_at)."""
    at, ex_at = _group_at(k_max)
    starts, ends, first, ex = group[:GROUP * k_max], group[GROUP * k_max:at], group[at:at + GROUP], group[ex_at:]
    bounds = group[at + GROUP:ex_at]
    n_p = 0
    for qi in range(q_lo, q_hi):
        g = qi - q_lo
        m, k = qoff[qi + 1] - qoff[qi], qerr[qi >> 1] + 1
        first[g] = -1
        if k < 2 or k >= CUT_FROM or m < k:  # (m < k: search returns before any piece)
            continue
        first[g] = n_p
        equal_pieces(m, k, bounds)  # as search cuts it below CUT_FROM pieces (fm_pieces.pieces)
        for j in range(k):
            starts[n_p + j] = qoff[qi] + bounds[j]
            ends[n_p + j] = qoff[qi] + bounds[j + 1]
        n_p += k
    if n_p == 0:
        return
    exact_runs(qcodes, starts, ends, n_p, ix, kk, small, ex)
    for qi in range(q_lo, q_hi):  # where a piece's handed-on part starts: in its own query, not in qcodes
        g = qi - q_lo
        if first[g] < 0:
            continue
        for j in range(first[g], first[g] + qerr[qi >> 1] + 1):
            if ex[EXACT * j + 4] >= 0:
                ex[EXACT * j + 4] -= qoff[qi]


@njit(cache=True, nogil=True, inline="always")
def group_exact(group: np.ndarray, g: int, k_max: int) -> np.ndarray:
    """Query g of exact_group's group: its pieces' exact searches (search_after's exact), empty where left out."""
    at, ex_at = _group_at(k_max)
    first = group[at + g]
    if first < 0:
        return group[:0]
    return group[ex_at + EXACT * first:]


@njit(cache=True, nogil=True, inline="always")
def _put_rows(dst: np.ndarray, at: int, src: np.ndarray, n: int) -> None:
    """dst[at:at + n] = src[:n], rows of ROW words (no slice assignment: see ranges.put)."""
    for i in range(n):
        for c in range(ROW):
            dst[at + i, c] = src[i, c]


@njit(cache=True, nogil=True, _nrt=False)
def row_windows(rows: np.ndarray, n_rows: int, m: int, e: int, fwd: Locator, slots: Slots, w: int) -> int:
    """Windows [diag - e, diag + m + e) (clipped to the piece's sequence) of every row of the first n_rows
    accepted strings, written from w on (in row order); returns the next free slot. The rows are listed in
    the window slots first (row, the string's bases before the piece, the piece's start in the read), then
    located four at a time (locate_four)."""
    text_starts, ref_starts, win_start, win_end, win_diag = slots
    w0 = w
    for r in range(n_rows):
        row = rows[r]
        for i in range(row[2], row[3]):
            win_start[w], win_end[w], win_diag[w] = i, row[1], row[0]
            w += 1
    last = w - 1
    for k in range(w0, w, 4):
        p0, p1, p2, p3 = locate_four(fwd.occ, fwd.counts, fwd.mark, fwd.ssa, win_start[k],
                                     win_start[min(k + 1, last)], win_start[min(k + 2, last)],
                                     win_start[min(k + 3, last)])
        for j in range(min(4, w - k)):
            p = p0 if j == 0 else (p1 if j == 1 else (p2 if j == 2 else p3))
            string_window(p, win_end[k + j], win_diag[k + j], m, e, text_starts, ref_starts, k + j, win_start,
                          win_end, win_diag)
    return w


@njit(cache=True, nogil=True)
def fill_windows(queries: Queries, q_first: int, cand_off: np.ndarray, saved: Saved, at: np.ndarray,
                 pos: np.ndarray, slots: Slots, q_lo: int, q_hi: int) -> None:
    """Windows of every row of every accepted string of queries [q_lo, q_hi) (row_windows), sorted by
    start per query, in the windows of the queries from q_first on (slots.start[0] is q_first's first).
    saved: count_candidates' pool and spills; at, pos: their rows located (fm_located.union_rows, locate_rows)."""
    base = cand_off[q_first]
    _located_all(queries, base, cand_off, saved, at, pos, slots, q_lo, q_hi)
    win_start, win_end, win_diag = slots.start, slots.end, slots.diag
    for qi in range(q_lo, q_hi):  # the queries with more windows than sort_few sorts
        lo, hi = cand_off[qi] - base, cand_off[qi + 1] - base
        if hi - lo > SORT_FEW:
            _sort_windows(win_start[lo:hi], win_end[lo:hi], win_diag[lo:hi])


@njit(cache=True, nogil=True, _nrt=False)  # no atomic reference counts on the per-query slices (align._align_block)
def _located_all(queries: Queries, base: int, cand_off: np.ndarray, saved: Saved, at: np.ndarray, pos: np.ndarray,
                 slots: Slots, q_lo: int, q_hi: int) -> None:
    """fill_windows' windows, each query's sorted where sort_few sorts them."""
    qoff, qerr = queries.off, queries.err
    rows, row_at, n_saved = saved
    text_starts, ref_starts, win_start, win_end, win_diag = slots
    for qi in range(q_lo, q_hi):
        m = qoff[qi + 1] - qoff[qi]
        lo, hi = cand_off[qi] - base, cand_off[qi + 1] - base
        a, b = row_at[qi], row_at[qi] + n_saved[qi]
        located_windows(rows[a:b], at[a:b], n_saved[qi], m, qerr[qi >> 1], text_starts, ref_starts, pos, win_start,
                        win_end, win_diag, lo)
        sort_few(win_start, win_end, win_diag, lo, hi)
