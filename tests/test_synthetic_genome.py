"""benchmarks/synthetic_genome.py: deterministic, the requested size, and the features it promises."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

SIZE = 600_000
SEED = 11


def _module():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "synthetic_genome.py"
    spec = importlib.util.spec_from_file_location("synthetic_genome", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


sg = _module()


def parse(path: Path) -> dict[str, str]:
    records = {}
    for block in path.read_text().split(">")[1:]:
        header, _, body = block.partition("\n")
        lines = body.split("\n")
        assert lines[-1] == "" and all(0 < len(line) <= sg.WIDTH for line in lines[:-1])
        records[header.split()[0]] = "".join(lines)
    return records


@pytest.fixture(scope="module")
def genome(tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("synthetic")
    summary = sg.write_genome(d / "g.fa", SIZE, seed=SEED, bed=d / "g.bed")
    return d, summary, parse(d / "g.fa")


def test_deterministic(genome, tmp_path: Path):
    d, _, _ = genome
    sg.write_genome(tmp_path / "again.fa", SIZE, seed=SEED, bed=tmp_path / "again.bed")
    assert (tmp_path / "again.fa").read_bytes() == (d / "g.fa").read_bytes()
    assert (tmp_path / "again.bed").read_bytes() == (d / "g.bed").read_bytes()
    sg.write_genome(tmp_path / "other.fa", SIZE, seed=SEED + 1)
    assert (tmp_path / "other.fa").read_bytes() != (d / "g.fa").read_bytes()
    sg.write_genome(tmp_path / "g.fa.gz", SIZE, seed=SEED)
    import gzip

    assert gzip.decompress((tmp_path / "g.fa.gz").read_bytes()) == (d / "g.fa").read_bytes()


def test_size_records_and_features(genome):
    _, summary, records = genome
    assert list(records) == summary.names == [f"chr{i}" for i in range(1, 6)] + ["chrUn_scaffold1",
                                                                                "chrUn_scaffold2"]
    assert [len(s) for s in records.values()] == summary.lengths
    assert sum(summary.lengths) == SIZE
    text = "".join(records.values())
    assert set(text) <= set("ACGTacgtNRYKMSWBDHV")
    assert text.count("N") == summary.n_bases > 0
    for name, seq in records.items():
        if name.startswith("chr") and not name.startswith("chrUn"):
            assert seq.startswith("N" * 100) and seq.endswith("N" * 100)  # telomere gaps
            assert re.search("[acgt]N{100,}[acgt]", seq)  # the centromere: satellite around a gap
        assert re.search("[RYKMSWBDHV]", seq)  # at least one IUPAC code per record
    assert len(re.findall("[RYKMSWBDHV]", text)) == summary.iupac
    assert sum(c.islower() for c in text) == summary.lowercase
    fractions = {k: summary.bases[k] / SIZE for k in sg.KIND_NAMES}
    assert 0.07 < fractions["Alu"] < 0.11 and 0.10 < fractions["L1"] < 0.17
    assert 0.01 < fractions["microsatellite"] < 0.03 and fractions["satellite"] > 0.005
    assert 0.025 < fractions["segdup"] < 0.05
    assert 0.1 < summary.young_copies["Alu"] / summary.copies["Alu"] < 0.3
    assert 0.03 < summary.young_copies["L1"] / summary.copies["L1"] < 0.2


def bed_rows(path: Path) -> list[tuple[str, int, int, str, str]]:
    rows = []
    for line in path.read_text().splitlines():
        seq, a, b, name, _, strand = line.split("\t")
        rows.append((seq, int(a), int(b), name, strand))
    return rows


def kmers(s: str, k: int) -> set[str]:
    return {s[i:i + k] for i in range(len(s) - k + 1)}


def revcomp(s: str) -> str:
    return s.translate(str.maketrans("ACGT", "TGCA"))[::-1]


def test_repeat_copies_are_diverged_copies_of_their_family(genome):
    d, summary, records = genome
    fams = sg.families(SEED)
    decode = "ACGT"
    k = 13
    family_kmers = {}
    for kind, subs in (("Alu", fams.alu), ("L1", fams.l1)):
        cons = ["".join(decode[c] for c in s) for s in subs]
        family_kmers[kind] = set().union(*(kmers(c, k) | kmers(revcomp(c), k) for c in cons))
    rows = bed_rows(d / "g.bed")
    assert sum(r[3].startswith("gap/") for r in rows) == summary.copies["gap"]
    shared = {"Alu": [], "L1": []}
    young = {"Alu": [], "L1": []}
    lengths = {"Alu": [], "L1": []}
    tandem = []
    for seq, a, b, name, _ in rows:
        kind = name.split("/")[0]
        copy = records[seq][a:b]
        if kind in shared:
            assert copy.islower() or re.search("[RYKMSWBDHV]", copy)  # soft-masked
            got = kmers(copy.upper(), k)
            share = len(got & family_kmers[kind]) / max(len(got), 1)
            (young if int(name.split("/")[1]) >= sg.OLD_SUBFAMILIES else shared)[kind].append(share)
            lengths[kind].append(b - a)
        elif kind == "microsatellite":  # a tandem repeat: few distinct words a bit longer than its unit
            unit = int(name.split("/")[1])
            words = len(copy) - unit - 2
            tandem.append(len(kmers(copy.upper(), unit + 3)) <= 0.6 * words)
    assert len(shared["Alu"]) > 0.07 * SIZE / 310 and len(shared["L1"]) > 10
    assert len(tandem) > 100 and sum(tandem) > 0.9 * len(tandem)  # (a random 15-150 bp string: never)
    # 5-20% diverged: a copy shares some of its 13-mers with the family (a median 15%; 0.8^13 = 5% at 20%
    # divergence, so a short copy may share none), never all of them; the background about 0.05%
    for kind in shared:
        share = sorted(shared[kind])
        assert 0.05 < share[len(share) // 2] < 0.5 and share[-1] < 0.95
        assert sum(x > 0.005 for x in share) > 0.95 * len(share)
    # young copies, 1-4% diverged: 0.99^13 = 88% to 0.96^13 = 59% of their 13-mers shared
    for kind in young:
        share = sorted(young[kind])
        assert len(share) > 5 and 0.55 < share[len(share) // 2] < 0.9 and share[len(share) // 10] > 0.4
    assert min(lengths["L1"]) < 1000 and max(lengths["L1"]) > 5000  # 5'-truncated, some full length
    # the background (outside every BED interval) shares next to nothing with the families
    chr1 = records["chr1"].upper()
    covered = bytearray(len(chr1))
    for seq, a, b, _, _ in rows:
        if seq == "chr1":
            covered[a:b] = b"\x01" * (b - a)
    pieces = re.split("x+", "".join("x" if c else ch for c, ch in zip(covered, chr1, strict=True)))
    background = [p for p in pieces if len(p) >= k]
    total = sum(len(p) for p in background)
    assert total > 0.5 * len(chr1)
    hits = sum(len(kmers(p, k) & (family_kmers["Alu"] | family_kmers["L1"])) for p in background)
    assert hits < 0.002 * total


def test_segmental_duplications_copy_their_source(genome):
    d, summary, records = genome
    dups = [r for r in bed_rows(d / "g.bed") if r[3].startswith("segdup/")]
    assert len(dups) == summary.copies["segdup"] > 5
    assert {r[4] for r in dups} == {"+", "-"}
    for seq, a, b, name, strand in dups:
        assert 1000 <= b - a <= 50_000
        source_seq, source = name.split("/")[1].rsplit(":", 1)
        assert source_seq == seq  # within a sequence
        source = records[seq][int(source):int(source) + b - a].upper()
        copy = records[seq][a:b].upper()
        assert "N" not in copy and "N" not in source
        if strand == "-":
            source = revcomp(source)
        got = kmers(copy, 13)
        # 0.5-5% diverged: 0.995^13 = 94% to 0.95^13 = 51% of the 13-mers shared (an indel moves a few)
        assert 0.4 < len(got & kmers(source, 13)) / len(got) < 0.99


def test_features_off(genome, tmp_path: Path):
    """Without young subfamilies and duplications: none annotated, and a genome of its own (the one the
    generator wrote before them)."""
    d, _, _ = genome
    off = sg.Features(young_alu=0, young_l1=0, segdups=0)
    summary = sg.write_genome(tmp_path / "off.fa", SIZE, seed=SEED, bed=tmp_path / "off.bed", features=off)
    assert summary.copies["segdup"] == summary.young_copies["Alu"] == summary.young_copies["L1"] == 0
    assert sum(summary.lengths) == SIZE
    assert (tmp_path / "off.fa").read_bytes() != (d / "g.fa").read_bytes()
    names = {r[3] for r in bed_rows(tmp_path / "off.bed")}
    assert not any(n.startswith("segdup") or n in ("Alu/3", "Alu/4", "L1/3", "L1/4") for n in names)


def test_too_small(tmp_path: Path):
    with pytest.raises(ValueError, match="too few"):
        sg.write_genome(tmp_path / "x.fa", 3000, chromosomes=5)
