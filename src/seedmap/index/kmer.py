"""The k-mer hash index of mrFAST (Nouri's host mapper): a CSR table over all 4^k k-mers.

offsets[c] .. offsets[c + 1] are the positions (ascending) of k-mer code c (big-endian 2-bit). Words
follow index/words.py: positions whose base is N are skipped, and N or the sequence end inside a k-mer
reads as A, so a query shorter than k is one contiguous range of codes and stays complete.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seedmap.errors import SeedmapError
from seedmap.index.words import sorted_words
from seedmap.io.reference import Reference

DEFAULT_K = 12
MAX_K = 14


@dataclass
class KmerIndex:
    k: int
    offsets: np.ndarray  # uint32 (int64 for > 4 G positions), 4^k + 1
    pos: np.ndarray  # uint32 or int64 reference positions

    def arrays(self) -> dict[str, np.ndarray]:
        return {"offsets": self.offsets, "pos": self.pos}


def check_parameters(k: int) -> None:
    if not 1 <= k <= MAX_K:
        raise SeedmapError(f"k-mer length must be 1..{MAX_K}, got {k}")


def build(ref: Reference, k: int = DEFAULT_K) -> KmerIndex:
    check_parameters(k)
    keys, pos = sorted_words(ref, k)
    counts = np.bincount(keys.astype(np.int64), minlength=4**k)
    dtype = np.uint32 if pos.size < 2**32 else np.int64
    offsets = np.zeros(4**k + 1, dtype=dtype)
    np.cumsum(counts, out=offsets[1:])
    return KmerIndex(k, offsets, pos)
