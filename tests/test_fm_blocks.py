"""The FM index built in blocks of whole sequences (index/fm_blocks.py) is the one-piece index byte for byte,
and both follow index/fm_order.py's suffix order (against a sort of every suffix)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import engine_locations, repetitive_genome, sample_reads
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fm_engine import oracle_suffix_array

from seedmap.engines.fm import FmEngine
from seedmap.index import fm, fm_blocks
from seedmap.io.reference import Reference
from seedmap.verify.bulk import bulk_distances


def tailed_genome(rng: np.random.Generator) -> list[np.ndarray]:
    """Sequences that share tails (a common suffix, N runs as at chromosome ends), an empty one and a copy:
    the suffixes whose order divsufsort decides by the next sequence."""
    tail = rng.integers(0, 4, int(rng.integers(0, 40))).astype(np.uint8)
    seqs = []
    for _ in range(int(rng.integers(1, 9))):
        g = rng.integers(0, int(rng.integers(1, 5)), int(rng.integers(0, 300))).astype(np.uint8)
        g[rng.random(g.size) < 0.1] = 4
        if rng.random() < 0.6:
            g = np.concatenate([g, tail])
        if rng.random() < 0.4:
            g = np.concatenate([g, np.full(int(rng.integers(1, 30)), 4, np.uint8)])
        seqs.append(g)
    if rng.random() < 0.5:
        seqs.append(seqs[0].copy())
    return seqs


def reference(seqs: list[np.ndarray]) -> Reference:
    return Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)


def assert_same_arrays(a: fm.FmIndex, b: fm.FmIndex) -> None:
    got, want = a.arrays(), b.arrays()
    assert list(got) == list(want) and a.n == b.n and a.sa_sample == b.sa_sample
    for name, arr in want.items():
        assert got[name].dtype == arr.dtype and got[name].shape == arr.shape, name
        assert np.asarray(got[name]).tobytes() == arr.tobytes(), name


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_suffix_order_ranks_separators_by_position(seed):
    text, text_starts = fm.make_text(reference(tailed_genome(np.random.default_rng(seed))))
    assert np.array_equal(fm.suffix_array(text, text_starts), oracle_suffix_array(text))
    assert np.array_equal(fm.suffix_array(text), oracle_suffix_array(text))  # starts found from the separators


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), r=st.integers(1, 12), cuts=st.lists(st.floats(0, 1), max_size=4))
def test_blocks_equal_one_piece(tmp_path_factory, seed, r, cuts):
    seqs = tailed_genome(np.random.default_rng(seed))
    bounds = sorted({0, len(seqs), *(int(c * len(seqs)) for c in cuts)})
    ref = reference(seqs)
    ix = fm_blocks.build(ref, r, bounds, tmp_path_factory.mktemp("blocks"), threads=2)
    assert_same_arrays(ix, fm.build(ref, r))


def test_blocks_equal_one_piece_across_superblocks(rng, tmp_path):
    """Blocks of 100,000+ symbols: the runs stream through several passes of rows (ROWS_PER_PASS made small)
    and the occ tables through several superblocks."""
    seqs = [rng.integers(0, 4, int(m)).astype(np.uint8) for m in rng.integers(20_000, 90_000, 6)]
    seqs += [seqs[1][-5000:].copy(), np.full(3000, 4, np.uint8)]
    ref = reference(seqs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fm, "ROWS_PER_PASS", 1 << 14)
        ix = fm_blocks.build(ref, 8, [0, 2, 3, 6, len(seqs)], tmp_path, threads=2)
        assert_same_arrays(ix, fm.build(ref, 8))


def test_samples_past_2_31(rng):
    """A block's SA samples are its positions plus its offset in the whole text: past 2^31 they stay exact
    (unsigned 32-bit below 2^32, int64 beyond)."""
    text, _ = fm.make_text(reference([rng.integers(0, 4, 5000).astype(np.uint8)]))
    sa = fm.suffix_array(text)
    for offset, dtype in ((2**31 + 3, np.uint32), (2**32 + 5, np.int64)):
        sym = np.empty(text.size, dtype=np.uint8)
        ssa = np.empty(text.size, dtype=dtype)
        m = fm.row_symbols(text, sa, 0, text.size, offset, 7, sym, ssa)
        marked = ((sa.astype(np.int64) + offset) % 7 == 0) | (text[sa - 1] == 0)
        assert m == marked.sum() == fm.count_marked(text, 7, offset)
        assert np.array_equal(ssa[:m].astype(np.int64), sa[marked].astype(np.int64) + offset)
        assert np.array_equal(sym & 7, text[sa - 1]) and np.array_equal(sym & fm.MARK > 0, marked)


def test_block_bounds_cut_whole_sequences():
    ref = reference([np.zeros(m, np.uint8) for m in (50, 10, 30, 30, 5, 60)])
    for bases in (61, 100, 200, 1000):
        bounds = fm_blocks.block_bounds(ref, bases)
        sizes = np.add.reduceat(np.diff(ref.starts) + 1, bounds[:-1])
        assert bounds[0] == 0 and bounds[-1] == 6 and (sizes <= bases).all()
    with pytest.raises(Exception, match="too large"):
        fm_blocks.block_bounds(ref, 60)


def test_text_and_genome_positions_past_2_31(rng):
    """An index whose text positions and genome positions lie past 2^31 (forced: the sequences of a small
    genome placed after 2^31 + 16 bases of padding, as a segment's sequences are, and its text positions
    and SA samples moved on by 2^31 + 40, unsigned 32-bit as a 3 Gbp index's are) finds the locations the
    small genome's index finds, moved on by the padding."""
    seqs = repetitive_genome(rng)
    names = [f"s{i}" for i in range(len(seqs))]
    small = Reference.from_codes(names, seqs)
    reads = sample_reads(rng, seqs, 40, (30, 90), 4)
    ix = fm.build(small, 4)
    want = engine_locations(FmEngine(ix, small.starts, bulk=bulk_distances, packed=small.packed,
                                     nmask=small.nmask), small, reads, 0.04)
    pad, shift = 2**31 + 16, 2**31 + 40
    packed = np.zeros(pad // 4 + small.packed.size, dtype=np.uint8)  # untouched pages of zeros stay virtual
    packed[pad // 4:] = small.packed
    nmask = np.zeros(pad // 8 + small.nmask.size, dtype=np.uint8)
    nmask[pad // 8:] = small.nmask
    big = Reference(["pad", *names], np.concatenate([[0], small.starts + pad]), packed, nmask)
    moved = dataclasses.replace(ix, text_starts=ix.text_starts + shift,
                                fwd_ssa=(ix.fwd_ssa.astype(np.int64) + shift).astype(np.uint32))
    got = engine_locations(FmEngine(moved, big.starts[1:], bulk=bulk_distances, packed=big.packed,
                                    nmask=big.nmask), big, reads, 0.04)
    assert sum(map(len, want)) > 30
    assert got == [{(s, a + pad, b + pad, d) for s, a, b, d in w} for w in want]
