"""read_fasta packs each sequence as it is read: the same names, starts, packed bases and N mask (dtypes,
shapes, bytes) and the same errors as the straightforward reader it replaced (kept here as the oracle)."""

from __future__ import annotations

import gzip
import logging
from pathlib import Path

import dnaio
import numpy as np
import pytest
from helpers import ragged_fasta
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seedmap.errors import SeedmapError
from seedmap.io import reference
from seedmap.io.alphabet import INVALID, N_CODE, encode
from seedmap.io.reads import open_error_message
from seedmap.io.reference import (
    Reference,
    pack_codes,
    read_fasta,
    ref_code,
    sequence_of,
    sequences_of,
    unpack_codes,
)

# ---------------------------------------------------------------------------- the oracle: the old reader


def oracle_read_fasta(path: str | Path) -> Reference:
    path = str(path)
    names, seqs, seen = [], [], set()
    try:
        with dnaio.open(path, mode="r") as reader:
            if not isinstance(reader, dnaio.FastaReader):
                raise SeedmapError(f"{path}: the reference must be FASTA, not FASTQ")
            for record in reader:
                name = record.id
                if not record.sequence:
                    continue
                if name in seen:
                    raise SeedmapError(f"{path}: sequence name {name!r} occurs twice")
                seen.add(name)
                try:
                    codes = encode(record.sequence.encode("ascii"))
                except UnicodeEncodeError:
                    raise SeedmapError(f"{path}: sequence {name!r} has non-ASCII characters") from None
                bad = np.flatnonzero(codes == INVALID)
                if bad.size:
                    ch = record.sequence[int(bad[0])]
                    raise SeedmapError(f"{path}: sequence {name!r} has an invalid character {ch!r} at "
                                       f"{int(bad[0]) + 1}")
                names.append(name)
                seqs.append(codes)
    except SeedmapError:
        raise
    except Exception as exc:
        raise SeedmapError(open_error_message(path, exc)) from None
    if not seqs:
        raise SeedmapError(f"{path}: no sequences found in the reference")
    return Reference.from_codes(names, seqs)


def assert_same_reference(got: Reference, want: Reference) -> None:
    assert got.names == want.names
    for field in ("starts", "packed", "nmask"):
        a, b = getattr(got, field), getattr(want, field)
        assert a.dtype == b.dtype and a.shape == b.shape, field
        assert np.array_equal(a, b), field


# ------------------------------------------------------------------------------------------ generators

LETTERS = "ACGTacgtNnRYKMSWBDHVuU."


def random_sequence(rng: np.random.Generator, n: int) -> str:
    """Mostly ACGT (either case), N runs, the odd IUPAC letter."""
    s = rng.choice(list("ACGTacgt"), n)
    for _ in range(int(rng.integers(0, 4))):
        if n:
            a = int(rng.integers(0, n))
            s[a:a + int(rng.integers(1, 40))] = "N"
    for _ in range(int(rng.integers(0, 3))):
        if n:
            s[int(rng.integers(0, n))] = LETTERS[int(rng.integers(8, len(LETTERS)))]
    return "".join(s)


def write_fasta(path: Path, records: list[tuple[str, str]], rng: np.random.Generator) -> Path:
    text = ragged_fasta(records, rng)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def random_records(rng: np.random.Generator, n_seqs: int, max_len: int) -> list[tuple[str, str]]:
    lengths = [int(rng.integers(0, max_len)) if rng.random() < 0.7 else int(rng.integers(0, 9))
               for _ in range(n_seqs)]
    return [(f"s{i}", random_sequence(rng, m)) for i, m in enumerate(lengths)]


# ------------------------------------------------------------------------------------------------ tests


@pytest.mark.parametrize("suffix", [".fa", ".fa.gz"])
@pytest.mark.parametrize("seed", range(4))
def test_same_as_oracle(tmp_path, suffix, seed):
    rng = np.random.default_rng(seed)
    records = random_records(rng, 9, 3000)
    records.append(("long", random_sequence(rng, 20_011)))
    path = write_fasta(tmp_path / f"ref{suffix}", records, rng)
    assert_same_reference(read_fasta(path), oracle_read_fasta(path))


def test_growth_and_chunks(tmp_path, monkeypatch):
    """A tiny first buffer that doubles many times, and sequences encoded in many small chunks that start
    at every base offset modulo 4 and 8."""
    monkeypatch.setattr(reference, "_size_hint", lambda path: 0)
    monkeypatch.setattr(reference, "_CHUNK", 37)
    rng = np.random.default_rng(9)
    records = [(f"c{i}", random_sequence(rng, int(m))) for i, m in enumerate(rng.integers(1, 90_000, 6))]
    path = write_fasta(tmp_path / "ref.fa", records, rng)
    got = read_fasta(path)
    assert_same_reference(got, oracle_read_fasta(path))
    assert got.packed.flags.owndata and got.nmask.flags.owndata


def test_codes_and_lengths(tmp_path):
    rng = np.random.default_rng(2)
    path = write_fasta(tmp_path / "ref.fa", [("a", "ACGTNacgtnRY"), ("empty", ""), ("b", "T"), ("c", "GGN")], rng)
    ref = read_fasta(path)
    assert ref.names == ["a", "b", "c"] and ref.lengths.tolist() == [12, 1, 3]
    assert ref.codes().tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 4, 4, 3, 2, 2, 4]
    assert [ref_code(ref.packed, ref.nmask, i) for i in range(ref.total)] == ref.codes().tolist()
    assert unpack_codes(ref.packed, ref.nmask, 12, 16).tolist() == [3, 2, 2, 4]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), n_runs=st.integers(0, 4))
