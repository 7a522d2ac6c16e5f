"""Other placements inside one location: a read in a short tandem repeat, for MAPQ.

A location is a run of consecutive hit ends (semiglobal.py), so a read from a microsatellite or a short
satellite array is one location however many copies of the array it fits: its alignment shifted by a
period is as good, and the ends in between stay within e. Counted as one location, such a read
got MAPQ 60 while its reported copy is one of many (52 of the 55 MAPQ > 0 misplacements of 40,000
example reads). Shifts past 2e cannot stay in one run (the ends between them cost up to half the shift
more), so placements further on are other locations, which MAPQ counts already.

For each read whose best location is unique, its alignment is laid again (the same CIGAR) 1 to 2e bases
left and right, within the sequence; each shift whose cost is at most the best + MAX_GAP counts as a
location of that cost in MAPQ, and a shift as good as the best is a tie (MAPQ 0). The same CIGAR shifted
is an upper bound of the shifted placement's cost, exact in an exact array, so a tie found is a tie.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.io.columns import PackedRef, Queries
from seedmap.io.reference import ref_code, sequence_of
from seedmap.spread import spread
from seedmap.verify.align import OP_D, OP_I, Traceback

MAX_GAP = 2  # edits behind the best beyond which a placement weighs nothing to MAPQ (0.01^3)


@njit(cache=True, nogil=True, _nrt=False)
def _shifted_cost(q: np.ndarray, a: int, ops: np.ndarray, lens: np.ndarray, packed: np.ndarray,
                  nmask: np.ndarray, limit: int) -> int:
    """Edits of the alignment (ops, lens) of q laid from reference position a; limit + 1 once past it."""
    cost = 0
    qi = 0
    ti = a
    for r in range(ops.size):
        op, n = ops[r], lens[r]
        if op == OP_I:
            qi += n
            cost += n
        elif op == OP_D:
            ti += n
            cost += n
        else:
            for j in range(n):
                c = ref_code(packed, nmask, ti + j)
                if c != q[qi + j] or c > 3:
                    cost += 1
                    if cost > limit:
                        return limit + 1
            qi += n
            ti += n
        if cost > limit:
            return limit + 1
    return cost


def shifted_placements(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray,
                       loc_d: np.ndarray, aln: Traceback, packed: np.ndarray, nmask: np.ndarray,
                       seq_starts: np.ndarray, n_reads: int) -> np.ndarray:
    """Per read (locations sorted by query, so a read's are contiguous; loc_d their distances, aln their
    alignments): how many shifted placements of its unique best location cost the best + g, for g = 0..MAX_GAP
    (row r, column g); zeros otherwise."""
    out = np.zeros((n_reads, MAX_GAP + 1), dtype=np.int64)
    first = np.searchsorted(np.asarray(loc_q) >> 1, np.arange(n_reads + 1)).astype(np.int64)  # each read's first
    queries, ref = Queries(qcodes, qoff, qerr), PackedRef(packed, nmask)
    spread(n_reads, lambda r0, r1: _shifted(queries, loc_q, loc_d, aln, ref, seq_starts, first, out, r0, r1),
           grain=64)
    return out


@njit(cache=True, nogil=True, _nrt=False)
def _shifted(queries: Queries, loc_q: np.ndarray, loc_d: np.ndarray, aln: Traceback, ref: PackedRef,
             seq_starts: np.ndarray, first: np.ndarray, out: np.ndarray, r0: int, r1: int) -> None:
    """shifted_placements of reads [r0, r1), their locations from first[r] to first[r + 1]."""
    qcodes, qoff, qerr = queries
    loc_s, loc_e = aln.start, aln.end
    cig_off, ops, lens, n_runs = aln.cig_off, aln.ops, aln.lens, aln.n_runs
    packed, nmask = ref
    for r in range(r0, r1):
        lo, hi = first[r], first[r + 1]
        if lo == hi:
            continue
        best, at, ties = loc_d[lo], lo, 0
        for k in range(lo + 1, hi):
            if loc_d[k] < best:
                best, at, ties = loc_d[k], k, 0
            elif loc_d[k] == best:
                ties += 1
        if ties:
            continue
        qi = loc_q[at]
        q = qcodes[qoff[qi]:qoff[qi + 1]]
        a, b = loc_s[at], loc_e[at]
        s = sequence_of(seq_starts, a)
        seq_lo, seq_hi = seq_starts[s], seq_starts[s + 1]
        c0, nr = cig_off[at], n_runs[at]
        for shift in range(1, 2 * qerr[r] + 1):
            for sign in (-1, 1):
                p = shift * sign
                if a + p < seq_lo or b + p > seq_hi:
                    continue
                cost = _shifted_cost(q, a + p, ops[c0:c0 + nr], lens[c0:c0 + nr], packed, nmask, best + MAX_GAP)
                if cost <= best + MAX_GAP:
                    out[r, max(cost - best, 0)] += 1
