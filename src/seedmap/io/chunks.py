"""Reads as raw batches: the reader thread only decompresses and cuts the input at record boundaries;
each worker parses its own batch, so parsing runs on every core instead of holding up one thread.

dnaio.read_chunks yields blocks of whole records; numpy finds the record starts in each block (FASTQ:
every fourth line, as dnaio's FASTQ is; FASTA: '>' at a line start), and a batch is exactly
`batch_reads` records (the last one fewer). A worker parses its batch with dnaio itself, so every
validation and message of the ordinary reader stays.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass

import dnaio
import numpy as np
from xopen import xopen

from seedmap.errors import SeedmapError
from seedmap.io.reads import ReadBatch, make_batch, open_error_message

CHUNK_BYTES = 4 << 20
NEWLINE, GT = 10, 62


@dataclass
class RawBatch:
    """`count` whole records of `path` as text, starting with read number `first`."""

    first: int
    count: int
    data: bytes
    path: str

    def parse(self) -> ReadBatch:
        try:
            with dnaio.open(io.BytesIO(self.data)) as reader:
                records = list(reader)
        except Exception as exc:
            raise SeedmapError(open_error_message(self.path, exc)) from None
        return make_batch(records, self.first, self.path)


def record_starts(block: bytes, fastq: bool) -> np.ndarray:
    """Offsets where the records of a block of whole records start."""
    buf = np.frombuffer(block, dtype=np.uint8)
    if fastq:
        ends = np.flatnonzero(buf == NEWLINE)[3::4] + 1  # a FASTQ record is four lines
        return np.concatenate([[0], ends[ends < buf.size]]).astype(np.int64)
    at_line_start = np.empty(buf.size, dtype=np.bool_)
    at_line_start[0] = True
    np.equal(buf[:-1], NEWLINE, out=at_line_start[1:])
    return np.flatnonzero(at_line_start & (buf == GT))


def raw_batches(path: str, batch_reads: int) -> Iterator[RawBatch]:
    """Batches of exactly batch_reads records (the last one fewer). Raises SeedmapError on input that is
    unreadable or not FASTA/FASTQ from the first bytes, or holds no reads."""
    first = 0
    pending: list[memoryview] = []
    n_pending = 0
    try:
        with xopen(path, "rb") as fh:
            head, fastq = True, False
            for chunk in dnaio.read_chunks(fh, CHUNK_BYTES):
                block = bytes(chunk)  # the chunk's buffer is reused by the next iteration
                if not block.endswith(b"\n"):
                    block += b"\n"  # the last record of a file without a final newline
                if head:
                    fastq = block[:1] == b"@"
                starts = record_starts(block, fastq)
                if head and (starts.size == 0 or starts[0] != 0):  # text before the first '>' (comments)
                    starts = np.concatenate([[0], starts[starts > 0]])
                head = False
                bounds = np.append(starts, len(block)).tolist()
                view = memoryview(block)  # slices without copies; join copies each batch once
                i, n = 0, starts.size
                while i < n:
                    take = min(n - i, batch_reads - n_pending)
                    pending.append(view[bounds[i]:bounds[i + take]])
                    n_pending += take
                    i += take
                    if n_pending == batch_reads:
                        yield RawBatch(first, n_pending, b"".join(pending), path)
                        first += n_pending
                        pending, n_pending = [], 0
    except SeedmapError:
        raise
    except Exception as exc:
        raise SeedmapError(open_error_message(path, exc)) from None
    if n_pending:
        yield RawBatch(first, n_pending, b"".join(pending), path)
        first += n_pending
    if first == 0:
        raise SeedmapError(f"{path}: no reads found")
