"""The FM-index (Salavert; Ferragina-Manzini): forward and reverse-text indexes over the whole reference.

Text: every sequence's codes + 1 (A=1 C=2 G=3 T=4, N=5) followed by a separator 0, so the text ends with
0 and no exact match crosses a sequence end (a reference N is a symbol of its own: the inexact search may
cross it at the cost of one edit, as the verifier does). The reverse text is reverse(text[:-1]) + [0].

Per text: the suffix array (pydivsufsort), the BWT B[i] = text[SA[i] - 1] (text[-1] = 0), and
- occ: per block of 128 rows, three bit planes of the block's text codes (bit k of plane k = bit k of the
  row's code; a separator is code 0; two words per plane) and the counts of the five symbols A C G T N
  before the block, as 16-bit counts from the start of its superblock (512 blocks, 65,536 rows), whose own
  row holds the absolute counts: O(c, i) = superblock count + block count + popcount(the rows below i whose
  planes spell c's code). A block is one row of OCC_WORDS = 8 words, 64 bytes, one cache line; a
  superblock's row comes before its blocks' (the rows of a superblock's region are read again and again:
  they stay cached). 0.5 B/base per text (64-row blocks with 64-bit counts took 1 B/base; one-hot bit words
  per symbol 1.25).
- C[c]: text symbols smaller than symbol c + 1 (separators included, so LF(i) = C[c] + O(c, i)).
- the sampled SA, of the forward text only (the search hands every string to locate by its forward
  rows): rows whose SA value is a multiple of r, and every row whose BWT symbol is a separator (LF cannot
  walk through a separator), marked in a (blocks, 2) count/bit table; ssa holds their SA values in row
  order. A locate walks at most r - 1 LF steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from numpy.typing import DTypeLike
from pydivsufsort import divsufsort

from seedmap.errors import SeedmapError
from seedmap.index import segments
from seedmap.index.fm_layout import (  # noqa: F401 (other modules read the layout from here)
    BLOCK_SHIFT,
    COUNTS_AT,
    LAYOUT_MARK,
    OCC_WORDS,
    PLANES,
    SUPER_SHIFT,
    SYMBOLS,
)
from seedmap.index.fm_occ import popcount
from seedmap.index.fm_order import separators_by_position
from seedmap.index.params import not_stored
from seedmap.io.reference import Reference, ref_code

# One SA sample per 8 text positions: a locate walks 3.5 LF steps on average instead of 7.5 (250 Mbp human-like
# genome, e = 5, 20,000 reads, one thread: the fill pass 3.9 s at r = 16, 2.1 at 8, 1.5 at 4) for 0.25 B/base more.
DEFAULT_SA_SAMPLE = 8


@dataclass
class FmIndex:
    sa_sample: int
    n: int  # text length
    counts: np.ndarray  # int64 (SYMBOLS,): C table, shared by both texts (same symbols)
    text_starts: np.ndarray  # int64: text position of each sequence's first base, plus n
    fwd_occ: np.ndarray
    fwd_mark: np.ndarray
    fwd_ssa: np.ndarray
    rev_occ: np.ndarray
    # The k-mer tables derived from the occ tables (filter/fm_lookup.py), kept here so that every worker's engine
    # shares one copy: stored by `seedmap index` (LOOKUPS; an index without them builds them when a search first
    # needs them, 0.3 CPU s at 250 Mbp).
    lookup: dict = field(default_factory=dict, repr=False, compare=False)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"counts": self.counts, "text_starts": self.text_starts, "fwd_occ": self.fwd_occ,
                "fwd_mark": self.fwd_mark, "fwd_ssa": self.fwd_ssa, "rev_occ": self.rev_occ,
                **{f"{side}_lookup": self.lookup[side] for side in LOOKUPS if side in self.lookup}}

    @classmethod
    def from_arrays(cls, params: FmParams, a: dict[str, np.ndarray]) -> FmIndex:
        occ = a["fwd_occ"]
        if occ.ndim != 2 or occ.shape[1] != OCC_WORDS or occ[0, OCC_WORDS - 1] != LAYOUT_MARK:
            raise SeedmapError("this FM index was built by an older seedmap (its occurrence tables have "
                               "another layout): rebuild it with seedmap index --kind fm")
        return cls(int(params.r), int(a["text_starts"][-1]), a["counts"], a["text_starts"], a["fwd_occ"],
                   a["fwd_mark"], a["fwd_ssa"], a["rev_occ"],
                   {side: a[f"{side}_lookup"] for side in LOOKUPS if f"{side}_lookup" in a})


ARRAYS = ("counts", "text_starts", "fwd_occ", "fwd_mark", "fwd_ssa", "rev_occ")  # what every FM index holds
LOOKUPS = ("fwd", "rev")  # the k-mer tables an index may hold too, as fwd_lookup and rev_lookup


@dataclass(frozen=True)
class FmParams:
    """An FM index's parameters: the SA sample rate r, the genome segments' bounds (empty: one piece), and the
    bounds of the blocks of whole sequences a build sorts one at a time (the same index, so not stored)."""

    r: int
    segments: tuple[int, ...] = ()
    blocks: tuple[int, ...] = not_stored()


def default_params() -> FmParams:
    return FmParams(DEFAULT_SA_SAMPLE)


def check_parameters(r: int) -> FmParams:
    """The parameters of an FM index with SA sample rate r (a clear error when r is out of range)."""
    if not 1 <= r <= 1024:
        raise SeedmapError(f"the SA sample rate must be 1..1024, got {r}")
    return FmParams(r)


def make_text(ref: Reference, first: int = 0, last: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(text, text_starts) of sequences first..last (default: all): each followed by a separator;
    text_starts ends with the text length."""
    last = len(ref.names) if last is None else last
    starts = np.asarray(ref.starts[first:last + 1], dtype=np.int64)
    text_starts = starts - starts[0] + np.arange(last - first + 1)
    text = np.empty(int(text_starts[-1]), dtype=np.uint8)
    _fill_text(ref.packed, ref.nmask, starts, text)
    return text, text_starts


