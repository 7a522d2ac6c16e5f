"""Reads packed in flat arrays (ReadBatch), both strands, one-line messages for unreadable input.

io/chunks.py streams them from FASTA/FASTQ files, plain or gz.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from numba import njit

from seedmap.errors import SeedmapError
from seedmap.io.alphabet import INVALID, encode
from seedmap.io.columns import Reads


@dataclass
class ReadBatch:
    """A batch of reads packed in flat arrays; read i is codes[offsets[i]:offsets[i+1]]."""

    first: int  # number of reads before this batch in the input
    names: np.ndarray  # uint8, concatenated names (first word of the header)
    name_offsets: np.ndarray  # int64, n + 1
    codes: np.ndarray  # uint8 codes 0-4
    offsets: np.ndarray  # int64, n + 1
    quals: np.ndarray  # uint8 ASCII qualities, same layout as codes; empty when the input is FASTA
    has_quals: bool

    @property
    def size(self) -> int:
        return self.offsets.size - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def columns(self) -> Reads:
        """The arrays the SAM and BAM formatters read."""
        return Reads(self.names, self.name_offsets, self.codes, self.offsets, self.quals, self.has_quals)

    def queries(self) -> tuple[np.ndarray, np.ndarray]:
        """Query 2i is read i, query 2i + 1 its reverse complement: codes and offsets (2n + 1)."""
        qoff = np.zeros(2 * self.size + 1, dtype=np.int64)
        np.cumsum(np.repeat(self.lengths, 2), out=qoff[1:])
        qcodes = np.empty(2 * self.codes.size, dtype=np.uint8)
        _fill_queries(self.codes, self.offsets, qoff, qcodes)
        return qcodes, qoff


@njit(cache=True, nogil=True, _nrt=False)
def _fill_queries(codes: np.ndarray, offsets: np.ndarray, qoff: np.ndarray, qcodes: np.ndarray) -> None:
    for r in range(offsets.size - 1):
        a, b = offsets[r], offsets[r + 1]
        f, rv = qoff[2 * r], qoff[2 * r + 1]
        for k in range(b - a):
            qcodes[f + k] = codes[a + k]
            c = codes[b - 1 - k]
            qcodes[rv + k] = 3 - c if c < 4 else 4


def open_error_message(path: str, exc: BaseException) -> str:
    """One line that says what is wrong with an input file."""
    if isinstance(exc, FileNotFoundError) or not os.path.exists(path):
        return f"{path}: no such file"
    if isinstance(exc, IsADirectoryError) or os.path.isdir(path):
        return f"{path}: is a directory"
    if isinstance(exc, PermissionError):
        return f"{path}: permission denied"
    if isinstance(exc, EOFError):
        return f"{path}: the file is truncated (compressed stream ended early)"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"{path}: not valid FASTA/FASTQ ({text})"


def _pack(strings: list[str]) -> tuple[bytes, np.ndarray]:
    lengths = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return "".join(strings).encode("ascii", errors="replace"), offsets


def make_batch(records: list, first: int = 0, path: str = "<reads>") -> ReadBatch:
    """Pack dnaio records (name, sequence, qualities or None) into a batch."""
    has_quals = records[0].qualities is not None
    return batch_of([r.id for r in records], [r.sequence for r in records],
                    [r.qualities for r in records] if has_quals else None, first, path)


def batch_of(names: list[str], sequences: list[str], qualities: list[str] | None = None, first: int = 0,
             path: str = "<reads>") -> ReadBatch:
    """Pack reads given as strings into a batch: names, sequences and (None: none) ASCII qualities."""
    names_bytes, name_offsets = _pack(names)
    seq_bytes, offsets = _pack(sequences)
    codes = encode(seq_bytes)
    bad = np.flatnonzero(codes == INVALID)
    if bad.size:
        i = int(np.searchsorted(offsets, bad[0], side="right")) - 1
        raise invalid_character(path, names[i], chr(seq_bytes[int(bad[0])]))
    if qualities is not None:
        quals = np.frombuffer("".join(qualities).encode("ascii", "replace"), np.uint8)
        if quals.size != codes.size:
            raise SeedmapError(f"{path}: the qualities are not as long as the sequences")
    else:
        quals = np.zeros(0, dtype=np.uint8)
    return ReadBatch(first, np.frombuffer(names_bytes, np.uint8), name_offsets, codes, offsets, quals,
                     qualities is not None)


def invalid_character(path: str, read: str, ch: str) -> SeedmapError:
    return SeedmapError(f"{path}: read {read!r} has an invalid character {ch!r}")
