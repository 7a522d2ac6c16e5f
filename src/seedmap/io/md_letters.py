"""MD strings name the reference's IUPAC letter (R, Y, K, ...) where the alignment meets one, as samtools
calmd writes them: the traceback (every engine's, on every device) sees those bases only as masked, and
writes N.

A batch's MD strings are rewritten in place, numpy only: a reference without IUPAC codes costs nothing, one
with them a compare over the batch's MD bytes, and only the few MD strings holding an N are parsed."""

from __future__ import annotations

import numpy as np

N, CARET, ZERO = ord("N"), ord("^"), ord("0")


def restore_iupac(md: np.ndarray, md_off: np.ndarray, md_len: np.ndarray, start: np.ndarray,
                  iupac_pos: np.ndarray, iupac_code: np.ndarray) -> None:
    """Location l's MD is md[md_off[l]:md_off[l] + md_len[l]], its alignment starting at reference position
    start[l]; each N in it at a position of iupac_pos becomes that position's letter (iupac_code)."""
    if not iupac_pos.size or not md.size:
        return
    ns = np.zeros(md.size + 1, dtype=np.int64)
    np.cumsum(md == N, out=ns[1:])
    if not ns[-1]:
        return
    off = md_off[:md_len.size].astype(np.int64)
    locs = np.flatnonzero(ns[off + md_len] > ns[off])  # (the strings may lie in any order, with slack between)
    if not locs.size:
        return
    # The chosen strings' bytes, one row each: b[k] of string s[k], j[k] its index in md.
    lens = md_len[locs].astype(np.int64)
    s = np.repeat(np.arange(locs.size), lens)
    first = np.cumsum(lens) - lens
    j = off[locs][s] + (np.arange(s.size) - first[s])
    b = md[j]
    digit = (b >= ZERO) & (b <= ZERO + 9)
    letter = ~digit & (b != CARET)
    # Each digit run's value, placed on its last digit: the reference bases it skips.
    run_start = digit & ~np.concatenate(([False], digit[:-1] & (s[1:] == s[:-1])))
    run = np.cumsum(run_start) - 1
    value = np.zeros(s.size, dtype=np.int64)
    if digit.any():
        d = np.flatnonzero(digit)
        run_first = np.flatnonzero(run_start)
        k = d - run_first[run[d]]  # the digit's place in its run
        run_len = np.bincount(run[d], minlength=run_first.size)
        place = 10 ** (run_len[run[d]] - 1 - k)
        totals = np.bincount(run[d], weights=(b[d] - ZERO).astype(np.int64) * place, minlength=run_first.size)
        last = run_first + run_len - 1
        value[last] = totals.astype(np.int64)
    consumed = value + letter  # a letter (mismatch or deleted base) is one reference base
    before = np.cumsum(consumed) - consumed  # bases before this byte, over all the chosen strings
    ref = start[locs][s] + before - before[first][s]
    hit = letter & (b == N)
    where = np.searchsorted(iupac_pos, ref[hit])
    found = where < iupac_pos.size
    found[found] = iupac_pos[where[found]] == ref[hit][found]
    md[j[hit][found]] = iupac_code[where[found]]