@njit(cache=True, nogil=True)
def _fill_text(packed: np.ndarray, nmask: np.ndarray, starts: np.ndarray, text: np.ndarray) -> None:
    t = 0
    for s in range(starts.size - 1):
        for q in range(starts[s], starts[s + 1]):
            text[t] = ref_code(packed, nmask, q) + 1
            t += 1
        text[t] = 0
        t += 1


def suffix_array(text: np.ndarray, text_starts: np.ndarray | None = None) -> np.ndarray:
    """The suffix array of the text in its order (fm_order.py: separators ranked by position), 32-bit below
    2^31 symbols; text_starts: the text's sequence starts (default: found from its separators)."""
    sa = divsufsort(np.ascontiguousarray(text))
    sa = sa.astype(np.int64 if text.size >= 2**31 else np.int32, copy=False)
    if text_starts is None:
        text_starts = np.concatenate([[0], np.flatnonzero(text == 0) + 1]).astype(np.int64)
    separators_by_position(text, sa, text_starts)
    return sa


def bwt_of(text: np.ndarray, sa: np.ndarray) -> np.ndarray:
    return text[sa - 1]  # sa = 0 reads text[-1], the final separator


ROWS_PER_PASS = 1 << 22  # rows of BWT symbols made and put into the tables at a time (a multiple of 128)
MARK = np.uint8(8)  # bit 3 of a row's symbol byte: the row is marked (its SA value is sampled)


def ssa_dtype(n: int) -> np.dtype:
    """The sampled SA's type for a text of n symbols: 32-bit signed below 2^31 (the suffix array's), unsigned
    below 2^32, else 64-bit."""
    return np.dtype(np.int32 if n < 2**31 else np.uint32 if n < 2**32 else np.int64)


