"""A unique best location proved alone by the FM index (filter/fm_alone.py): every proof against the brute-force
oracle (no other location within one more edit), the proofs the rule promises made, and --best's records with the
proofs against those without and against all-mapping's."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import COMP, batch_of, mutate, random_genome, repetitive_genome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import oracle_locations

from seedmap.engines.base import CandidateEngine
from seedmap.engines.fm import FmEngine, index_spans_alone
from seedmap.filter.fm_alone import MIN_PIECE
from seedmap.index import fm
from seedmap.io.reference import Reference, sequence_of
from seedmap.options import MapOptions
from seedmap.pipeline.stages import SamFormatter, map_batch
from seedmap.verify.bulk import bulk_distances


def occurrences(seqs: list[np.ndarray], p: np.ndarray) -> int:
    """Where p occurs in the sequences (overlapping, N matching nothing), by brute force."""
    n = 0
    for s in seqs:
        if p.size <= s.size:
            win = np.lib.stride_tricks.sliding_window_view(s, p.size)
            n += int(np.count_nonzero((win == p).all(axis=1)))
    return n


def pieces_once(ref: Reference, start: int, end: int, parts: int) -> bool:
    """The rule, spelled out: each piece of the span (of one sequence, without N) occurs once in the genome and its
    reverse complement nowhere."""
    codes = ref.codes()
    seqs = [codes[ref.starts[i]:ref.starts[i + 1]] for i in range(ref.starts.size - 1)]
    m = end - start
    t = codes[start:end]
    if m < parts * MIN_PIECE or (t > 3).any() or sequence_of(ref.starts, start) != sequence_of(ref.starts, end - 1):
        return False
    cut = [t[j * m // parts:(j + 1) * m // parts] for j in range(parts)]
    return all(occurrences(seqs, p) == 1 and occurrences(seqs, COMP[p][::-1]) == 0 for p in cut)


def reads_and_spans(ref: Reference, rng: np.random.Generator, n: int) -> tuple[list, list]:
    """Reads cut from the genome with 0-2 edits, either strand, and each one's unique best location by the oracle
    (strand, start, end, distance); reads whose best is a tie are left out."""
    codes = ref.codes()
    reads, best = [], []
    while len(reads) < n:
        a = int(rng.integers(0, ref.total - 130))
        read = mutate(rng, codes[a:a + int(rng.integers(50, 130))], int(rng.integers(0, 3)))
        if rng.random() < 0.5:
            read = COMP[read][::-1].copy()
        found = oracle_locations(read, codes, ref.starts, 2)
        if not found:
            continue
        d = min(loc[3] for loc in found)
        at_best = [loc for loc in found if loc[3] == d]
        if len(at_best) == 1:
            reads.append(read)
            best.append(at_best[0])
    return reads, best


def proofs(ref: Reference, ix: fm.FmIndex, best: list) -> np.ndarray:
    start, end, d = (np.array([loc[k] for loc in best]) for k in (1, 2, 3))
    return index_spans_alone(ix, ref.packed, ref.nmask, ref.starts, start, end, 2 * d + 2)


def assert_alone(ref: Reference, read: np.ndarray, loc: tuple) -> None:
    """The oracle's word on a proof: with e = 2b + 1 (locations as runs of ends at that e), the read's only
    location within b + 1 edits is its best."""
    d = loc[3]
    near = {x for x in oracle_locations(read, ref.codes(), ref.starts, 2 * d + 1) if x[3] <= d + 1}
    assert len(near) == 1 and next(iter(near))[1:3] == loc[1:3], (loc, near)


def genome(kind: str, rng: np.random.Generator) -> Reference:
    seqs = repetitive_genome(rng) if kind == "repetitive" else [random_genome(rng, 3000), random_genome(rng, 700)]
    return Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["random", "repetitive"]), st.integers(0, 2**31))
def test_every_proof_is_the_oracles(kind, seed):
    """Sound: a proved read has no other location within b + 1 edits. And the rule exactly: proved where the
    pieces occur only there."""
    rng = np.random.default_rng(seed)
    ref = genome(kind, rng)
    ix = fm.build(ref, 4)
    reads, best = reads_and_spans(ref, rng, 25)
    alone = proofs(ref, ix, best)
    for read, loc, proved in zip(reads, best, alone, strict=True):
        assert proved == pieces_once(ref, loc[1], loc[2], 2 * loc[3] + 2)
        if proved:
            assert_alone(ref, read, loc)


@pytest.mark.parametrize("reverse", [False, True])
def test_a_near_copy_is_not_proved(rng, reverse):
    """A read whose span has a copy one substitution away (`reverse`: its reverse complement), a location within
    b + 1 = 2 edits, is not proved; without the copy it is."""
    read_at, length = 1000, 120
    g = random_genome(rng, 4000)
    near = g[read_at:read_at + length].copy()
    near[10] = (near[10] + 1) % 4
    h = np.concatenate([g[:2000], COMP[near][::-1] if reverse else near, g[2000 + length:]])
    for seq, proved in ((g, True), (h, False)):
        ref = Reference.from_codes(["a"], [seq])
        read = seq[read_at:read_at + length].copy()
        read[60] = (read[60] + 2) % 4  # one substitution: a best at 1 edit, over the whole span
        loc = (0, read_at, read_at + length, 1)
        assert oracle_locations(read, ref.codes(), ref.starts, 1) == {loc}
        assert bool(proofs(ref, fm.build(ref, 4), [loc])[0]) is proved
        if proved:
            assert_alone(ref, read, loc)
        else:  # the oracle agrees: the near copy is a location at 2 edits
            assert (int(reverse), 2000, 2000 + length, 2) in oracle_locations(read, ref.codes(), ref.starts, 3)


def test_spans_with_n_or_across_sequences_are_not_proved(rng):
    ref = genome("repetitive", rng)
    n_at = int(np.flatnonzero(ref.codes() == 4)[0])
    spans = [(0, 80), (n_at - 30, n_at + 50), (int(ref.starts[1]) - 40, int(ref.starts[1]) + 40)]
    assert proofs(ref, fm.build(ref, 4), [(0, a, b, 0) for a, b in spans]).tolist() == [True, False, False]


def best_records(ref: Reference, engine, reads: list[np.ndarray], opts: MapOptions) -> bytes:
    out, _ = map_batch(batch_of(reads), engine, SamFormatter(ref), opts)
    return bytes(out)


@pytest.mark.parametrize("kind", ["random", "repetitive"])
def test_best_records_with_proofs_are_those_without(rng, kind, monkeypatch):
    """Reads of one edit (a unique best at 1, the stratum at 2 needed): with the proofs, --best skips that round
    for most of them and still gives exactly the records without proofs, and all-mapping's."""
    ref = genome(kind, rng)
    engine = FmEngine(fm.build(ref, 4), ref.starts, bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask)
    codes = ref.codes()
    reads = []
    for _ in range(80):
        a = int(rng.integers(0, ref.total - 100))
        read = mutate(rng, codes[a:a + int(rng.integers(50, 100))], 1)
        reads.append(COMP[read][::-1].copy() if rng.random() < 0.5 else read)
    proved = []
    prove = engine.spans_alone

    def counted(*args):
        alone = prove(*args)
        proved.append(int(alone.sum()))
        return alone

    monkeypatch.setattr(engine, "spans_alone", counted)
    opts = MapOptions(errors=4, best_only=True)
    with_proofs = best_records(ref, engine, reads, opts)
    assert sum(proved) > (20 if kind == "random" else 3)  # (a repeat's copies are not proved)
    monkeypatch.setattr(engine, "spans_alone", lambda *a: CandidateEngine.spans_alone(engine, *a))
    assert with_proofs == best_records(ref, engine, reads, opts)
    full = best_records(ref, engine, reads, MapOptions(errors=4, best_only=True, early_stop=False))
    assert with_proofs == full
