"""The neighborhood engine + verifier must report exactly the brute-force oracle's locations."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    batch_of,
    check_against_oracle,
    make_engine,
    random_genome,
    repetitive_genome,
    sample_reads,
    seedmap_locations,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import oracle_locations

from seedmap.io.reference import Reference
from seedmap.pipeline import errors_per_read


@pytest.mark.parametrize("e", [0, 1, 3, 5])
def test_random_genome(rng, e):
    seqs = [random_genome(rng, 3000), random_genome(rng, 1200)]
    ref = Reference.from_codes(["a", "b"], seqs)
    reads = sample_reads(rng, seqs, 40, (60, 101), e + 1)
    assert check_against_oracle(ref, reads, e) > 20


@pytest.mark.parametrize("e", [1, 2, 4])
def test_repetitive_genome(rng, e):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 40, (30, 90), e + 1)
    assert check_against_oracle(ref, reads, e) > 40  # repeats give many locations per read


@pytest.mark.parametrize("filter_name", ["bs", "ph", "bpr"])
@pytest.mark.parametrize("bulk_min,e", [(0, 2), (0, 4), (5, 3)])
def test_repetitive_reads_verified_in_bulk(rng, filter_name, bulk_min, e):
    """Queries with more than bulk_min raw candidates have them verified in bulk before merging (what keeps
    the windows of reads from diverged repeat families small): the hit set stays the oracle's."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 40, (30, 90), e + 1)
    assert check_against_oracle(ref, reads, e, filter=filter_name, bulk_min=bulk_min) > 40


def test_bulk_verification_drops_windows(rng):
    """It can fail: on a repetitive genome, verifying candidates in bulk leaves fewer merged windows."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    batch = batch_of(sample_reads(rng, seqs, 60, (30, 90), 5))
    qerr = errors_per_read(batch.lengths, 4)
    plain, bulk = make_engine(ref), make_engine(ref, bulk_min=0)
    qcodes, qoff = batch.queries()
    n_plain = plain.candidate_windows(qcodes, qoff, qerr)[0].size
    n_bulk = bulk.candidate_windows(qcodes, qoff, qerr)[0].size
    assert n_bulk < n_plain


def test_rate_errors_and_long_reads(rng):
    seqs = [random_genome(rng, 2500)]
    ref = Reference.from_codes(["a"], seqs)
    reads = sample_reads(rng, seqs, 12, (150, 320), 12)
    check_against_oracle(ref, reads, 0.05)


@pytest.mark.parametrize("u,l", [(4, 4), (3, 0), (6, 16), (12, 2)])
def test_index_shapes_short_windows(rng, u, l):
    """Windows shorter than u, between u and u + l, and longer than u + l (capped) all stay complete."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 25, (16, 70), 4)
    check_against_oracle(ref, reads, 3, u=u, l=l)


@pytest.mark.parametrize("fe", [1, 2])
def test_degenerated_patterns_keep_hit_set(rng, fe):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 25, (40, 80), 3)
    check_against_oracle(ref, reads, 3, u=4, l=8, fe=fe)


def test_step_plan_that_keeps_guarantee(rng):
    seqs = [random_genome(rng, 2000)]
    ref = Reference.from_codes(["a"], seqs)
    reads = [r for r in sample_reads(rng, seqs, 20, (64, 65), 3)]
    # m = 64, e = 3 -> windows of 16; step 4 divides 16, so 4 disjoint windows are among them.
    check_against_oracle(ref, reads, 3, step=4)


def test_plan_with_too_few_windows_misses_indel_hits(rng):
    """A test that can fail: with 2 windows at e = 3, some indel-carrying reads are missed."""
    seqs = [random_genome(rng, 3000)]
    ref = Reference.from_codes(["a"], seqs)
    reads = []
    for k in range(30):
        p = 100 + 80 * k
        r = seqs[0][p:p + 60].copy()
        reads.append(np.concatenate([r[:15], r[16:45], r[46:]]))  # a deletion in each half
    got = seedmap_locations(ref, reads, 3, windows=2, step=0)
    codes = ref.codes()
    missed = sum(1 for i, r in enumerate(reads) if got[i] != oracle_locations(r, codes, ref.starts, 3))
    assert missed > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), e=st.integers(0, 4), m=st.integers(8, 60),
       period=st.sampled_from([0, 1, 2, 3, 7]))
def test_property_random_and_periodic(seed, e, m, period):
    rng = np.random.default_rng(seed)
    g = random_genome(rng, 400)
    if period:
        g[100:300] = np.resize(random_genome(rng, period), 200)
    ref = Reference.from_codes(["g"], [g])
    reads = sample_reads(rng, [g], 3, (m, m + 1), e + 1)
    check_against_oracle(ref, reads, e, u=5, l=6)


def test_edits_at_read_ends_pick_the_latest_optimal_start(rng):
    """Edits on the first/last bases make several optimal starts: the location must use the largest."""
    seqs = [random_genome(rng, 2000)]
    ref = Reference.from_codes(["a"], seqs)
    reads = []
    for k in range(24):
        r = seqs[0][50 + 70 * k:50 + 70 * k + 40].copy()
        kind = k % 4
        if kind == 0:
            r[0] = (r[0] + 1) % 4  # mismatch or insertion at the start: same cost
        elif kind == 1:
            r = np.concatenate([[(r[0] + 2) % 4], r]).astype(np.uint8)
        elif kind == 2:
            r[-1] = (r[-1] + 1) % 4
        else:
            r = np.concatenate([r, [(r[-1] + 1) % 4], r[:0]]).astype(np.uint8)
        reads.append(r)
    check_against_oracle(ref, reads, 2)
    got = seedmap_locations(ref, reads[:1], 2)[0]
    # Read 0 = ref[50:90] with its first base changed: its best location starts at 51 (insertion),
    # not 50 (mismatch), and ends at 90.
    assert (0, 51, 90, 1) in got


def test_windows_with_many_locations_lose_none(rng, monkeypatch):
    """Force the overflow path of the verifier (more locations in a window than its first-pass slots)."""
    from seedmap.verify import windows as cpu

    monkeypatch.setattr(cpu, "SLOTS", 1)
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 30, (20, 60), 3)
    reads.append(np.tile(np.array([0, 1], np.uint8), 15))  # inside the (AC)^70 repeat
    reads.append(np.tile(np.array([0, 1, 2, 3, 3, 2], np.uint8), 6))
    assert check_against_oracle(ref, reads, 1) > 30
