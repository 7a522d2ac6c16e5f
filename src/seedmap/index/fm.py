"""The FM-index (Salavert; Ferragina-Manzini): forward and reverse-text indexes over the whole reference.

Text: every sequence's codes + 1 (A=1 C=2 G=3 T=4, N=5) followed by a separator 0, so the text ends with
0 and no exact match crosses a sequence end (a reference N is a symbol of its own: the inexact search may
cross it at the cost of one edit, as the verifier does). The reverse text is reverse(text[:-1]) + [0].

Per text: the suffix array (pydivsufsort), the BWT B[i] = text[SA[i] - 1] (text[-1] = 0), and
- occ: per 64 rows, for the five symbols A C G T N, a count word (occurrences before the block) and a bit
  word (rows of the block holding the symbol): O(c, i) = count + popcount(bits below i). Row layout
  (blocks, 10): counts of the 5 symbols, then their bit words.
- C[c]: text symbols smaller than symbol c + 1 (separators included, so LF(i) = C[c] + O(c, i)).
- the sampled SA: rows whose SA value is a multiple of r, and every row whose BWT symbol is a separator
  (LF cannot walk through a separator), marked in a (blocks, 2) count/bit table; ssa holds their SA
  values in row order. A locate walks at most r - 1 LF steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydivsufsort import divsufsort

from seedmap.errors import SeedmapError
from seedmap.io.reference import Reference

DEFAULT_SA_SAMPLE = 16
SYMBOLS = 5  # A C G T N (text codes 1..5); 0 is the separator


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
    rev_mark: np.ndarray
    rev_ssa: np.ndarray

    def arrays(self) -> dict[str, np.ndarray]:
        return {"counts": self.counts, "text_starts": self.text_starts, "fwd_occ": self.fwd_occ,
                "fwd_mark": self.fwd_mark, "fwd_ssa": self.fwd_ssa, "rev_occ": self.rev_occ,
                "rev_mark": self.rev_mark, "rev_ssa": self.rev_ssa}

    @classmethod
    def from_arrays(cls, params: dict, a: dict) -> FmIndex:
        return cls(int(params["r"]), int(a["text_starts"][-1]), a["counts"], a["text_starts"], a["fwd_occ"],
                   a["fwd_mark"], a["fwd_ssa"], a["rev_occ"], a["rev_mark"], a["rev_ssa"])


ARRAYS = ("counts", "text_starts", "fwd_occ", "fwd_mark", "fwd_ssa", "rev_occ", "rev_mark", "rev_ssa")


def check_parameters(r: int) -> None:
    if not 1 <= r <= 1024:
        raise SeedmapError(f"the SA sample rate must be 1..1024, got {r}")


def make_text(ref: Reference) -> tuple[np.ndarray, np.ndarray]:
    """(text, text_starts): sequences with a separator after each; text_starts ends with the text length."""
    codes = ref.codes()
    k = len(ref.names)
    text_starts = np.asarray(ref.starts, dtype=np.int64) + np.arange(k + 1)
    text = np.zeros(ref.total + k, dtype=np.uint8)
    inside = np.ones(text.size, dtype=np.bool_)
    inside[text_starts[1:] - 1] = False
    text[inside] = codes + 1
    return text, text_starts


def suffix_array(text: np.ndarray) -> np.ndarray:
    sa = divsufsort(np.ascontiguousarray(text))
    return sa.astype(np.int64 if text.size >= 2**31 else np.int32, copy=False)


def popcount_table(bits: np.ndarray) -> np.ndarray:
    """(blocks, 2 * s) uint64 table for s bit rows of equal length: counts before each block, then words."""
    s, rows = bits.shape
    blocks = rows // 64 + 1  # O(c, rows) must be readable too
    padded = np.zeros((s, blocks * 64), dtype=np.bool_)
    padded[:, :rows] = bits
    words = np.packbits(padded, axis=1, bitorder="little").view("<u8")
    per_block = padded.reshape(s, blocks, 64).sum(axis=2, dtype=np.uint64)
    before = np.zeros((s, blocks), dtype=np.uint64)
    np.cumsum(per_block[:, :-1], axis=1, out=before[:, 1:])
    return np.ascontiguousarray(np.concatenate([before, words], axis=0).T)


def bwt_of(text: np.ndarray, sa: np.ndarray) -> np.ndarray:
    return text[sa - 1]  # sa = 0 reads text[-1], the final separator


def one_text(text: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(occ, mark, ssa) of one text."""
    sa = suffix_array(text)
    bwt = bwt_of(text, sa)
    occ = popcount_table(np.stack([bwt == c + 1 for c in range(SYMBOLS)]))
    marked = (sa % r == 0) | (bwt == 0)
    mark = popcount_table(marked[None, :])
    ssa = sa[marked]
    return occ, mark, ssa


def symbol_counts(text: np.ndarray) -> np.ndarray:
    """C table: C[c] = text symbols smaller than c + 1 (the separator included)."""
    hist = np.bincount(text, minlength=SYMBOLS + 1).astype(np.int64)
    return np.cumsum(hist)[:SYMBOLS].copy()


def build(ref: Reference, r: int = DEFAULT_SA_SAMPLE) -> FmIndex:
    check_parameters(r)
    text, text_starts = make_text(ref)
    fwd = one_text(text, r)
    rev = one_text(np.concatenate([text[-2::-1], text[-1:]]), r)
    return FmIndex(r, int(text.size), symbol_counts(text), text_starts, *fwd, *rev)
