"""The GIL-free FASTQ path (io/fastq_kernel.py) against dnaio, the reference: every block it accepts
gives the same batch as dnaio's records would, and every block dnaio reads differently or rejects is
left to dnaio (same batch, same error)."""

from __future__ import annotations

import io

import dnaio
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.errors import SeedmapError
from seedmap.io.chunks import RawBatch
from seedmap.io.fastq_kernel import split_fastq
from seedmap.io.reads import make_batch

HEADER = st.text(alphabet="ab1/ \t:_-\x0b\x1f\u00e9", min_size=0, max_size=8)
SEQ = st.text(alphabet="ACGTNacgtRY. \u00e9", min_size=0, max_size=12)


@st.composite
def records(draw: st.DrawFn) -> bytes:
    """A FASTQ record, now and then bent: a CR, a second header, wrong quality length, a missing '@'."""
    name = draw(HEADER)
    seq = draw(SEQ)
    qual = "I" * len(seq) if draw(st.booleans()) or not seq else draw(st.text(alphabet="I#!", max_size=12))
    plus = draw(st.sampled_from(["", "", name, name + "x", "q"]))
    at = draw(st.sampled_from(["@", "@", "@", ">", ""]))
    ends = draw(st.lists(st.sampled_from(["\n", "\n", "\n", "\r\n"]), min_size=4, max_size=4))  # mixed too
    return f"{at}{name}{ends[0]}{seq}{ends[1]}+{plus}{ends[2]}{qual}{ends[3]}".encode()


def dnaio_batch(block: bytes) -> object:
    """What the dnaio path makes of a block: a batch, or the error (message) it raises."""
    try:
        with dnaio.open(io.BytesIO(block)) as reader:
            recs = list(reader)
        return make_batch(recs, 0, "x.fq")
    except SeedmapError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - any dnaio error: the fast path must refuse that block
        return type(exc).__name__


def same(a: object, b: object) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return all(np.array_equal(getattr(a, f), getattr(b, f))
               for f in ("names", "name_offsets", "codes", "offsets", "quals")) and a.has_quals == b.has_quals


@settings(max_examples=400, deadline=None)
@given(st.lists(records(), min_size=1, max_size=6))
def test_fast_path_agrees_with_dnaio(recs: list[bytes]) -> None:
    block = b"".join(recs)
    expected = dnaio_batch(block)
    fields = split_fastq(block)
    if fields is not None:  # the fast path took it: dnaio reads it alike
        assert not isinstance(expected, str) or "invalid character" in expected
    try:
        got = RawBatch(0, (block,), ("x.fq",)).parse()
    except SeedmapError as exc:
        got = str(exc)
    if isinstance(expected, str) and "invalid character" not in expected:
        assert isinstance(got, str)  # dnaio's own error (its wording checked in test_cli_errors)
    else:
        assert same(got, expected)


def test_plain_block_takes_the_fast_path() -> None:
    block = b"@r1 desc\nACGTN\n+\nIIIII\n@r2\tx\nacgt\n+r2\tx\n!!!!\n@\n\n+\n\n"
    fast = split_fastq(block)
    assert fast.names.tobytes() == b"r1r2" and fast.name_offsets.tolist() == [0, 2, 4, 4]
    assert fast.codes.tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3] and fast.offsets.tolist() == [0, 5, 9, 9]
    assert fast.quals.tobytes() == b"IIIII!!!!" and fast.bad is None


@pytest.mark.parametrize("block", [
    b"@r1\r\nAC\r\n+\r\nII\r\n",  # Windows line ends: dnaio strips the CR
    b"@r1\nAC\r\n+\nII\r\n",  # mixed line ends
    b"@r1\nAC\n+r2\nII\n",  # a second header that differs: dnaio's error
    b"@r1\nAC\n+\nI\n",  # lengths differ
    "@r\u00e9\nAC\n+\nII\n".encode(),  # non-ASCII
    b"@r1\x0bx\nAC\n+\nII\n",  # a control character in the header
    b"@r1\nAC\n+\nII\n@r2\nAC\n",  # not whole records
])
def test_unusual_blocks_go_to_dnaio(block: bytes) -> None:
    assert split_fastq(block) is None


