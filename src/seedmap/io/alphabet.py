"""Nucleotide codes shared by the reference and the reads: A=0 C=1 G=2 T=3, N (and IUPAC) = 4."""

import numpy as np

N_CODE = 4
INVALID = 255

# Byte -> code. IUPAC ambiguity letters and '.' become N (they never match); anything else is invalid.
ENCODE = np.full(256, INVALID, dtype=np.uint8)
for _letters, _code in (("Aa", 0), ("Cc", 1), ("Gg", 2), ("TtUu", 3), ("NnRrYyKkMmSsWwBbDdHhVv.", N_CODE)):
    for _ch in _letters:
        ENCODE[ord(_ch)] = _code

DECODE = np.frombuffer(b"ACGTN", dtype=np.uint8)
COMPLEMENT = np.array([3, 2, 1, 0, 4], dtype=np.uint8)


def encode(text: bytes) -> np.ndarray:
    """Codes of an ASCII sequence; INVALID marks bytes that are not nucleotides."""
    return ENCODE[np.frombuffer(text, dtype=np.uint8)]

