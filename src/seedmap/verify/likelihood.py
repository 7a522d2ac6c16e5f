"""The log-likelihood of each aligned location, from the read's base qualities: what MAPQ weighs a read's
locations by (mapq.py) when the reads have qualities.

Relative to a perfect match, an alignment's log-likelihood is the sum of base_log[Q] over the read bases its
MD names as mismatches (Q: the base's ASCII quality) plus gap_log per inserted or deleted base. Matched bases
are left out: their log(1 - p) is within 1e-4 of 0 at every quality a mismatch is told apart by. The read
positions come from walking the CIGAR beside the MD; a reverse-strand location (odd query) reads the
qualities from the read's end. A pure function of the alignment, so every engine gives the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.verify.align import OP_D, OP_M, Traceback


@njit(cache=True, nogil=True)
def _log_likelihoods(loc_q: np.ndarray, offsets: np.ndarray, quals: np.ndarray, base_log: np.ndarray,
                     gap_log: float, cig_off: np.ndarray, ops: np.ndarray, lens: np.ndarray, n_runs: np.ndarray,
                     md_off: np.ndarray, md: np.ndarray, md_len: np.ndarray) -> np.ndarray:
    out = np.zeros(loc_q.size, dtype=np.float64)
    for k in range(loc_q.size):
        r = loc_q[k] >> 1
        rev = loc_q[k] & 1
        q0 = offsets[r]
        n = offsets[r + 1] - q0
        c0 = cig_off[k]
        s = 0.0
        for j in range(n_runs[k]):
            if ops[c0 + j] != OP_M:
                s += lens[c0 + j] * gap_log
        # MD: digits count matched M bases, a letter is a mismatched one, '^' starts deleted bases.
        m = 0  # M bases passed
        run = 0  # the CIGAR run holding M base m, the M bases and read bases before it
        run_m = 0
        run_read = 0
        deleted = False
        num = 0
        for x in range(md_off[k], md_off[k] + md_len[k]):
            c = md[x]
            if 48 <= c <= 57:
                num = num * 10 + (c - 48)
                deleted = False
                continue
            m += num
            num = 0
            if c == 94:  # '^'
                deleted = True
                continue
            if deleted:
                continue
            while ops[c0 + run] != OP_M or m >= run_m + lens[c0 + run]:
                if ops[c0 + run] == OP_M:
                    run_m += lens[c0 + run]
                    run_read += lens[c0 + run]
                elif ops[c0 + run] != OP_D:  # an insertion holds read bases, a deletion none
                    run_read += lens[c0 + run]
                run += 1
            i = run_read + (m - run_m)
            s += base_log[quals[q0 + (n - 1 - i if rev else i)]]
            m += 1
        out[k] = s
    return out


def log_likelihoods(loc_q: np.ndarray, offsets: np.ndarray, quals: np.ndarray, base_log: np.ndarray,
                    gap_log: float, aln: Traceback) -> np.ndarray:
    """Per location (query loc_q[k]: read loc_q[k] >> 1, reverse strand when odd; aligned as aln's k-th), its
    log-likelihood relative to a perfect match. offsets, quals: the reads' layout and ASCII qualities;
    base_log: per ASCII code, the log-likelihood of a mismatched base of that quality; gap_log: of a gap base."""
    return _log_likelihoods(loc_q, offsets, quals, base_log, gap_log, aln.cig_off, aln.ops, aln.lens,
                            aln.n_runs, aln.md_off, aln.md, aln.md_len)
