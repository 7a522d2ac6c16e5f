"""Where the search scheme cuts a read into its e + 1 pieces (filter/fm_scheme.py). The scheme is complete
for any cut into e + 1 non-empty pieces (its caps and floors count pieces, not bases), so the cut can avoid
pieces that occur everywhere: a piece inside a poly-A tail, a microsatellite or a young repeat family
matches at thousands of places, each walked on for up to the rest of the read. The cut minimises the
pieces' occurrences summed, counted in the forward index before the steps (250 Mbp human-like genome,
e = 5, two sets of 2,000 reads: the search's time 16 % and 19 % below equal pieces'; with equal pieces the
reads with a low-complexity run, 4 % of them, took 20 % of it; cutting only those gained 8 %).

Counting is cheap: for each end of a piece, one backward search leftwards gives the counts of every
piece ending there, and it stops once the count is at most 1 (longer pieces occur at most as often, and
a unique piece costs about the same whatever its length). The k-mer table's levels (fm_lookup.py) give the
counts up to its k bases, so each search starts there. Cheap, but not free: about 100 such searches for a
100 bp read. 250 Mbp human-like genome, e = 5, the count pass sampled by perf (one thread): before the lookups
the cut took 23 % of it (the equal pieces' counts 5 %), the lower bounds 13 %, the walks 43 %; the lookups made the pass
about 7 % faster with the same cuts, and left the cut at 22 % (those counts 6 %, lower bounds 16 %, walks
52 %), most of it waiting for memory: the table rows (a quarter of its samples) and the occ rows of the
longer pieces (a third); the dynamic programme itself is 3 %. Prefetching the next ends' table rows gained
nothing measurable. So the cut is weighed only where the equal
pieces occur more than CUT_ABOVE times in all: a cut cannot save more walks than there are piece
occurrences (250 Mbp human-like genome, e = 5, 1,500 reads: a unique read's search 220 -> 75 us, the
search 20 % faster, candidates 0.1 % more; weighing from 8 to 1,024 occurrences gave the same within noise,
never weighing 10 % slower).

Two things keep the weighing cheap. Pieces start and end on a grid of GRID bases (the last ends at
the read's end): half the ends, so half the backward searches, for cuts a little worse (250 Mbp human-like
genome, e = 5, 5,000 reads, count pass on one thread: the cut 0.36-0.40 -> 0.23-0.27 s, the walks' nodes 2.7 %
more, candidates 1.9 % more, the pass 8-10 % faster; a grid of 3 or 4: cut 0.18 s but 13 % more candidates).
And the searches of ENDS ends go in step (_count_ends), so that their waits for memory overlap (the cut 10 %
faster). The equal pieces' counts, which decide whether to weigh the cut at all, are searched in step
too, each asking for its next blocks (_counts_total; 250 Mbp, --best, -t 2, two sets of 4 rounds: 0.953x and
0.962x wall, the same records); prefetching in _count_ends gained nothing (1.000x)."""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.filter.fm_search import extend, key_leftwards, level_row, prefetch_occ, table_k

MAX_PIECE = 48  # longest piece the cut considers (48 bases of a repeat occur about as often as longer ones)
# Fewer pieces (e < 5) are left equal: counting costs about as much as the whole search then (2,000 reads of the
# 250 Mbp genome, count pass, equal / cut: e = 3: 0.37 / 0.68 s; e = 4: 0.96-1.08 / 1.06-1.19 s; e = 5: 2.49 /
# 1.70 s), and the strata of --best search every read at e = 0, 1, 2, ... (150 bp reads, e = 4, --best, cut from 3
# pieces on: 1.15x the wall time, 1.22x the candidates CPU, benchmarks/ab.py, 250 Mbp human-like genome, -t 2)
CUT_FROM = 6
CUT_WORK = 200_000  # pieces x read ends x piece lengths the cut may weigh; above it (long reads, large e): equal
CUT_ABOVE = 64  # equal pieces occurring this often or less in all are kept (see the notes)
BIG = 1 << 40
ENDS = 4  # piece ends whose counts are searched in step (_count_ends: four named lanes)
GRID = 2  # pieces start and end at multiples of this (the last at the read's end)


@njit(cache=True, nogil=True)
def _by_count(m: int, k: int) -> bool:
    return k > 1 and k * m * MAX_PIECE <= CUT_WORK


