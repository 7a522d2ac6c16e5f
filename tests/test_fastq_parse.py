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
