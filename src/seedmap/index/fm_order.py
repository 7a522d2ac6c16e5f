"""The FM index's suffix order: lexicographic, with separators (code 0) ranked by their text position.

divsufsort compares two suffixes that are equal up to and including a separator by what follows it (the next
sequence); this order ranks them by the separator's position instead, i.e. by their own (the suffixes are
equal up to the separator, so the earlier one reaches it first). That is the order of a text cut into blocks
of whole sequences: a suffix never needs to look past its block's last separator, so each block is sorted on
its own and their BWTs merge into exactly the one-piece index (fm_blocks.py). The search cannot tell the two
orders apart (no pattern holds a separator, and LF never walks from a separator row), so only the bytes differ.

The suffixes whose rank changes are those of common sequence tails: the last d bases of sequence s, followed
by its separator, equal to the last d bases of another sequence (d = 0: every separator). They are few (real
assemblies: the N runs at chromosome ends), found by sorting the sequences by their reversed text, and they lie
in runs of adjacent suffix array rows, each run re-sorted by position.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def separators_by_position(text: np.ndarray, sa: np.ndarray, text_starts: np.ndarray) -> None:
    """Reorder divsufsort's suffix array sa of text (sequences starting at text_starts, each followed by a
    separator; text_starts ends with the text length) into this order, in place."""
    ends = np.asarray(text_starts[1:], dtype=np.int64) - 1  # the separators
    starts = np.asarray(text_starts[:-1], dtype=np.int64)
    order = _by_reversed_text(text, starts, ends)
    shared = _shared_tails(text, starts, ends, order)  # shared[k]: common tail of order[k] and order[k + 1]
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    tail = np.zeros(order.size, dtype=np.int64)  # per sequence: its longest tail shared with another
    if order.size > 1:
        tail[order[:-1]] = shared
        tail[order[1:]] = np.maximum(tail[order[1:]], shared)
    _reorder_runs(sa, starts, ends, tail, rank, shared)


@njit(cache=True, nogil=True)
def _reversed_less(text: np.ndarray, starts: np.ndarray, ends: np.ndarray, a: int, b: int) -> bool:
    """Sequence a's text read backwards is smaller than b's (a prefix is smaller)."""
    i, j = ends[a] - 1, ends[b] - 1
    while i >= starts[a] and j >= starts[b]:
        if text[i] != text[j]:
            return text[i] < text[j]
        i -= 1
        j -= 1
    return i < starts[a] and j >= starts[b]


@njit(cache=True, nogil=True)
def _by_reversed_text(text: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The sequences sorted by their reversed text (merge sort: stable), so that sequences sharing their last
    d bases are adjacent."""
    k = starts.size
    order = np.arange(k)
    other = np.empty(k, dtype=np.int64)
    width = 1
    while width < k:
        for lo in range(0, k, 2 * width):
            mid, hi = min(lo + width, k), min(lo + 2 * width, k)
            i, j, o = lo, mid, lo
            while i < mid or j < hi:
                if j >= hi or (i < mid and not _reversed_less(text, starts, ends, order[j], order[i])):
                    other[o] = order[i]
                    i += 1
                else:
                    other[o] = order[j]
                    j += 1
                o += 1
        order, other = other, order
        width *= 2
    return order


@njit(cache=True, nogil=True)
def _shared_tails(text: np.ndarray, starts: np.ndarray, ends: np.ndarray, order: np.ndarray) -> np.ndarray:
    shared = np.zeros(max(order.size - 1, 0), dtype=np.int64)
    for k in range(order.size - 1):
        a, b = order[k], order[k + 1]
        d = 0
        while ends[a] - 1 - d >= starts[a] and ends[b] - 1 - d >= starts[b] and \
                text[ends[a] - 1 - d] == text[ends[b] - 1 - d]:
            d += 1
        shared[k] = d
    return shared


@njit(cache=True, nogil=True)
def _common_tail(rank: np.ndarray, shared: np.ndarray, a: int, b: int, d: int) -> bool:
    """Sequences a and b end in the same d bases: every pair between them in reversed-text order does."""
    lo, hi = min(rank[a], rank[b]), max(rank[a], rank[b])
    for k in range(lo, hi):
        if shared[k] < d:
            return False
    return True


@njit(cache=True, nogil=True)
def _reorder_runs(sa: np.ndarray, starts: np.ndarray, ends: np.ndarray, tail: np.ndarray, rank: np.ndarray,
                  shared: np.ndarray) -> None:
    """Find the rows of tail suffixes (the last tail[s] bases of sequence s and its separator), then sort by
    position each run of adjacent rows whose suffixes are equal up to their separator."""
    n = sa.size
    words = np.zeros(n // 64 + 1, dtype=np.uint64)
    total = 0
    for s in range(starts.size):
        for p in range(ends[s] - tail[s], ends[s] + 1):
            words[p >> 6] |= np.uint64(1) << np.uint64(p & 63)
        total += tail[s] + 1
    rows = np.empty(total, dtype=np.int64)
    m = 0
    for i in range(n):
        v = sa[i]
        if words[v >> 6] >> np.uint64(v & 63) & np.uint64(1):
            rows[m] = i
            m += 1
    seq = np.searchsorted(ends, np.asarray(sa)[rows])  # each tail suffix's sequence (its separator: the next end)
    run = 0
    for j in range(1, total + 1):
        if j < total:
            i, s, t = rows[j], seq[j], seq[j - 1]
            d = ends[s] - sa[i]
            same = i == rows[j - 1] + 1 and d == ends[t] - sa[rows[j - 1]]
            if same and (d == 0 or _common_tail(rank, shared, s, t, d)):
                continue
        if j - run > 1:
            a, b = rows[run], rows[j - 1] + 1
            by_position = np.sort(sa[a:b])
            for i in range(b - a):  # (a loop: numba compiles a slice assignment slowly)
                sa[a + i] = by_position[i]
        run = j