@njit(cache=True, nogil=True)
def cut_scratch(m: int, k: int) -> int:
    """int64 words of cut_pieces' scratch."""
    return 2 * (k + 1) * (m + 1) + ENDS * (MAX_PIECE + 1) if _by_count(m, k) else 0


@njit(cache=True, nogil=True, _nrt=False)
def pieces(q: np.ndarray, m: int, k: int, n: int, counts: np.ndarray, fwd_occ: np.ndarray, table: np.ndarray,
           bounds: np.ndarray, scratch: np.ndarray, lanes: np.ndarray) -> None:
    """The search's cut: cut_pieces from CUT_FROM pieces on where the equal pieces occur more than CUT_ABOVE
    times in all, else equal pieces. table: the forward index's k-mer table (fm_lookup.py); lanes: 3 k words of
    scratch (_counts_total)."""
    equal_pieces(m, k, bounds)
    if k >= CUT_FROM and _counts_total(q, k, n, counts, fwd_occ, table, bounds, lanes) > CUT_ABOVE:
        cut_pieces(q, m, k, n, counts, fwd_occ, table, bounds, scratch)


@njit(cache=True, nogil=True, _nrt=False)
def _counts_total(q: np.ndarray, k: int, n: int, counts: np.ndarray, fwd_occ: np.ndarray, table: np.ndarray,
                  bounds: np.ndarray, lanes: np.ndarray) -> int:
    """The pieces' occurrences in the forward index, summed: their backward searches (each from its last kk symbols
    looked up in table) a base of each in turn, each asking for its next blocks while the others take theirs
    (fm_scheme.exact_pieces). lanes[3 j:]: piece j's rows and next base."""
    kk = table_k(table)
    busy = 0
    for j in range(k):
        a, b = bounds[j], bounds[j + 1]
        lo, hi, i = 0, n, b - 1
        if kk and b - a >= kk:  # (none where they hold an N: then the piece does not occur either)
            lo, hi = _looked_up(q, b - kk, kk, table, kk)
            i = b - 1 - kk
        lanes[3 * j], lanes[3 * j + 1], lanes[3 * j + 2] = lo, hi, i
        busy += i >= a and lo < hi
    while busy:
        for j in range(k):
            lo, hi, i = lanes[3 * j], lanes[3 * j + 1], lanes[3 * j + 2]
            a = bounds[j]
            if i < a or lo >= hi:
                continue
            c = q[i]
            if c > 3:  # an N matches nothing exactly
                hi = lo
            else:
                lo, hi = extend(fwd_occ, counts, lo, hi, c)
            i -= 1
            lanes[3 * j], lanes[3 * j + 1], lanes[3 * j + 2] = lo, hi, i
            if i < a or lo >= hi:
                busy -= 1
            else:
                prefetch_occ(fwd_occ, lo)
                prefetch_occ(fwd_occ, hi)
    total = 0
    for j in range(k):
        total += max(lanes[3 * j + 1] - lanes[3 * j], 0)
    return total


@njit(cache=True, nogil=True)
def equal_pieces(m: int, k: int, bounds: np.ndarray) -> None:
    for j in range(k + 1):
        bounds[j] = j * m // k


@njit(cache=True, nogil=True, inline="always")
def _looked_up(q: np.ndarray, a: int, size: int, table: np.ndarray, kk: int) -> tuple[int | np.int64, int | np.int64]:
    """Rows of q[a:a + size] (size <= kk) in the forward index's table (none where it holds an N)."""
    key = key_leftwards(q, a, size)
    if key < 0:
        return 0, 0
    row = key if size == kk else level_row(kk, size) + key
    return np.int64(table[row, 0]), np.int64(table[row, 1])


