"""The FM-index engine: Salavert's toy example as a fixture, and exactly the oracle's locations (and so the
neighborhood engine's) on random and repetitive genomes, for e = 0..5, with N in reads and reference."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import (
    NO_TABLE,
    assert_oracle,
    engine_locations,
    genome_with_n,
    random_genome,
    repetitive_genome,
    sample_reads,
    seedmap_locations,
    young_family,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

from seedmap.engines.base import QueryMemo
from seedmap.engines.fm import SAVED_ROWS, FmEngine
from seedmap.errors import SeedmapError
from seedmap.filter import fm_pieces
from seedmap.filter.fm_located import locate_rows, union_rows
from seedmap.filter.fm_lookup import tables
from seedmap.filter.fm_scheme import (
    D_FROM_E,
    EXACT,
    GROUP,
    ROW,
    WALK_BASE,
    WALK_MAX,
    bidir,
    d_arrays_made,
    exact_group,
    exact_pieces,
    group_exact,
    group_size,
    memo_size,
    scratch_size,
    search,
    search_query,
    walk_per_row,
)
from seedmap.filter.fm_search import (
    backward_search,
    bwt_symbol,
    locate,
    locate_four,
    lower_bounds,
    occ,
    occ_all,
    table_k,
)
from seedmap.index import fm
from seedmap.io.alphabet import encode
from seedmap.io.reference import Reference
from seedmap.pipeline.strata import query_ids, subset_queries
from seedmap.verify.bulk import bulk_distances

# ------------------------------------------------------------------------------- the toy example (§2.1.1)

TOY = Reference.from_codes(["x"], [encode(b"AGGAGC")])  # text AGGAGC$ ($ = the separator, smallest)


def codes(s: str) -> np.ndarray:
    return encode(s.encode()).astype(np.int64)


@njit(cache=True)
def occs(table: np.ndarray, c: int, rows: np.ndarray) -> np.ndarray:
    return np.array([occ(table, c, i) for i in rows])


@njit(cache=True)
def occ_alls(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    out = np.empty((rows.size, 5), dtype=np.int64)
    for k in range(rows.size):
        out[k, 0], out[k, 1], out[k, 2], out[k, 3], out[k, 4] = occ_all(table, rows[k])
    return out


@njit(cache=True)
def symbols(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return np.array([bwt_symbol(table, i) for i in rows])


def test_toy_suffix_array_bwt_and_tables():
    text, starts = fm.make_text(TOY)
    assert text.tolist() == [1, 3, 3, 1, 3, 2, 0] and starts.tolist() == [0, 7]
    sa = fm.suffix_array(text)
    assert sa.tolist() == [6, 3, 0, 5, 2, 4, 1]  # S
    assert np.argsort(sa).tolist() == [2, 6, 4, 1, 5, 3, 0]  # R = S^-1
    assert "".join("$ACGTN"[c] for c in fm.bwt_of(text, sa)) == "CG$GGAA"  # B
    assert (fm.symbol_counts(text) - 1)[:4].tolist() == [0, 2, 3, 6]  # C without $ (ours counts the $)
    occ_tab, _, _ = fm.one_text(text, 1)
    want = {"A": [0, 0, 0, 0, 0, 0, 1, 2], "C": [0, 1, 1, 1, 1, 1, 1, 1], "G": [0, 0, 1, 1, 2, 3, 3, 3],
            "T": [0] * 8}
    for c, column in enumerate("ACGT"):
        assert [occ(occ_tab, c, i) for i in range(8)] == want[column], column


@pytest.mark.parametrize("r", [1, 2, 3, 7])
def test_toy_searches_and_locate(r):
    ix = fm.build(TOY, r)
    # Seed: AGG -> [2, 2], S[2] = 0; AG -> [1, 2], S = {3, 0} (closed intervals; ours are half-open).
    for pattern, rows, positions in (("AGG", (2, 3), [0]), ("AG", (1, 3), [3, 0]), ("GGAGC", (6, 7), [1]),
                                     ("T", (0, 0), []), ("CA", (0, 0), [])):
        assert backward_search(ix.fwd_occ, ix.counts, ix.n, codes(pattern)) == rows, pattern
        got = [locate(ix.fwd_occ, ix.counts, ix.fwd_mark, ix.fwd_ssa, i) for i in range(*rows)]
        assert got == positions, pattern
        # The reverse-text index (no SA samples of its own) finds the reversed pattern as often.
        lo, hi = backward_search(ix.rev_occ, ix.counts, ix.n, codes(pattern)[::-1].copy())
        assert hi - lo == len(positions), pattern
    assert [locate(ix.fwd_occ, ix.counts, ix.fwd_mark, ix.fwd_ssa, i) for i in range(7)] == [6, 3, 0, 5, 2, 4, 1]
    # four rows walked in step, a row given twice included
    four = locate_four(ix.fwd_occ, ix.counts, ix.fwd_mark, ix.fwd_ssa, 0, 1, 2, 3)
    four += locate_four(ix.fwd_occ, ix.counts, ix.fwd_mark, ix.fwd_ssa, 4, 5, 6, 6)
    assert list(four) == [6, 3, 0, 5, 2, 4, 1, 1]


def test_toy_inexact_search():
    ix = fm.build(TOY, 2)
    out = np.zeros((16, ROW), dtype=np.int64)
    # AGCAGC is one substitution from AGGAGC: its piece AGC (of AGC|AGC) is exact, the other costs one edit.
    idx = bidir(ix)
    n_rows, cand = search_query(codes("AGCAGC"), 1, idx, 0, out)
    assert cand >= 1 and n_rows >= 1
    assert search_query(codes("AGCAGC"), 0, idx, 0, out) == (0, 0)
    assert search_query(codes("AGGAGC"), 0, idx, 0, out)[1] == 1
    assert search_query(codes("TTTTTT"), 2, idx, 0, out) == (0, 0)


def test_lower_bounds():
    ix = fm.build(TOY, 2)
    bound = np.zeros(7, dtype=np.int64)
    for table in (NO_TABLE, tables(ix)[0]):
        lower_bounds(ix.fwd_occ, ix.counts, ix.n, codes("TTAGGA"), 6, bound, table)
        assert bound.tolist() == [2, 1, 0, 0, 0, 0, 0]  # T and T never occur; AGGA does
        lower_bounds(ix.fwd_occ, ix.counts, ix.n, codes("GNCAG"), 5, bound, table)
        assert bound[:6].tolist() == [2, 2, 1, 0, 0, 0]  # CAG does not occur (CA does not); N never does


# --------------------------------------------------------------------------------- against the oracle


def fm_locations(ref: Reference, reads: list[np.ndarray], errors: float, r: int = 4, small: int = 0,
                 saved_rows: int = SAVED_ROWS, bulk_min: int = FmEngine.bulk_min) -> list[set]:
    """Locations found by the FM engine; small = 0: every candidate string is walked to its end; bulk_min = 0:
    every query's candidates verified in bulk before merging."""
    engine = FmEngine(fm.build(ref, r), ref.starts, bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask,
                      verify_below=small, saved_rows=saved_rows)
    engine.bulk_min = bulk_min
    return engine_locations(engine, ref, reads, errors)