def test_invalid_character_named_by_either_path() -> None:
    plain = b"@good\nACGT\n+\nIIII\n@bad x\nAC-T\n+\nIIII\n"
    for block in (plain, plain.replace(b"\n", b"\r\n")):  # the fast path, then dnaio
        with pytest.raises(SeedmapError, match=r"x\.fq: read 'bad' has an invalid character '-'"):
            RawBatch(0, (block,), ("x.fq",)).parse()


MATE_ID = st.sampled_from(["a", "a/1", "a/2", "a1", "a2", "b/1", "/1", "a/1/1", "a/3"])


@st.composite
def pairs(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """Blocks of mates 1 and 2 with ids that dnaio takes as mates or not, now and then a bent record."""
    n = draw(st.integers(1, 4))
    one, two = [], []
    for _ in range(n):
        desc = draw(st.sampled_from(["", " x", "\ty"]))
        first = draw(MATE_ID)  # mostly mates by dnaio's rule, sometimes not
        ids = (first, draw(st.sampled_from([first, first, first[:-1] + "2", first[:-1] + "3"]) | MATE_ID))
        for block, name in zip((one, two), ids, strict=True):
            seq = draw(st.text(alphabet="ACGTN-", min_size=0, max_size=6))
            plain = f"@{name}{desc}\n{seq}\n+\n{'I' * len(seq)}\n".encode()
            block.append(draw(st.sampled_from([plain] * 6 + [plain.replace(b"\n", b"\r\n")])))
    return b"".join(one), b"".join(two)


def dnaio_pairs(blocks: tuple[bytes, ...]) -> object:
    """The dnaio path's batch of pairs (mates interleaved, /1 /2 stripped), or its error message."""
    from seedmap.io.pairs import strip_mate

    files = [io.BytesIO(b) for b in blocks]
    opened = dnaio.open(files[0], interleaved=True) if len(files) == 1 else dnaio.open(files[0], file2=files[1])
    try:
        with opened as reader:
            recs = [strip_mate(r) for pair in reader for r in pair]
        return make_batch(recs, 0, "x.fq")
    except SeedmapError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a pairing or format error: the fast path must leave it to dnaio
        return type(exc).__name__


@settings(max_examples=300, deadline=None)
@given(pairs(), st.booleans())
def test_pairs_agree_with_dnaio(mates: tuple[bytes, bytes], interleaved: bool) -> None:
    """Two files or one interleaved file: the same batch (or invalid-character error) as dnaio's records;
    whatever dnaio rejects is rejected."""
    blocks = (b"".join(x for pair in zip(*(_records(m) for m in mates), strict=True) for x in pair),) \
        if interleaved else mates
    expected = dnaio_pairs(blocks)
    try:
        got = RawBatch(0, blocks, ("x.fq",), paired=True).parse()
    except SeedmapError as exc:
        got = str(exc)
    if isinstance(expected, str) and "invalid character" not in expected:
        assert isinstance(got, str)
    else:
        assert same(got, expected)


def _records(block: bytes) -> list[bytes]:
    lines = block.splitlines(keepends=True)
    return [b"".join(lines[i:i + 4]) for i in range(0, len(lines), 4)]


def test_mates_take_the_fast_path() -> None:
    from seedmap.io.fastq_kernel import pair_reads

    one = split_fastq(b"@p/1 x\nAC\n+\nII\n@q\nG\n+\n#\n")
    two = split_fastq(b"@p/2 y\nTTT\n+\n!!!\n@q\nN\n+\n$\n")
    fast = pair_reads([one, two])
    assert fast.names.tobytes() == b"ppqq" and fast.name_offsets.tolist() == [0, 1, 2, 3, 4]
    assert fast.codes.tolist() == [0, 1, 3, 3, 3, 2, 4] and fast.quals.tobytes() == b"II!!!#$"
    assert pair_reads([split_fastq(b"@p.1\nA\n+\nI\n"), split_fastq(b"@p.2\nA\n+\nI\n")]) is None  # dnaio's call


def test_first_bad_mate_in_pair_order() -> None:
    """The error names the first bad read in the batch's order (mate 1, mate 2, next pair), as dnaio's."""
    one = b"@p/1\nAC\n+\nII\n@q/1\nA-\n+\nII\n"
    two = b"@p/2\nA*\n+\nII\n@q/2\nAC\n+\nII\n"
    for blocks in ((one, two), (one.replace(b"\n", b"\r\n"), two)):  # the fast path, then dnaio
        with pytest.raises(SeedmapError, match=r"read 'p' has an invalid character '\*'"):
            RawBatch(0, blocks, ("x.fq",), paired=True).parse()


# ------------------------------------------------------------------- cutting the input into batches


@pytest.mark.parametrize("fastq", [True, False])
@pytest.mark.parametrize("batch", [1, 7, 40])
@pytest.mark.parametrize("last_newline", [True, False])
def test_batches_cut_across_chunks_hold_the_input(tmp_path, monkeypatch, fastq, batch, last_newline):
    """The reader cuts batches from views of dnaio's reused buffer (or, plain single-end FASTQ, from
    buffers it reads and grows itself): with chunks far smaller than a batch (every batch spans several
    reads), the batches hold exactly `batch` records each (the last fewer), in order, byte for byte the
    input; mates stay paired."""
    from seedmap.io import chunks, plain_fastq

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 512)
    monkeypatch.setattr(plain_fastq, "FIRST_GUESS", 64)  # the plain FASTQ cutter grows its buffer
    rng = np.random.default_rng(batch)
    n = 101
    texts = []
    for mate in (1, 2):
        lens = rng.integers(0, 60, n)
        recs = [(f"@r{i}/{mate}\n" + "ACGT"[i % 4] * m + "\n+\n" + "I" * m + "\n") if fastq
                else (f">r{i}/{mate}\n" + "ACGT"[i % 4] * m + "\n") for i, m in enumerate(lens.tolist())]
        texts.append("".join(recs))
    paths = []
    for mate, text in enumerate(texts, 1):
        path = tmp_path / f"r{mate}.{'fq' if fastq else 'fa'}"
        path.write_text(text if last_newline else text[:-1])
        paths.append(str(path))
    single = list(chunks.raw_batches(paths[0], batch))
    assert b"".join(b.blocks[0] for b in single) == texts[0].encode()
    assert [b.first for b in single] == list(range(0, n, batch))
    assert [b.parse().size for b in single] == [min(batch, n - i) for i in range(0, n, batch)]
    pairs = list(chunks.raw_pair_batches(paths[0], paths[1], batch))
    for k in (0, 1):
        assert b"".join(b.blocks[k] for b in pairs) == texts[k].encode()
    assert [b.parse().size for b in pairs] == [2 * min(batch, n - i) for i in range(0, n, batch)]