@njit(cache=True, nogil=True, _nrt=False)
def cut_pieces(q: np.ndarray, m: int, k: int, n: int, counts: np.ndarray, fwd_occ: np.ndarray, table: np.ndarray,
               bounds: np.ndarray, scratch: np.ndarray) -> None:
    """bounds[0..k]: where the k pieces start (bounds[k] = m): the cut of least occurrences summed (see the
    module's notes; pieces of m // (2k) to MAX_PIECE bases; a dynamic programme over the pieces' ends), or
    equal pieces where that is not weighed (_by_count) or no cut fits. table: the forward index's k-mer table
    (fm_lookup.py), whose levels give the rows of the pieces up to its k bases. scratch: int64[cut_scratch(m,
    k)] or more. The backward searches of ENDS piece ends go in step, a base of each in turn: each waits for
    memory at every base, and searches in step wait together, not one after another."""
    equal_pieces(m, k, bounds)
    if not _by_count(m, k):
        return
    shortest = max(1, m // (2 * k))
    kk = table_k(table)
    first = min(shortest, kk)  # the first piece size looked up (0: none, a backward search from every end)
    size_cost = (k + 1) * (m + 1)
    cost = scratch[:size_cost]  # cost[j * (m + 1) + b]: q[:b] in j pieces
    back = scratch[size_cost:2 * size_cost]
    found = scratch[2 * size_cost:2 * size_cost + ENDS * (MAX_PIECE + 1)]  # found[g * (MAX_PIECE + 1) + size]
    for i in range(cost.size):
        cost[i] = BIG
    cost[0] = 0
    n_ends = (m + GRID - 1) // GRID
    for i0 in range(1, n_ends + 1, ENDS):
        ends = min(ENDS, n_ends + 1 - i0)
        _count_ends(q, m, i0, ends, first, shortest, kk, n, counts, fwd_occ, table, found)
        for g in range(ends):
            b = min((i0 + g) * GRID, m)
            for size in range(shortest, min(MAX_PIECE, b) + 1):
                a = b - size
                if a % GRID:  # pieces start and end on the grid (but the last ends at m)
                    continue
                got = found[g * (MAX_PIECE + 1) + size]
                for j in range(1, k + 1):
                    here = cost[(j - 1) * (m + 1) + a]
                    if here < BIG and here + got < cost[j * (m + 1) + b]:
                        cost[j * (m + 1) + b] = here + got
                        back[j * (m + 1) + b] = a
    if cost[k * (m + 1) + m] >= BIG:  # no cut within MAX_PIECE (a very long read): equal pieces
        return
    b = m
    for j in range(k, 0, -1):
        bounds[j] = b
        b = back[j * (m + 1) + b]
    bounds[0] = 0


@njit(cache=True, nogil=True, inline="always")
def _count_ends(q: np.ndarray, m: int, i0: int, ends: int, first: int, shortest: int, kk: int, n: int,
                counts: np.ndarray, fwd_occ: np.ndarray, table: np.ndarray, found: np.ndarray) -> None:
    """found[g * (MAX_PIECE + 1) + size]: the occurrences of q[b - size:b] (b = min((i0 + g) GRID, m): the
    grid's ends i0 .. i0 + ends - 1, ends <= ENDS) for sizes shortest..min(MAX_PIECE, b), by backward searches
    from the ends in step, each stopped at one row (a longer piece occurs at most as often). Each end's rows
    are a pair of named variables (in registers, not scratch), hence ENDS = 4."""
    lo0, lo1, lo2, lo3 = 0, 0, 0, 0
    hi0, hi1, hi2, hi3 = n, n, n, n
    for size in range(max(first, 1), MAX_PIECE + 1):
        for g in range(ends):
            b = min((i0 + g) * GRID, m)
            a = b - size
            if a < 0:
                continue
            lo = lo0 if g == 0 else (lo1 if g == 1 else (lo2 if g == 2 else lo3))
            hi = hi0 if g == 0 else (hi1 if g == 1 else (hi2 if g == 2 else hi3))
            if size <= kk and (size == first or hi - lo > 1):  # looked up, as the backward search would find it
                lo, hi = _looked_up(q, a, size, table, kk)
                if size == first and hi <= lo:
                    # The search stops at one row: a piece that no longer occurs counts as one where a shorter
                    # one occurs once (the count model of the notes), as without the table.
                    for shorter in range(first - 1, 0, -1):
                        x, y = _looked_up(q, b - shorter, shorter, table, kk)
                        if y > x:
                            if y - x == 1:
                                lo, hi = x, y
                            break
            elif hi - lo > 1:
                c = q[a]
                if c > 3:  # an N matches nothing exactly
                    hi = lo
                else:
                    lo, hi = extend(fwd_occ, counts, lo, hi, c)
            if size >= shortest:
                found[g * (MAX_PIECE + 1) + size] = max(hi - lo, 0)
            if g == 0:
                lo0, hi0 = lo, hi
            elif g == 1:
                lo1, hi1 = lo, hi
            elif g == 2:
                lo2, hi2 = lo, hi
            else:
                lo3, hi3 = lo, hi
