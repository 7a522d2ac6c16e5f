"""Streaming BAM output (io/bgzf.py): the BGZF stream is independent of write() chunking and thread count;
write errors reach the caller."""

from __future__ import annotations

import gzip
import io
import struct
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.io.bgzf import BLOCK_DATA, EOF_BLOCK, BgzfWriter


def stream_data(seed: int, n: int) -> bytes:
    """Compressible (repetitive text) and incompressible (random) stretches."""
    rng = np.random.default_rng(seed)
    parts, size = [], 0
    while size < n:
        k = int(rng.integers(1, 50_000))
        part = rng.bytes(k) if rng.random() < 0.4 else (b"ACGTTGCA%d\t" % k * (k // 10 + 1))[:k]
        parts.append(part)
        size += k
    return b"".join(parts)[:n]


def bgzf(data: bytes, threads: int, cuts: list[int]) -> bytes:
    out = io.BytesIO()
    w = BgzfWriter(out, threads)
    for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True):
        w.write(np.frombuffer(data[a:b], dtype=np.uint8) if a % 2 else data[a:b])
    w.close()
    return out.getvalue()


def blocks(raw: bytes) -> list[tuple[int, int]]:
    """(BSIZE + 1, ISIZE) of each block, checking the BGZF header."""
    out, at = [], 0
    while at < len(raw):
        assert raw[at:at + 4] == b"\x1f\x8b\x08\x04" and raw[at + 10:at + 16] == b"\x06\x00BC\x02\x00"
        size = struct.unpack("<H", raw[at + 16:at + 18])[0] + 1
        out.append((size, struct.unpack("<I", raw[at + size - 4:at + size])[0]))
        at += size
    assert at == len(raw)
    return out


def test_bgzf_identical_for_any_chunking_and_threads():
    data = stream_data(1, 5 * BLOCK_DATA + 1234)
    want = bgzf(data, 1, [])
    assert gzip.decompress(want) == data and want.endswith(EOF_BLOCK)
    assert blocks(want) == [(s, BLOCK_DATA) for s, _ in blocks(want)[:5]] + [(blocks(want)[5][0], 1234), (28, 0)]
    rng = np.random.default_rng(2)
    cut_sets = [[BLOCK_DATA], [1, BLOCK_DATA, BLOCK_DATA + 1, 3 * BLOCK_DATA - 1],
                sorted(rng.integers(0, len(data), 40).tolist()), list(range(0, len(data), 1000))]
    for threads in (1, 2, 3):
        for cuts in cut_sets:
            assert bgzf(data, threads, cuts) == want


def test_bgzf_empty_stream():
    assert bgzf(b"", 2, []) == EOF_BLOCK
    assert bgzf(b"", 1, [0, 0]) == EOF_BLOCK


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(0, 3 * BLOCK_DATA + 10), threads=st.integers(1, 3),
       n_cuts=st.integers(0, 12))
def test_bgzf_chunking_property(seed, n, threads, n_cuts):
    data = stream_data(seed, n)
    cuts = sorted(np.random.default_rng(seed).integers(0, n + 1, n_cuts).tolist())
    out = bgzf(data, threads, cuts)
    assert out == bgzf(data, 1, []) and gzip.decompress(out) == data
    assert all(isize == BLOCK_DATA for _, isize in blocks(out)[:n // BLOCK_DATA])


class Full(io.RawIOBase):
    def __init__(self, after: int) -> None:
        self.left = after

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:
        if self.left <= 0:
            raise OSError(28, "No space left on device")
        self.left -= 1
        return len(b)


def test_write_error_from_write():
    before = threading.active_count()
    w = BgzfWriter(Full(after=2), threads=2)
    with pytest.raises(OSError, match="No space"):
        for _ in range(40):
            w.write(stream_data(0, BLOCK_DATA))
    with pytest.raises(ValueError):
        w.write(b"x")
    w.close()
    assert threading.active_count() == before  # the pool is gone


def test_write_error_from_close():
    w = BgzfWriter(Full(after=0), threads=3)
    w.write(b"small")
    with pytest.raises(OSError, match="No space"):
        w.close()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("size", [7000, 20 * BLOCK_DATA])
@pytest.mark.parametrize("buffering", [0, -1])
def test_dev_full(size, buffering):
    """Unbuffered, fh.write fails (in write() or close()); buffered, the flush in close() fails."""
    fh = open("/dev/full", "wb", buffering=buffering)
    try:
        with pytest.raises(OSError):
            with BgzfWriter(fh, threads=2) as w:
                w.write(stream_data(4, size))
    finally:
        try:
            fh.close()
        except OSError:
            pass