# ------------------------------------------------------------------- the plain FASTQ cutter's kernels


NEWLINE_TEXT = st.binary(max_size=90).map(lambda b: bytes(c if c % 3 else 10 for c in b))  # many newlines


@settings(max_examples=300, deadline=None)
@given(NEWLINE_TEXT, st.integers(0, 90), st.integers(1, 30))
def test_newline_kernels_agree_with_numpy(text: bytes, start: int, lines: int) -> None:
    """Eight bytes at a time (any alignment, bytes >= 0x80 beside newlines) finds what numpy finds."""
    from seedmap.io.fastq_kernel import _line_ends, after_lines, count_newlines

    buf = np.frombuffer(text, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    assert count_newlines(buf) == ends.size
    assert np.array_equal(_line_ends(buf), ends)
    start = min(start, buf.size)
    after = ends[ends >= start]
    want = (int(after[lines - 1]) + 1, 0) if after.size >= lines else (-1, lines - after.size)
    assert after_lines(np.frombuffer(bytearray(text), dtype=np.uint8), start, lines) == want


@settings(max_examples=150, deadline=None)
@given(st.lists(records(), max_size=12), st.integers(1, 5), st.sampled_from([8, 64, 1 << 20]))
def test_plain_fastq_blocks_equal_the_general_cut(tmp_path_factory, recs, batch, guess) -> None:
    """Whatever the records (broken ones too) and the first buffer size, the cutter's blocks are the
    general path's batches, record counts included."""
    from seedmap.io import chunks, plain_fastq

    text = b"@" + b"".join(recs)  # the fast path's files start with '@'
    path = tmp_path_factory.mktemp("cut") / "r.fq"
    path.write_bytes(text)
    old = plain_fastq.FIRST_GUESS
    plain_fastq.FIRST_GUESS = guess
    try:
        with plain_fastq.open_plain_fastq(str(path)) as fh:
            fast = [(bytes(b), n) for b, n in plain_fastq.fastq_blocks(fh, batch)]
    finally:
        plain_fastq.FIRST_GUESS = old
    try:
        with chunks.xopen(str(path), "rb") as fh:
            split = chunks._Splitter(1, batch)
            general = [(b[0], batch) for c in dnaio.read_chunks(fh, 1024) for b in split.add((c,))]
            if split.count:
                count = split.count
                general.append((split.flush()[0], count))
    except Exception:  # noqa: BLE001 - dnaio refuses a file that is only a broken record: so does parsing
        assert len(fast) == 1
        with pytest.raises(SeedmapError):
            RawBatch(0, (fast[0][0],), ("r.fq",)).parse()
        return
    assert fast == general


def test_plain_fastq_only_for_regular_uncompressed_fastq(tmp_path) -> None:
    import gzip

    from seedmap.io.plain_fastq import open_plain_fastq

    fq = tmp_path / "r.fq"
    fq.write_bytes(b"@r\nACGT\n+\nIIII\n")
    gz = tmp_path / "r.fq.gz"
    gz.write_bytes(gzip.compress(fq.read_bytes()))
    fa = tmp_path / "r.fa"
    fa.write_bytes(b">r\nACGT\n")
    empty = tmp_path / "e.fq"
    empty.write_bytes(b"")
    misnamed = tmp_path / "plain.fq.gz"
    misnamed.write_bytes(fq.read_bytes())
    with open_plain_fastq(str(fq)) as fh:
        assert fh.read() == fq.read_bytes()
    for other in (gz, misnamed, fa, empty, tmp_path / "missing.fq", tmp_path):
        assert open_plain_fastq(str(other)) is None
    assert open_plain_fastq("-") is None


@pytest.mark.parametrize("workers", [1, 2, 16])
def test_tapered_blocks_hold_the_input_and_shrink_at_the_end(tmp_path, workers) -> None:
    """With threads to feed, the last blocks are shorter (down to a 16th), and the first too where the whole
    input is fewer than 2 blocks per thread; every block holds exactly the records it says, and together
    they are the file."""
    from seedmap.io.plain_fastq import fastq_blocks, open_plain_fastq

    rng = np.random.default_rng(workers)
    text = "".join(f"@r{i}\n{'A' * m}\n+\n{'I' * m}\n" for i, m in enumerate(rng.integers(20, 120, 3000).tolist()))
    path = tmp_path / "r.fq"
    path.write_text(text)
    with open_plain_fastq(str(path)) as fh:
        blocks = [(bytes(b), n) for b, n in fastq_blocks(fh, 100, workers)]
    assert b"".join(b for b, _ in blocks) == text.encode()
    assert all(b.count(b"\n") == 4 * n for b, n in blocks)
    sizes = [n for _, n in blocks]
    assert sum(sizes) == 3000 and max(sizes) == sizes[0]
    assert sizes[0] == min(100, 3000 // (2 * workers))  # a small input (16 threads: 30 blocks) is cut finer at once
    assert sizes[-2] == 100 // 16  # the last blocks are short
    assert all(a >= b for a, b in zip(sizes[:-1], sizes[1:], strict=True))  # they only shrink


def test_a_block_is_cut_even_while_a_view_of_it_lives():
    """The block is shortened in place, or copied where a view still holds it (the resize would raise)."""
    from seedmap.io.plain_fastq import _cut

    buf = bytearray(b"@r\nACGT\n+\nIIII\n@s\n")
    assert _cut(buf, 15) is buf and buf == bytearray(b"@r\nACGT\n+\nIIII\n")
    held = bytearray(b"@r\nACGT\n+\nIIII\n@s\n")
    view = np.frombuffer(held, dtype=np.uint8)
    cut = _cut(held, 15)
    assert cut is not held and cut == bytearray(b"@r\nACGT\n+\nIIII\n") and view.size == len(held) == 18
