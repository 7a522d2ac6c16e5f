"""Huge-page copies of a stored FM index's occurrence tables (index/resident.py): the same bytes, read-only like
the maps they replace, and the same candidates whichever the search reads."""

from __future__ import annotations

import mmap

import numpy as np
import pytest
from helpers import batch_of, decode, repetitive_genome, sample_reads

from seedmap.engines import fm as fm_engines
from seedmap.engines.fm import FmEngine, fm_engine
from seedmap.index import fm, resident
from seedmap.io.reference import Reference
from seedmap.kinds import build_index, load_or_build
from seedmap.verify.bulk import bulk_distances

pytestmark = pytest.mark.skipif(not hasattr(mmap, "MADV_HUGEPAGE"), reason="no transparent huge pages here")


def test_a_copy_holds_the_same_bytes_read_only(tmp_path, rng):
    arr = rng.integers(0, 1 << 40, (3001, 5)).astype(np.uint64)
    np.save(tmp_path / "a.npy", arr)
    mapped = np.load(tmp_path / "a.npy", mmap_mode="r")
    copy = resident.huge_page_copy(mapped)
    assert not isinstance(copy, np.memmap) and not copy.flags.writeable and copy.flags.c_contiguous
    assert copy.dtype == arr.dtype and np.array_equal(copy, arr)
    assert copy.ctypes.data % resident.HUGE == 0


def test_the_search_takes_the_copies_and_finds_the_same(tmp_path, rng, monkeypatch):
    monkeypatch.setattr(resident, "HUGE_MIN", 0)  # (a test genome's tables are far below it)
    seqs = repetitive_genome(rng)
    fasta = tmp_path / "ref.fa"
    fasta.write_text("".join(f">s{i}\n{decode(s)}\n" for i, s in enumerate(seqs)))
    path = build_index(str(fasta), str(tmp_path / "ref.fm"), "fm", {"r": 4})
    ref, ix = load_or_build(str(fasta), str(path), "fm")
    maps = {n: getattr(ix, n) for n in ("fwd_occ", "rev_occ")}
    assert all(isinstance(a, np.memmap) for a in maps.values())
    engine = fm_engine(ix, ref, bulk=bulk_distances)
    reads = sample_reads(rng, seqs, fm_engines.WAIT_FROM, (40, 90), 3)  # twice as many queries: it waits
    qcodes, qoff = batch_of(reads).queries()
    qerr = np.full(len(reads), 3, dtype=np.int64)
    got = engine.candidate_windows(qcodes, qoff, qerr)
    for name, arr in maps.items():
        now = getattr(ix, name)
        assert not isinstance(now, np.memmap) and not now.flags.writeable and np.array_equal(now, arr)
    plain = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    want = FmEngine(fm.build(plain, 4), plain.starts, bulk=bulk_distances, packed=plain.packed,
                    nmask=plain.nmask).candidate_windows(qcodes, qoff, qerr)
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    assert got[0].size > 0
