"""A BGZF writer (the block-gzip container of BAM) that compresses blocks on a thread pool.

The uncompressed stream is cut at fixed offsets, every 0xff00 bytes as htslib does, whatever sizes
write() is called with, and the blocks are written in order: the file is byte-identical for any chunking
and any number of threads (for one deflate library: zlib-ng when importable, else zlib; both release the
GIL while compressing). At most 4 * threads blocks are in flight, so memory stays bounded.
"""

from __future__ import annotations

import struct
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Protocol

import numpy as np

try:
    from zlib_ng import zlib_ng as _zlib
except ImportError:  # pragma: no cover - zlib-ng comes with xopen
    import zlib as _zlib  # type: ignore[no-redef]  # zlib_ng's interface is zlib's

BLOCK_DATA = 0xFF00  # uncompressed bytes per block (htslib's BGZF_BLOCK_SIZE)
MAX_BLOCK = 0x10000  # a whole block, header to footer, is at most 64 KiB (BSIZE is 16 bits)
HEADER = struct.Struct("<4BI2BH2BHH")  # gzip header with FEXTRA: one 'BC' subfield holding BSIZE
FOOTER = struct.Struct("<II")  # CRC32, ISIZE
EOF_BLOCK = bytes.fromhex("1f8b08040000000000ff0600424302001b0003000000000000000000")
DEFLATE_NAME = _zlib.__name__


class Writable(Protocol):
    """What BgzfWriter writes its blocks to: a binary file, or io/direct.py's DirectFile."""

    def write(self, data: bytes, /) -> object: ...

    def flush(self) -> None: ...


def compress_block(data: bytes, level: int) -> bytes:
    """One BGZF block holding `data` (at most BLOCK_DATA bytes): raw deflate in a gzip member."""
    c = _zlib.compressobj(level, _zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    if HEADER.size + len(body) + FOOTER.size > MAX_BLOCK:  # incompressible: store it (as htslib does)
        c = _zlib.compressobj(0, _zlib.DEFLATED, -15)
        body = c.compress(data) + c.flush()
    size = HEADER.size + len(body) + FOOTER.size
    head = HEADER.pack(31, 139, 8, 4, 0, 0, 255, 6, 66, 67, 2, size - 1)
    return head + body + FOOTER.pack(_zlib.crc32(data) & 0xFFFFFFFF, len(data))


class BgzfWriter:
    """Writes BGZF to the binary file `fh` (which the caller opens and closes). Errors of fh.write (OSError)
    and of compression are raised from write() or close(). Usable as a context manager: close() on success;
    on an exception the pending blocks are dropped and no EOF block is written."""

    def __init__(self, fh: Writable, threads: int, level: int = 6) -> None:
        self.fh = fh
        self.level = level
        self.threads = max(1, int(threads))
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="bgzf")
        self._pending: deque[Future] = deque()
        self._max_pending = 4 * self.threads
        self._buf = bytearray()  # the start of the next block
        self._closed = False

    def write(self, data: bytes | bytearray | memoryview | np.ndarray) -> None:
        """Append `data` (bytes-like, or a contiguous array, taken as its raw bytes) to the stream."""
        if self._closed:
            raise ValueError("write to a closed BgzfWriter")
        # An array's own memoryview: numpy types ndarray as a buffer only for Python 3.12 and later.
        view = (data.data if isinstance(data, np.ndarray) else memoryview(data)).cast("B")
        at = 0
        if self._buf:
            at = min(BLOCK_DATA - len(self._buf), len(view))
            self._buf += view[:at]
            if len(self._buf) < BLOCK_DATA:
                return
            self._submit(bytes(self._buf))
            self._buf.clear()
        while len(view) - at >= BLOCK_DATA:
            self._submit(bytes(view[at:at + BLOCK_DATA]))  # a copy: the caller may reuse its buffer
            at += BLOCK_DATA
        self._buf += view[at:]

    def close(self) -> None:
        """Compress the last partial block, write every block in order, the EOF marker block, and flush fh."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._buf:
                self._submit(bytes(self._buf))
                self._buf.clear()
            while self._pending:
                self.fh.write(self._pending.popleft().result())
            self.fh.write(EOF_BLOCK)
            self.fh.flush()
        finally:
            self._shutdown()

    def abort(self) -> None:
        """Drop what is not written yet (no EOF block); the file is left incomplete."""
        self._closed = True
        self._shutdown()

    def __enter__(self) -> BgzfWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _submit(self, block: bytes) -> None:
        try:
            while len(self._pending) >= self._max_pending or (self._pending and self._pending[0].done()):
                self.fh.write(self._pending.popleft().result())
        except BaseException:
            self.abort()
            raise
        self._pending.append(self._pool.submit(compress_block, block, self.level))

    def _shutdown(self) -> None:
        for f in self._pending:
            f.cancel()
        self._pending.clear()
        self._pool.shutdown(wait=True)
