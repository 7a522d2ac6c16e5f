"""The FM search's k-mer tables (filter/fm_lookup.py): every k-mer's rows are backward search's, in both
indexes; the lower bounds and the search scheme give the same results with a table as without one; and the
cut is weighed only for reads whose equal pieces occur more than CUT_ABOVE times."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import NO_TABLE, decode, genome_with_n, random_genome, repetitive_genome, sample_reads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seedmap.filter import fm_lookup, fm_pieces
from seedmap.filter.fm_scheme import ROW, Bidir, search_query
from seedmap.filter.fm_search import backward_search, level_row, lower_bounds, table_k
from seedmap.index import fm
from seedmap.index.fm import FmParams
from seedmap.io.reference import Reference
from seedmap.kinds import build_index, load_or_build


def reference(rng: np.random.Generator, repeats: bool) -> tuple[Reference, list[np.ndarray]]:
    seqs = repetitive_genome(rng) if repeats else [genome_with_n(rng, 3000), random_genome(rng, 800)]
    return Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs), seqs


def test_lookup_k_follows_the_genome_size():
    assert fm_lookup.lookup_k(250_000_000) == fm_lookup.LOOKUP_MAX
    assert fm_lookup.lookup_k(5_000_000) == 8
    assert fm_lookup.lookup_k(100) == 0
    assert fm_lookup.lookup_k(1 << 32) == 0  # rows beyond uint32


@pytest.mark.parametrize("repeats", [False, True])
def test_every_kmer_has_backward_search_rows(rng, repeats):
    """The k-mers' rows first, then every shorter level's (level_row), each a backward search's."""
    ix = fm.build(reference(rng, repeats)[0], 4)
    for occ_tab in (ix.fwd_occ, ix.rev_occ):
        for k in (1, 3, 4):
            table = fm_lookup.build_lookup(occ_tab, ix.counts, ix.n, k)
            assert table.shape == (level_row(k, k), 2) and table.dtype == np.uint32 and table_k(table) == k
            for j in range(k + 1):
                at = 0 if j == k else level_row(k, j)
                for key, kmer in enumerate(itertools.product(range(4), repeat=j)):
                    lo, hi = backward_search(occ_tab, ix.counts, ix.n, np.array(kmer, dtype=np.int64))
                    if hi > lo:
                        assert tuple(table[at + key]) == (lo, hi), kmer
                    else:
                        assert table[at + key, 0] >= table[at + key, 1], kmer


def test_tables_are_built_once_per_index(rng):
    ix = fm.build(reference(rng, False)[0], 4)
    first = fm_lookup.tables(ix)
    k = fm_lookup.lookup_k(ix.n)
    assert fm_lookup.tables(ix)[0] is first[0] and first[0].shape[0] == level_row(k, k)


def test_a_stored_index_keeps_its_tables(rng, tmp_path, monkeypatch):
    """`seedmap index` stores the tables (a run does not build them again; the search gets them as writable
    arrays, the type the kernels are compiled for), and a stored table of another size than this version's k
    asks for (an index from a version with another LOOKUP_MAX) is built again."""
    ref, seqs = reference(rng, True)
    fasta = tmp_path / "ref.fa"
    fasta.write_text("".join(f">{name}\n{decode(seq)}\n" for name, seq in zip(ref.names, seqs, strict=True)))
    path = build_index(str(fasta), str(tmp_path / "ref.fm"), "fm", FmParams(4))
    _, ix = load_or_build(str(fasta), str(path), "fm")
    built = fm.build(ref, 4)
    want = fm_lookup.tables(built)
    assert isinstance(ix.lookup["fwd"], np.memmap) and isinstance(ix.lookup["rev"], np.memmap)  # read from the index
    with monkeypatch.context() as m:
        m.setattr(fm_lookup, "build_lookup", lambda *a: pytest.fail("stored tables built again"))
        stored = fm_lookup.tables(ix)
        assert fm_lookup.tables(ix)[0] is stored[0] and fm_lookup.tables(ix)[1] is stored[1]
    assert all(t.flags.writeable and t.flags.c_contiguous for t in stored)  # as built: the kernels' types
    assert all(isinstance(t, np.memmap) and t.mode == "c" for t in stored)  # mapped copy-on-write, not copied
    assert all(np.array_equal(a, b) for a, b in zip(stored, want, strict=True))
    ix.lookup["fwd"] = ix.lookup["fwd"][:-1]  # another k's table
    again = fm_lookup.tables(ix)
    assert again[1] is not stored[1] and all(np.array_equal(a, b) for a, b in zip(again, want, strict=True))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), repeats=st.booleans(), e=st.integers(0, 5))