def check(ref: Reference, reads: list[np.ndarray], errors: float, r: int = 4, small: int = 0,
          saved_rows: int = SAVED_ROWS, bulk_min: int = FmEngine.bulk_min) -> int:
    return assert_oracle(fm_locations(ref, reads, errors, r, small, saved_rows, bulk_min), ref, reads, errors)


@pytest.mark.parametrize("e", [0, 1, 2, 3, 4, 5])
def test_random_genome(rng, e):
    seqs = [random_genome(rng, 3000), random_genome(rng, 1200)]
    ref = Reference.from_codes(["a", "b"], seqs)
    reads = sample_reads(rng, seqs, 40, (40, 101), e + 1)
    assert check(ref, reads, e, r=5) > 20


@pytest.mark.parametrize("e", [0, 1, 2, 3, 4])
# 2: repeat reads' strings spilled; bulk_min 0: every query's candidates verified in bulk, 4: the few of one
# verified only once merged
@pytest.mark.parametrize("small,saved_rows,bulk_min", [(0, SAVED_ROWS, 4), (8, 2, 0), (8, SAVED_ROWS, 4)])
def test_repetitive_genome(rng, e, small, saved_rows, bulk_min):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 40, (20, 90), e + 1)
    assert check(ref, reads, e, small=small, saved_rows=saved_rows, bulk_min=bulk_min) > 30


