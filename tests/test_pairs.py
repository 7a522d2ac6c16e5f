"""Paired-end mapping against the brute-force oracle: every location of each mate reported, the
primary pair the best one by the documented rule, flags / RNEXT / PNEXT / TLEN / MC / MQ consistent,
proper pairs exactly those in orientation and insert bounds; rescue; pysam reads the output."""

from __future__ import annotations

import re

import dnaio
import numpy as np
import pysam
import pytest
from helpers import COMP, MODEL, decode, random_genome, repetitive_genome, simulate_pairs
from oracle import aligned_interval, oracle_locations

from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.index import neighborhood
from seedmap.io.reads import make_batch
from seedmap.io.reference import Reference
from seedmap.io.sam import header
from seedmap.options import PairOptions
from seedmap.paired import rescue as rescue_module
from seedmap.paired.insert_size import InsertModel
from seedmap.pipeline import MapOptions, SamFormatter
from seedmap.pipeline.pair_stages import map_pair_batch

CIGAR_RE = re.compile(r"(\d+)([MID])")

def pair_batch(pairs: list[tuple[np.ndarray, np.ndarray]]) -> object:
    recs = []
    for i, (a, b) in enumerate(pairs):
        recs += [dnaio.SequenceRecord(f"p{i}", decode(a), "I" * a.size),
                 dnaio.SequenceRecord(f"p{i}", decode(b), "J" * b.size)]
    return make_batch(recs)


def run_pairs(ref: Reference, pairs: list, e: int, popts: PairOptions, model: InsertModel = MODEL,
              **opts: object) -> list[list[str]]:
    engine = NeighborhoodEngine(neighborhood.build(ref, 6, 8), ref.starts)
    text, _ = map_pair_batch(pair_batch(pairs), engine, SamFormatter(ref), MapOptions(errors=e, **opts), popts,
                             model)
    return [line.split("\t") for line in bytes(text).decode().splitlines()]


def ref_span(cigar: str) -> int:
    return sum(int(n) for n, op in CIGAR_RE.findall(cigar) if op in "MD")


def proper_insert(a: tuple, b: tuple, orientation: str, lo: int, hi: int) -> int | None:
    """Independent definition: a, b = (strand, start, end, ref); 5' ends decide the orientation."""
    (ra, sa, ea, ca), (rb, sb, eb, cb) = a, b
    ins = max(ea, eb) - min(sa, sb)
    if ca != cb or not lo <= ins <= hi:
        return None
    five_a = ea - 1 if ra else sa
    five_b = eb - 1 if rb else sb
    if orientation == "ff":
        ok = ra == rb and (five_a <= five_b if ra == 0 else five_a >= five_b)
    else:
        fwd, rev = (five_a, five_b) if ra == 0 else (five_b, five_a)
        ok = ra != rb and (fwd <= rev if orientation == "fr" else rev < fwd)
    return ins if ok else None


def tags(f: list[str]) -> dict[str, str]:
    return {t[:2]: t[5:] for t in f[11:]}


def by_mate(recs: list[list[str]]) -> dict:
    """SAM records (split lines) by (name, mate flag 64 / 128), in output order."""
    out: dict = {}
    for f in recs:
        out.setdefault((f[0], int(f[1]) & 192), []).append(f)
    return out


