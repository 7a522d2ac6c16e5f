"""A location proved alone from the index: no other location of its read within one more edit.

A read R whose best location is unique, at b edits over the reference span T, needs the stratum b + 1 searched
for its MAPQ (pipeline/strata.py). Any other location T' within b + 1 edits of R lies within 2b + 1 of T (the
triangle inequality; a read N costs an edit against any base, so it holds with N too), so cut T into 2b + 2
disjoint pieces and one of them occurs exactly in T' (on the reverse strand: its reverse complement does). Hence
when every piece occurs once in the text, at T, and its reverse complement nowhere, no such T' exists that does not
hold a piece at T's own place; one that does lies within 2b + 1 bases of T's ends, and every end in between is
within 2b + 1 edits of R, so it is part of T's location wherever the read's e is at least 2b + 1 (a location is a
run of ends within e: verify/runs.py). Such a read's next round would find its one location again, so it is
skipped.

Each count is a backward search from the piece's last k-mer (the forward k-mer table), stopped as soon as the
rows are down to one (the piece's own, for a piece) or none (a reverse complement): in a unique region that is a
few steps after the table. The pieces' searches run in step, each extend's occurrence-table rows prefetched as soon
as they are known, so their misses overlap (250 Mbp human-like genome, 150 bp reads: 3.3 us a span with two
threads, 9 us with the searches one after another). A span that holds an N or IUPAC base, or crosses into another
sequence, is never proved.

One cut, and a piece that occurs elsewhere ends the proof: the spans it fails are mostly reads over a repeat's
edge, and proving more of them (other cuts, or the read verified at a piece's few other occurrences) costs about
what their round would.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.filter.fm_search import extend, key_leftwards, prefetch_occ, table_k
from seedmap.io.columns import PackedRef
from seedmap.io.reference import sequence_of, unpack_into

MIN_PIECE = 12  # shorter pieces rarely occur once; no proof is tried with them


class Lanes(NamedTuple):
    """Each piece's search (lanes j < k) and its reverse complement's (k + j): rows [lo, hi) and the next symbol
    it extends by (at, leftwards in the codes) down to its piece's first (first)."""

    lo: np.ndarray
    hi: np.ndarray
    at: np.ndarray
    first: np.ndarray


@njit(cache=True, nogil=True)
def spans_alone(occ_tab: np.ndarray, counts: np.ndarray, n: int, table: np.ndarray, ref: PackedRef,
                seq_starts: np.ndarray, start: np.ndarray, end: np.ndarray, parts: np.ndarray, out: np.ndarray) -> None:
    """out[i]: whether reference span [start[i], end[i]) cut into parts[i] pieces proves its location alone (the
    module's notes). occ_tab, counts, n, table: the forward index and its k-mer table."""
    kk = table_k(table)
    width = lanes = 0
    for i in range(start.size):
        width = max(width, end[i] - start[i])
        lanes = max(lanes, 2 * parts[i])
    codes = np.empty(2 * width, dtype=np.uint8)  # the span, then its reverse complement
    lane = Lanes(np.empty(lanes, dtype=np.int64), np.empty(lanes, dtype=np.int64), np.empty(lanes, dtype=np.int64),
                 np.empty(lanes, dtype=np.int64))
    for i in range(start.size):
        s, m, k = start[i], end[i] - start[i], parts[i]
        out[i] = False
        if k < 1 or m < k * MIN_PIECE or sequence_of(seq_starts, s) != sequence_of(seq_starts, end[i] - 1):
            continue
        t = codes[:m]
        unpack_into(ref.packed, ref.nmask, s, t)
        clean = True
        for j in range(m):
            if t[j] > 3:
                clean = False
                break
            codes[2 * m - 1 - j] = 3 - t[j]
        if clean:
            out[i] = _pieces_alone(occ_tab, counts, n, table, kk, codes, m, k, lane)


@njit(cache=True, nogil=True)
def _pieces_alone(occ_tab: np.ndarray, counts: np.ndarray, n: int, table: np.ndarray, kk: int, codes: np.ndarray,
                  m: int, k: int, lane: Lanes) -> bool:
    """Whether each of the k pieces of codes[:m] (piece j: [j * m // k, (j + 1) * m // k)) occurs once and its
    reverse complement (in codes[m:2m]) nowhere, the pieces' searches in step. A piece's search stops at one row, a
    complement's at none (their suffixes' rows bound theirs)."""
    lo, hi, at, first = lane
    for j in range(k):
        a, b = j * m // k, (j + 1) * m // k
        first[j], at[j] = a, b - 1
        first[k + j], at[k + j] = 2 * m - b, 2 * m - a - 1
    for ln in range(2 * k):
        a, b = first[ln], at[ln] + 1
        lo[ln], hi[ln] = 0, n
        if kk and b - a >= kk:
            key = key_leftwards(codes, b - kk, kk)
            lo[ln], hi[ln] = np.int64(table[key, 0]), np.int64(table[key, 1])
            at[ln] = b - kk - 1
        prefetch_occ(occ_tab, lo[ln])
        prefetch_occ(occ_tab, hi[ln])
    busy = 2 * k
    while busy:
        busy = 0
        for ln in range(2 * k):
            stop = 1 if ln < k else 0
            if hi[ln] - lo[ln] <= stop or at[ln] < first[ln]:
                continue  # (done: a piece at one row or more, a complement at none or more)
            x, y = extend(occ_tab, counts, lo[ln], hi[ln], codes[at[ln]])
            lo[ln], hi[ln] = x, y
            at[ln] -= 1
            if y - x > stop and at[ln] >= first[ln]:
                prefetch_occ(occ_tab, x)
                prefetch_occ(occ_tab, y)
                busy += 1
            elif y - x != stop:
                return False  # a piece that occurs again, or a complement that occurs
    for ln in range(2 * k):
        if hi[ln] - lo[ln] != (1 if ln < k else 0):
            return False
    return True
