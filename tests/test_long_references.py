"""References past 32-bit limits: positions beyond 2^31 and 2^32, sequences longer than 2^31, more than 65,536
sequences, names of any length.

The large references are built lazily: a 3-4 Gbp Reference whose packed and N-mask arrays are np.zeros (pages
never touched cost no memory) with a few reads' worth of sequence planted at large positions, and an index of
just those regions (built with the ordinary builder on a small reference of the same regions, its positions
shifted to where the regions lie in the large one). Everything from the candidate windows to the SAM and BAM
records then runs on real 64-bit and unsigned 32-bit positions.
"""

from __future__ import annotations

import struct

import numpy as np
import pysam
import pytest
from helpers import COMP, batch_of, fasta, fastq, maps, random_dna, random_genome, sam_records, seedmap

from seedmap.engines.factory import neighborhood_engine
from seedmap.engines.kmer import KmerEngine
from seedmap.errors import SeedmapError
from seedmap.filter.kmer_seeds import _range
from seedmap.filter.windows import emit_windows
from seedmap.index import kmer, neighborhood
from seedmap.io.bam_encode import bam_header
from seedmap.io.reference import Reference
from seedmap.pipeline import EngineOptions, MapOptions, SamFormatter, map_batch
from seedmap.verify.bulk import bulk_distances

READ = 100
FLANK = 40  # bases of A around each planted read (the large reference is all A elsewhere)


# ------------------------------------------------------------------------------------- kernel arithmetic


def test_emit_windows_of_positions_past_2_31():
    """uint32 index positions past 2^31 (a < 4 Gbp reference) give int64 windows clipped to their sequence."""
    starts = np.array([0, 2_500_000_000, 3_100_000_000, 4_000_000_000], dtype=np.int64)
    pos = np.array([2_147_483_600, 2_500_000_003, 3_099_999_990, 3_999_999_999], dtype=np.uint32)
    n = pos.size
    ws, we, wd = (np.zeros(n, dtype=np.int64) for _ in range(3))
    m, e, o = 100, 4, 7
    assert emit_windows(o, 0, n, m, e, pos, starts, 0, ws, we, wd) == n
    p = pos.astype(np.int64)
    s = np.searchsorted(starts, p, side="right") - 1
    assert list(wd) == list(p - o)
    assert list(ws) == list(np.maximum(p - o - e, starts[s]))
    assert list(we) == list(np.minimum(p - o + m + e, starts[s + 1]))
    assert ws[1] == 2_500_000_000 and we[2] == 3_100_000_000  # clipped at both ends of sequence 1


def test_kmer_ranges_past_2_31():
    """The k-mer table's uint32 offsets (< 2^32 positions) read as int64 ranges."""
    k = 2
    offsets = (np.arange(4**k + 1, dtype=np.int64) * 7 + 3_000_000_000).astype(np.uint32)
    q = np.array([3, 2, 1], dtype=np.uint8)
    lo, hi = _range(q, 0, 2, k, offsets)  # TG = 14
    assert (lo, hi) == (3_000_000_000 + 14 * 7, 3_000_000_000 + 15 * 7)
    assert _range(q, 0, 1, k, offsets) == (3_000_000_000 + 12 * 7, 3_000_000_000 + 16 * 7)  # T* prefix


def test_bam_refuses_sequences_longer_than_2_31():
    assert bam_header("@HD\tVN:1.6\n", ["a", "b"], [2**31 - 1, 5])  # the longest that fits
    with pytest.raises(SeedmapError, match=r"'big' is 2147483648 bp: BAM holds positions up to 2\^31 - 1"):
        bam_header("@HD\tVN:1.6\n", ["a", "big"], [5, 2**31])


# ------------------------------------------------------------------------------ lazily allocated genomes


def plant(packed: np.ndarray, at: int, codes: np.ndarray) -> None:
    where = at + np.arange(codes.size)
    np.bitwise_or.at(packed, where >> 2, (codes.astype(np.uint8) << (2 * (where & 3))).astype(np.uint8))