@pytest.mark.parametrize("orientation", ["fr", "rf", "ff"])
@pytest.mark.parametrize("genome", ["random", "repetitive"])
def test_pairs_against_oracle(rng, orientation, genome):
    e, m, penalty = 3, 50, 1  # a small penalty: both sides of the proper-vs-best-singles rule occur
    seqs = repetitive_genome(rng) if genome == "repetitive" else [random_genome(rng, 3000), random_genome(rng, 900)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    codes = ref.codes()
    pairs = simulate_pairs(rng, seqs, 70, m, orientation, e + 1)
    recs = run_pairs(ref, pairs, e, PairOptions(orientation=orientation, rescue_edits=0, unpaired_penalty=penalty))
    offset = dict(zip(ref.names, ref.starts[:-1].tolist(), strict=True))
    ref_index = {name: i for i, name in enumerate(ref.names)}
    lo, hi = MODEL.bounds
    by_mate: dict[tuple[int, int], list[list[str]]] = {}
    for f in recs:
        flag = int(f[1])
        assert flag & 1 and bool(flag & 64) != bool(flag & 128)
        by_mate.setdefault((int(f[0][1:]), 0 if flag & 64 else 1), []).append(f)
    n_proper = 0
    for p, (a, b) in enumerate(pairs):
        located = []
        for mate, read in ((0, a), (1, b)):
            expect = {(s, st, en, d) for s, st, en, d in oracle_locations(read, codes, ref.starts, e)}
            # each location's record: over the alignment's own interval (oracle.aligned_interval)
            aligned = {(s, *aligned_interval(COMP[read[::-1]] if s else read, codes, ref.starts, st, en, d), d):
                       (s, st, en, d) for s, st, en, d in expect}
            fs = by_mate[(p, mate)]
            prims = [f for f in fs if not int(f[1]) & 256]
            assert len(prims) == 1
            got = {(int(int(f[1]) & 16 != 0), offset[f[2]] + int(f[3]) - 1, int(tags(f)["NM"]))
                   for f in fs if not int(f[1]) & 4}
            assert got == {(s, st, d) for s, st, _, d in aligned}, (p, mate)
            prim = prims[0]
            if int(prim[1]) & 4:
                located.append(None)
            else:
                st = offset[prim[2]] + int(prim[3]) - 1
                rec = (int(int(prim[1]) & 16 != 0), st, st + ref_span(prim[5]), int(tags(prim)["NM"]))
                located.append((*aligned[rec][:3], ref_index[prim[2]], rec[3], expect, rec[1], rec[2]))
        pa, pb = located
        for mine, other in ((by_mate[(p, 0)], pb), (by_mate[(p, 1)], pa)):
            for f in mine:
                flag = int(f[1])
                assert bool(flag & 8) == (other is None)
                if other is None:
                    continue
                assert bool(flag & 32) == bool(other[0])
                assert int(f[7]) == other[6] - offset[ref.names[other[3]]] + 1
                rname = f[2] if not flag & 4 else None
                assert f[6] == ("=" if rname == ref.names[other[3]] or flag & 4 else ref.names[other[3]])
                assert "MC" in tags(f) and ref_span(tags(f)["MC"]) == other[7] - other[6]
        # The proper flag and the choice of the primary pair, by brute force over the oracle's locations.
        prim_flags = [int(f[1]) for mate in (0, 1) for f in by_mate[(p, mate)] if not int(f[1]) & 256]
        if pa is None or pb is None:
            assert not any(fl & 2 for fl in prim_flags)
            for x in (pa, pb):
                if x is not None:
                    assert x[4] == min(d for *_, d in x[5])
            continue
        cands = [(da + db, abs(ins - MODEL.mean))
                 for sa_, st_a, en_a, da in pa[5] for sb_, st_b, en_b, db in pb[5]
                 if (ins := proper_insert((sa_, st_a, en_a, _seq(ref, st_a)), (sb_, st_b, en_b, _seq(ref, st_b)),
                                          orientation, lo, hi)) is not None]
        single = min(d for *_, d in pa[5]) + min(d for *_, d in pb[5])
        is_proper = all(fl & 2 for fl in prim_flags)
        assert is_proper == any(fl & 2 for fl in prim_flags)
        chosen_ins = proper_insert(pa[:4], pb[:4], orientation, lo, hi)
        if cands and min(cands)[0] <= single + penalty:
            n_proper += 1
            assert is_proper and chosen_ins is not None
            assert (pa[4] + pb[4], abs(chosen_ins - MODEL.mean)) == min(cands)
        else:
            assert not is_proper
            assert pa[4] + pb[4] == single
        # TLEN on primaries: the fragment span of the alignments, + for the leftmost mate.
        prim_a = [f for f in by_mate[(p, 0)] if not int(f[1]) & 256][0]
        prim_b = [f for f in by_mate[(p, 1)] if not int(f[1]) & 256][0]
        if pa[3] == pb[3]:
            span = max(pa[7], pb[7]) - min(pa[6], pb[6])
            assert abs(int(prim_a[8])) == span == abs(int(prim_b[8]))
            assert int(prim_a[8]) == -int(prim_b[8]) or span == 0
            assert (int(prim_a[8]) > 0) == (pa[6] < pb[6] or (pa[6] == pb[6]))
        else:
            assert prim_a[8] == prim_b[8] == "0"
    assert n_proper > 10


def _seq(ref: Reference, pos: int) -> int:
    return int(np.searchsorted(ref.starts, pos, side="right")) - 1


def test_rescue_finds_a_mate_beyond_e(rng):
    """Mate 2 carries e + 3 substitutions: not found within e anywhere, found by rescue near mate 1
    (at its origin, with NM = e + 3), proper; without rescue it is unmapped, placed at its mate."""
    e, m = 2, 60
    g = random_genome(rng, 4000)
    ref = Reference.from_codes(["g"], [g])
    frag = g[1000:1170]
    a = frag[:m].copy()
    b = COMP[frag[-m:][::-1]].copy()
    for k in (5, 20, 33, 41, 55):
        b[k] = (b[k] + 1) % 4
    recs = run_pairs(ref, [(a, b)], e, PairOptions(rescue_edits=8))
    prim = {int(f[1]) & 192: f for f in recs if not int(f[1]) & 256}
    mate2 = prim[128]
    assert int(mate2[1]) & 4 == 0 and int(mate2[1]) & 2
    assert int(mate2[3]) == 1170 - m + 1 and tags(mate2)["NM"] == "5"
    assert prim[64][6] == "=" and int(prim[64][7]) == int(mate2[3]) and int(prim[64][8]) == 170
    off = run_pairs(ref, [(a, b)], e, PairOptions(rescue_edits=0))
    prim = {int(f[1]) & 192: f for f in off if not int(f[1]) & 256}
    assert int(prim[128][1]) & 4 and int(prim[64][1]) & 8
    assert prim[128][2] == "g" and prim[128][3] == prim[64][3] == prim[128][7]  # placed at its mate
    assert prim[64][6] == "=" and prim[64][7] == prim[64][3] and prim[64][8] == "0"
    # Fewer rescue edits than the mate has find nothing; the rescued mate is also absent from a window that is too far.
    assert int({int(f[1]) & 192: f for f in run_pairs(ref, [(a, b)], e, PairOptions(rescue_edits=4))}[128][1]) & 4
    far = run_pairs(ref, [(a, b)], e, PairOptions(rescue_edits=8), model=InsertModel(600.0, 10.0))
    assert int({int(f[1]) & 192: f for f in far}[128][1]) & 4


def test_mate_mapq_from_the_pair(rng):
    """Mate 2 lies in two identical copies: a tie alone (MAPQ 0), but only one copy pairs properly with
    the unique mate 1, so the pair places it confidently; when both copies pair properly, 0 again."""
    e, m = 2, 50
    seg = random_genome(rng, m)
    g = np.concatenate([random_genome(rng, 1000), seg, random_genome(rng, 1500), seg, random_genome(rng, 1000)])
    ref = Reference.from_codes(["g"], [g])
    a = g[900:900 + m]
    recs = run_pairs(ref, [(a, COMP[seg[::-1]])], e, PairOptions())
    prim = {int(f[1]) & 192: f for f in recs if not int(f[1]) & 256}
    assert int(prim[128][3]) == 1001 and int(prim[128][4]) >= 30 and int(prim[128][1]) & 2
    assert int(prim[64][4]) >= 30 and prim[64][-1] == f"MQ:i:{prim[128][4]}"
    near = np.concatenate([random_genome(rng, 1000), seg, random_genome(rng, 30), seg, random_genome(rng, 1000)])
    ref2 = Reference.from_codes(["g"], [near])
    recs = run_pairs(ref2, [(near[950:950 + m], COMP[seg[::-1]])], e, PairOptions(), model=InsertModel(200.0, 40.0))
    prim = {int(f[1]) & 192: f for f in recs if not int(f[1]) & 256}
    assert prim[128][4] == "0" and int(prim[64][4]) >= 30


def test_pysam_reads_pairs(rng, tmp_path):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    pairs = simulate_pairs(rng, seqs, 40, 50, "fr", 4)
    engine = NeighborhoodEngine(neighborhood.build(ref, 6, 8), ref.starts)
    text, _ = map_pair_batch(pair_batch(pairs), engine, SamFormatter(ref), MapOptions(errors=3), PairOptions(),
                             MODEL)
    text = bytes(text)
    path = tmp_path / "p.sam"
    path.write_bytes(header(ref, "seedmap test").encode() + text)
    with pysam.AlignmentFile(str(path), "r") as sam:
        records = list(sam)
    assert len(records) == len(text.splitlines())
    prim = {(r.query_name, r.is_read1): r for r in records if not r.is_secondary}
    assert len(prim) == 80
    for (name, first), r in prim.items():
        mate = prim[(name, not first)]
        assert r.is_paired and r.mate_is_unmapped == mate.is_unmapped
        if not mate.is_unmapped:
            assert r.next_reference_start == mate.reference_start
            assert r.next_reference_name == mate.reference_name
            assert r.get_tag("MQ") == mate.mapping_quality
        if r.is_proper_pair:
            assert mate.is_proper_pair and r.template_length == -mate.template_length != 0


@pytest.mark.parametrize("best_only", [False, True])
@pytest.mark.parametrize("subs", [2, 3, 4])
def test_unpaired_penalty(rng, subs, best_only):
    """Mate 2 has an exact copy far away and a copy with `subs` substitutions at the proper distance:
    the proper pair wins while it costs at most the penalty (3) more than the best single locations. --best
    searches mate 2 only near its best (0 edits): the proper copy is found near mate 1 (pair_strata.py)."""
    e, m = 5, 60
    g = random_genome(rng, 6000)
    ref = Reference.from_codes(["g"], [g])
    b = COMP[g[4500:4500 + m][::-1]].copy()
    copy = g[4500:4500 + m].copy()
    for k in rng.choice(m, subs, replace=False):
        copy[k] = (copy[k] + 1) % 4
    g[1100:1100 + m] = copy
    ref = Reference.from_codes(["g"], [g])
    recs = run_pairs(ref, [(g[1000:1000 + m], b)], e, PairOptions(unpaired_penalty=3), best_only=best_only)
    prim = {int(f[1]) & 192: f for f in recs if not int(f[1]) & 256}
    proper = subs <= 3
    assert bool(int(prim[128][1]) & 2) == proper == bool(int(prim[64][1]) & 2)
    assert int(prim[128][3]) == (1101 if proper else 4501)
    assert len(recs) == (2 if best_only and not proper else 3)  # mate 2's other copy: a secondary (--best: at 0)


def test_insert_size_estimate_and_parse(rng):
    """Unique fr pairs of known fragment length give mean/sd; outliers, wrong orientation, repeats and
    pairs across sequences do not count; -I parses MEAN,SD."""
    from seedmap.paired.insert_size import estimate, parse

    frags = np.r_[rng.normal(300, 30, 400).astype(np.int64), [5000, 9000]]  # two outliers
    n = frags.size
    s1 = rng.integers(0, 10_000, n)
    start = np.c_[s1, s1 + frags - 100].ravel()
    rev = np.tile([False, True], n)
    read = np.arange(2 * n)
    ref_id = np.zeros(2 * n, dtype=np.int64)
    rev[2 * 7 + 1] = False  # pair 7 is ff: not counted for fr
    ref_id[2 * 8 + 1] = 1  # pair 8 spans two sequences
    read = np.r_[read, 2 * 9]  # pair 9's mate 1 has two locations
    start, rev, ref_id = np.r_[start, 77], np.r_[rev, False], np.r_[ref_id, 0]
    model, used = estimate(read, start, start + 100, rev, ref_id, 2 * n, 0)
    assert used == n - 2 - 3
    kept = np.delete(frags[:-2], [7, 8, 9])
    assert abs(model.mean - kept.mean()) < 1e-6 and abs(model.sd - kept.std()) < 1e-6
    assert model.bounds == (int(np.floor(model.mean - 4 * model.sd)), int(np.ceil(model.mean + 4 * model.sd)))
    assert estimate(read[:10], start[:10], start[:10] + 100, rev[:10], ref_id[:10], 10, 0)[0] is None
    assert parse("300,30") == InsertModel(300.0, 30.0) and parse("250") == InsertModel(250.0, 25.0)
    for bad in ("x", "300,30,1", "-5,2", "0,1", "nan,1"):
        with pytest.raises(ValueError):
            parse(bad)


def test_proper_insert_boundaries():
    """The orientation rule on 5' ends, at its boundaries, against the test's own definition."""
    from seedmap.paired.pairing import ORIENTATIONS
    from seedmap.paired.pairing import proper_insert as kernel

    cases = []
    for sa in (100, 150):
        for sb in range(40, 220, 3):
            for ra in (0, 1):
                for rb in (0, 1):
                    cases.append(((ra, sa, sa + 50, 0), (rb, sb, sb + 50, 0)))
    cases.append(((0, 100, 150, 0), (1, 51, 101, 0)))  # 5' ends coincide: fr, not rf
    cases.append(((0, 100, 150, 0), (1, 50, 100, 0)))  # reverse 5' end just before: rf
    cases.append(((0, 100, 150, 0), (1, 300, 350, 1)))  # other sequence
    for orientation, code in ORIENTATIONS.items():
        for a, b in cases:
            want = proper_insert(a, b, orientation, 60, 200)
            got = kernel(a[1], a[2], a[3], bool(a[0]), b[1], b[2], b[3], bool(b[0]), code, 60, 200)
            assert got == (-1 if want is None else want), (orientation, a, b)
    assert kernel(100, 150, 0, False, 51, 101, 0, True, 0, 1, 500) == 99
    assert kernel(100, 150, 0, False, 50, 100, 0, True, 0, 1, 500) == -1
    assert kernel(100, 150, 0, False, 50, 100, 0, True, 1, 1, 500) == 100


@pytest.mark.parametrize("opts", [{"max_hits": 2}, {"best_only": True, "max_hits": 1}])
def test_best_and_n_for_pairs(rng, opts):
    """Paired -n keeps the full search: each mate's records are its primary location, then its other locations
    (of its best stratum with --best), at most N in all, in the all-mapping order."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    pairs = simulate_pairs(rng, seqs, 60, 50, "fr", 4)
    popts = PairOptions(rescue_edits=0)
    full = run_pairs(ref, pairs, 3, popts)
    cut = run_pairs(ref, pairs, 3, popts, **opts)

    full_m, cut_m = by_mate(full), by_mate(cut)
    assert full_m.keys() == cut_m.keys()
    dropped = 0
    for key, recs in full_m.items():
        nm = [int(tags(f).get("NM", -1)) for f in recs]
        want = [f for i, f in enumerate(recs) if i == 0 or not opts.get("best_only") or nm[i] == min(nm)]
        if opts.get("max_hits"):
            want = want[:opts["max_hits"]]
        got = cut_m[key]
        assert [f[2:4] + [f[1]] for f in got] == [f[2:4] + [f[1]] for f in want], key
        assert got[0][4] == recs[0][4]  # the primary's MAPQ does not depend on the cut
        dropped += len(recs) - len(got)
    assert dropped > 0


def paralogs(rng: np.random.Generator, copies: int = 10, size: int = 260) -> list[np.ndarray]:
    """Copies of one segment, each with 0-4 substitutions, apart by more than a fragment: a mate's best copy is
    often not its origin, so its proper pair lies a few strata beyond the best single locations."""
    seg = random_genome(rng, size)
    parts = [random_genome(rng, 400)]
    for _ in range(copies):
        copy = seg.copy()
        for k in rng.integers(0, size, int(rng.integers(0, 5))):
            copy[k] = (copy[k] + rng.integers(1, 4)) % 4
        parts += [copy, random_genome(rng, int(rng.integers(300, 500)))]
    return [np.concatenate(parts)]


@pytest.mark.parametrize("penalty", [1, 3])
@pytest.mark.parametrize("genome", ["random", "repetitive", "paralogs"])
def test_best_pairs_choose_as_all_mapping(rng, monkeypatch, genome, penalty):
    """Paired --best searches each mate only as deep as its pair needs (pair_strata.py), yet chooses the primary
    pair the all-mapping search chooses (locations, proper flag), and writes the records of a search to e filtered
    alike (--no-early-stop); each mate's records are its primary, then its other locations at its best distance.
    Exact while every read has at most MAX_ANCHORS locations without a partner: here it is raised to all."""
    monkeypatch.setattr(rescue_module, "MAX_ANCHORS", 1 << 20)
    e, m = 3, 50
    seqs = {"repetitive": repetitive_genome, "paralogs": paralogs}.get(
        genome, lambda rng: [random_genome(rng, 3000), random_genome(rng, 900)])(rng)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    pairs = simulate_pairs(rng, seqs, 80, m, "fr", e + 1)
    popts = PairOptions(rescue_edits=0, unpaired_penalty=penalty)
    full = run_pairs(ref, pairs, e, popts)
    best = run_pairs(ref, pairs, e, popts, best_only=True)
    assert best == run_pairs(ref, pairs, e, popts, best_only=True, early_stop=False)

    full_m, best_m = by_mate(full), by_mate(best)
    assert full_m.keys() == best_m.keys()
    proper = 0
    for key, recs in full_m.items():
        got = best_m[key]
        assert [int(f[1]) & ~256 for f in got[:1]] == [int(recs[0][1])]  # flags: proper, strands, mate unmapped
        assert got[0][2:4] + got[0][6:9] == recs[0][2:4] + recs[0][6:9], key  # the pair: places, TLEN
        proper += int(recs[0][1]) & 2 > 0
        nm = [int(tags(f).get("NM", -1)) for f in recs]
        want = {tuple(f[1:4]) for i, f in enumerate(recs) if i == 0 or nm[i] == min(nm)}
        assert {tuple(f[1:4]) for f in got} == want, key
    assert proper > 20
