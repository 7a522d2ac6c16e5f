"""The rows of every k-mer in one FM index, looked up instead of searched (k <= LOOKUP_MAX = 10).

A backward search's first steps are its dearest: their row range is wide, so each step's two ranks read two
cache lines of the occ table, one of them usually missed. The search scheme starts such searches everywhere
(each step's exact piece, in both indexes; each restart of the lower bounds), and every one of them spends
its first k steps on rows that the table holds: one read instead of 2k.

table[key] = (lo, hi): the rows of the string P (key: P's symbols 0..3 as base-4 digits, P[0] the most
significant) found by backward search in this index, i.e. extending leftwards from P's last symbol. Below
the 4^k rows of the k-mers come those of the shorter strings, level j < k from row level_row(k, j) on (4^k / 3
rows more, all of the walk's levels): the cut of a read (fm_pieces.cut_pieces) counts its pieces of every
length from about 8 bases on, and a lookup each spares it the first steps of a backward search from every
read position (250 Mbp human-like genome, e = 5: the count pass about 7 % faster). A table of one row
(k = 0) is none: the searches then run from the first symbol. Rows are uint32 (texts of fewer than 2^32
symbols; longer ones get none). Built from the index itself by one breadth-first walk of depth k (4^k * 4/3
extend steps: 0.2 s for k = 10 on 250 Mbp on one core, every level's strings in parallel), when a search of
the index first needs it.
"""

from __future__ import annotations

import threading
from functools import partial

import numpy as np
from numba import njit

from seedmap.filter.fm_search import extend, level_row
from seedmap.index.fm import FmIndex
from seedmap.spread import spread

LOOKUP_MAX = 10  # 4^10 rows x 8 bytes = 8 MB per index, 11 MB with the shorter levels (11: 43 MB; 12: 171 MB)
SPARSE = 3  # a k-mer occurs 4^SPARSE to 4^(SPARSE + 1) times on average (smaller genomes get a smaller k)
_lock = threading.Lock()


def lookup_k(n: int) -> int:
    """k for a text of n symbols: about 4^SPARSE occurrences per k-mer, at most LOOKUP_MAX; 0 (no table) for
    texts beyond uint32 rows."""
    n = int(n)
    if n >= 1 << 32:
        return 0
    return min(LOOKUP_MAX, max(0, (n.bit_length() - 1) // 2 - SPARSE))


def build_lookup(occ_tab: np.ndarray, counts: np.ndarray, n: int, k: int) -> np.ndarray:
    """The (level_row(k, k), 2) uint32 table of the index (occ_tab, counts, n < 2^32): the k-mers' rows, then
    every shorter level's; see the module's notes. Each level is built from the last in a second table of the
    k-mers' size (their only other working memory), and kept below the k-mers' rows."""
    size = 1 << (2 * k)
    out = np.zeros((level_row(k, k), 2), dtype=np.uint32)
    table = np.zeros((size, 2), dtype=np.uint32)
    other = np.zeros((size, 2), dtype=np.uint32)
    table[0, 1] = n
    width = 1
    for j in range(k):  # strings S of the last level (in table), then c + S: c the most significant digit
        out[level_row(k, j):level_row(k, j) + width] = table[:width]
        spread(width, partial(_children, occ_tab, counts, table, other, width), grain=4096)
        width *= 4
        table, other = other, table
    out[:size] = table
    return out


@njit(cache=True, nogil=True)
def _children(occ_tab: np.ndarray, counts: np.ndarray, table: np.ndarray, other: np.ndarray, width: int, s0: int,
              s1: int) -> None:
    """The four children of strings [s0, s1) of a level (table) in the next (other): each string writes its own."""
    for s in range(s0, s1):
        a, b = np.int64(table[s, 0]), np.int64(table[s, 1])
        for c in range(4):
            x, y = extend(occ_tab, counts, a, b, c) if a < b else (0, 0)
            other[c * width + s, 0], other[c * width + s, 1] = x, max(x, y)


def tables(ix: FmIndex) -> tuple[np.ndarray, np.ndarray]:
    """(forward, reverse-text) tables of an FM index: the stored ones (`seedmap index` stores them), else built on
    first use, and kept in its `lookup` slot (one copy for every worker and engine of a run). Stored tables of
    another k than this version's (a LOOKUP_MAX changed since) are built again. The kernels are compiled for
    writable tables, as built, and a read-only memory map is another numba type, compiled again: a stored table is
    mapped again copy-on-write on first use (writable, nothing written: the page cache's pages, no copy; the 22 MB
    copy this replaced took 5-31 ms of a run on a VM, where fresh pages are slow to touch)."""
    with _lock:
        k = lookup_k(ix.n)
        rows = level_row(k, k)
        if any(side not in ix.lookup or ix.lookup[side].shape != (rows, 2) for side in ("fwd", "rev")):
            ix.lookup["fwd"] = build_lookup(ix.fwd_occ, ix.counts, ix.n, k)
            ix.lookup["rev"] = build_lookup(ix.rev_occ, ix.counts, ix.n, k)
        for side in ("fwd", "rev"):
            if not ix.lookup[side].flags.writeable:
                ix.lookup[side] = _writable(ix.lookup[side])
        return ix.lookup["fwd"], ix.lookup["rev"]


def _writable(arr: np.ndarray) -> np.ndarray:
    """A writable array of a read-only table: its file mapped again copy-on-write, else a copy."""
    if isinstance(arr, np.memmap) and arr.filename:
        return np.memmap(arr.filename, dtype=arr.dtype, mode="c", offset=arr.offset, shape=arr.shape)
    return np.array(arr)