def one_text(text: np.ndarray, r: int,
             text_starts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(occ, mark, ssa) of one text; r = 0: no SA samples (mark and ssa empty). Peak: the text, its suffix
    array and these tables (no whole BWT is made: ROWS_PER_PASS rows of it at a time)."""
    n = text.size
    sa = suffix_array(text, text_starts)
    tables = Tables.empty(n, r, count_marked(text, r, 0) if r else 0, ssa_dtype(n))
    sym = np.empty(min(n, ROWS_PER_PASS), dtype=np.uint8)
    for lo in range(0, n, ROWS_PER_PASS):
        hi = min(n, lo + ROWS_PER_PASS)
        tables.marked += row_symbols(text, sa, lo, hi, 0, r, sym, tables.ssa[tables.marked:])
        tables.add(sym[:hi - lo])
    del sa
    return tables.occ, tables.mark, tables.ssa


@njit(cache=True, nogil=True)
def count_marked(text: np.ndarray, r: int, offset: int) -> int:
    """Rows marked in the tables of a text that starts at text position offset: SA value v + offset a multiple
    of r, or BWT symbol text[v - 1] a separator."""
    n = text.size
    m = 0
    for v in range(n):
        if (v + offset) % r == 0 or text[v - 1 if v > 0 else n - 1] == 0:
            m += 1
    return m


@njit(cache=True, nogil=True)
def row_symbols(text: np.ndarray, sa: np.ndarray, lo: int, hi: int, offset: int, r: int, sym: np.ndarray,
                ssa: np.ndarray) -> int:
    """Rows lo..hi: sym[i - lo] = B[i] = text[SA[i] - 1] (text[-1] = 0), | MARK where the row is marked
    (count_marked; r = 0: none), whose SA values + offset go to ssa in row order. Returns how many did."""
    n = text.size
    m = 0
    for i in range(lo, hi):
        v = np.int64(sa[i])
        c = text[v - 1] if v > 0 else text[n - 1]
        if r and ((v + offset) % r == 0 or c == 0):
            ssa[m] = v + offset
            m += 1
            c |= MARK
        sym[i - lo] = c
    return m


def occ_rows(n: int) -> int:
    """Rows of the occ table of a text of n symbols: its blocks (O(c, n) must be readable too) and their
    superblocks."""
    blocks = (n >> BLOCK_SHIFT) + 1
    return blocks + ((blocks - 1) >> SUPER_SHIFT) + 1


MakeArray = Callable[[tuple[int, ...], DTypeLike], np.ndarray]  # make(shape, dtype): a zeroed array


@dataclass
class Tables:
    """The occ and mark tables and the sampled SA of a text of n rows, filled pass by pass from its BWT
    symbols in row order (add); `count` and `marked` carry the symbol and mark counts between passes."""

    n: int
    occ: np.ndarray
    mark: np.ndarray
    ssa: np.ndarray
    count: np.ndarray = field(default_factory=lambda: np.zeros(2 * SYMBOLS, dtype=np.uint64))
    filled: int = 0  # rows added
    marked: int = 0  # SA values in ssa

    @classmethod
    def empty(cls, n: int, r: int, marked: int, dtype: DTypeLike, make: MakeArray = np.zeros) -> Tables:
        """make(shape, dtype): np.zeros, or a function making memory-mapped arrays (zeroed)."""
        return cls(n, make((occ_rows(n), OCC_WORDS), np.uint64), make((n // 64 + 1 if r else 0, 2), np.uint64),
                   make((marked,), dtype))

    def c_table(self) -> np.ndarray:
        """C of the rows added (all of them: the text's C table, see symbol_counts)."""
        found = self.count[:SYMBOLS].astype(np.int64)
        return np.cumsum(np.concatenate([[self.filled - found.sum()], found]))[:SYMBOLS]

    def add(self, sym: np.ndarray) -> None:
        """The next rows' symbols (| MARK), sym.size a multiple of 128 but for the last rows."""
        _fill_rows(sym, self.filled, self.n, self.occ, self.mark, self.count)
        self.filled += sym.size


@njit(cache=True, nogil=True)
def _fill_rows(sym: np.ndarray, row0: int, n: int, occ: np.ndarray, mark: np.ndarray, count: np.ndarray) -> None:
    """Rows row0 .. row0 + sym.size of the occ table (see the module's notes) and of the mark table (per 64
    rows the marked rows before them and their bit word; none when mark is empty). count: the symbols A C G
    T N before row0, then their counts at its superblock's row; the marks before row0 are read from mark."""
    at_super = count[SYMBOLS:]
    end = row0 + sym.size
    marks = mark.shape[0] > 0
    marked = np.uint64(0)
    if marks and row0 > 0:
        w = (row0 - 1) >> 6
        marked = mark[w, 0] + np.uint64(popcount(mark[w, 1]))
    for b in range(row0 >> BLOCK_SHIFT, (end >> BLOCK_SHIFT) + 1 if end == n else end >> BLOCK_SHIFT):
        row = b + (b >> SUPER_SHIFT) + 1
        if b & ((1 << SUPER_SHIFT) - 1) == 0:  # a superblock's row before its first block's
            for c in range(SYMBOLS):
                at_super[c] = count[c]
                occ[row - 1, c] = count[c]
            occ[row - 1, OCC_WORDS - 1] = LAYOUT_MARK
        for c in range(SYMBOLS):
            occ[row, COUNTS_AT + (c >> 2)] |= (count[c] - at_super[c]) << np.uint64(16 * (c & 3))
        lo = b << BLOCK_SHIFT
        for i in range(lo, min(lo + (1 << BLOCK_SHIFT), end)):
            s = sym[i - row0]
            c = s & 7
            bit = np.uint64(1) << np.uint64(i & 63)
            half = (i - lo) >> 6
            for k in range(PLANES):
                if (c >> k) & 1:
                    occ[row, 2 * k + half] |= bit
            if c > 0:
                count[c - 1] += np.uint64(1)
            if marks:
                if i & 63 == 0:
                    mark[i >> 6, 0] = marked
                if s & MARK:
                    mark[i >> 6, 1] |= bit
                    marked += np.uint64(1)
    if marks and end == n and n & 63 == 0:  # the mark block of row n (rank is read there too)
        mark[n >> 6, 0] = marked


def symbol_counts(text: np.ndarray) -> np.ndarray:
    """C table: C[c] = text symbols smaller than c + 1 (the separator included)."""
    return np.cumsum(histogram(text))[:SYMBOLS].copy()


@njit(cache=True, nogil=True)
def histogram(text: np.ndarray) -> np.ndarray:
    hist = np.zeros(SYMBOLS + 1, dtype=np.int64)
    for c in text:
        hist[c] += 1
    return hist


@njit(cache=True, nogil=True)
def reverse_body(text: np.ndarray) -> None:
    """text[:-1] reversed in place: the forward text becomes the reverse text (both end with a separator)."""
    i, j = 0, text.size - 2
    while i < j:
        text[i], text[j] = text[j], text[i]
        i += 1
        j -= 1


def build(ref: Reference, r: int = DEFAULT_SA_SAMPLE, first: int = 0, last: int | None = None) -> FmIndex:
    """The index of sequences first..last (default: all; a range is a genome segment). Peak: the text
    (1 B/base), one suffix array (4 B/base; 8 above 2^31) and the tables of both texts."""
    check_parameters(r)
    text, text_starts = make_text(ref, first, last)
    counts = symbol_counts(text)  # the reverse text has the same symbols
    fwd = one_text(text, r, text_starts)
    reverse_body(text)
    rev_occ = one_text(text, 0)[0]
    return FmIndex(r, int(text.size), counts, text_starts, *fwd, rev_occ)


# ---------------------------------------------------------------- genome segments
# A segment is a run of whole sequences (an FM search does not cross a sequence end): its text stays below
# 2^31 symbols, so its suffix array is 32-bit, and its build fits the memory limit next to the reference.
MAX_SEGMENT_TEXT = 2**31 - 1
# B/base beyond the arrays below (genome_scale.py measured 9.9 B/base per segment at r = 16 with reverse SA
# samples, which the build does not make: an upper bound)
MEASURED_EXTRA = 1.5


def build_bytes_per_base(r: int, sa_bytes: int = 4) -> float:
    """A build holds the text, its suffix array and the forward and reverse occ tables (OCC_WORDS words per
    128 rows), the forward mark table (2 words per 64 rows) and SA samples (one SA value per r rows)."""
    return 1 + sa_bytes + 2 * OCC_WORDS * 8 / 128 + 2 * 8 / 64 + sa_bytes / r + MEASURED_EXTRA


def fits_in_one_piece(ref: Reference, r: int, max_memory: int) -> bool:
    """A build of the whole reference in one piece (a 32-bit suffix array) fits max_memory."""
    fixed = segments.FIXED_BUILD_BYTES + ref.packed.nbytes + ref.nmask.nbytes
    n = ref.total + len(ref.names)
    return n <= MAX_SEGMENT_TEXT and fixed + n * build_bytes_per_base(r) <= max_memory


def segment_bounds(ref: Reference, r: int, max_memory: int = 0, segment_bases: int = 0) -> list[int]:
    """Sequence starts (genome positions) cutting the reference into runs of whole sequences, each with a
    32-bit suffix array and a build within max_memory (or of about segment_bases bases): [0, total] when
    one does. A sequence larger than that is a segment of its own. Runs are about equal in size."""
    if not segment_bases:
        fixed = segments.FIXED_BUILD_BYTES + ref.packed.nbytes + ref.nmask.nbytes
        segment_bases = segments.segment_size(max_memory, fixed, build_bytes_per_base(r), "the reference alone takes")
    cap = min(segment_bases, MAX_SEGMENT_TEXT - len(ref.names))
    starts = np.asarray(ref.starts, dtype=np.int64)
    target = ref.total / max(1, -(-ref.total // cap))  # equal parts, if the sequences allowed it
    bounds = [0]
    for s in range(1, len(ref.names)):
        size, next_size = starts[s] - bounds[-1], starts[s + 1] - bounds[-1]
        if 0 < size < ref.total - bounds[-1] and (next_size > cap or size >= target):  # no empty segment last
            bounds.append(int(starts[s]))
    bounds.append(int(ref.total))
    return bounds


def sequence_range(ref_starts: np.ndarray, first: int, last: int) -> tuple[int, int]:
    """The sequences of the segment whose bounds (sequence starts) are first and last."""
    k = ref_starts.size - 1
    a = int(np.searchsorted(ref_starts[:k], first))
    return a, (k if last >= ref_starts[k] else int(np.searchsorted(ref_starts[:k], last)))


def segmented_build(ref: Reference, r: int, bounds: list[int]) -> segments.SegmentedBuild:
    """Each segment's index built when the store writes it."""
    return segments.SegmentedBuild(bounds, lambda first, last: build(ref, r, *sequence_range(ref.starts, first, last)),
                                   lambda part: (part.n, part.fwd_ssa.size))


def describe(ix: FmIndex | segments.SegmentedBuild, params: FmParams) -> str:
    made = ix.made if isinstance(ix, segments.SegmentedBuild) else [(ix.n, ix.fwd_ssa.size)]
    return (f"r={params.r}: {sum(m[0] for m in made)} text symbols, {sum(m[1] for m in made)} SA samples"
            + (f", in {len(made)} genome segments" if len(made) > 1 else ""))


def stored_arrays(params: FmParams) -> tuple[str, ...]:
    return segments.stored_arrays(params.segments, ARRAYS)


def from_arrays(params: FmParams, arrays: dict[str, np.ndarray]) -> FmIndex | segments.SegmentedIndex:
    if params.segments:
        return segments.SegmentedIndex.from_arrays(params, arrays, FmIndex.from_arrays)
    return FmIndex.from_arrays(params, arrays)
