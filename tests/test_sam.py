"""SAM records: fields consistent with the read and the reference; flags, NH, HI, MAPQ, ordering; pysam."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    COMP,
    batch_of,
    decode,
    random_genome,
    reference_from_alignment,
    repetitive_genome,
    sample_reads,
)

from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.index import neighborhood
from seedmap.io.reference import Reference
from seedmap.io.sam import header
from seedmap.pipeline import MapOptions, SamFormatter, map_batch


def run(ref: Reference, reads: list[np.ndarray], opts: MapOptions, quals: bool = True,
        secondary_seq: bool = False) -> list[list[str]]:
    engine = NeighborhoodEngine(neighborhood.build(ref, 6, 8), ref.starts)
    text, _ = map_batch(batch_of(reads, quals), engine, SamFormatter(ref, secondary_seq=secondary_seq), opts)
    return [line.split("\t") for line in bytes(text).decode().splitlines()]



@pytest.mark.parametrize(("e", "secondary_seq"), [(2, False), (5, False), (5, True)])
def test_fields_consistent_with_reference(rng, e, secondary_seq):
    """SEQ, QUAL, CIGAR, MD and NM agree with the read and the reference. Secondary records have SEQ and
    QUAL '*' (as bwa mem writes them) unless secondary_seq."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 60, (40, 100), e + 2)
    recs = run(ref, reads, MapOptions(errors=e), secondary_seq=secondary_seq)
    codes = ref.codes()
    name_to_start = dict(zip(ref.names, ref.starts[:-1].tolist(), strict=True))
    n_mapped = n_secondary = 0
    for f in recs:
        read = reads[int(f[0][1:])]
        flag = int(f[1])
        fwd = decode(read)
        if flag & 4:
            assert f[2] == "*" and f[5] == "*" and f[9] == fwd
            continue
        n_mapped += 1
        seq = decode(COMP[read[::-1]]) if flag & 16 else fwd
        if flag & 256 and not secondary_seq:
            n_secondary += 1
            assert f[9] == f[10] == "*"
        else:
            assert f[9] == seq
            assert len(f[10]) == len(seq)
        tags = dict((t[:2], t[5:]) for t in f[11:])
        rebuilt, edits = reference_from_alignment(seq, f[5], tags["MD"])
        start = name_to_start[f[2]] + int(f[3]) - 1
        assert rebuilt == decode(codes[start:start + len(rebuilt)])
        assert edits == int(tags["NM"]) <= e
        assert int(tags["AS"]) == -int(tags["NM"])
    assert n_mapped > 30
    assert n_secondary > 0 or secondary_seq


def test_flags_nh_mapq_and_order(rng):
    seg = random_genome(rng, 80)
    g = np.concatenate([random_genome(rng, 500), seg, random_genome(rng, 300), seg, random_genome(rng, 400)])
    seg2 = seg.copy()
    seg2[40] = (seg2[40] + 1) % 4  # a third copy, in another sequence, with one substitution
    ref = Reference.from_codes(["a", "b"], [g, np.concatenate([random_genome(rng, 200), seg2])])
    read = seg[5:65].copy()
    unique = g[100:160].copy()
    recs = run(ref, [read, unique, random_genome(rng, 60)], MapOptions(errors=2))
    by_read: dict[str, list] = {}
    for f in recs:
        by_read.setdefault(f[0], []).append(f)
    r0 = by_read["r0"]
    assert len(r0) >= 3
    assert [int(f[1]) & 256 for f in r0] == [0] + [256] * (len(r0) - 1)
    nms = [int(dict((t[:2], t[5:]) for t in f[11:])["NM"]) for f in r0]
    assert nms == sorted(nms)
    assert all(f"NH:i:{len(r0)}" in f for f in r0)
    assert [f[15] for f in r0] == [f"HI:i:{i}" for i in range(1, len(r0) + 1)]  # beside NH, 1 on the primary
    assert r0[0][16:] == [f"XS:i:{-nms[1]}"] and all(len(f) == 16 for f in r0[1:])  # XS: the primary's
    assert by_read["r1"][0][-2:] == ["NH:i:1", "HI:i:1"] and by_read["r2"][0][11:] == []  # unmapped: neither
    assert r0[0][4] == "0"  # several locations share the best distance
    assert by_read["r1"][0][4] == "60" and int(by_read["r1"][0][1]) & 256 == 0
    assert int(by_read["r2"][0][1]) == 4
    # --best and -n
    best = run(ref, [read], MapOptions(errors=2, best_only=True))
    assert all("NM:i:0" in f for f in best) and len(best) == nms.count(0)
    capped = run(ref, [read], MapOptions(errors=2, max_hits=1))
    assert len(capped) == 1 and capped[0][1] in ("0", "16")


def test_fasta_reads_have_no_quality(rng):
    g = random_genome(rng, 1000)
    ref = Reference.from_codes(["a"], [g])
    recs = run(ref, [g[10:70]], MapOptions(errors=1), quals=False)
    assert recs[0][10] == "*"


def test_pysam_reads_output(rng, tmp_path):
    pysam = pytest.importorskip("pysam")
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 30, (40, 100), 4)
    engine = NeighborhoodEngine(neighborhood.build(ref, 6, 8), ref.starts)
    text, _ = map_batch(batch_of(reads), engine, SamFormatter(ref), MapOptions(errors=3))
    path = tmp_path / "out.sam"
    path.write_bytes(header(ref, "seedmap test").encode() + bytes(text))
    with pysam.AlignmentFile(str(path), "r") as sam:
        n = secondary = 0
        for rec in sam:
            n += 1
            if rec.is_secondary:
                secondary += 1
                assert rec.query_sequence is None and rec.query_qualities is None
            elif not rec.is_unmapped:
                assert rec.infer_query_length() == rec.query_length
            if not rec.is_unmapped:
                assert rec.get_tag("NM") <= 3
        assert n >= 30 and secondary > 0


def test_ungapped_alignment_preferred_when_optimal(rng):
    g = random_genome(rng, 1000)
    ref = Reference.from_codes(["a"], [g])
    read = g[200:260].copy()
    read[10] = (read[10] + 1) % 4
    read[59] = (read[59] + 2) % 4  # last base: an insertion would cost the same
    f = run(ref, [read], MapOptions(errors=3))[0]
    assert f[3] == "201" and f[5] == "60M"
    assert f"MD:Z:10{decode(g[210:211])}48{decode(g[259:260])}0" in f and "NM:i:2" in f
