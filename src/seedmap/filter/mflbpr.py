"""mflBPR (Tran, Giraud, Varré 2011, Alg. 1.3): one pattern against h fixed-length words at once.

Wu–Manber BPR with Levenshtein distance, where a 64-bit register holds h slices of s = |pattern| bits,
one slice per word (h = 64 // s). Bit i of slice r in R_k says: the first i + 1 pattern characters
match a piece of word r ending at the current text step with at most k edits. Injections into bit 0
of each slice are masked per slice (LOW), so nothing leaks from one word into the next.

Two modes:
- free start (the paper): the pattern may occur anywhere in the word (D[0][j] = 0);
- anchored: the pattern must match a prefix of the word (D[0][j] = j). This is what the neighborhood
  filter needs: the neighborhood starts right after the exact seed, so an alignment's window part
  aligns to a prefix of it. Anchored accepts a subset of free start, still every true one.

Words are the index's packed neighborhoods (2 bits a base, first base most significant, l bases in a
uint32); the striped block mask B̂ of a step is the OR of one per-slot table entry per word.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ONE = np.uint64(1)
ZERO = np.uint64(0)


@njit(cache=True, nogil=True)
def slices(r: int) -> tuple[int, int]:
    """(slice width s, words per register h) for a pattern of r >= 1 bases."""
    return r, 64 // r


@njit(cache=True, nogil=True)
def table_buffers(r_max: int) -> tuple[np.ndarray, np.ndarray]:
    """Scratch for fill_tables, for patterns of up to r_max bases (allocate once, not per pattern)."""
    return np.empty((64, 4), dtype=np.uint64), np.empty(3 + max(r_max, 1), dtype=np.uint64)


@njit(cache=True, nogil=True)
def fill_tables(p: np.ndarray, r: int, tables: np.ndarray, masks: np.ndarray) -> None:
    """tables[slot, c]: bit (slot * s + i) set iff p[i] == c (N in the pattern never matches), and the
    register masks: [LOW, TOP, FULL, INIT_1 .. INIT_r] (INIT_k = first k bits of every slice)."""
    s, h = slices(r)
    b0 = b1 = b2 = b3 = ZERO
    for i in range(r):
        c = p[i]
        bit = ONE << np.uint64(i)
        if c == 0:
            b0 |= bit
        elif c == 1:
            b1 |= bit
        elif c == 2:
            b2 |= bit
        elif c == 3:
            b3 |= bit
    low = ZERO
    for slot in range(h):
        sh = np.uint64(slot * s)
        tables[slot, 0] = b0 << sh
        tables[slot, 1] = b1 << sh
        tables[slot, 2] = b2 << sh
        tables[slot, 3] = b3 << sh
        low |= ONE << sh
    masks[0] = low
    masks[1] = low << np.uint64(s - 1)
    masks[2] = ~ZERO if h * s == 64 else (ONE << np.uint64(h * s)) - ONE
    init = ZERO
    for k in range(1, r + 1):
        init |= low << np.uint64(k - 1)
        masks[2 + k] = init


@njit(cache=True, nogil=True)
def make_tables(p: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
    tables, masks = table_buffers(r)
    fill_tables(p, r, tables, masks)
    return tables, masks


@njit(cache=True, nogil=True, inline="always")
def _step(old: np.uint64, prev_old: np.uint64, new_prev: np.uint64, bh: np.uint64, notlow: np.uint64,
          full: np.uint64, inj_old: np.uint64, inj_prev_old: np.uint64, inj_prev_new: np.uint64) -> np.uint64:
    """R_k at this step from R_k and R_(k-1) at the last step and R_(k-1) at this one."""
    new = (((old << ONE) & notlow) | inj_old) & bh  # match
    new |= ((prev_old << ONE) & notlow) | inj_prev_old  # substitution
    new |= ((new_prev << ONE) & notlow) | inj_prev_new  # pattern base not in the word
    new |= prev_old  # word base not in the pattern
    return new & full


@njit(cache=True, nogil=True, _nrt=False)
def match_group(tables: np.ndarray, masks: np.ndarray, r: int, fe: int, words: np.ndarray, g0: int, n: int,
                l: int, anchored: bool, regs: np.ndarray) -> np.uint64:
    """Match the pattern against words[g0 : g0 + n] (n <= h, each l bases) with at most fe edits; returns
    the TOP bits of the slices that matched (slice r of the result is word g0 + r). regs: fe + 1 scratch.
    Registers R_0 .. R_2 live in locals (the usual fe <= 2); higher ones in regs."""
    s, h = slices(r)
    low, top, full = masks[0], masks[1], masks[2]
    notlow = ~low
    r0 = ZERO
    r1 = masks[2 + min(1, r)]
    r2 = masks[2 + min(2, r)]
    for k in range(3, fe + 1):
        regs[k] = masks[2 + min(k, r)]
    acc = (r0 if fe == 0 else r1 if fe == 1 else r2 if fe == 2 else regs[fe]) & top
    for j in range(1, l + 1):
        shift = 2 * (l - j)
        bh = ZERO
        for slot in range(n):
            bh |= tables[slot, (np.int64(words[g0 + slot]) >> shift) & 3]  # int64 shifts compile tighter
        # Injections into bit 0 of every slice: D[0][j] = 0 (free start) or j (anchored).
        i0 = low if (not anchored or j - 1 <= 0) else ZERO
        i1 = low if (not anchored or j - 1 <= 1) else ZERO
        i2 = low if (not anchored or j <= 0) else ZERO
        n0 = ((((r0 << ONE) & notlow) | i0) & bh) & full
        if fe == 0:
            r0 = n0
            acc |= r0 & top
            continue
        n1 = _step(r1, r0, n0, bh, notlow, full, i1, i0, i2)
        if fe == 1:
            r0, r1 = n0, n1
            acc |= r1 & top
            continue
        i3 = low if (not anchored or j - 1 <= 2) else ZERO
        i4 = low if (not anchored or j <= 1) else ZERO
        n2 = _step(r2, r1, n1, bh, notlow, full, i3, i1, i4)
        if fe >= 3:
            prev_old, new_prev = r2, n2
            for k in range(3, fe + 1):
                old = regs[k]
                new = _step(old, prev_old, new_prev, bh, notlow, full,
                            low if (not anchored or j - 1 <= k) else ZERO,
                            low if (not anchored or j - 1 <= k - 1) else ZERO,
                            low if (not anchored or j <= k - 1) else ZERO)
                prev_old, new_prev = old, new
                regs[k] = new
        r0, r1, r2 = n0, n1, n2
        acc |= (r2 if fe == 2 else regs[fe]) & top
    if n < h:
        acc &= (ONE << np.uint64(n * s)) - ONE
    return acc


def pack_words(words: np.ndarray) -> np.ndarray:
    """(n, l) base codes 0..3 -> uint32 packed big-endian, like the index's `nbs`."""
    words = np.asarray(words, dtype=np.uint64)
    out = np.zeros(words.shape[0], dtype=np.uint64)
    for i in range(words.shape[1]):
        out = (out << np.uint64(2)) | words[:, i]
    return out.astype(np.uint32)


@njit(cache=True, nogil=True)
def match_words(p: np.ndarray, words: np.ndarray, l: int, fe: int, anchored: bool) -> np.ndarray:
    """Which packed words (l bases each) hold the pattern p within fe edits (r = p.size >= 1)."""
    r = p.size
    s, h = slices(r)
    tables, masks = make_tables(p, r)
    regs = np.empty(fe + 1, dtype=np.uint64)
    out = np.zeros(words.size, dtype=np.bool_)
    for g0 in range(0, words.size, h):
        n = min(h, words.size - g0)
        acc = match_group(tables, masks, r, fe, words, g0, n, l, anchored, regs)
        for slot in range(n):
            if (acc >> np.uint64(slot * s + s - 1)) & ONE:
                out[g0 + slot] = True
    return out
