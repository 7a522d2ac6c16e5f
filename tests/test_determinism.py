"""The same SAM for every thread count and batch size; the example's reads map as expected."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from helpers import EXAMPLES, decode, map_example

from seedmap.index.kmer import KmerParams
from seedmap.index.neighborhood import NeighborhoodParams
from seedmap.io.reference import read_fasta
from seedmap.kinds import build_index
from seedmap.pipeline import RunOptions
from seedmap.pipeline.run import run_map


@pytest.fixture(scope="module")
def indexed_example(tmp_path_factory) -> Path:
    ref = tmp_path_factory.mktemp("example") / "ref.fa.gz"
    ref.write_bytes((EXAMPLES / "ref.fa.gz").read_bytes())
    build_index(str(ref), None, "neighborhood", NeighborhoodParams(10, 16))
    build_index(str(ref), None, "kmer", KmerParams(12))
    return ref



def test_same_output_for_threads_and_batches(indexed_example, tmp_path):
    """Worker threads map batches side by side: the output is the same for 1, 2, 3 threads and any batch."""
    a = map_example(indexed_example, tmp_path / "a.sam", threads=1, batch=20_000)  # the default batch size
    b = map_example(indexed_example, tmp_path / "b.sam", threads=2, batch=777)
    c = map_example(indexed_example, tmp_path / "c.sam", threads=3, batch=1)
    g = map_example(indexed_example, tmp_path / "g.sam", threads=3, batch=20_000)
    d = map_example(indexed_example, tmp_path / "d.sam", threads=2, batch=5000, kind="kmer")
    f = map_example(indexed_example, tmp_path / "f.sam", threads=1, batch=300, kind="kmer", adjacency=2)
    assert a == b == c == g == d == f
    records = [line for line in a if not line.startswith("@")]
    assert len({r.split("\t")[0] for r in records}) == 5000  # every read written, in input order
    assert [r.split("\t")[0] for r in records if int(r.split("\t")[1]) & 256 == 0] == [
        f"read{i}" for i in range(5000)]


def _origins() -> dict[str, tuple[str, int, str]]:
    origin = {}
    with gzip.open(EXAMPLES / "reads.fq.gz", "rt") as fh:
        for i, line in enumerate(fh):
            if i % 4 == 0:
                name, tag = line[1:].split()
                chrom, rest = tag.split("=")[1].split(":")
                origin[name] = (chrom, int(rest[:-1]), rest[-1])
    return origin


def test_example_reads_found_at_their_origin(indexed_example, tmp_path):
    """Reads carry origin=chrom:pos±; they have up to 6 edits, so with e = 6 each read's origin is among
    its locations, except (a) inside the 7 bp tandem repeat of chr1, which is one run of hits and so one
    location, reported at its best end, and (b) over N and IUPAC codes, which never match."""
    ref = read_fasta(EXAMPLES / "ref.fa.gz")
    chr1 = decode(ref.codes()[: ref.starts[1]])
    rep_start = chr1.index("ACGTTGA" * 10)
    rep_end = chr1.rindex("ACGTTGA" * 10) + 70
    codes = ref.codes()
    bounds = zip(ref.names, ref.starts[:-1], ref.starts[1:], strict=True)
    seqs = {name: decode(codes[a:b]) for name, a, b in bounds}
    origin = _origins()
    lines = map_example(indexed_example, tmp_path / "e6.sam", threads=2, batch=100_000, errors=6)
    found = dict.fromkeys(origin, False)
    for line in lines:
        f = line.split("\t")
        if line.startswith("@") or int(f[1]) & 4:
            continue
        chrom, pos, strand = origin[f[0]]
        same = f[2] == chrom and abs(int(f[3]) - pos) <= 6 and ((int(f[1]) & 16) != 0) == (strand == "-")
        found[f[0]] |= same
    missed = [origin[name] for name, ok in found.items() if not ok]
    for chrom, pos, _ in missed:
        in_repeat = chrom == "chr1" and rep_start - 110 <= pos - 1 <= rep_end
        over_iupac = "N" in seqs[chrom][pos - 1: pos + 105]
        assert in_repeat or over_iupac, (chrom, pos)
    assert len(missed) < 50


def test_same_bam_for_threads_and_batches(indexed_example, tmp_path):
    """BGZF blocks are cut at fixed offsets of the record stream: byte-identical BAM whatever the threads
    and batches, holding exactly the SAM records."""
    import pysam

    bams = [tmp_path / f"{t}_{b}.bam" for t, b in ((1, 20_000), (2, 777), (3, 1))]
    for path, (t, b) in zip(bams, ((1, 20_000), (2, 777), (3, 1)), strict=True):
        run_map(RunOptions(
            reference=str(indexed_example), reads=str(EXAMPLES / "reads.fq.gz"), output=str(path), threads=t,
            batch_size=b, command_line="seedmap test"))
    data = [p.read_bytes() for p in bams]
    assert data[0] == data[1] == data[2]
    sam = map_example(indexed_example, tmp_path / "a.sam", threads=2, batch=20_000)
    with pysam.AlignmentFile(str(bams[0]), "rb") as fh:
        assert [r.to_string() for r in fh] == [line for line in sam if not line.startswith("@")]
