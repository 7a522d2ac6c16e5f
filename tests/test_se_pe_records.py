"""One location, one way of writing it: the same reads mapped single-end and as pairs give, for every location
both runs report, the same SAM fields (RNAME, POS, strand, CIGAR, SEQ, QUAL, NM, MD, AS, NH). Single-end and
paired records come from one set of kernels (records.py) and one formatter; a divergence between the two
paths shows here. (A mate whose locations the pair run's rescue adds to has more records (NH): only its
locations are compared.)"""

from __future__ import annotations

import dnaio
import numpy as np
import pysam
import pytest
from helpers import MODEL, decode, repetitive_genome, simulate_pairs

from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.index import neighborhood
from seedmap.io.bam_encode import bam_header
from seedmap.io.bgzf import BgzfWriter
from seedmap.io.reads import make_batch
from seedmap.io.reference import Reference
from seedmap.options import PairOptions
from seedmap.pipeline import MapOptions, SamFormatter
from seedmap.pipeline.pair_stages import map_pair_batch
from seedmap.pipeline.stages import map_batch

REVERSE, SECONDARY, UNMAPPED, FIRST = 16, 256, 4, 64


def sam_lines(data: np.ndarray, ref: Reference, bam: bool, path: str) -> list[str]:
    """The batch's records as SAM lines; BAM records are read back by pysam."""
    if not bam:
        return bytes(data).decode().splitlines()
    with open(path, "wb") as fh, BgzfWriter(fh, 1) as w:
        w.write(bam_header("@HD\tVN:1.6\n", ref.names, ref.lengths))
        w.write(data)
    with pysam.AlignmentFile(path, "rb", check_sq=False) as f:
        return [r.to_string() for r in f]


def by_read(lines: list[str], paired: bool) -> dict[tuple[str, int], dict[tuple, list[str]]]:
    """Per (pair, mate): its mapped records by location (RNAME, POS, strand, CIGAR: two locations may share a
    start): SEQ, QUAL and the tags."""
    out: dict = {}
    for line in lines:
        f = line.split("\t")
        flag = int(f[1])
        name, mate = (f[0], 1 if flag & FIRST else 2) if paired else (f[0][:-2], int(f[0][-1]))
        recs = out.setdefault((name, mate), {})
        if not flag & UNMAPPED:
            tags = {t[:2]: t for t in f[11:]}
            recs[(f[2], int(f[3]), flag & REVERSE, f[5])] = [f[9], f[10]] + [tags[t] for t in ("NM", "MD", "AS", "NH")]
    return out


@pytest.mark.parametrize("bam", [False, True])
def test_a_location_is_written_alike_single_and_paired(rng, tmp_path, bam):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    pairs = simulate_pairs(rng, seqs, 80, 50, "fr", 3)
    engine = NeighborhoodEngine(neighborhood.build(ref, 6, 8), ref.starts)
    reads = [(f"p{i}", m + 1, decode(x), "".join(chr(33 + int(q)) for q in rng.integers(0, 40, x.size)))
             for i, ab in enumerate(pairs) for m, x in enumerate(ab)]  # random QUAL: its orientation shows
    single = make_batch([dnaio.SequenceRecord(f"{name}.{mate}", seq, qual) for name, mate, seq, qual in reads])
    paired = make_batch([dnaio.SequenceRecord(name, seq, qual) for name, _, seq, qual in reads])
    fmt = SamFormatter(ref, bam=bam, secondary_seq=True)  # SEQ and QUAL on every record, primary or not
    se, _ = map_batch(single, engine, fmt, MapOptions(errors=3))
    pe, _ = map_pair_batch(paired, engine, fmt, MapOptions(errors=3), PairOptions(), MODEL)
    se_reads = by_read(sam_lines(se, ref, bam, str(tmp_path / "se.bam")), False)
    pe_reads = by_read(sam_lines(pe, ref, bam, str(tmp_path / "pe.bam")), True)
    assert se_reads.keys() == pe_reads.keys()
    same = 0
    for key, se_locs in se_reads.items():
        pe_locs = pe_reads[key]
        assert se_locs.keys() <= pe_locs.keys(), key  # pairs add rescued locations, never lose one
        if se_locs.keys() == pe_locs.keys():  # not rescued
            for loc, fields in se_locs.items():
                assert pe_locs[loc] == fields, (key, loc)
                same += 1
    assert same > 100
