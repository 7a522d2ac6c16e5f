"""The command line, black box: bad input gets one clear line on stderr and a non-zero exit, never a
traceback, and never a partial output file (nor a temporary one) left behind. Also a few inputs that
look odd but are valid and must map.

Every test runs `python -m seedmap` in its own directory holding a copy of a small reference, its
index (built once per module) and reads sampled from it.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from helpers import (
    GARBAGE_BINARY,
    error_lines,
    fails_cleanly,
    fasta,
    fastq,
    maps,
    ragged_fasta,
    random_dna,
    sam_lines,
    sam_records,
    seedmap,
    truncated_gzip,
)

GENOME_LENGTH = 5000
READ_LENGTH = 80
N_READS = 40
SEED = 20240611


# ---------------------------------------------------------------------------------------------- helpers



def map_fails(cwd: Path, reference: str = "ref.fa", reads: str = "reads.fq", *options: str) -> str:
    return fails_cleanly(cwd, "map", reference, reads, "-o", "out.sam", *options)



# ---------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ref.fa (one 5 kbp sequence), its index ref.fa.smi, reads.fq: exact 80 bp substrings."""
    d = tmp_path_factory.mktemp("cli_data")
    rng = np.random.default_rng(SEED)
    genome = random_dna(rng, GENOME_LENGTH)
    starts = rng.integers(0, GENOME_LENGTH - READ_LENGTH, N_READS)
    (d / "ref.fa").write_text(fasta({"chr1": genome}))
    (d / "reads.fq").write_text(fastq({f"r{i}_{s + 1}": genome[s:s + READ_LENGTH] for i, s in enumerate(starts)}))
    proc = seedmap(d, "index", "ref.fa")
    assert proc.returncode == 0, proc.stderr
    maps(d, "ref.fa", "reads.fq")  # compiles (or loads) numba's cached kernels once, up front
    return d


@pytest.fixture
def work(data: Path, tmp_path: Path) -> Path:
    """A private copy of the data; copy2 keeps mtimes, so the index stays up to date with ref.fa."""
    for name in ("ref.fa", "reads.fq"):
        shutil.copy2(data / name, tmp_path / name)
    shutil.copytree(data / "ref.fa.smi", tmp_path / "ref.fa.smi")
    return tmp_path



GARBAGE_TEXT = b"hello world\nthis is neither FASTA nor FASTQ\n"

Maker = Callable[[Path], object]  # creates the bad input at the given path


def nothing(path: Path) -> None:
    pass


def holding(content: bytes | str) -> Maker:
    data = content.encode() if isinstance(content, str) else content
    return lambda path: path.write_bytes(data)


def reads_gz_cut(path: Path) -> None:
    path.write_bytes(truncated_gzip(path.parent / "reads.fq"))


def reads_misnamed_gz(path: Path) -> None:
    shutil.copy(path.parent / "reads.fq", path)


# ------------------------------------------------------------------------------------- bad references

BAD_REFERENCES: dict[str, tuple[str, Maker, str]] = {
    "missing": ("nope.fa", nothing, "no such file"),
    "directory": ("refdir", Path.mkdir, "is a directory"),
    "fastq": ("reads.fq", nothing, "must be FASTA"),
    "text": ("notes.txt", holding(GARBAGE_TEXT), "not valid FASTA"),
    "binary": ("blob.fa", holding(GARBAGE_BINARY), "not valid FASTA"),
    "only-empty-records": ("empty.fa", holding(">a\n>b some description\n\n>c\n"), "no sequences"),
    "star": ("star.fa", holding(">a\nACGTACGT\nACGT*ACGT\n"), "invalid character '*'"),
    "digit": ("digit.fa", holding(">a\nACGTAC3GTACGT\n"), "invalid character '3'"),
}


@pytest.mark.parametrize("command", ["index", "map"])
@pytest.mark.parametrize("case", BAD_REFERENCES)
def test_bad_reference(work: Path, case: str, command: str):
    name, make, expected = BAD_REFERENCES[case]
    make(work / name)
    message = fails_cleanly(work, "index", name) if command == "index" else map_fails(work, name)
    assert name in message and expected in message


