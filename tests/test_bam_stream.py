"""Streaming BAM output (io/bam_encode.py, io/bgzf.py): the encoded records are, record for record and byte
for byte, what samtools makes of the SAM text that format_records writes for the same arrays; the BGZF
stream is independent of write() chunking and thread count; write errors reach the caller."""

from __future__ import annotations

import gzip
import io
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dnaio
import numpy as np
import pysam
import pytest
from helpers import MODEL, batch_of, decode, random_genome, repetitive_genome, sample_reads, simulate_pairs
from hypothesis import given, settings
from hypothesis import strategies as st

import seedmap.pipeline.stages
from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.errors import SeedmapError
from seedmap.index import neighborhood
from seedmap.io.bam_encode import _tag_int, bam_header, encode_records
from seedmap.io.bgzf import BLOCK_DATA, EOF_BLOCK, BgzfWriter
from seedmap.io.columns import Alignments, Records, RefNames
from seedmap.io.read_group import parse_read_group
from seedmap.io.reads import make_batch
from seedmap.io.reference import Reference
from seedmap.io.sam import format_records, header
from seedmap.pipeline import MapOptions, PairOptions, SamFormatter, map_batch
from seedmap.pipeline.pair_stages import map_pair_batch

RG = parse_read_group(r"@RG\tID:lane1\tSM:s1")


def captured(monkeypatch: pytest.MonkeyPatch, module: object, run: object) -> tuple:
    """The arguments the pipeline passes to format_records (the pipeline itself is not changed)."""
    calls = []

    def spy(*args: object) -> np.ndarray:
        calls.append(args)
        return format_records(*args)

    monkeypatch.setattr(module, "format_records", spy)
    run()
    assert len(calls) == 1
    return calls[0]


def genome(rng: np.random.Generator) -> Reference:
    seqs = repetitive_genome(rng) + [random_genome(rng, 2000)]
    return Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)


def engine_of(ref: Reference) -> NeighborhoodEngine:
    return NeighborhoodEngine(neighborhood.build(ref, 6, 8), ref.starts)


def single_args(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator, quals: bool,
                secondary_seq: bool = False) -> tuple[Reference, tuple]:
    ref = genome(rng)
    seqs = [ref.codes()[a:b] for a, b in zip(ref.starts[:-1], ref.starts[1:], strict=True)]
    reads = sample_reads(rng, seqs, 120, (30, 70), 3)
    batch = batch_of(reads, quals)
    if quals:  # varied qualities, so reversal shows
        batch.quals = rng.integers(33, 75, batch.quals.size).astype(np.uint8)
    fmt = SamFormatter(ref, secondary_seq=secondary_seq)
    args = captured(monkeypatch, seedmap.pipeline.stages, lambda: map_batch(batch, engine_of(ref), fmt,
                                                                      MapOptions(errors=3)))
    return ref, args