def test_a_table_changes_no_bound_and_no_search_result(seed, repeats, e):
    """Reads (with N, mutated, and random ones whose pieces do not occur) searched with the index's tables
    and with none: the same lower bounds and the same accepted strings, in the same order."""
    rng = np.random.default_rng(seed)
    ref, seqs = reference(rng, repeats)
    ix = fm.build(ref, 4)
    fwd, rev = fm_lookup.tables(ix)
    assert fwd.shape[0] > 1
    reads = sample_reads(rng, seqs, 6, (20, 90), e) + [random_genome(rng, 40)]
    reads[0][3] = 4  # an N
    for q in reads:
        q = q.astype(np.int64)
        for occ_tab, table in ((ix.fwd_occ, fwd), (ix.rev_occ, rev)):
            with_table, without = np.zeros(q.size + 1, np.int64), np.zeros(q.size + 1, np.int64)
            lower_bounds(occ_tab, ix.counts, ix.n, q, q.size, with_table, table)
            lower_bounds(occ_tab, ix.counts, ix.n, q, q.size, without, NO_TABLE)
            assert np.array_equal(with_table, without)
        a, b = np.zeros((4096, ROW), np.int64), np.zeros((4096, ROW), np.int64)
        got = search_query(q, e, Bidir(ix.n, ix.counts, ix.fwd_occ, ix.rev_occ, fwd, rev), 1, a)
        assert got == search_query(q, e, Bidir(ix.n, ix.counts, ix.fwd_occ, ix.rev_occ, NO_TABLE, NO_TABLE), 1, b)
        assert np.array_equal(a[:min(got[0], 4096)], b[:min(got[0], 4096)])


def test_the_cut_is_weighed_only_for_frequent_pieces(rng):
    """A read of a unique region keeps equal pieces (the cut would cost more than it saves); the same read
    where one of its pieces lies in a run repeated 30 times is cut."""
    unique = random_genome(rng, 5000)
    runs = [np.concatenate([random_genome(rng, 200), np.zeros(40, np.uint8)]) for _ in range(30)]
    repeated = np.concatenate(runs + [random_genome(rng, 300)])
    ref = Reference.from_codes(["u", "r"], [unique, repeated])
    ix = fm.build(ref, 4)
    fwd, _ = fm_lookup.tables(ix)
    k = 6
    for q, cut in ((unique[1000:1096], False), (repeated[200 + 240 * 7 - 60:200 + 240 * 7 + 36], True)):
        q = q.astype(np.int64)
        m = q.size
        equal = [j * m // k for j in range(k + 1)]
        total = 0
        for j in range(k):
            lo, hi = backward_search(ix.fwd_occ, ix.counts, ix.n, q[equal[j]:equal[j + 1]])
            total += hi - lo
        assert (total > fm_pieces.CUT_ABOVE) == cut
        bounds = np.array(equal, dtype=np.int64)  # the counts in step (the pieces' searches in turn) are the same
        assert fm_pieces._counts_total(q, k, ix.n, ix.counts, ix.fwd_occ, fwd, bounds,
                                       np.empty(3 * k, dtype=np.int64)) == total
        fm_pieces.pieces(q, m, k, ix.n, ix.counts, ix.fwd_occ, fwd, bounds,
                         np.empty(fm_pieces.cut_scratch(m, k), dtype=np.int64), np.empty(3 * k, dtype=np.int64))
        assert (bounds.tolist() != equal) == cut


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), repeats=st.booleans(), m=st.integers(12, 100), k=st.integers(2, 7))
def test_the_levels_change_no_cut(seed, repeats, m, k):
    """cut_pieces with tables of k = 1 .. 7 (their levels give the pieces' counts up to k bases, shorter or longer
    than the shortest piece) and with none: the same cut, N, absent pieces and pieces occurring once included."""
    rng = np.random.default_rng(seed)
    ref, seqs = reference(rng, repeats)
    ix = fm.build(ref, 4)
    reads = sample_reads(rng, seqs, 3, (m, m + 1), 3) + [random_genome(rng, m)]
    reads[0][int(rng.integers(0, reads[0].size))] = 4  # an N
    for q in reads:
        q = q.astype(np.int64)
        want = np.empty(k + 1, dtype=np.int64)
        scratch = np.empty(max(fm_pieces.cut_scratch(q.size, k), 1), dtype=np.int64)
        fm_pieces.cut_pieces(q, q.size, k, ix.n, ix.counts, ix.fwd_occ, NO_TABLE, want, scratch)
        for kk in range(1, 8):
            table = fm_lookup.build_lookup(ix.fwd_occ, ix.counts, ix.n, kk)
            got = np.empty(k + 1, dtype=np.int64)
            fm_pieces.cut_pieces(q, q.size, k, ix.n, ix.counts, ix.fwd_occ, table, got, scratch)
            assert np.array_equal(got, want), (kk, q.tolist())
