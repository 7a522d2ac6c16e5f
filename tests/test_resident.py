"""Huge-page copies of a stored FM index's occurrence tables (index/resident.py): the same bytes, read-only like
the maps they replace, and the same candidates whichever the search reads."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np
import pytest
from helpers import batch_of, decode, repetitive_genome, sample_reads

from seedmap.engines import fm as fm_engines
from seedmap.engines.fm import FmEngine, fm_engine
from seedmap.index import fm, resident
from seedmap.io.reference import Reference
from seedmap.kinds import build_index, load_or_build
from seedmap.verify.bulk import bulk_distances

pytestmark = pytest.mark.skipif(not hasattr(mmap, "MADV_HUGEPAGE") or not Path("/proc/self/smaps").exists(),
                                reason="no transparent huge pages here")


def test_a_copy_holds_the_same_bytes_read_only(tmp_path, rng):
    arr = rng.integers(0, 1 << 40, (100_001, 5)).astype(np.uint64)  # 4 MB: its mapping holds whole 2 MB pages
    np.save(tmp_path / "a.npy", arr)
    mapped = np.load(tmp_path / "a.npy", mmap_mode="r")
    copy = resident.huge_page_copy(mapped)
    assert not isinstance(copy, np.memmap) and not copy.flags.writeable and copy.flags.c_contiguous
    assert copy.dtype == arr.dtype and np.array_equal(copy, arr)
    assert copy.ctypes.data % resident.HUGE == 0
    fields = _mapping_of(copy.ctypes.data)
    assert fields["perms"].endswith("p")  # private: shared anonymous memory is shmem, with huge pages off by default
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if "THPeligible" in fields and thp.exists() and "[never]" not in thp.read_text():
        assert fields["THPeligible"] == "1"


def _mapping_of(address: int) -> dict[str, str]:
    """This process's memory mapping holding `address` (/proc/self/smaps): its permissions and fields."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
            lo, hi = (int(x, 16) for x in head[0].split("-"))
            if found:
                break
            if lo <= address < hi:
                found = {"perms": head[1]}
        elif found and head[0].endswith(":"):
            found[head[0][:-1]] = head[1] if len(head) > 1 else ""
    return found


def _stored_fm(tmp_path, rng) -> tuple[list, Reference, object]:
    """A repetitive genome's sequences, and its reference and fm index as stored and loaded (memory-mapped)."""
    seqs = repetitive_genome(rng)
    fasta = tmp_path / "ref.fa"
    fasta.write_text("".join(f">s{i}\n{decode(s)}\n" for i, s in enumerate(seqs)))
    path = build_index(str(fasta), str(tmp_path / "ref.fm"), "fm", {"r": 4})
    return (seqs, *load_or_build(str(fasta), str(path), "fm"))


def test_the_search_takes_the_copies_and_finds_the_same(tmp_path, rng, monkeypatch):
    monkeypatch.setattr(resident, "HUGE_MIN", 0)  # (a test genome's tables are far below it)
    seqs, ref, ix = _stored_fm(tmp_path, rng)
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


def test_tables_too_large_to_copy_stay_mapped(tmp_path, rng, monkeypatch):
    """Above HUGE_MAX in all (1 Gbp: 1 GB) the copy would outlast the warm-up and the search would wait for it:
    the maps serve, and take() returns at once."""
    monkeypatch.setattr(resident, "HUGE_MIN", 0)
    seqs, ref, ix = _stored_fm(tmp_path, rng)
    total = ix.fwd_occ.nbytes + ix.rev_occ.nbytes
    monkeypatch.setattr(resident, "HUGE_MAX", total - 1)
    engine = fm_engine(ix, ref, bulk=bulk_distances)
    assert engine.copies.names == [] and engine.copies.taken
    reads = sample_reads(rng, seqs, fm_engines.WAIT_FROM, (40, 90), 3)
    qcodes, qoff = batch_of(reads).queries()
    engine.candidate_windows(qcodes, qoff, np.full(len(reads), 3, dtype=np.int64))
    assert isinstance(ix.fwd_occ, np.memmap) and isinstance(ix.rev_occ, np.memmap)
    monkeypatch.setattr(resident, "HUGE_MAX", total)  # at the limit: copied
    assert fm_engine(ix, ref, bulk=bulk_distances).copies.names == ["fwd_occ", "rev_occ"]
