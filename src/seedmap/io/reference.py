"""Reference genomes: FASTA (plain or gz) -> one concatenated code array, 2-bit packed with an N mask."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import dnaio
import numpy as np
from numba import njit

from seedmap.errors import SeedmapError
from seedmap.io.alphabet import INVALID, N_CODE, encode
from seedmap.io.reads import open_error_message

log = logging.getLogger("seedmap")


@dataclass
class Reference:
    """All sequences concatenated; sequence i covers [starts[i], starts[i] + lengths[i])."""

    names: list[str]
    starts: np.ndarray  # int64, one per sequence, plus the total length at the end
    packed: np.ndarray  # uint8, 4 bases per byte, base i at bits 2*(i%4)
    nmask: np.ndarray  # uint8, 1 bit per base (little bit order): 1 = N / IUPAC, never matches

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.starts)

    @property
    def total(self) -> int:
        return int(self.starts[-1])

    def codes(self) -> np.ndarray:
        """The whole reference as one code per base (N = 4)."""
        return unpack_codes(self.packed, self.nmask, 0, self.total)

    @classmethod
    def from_codes(cls, names: list[str], codes_per_seq: list[np.ndarray]) -> Reference:
        lengths = np.array([c.size for c in codes_per_seq], dtype=np.int64)
        starts = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        codes = np.concatenate(codes_per_seq) if codes_per_seq else np.zeros(0, np.uint8)
        packed, nmask = pack_codes(codes)
        return cls(list(names), starts, packed, nmask)


def pack_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2-bit packing (N stored as A) plus a bit mask of N positions."""
    n = codes.size
    padded = np.zeros((n + 3) // 4 * 4, dtype=np.uint8)
    padded[:n] = np.where(codes == N_CODE, 0, codes)
    quads = padded.reshape(-1, 4)
    packed = (quads[:, 0] | (quads[:, 1] << 2) | (quads[:, 2] << 4) | (quads[:, 3] << 6)).astype(np.uint8)
    nmask = np.packbits(codes == N_CODE, bitorder="little")
    return packed, nmask


@njit(cache=True, nogil=True)
def ref_code(packed: np.ndarray, nmask: np.ndarray, i: int) -> int:
    """Code of reference base i (4 for N)."""
    if (nmask[i >> 3] >> (i & 7)) & 1:
        return 4
    return (packed[i >> 2] >> ((i & 3) << 1)) & 3


@njit(cache=True, nogil=True)
def unpack_into(packed: np.ndarray, nmask: np.ndarray, start: int, out: np.ndarray) -> None:
    for k in range(out.size):
        out[k] = ref_code(packed, nmask, start + k)


def unpack_codes(packed: np.ndarray, nmask: np.ndarray, start: int, end: int) -> np.ndarray:
    out = np.empty(end - start, dtype=np.uint8)
    unpack_into(packed, nmask, start, out)
    return out


def read_fasta(path: str | Path) -> Reference:
    """Parse a nucleotide FASTA. Empty records are skipped with a warning; bad input raises SeedmapError."""
    path = str(path)
    names: list[str] = []
    seqs: list[np.ndarray] = []
    seen: set[str] = set()
    try:
        with dnaio.open(path, mode="r") as reader:
            if not isinstance(reader, dnaio.FastaReader):
                raise SeedmapError(f"{path}: the reference must be FASTA, not FASTQ")
            for record in reader:
                name = record.id
                if not record.sequence:
                    log.warning("%s: skipping empty sequence %r", path, name)
                    continue
                if name in seen:
                    raise SeedmapError(f"{path}: sequence name {name!r} occurs twice")
                seen.add(name)
                codes = _encode_sequence(record.sequence, name, path)
                names.append(name)
                seqs.append(codes)
    except SeedmapError:
        raise
    except Exception as exc:  # dnaio/xopen raise many kinds: format, gzip, OS errors
        raise SeedmapError(open_error_message(path, exc)) from None
    if not seqs:
        raise SeedmapError(f"{path}: no sequences found in the reference")
    return Reference.from_codes(names, seqs)


def _encode_sequence(sequence: str, name: str, path: str) -> np.ndarray:
    try:
        codes = encode(sequence.encode("ascii"))
    except UnicodeEncodeError:
        raise SeedmapError(f"{path}: sequence {name!r} has non-ASCII characters") from None
    bad = np.flatnonzero(codes == INVALID)
    if bad.size:
        ch = sequence[int(bad[0])]
        raise SeedmapError(f"{path}: sequence {name!r} has an invalid character {ch!r} at {int(bad[0]) + 1}")
    return codes
