"""MAPQ from base qualities (mapq.py): each location's log-likelihood equals a replay of its CIGAR against the
reference with the read's qualities, and a competitor weighs more the lower the quality of the bases that tell
it from the best; reads without qualities keep the edit weights."""

from __future__ import annotations

import dnaio
import numpy as np
from helpers import aligned_locations, batch_of, decode, make_batch, random_genome, repetitive_genome, sample_reads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_strata import engine_of

from seedmap.io.reference import Reference
from seedmap.mapq import GAP_LOG, MISMATCH_FLOOR, MISMATCH_LOG, phred_of_rest
from seedmap.pipeline import MapOptions, SamFormatter, map_batch
from seedmap.verify.align import OP_I, OP_M
from seedmap.verify.likelihood import log_likelihoods


def replayed(q: np.ndarray, t: np.ndarray, quals: np.ndarray, ops: list, lens: list) -> float:
    """The log-likelihood of a CIGAR aligning all of q (qualities quals, in q's orientation) to all of t."""
    qi = ti = 0
    s = 0.0
    for op, n in zip(ops, lens, strict=True):
        if op == OP_M:
            for j in range(n):
                if q[qi + j] != t[ti + j] or t[ti + j] > 3:
                    s += MISMATCH_LOG[quals[qi + j]]
            qi, ti = qi + n, ti + n
        elif op == OP_I:
            qi, s = qi + n, s + n * GAP_LOG
        else:
            ti, s = ti + n, s + n * GAP_LOG
    return s


@given(seed=st.integers(0, 2**32 - 1), e=st.integers(1, 5), repetitive=st.booleans())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_log_likelihoods_are_the_cigars_replayed_with_the_qualities(seed, e, repetitive):
    """Reads with substitutions, indels and N on both strands, random qualities: every location's
    log-likelihood is the sum over the bases its alignment mismatches (read from the read's end on the
    reverse strand) and its gap bases."""
    rng = np.random.default_rng(seed)
    seqs = repetitive_genome(rng) if repetitive else [random_genome(rng, 500), random_genome(rng, 300)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    codes = ref.codes()
    reads = sample_reads(rng, seqs, 20, (30, 90), e - 1)
    for read in reads:
        if rng.random() < 0.3:
            read[int(rng.integers(0, read.size))] = 4  # an N: a mismatch wherever it aligns
    quals = ["".join(chr(33 + int(x)) for x in rng.integers(0, 42, r.size)) for r in reads]
    batch = make_batch([dnaio.SequenceRecord(f"r{i}", decode(r), q)
                        for i, (r, q) in enumerate(zip(reads, quals, strict=True))])
    qcodes, qoff, lq, _, _, _, aln = aligned_locations(ref, batch, e)
    got = log_likelihoods(lq, batch.offsets, batch.quals, MISMATCH_LOG, GAP_LOG, aln)
    assert lq.size > 0
    for k in range(lq.size):
        r = lq[k] >> 1
        q = qcodes[qoff[lq[k]]:qoff[lq[k] + 1]]
        qq = batch.quals[batch.offsets[r]:batch.offsets[r + 1]]
        c0, n = aln.cig_off[k], aln.n_runs[k]
        want = replayed(q, codes[aln.start[k]:aln.end[k]], qq[::-1] if lq[k] & 1 else qq,
                        aln.ops[c0:c0 + n].tolist(), aln.lens[c0:c0 + n].tolist())
        assert np.isclose(got[k], want, rtol=1e-12, atol=1e-12), (k, got[k], want)


def runner_up_mapq(rng: np.random.Generator, quality_at_35: str | None) -> int:
    """MAPQ of a read whose copy one substitution away (at read base 35) is the only competitor, its other bases
    read with 'I' (Q40) and base 35 with quality_at_35 (None: a FASTA read)."""
    seg = random_genome(rng, 70)
    near = seg.copy()
    near[35] = (near[35] + 1) % 4
    g = np.concatenate([random_genome(rng, 400), seg, random_genome(rng, 300), near, random_genome(rng, 300)])
    ref = Reference.from_codes(["a"], [g])
    read = seg[:60].copy()
    if quality_at_35 is None:
        batch = batch_of([read], quals=False)
    else:
        batch = make_batch([dnaio.SequenceRecord("r0", decode(read), "I" * 35 + quality_at_35 + "I" * 24)])
    text, _ = map_batch(batch, engine_of("neighborhood", ref), SamFormatter(ref), MapOptions(errors=4))
    prim = [int(f[4]) for f in (x.split("\t") for x in bytes(text).decode().splitlines()) if not int(f[1]) & 256]
    return prim[0]


def test_a_competitor_told_apart_at_a_low_quality_base_weighs_more():
    """The best and its runner-up differ at one base: read with Q40, the runner-up would need an error there
    (3.3e-5) or a variant (MISMATCH_FLOOR): MAPQ 30; read with Q2 (an error rate of 0.63), MAPQ 8; a FASTA read,
    one edit's EDIT_RATIO: 20."""
    high = runner_up_mapq(np.random.default_rng(1), "I")
    low = runner_up_mapq(np.random.default_rng(1), "#")
    fasta = runner_up_mapq(np.random.default_rng(1), None)
    assert high == phred_of_rest(10 ** -4 / 3 + MISMATCH_FLOOR) == 30
    assert low == phred_of_rest(10 ** -0.2 / 3 + MISMATCH_FLOOR) == 8
    assert fasta == 20
