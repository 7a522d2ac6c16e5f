"""XS and XA, as bwa writes them: XS on a primary, the alignment score (-NM, as AS) of its read's best other
location, absent without one; XA with --best and -n, the locations the records leave out as
`RNAME,±POS,CIGAR,NM;` (at most 5, best first): with the records, all-mapping's first records of the read."""

from __future__ import annotations

import numpy as np
import pysam
import pytest
from helpers import batch_of, decode, fasta, fastq, repetitive_genome, sample_reads, simulate_pairs
from test_pairs import by_mate, run_pairs
from test_strata import engine_of

from seedmap.io.reference import Reference
from seedmap.options import MapOptions, PairOptions
from seedmap.pipeline import RunOptions
from seedmap.pipeline.run import run_map
from seedmap.pipeline.stages import SamFormatter, map_batch
from seedmap.records import MAX_XA

E = 4


def tags(f: list[str]) -> dict[str, str]:
    return {t[:2]: t[5:] for t in f[11:]}


def by_read(text: bytes) -> dict[str, list[list[str]]]:
    out: dict = {}
    for line in bytes(text).decode().splitlines():
        f = line.split("\t")
        out.setdefault(f[0], []).append(f)
    return out


def alternative(f: list[str]) -> str:
    """A record as an XA entry."""
    return f"{f[2]},{'-' if int(f[1]) & 16 else '+'}{f[3]},{f[5]},{tags(f)['NM']}"


def xa(f: list[str]) -> list[str]:
    return [a for a in tags(f).get("XA", "").split(";") if a]


@pytest.fixture
def mapped(rng):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    engine = engine_of("neighborhood", ref)
    reads = sample_reads(rng, seqs, 80, (30, 80), 3)
    fmt = SamFormatter(ref)
    return {name: by_read(map_batch(batch_of(reads), engine, fmt, MapOptions(errors=E, **opts))[0])
            for name, opts in {"all": {}, "best": {"best_only": True}, "n1": {"max_hits": 1},
                               "n2": {"max_hits": 2}}.items()}


def test_xs_is_the_best_other_locations_score(mapped):
    with_xs = 0
    for recs in mapped["all"].values():
        if int(recs[0][1]) & 4:
            assert len(recs) == 1 and "XS" not in tags(recs[0])
            continue
        assert all("XS" not in tags(f) for f in recs[1:])  # primaries only
        if len(recs) == 1:
            assert "XS" not in tags(recs[0])
        else:
            assert tags(recs[0])["XS"] == tags(recs[1])["AS"]
            with_xs += 1
    assert with_xs > 10
    # No XA where every location is a record.
    assert all("XA" not in tags(f) for recs in mapped["all"].values() for f in recs)


@pytest.mark.parametrize("mode", ["best", "n1", "n2"])
def test_xa_holds_the_locations_left_out(mapped, mode):
    """Records and XA together are all-mapping's first records of the read, as far as the search went (--best and
    -n search one stratum beyond the one they stop at after a unique best, none after a tie), at most MAX_XA in
    XA; XS is all-mapping's where the second location lies within those strata."""
    full_xa = 0
    for name, recs in mapped[mode].items():
        want = mapped["all"][name]
        if int(want[0][1]) & 4:
            continue
        alts = xa(recs[0])
        assert all("XA" not in tags(f) for f in recs[1:]) and len(alts) <= MAX_XA
        nm = [int(tags(f)["NM"]) for f in want]
        tie = len(nm) > 1 and nm[1] == nm[0]
        stop = nm[0] if mode != "n2" or len(nm) < 2 else nm[1]
        depth = min(E, stop + (0 if tie else 1))
        found = [alternative(f) for f in want if int(tags(f)["NM"]) <= depth]
        got = [alternative(f) for f in recs] + alts
        assert got == found[:len(got)] and len(got) == min(len(found), len(recs) + MAX_XA), name
        if len(nm) > 1 and nm[1] <= depth:
            assert tags(recs[0])["XS"] == tags(want[0])["XS"]
        full_xa += len(alts) == MAX_XA
    assert full_xa > 0 or mode == "best"


def test_pairs_xa_and_xs(rng):
    """Paired -n 1 (a full search): each mate's primary lists its first other locations as all-mapping writes them."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    pairs = simulate_pairs(rng, seqs, 60, 50, "fr", 3)
    full = by_mate(run_pairs(ref, pairs, 3, PairOptions()))
    one = by_mate(run_pairs(ref, pairs, 3, PairOptions(), max_hits=1))
    listed = 0
    for key, recs in full.items():
        got = one[key]
        assert len(got) == 1
        assert xa(got[0]) == [alternative(f) for f in recs[1:1 + MAX_XA]]
        assert tags(got[0]).get("XS") == (tags(recs[1])["AS"] if len(recs) > 1 else None)
        listed += len(recs) > 1
    assert listed > 5


def test_bam_has_the_sams_xs_and_xa(rng, tmp_path):
    seqs = repetitive_genome(rng)
    (tmp_path / "ref.fa").write_text(fasta({f"s{i}": decode(s) for i, s in enumerate(seqs)}))
    reads = sample_reads(rng, seqs, 40, (40, 80), 3)
    (tmp_path / "r.fq").write_text(fastq({f"r{i}": decode(r) for i, r in enumerate(reads)}))
    for out in ("out.sam", "out.bam"):
        run_map(RunOptions(reference=str(tmp_path / "ref.fa"), reads=str(tmp_path / "r.fq"),
                           output=str(tmp_path / out), map=MapOptions(errors=E, max_hits=1)))
    sam = {f[0]: tags(f) for f in (line.split("\t") for line in (tmp_path / "out.sam").read_text().splitlines()
                                   if not line.startswith("@"))}
    with pysam.AlignmentFile(str(tmp_path / "out.bam"), "rb") as bam:
        got = {a.query_name: a for a in bam}
    assert got.keys() == sam.keys()
    assert sum("XA" in t for t in sam.values()) > 3 and sum("XS" in t for t in sam.values()) > 3
    for name, t in sam.items():
        a = got[name]
        assert (a.get_tag("XS") if a.has_tag("XS") else None) == (int(t["XS"]) if "XS" in t else None)
        assert (a.get_tag("XA") if a.has_tag("XA") else None) == t.get("XA")


def test_xa_needs_no_extra_room(rng):
    """Long sequence names and many alternatives fit the writers' size bounds (SAM and BAM)."""
    seqs = [np.tile(repetitive_genome(rng)[0][:200], 8)]
    ref = Reference.from_codes(["x" * 200], seqs)
    engine = engine_of("neighborhood", ref)
    reads = sample_reads(rng, seqs, 20, (30, 60), 2)
    for bam in (False, True):
        data, _ = map_batch(batch_of(reads), engine, SamFormatter(ref, bam=bam), MapOptions(errors=E, max_hits=1))
        assert data.size > 0
    text = by_read(map_batch(batch_of(reads), engine, SamFormatter(ref), MapOptions(errors=E, max_hits=1))[0])
    assert all(len(xa(recs[0])) == MAX_XA for recs in text.values() if not int(recs[0][1]) & 4)