@pytest.mark.parametrize("case", ["missing", "directory", "fastq", "text", "binary"])
def test_bad_reference_is_all_that_is_said(work: Path, case: str):
    """The reference is checked before the run loads or builds anything: no 'building one in memory' line
    before the error (map builds an index in memory when there is none), and nothing on stdout."""
    name, make, expected = BAD_REFERENCES[case]
    make(work / name)
    proc = seedmap(work, "map", name, "reads.fq")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.splitlines() == [proc.stderr.strip()] and expected in proc.stderr, proc.stderr


def test_reference_from_a_pipe_maps(work: Path):
    """A reference read through a pipe is not sniffed first (what a look took would be lost to the reader)."""
    os.mkfifo(work / "pipe.fa")
    writer = subprocess.Popen(["cp", str(work / "ref.fa"), str(work / "pipe.fa")])
    try:
        records = sam_records(maps(work, "pipe.fa", "reads.fq").stdout)
    finally:
        writer.wait(timeout=60)
    assert len(records) == N_READS and all(r[0].endswith(f"_{r[3]}") for r in records)


# ----------------------------------------------------------------------------------------- bad reads

BAD_READS: dict[str, tuple[str, Maker, str]] = {
    "missing": ("nope.fq", nothing, "no such file"),
    "directory": ("readsdir", Path.mkdir, "is a directory"),
    "text": ("notes.txt", holding(GARBAGE_TEXT), "not valid FASTA/FASTQ"),
    "binary-fq": ("blob.fq", holding(GARBAGE_BINARY), "not valid FASTA/FASTQ"),
    "binary": ("blob", holding(GARBAGE_BINARY), "not valid FASTA/FASTQ"),
    "truncated-gz": ("cut.fq.gz", reads_gz_cut, "truncated"),
    "not-really-gz": ("plain.fq.gz", reads_misnamed_gz, "not valid"),
    "quality-length": ("badq.fq", holding("@r1\nACGTACGTAC\n+\nIIII\n"), "qualities"),
    "invalid-base": ("badb.fq", holding(fastq({"r1": "ACGTXACGTA"})), "invalid character 'X'"),
}


@pytest.mark.parametrize("case", BAD_READS)
def test_bad_reads(work: Path, case: str):
    name, make, expected = BAD_READS[case]
    make(work / name)
    # Small batches: with a truncated gz, some SAM is written before the error and must not survive.
    message = map_fails(work, "ref.fa", name, "--batch-size", "2")
    assert name in message and expected in message


@pytest.mark.parametrize("case", ["missing", "directory", "text", "invalid-base"])
def test_bad_reads_leave_stdout_empty(work: Path, case: str):
    """The first batch of reads is read and parsed before the index is loaded and the header written:
    a run to stdout (`> out.sam`) that fails on its reads writes nothing there, not even the header."""
    name, make, expected = BAD_READS[case]
    make(work / name)
    proc = seedmap(work, "map", "ref.fa", name)
    assert proc.returncode == 1 and proc.stdout == "", proc.stdout[:200]
    assert error_lines(proc.stderr) == [proc.stderr.strip()] and expected in proc.stderr, proc.stderr


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("paired", [False, True], ids=["single", "paired"])
def test_empty_reads_write_the_header(work: Path, paired: bool, gz: bool):
    """No reads: the header and exit 0, as bwa, minimap2 and bowtie2 (SAM to stdout, and BAM), with a log
    line that says so."""
    name = "empty.fq.gz" if gz else "empty.fq"
    (work / name).write_bytes(gzip.compress(b"") if gz else b"")
    reads = [name, name] if paired else [name]
    proc = maps(work, "ref.fa", *reads)
    lines = proc.stdout.splitlines()
    assert lines and all(line.startswith("@") for line in lines), proc.stdout
    assert lines[0].startswith("@HD") and any(line.startswith("@SQ\tSN:chr1\tLN:5000") for line in lines)
    assert ("no read pairs" if paired else "no reads") in proc.stderr and "Traceback" not in proc.stderr
    maps(work, "ref.fa", *reads, "-o", "out.bam")
    pysam = pytest.importorskip("pysam")
    with pysam.AlignmentFile(str(work / "out.bam"), "rb") as bam:
        assert list(bam.references) == ["chr1"] and list(bam.lengths) == [5000] and not list(bam)
    shutil.rmtree(work / "ref.fa.smi")  # without an index: the FASTA's names and lengths, no index built for nothing
    proc = maps(work, "ref.fa", *reads)
    assert proc.stdout.splitlines()[:2] == lines[:2] and "building" not in proc.stderr, proc.stderr


