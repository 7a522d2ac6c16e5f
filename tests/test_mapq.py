"""MAPQ: 0 for ties, growing with the edit gap to the second best until the cap, lower with more competing
locations one edit behind and with a best location near the edits searched (e); locations two or more edits
behind the best are not counted (mapq.py: the strata every mode searches)."""

from __future__ import annotations

import numpy as np

from seedmap.mapq import MAX_MAPQ
from seedmap.records import make_records


def primary_mapq(dists: list[int], e: int = 6) -> int:
    """MAPQ of one read whose locations have these distances (at distinct positions)."""
    n = len(dists)
    recs = make_records(1, np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64) * 1000,
                        np.array(dists, dtype=np.int32), False, 0, np.array([e]))
    prim = recs.mapq[(recs.flag & 256) == 0]
    assert prim.size == 1 and np.all(recs.mapq[(recs.flag & 256) != 0] == 0)
    return int(prim[0])


def test_ties_are_zero():
    assert primary_mapq([0, 0]) == 0
    assert primary_mapq([2, 2, 3]) == 0
    assert primary_mapq([1, 3, 1]) == 0


def test_monotone_in_the_gap():
    for best in (0, 1, 2):
        q = [primary_mapq([best, best + gap]) for gap in range(1, 7 - best)]
        assert q[0] > 0 and all(a <= b for a, b in zip(q, q[1:], strict=False)), q
        assert q[0] < q[1] == q[-1]  # (counted: one edit behind; further: the prior's alone)
    assert primary_mapq([0, 1]) < primary_mapq([0, 2]) == primary_mapq([0, 3]) == MAX_MAPQ


def test_more_competitors_and_a_best_near_e_lower_it():
    assert primary_mapq([0, 1, 1, 1]) < primary_mapq([0, 1])
    assert primary_mapq([0, 2, 2, 2]) == primary_mapq([0]) == MAX_MAPQ
    assert primary_mapq([6], e=6) < primary_mapq([5], e=6) < primary_mapq([0], e=6)
    assert primary_mapq([0, 1]) > 0


def test_unmapped_reads_get_zero():
    recs = make_records(2, np.array([0], dtype=np.int64), np.array([5], dtype=np.int64), np.array([0], np.int32),
                        False, 0, np.array([3, 3]))
    assert recs.mapq.tolist() == [MAX_MAPQ, 0] and recs.flag.tolist() == [0, 4]


def test_a_read_inside_a_short_tandem_repeat_is_not_unique():
    """A read from inside a tandem array is one location (one run of hit ends spans the array), yet every
    copy is as good: MAPQ 0, as bwa gives it (it was 60: 52 of 55 confident misplacements of 40,000
    example reads). A read with a unique flank, or from unique sequence, keeps its MAPQ."""
    from helpers import batch_of, random_genome

    from seedmap.engines.neighborhood import NeighborhoodEngine
    from seedmap.index import neighborhood
    from seedmap.io.reference import Reference
    from seedmap.pipeline import MapOptions, SamFormatter, map_batch

    rng = np.random.default_rng(5)
    exact = np.tile(np.frombuffer(b"\x00\x01\x02\x03\x03\x02\x00", dtype=np.uint8), 40)  # ACGTTGA x 40
    g = np.concatenate([random_genome(rng, 500), exact, random_genome(rng, 500)])
    ref = Reference.from_codes(["chr"], [g])
    engine = NeighborhoodEngine(neighborhood.build(ref, 6, 8), ref.starts)
    inside, flank, unique = g[600:700], g[450:550], g[100:200]
    reads = [inside, flank, unique, 3 - inside[::-1]]
    text, _ = map_batch(batch_of(reads), engine, SamFormatter(ref), MapOptions(errors=4))
    prim = {f[0]: int(f[4]) for f in (x.split("\t") for x in bytes(text).decode().splitlines())
            if not int(f[1]) & 256}
    assert prim == {"r0": 0, "r1": MAX_MAPQ, "r2": MAX_MAPQ, "r3": 0}
    best, _ = map_batch(batch_of(reads), engine, SamFormatter(ref), MapOptions(errors=4, best_only=True))
    assert [int(f.split("\t")[4]) for f in bytes(best).decode().splitlines()[:1]] == [0]