def test_strings_that_do_not_fit_the_pool_are_spilled(rng):
    """The count pass keeps each query's accepted strings in a shared pool while there is room, the rest in its
    spill; a query with more strings than the search's scratch holds is searched again into room of its own: the
    same windows every way, and every path taken."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 40, (40, 90), 2)
    qcodes = np.concatenate(reads).astype(np.uint8)  # each read once, as both of its strands' queries
    qoff = np.zeros(len(reads) + 1, dtype=np.int64)
    np.cumsum([r.size for r in reads], out=qoff[1:])
    qerr = np.full(len(reads), 4, dtype=np.int64)
    ix = fm.build(ref, 4)
    roomy = FmEngine(ix, ref.starts, verify_below=0, saved_rows=4096)
    want = roomy.candidate_windows(qcodes, qoff, qerr)
    assert want[0].size > 0
    _, (want_rows, want_at, n_saved, _) = roomy._count(qcodes, qoff, qerr)
    for scratch_rows in (4096, 2):
        tight = FmEngine(ix, ref.starts, verify_below=0, saved_rows=1, scratch_rows=scratch_rows)
        _, (rows, row_at, got_n, _) = tight._count(qcodes, qoff, qerr)
        assert np.array_equal(got_n, n_saved) and n_saved.max() > 2  # (2: some searched again)
        nq = qoff.size - 1  # (the pool holds one string per query, give or take a slab's rounding)
        assert (row_at + n_saved <= nq).any() and (row_at >= 2 * nq).any()  # pooled, spilled
        for qi in range(qoff.size - 1):  # every query's strings where row_at says, as the roomy pool has them
            a, w, k = row_at[qi], want_at[qi], n_saved[qi]
            assert np.array_equal(rows[a:a + k], want_rows[w:w + k])
        got = tight.candidate_windows(qcodes, qoff, qerr)
        assert all(np.array_equal(a, b) for a, b in zip(want, got, strict=True))  # (query, window)


@pytest.fixture(scope="module")
def small_fm() -> fm.FmIndex:
    rng = np.random.default_rng(23)
    seqs = [rng.integers(0, 4, 1500).astype(np.uint8), rng.integers(0, 4, 700).astype(np.uint8)]
    return fm.build(Reference.from_codes(["a", "b"], seqs), 8)


@pytest.mark.parametrize("wide", [False, True])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.tuples(st.integers(0, 400), st.integers(0, 30)), max_size=6), min_size=1, max_size=8))
def test_pooled_rows_are_located_once(small_fm, wide, strings):
    """The fill pass's positions of pooled strings (fm_located): the union of their row ranges (overlapping,
    nested, repeated, empty; queries with strings and without) located once gives every row of every pooled
    string its own locate(), in 32 bits and, as for a text of 2^32 rows or more, in 64."""
    ix = small_fm
    rows = np.full((len(strings) * 8, ROW), -7, dtype=np.int64)  # pool slots between the strings are left unset
    row_at = np.arange(len(strings), dtype=np.int64) * 8
    n_saved = np.array([0 if qi % 3 == 2 else len(q) for qi, q in enumerate(strings)], dtype=np.int64)
    for qi, q in enumerate(strings):
        for k, (lo, n) in enumerate(q[:n_saved[qi]]):
            rows[row_at[qi] + k] = (k, 0, lo, min(lo + n, ix.n))
    pooled = [row_at[qi] + k for qi in range(len(strings)) for k in range(n_saved[qi])]
    at, pos = union_rows(rows, row_at, n_saved, 1 << 33 if wide else ix.n)
    assert pos.dtype == (np.int64 if wide else np.uint32)
    assert pos.size <= sum(int(rows[r, 3] - rows[r, 2]) for r in pooled)
    locate_rows(pos, ix.counts, ix.fwd_occ, ix.fwd_mark, ix.fwd_ssa)
    for r in pooled:
        want = [locate(ix.fwd_occ, ix.counts, ix.fwd_mark, ix.fwd_ssa, i) for i in range(rows[r, 2], rows[r, 3])]
        assert list(pos[at[r]:at[r] + len(want)]) == want


def test_memo_keeps_each_querys_d_arrays_across_rounds(rng):
    """The strata rounds search a read again with a larger e; the memo keeps its D arrays (which do not depend
    on e) from the first search: each query's slot holds exactly what lower_bounds computes where the search
    made them (a query that walks nowhere, as most from the other strand or from nowhere, leaves its slot empty),
    e = 0 (which needs none) and e below D_FROM_E (cheaper without) leave it empty, a later round with a subset
    of the queries reads the right slots, and the windows are the same as without a memo, with every query's
    strings in the pool and with queries searched twice (scratch too small for their strings)."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 30, (40, 90), 3) + [random_genome(rng, 60) for _ in range(2)]
    qcodes = np.concatenate(reads).astype(np.uint8)
    qoff = np.zeros(len(reads) + 1, dtype=np.int64)
    np.cumsum([r.size for r in reads], out=qoff[1:])
    ix = fm.build(ref, 4)
    fwd, rev = tables(ix)
    for saved_rows, scratch_rows in ((4096, 4096), (1, 1)):  # the second: queries spilled, searched again
        engine = FmEngine(ix, ref.starts, verify_below=0, saved_rows=saved_rows, scratch_rows=scratch_rows)
        memo = QueryMemo(qoff)
        for e in range(D_FROM_E):
            engine.candidate_windows(qcodes, qoff, np.full(len(reads) // 2, e, dtype=np.int64), memo)
            at, slots = memo.slots(engine, memo_size)
            assert not slots.any()
        engine.candidate_windows(qcodes, qoff, np.full(len(reads) // 2, D_FROM_E, dtype=np.int64), memo)
        made = 0
        for qi, read in enumerate(reads):
            m = read.size
            scratch = np.empty(scratch_size(m, D_FROM_E), dtype=np.int64)
            search(read, D_FROM_E, bidir(ix), 0, np.empty((0, ROW), dtype=np.int64), scratch, False)
            if not d_arrays_made(scratch, m):
                assert not slots[at[qi]:at[qi + 1]].any()
                continue
            made += 1
            want = np.empty(2 * m + 2, dtype=np.int64)
            lower_bounds(ix.fwd_occ, ix.counts, ix.n, read, m, want[:m + 1], fwd)
            lower_bounds(ix.rev_occ, ix.counts, ix.n, read[::-1].copy(), m, want[m + 1:], rev)
            assert slots[at[qi]] == 1 and np.array_equal(slots[at[qi] + 1:at[qi + 1]], np.minimum(want, 127))
        assert 0 < made < len(reads)
        later = np.arange(4, len(reads) // 2, 3)  # a later round: some reads, a larger e
        memo.ids = query_ids(later)
        sub, sub_off = subset_queries(qcodes, qoff, later)
        e = np.full(later.size, D_FROM_E + 1, dtype=np.int64)
        got = engine.candidate_windows(sub, sub_off, e, memo)
        want = engine.candidate_windows(sub, sub_off, e)
        assert want[0].size > 0 and all(np.array_equal(a, b) for a, b in zip(want, got, strict=True))


@pytest.mark.parametrize("small", [0, 4])
def test_pieces_of_a_group_of_queries_searched_in_step_as_each_alone(rng, small):
    """exact_group searches the pieces of up to GROUP queries in step: each query's pieces end as exact_pieces
    leaves them for that query alone, cut as search cuts it (rows, where the part handed on starts in its own query,
    the next base), with e from 0 to past fm_pieces.CUT_FROM pieces (those left out, as is a query no longer than
    its e), reads of repeats, of nowhere and with N, and a last group short of GROUP."""
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    ix = bidir(fm.build(ref, 4))
    reads = sample_reads(rng, seqs, 2 * GROUP + 3, (2, 120), 3) + [random_genome(rng, 70), genome_with_n(rng, 90)]
    reads = [r for r in reads for _ in range(2)]  # two queries per read, as both strands
    qcodes = np.concatenate(reads).astype(np.uint8)
    qoff = np.zeros(len(reads) + 1, dtype=np.int64)
    np.cumsum([r.size for r in reads], out=qoff[1:])
    qerr = rng.integers(0, fm_pieces.CUT_FROM + 1, len(reads) // 2)
    k_max = int(qerr.max()) + 1
    group = np.full(group_size(k_max), -7, dtype=np.int64)
    kk = table_k(ix.fwd_table)
    grouped = handed = 0
    for lo in range(0, len(reads), GROUP):
        exact_group(qcodes, qoff, qerr, lo, min(len(reads), lo + GROUP), ix, kk, small, group, k_max)
        for qi in range(lo, min(len(reads), lo + GROUP)):
            q = qcodes[qoff[qi]:qoff[qi + 1]]
            k = int(qerr[qi >> 1]) + 1
            got = group_exact(group, qi - lo, k_max)
            if k < 2 or k >= fm_pieces.CUT_FROM or q.size < k:
                assert got.size == 0
                continue
            bounds = np.empty(k + 1, dtype=np.int64)
            cut = np.empty(fm_pieces.cut_scratch(q.size, k), dtype=np.int64)
            fm_pieces.pieces(q, q.size, k, ix.n, ix.counts, ix.fwd_occ, ix.fwd_table, bounds, cut,
                             np.empty(3 * k, dtype=np.int64))  # search's own cut
            want = np.empty(EXACT * k, dtype=np.int64)
            exact_pieces(q, bounds, k, ix, kk, small, want)
            assert np.array_equal(got[:EXACT * k], want)
            grouped += 1
            handed += int((want[4::EXACT] > 0).sum())
    assert grouped > len(reads) // 3 and handed > 0


def test_a_read_of_rare_pieces_makes_no_d_arrays(rng):
    """Only the walks read the D arrays: a read whose every piece is down to `small` rows hands them to
    verification and spares the two backward searches (with small = 0 the same read walks, and makes them)."""
    g = random_genome(rng, 5000)
    ix = fm.build(Reference.from_codes(["g"], [g]), 4)
    read = g[1000:1090].copy()
    for small, walks in ((1, False), (0, True)):
        scratch = np.empty(scratch_size(read.size, D_FROM_E), dtype=np.int64)
        out = np.empty((16, ROW), dtype=np.int64)
        n_out, cand = search(read, D_FROM_E, bidir(ix), small, out, scratch, False)
        assert d_arrays_made(scratch, read.size) == walks
        assert cand >= 1 and (walks or n_out == cand == D_FROM_E + 1)  # one row per piece


def test_rate_errors_long_and_short_reads(rng):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 12, (150, 260), 12) + sample_reads(rng, seqs, 30, (3, 14), 3)
    check(ref, reads, 0.05)
    check(ref, reads[12:], 2)


def test_reads_across_reference_n(rng):
    """A read over a reference N run (each N an edit) and reads with N: searched through, never lost."""
    g = random_genome(rng, 600)
    g[300:302] = 4
    ref = Reference.from_codes(["g", "h"], [g, random_genome(rng, 50)])
    reads = [g[280:330].copy(), g[250:320].copy(), g[299:303].copy()]
    reads[1][[5, 40]] = 4
    assert check(ref, reads, 3, r=3) >= 2


def test_same_locations_as_neighborhood_engine(rng):
    seqs = repetitive_genome(rng)
    ref = Reference.from_codes(["r1", "r2", "tiny"], seqs)
    reads = sample_reads(rng, seqs, 60, (40, 120), 5)
    a = fm_locations(ref, reads, 0.05, r=8, small=3)
    b = seedmap_locations(ref, reads, 0.05, u=6, l=10)
    assert a == b and sum(map(len, a)) > 50


@pytest.mark.parametrize("e", [3, 5])
def test_walks_over_budget_verify_what_they_did_not_walk(rng, e):
    """A young family's steps walk past their budget (WALK_BASE + WALK_PER_ROW per row of the exact piece): they
    stop, keep the strings they accepted, and hand the rows they did not walk to verification (depth-0 strings
    of a piece past the first e bases, which no walk records otherwise). Those lie within their piece's rows,
    some steps hand on fewer rows than the piece has (the subtrees walked are left out), and every location
    is still found."""
    g = young_family(rng, 400)
    ref = Reference.from_codes(["g", "t"], [g, random_genome(rng, 300)])
    reads = sample_reads(rng, [g], 30, (90, 121), e + 1)
    ix = fm.build(ref, 4)
    fwd = tables(ix)[0]
    out = np.empty((1 << 16, ROW), dtype=np.int64)
    over = fewer = 0
    for read in reads:
        n_out, _ = search_query(read, e, bidir(ix), 0, out)
        assert n_out <= out.shape[0]
        rows = out[:n_out]
        handed = rows[(rows[:, 0] > e) & (rows[:, 1] == 0)]
        bounds = np.empty(e + 2, dtype=np.int64)
        fm_pieces.pieces(read, read.size, e + 1, ix.n, ix.counts, ix.fwd_occ, fwd, bounds,
                         np.empty(fm_pieces.cut_scratch(read.size, e + 1), dtype=np.int64),
                         np.empty(3 * (e + 1), dtype=np.int64))
        for js in np.unique(handed[:, 0]):
            j = int(np.flatnonzero(bounds == js)[0])
            plo, phi = backward_search(ix.fwd_occ, ix.counts, ix.n, read[js:bounds[j + 1]])
            step = handed[handed[:, 0] == js]
            assert np.all((plo <= step[:, 2]) & (step[:, 2] < step[:, 3]) & (step[:, 3] <= phi))
            over += 1
            fewer += int((step[:, 3] - step[:, 2]).sum() < phi - plo)
    assert over > 0 and fewer > 0
    assert check(ref, reads, e) > 20


def test_walks_capped_in_low_complexity_runs(rng):
    """A low-complexity read's pieces occur everywhere in a long run: their steps' budget is WALK_MAX (the pieces
    hold more rows than WALK_MAX buys at walk_per_row; uncapped, these reads' steps walk up to 245,000 nodes), so
    a walk stops there and hands on what it has not walked; every location is still found."""
    e = 3
    run = np.full(10_000, 3, dtype=np.uint8)  # a poly-T run, a substitution every 300-600 bases
    run[np.cumsum(rng.integers(300, 600, 20))[:16]] = rng.integers(0, 3, 16)
    g = np.concatenate([random_genome(rng, 300), run, random_genome(rng, 300)])
    ref = Reference.from_codes(["g"], [g])
    reads = sample_reads(rng, [g[300:-300]], 2, (90, 101), e)  # (each matches almost everywhere: the oracle is slow)
    ix = fm.build(ref, 4)
    lo, hi = backward_search(ix.fwd_occ, ix.counts, ix.n, np.full(26, 3, dtype=np.uint8))
    assert WALK_BASE + walk_per_row(e) * (hi - lo) > WALK_MAX  # a piece of 26 Ts (of e + 1): the cap binds
    assert check(ref, reads, e) >= 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), e=st.integers(0, 4), m=st.integers(5, 60), r=st.integers(1, 40),
       small=st.sampled_from([0, 1, 5]))
def test_property(seed, e, m, r, small):
    rng = np.random.default_rng(seed)
    g = random_genome(rng, 400)
    g[100:250] = np.resize(random_genome(rng, 3), 150)
    g[rng.integers(0, 400, 3)] = 4
    ref = Reference.from_codes(["g", "t"], [g, random_genome(rng, 9)])
    reads = sample_reads(rng, [g], 4, (m, m + 1), e + 1)
    check(ref, reads, e, r=r, small=small)


# ------------------------------------------------------------------------------ CLI / runner / store


def test_stored_index_maps_like_neighborhood_for_threads_and_batches(tmp_path):
    """Index on disk (memory-mapped), several thread counts and batch sizes: the neighborhood's SAM."""
    from helpers import EXAMPLES, map_example

    from seedmap.index.fm import FmParams
    from seedmap.index.neighborhood import NeighborhoodParams
    from seedmap.kinds import build_index

    ref = tmp_path / "ref.fa.gz"
    ref.write_bytes((EXAMPLES / "ref.fa.gz").read_bytes())
    build_index(str(ref), None, "neighborhood", NeighborhoodParams(10, 16))
    build_index(str(ref), None, "fm", FmParams(8))
    a = map_example(ref, tmp_path / "a.sam", threads=1, batch=100_000)
    b = map_example(ref, tmp_path / "b.sam", threads=2, batch=777, kind="fm")
    c = map_example(ref, tmp_path / "c.sam", threads=1, batch=5000, kind="fm")
    assert a == b == c and len(a) > 5000


def test_cli_rejects_bad_sample_rate(tmp_path, capsys):
    from seedmap.cli import main

    ref = tmp_path / "ref.fa"
    ref.write_text(">a\nACGTACGTAC\n")
    assert main(["index", "--kind", "fm", "-r", "0", str(ref)]) == 1
    assert capsys.readouterr().err.strip() == "seedmap: error: the SA sample rate must be 1..1024, got 0"
    assert not (tmp_path / "ref.fa.fm.smi").exists()


@pytest.mark.parametrize("e", [2, 3])
def test_every_error_distribution_at_piece_starts(rng, e):
    """Edits at the first bases of pieces, in every distribution over the e + 1 pieces, and read lengths
    that do not divide evenly: the per-piece caps of the scheme are exactly tight there."""
    import itertools

    g = random_genome(rng, 3000)
    ref = Reference.from_codes(["g"], [g])
    k = e + 1
    reads = []
    for m in (3 * k + 1, 4 * k - 1, 5 * k + 2):
        bounds = [p * m // k for p in range(k)]
        for a in itertools.product(range(e + 1), repeat=k):
            if sum(a) != e:
                continue
            for kind in ("sub", "ins", "del"):
                p0 = int(rng.integers(0, g.size - m - 10))
                read = list(g[p0:p0 + m + e])
                for p in reversed(range(k)):  # right to left: earlier piece starts stay put
                    for t in range(a[p]):
                        i = bounds[p] + t
                        if kind == "sub" or i == 0:
                            read[i] = (read[i] + 1) % 4
                        elif kind == "ins":
                            read.insert(bounds[p], (read[bounds[p]] + 2) % 4)
                        else:
                            del read[bounds[p]]
                reads.append(np.array(read[:m], dtype=np.uint8))
    assert check(ref, reads, e, r=3) >= len(reads)


# ------------------------------------------------------------- the build against the old one (the oracle)


def oracle_make_text(ref: Reference) -> tuple[np.ndarray, np.ndarray]:
    codes = ref.codes()
    k = len(ref.names)
    text_starts = np.asarray(ref.starts, dtype=np.int64) + np.arange(k + 1)
    text = np.zeros(ref.total + k, dtype=np.uint8)
    inside = np.ones(text.size, dtype=np.bool_)
    inside[text_starts[1:] - 1] = False
    text[inside] = codes + 1
    return text, text_starts


def oracle_popcount_table(bits: np.ndarray) -> np.ndarray:
    s, rows = bits.shape
    blocks = rows // 64 + 1
    padded = np.zeros((s, blocks * 64), dtype=np.bool_)
    padded[:, :rows] = bits
    words = np.packbits(padded, axis=1, bitorder="little").view("<u8")
    per_block = padded.reshape(s, blocks, 64).sum(axis=2, dtype=np.uint64)
    before = np.zeros((s, blocks), dtype=np.uint64)
    np.cumsum(per_block[:, :-1], axis=1, out=before[:, 1:])
    return np.ascontiguousarray(np.concatenate([before, words], axis=0).T)


def oracle_occ_table(bwt: np.ndarray) -> np.ndarray:
    """index/fm.py's occ layout from a BWT: 128-row blocks, 512 per superblock, whose row comes first."""
    blocks = bwt.size // 128 + 1
    supers = (blocks - 1) // 512 + 1
    per_block = np.zeros((blocks, fm.SYMBOLS), dtype=np.uint64)
    for c in range(fm.SYMBOLS):
        per_block[:, c] = np.bincount(np.flatnonzero(bwt == c + 1) // 128, minlength=blocks)
    before = np.zeros_like(per_block)
    np.cumsum(per_block[:-1], axis=0, out=before[1:])
    super_before = before[::512]
    rel = before - np.repeat(super_before, 512, axis=0)[:blocks]
    padded = np.zeros(blocks * 128, dtype=np.uint8)
    padded[:bwt.size] = bwt
    table = np.zeros((blocks + supers, 8), dtype=np.uint64)
    block_rows = np.arange(blocks) + np.arange(blocks) // 512 + 1
    for k in range(fm.PLANES):
        words = np.packbits((padded >> k) & 1 == 1, bitorder="little").view("<u8").reshape(blocks, 2)
        table[block_rows, 2 * k:2 * k + 2] = words
    table[block_rows, 6] = rel[:, 0] | rel[:, 1] << 16 | rel[:, 2] << 32 | rel[:, 3] << 48
    table[block_rows, 7] = rel[:, 4]
    table[np.arange(supers) * 513, :fm.SYMBOLS] = super_before
    table[np.arange(supers) * 513, 7] = fm.LAYOUT_MARK
    return table


def oracle_suffix_array(text: np.ndarray) -> np.ndarray:
    """Suffixes sorted by their text up to and including the first separator, then by position (index/fm_order.py)."""
    ends = np.flatnonzero(text == 0)
    upto = ends[np.searchsorted(ends, np.arange(text.size))]
    keys = [text[v:upto[v] + 1].tobytes() for v in range(text.size)]
    sa = np.array(sorted(range(text.size), key=lambda v: (keys[v], v)), dtype=np.int64)
    return sa.astype(np.int32 if text.size < 2**31 else np.int64)


def oracle_one_text(text: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sa = oracle_suffix_array(text)
    bwt = text[sa - 1]
    occ = oracle_occ_table(bwt)
    marked = (sa % r == 0) | (bwt == 0)
    return occ, oracle_popcount_table(marked[None, :]), sa[marked]


def oracle_fm_arrays(ref: Reference, r: int) -> dict[str, np.ndarray]:
    text, text_starts = oracle_make_text(ref)
    hist = np.bincount(text, minlength=fm.SYMBOLS + 1).astype(np.int64)
    fwd = oracle_one_text(text, r)
    rev_occ = oracle_one_text(np.concatenate([text[-2::-1], text[-1:]]), r)[0]  # (no reverse SA samples)
    return dict(zip(fm.ARRAYS, (np.cumsum(hist)[:fm.SYMBOLS].copy(), text_starts, *fwd, rev_occ), strict=True))


def assert_same_fm_index(ref: Reference, r: int) -> None:
    ix = fm.build(ref, r)
    got, want = ix.arrays(), oracle_fm_arrays(ref, r)
    assert list(got) == list(want) and ix.n == ref.total + len(ref.names) and ix.sa_sample == r
    for name, b in want.items():
        a = got[name]
        assert a.dtype == b.dtype and a.shape == b.shape and a.flags.c_contiguous, name
        assert a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize("r", [1, 2, 5, 16, 64, 1024])
def test_build_equals_oracle(rng, r):
    seqs = [genome_with_n(rng, int(m)) for m in rng.integers(1, 3000, 5)]
    seqs += [genome_with_n(rng, int(m)) for m in rng.integers(1, 5, 4)] + [np.full(9, 4, np.uint8)]
    seqs += repetitive_genome(rng)
    order = rng.permutation(len(seqs))
    assert_same_fm_index(Reference.from_codes([f"s{i}" for i in range(len(seqs))], [seqs[i] for i in order]), r)


def test_build_tiny_and_block_edges(rng):
    """One base; texts of 63, 64, 65, 127, 128 symbols (block boundaries of the mark table's 64 rows and the occ
    table's halves and blocks of 128)."""
    assert_same_fm_index(Reference.from_codes(["a"], [np.array([2], np.uint8)]), 1)
    assert_same_fm_index(Reference.from_codes(["n"], [np.array([4], np.uint8)]), 3)
    for n in (62, 63, 64, 126, 127):
        assert_same_fm_index(Reference.from_codes(["a"], [genome_with_n(rng, n)]), 4)
        assert_same_fm_index(Reference.from_codes(["a", "b"], [genome_with_n(rng, n - 3), genome_with_n(rng, 2)]), 7)


def test_text_and_counts_equal_oracle(rng):
    seqs = [genome_with_n(rng, int(m)) for m in rng.integers(1, 500, 7)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    text, starts = fm.make_text(ref)
    want_text, want_starts = oracle_make_text(ref)
    assert text.dtype == want_text.dtype and np.array_equal(text, want_text)
    assert starts.dtype == want_starts.dtype and np.array_equal(starts, want_starts)
    hist = np.bincount(text, minlength=fm.SYMBOLS + 1).astype(np.int64)
    assert np.array_equal(fm.symbol_counts(text), np.cumsum(hist)[:fm.SYMBOLS])
    before = text.copy()
    for r in (1, 3, 16):
        assert all(np.array_equal(a, b) for a, b in zip(fm.one_text(text, r), oracle_one_text(text, r), strict=True))
    assert np.array_equal(text, before)  # one_text leaves the text alone


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), r=st.integers(1, 40),
       lengths=st.lists(st.integers(1, 150), min_size=1, max_size=6), n_rate=st.sampled_from([0.0, 0.1, 0.7]),
       alphabet=st.integers(1, 4))
def test_build_property(seed, r, lengths, n_rate, alphabet):
    rng = np.random.default_rng(seed)
    seqs = []
    for m in lengths:
        g = rng.integers(0, alphabet, m).astype(np.uint8)
        g[rng.random(m) < n_rate] = 4
        seqs.append(g)
    assert_same_fm_index(Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs), r)


@pytest.mark.parametrize("dtype", [np.int64, np.uint32])
def test_tables_from_a_64_bit_suffix_array(rng, dtype):
    """Texts of 2^31 symbols or more get an int64 suffix array, and an ssa of unsigned 32-bit values (below 2^32
    symbols) or int64: the same tables."""
    g = genome_with_n(rng, 2000)
    text, _ = fm.make_text(Reference.from_codes(["g", "h"], [g, genome_with_n(rng, 99)]))
    sa = fm.suffix_array(text).astype(np.int64)
    tables = fm.Tables.empty(text.size, 5, fm.count_marked(text, 5, 0), np.dtype(dtype))
    sym = np.empty(text.size, dtype=np.uint8)
    tables.marked = fm.row_symbols(text, sa, 0, text.size, 0, 5, sym, tables.ssa)
    tables.add(sym)
    want = oracle_one_text(text, 5)
    assert np.array_equal(tables.occ, want[0]) and np.array_equal(tables.mark, want[1])
    assert tables.ssa.dtype == dtype and np.array_equal(tables.ssa, want[2])
    assert fm.ssa_dtype(2**31 - 1) == np.int32 and fm.ssa_dtype(2**31) == np.uint32 and fm.ssa_dtype(2**32) == np.int64


@pytest.mark.parametrize("n", [65_535, 65_536, 65_537, 200_000])
def test_occ_and_bwt_symbol_across_superblocks(rng, n):
    """O(c, i) (occ, and occ_all's five at once) and B[i] for every row of texts past one and several
    superblocks (65,536 rows), N and separators included, against counts of the BWT itself."""
    seqs = [genome_with_n(rng, n // 3), genome_with_n(rng, n // 3), genome_with_n(rng, n - 3 - 2 * (n // 3))]
    text, _ = fm.make_text(Reference.from_codes(["a", "b", "c"], seqs))
    assert text.size == n
    bwt = text[fm.suffix_array(text) - 1]
    table = fm.one_text(text, 0)[0]
    assert np.array_equal(table, oracle_occ_table(bwt))
    rows = np.arange(n + 1)
    want_symbol = bwt.astype(np.int64) - 1
    assert np.array_equal(symbols(table, rows[:-1]), want_symbol)
    every = occ_alls(table, rows)
    for c in range(fm.SYMBOLS):
        want = np.concatenate([[0], np.cumsum(bwt == c + 1)])
        assert np.array_equal(occs(table, c, rows), want), c
        assert np.array_equal(every[:, c], want), c  # occ_all: all five symbols at once


def test_index_of_the_earlier_layout_is_refused(rng):
    """An index whose occ tables have the earlier layout (64-row blocks: no layout mark) is refused with a
    request to rebuild, not read as if it had the new one."""
    ix = fm.build(Reference.from_codes(["g"], [genome_with_n(rng, 500)]), 4)
    arrays = ix.arrays()
    assert fm.FmIndex.from_arrays(fm.FmParams(4), arrays).n == ix.n
    old = dict(arrays, fwd_occ=arrays["fwd_occ"].copy())
    old["fwd_occ"][0, fm.OCC_WORDS - 1] = 0
    with pytest.raises(SeedmapError, match="rebuild"):
        fm.FmIndex.from_arrays(fm.FmParams(4), old)


# ------------------------------------------------------------- where the scheme cuts a read (fm_pieces)


def model_count(text: bytes, piece: bytes) -> int:
    """Occurrences of piece in text (overlaps too), as cut_pieces counts them."""
    if b"N" in piece:
        return 0
    return sum(1 for i in range(len(text) - len(piece) + 1) if text.startswith(piece, i))


def model_cost(text: bytes, read: bytes, a: int, b: int, n: int) -> int:
    """cut_pieces' count of read[a:b]: pieces ending at b grown leftwards, no longer counted once at most 1."""
    c = n
    for x in range(b - 1, a - 1, -1):
        if c > 1:
            c = model_count(text, read[x:b])
    return c


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(6, 28), k=st.integers(2, 4), repeats=st.booleans())
def test_cut_pieces_is_the_cut_of_least_occurrences(seed, m, k, repeats):
    """cut_pieces against every cut into k pieces of m // (2k) .. MAX_PIECE bases on the grid (multiples of
    GRID, the last piece to m): valid bounds, and the least occurrences summed (the count model above)."""
    rng = np.random.default_rng(seed)
    seqs = repetitive_genome(rng) if repeats else [genome_with_n(rng, 400), random_genome(rng, 50)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    ix = fm.build(ref, 4)
    text, _ = fm.make_text(ref)
    as_text = bytes(b"$ACGTN"[c] for c in text)
    g = seqs[int(rng.integers(0, len(seqs)))]
    start = int(rng.integers(0, max(1, g.size - m)))
    q = g[start:start + m].copy() if g.size >= m else random_genome(rng, m)
    if q.size < m:
        q = np.concatenate([q, random_genome(rng, m - q.size)])
    q[rng.random(m) < 0.05] = int(rng.integers(0, 5))
    bounds = np.empty(k + 1, dtype=np.int64)
    fm_pieces.cut_pieces(q.astype(np.int64), m, k, ix.n, ix.counts, ix.fwd_occ, NO_TABLE, bounds,
                         np.empty(fm_pieces.cut_scratch(m, k), dtype=np.int64))
    shortest = max(1, m // (2 * k))
    read = bytes(b"ACGTN"[c] for c in q)
    assert bounds[0] == 0 and bounds[k] == m
    lengths = np.diff(bounds)
    assert lengths.min() >= 1 and lengths.max() <= fm_pieces.MAX_PIECE

    def cost(cut: tuple[int, ...]) -> int:
        return sum(model_cost(as_text, read, a, b, ix.n) for a, b in zip(cut[:-1], cut[1:], strict=True))

    cuts = [(0, *inner, m) for inner in itertools.combinations(range(fm_pieces.GRID, m, fm_pieces.GRID), k - 1)]
    valid = [c for c in cuts if shortest <= min(np.diff(c)) and max(np.diff(c)) <= fm_pieces.MAX_PIECE]
    if not valid:  # too short a read for k pieces on the grid: equal pieces
        assert list(bounds) == [j * m // k for j in range(k + 1)]
        return
    assert lengths.min() >= shortest and not (bounds[:-1] % fm_pieces.GRID).any()
    assert cost(tuple(bounds)) == min(cost(c) for c in valid)


def test_a_poly_a_read_is_not_cut_inside_its_run(rng):
    """A read ending in a poly-A run on a genome of many poly-A runs: equal pieces put a whole piece inside
    the run (occurring at every run); the cut gives the run's piece some of its flank (one occurrence), and
    the search finds the oracle's locations."""
    runs = [np.concatenate([random_genome(rng, 200), np.zeros(40, np.uint8)]) for _ in range(30)]
    genome = np.concatenate(runs + [random_genome(rng, 300)])
    ref = Reference.from_codes(["g"], [genome])
    ix = fm.build(ref, 4)
    q = genome[200 + 240 * 7 - 60:200 + 240 * 7 + 36].astype(np.int64)  # 60 bases of flank, then 36 A's
    m, k = q.size, 6
    bounds = np.empty(k + 1, dtype=np.int64)
    fm_pieces.cut_pieces(q, m, k, ix.n, ix.counts, ix.fwd_occ, tables(ix)[0], bounds,
                         np.empty(fm_pieces.cut_scratch(m, k), dtype=np.int64))
    first_a = m - 36
    assert [j * m // k for j in range(k + 1)][k - 1] >= first_a  # equal pieces: the last one all A
    assert all(bounds[j] < first_a for j in range(k))  # the cut: every piece starts before the run
    assert check(ref, [q.astype(np.uint8)], 5) >= 1