def shifted(pos: np.ndarray, small: Reference, at: np.ndarray, dtype: type) -> np.ndarray:
    """Positions in the small reference (one sequence per planted region) -> in the large one."""
    s = np.searchsorted(small.starts, pos, side="right") - 1
    return (pos.astype(np.int64) - small.starts[s] + at[s]).astype(dtype)


@pytest.fixture(scope="module", params=[3_200_000_000, 4_400_000_000], ids=["uint32-positions", "int64-positions"])
def large(request):
    """(reference, reads, where each read lies): sequence big is 2.9 Gbp long (positions within it pass 2^31),
    sequence far starts at 2.9 Gbp and ends at `total` (3.2 Gbp: index positions are uint32 and pass 2^31;
    4.4 Gbp: int64, passing 2^32)."""
    total = request.param
    names = ["big", "far"]
    starts = np.array([0, 2_900_000_000, total], dtype=np.int64)
    rng = np.random.default_rng(31)
    at = np.array([2**31 - 50, 2**31 + 12_345, 2_900_000_000 + 77, total - 5_000], dtype=np.int64)
    if total > 2**32:
        at[3] = 2**32 + 1_234  # past 2^32
    reads = [random_genome(rng, READ) for _ in at]
    packed = np.zeros(total // 4, dtype=np.uint8)  # lazily zeroed: only the planted pages are touched
    nmask = np.zeros(total // 8, dtype=np.uint8)
    for p, r in zip(at, reads, strict=True):
        plant(packed, int(p), r)
    ref = Reference(names, starts, packed, nmask)
    # The same regions with their flanks, one sequence each.
    flank = np.zeros(FLANK, dtype=np.uint8)
    small = Reference.from_codes([f"r{i}" for i in range(at.size)], [np.concatenate([flank, r, flank]) for r in reads])
    region = at - FLANK
    return ref, small, region, reads, at


def large_engine(kind: str, ref: Reference, small: Reference, region: np.ndarray):
    dtype = np.uint32 if ref.total < 2**32 else np.int64  # as index/words.py chooses
    if kind == "kmer":
        ix = kmer.build(small, 10)
        ix.pos = shifted(ix.pos, small, region, dtype)
        return KmerEngine(ix, ref.starts, bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask)
    ix = neighborhood.build(small, 8, 12)
    ix.pos = shifted(ix.pos, small, region, dtype)
    return neighborhood_engine(ix, ref.starts, EngineOptions())


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["neighborhood", "kmer"])
def test_map_past_2_31_and_2_32(large, kind: str):
    ref, small, region, reads, at = large
    engine = large_engine(kind, ref, small, region)
    assert engine.index.pos.dtype == (np.uint32 if ref.total < 2**32 else np.int64)
    assert int(engine.index.pos.max()) > 2**31
    queries = [r if i % 2 == 0 else COMP[r[::-1]] for i, r in enumerate(reads)]  # both strands
    batch = batch_of(queries)
    fmt = SamFormatter(ref)
    text, stats = map_batch(batch, engine, fmt, MapOptions(errors=0.05))
    assert stats.mapped == len(reads)
    records = [line.split("\t") for line in bytes(text).decode().splitlines()]
    assert len(records) == len(reads)
    for i, rec in enumerate(records):
        s = int(np.searchsorted(ref.starts, at[i], side="right") - 1)
        assert rec[0] == f"r{i}" and int(rec[1]) == (16 if i % 2 else 0)
        assert rec[2] == ref.names[s] and int(rec[3]) == at[i] - ref.starts[s] + 1, rec[:6]
        assert rec[5] == f"{READ}M" and "NM:i:0" in rec
    assert int(records[1][3]) == 2**31 + 12_345 + 1  # a SAM POS past 2^31 - 1 (htslib reads 64-bit POS)
    # BAM refuses "big" (2.9 Gbp); records in "far" still encode, their positions relative to it.
    with pytest.raises(SeedmapError, match="'big'"):
        bam_header("", ref.names, ref.lengths)
    far = [i for i in range(len(reads)) if at[i] >= ref.starts[1]]
    one = batch_of([queries[i] for i in far])
    data, _ = map_batch(one, engine, SamFormatter(ref, bam=True), MapOptions(errors=0.05))
    data = bytes(data)
    p = 0
    for i in far:
        size, ref_id, pos = struct.unpack_from("<iii", data, p)
        assert ref_id == 1 and pos == at[i] - ref.starts[1]
        p += 4 + size
    assert p == len(data)


# --------------------------------------------------------------------- many sequences and long names


N_TINY = 70_000
LONG = {66_000, 69_999}  # tiny records with 1,000+ character names


def tiny_name(i: int) -> str:
    return f"s{i}_" + "L" * 1100 if i in LONG else f"s{i}"


@pytest.fixture(scope="module")
def scaffolds(tmp_path_factory: pytest.TempPathFactory):
    """70,000 records of 30-60 bp, then a 20 kbp one with a 1,200-character name (record 70,001: its
    index is past 65,536); reads from the long one and whole tiny records."""
    d = tmp_path_factory.mktemp("scaffolds")
    rng = np.random.default_rng(65_537)
    records = {tiny_name(i): random_dna(rng, int(rng.integers(30, 61))) for i in range(N_TINY)}
    main_name = "main_" + "m" * 1200
    main = random_dna(rng, 20_000)
    records[main_name] = main
    (d / "ref.fa").write_text(fasta(records))
    reads, truth = {}, {}
    for j, s in enumerate(rng.integers(0, len(main) - READ, 12)):
        reads[f"m{j}"] = main[s:s + READ]
        truth[f"m{j}"] = (main_name, int(s) + 1)
    for i in (0, 65_535, 65_536, 65_537, 66_000, 69_999):
        reads[f"t{i}"] = records[tiny_name(i)]
        truth[f"t{i}"] = (tiny_name(i), 1)
    (d / "reads.fq").write_text(fastq(reads))
    proc = seedmap(d, "index", "ref.fa")
    assert proc.returncode == 0, proc.stderr
    return d, records, truth


def check_sam(text: str, records: dict[str, str], truth: dict[str, tuple[str, int]]) -> None:
    sq = [line.split("\t") for line in text.splitlines() if line.startswith("@SQ")]
    assert len(sq) == N_TINY + 1
    assert [f[1][3:] for f in sq] == list(records)
    assert [int(f[2][3:]) for f in sq] == [len(s) for s in records.values()]
    got = {r[0]: (r[2], int(r[3])) for r in sam_records(text) if not int(r[1]) & 256}
    assert got == truth


@pytest.mark.parametrize("engine", ["neighborhood", "kmer", "fm"])
def test_more_than_65536_sequences(scaffolds, engine: str):
    d, records, truth = scaffolds
    proc = maps(d, "ref.fa", "reads.fq", "--engine", engine)  # kmer and fm: indexes built in memory
    check_sam(proc.stdout, records, truth)


def test_more_than_65536_sequences_bam(scaffolds):
    d, records, truth = scaffolds
    maps(d, "ref.fa", "reads.fq", "-o", "out.bam")
    with pysam.AlignmentFile(str(d / "out.bam"), "rb") as bam:
        assert bam.nreferences == N_TINY + 1
        assert list(bam.references) == list(records)
        assert list(bam.lengths) == [len(s) for s in records.values()]
        got = {r.query_name: (r.reference_name, r.reference_start + 1) for r in bam if not r.is_secondary}
    assert got == truth
    proc = seedmap(d, "check", "ref.fa")  # the index of 70,001 names checks too
    assert proc.returncode == 0 and proc.stdout == "ref.fa.smi: OK\n"
