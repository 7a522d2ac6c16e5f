"""Where an alignment starts and ends (verify/align.py): no insertion at a read end where substitutions do
as well, as bwa and yara report it (`100M` at p, not `1I99M` at p + 1 nor `99M1I`), never outside the
location's sequence, and at the location's verified distance.

The location itself (its end, and its start: the latest optimal one) is the verifiers' and stays as it is;
only the alignment reported for it may start up to d bases before it and end up to d bases after it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import (
    COMP,
    aligned_locations,
    batch_of,
    decode,
    mutate,
    random_genome,
    reference_from_alignment,
    repetitive_genome,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import GAP, aligned_interval, fewest_gaps

from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.index import neighborhood
from seedmap.io.reference import Reference
from seedmap.pipeline import MapOptions, SamFormatter, map_batch
from seedmap.verify.align import OP_I, OP_M, free_bounds


def records(ref: Reference, reads: list[np.ndarray], e: int) -> list[list[str]]:
    engine = NeighborhoodEngine(neighborhood.build(ref, 6, 8), ref.starts)
    text, _ = map_batch(batch_of(reads), engine, SamFormatter(ref), MapOptions(errors=e))
    return [line.split("\t") for line in bytes(text).decode().splitlines()]


def other(base: int) -> int:
    return (base + 1) % 4


@pytest.mark.slow
def test_a_first_base_substitution_is_not_an_insertion(rng):
    """The read is ref[p:p + 100] with its first and 60th bases substituted: the latest optimal start is
    p + 1 (read base 0 inserted), but `100M` at p costs the same 2 edits."""
    g = random_genome(rng, 400)
    ref = Reference.from_codes(["chr"], [g])
    read = g[150:250].copy()
    read[0], read[60] = other(read[0]), other(read[60])
    rec = records(ref, [read], 3)[0]
    assert rec[3] == "151" and rec[5] == "100M" and "NM:i:2" in rec


def test_a_last_base_substitution_after_a_deletion_is_not_an_insertion(rng):
    """A deletion inside and a substitution at the last base: the end whose span equals the read's length
    aligns as `..1D..1I`; one base on, `..1D..M` costs the same."""
    g = random_genome(rng, 400)
    ref = Reference.from_codes(["chr"], [g])
    read = np.concatenate([g[150:190], g[191:250]])  # 99 bases, ref[190] deleted
    read[-1] = other(read[-1])
    rec = records(ref, [read], 3)[0]
    assert rec[3] == "151" and re.fullmatch(r"\d+M1D\d+M", rec[5]) and "NM:i:2" in rec


def test_at_a_sequence_start_the_insertion_stays(rng):
    """A read whose first base hangs off its sequence's start keeps the insertion: the alignment never
    reaches into the sequence before."""
    a, b = random_genome(rng, 300), random_genome(rng, 300)
    ref = Reference.from_codes(["a", "b"], [a, b])
    read = np.concatenate([[other(a[-1])], b[:80]])  # a base that is not a's last, then b's first 80
    rec = records(ref, [read], 2)[0]
    assert rec[2] == "b" and rec[3] == "1" and rec[5] == "1I80M"


def replay(q: np.ndarray, t: np.ndarray, ops: list, lens: list) -> tuple[int, int]:
    """(edits, gaps) of a CIGAR (runs of M, I, D) aligning all of q to all of t; fails if it does not."""
    qi = ti = edits = 0
    for op, n in zip(ops, lens, strict=True):
        if op == OP_M:
            edits += int(np.count_nonzero((q[qi:qi + n] != t[ti:ti + n]) | (t[ti:ti + n] > 3)))
            qi, ti = qi + n, ti + n
        elif op == OP_I:
            qi, edits = qi + n, edits + n
        else:
            ti, edits = ti + n, edits + n
    assert (qi, ti) == (q.size, t.size)
    return edits, sum(op != OP_M for op in ops)


@given(seed=st.integers(0, 2**32 - 1), e=st.integers(1, 6), repetitive=st.booleans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_alignments_have_the_fewest_gaps_at_the_verified_distance(seed, e, repetitive):
    """Every location of reads with substitutions and indels (some at their ends), on random or repetitive
    sequences: the CIGAR aligns the read to ref[start:end) at the verified distance, within the location's
    sequence and d bases of it, over the interval the brute-force oracle gives (oracle.aligned_interval:
    fewest gaps, then leftmost end, then latest start) and with that many gaps; the ungapped alignment
    wherever it costs d."""
    rng = np.random.default_rng(seed)
    seqs = repetitive_genome(rng) if repetitive else [random_genome(rng, 500), random_genome(rng, 300)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    codes = ref.codes()
    reads = []
    for _ in range(20):
        s = seqs[int(rng.integers(0, len(seqs)))]
        m = int(rng.integers(30, 90))
        if s.size < m:
            continue
        p = int(rng.integers(0, s.size - m + 1))
        read = np.minimum(mutate(rng, s[p:p + m], int(rng.integers(0, e + 1))), 3)
        for end in (0, -1):  # edits at the read's ends, where the choice of alignment shows
            if rng.random() < 0.5:
                read[end] = other(read[end])
        reads.append(COMP[read[::-1]] if rng.random() < 0.5 else read)
    qcodes, qoff, lq, ls, le, ld, aln = aligned_locations(ref, batch_of(reads), e)
    lo, hi = free_bounds(ls, le, ld, ref.starts)
    for k in range(lq.size):
        q = qcodes[qoff[lq[k]]:qoff[lq[k] + 1]]
        d, a, b = int(ld[k]), int(aln.start[k]), int(aln.end[k])
        seq = np.searchsorted(ref.starts, ls[k], side="right") - 1
        assert ref.starts[seq] <= lo[k] <= a <= ls[k] and le[k] <= b <= hi[k] <= ref.starts[seq + 1]
        assert lo[k] >= ls[k] - d and hi[k] <= le[k] + d
        c0, n = aln.cig_off[k], aln.n_runs[k]
        ops, lens = aln.ops[c0:c0 + n].tolist(), aln.lens[c0:c0 + n].tolist()
        edits, gaps = replay(q, codes[a:b], ops, lens)
        assert edits == d
        md = bytes(aln.md[aln.md_off[k]:aln.md_off[k] + aln.md_len[k]]).decode()
        cigar = "".join(f"{n}{'MID'[op]}" for op, n in zip(ops, lens, strict=True))
        assert reference_from_alignment(decode(q), cigar, md) == (decode(codes[a:b]), d)
        assert (a, b) == aligned_interval(q, codes, ref.starts, int(ls[k]), int(le[k]), d)
        assert gaps == fewest_gaps(q, codes[a:b], 0)[-1] - d * GAP
        m = q.size
        if le[k] - m >= lo[k]:
            t = codes[le[k] - m:le[k]]
            if int(np.count_nonzero((q != t) | (t > 3))) == d:
                assert (ops, lens, a, b) == ([OP_M], [m], int(le[k]) - m, int(le[k]))