def pair_args(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> tuple[Reference, tuple]:
    ref = genome(rng)
    seqs = [ref.codes()[a:b] for a, b in zip(ref.starts[:-1], ref.starts[1:], strict=True)]
    pairs = simulate_pairs(rng, seqs, 80, 50, "fr", 4)
    recs = []
    for i, (a, b) in enumerate(pairs):
        recs += [dnaio.SequenceRecord(f"p{i}", decode(a), decode(rng.integers(0, 4, a.size).astype(np.uint8))),
                 dnaio.SequenceRecord(f"p{i}", decode(b), "J" * b.size)]
    args = captured(monkeypatch, seedmap.pipeline.stages,
                    lambda: map_pair_batch(make_batch(recs), engine_of(ref), SamFormatter(ref), MapOptions(errors=3),
                                           PairOptions(), MODEL))
    return ref, args


def sam_text(ref: Reference, args: tuple, rg: bool) -> tuple[str, bytes]:
    head = header(ref, "seedmap test")
    body = format_records(*args).tobytes()
    if rg:
        head = RG.add_to_header(head)
        body = body.replace(b"\n", b"\tRG:Z:" + RG.id.encode() + b"\n")
    return head, body


def write_bam(path: Path, ref: Reference, args: tuple, rg: bool, threads: int = 2) -> None:
    head = header(ref, "seedmap test")
    if rg:
        head = RG.add_to_header(head)
    with open(path, "wb") as fh, BgzfWriter(fh, threads) as w:
        w.write(bam_header(head, ref.names, ref.lengths))
        w.write(encode_records(*args, rg=RG.id.encode() if rg else None))


def read_back(path: Path) -> tuple[str, list[str]]:
    with pysam.AlignmentFile(str(path), "rb", check_sq=False) as f:
        return str(f.header), [r.to_string() for r in f]


def check_same_as_samtools(tmp_path: Path, ref: Reference, args: tuple, rg: bool) -> list[str]:
    head, body = sam_text(ref, args, rg)
    (tmp_path / "x.sam").write_bytes(head.encode() + body)
    write_bam(tmp_path / "x.bam", ref, args, rg)
    pysam.samtools.quickcheck(str(tmp_path / "x.bam"))
    got_header, got = read_back(tmp_path / "x.bam")
    want_header, want = read_back(tmp_path / "x.sam")
    assert got_header == want_header and got_header == head
    assert got == want == body.decode().splitlines()
    # Byte for byte what samtools encodes (bin, tag types, header): its uncompressed BAM, decompressed.
    pysam.samtools.view("-u", "--no-PG", "-o", str(tmp_path / "ref.bam"), str(tmp_path / "x.sam"),
                        catch_stdout=False)
    assert gzip.decompress((tmp_path / "x.bam").read_bytes()) == gzip.decompress((tmp_path / "ref.bam").read_bytes())
    return got


@pytest.mark.parametrize(("rg", "secondary_seq"), [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("quals", [True, False])
def test_single_end_equals_samtools(monkeypatch, tmp_path, quals, rg, secondary_seq):
    rng = np.random.default_rng(11 + quals)
    ref, args = single_args(monkeypatch, rng, quals, secondary_seq)
    records = [r.split("\t") for r in check_same_as_samtools(tmp_path, ref, args, rg)]
    flags = [int(f[1]) for f in records]
    assert any(f & 4 for f in flags) and any(f & 16 for f in flags) and any(f & 256 for f in flags)
    assert any(f == 0 for f in flags)
    # Secondary records: SEQ and QUAL '*' (BAM l_seq 0) unless secondary_seq.
    assert all((r[9] == r[10] == "*") != secondary_seq for f, r in zip(flags, records, strict=True) if f & 256)


@pytest.mark.slow
@pytest.mark.parametrize("rg", [False, True])
def test_pairs_equal_samtools(monkeypatch, tmp_path, rg):
    ref, args = pair_args(monkeypatch, np.random.default_rng(5))
    records = [r.split("\t") for r in check_same_as_samtools(tmp_path, ref, args, rg)]
    flags = [int(f[1]) for f in records]
    assert any(f & 2 for f in flags) and any(f & 256 for f in flags)
    assert any(f & 4 and not f & 8 and r[2] != "*" for f, r in zip(flags, records, strict=True))  # placed unmapped
    assert any(f & 4 and f & 8 for f in flags)  # both unmapped
    assert any(f & 8 and not f & 4 for f in flags)  # mapped, mate unmapped
    assert any(r[6] not in ("=", "*") for r in records)  # mates on different sequences


def test_empty_read_and_empty_batch(monkeypatch, tmp_path):
    rng = np.random.default_rng(3)
    ref = genome(rng)
    recs = [dnaio.SequenceRecord("full", decode(ref.codes()[100:160]), "I" * 60),
            dnaio.SequenceRecord("empty", "", "")]
    args = captured(monkeypatch, seedmap.pipeline.stages, lambda: map_batch(make_batch(recs), engine_of(ref),
                                                                      SamFormatter(ref), MapOptions(errors=2)))
    records = check_same_as_samtools(tmp_path, ref, args, rg=True)
    assert records[1].split("\t")[9:11] == ["*", "*"]
    none = (Records(*(a[:0] for a in args[0])), *args[1:])  # no records
    assert encode_records(*none).size == 0


def test_parallel_encoding_equals_serial(monkeypatch):
    """The kernel releases the GIL: threads encoding batches at once give the serial bytes."""
    ref, args = pair_args(monkeypatch, np.random.default_rng(9))
    want = encode_records(*args, rg=b"x")
    with ThreadPoolExecutor(3) as pool:
        assert all(np.array_equal(got, want) for got in pool.map(lambda _: encode_records(*args, rg=b"x"), range(6)))


def test_long_read_name():
    batch = make_batch([dnaio.SequenceRecord("n" * 254, "ACGT", None), dnaio.SequenceRecord("x" * 255, "ACGT", None)])
    unmapped = Records(np.array([0]), np.array([-1]), np.array([4]), *[np.array([0])] * 2, np.array([-1]),
                       *[np.array([0])] * 2, np.array([1]), np.array([0, 0]), np.zeros(0, int))
    rest = (batch.columns, Alignments(*[np.zeros(0, int)] * 9),
            RefNames(np.array([0, 10]), np.frombuffer(b"c", np.uint8), np.array([0, 1])))
    assert encode_records(unmapped, *rest)[12] == 255  # l_read_name
    with pytest.raises(SeedmapError, match="longer than 254"):
        encode_records(unmapped._replace(read=np.array([1])), *rest)


def test_header_bytes():
    text = "@HD\tVN:1.6\n@SQ\tSN:a\tLN:5\n@SQ\tSN:bb\tLN:70000\n"
    h = bam_header(text, ["a", "bb"], np.array([5, 70000]))
    assert h == (b"BAM\1" + struct.pack("<i", len(text)) + text.encode() + struct.pack("<i", 2)
                 + struct.pack("<i", 2) + b"a\0" + struct.pack("<i", 5)
                 + struct.pack("<i", 3) + b"bb\0" + struct.pack("<i", 70000))


@pytest.mark.parametrize("value", [0, 1, 127, 128, 255, 256, 65535, 65536, 2**31, -1, -128, -129, -32768, -32769,
                                   -2**31])
def test_integer_tag_types_as_samtools(value):
    buf = np.zeros(8, dtype=np.uint8)
    end = _tag_int(buf, 0, 88, 88, value)
    typ = chr(buf[2])
    fmt = {"c": "<b", "C": "<B", "s": "<h", "S": "<H", "i": "<i", "I": "<I"}[typ]
    assert end == 3 + struct.calcsize(fmt) and struct.unpack(fmt, buf[3:end].tobytes())[0] == value
    hdr = pysam.AlignmentHeader.from_text("@HD\tVN:1.6\n")
    seg = pysam.AlignedSegment.fromstring(f"r\t4\t*\t0\t0\t*\t*\t0\t0\t*\t*\tXX:i:{value}", hdr)
    assert seg.get_tag("XX", with_value_type=True) == (value, typ)


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