def test_unpack_equals_the_codes(seed: int, n: int, n_runs: int):
    """unpack_codes (eight bases at a time where no N is near) equals ref_code base by base, for every
    start and length, with N runs anywhere."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 4, n).astype(np.uint8)
    for a in rng.integers(0, n, n_runs):
        codes[a:a + int(rng.integers(1, 12))] = N_CODE
    packed, nmask = pack_codes(codes)
    for a in sorted({0, n - 1, *rng.integers(0, n, 6).tolist()}):
        for b in sorted({a, n, *rng.integers(a, n + 1, 4).tolist()}):
            assert unpack_codes(packed, nmask, a, b).tolist() == codes[a:b].tolist()


def test_pack_codes_layout():
    codes = np.array([0, 1, 2, 3, 4, 3, 2, 1, 0, 4], dtype=np.uint8)
    packed, nmask = pack_codes(codes)
    assert packed.tolist() == [0b11100100, 0b01101100, 0b00000000]  # N stored as A
    assert nmask.tolist() == [0b00010000, 0b00000010]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seqs=st.lists(st.text(alphabet="ACGTNacgtnRY", max_size=70), min_size=1, max_size=7),
       chunk=st.integers(1, 20), hint=st.integers(0, 100))
def test_property(tmp_path, monkeypatch, seqs, chunk, hint):
    monkeypatch.setattr(reference, "_size_hint", lambda path: hint)
    monkeypatch.setattr(reference, "_CHUNK", chunk)
    path = tmp_path / "p.fa"
    path.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(seqs)))
    if not any(seqs):
        with pytest.raises(SeedmapError, match="no sequences"):
            read_fasta(path)
        return
    assert_same_reference(read_fasta(path), oracle_read_fasta(path))


# ----------------------------------------------------------------------------------------------- errors

BAD = {
    "duplicate": ">a\nACGT\n>b\nAC\n>a\nGG\n",
    "star": ">a\nACGTACGT\nACGT*ACGT\n",
    "digit-late": ">a\nACGT\n>b\n" + "ACGT" * 30 + "AC3GT\n",
    "non-ascii": ">a\nACGT\n>b\nACGTÄACGT\n",
    "non-ascii-after-invalid": ">a\nAC*GTÄACGT\n",
    "only-empty": ">a\n>b some description\n\n>c\n",
    "fastq": "@r\nACGT\n+\nIIII\n",
    "garbage": "hello world\nthis is neither FASTA nor FASTQ\n",
}


@pytest.mark.parametrize("case", BAD)
@pytest.mark.parametrize("chunk", [3, 1 << 22])
def test_errors_as_oracle(tmp_path, monkeypatch, case, chunk):
    monkeypatch.setattr(reference, "_CHUNK", chunk)
    path = tmp_path / ("ref.fq" if case == "fastq" else "ref.fa")
    path.write_text(BAD[case], encoding="utf-8")
    with pytest.raises(SeedmapError) as want:
        oracle_read_fasta(path)
    with pytest.raises(SeedmapError) as got:
        read_fasta(path)
    assert str(got.value) == str(want.value)


def test_error_messages(tmp_path, monkeypatch):
    monkeypatch.setattr(reference, "_CHUNK", 5)
    path = tmp_path / "ref.fa"
    path.write_text(">a\nACGT\n>b\n" + "ACGT" * 30 + "AC3GT\n")
    with pytest.raises(SeedmapError, match=r"sequence 'b' has an invalid character '3' at 123$"):
        read_fasta(path)
    path.write_text(">a\nACGT\n>a\nAC\n")
    with pytest.raises(SeedmapError, match=r"sequence name 'a' occurs twice$"):
        read_fasta(path)
    with pytest.raises(SeedmapError, match=r"sequence 'a' has non-ASCII characters$"):  # dnaio refuses first
        reference._PackBuffer(10).append("ACGTÄ", "a", "ref.fa")
    with pytest.raises(SeedmapError, match="no such file"):
        read_fasta(tmp_path / "missing.fa")


def test_empty_record_warns(tmp_path, caplog):
    path = tmp_path / "ref.fa"
    path.write_text(">a\nACGT\n>hollow\n>b\nGG\n")
    with caplog.at_level(logging.WARNING, logger="seedmap"):
        ref = read_fasta(path)
    assert ref.names == ["a", "b"]
    assert any("hollow" in r.getMessage() and "empty" in r.getMessage() for r in caplog.records)


def test_n_code_is_four():
    assert N_CODE == 4


def test_sequence_of_every_position():
    """sequence_of (the kernels', GPU's too) and sequences_of (arrays) give every position's sequence, empty
    sequences included, as counted here one sequence at a time."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        lengths = rng.integers(0, 6, int(rng.integers(1, 12)))
        lengths[int(rng.integers(0, lengths.size))] += 1  # at least one base
        starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        want = np.concatenate([np.full(n, s, dtype=np.int64) for s, n in enumerate(lengths)])
        assert [sequence_of(starts, p) for p in range(int(starts[-1]))] == want.tolist()
        assert np.array_equal(sequences_of(starts, np.arange(starts[-1])), want)