# ----------------------------------------------------------------------------------------- bad index


def edit_header(d: Path, change: Callable[[dict], object]) -> None:
    path = d / "ref.fa.smi" / "header.json"
    header = json.loads(path.read_text())
    change(header)
    path.write_text(json.dumps(header))


def flip_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 16] = bytes(b ^ 0xFF for b in data[mid:mid + 16])
    path.write_bytes(bytes(data))


def append(path: Path, text: str) -> None:
    with open(path, "a") as fh:
        fh.write(text)


def truncate(path: Path, size: int | None = None) -> None:
    with open(path, "r+b") as fh:
        fh.truncate(os.path.getsize(path) // 2 if size is None else size)


def swap_in_other_content(path: Path) -> None:
    """Same dtype and shape, other bytes: as if the file came from another index of the same size."""
    arr = np.load(path)
    np.save(path, np.roll(arr, 1) ^ np.ones_like(arr))


BAD_INDEXES: dict[str, tuple[Callable[[Path], object], str]] = {
    "other-version": (lambda d: edit_header(d, lambda h: h.update(format_version=999)), "version 999"),
    # A small array is sampled whole at every load; a large one by its ends (test_check_reads_everything).
    "corrupted": (lambda d: flip_middle(d / "ref.fa.smi" / "pos.npy"), "pos is corrupted"),
    "swapped-array": (lambda d: swap_in_other_content(d / "ref.fa.smi" / "ref_packed.npy"),
                      "ref_packed is corrupted or from another index"),
    "truncated-array": (lambda d: truncate(d / "ref.fa.smi" / "nbs.npy"), "nbs"),
    "extended-array": (lambda d: append(d / "ref.fa.smi" / "nbs.npy", "\0" * 8), "nbs has the wrong file size"),
    "missing-array": (lambda d: (d / "ref.fa.smi" / "nbs.npy").unlink(), "nbs"),
    "missing-header": (lambda d: (d / "ref.fa.smi" / "header.json").unlink(), "no index"),
    "garbled-header": (lambda d: (d / "ref.fa.smi" / "header.json").write_text("{\"format\": "), "header"),
    "reference-changed": (lambda d: append(d / "ref.fa", ">extra\nACGTACGTACGTACGT\n"), "out of date"),
}


@pytest.mark.parametrize("case", BAD_INDEXES)
def test_bad_index(work: Path, case: str):
    damage, expected = BAD_INDEXES[case]
    damage(work)
    message = map_fails(work)
    assert "ref.fa.smi" in message and expected in message


def test_bad_index_given_with_option(work: Path):
    message = map_fails(work, "ref.fa", "reads.fq", "--index", "elsewhere.smi")
    assert "elsewhere.smi" in message


def test_empty_index_array(work: Path):
    truncate(work / "ref.fa.smi" / "nbs.npy", 0)
    assert "nbs" in map_fails(work)


@pytest.mark.parametrize("drop", ["reference", "arrays", "params"])
def test_index_header_missing_field(work: Path, drop: str):
    edit_header(work, lambda h: h.pop(drop))
    assert "ref.fa.smi" in map_fails(work)


def test_index_header_missing_array(work: Path):
    edit_header(work, lambda h: h["arrays"].pop("nbs"))
    assert "ref.fa.smi" in map_fails(work)


# ------------------------------------------------------------------------------------------ seedmap check


def test_check_ok(work: Path):
    proc = seedmap(work, "check", "ref.fa")
    assert proc.returncode == 0 and proc.stdout == "ref.fa.smi: OK\n", proc.stderr
    proc = seedmap(work, "check", "ref.fa", "--index", "ref.fa.smi", "-q")
    assert proc.returncode == 0 and proc.stdout == "ref.fa.smi: OK\n" and proc.stderr == ""


def test_index_without_sample_checksums_loads(work: Path):
    """Indexes written before the sampled checksums have only the full ones: they load and check."""
    edit_header(work, lambda h: [d.pop("sample_crc32") for d in h["arrays"].values()])
    maps(work, "ref.fa", "reads.fq", "-o", "out.sam")
    assert seedmap(work, "check", "ref.fa").returncode == 0


def flip_byte(path: Path, at: float = 0.5) -> None:
    """Flip one byte of the array stored at path, `at` of the way into its data (past the .npy header)."""
    arr = np.load(path, mmap_mode="r")
    offset, nbytes = arr.offset, arr.nbytes
    del arr
    where = offset + min(int(nbytes * at), nbytes - 1)
    with open(path, "r+b") as fh:
        fh.seek(where)
        byte = fh.read(1)[0]
        fh.seek(where)
        fh.write(bytes([byte ^ 0x01]))


def index_arrays(d: Path) -> list[str]:
    return list(json.loads((d / "ref.fa.smi" / "header.json").read_text())["arrays"])


def test_one_flipped_byte_in_any_array_is_refused(work: Path):
    """One flipped bit anywhere in any stored array, sampled or not: map refuses it before writing anything."""
    names = [n for n in index_arrays(work) if np.load(work / "ref.fa.smi" / f"{n}.npy", mmap_mode="r").nbytes]
    assert len(names) > 3  # (an empty array, as ref_iupac_pos of a reference without IUPAC codes, has no byte)
    pristine = work / "pristine.smi"
    shutil.copytree(work / "ref.fa.smi", pristine)
    for name in names:
        for at in (0.0, 0.5, 0.999):
            shutil.rmtree(work / "ref.fa.smi")
            shutil.copytree(pristine, work / "ref.fa.smi")
            flip_byte(work / "ref.fa.smi" / f"{name}.npy", at)
            message = map_fails(work)
            assert "ref.fa.smi" in message and f"array {name} is corrupted" in message, (name, at)
            assert not (work / "out.sam").exists()


def test_check_reads_everything(work: Path):
    """Damage outside the sampled blocks of a large array: the cheap checks do not see it, the full check
    that map makes (the files changed since they were verified) and check do."""
    from seedmap.index import store

    path = work / "ref.fa.smi" / "seed_start.npy"
    arr = np.load(path, mmap_mode="r")
    nbytes = arr.nbytes
    del arr
    blocks = store.sample_blocks(nbytes)
    assert len(blocks) > 1  # the array is sampled, not read whole
    assert not any(a <= nbytes // 2 < b for a, b in blocks)
    flip_byte(path)
    header = store.read_header(work / "ref.fa.smi")
    store._load_array(work / "ref.fa.smi", "seed_start", header["arrays"]["seed_start"])  # no error: not sampled
    message = map_fails(work)
    assert "ref.fa.smi" in message and "seed_start is corrupted (checksum mismatch)" in message
    message = fails_cleanly(work, "check", "ref.fa")
    assert "ref.fa.smi" in message and "seed_start is corrupted" in message


def test_index_is_verified_once_per_state(work: Path, monkeypatch: pytest.MonkeyPatch,
                                          tmp_path_factory: pytest.TempPathFactory):
    """The full check runs at the first load and after any change to the files (or a copy), not in between;
    its stamp goes to the user's cache when the index directory takes none."""
    from seedmap.index import store

    monkeypatch.setattr(store, "RACY_NS", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    passes = []
    crc = store._crc
    monkeypatch.setattr(store, "_crc", lambda arr, progress=None: passes.append(1) or crc(arr, progress))
    index = work / "ref.fa.smi"
    (index / store.STAMP).unlink(missing_ok=True)

    def full_checks() -> int:
        passes.clear()
        store.load(index, "neighborhood", (), work / "ref.fa")
        return len(passes)

    arrays = len(index_arrays(work))
    assert full_checks() == arrays
    assert full_checks() == 0
    os.utime(index / "nbs.npy")  # a touch: the file may have changed
    assert full_checks() == arrays
    assert full_checks() == 0
    shutil.copytree(index, work / "copy.smi")
    shutil.rmtree(index)
    os.rename(work / "copy.smi", index)  # the same names and mtimes, other files
    assert full_checks() == arrays
    (index / store.STAMP).unlink()
    (index / store.STAMP).mkdir()  # unwritable there, whoever runs the test (root writes read-only directories)
    assert full_checks() == arrays
    assert full_checks() == 0  # stamped in the user's cache
    assert any((Path(os.environ["XDG_CACHE_HOME"]) / "seedmap" / "verified").iterdir())


def test_check_without_index(work: Path):
    shutil.rmtree(work / "ref.fa.smi")
    assert "no index found" in fails_cleanly(work, "check", "ref.fa")
    assert "elsewhere.smi: no index here" in fails_cleanly(work, "check", "ref.fa", "--index", "elsewhere.smi")


def test_check_out_of_date(work: Path):
    append(work / "ref.fa", ">extra\nACGTACGTACGTACGT\n")
    assert "out of date" in fails_cleanly(work, "check", "ref.fa")


# ------------------------------------------------------------------------------------ bad option values


def assert_usage_error(proc: subprocess.CompletedProcess, option: str) -> None:
    """argparse's usual form: usage lines, then `seedmap map: error: argument OPTION: ...`, exit 2."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("usage: seedmap map"), proc.stderr
    assert lines[-1].startswith("seedmap map: error: argument ") and option in lines[-1], proc.stderr
    assert all(line.startswith(("usage:", " ")) for line in lines[:-1]), proc.stderr


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("-e", "-1"),
        ("-e", "2.5"),
        ("-e", "lots"),
        ("-t", "0"),
        ("-t", "two"),
        ("-e", "inf"),
        ("-e", "nan"),
    ],
)
def test_bad_option_value(work: Path, option: str, value: str):
    before = sorted(os.listdir(work))
    proc = seedmap(work, "map", "ref.fa", "reads.fq", "-o", "out.sam", option, value)
    assert_usage_error(proc, option)
    assert sorted(os.listdir(work)) == before


# ------------------------------------------------------------------------- -e beyond a quarter of the read


@pytest.mark.parametrize("to_file", [True, False])
@pytest.mark.parametrize("errors", ["50", "21", "0.6"])
def test_errors_beyond_a_quarter_are_refused(work: Path, errors: str, to_file: bool):
    """-e above a quarter of these 80 bp reads (20 edits, rate 0.25) is refused at once: exactly one line on
    stderr saying why and what is allowed, no output file, nothing on stdout (such a run would not end)."""
    before = sorted(os.listdir(work))
    t0 = time.monotonic()
    proc = seedmap(work, "map", "ref.fa", "reads.fq", "-e", errors, *(("-o", "out.sam") if to_file else ()))
    assert time.monotonic() - t0 < 5
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"seedmap: error: -e {errors}: "), proc.stderr
    assert "quarter" in lines[0] or "above 0.25" in lines[0]
    assert ("at most -e 0.25" if "." in errors else "at most -e 20") in lines[0]
    assert sorted(os.listdir(work)) == before


@pytest.mark.parametrize("errors", ["20", "0.25"])
def test_errors_of_a_quarter_maps(work: Path, errors: str):
    records = sam_records(maps(work, "ref.fa", "reads.fq", "-e", errors).stdout)
    assert all(r[0].endswith(f"_{r[3]}") for r in records if not int(r[1]) & 256)  # each primary at its origin


def test_error_count_is_cut_to_a_quarter_of_short_reads(work: Path):
    """-e 8 suits the typical 80 bp read; a 24 bp read among them is searched with 6 edits (logged), so its
    origin with 7 substitutions is not reported."""
    genome = "".join((work / "ref.fa").read_text().splitlines()[1:])
    short = list(genome[1000:1024])
    for i in (1, 4, 7, 10, 13, 16, 19):
        short[i] = "ACGT"[("ACGT".index(short[i]) + 2) % 4]
    with open(work / "reads.fq", "a") as fh:
        fh.write(fastq({"short": "".join(short)}))
    proc = maps(work, "ref.fa", "reads.fq", "-e", "8")
    assert "reads of 24 bp are searched with 6 edits, not 8" in proc.stderr, proc.stderr
    nms = [int(t[5:]) for r in sam_records(proc.stdout) if r[0] == "short" for t in r[11:] if t.startswith("NM")]
    assert all(nm <= 6 for nm in nms)


def test_errors_per_read_at_most_a_quarter():
    from seedmap.options import MapOptions

    lengths = np.array([10, 19, 20, 24, 31, 32, 80])
    assert MapOptions(errors=8).read_errors(lengths).tolist() == [10, 19, 5, 6, 7, 8, 8]
    assert MapOptions(errors=0.25).read_errors(lengths).tolist() == [10, 19, 5, 6, 7, 8, 20]
    assert MapOptions(errors=0.05).read_errors(lengths).tolist() == [10, 19, 1, 1, 1, 1, 4]


@pytest.mark.parametrize(("errors", "genome", "slow"), [(8, 3_100_000_000, True), (6, 3_100_000_000, False),
                                                        (20, 294_000, True), (16, 294_000, False)])
def test_slow_errors_are_warned(caplog: pytest.LogCaptureFixture, errors: int, genome: int, slow: bool):
    """100 bp reads: more than 10,000 random places per read for their e + 1 pigeonhole pieces is a warning."""
    from seedmap.options import MapOptions
    from seedmap.pipeline.inputs import warn_if_slow

    with caplog.at_level(logging.WARNING, logger="seedmap"):
        warn_if_slow(MapOptions(errors=errors), np.full(100, 100), genome)
    assert ("very slow" in caplog.text) == slow, caplog.text


# ------------------------------------------------------------------------------------ bad output paths


@pytest.mark.parametrize("target", ["no_such_dir/out.sam", "a_dir"])
def test_bad_output_path_names_it(work: Path, target: str):
    (work / "a_dir").mkdir()
    message = fails_cleanly(work, "map", "ref.fa", "reads.fq", "-o", target)
    assert target in message and ".tmp" not in message


# ----------------------------------------------------------------------------------- inputs that map


def test_output_file_equals_stdout(work: Path):
    to_stdout = maps(work, "ref.fa", "reads.fq").stdout
    proc = maps(work, "ref.fa", "reads.fq", "-o", "out.sam")
    assert proc.stdout == ""
    assert sorted(os.listdir(work)) == ["out.sam", "reads.fq", "ref.fa", "ref.fa.smi"]
    to_file = (work / "out.sam").read_text()
    assert sam_lines(to_file, keep_pg=False) == sam_lines(to_stdout, keep_pg=False)
    records = sam_records(to_file)
    assert len(records) == N_READS and all(r[0].endswith(f"_{r[3]}") for r in records)  # each at its origin
    assert any(line.startswith("@PG") and "-o out.sam" in line for line in sam_lines(to_file))


def test_output_file_mode_follows_umask(work: Path):
    saved = os.umask(0o022)  # inherited by the child
    try:
        maps(work, "ref.fa", "reads.fq", "-o", "out.sam")
    finally:
        os.umask(saved)
    assert stat.S_IMODE((work / "out.sam").stat().st_mode) == 0o644


def test_gz_reads_map_like_plain(work: Path):
    (work / "reads.fq.gz").write_bytes(gzip.compress((work / "reads.fq").read_bytes()))
    plain = maps(work, "ref.fa", "reads.fq").stdout
    packed = maps(work, "ref.fa", "reads.fq.gz").stdout
    assert sam_records(packed) == sam_records(plain)


def test_fasta_reads_have_no_qualities(work: Path):
    lines = (work / "reads.fq").read_text().splitlines()
    names = [line[1:] for line in lines[0::4]]
    (work / "reads.fa").write_text(fasta(dict(zip(names, lines[1::4], strict=True)), width=30))
    records = sam_records(maps(work, "ref.fa", "reads.fa").stdout)
    assert len(records) == N_READS
    assert all(r[10] == "*" for r in records)
    assert all(r[9] == seq for r, seq in zip(records, lines[1::4], strict=True))


def test_secondary_records_seq_and_qual(work: Path):
    """Secondary records carry SEQ and QUAL '*' (as bwa mem and minimap2 write them); --secondary-seq keeps
    them. Every other field is the same either way."""
    genome = "".join((work / "ref.fa").read_text().splitlines()[1:])
    (work / "twice.fa").write_text(fasta({"a": genome, "b": genome}))
    lines = (work / "reads.fq").read_text().splitlines()
    short = sam_records(maps(work, "twice.fa", "reads.fq").stdout)
    full = sam_records(maps(work, "twice.fa", "reads.fq", "--secondary-seq").stdout)
    assert len(short) == len(full) == 2 * N_READS
    for s, f, seq, qual in zip(short[1::2], full[1::2], lines[1::4], lines[3::4], strict=True):
        assert int(s[1]) & 256 and s[9] == s[10] == "*"
        assert f[9] == seq and f[10] == qual
        assert s[:9] == f[:9] and s[11:] == f[11:]
    assert short[0::2] == full[0::2]
    assert all(r[9] == seq for r, seq in zip(short[0::2], lines[1::4], strict=True))


def test_messy_reference_maps(tmp_path: Path):
    """Lowercase, IUPAC codes, ragged lines and an empty record: valid; the empty record is skipped."""
    rng = np.random.default_rng(SEED + 1)
    chr_a = random_dna(rng, 1500).lower()
    chr_c = random_dna(rng, 1200)
    chr_c = chr_c[:100] + "RYNNNRY" + chr_c[107:]
    text = ragged_fasta([("chrA", chr_a), ("hollow", ""), ("chrC", chr_c)], rng, min_width=5, description="description")
    (tmp_path / "messy.fa").write_text(text)
    reads = {f"a_{s + 1}": chr_a[s:s + READ_LENGTH].upper() for s in (0, 333, 1500 - READ_LENGTH)}
    reads |= {f"c_{s + 1}": chr_c[s:s + READ_LENGTH] for s in (200, 777, 1200 - READ_LENGTH)}
    (tmp_path / "reads.fq").write_text(fastq(reads))

    proc = maps(tmp_path, "messy.fa", "reads.fq")
    assert error_lines(proc.stderr) == []
    assert any("hollow" in line and "empty" in line for line in proc.stderr.splitlines()), proc.stderr
    assert [line for line in proc.stdout.splitlines() if line.startswith("@SQ")] == [
        "@SQ\tSN:chrA\tLN:1500", "@SQ\tSN:chrC\tLN:1200"]
    placed = {r[0]: (r[2], r[3], r[1]) for r in sam_records(proc.stdout)}
    assert placed == {name: ("chrA" if name[0] == "a" else "chrC", name[2:], "0") for name in reads}


def _vm_flags(path: Path) -> list[list[str]]:
    """The VmFlags of this process's mappings of `path` (/proc/self/smaps)."""
    flags, current = [], None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if re.fullmatch(r"[0-9a-f]+-[0-9a-f]+", head[0]):  # a mapping's first line (an anonymous one has no path)
            current = " ".join(head[5:])
        elif head[0] == "VmFlags:" and current == str(path):
            flags.append(head[1:])
    return flags


def _largest_and_smallest(index: Path, header: dict, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The index's largest and smallest arrays, with HUGE_PAGES_FROM set between them (half the largest's file)."""
    from seedmap.index import store

    sizes = {name: (index / f"{name}.npy").stat().st_size for name in header["arrays"]}
    big, small = max(sizes, key=sizes.get), min(sizes, key=sizes.get)
    monkeypatch.setattr(store, "HUGE_PAGES_FROM", sizes[big] // 2)
    return big, small


def _cached_pages(file: Path) -> int:
    """Pages of a file in the page cache (mincore over a private mapping, which touches none of them)."""
    import ctypes
    import mmap

    size = file.stat().st_size
    with open(file, "rb") as fh:
        mm = mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_COPY)
    pages = -(-size // mmap.PAGESIZE)
    vec = (ctypes.c_ubyte * pages)()
    buf = (ctypes.c_char * size).from_buffer(mm)
    libc = ctypes.CDLL(None, use_errno=True)
    ok = libc.mincore(ctypes.c_void_p(ctypes.addressof(buf)), ctypes.c_size_t(size), vec) == 0
    del buf
    mm.close()
    assert ok, os.strerror(ctypes.get_errno())
    return sum(v & 1 for v in vec)


def _on_tmpfs(path: Path) -> bool:
    """Whether path lies on a tmpfs (whose pages are the files themselves: never dropped)."""
    mounts = [line.split()[1:3] for line in Path("/proc/mounts").read_text().splitlines()]
    real = os.path.realpath(path)
    _, fs = max(((m, f) for m, f in mounts if real == m or real.startswith(m.rstrip("/") + "/")),
                key=lambda mf: len(mf[0]))  # the innermost mount holding it
    return fs == "tmpfs"


@pytest.mark.skipif(not Path("/proc/mounts").exists() or not hasattr(os, "posix_fadvise"), reason="Linux")
def test_large_arrays_written_leave_the_page_cache(work: Path, monkeypatch: pytest.MonkeyPatch):
    """An array of HUGE_PAGES_FROM bytes or more is out of the page cache once written (so that a run maps it
    back in 2 MB pages); a smaller one stays cached as written."""
    from seedmap.index import store

    if _on_tmpfs(work):
        pytest.skip("a tmpfs keeps every page")
    index = work / "ref.fa.smi"
    header = store.read_header(index)
    big, small = _largest_and_smallest(index, header, monkeypatch)
    st = store.load(index, header["kind"], ())
    out = work / "copy.smi"
    store.save(out, st.kind, st.params, st.reference, st.arrays, None)
    assert _cached_pages(out / f"{big}.npy") == 0
    assert _cached_pages(out / f"{small}.npy") > 0


@pytest.mark.skipif(not Path("/proc/self/smaps").exists() or not hasattr(__import__("mmap"), "MADV_HUGEPAGE"),
                    reason="Linux's smaps and madvise")
def test_large_arrays_ask_for_huge_pages(work: Path, monkeypatch: pytest.MonkeyPatch):
    """An index array of HUGE_PAGES_FROM bytes or more is mapped with MADV_HUGEPAGE (VmFlags hg), a smaller one
    is not."""
    from seedmap.index import store

    index = work / "ref.fa.smi"
    header = store.read_header(index)
    big, small = _largest_and_smallest(index, header, monkeypatch)
    arrays = {name: store._load_array(index, name, header["arrays"][name]) for name in (big, small)}
    big_flags, small_flags = _vm_flags(index / f"{big}.npy"), _vm_flags(index / f"{small}.npy")
    assert big_flags and all("hg" in f for f in big_flags)
    assert small_flags and not any("hg" in f for f in small_flags)
    del arrays
