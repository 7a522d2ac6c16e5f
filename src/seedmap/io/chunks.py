"""Reads as raw batches: the reader thread only decompresses and cuts the input at record boundaries;
each worker parses its own batch, so parsing runs on every core instead of holding up one thread.

Plain FASTQ files are cut by io/plain_fastq.py, with fewer copies; everything else as follows.
dnaio.read_chunks (read_paired_chunks for two files) yields blocks of whole records; numpy finds the
record starts in each block (FASTQ: every fourth line, as dnaio's FASTQ is; FASTA: '>' at a line
start), and a batch is exactly `batch_reads` records (pairs: the same records of both files, or 2 x
batch_pairs records of an interleaved file); the last batch may hold fewer. A worker splits plain FASTQ
with a nogil kernel (io/fastq_kernel.py) and hands every other batch (FASTA, CRLF, anything unusual) to
dnaio itself, so every validation and message of the ordinary readers stays.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import zip_longest

import dnaio
import numpy as np
from xopen import xopen

from seedmap.errors import SeedmapError
from seedmap.io import fastq_kernel
from seedmap.io.fastq_kernel import NEWLINE, FastqBlock, pair_reads, split_fastq
from seedmap.io.pairs import pair_error, strip_mate, unequal_files, unreadable
from seedmap.io.plain_fastq import fastq_blocks, open_plain_fastq
from seedmap.io.reads import ReadBatch, invalid_character, make_batch, open_error_message

CHUNK_BYTES = 4 << 20
GT = 62
NOT_PAIRED = "reads are not paired (the two files hold different numbers of reads)"


@dataclass
class RawBatch:
    """Whole records as text, starting with read number `first`: one block (single-end or interleaved
    pairs) or two blocks with the same number of records (mates 1 and 2)."""

    first: int
    blocks: tuple[bytes | bytearray, ...]
    paths: tuple[str, ...]
    paired: bool = False

    def parse(self) -> ReadBatch:
        label = ", ".join(self.paths)
        fast = self._fast()
        if fast is not None:
            if fast.bad is not None:
                read, ch = fast.bad
                name = fast.names[fast.name_offsets[read]:fast.name_offsets[read + 1]].tobytes().decode()
                raise invalid_character(label, name, ch)
            return ReadBatch(self.first, fast.names, fast.name_offsets, fast.codes, fast.offsets, fast.quals, True)
        try:
            files = [io.BytesIO(b) for b in self.blocks]
            if not self.paired:
                with dnaio.open(files[0]) as reader:
                    records = list(reader)
            else:
                opened = (dnaio.open(files[0], interleaved=True) if len(files) == 1
                          else dnaio.open(files[0], files[1]))
                with opened as reader:
                    records = [strip_mate(r) for pair in reader for r in pair]
        except Exception as exc:
            raise SeedmapError((pair_error(label, exc) if self.paired else "")
                               or open_error_message(self._broken(), exc)) from None
        return make_batch(records, self.first, label)

    def _broken(self) -> str:
        """The file whose block does not parse alone (the first when both do): a broken mate 2 is named."""
        for path, block in zip(self.paths, self.blocks, strict=True):
            try:
                with dnaio.open(io.BytesIO(block)) as reader:
                    for _ in reader:
                        pass
            except Exception:
                return path
        return self.paths[0]

    def _fast(self) -> FastqBlock | None:
        """Plain FASTQ parsed without the GIL (and mates paired), or None: dnaio parses this batch."""
        blocks = [split_fastq(b) for b in self.blocks]
        fast = [b for b in blocks if b is not None]
        if len(fast) < len(blocks):
            return None
        return pair_reads(fast) if self.paired else fast[0]


def record_starts(block: bytes | memoryview, fastq: bool) -> np.ndarray:
    """Offsets where the records of a block of whole records start."""
    buf = np.frombuffer(block, dtype=np.uint8)
    if fastq:
        buf.setflags(write=False)  # one kernel signature for bytes and for views of dnaio's bytearray
        return fastq_kernel.record_starts(buf) if buf.size else np.zeros(1, dtype=np.int64)
    at_line_start = np.empty(buf.size, dtype=np.bool_)
    at_line_start[0] = True
    np.equal(buf[:-1], NEWLINE, out=at_line_start[1:])
    return np.flatnonzero(at_line_start & (buf == GT))


class _Splitter:
    """Cuts parallel streams of record blocks into batches of exactly `size` records each."""

    def __init__(self, streams: int, size: int) -> None:
        self.size = size
        self.fastq: list[bool] = []
        self.pending: list[list[bytes | memoryview]] = [[] for _ in range(streams)]  # bytes: copied at a chunk end
        self.count = 0

    def _starts(self, k: int, block: bytes | memoryview) -> np.ndarray:
        if not block:
            return np.zeros(0, dtype=np.int64)
        if len(self.fastq) == k:  # the first block of this stream: its format, and any text before a '>'
            self.fastq.append(block[:1] == b"@")
            starts = record_starts(block, self.fastq[k])
            return np.concatenate([[0], starts[starts > 0]]).astype(np.int64)
        return record_starts(block, self.fastq[k])

    def add(self, chunks: tuple[memoryview, ...]) -> Iterator[tuple[bytes, ...]]:
        # Views into dnaio's buffer, which it reuses: batches are joined from them before the next chunk is
        # read, and the part of a batch still open at the end is copied. A file's last record may lack its
        # newline: that chunk is copied with one added.
        blocks = [c if len(c) == 0 or c[-1] == NEWLINE else bytes(c) + b"\n" for c in chunks]
        starts = [self._starts(k, b) for k, b in enumerate(blocks)]
        n = starts[0].size
        if any(x.size != n for x in starts):  # paired chunks hold equal numbers of records
            raise SeedmapError(NOT_PAIRED)
        bounds = [np.append(s[:n], len(b)).tolist() for s, b in zip(starts, blocks, strict=True)]
        views = [memoryview(b) for b in blocks]  # slices without copies; each batch is joined once
        i = 0
        while i < n:
            take = min(n - i, self.size - self.count)
            for k, view in enumerate(views):
                self.pending[k].append(view[bounds[k][i]:bounds[k][i + take]])
            self.count += take
            i += take
            if self.count == self.size:
                yield self.flush()
        if self.count:
            self.pending = [[b"".join(p)] for p in self.pending]

    def flush(self) -> tuple[bytes, ...]:
        out = tuple(b"".join(p) for p in self.pending)
        self.pending = [[] for _ in self.pending]
        self.count = 0
        return out


def raw_batches(path: str, batch_reads: int, workers: int = 0) -> Iterator[RawBatch]:
    """Single-end batches; `workers` threads taking them get shorter ones near the end of a plain FASTQ
    file (none for input that holds no reads). Raises SeedmapError on input that is unreadable or not
    FASTA/FASTQ from its first bytes."""
    first = 0
    try:
        for blocks, n in _record_blocks((path,), batch_reads, workers):
            yield RawBatch(first, blocks, (path,))
            first += n
    except SeedmapError:
        raise
    except Exception as exc:
        raise SeedmapError(open_error_message(path, exc)) from None


def read_batches(path: str, batch_reads: int = 100_000) -> Iterator[ReadBatch]:
    """Parsed single-end batches (for scripts; a map run lets its workers parse)."""
    return (raw.parse() for raw in raw_batches(path, batch_reads))


def raw_pair_batches(path1: str, path2: str | None, batch_pairs: int) -> Iterator[RawBatch]:
    """Batches of batch_pairs pairs from two files, or one interleaved file when path2 is None."""
    paths = (path1,) if path2 is None else (path1, path2)
    label = ", ".join(paths)
    first = 0
    try:
        for blocks, n in _record_blocks(paths, batch_pairs * (2 if path2 is None else 1)):
            yield RawBatch(first, blocks, paths, paired=True)
            first += n * len(paths)
    except SeedmapError as exc:
        # Unequal files: name the one that ends first (or breaks), not the pair.
        why = unequal_files(path1, path2) if path2 is not None and str(exc) == NOT_PAIRED else ""
        raise SeedmapError(why or f"{label}: {exc}") from None
    except Exception as exc:
        why = (pair_error(label, exc) or (unequal_files(path1, path2) if path2 is not None else "")
               or next(filter(None, (unreadable(p) for p in paths)), ""))
        raise SeedmapError(why or open_error_message(path1, exc)) from None


def _record_blocks(paths: tuple[str, ...], records: int,
                   workers: int = 0) -> Iterator[tuple[tuple[bytes | bytearray, ...], int]]:
    """(one block per file, records in each): `records` from every file, the last blocks fewer. Plain FASTQ
    files are cut by io/plain_fastq.py (tapered for `workers` threads: one file only, as two must cut at the
    same record), anything else from dnaio's chunks."""
    with ExitStack() as stack:
        plain = [fh for fh in (open_plain_fastq(p) for p in paths) if fh is not None]
        for fh in plain:
            stack.enter_context(fh)
        if len(plain) == len(paths):
            taper = workers if len(paths) == 1 else 0
            for parts in zip_longest(*(fastq_blocks(fh, records, taper) for fh in plain)):
                if None in parts or len({n for _, n in parts}) > 1:
                    raise SeedmapError(NOT_PAIRED)
                yield tuple(b for b, _ in parts), parts[0][1]
            return
        files = [stack.enter_context(xopen(p, "rb")) for p in paths]
        # xopen's files are typed BinaryIO, dnaio's chunk readers take a BufferedIOBase; both read them alike.
        chunks = (((c,) for c in dnaio.read_chunks(files[0], CHUNK_BYTES)) if len(paths) == 1  # type: ignore[arg-type]
                  else dnaio.read_paired_chunks(files[0], files[1], CHUNK_BYTES))  # type: ignore[arg-type]
        split = _Splitter(len(paths), records)
        for pair in chunks:
            for blocks in split.add(tuple(pair)):
                yield blocks, records
        if split.count:
            n = split.count
            yield split.flush(), n
