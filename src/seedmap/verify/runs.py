"""Runs at the read's e from locations found with fewer edits (the stratified search).

A location is a run of consecutive hit ends at the read's e (semiglobal.py). A search with
e' < e edits finds every end of distance <= e', grouped into runs at e'. Every hit of distance <= e'
lies in a run at e, and a run at e holds one or more runs at e' (more in a tandem repeat: the distance
climbs above e' between copies but stays <= e). Hits outside the runs at e' cost more than e', so the
best hit of a run at e is the best of the best hits of the runs at e' it holds (same order: distance,
span closest to m, leftmost end). What is left to find is which neighbouring runs at e' are joined:
two are when every end between them is a hit at e, which Myers' bit vectors decide column by column from
the first one's end (bitvector.every_end_hits: it stops at the first end that is not a hit, usually a few
columns on; a scalar DP of the band per pair was 0.42 s of a --best run's 3.3 s, 200 k ragout16 reads, and
the runs stage went from 0.8-0.9 s to 0.3 s with this).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from seedmap.io.columns import PackedRef, Queries
from seedmap.io.reference import sequence_of
from seedmap.verify.bitvector import every_end_hits, match_masks

SUFFIX = 64  # bases of a read joined tries first: one word


class Spans(NamedTuple):
    """Locations l by their reference interval [start[l], end[l]) and distance dist[l]."""

    start: np.ndarray
    end: np.ndarray
    dist: np.ndarray


class ByQuery(NamedTuple):
    """The partial locations grouped by query: query qi's are order[first[qi]:first[qi + 1]]."""

    first: np.ndarray
    order: np.ndarray


class JoinScratch(NamedTuple):
    """joined's scratch: peq of 8 * (nw + 2) words, pv and mv of nw."""

    peq: np.ndarray
    pv: np.ndarray
    mv: np.ndarray


@njit(cache=True, nogil=True, _nrt=False)
def joined(qcodes: np.ndarray, a: int, m: int, e: int, end_a: int, end_b: int, seq_lo: int, packed: np.ndarray,
            nmask: np.ndarray, peq: np.ndarray, pv: np.ndarray, mv: np.ndarray) -> bool:
    """Whether every end in [end_a, end_b] (global, end_a < end_b, one sequence) is a hit within e edits for
    the read qcodes[a:a + m]. Scratch: peq of 8 * (nw + 2) words, pv and mv of nw, nw = (m + 63) // 64 or more.

    A read longer than a word is first tried by its last SUFFIX bases alone, one word a column: an alignment of
    the read ending at j holds one of its suffix ending at j that costs no more, so an end over e for the suffix
    is over e for the read. Most pairs are copies far apart whose runs end a few columns past end_a (ragout16,
    --best: 98 % of them over 1,000 bases apart, none of those joined)."""
    if m > SUFFIX:
        lo = max(seq_lo, end_a - SUFFIX - e)
        match_masks(qcodes, a + m - SUFFIX, SUFFIX, peq)
        if not every_end_hits(peq, SUFFIX, e, packed, nmask, lo, end_a - lo, end_b - lo, pv, mv):
            return False
    lo = max(seq_lo, end_a - m - e)  # every alignment of cost <= e ending at end_a or later starts here or later
    match_masks(qcodes, a, m, peq)
    return every_end_hits(peq, m, e, packed, nmask, lo, end_a - lo, end_b - lo, pv, mv)


@njit(cache=True, nogil=True)
def run_heads(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, q: np.ndarray, s: np.ndarray, e: np.ndarray,
              d: np.ndarray, partial: np.ndarray, starts: np.ndarray, packed: np.ndarray,
              nmask: np.ndarray) -> np.ndarray:
    """Which locations (query, start, end, dist; any order) stand for their runs at the read's e (qerr): every
    one not `partial` (found with the read's e: a run at e already), and of the partial ones (found with fewer
    edits) one per run at e they join into: the best of its parts (distance, span closest to the read length,
    leftmost end). starts: Reference.starts. One kernel for the whole job (the numpy sorts, gathers and searches
    around a pair kernel took as long as its pairs: ragout16, --best, 1,000,000 reads, -t 1): here the scratch and
    the partial locations grouped by query (a counting sort); _heads does the rest."""
    nq = qoff.size - 1
    first = np.zeros(nq + 1, dtype=np.int64)
    for i in range(q.size):
        if partial[i]:
            first[q[i] + 1] += 1
    m_max = 0
    for qi in range(nq):
        if first[qi + 1]:
            m_max = max(m_max, qoff[qi + 1] - qoff[qi])
        first[qi + 1] += first[qi]
    order = np.empty(first[nq], dtype=np.int64)
    at = first.copy()
    for i in range(q.size):
        if partial[i]:
            order[at[q[i]]] = i
            at[q[i]] += 1
    keep = np.empty(q.size, dtype=np.bool_)
    for i in range(q.size):
        keep[i] = not partial[i]
    nw = (m_max + 63) >> 6
    peq = np.empty(8 * (nw + 2), dtype=np.uint64)  # joined's scratch, once for every pair
    pv = np.empty(nw, dtype=np.uint64)
    mv = np.empty(nw, dtype=np.uint64)
    _heads(Queries(qcodes, qoff, qerr), Spans(s, e, d), ByQuery(first, order), starts, PackedRef(packed, nmask),
           JoinScratch(peq, pv, mv), keep)
    return keep


@njit(cache=True, nogil=True, _nrt=False)
def _heads(queries: Queries, locs: Spans, parts: ByQuery, starts: np.ndarray, ref: PackedRef, scratch: JoinScratch,
           keep: np.ndarray) -> None:
    """Each query's partial locations (parts) sorted by end (a few, nearly sorted: insertion sort), neighbours on
    one sequence joined where every end between them is a hit, and each run's best part kept."""
    qcodes, qoff, qerr = queries
    s, e, d = locs
    first, order = parts
    packed, nmask = ref
    peq, pv, mv = scratch
    for qi in range(first.size - 1):
        lo, hi = first[qi], first[qi + 1]
        for t in range(lo + 1, hi):
            x = order[t]
            u = t
            while u > lo and e[order[u - 1]] > e[x]:
                order[u] = order[u - 1]
                u -= 1
            order[u] = x
        m = qoff[qi + 1] - qoff[qi]
        best = -1
        for t in range(lo, hi):
            b = order[t]
            if best >= 0:
                a = order[t - 1]
                seq = sequence_of(starts, e[a] - 1)
                if seq == sequence_of(starts, e[b] - 1) and joined(qcodes, qoff[qi], m, qerr[qi >> 1], e[a], e[b],
                                                                    starts[seq], packed, nmask, peq, pv, mv):
                    if d[b] < d[best] or (d[b] == d[best] and abs(e[b] - s[b] - m) < abs(e[best] - s[best] - m)):
                        best = b
                    continue
                keep[best] = True
            best = b
        if best >= 0:
            keep[best] = True
