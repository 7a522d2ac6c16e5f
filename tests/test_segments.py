"""Genome segments of the neighborhood index (MAROSE; `seedmap index --max-memory`): each segment indexes
the words starting in its range of positions, the segmented engine merges every segment's windows, and
the result is exactly the unsegmented index's: the same candidate windows, byte-identical SAM."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import (
    assert_oracle,
    batch_of,
    decode,
    engine_locations,
    genome_with_n,
    mutate,
    random_genome,
    repetitive_genome,
    sample_reads,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.cli import memory_size
from seedmap.engines.factory import neighborhood_engine
from seedmap.engines.fm import fm_engine
from seedmap.engines.segmented import SegmentedEngine, SegmentGate, drops_pages, merge_segments
from seedmap.errors import SeedmapError
from seedmap.filter.windows import merge_one
from seedmap.index import fm, fm_blocks, neighborhood, segments
from seedmap.index.neighborhood import NeighborhoodParams
from seedmap.index.segments import SegmentedIndex
from seedmap.index.words import range_words, sorted_words
from seedmap.io.reference import Reference
from seedmap.kinds import BuildLimits, plan_build
from seedmap.pipeline import EngineOptions
from seedmap.verify.bulk import bulk_distances

# ---------------------------------------------------------------- words of a range of positions


def _ref(rng: np.random.Generator) -> Reference:
    seqs = [rng.integers(0, 5 if i % 2 else 4, n).astype(np.uint8) for i, n in enumerate([700, 3, 40, 1200, 9])]
    seqs[3][100:130] = 4  # an N run
    return Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 20), st.integers(0, 2000), st.integers(0, 2000))
def test_range_words_are_the_whole_genome_words_of_that_range(seed, k, a, b):
    ref = _ref(np.random.default_rng(seed))
    a, b = sorted((min(a, ref.total), min(b, ref.total)))
    keys, pos = range_words(ref, k, 0, ref.total)
    inside = (pos >= a) & (pos < b)
    sub_keys, sub_pos = range_words(ref, k, a, b)
    assert np.array_equal(sub_keys, keys[inside]) and np.array_equal(sub_pos, pos[inside])
    assert sub_pos.dtype == np.uint32


def test_words_pad_with_a_and_skip_n_positions():
    ref = Reference.from_codes(["a", "b"], [np.array([1, 4, 2], np.uint8), np.array([3], np.uint8)])
    keys, pos = sorted_words(ref, 2)
    # words: pos 0 "CN"->CA (4), pos 2 "G" + pad -> GA (8), pos 3 "T" + pad -> TA (12); pos 1 (N) none
    assert pos.tolist() == [0, 2, 3] and keys.tolist() == [4, 8, 12]


# ---------------------------------------------------------------- the merge of segments' windows


def _merge_all(starts, ends, diags):
    order = np.argsort(starts, kind="stable")
    out = np.empty((starts.size, 4), dtype=np.int64)
    n = merge_one(starts[order], ends[order], diags[order], out, True)
    return out[:n]


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 5), st.integers(1, 4))
def test_merging_merged_segments_is_merging_everything(seed, nq, parts):
    """Windows of each query split at random among segments, merged per segment, then merged again:
    the same rows as merging all the windows at once (touching windows stay apart in both)."""
    rng = np.random.default_rng(seed)
    expected_q, expected_rows = [], []
    found = [([], []) for _ in range(parts)]
    for q in range(nq):
        n = int(rng.integers(0, 12))
        starts = rng.integers(0, 80, n).astype(np.int64)
        ends = starts + rng.integers(1, 15, n)
        diags = starts + rng.integers(0, 5, n)
        rows = _merge_all(starts, ends, diags)
        expected_q += [q] * len(rows)
        expected_rows.append(rows)
        owner = rng.integers(0, parts, n)
        for s in range(parts):
            mine = owner == s
            r = _merge_all(starts[mine], ends[mine], diags[mine])
            found[s][0].append(np.full(len(r), q, dtype=np.int64))
            found[s][1].append(r)
    per_segment = [(np.concatenate(q), np.concatenate(r)) for q, r in found]
    got_q, got_rows = merge_segments(per_segment)
    assert got_q.tolist() == expected_q
    assert np.array_equal(got_rows, np.concatenate(expected_rows).reshape(-1, 4))


# ---------------------------------------------------------------- engines: the same windows


def _segmented(ref: Reference, bounds: list[int], u: int, l: int, shape: str = "") -> SegmentedIndex:
    parts = [neighborhood.build(ref, u, l, shape, first=a, last=b)
             for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return SegmentedIndex(parts, bounds)


def _queries(rng: np.random.Generator, seqs: list[np.ndarray], n: int, e: int):
    """Both strands of n reads (codes, offsets) and every read's edits (qerr)."""
    qcodes, qoff = batch_of(sample_reads(rng, seqs, n, (30, 120), e + 1)).queries()
    return qcodes, qoff, np.full(n, e, dtype=np.int64)


@pytest.mark.parametrize("filter_name,fe,shape", [("bs", 0, ""), ("bs", 1, ""), ("ph", 0, ""), ("bpr", 1, ""),
                                                  ("bs", 0, "####-###")])
@pytest.mark.parametrize("seed", [1, 2])
def test_segmented_engine_finds_the_unsegmented_windows(filter_name, fe, shape, seed):
    rng = np.random.default_rng(seed)
    seqs = repetitive_genome(rng) + [random_genome(rng, 2500)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    u, l = (7, 8)
    whole = neighborhood.build(ref, u, l, shape)
    opts = EngineOptions(filter=filter_name, fe=fe)
    qcodes, qoff, qerr = _queries(rng, seqs, 60, 4)
    want = neighborhood_engine(whole, ref.starts, opts).candidate_windows(qcodes, qoff, qerr)
    cuts = sorted(set(int(c) for c in rng.integers(1, ref.total, 4)))  # inside sequences and words
    seg = _segmented(ref, [0, *cuts, ref.total], u, l, shape)
    assert sum(p.pos.size for p in seg.parts) == whole.pos.size
    engine = SegmentedEngine([neighborhood_engine(p, ref.starts, opts) for p in seg.parts])
    got = engine.candidate_windows(qcodes, qoff, qerr)
    assert want[0].size > 60
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_segment_gate_bounds_open_segments_and_releases_them(monkeypatch):
    released = []
    monkeypatch.setattr("seedmap.engines.segmented.release_pages", lambda arrays: released.append(len(arrays)))
    gate = SegmentGate([[np.zeros(1)] * (s + 1) for s in range(4)], open_max=1)
    most = []

    def batch():
        for s in range(4):
            gate.enter(s)
            most.append(len(gate.users))
            gate.leave(s)

    threads = [threading.Thread(target=batch) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)  # nobody waits forever
    assert max(most) == 1 and not gate.users
    assert set(released) == {1, 2, 3, 4}  # every segment's own arrays, when its last user left


def test_a_small_index_stays_resident_a_large_one_drops_its_pages(monkeypatch):
    released = []
    monkeypatch.setattr("seedmap.engines.segmented.release_pages", lambda arrays: released.append(len(arrays)))
    arrays = [[np.zeros(1000, dtype=np.uint8)] * 2 for _ in range(3)]  # 6,000 bytes in all
    for memory, drops in [(24_000, False), (23_999, True), (0, True)]:  # (0: the machine's memory unknown)
        monkeypatch.setattr("seedmap.engines.segmented.machine_memory", lambda memory=memory: memory)
        assert drops_pages(arrays) is drops
        released.clear()
        gate = SegmentGate(arrays, release=drops_pages(arrays))
        for s in range(3):
            gate.enter(s)
            gate.leave(s)
        assert released == ([2, 2, 2] if drops else [])


# ---------------------------------------------------------------- planning: --max-memory


def test_max_memory_chooses_segments_that_fit():
    rng = np.random.default_rng(3)
    ref = Reference.from_codes(["a"], [random_genome(rng, 400_000)])
    fixed = segments.FIXED_BUILD_BYTES + ref.packed.nbytes + ref.nmask.nbytes + 8 * 4**10
    nb = NeighborhoodParams(10, 16)
    assert not plan_build(ref, "neighborhood", nb, BuildLimits(max_memory=8 << 30)).segments
    max_bytes = fixed + 100_000 * neighborhood.SORT_BYTES_PER_POSITION
    bounds = plan_build(ref, "neighborhood", nb, BuildLimits(max_memory=max_bytes)).segments
    assert len(bounds) == 5 and bounds[0] == 0 and bounds[-1] == ref.total
    assert max(np.diff(bounds)) * neighborhood.SORT_BYTES_PER_POSITION + fixed <= max_bytes
    with pytest.raises(SeedmapError, match="too small"):
        plan_build(ref, "neighborhood", nb, BuildLimits(max_memory=fixed))
    # Without --max-memory, the CLI's share of the machine's memory (three quarters): the same segments
    # when the build is what limits them; segments that also map two at a time within half the machine's
    # memory when that is smaller; and a machine too small for one segment builds the whole index (no error).
    auto = plan_build(ref, "neighborhood", nb, BuildLimits(machine_memory=max_bytes))
    assert len(auto.segments) >= len(bounds)
    half = fixed + neighborhood.MAP_WORKING_BYTES + 2 * neighborhood.INDEX_BYTES_PER_POSITION * 150_000
    roomy = plan_build(ref, "neighborhood", nb, BuildLimits(machine_memory=half * 3 // 2))
    assert len(roomy.segments) == 4 and max(np.diff(roomy.segments)) <= 150_000
    assert not plan_build(ref, "neighborhood", nb, BuildLimits(max_memory=half * 3 // 2)).segments
    assert not plan_build(ref, "neighborhood", nb, BuildLimits(machine_memory=fixed)).segments
    assert plan_build(ref, "fm", fm.FmParams(16), BuildLimits(machine_memory=max_bytes)) == fm.FmParams(16)


@pytest.mark.parametrize("text,value", [("8G", 8 << 30), ("512M", 512 << 20), ("1.5g", 3 << 29), ("64KiB", 64 << 10),
                                        ("1000", 1000), ("2GB", 2 << 30)])
def test_memory_sizes(text, value):
    assert memory_size(text) == value


@pytest.mark.parametrize("text", ["", "G", "-1G", "eight", "0"])
def test_bad_memory_sizes(text):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        memory_size(text)


# ---------------------------------------------------------------- the command line: byte-identical SAM


def seedmap(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SEEDMAP_DEBUG"}
    return subprocess.run([sys.executable, "-m", "seedmap", *args], cwd=cwd, env=env, capture_output=True,
                          encoding="utf-8", timeout=300)


def body(path: Path) -> str:
    """The SAM without its @PG line (which holds the command line)."""
    return "".join(line for line in path.read_text().splitlines(True) if not line.startswith("@PG"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(11)
    d = tmp_path_factory.mktemp("segments")
    unit = random_genome(rng, 300)
    seqs = []
    for _ in range(3):
        g = random_genome(rng, 20_000)
        for p in rng.integers(0, g.size - 300, 12):
            g[p:p + 300] = unit
        seqs.append(g)
    (d / "ref.fa").write_text("".join(f">c{i}\n{decode(g)}\n" for i, g in enumerate(seqs)))
    comp = np.array([3, 2, 1, 0], np.uint8)
    with open(d / "reads.fq", "w") as fq, open(d / "r1.fq", "w") as f1, open(d / "r2.fq", "w") as f2:
        for i in range(300):
            g = seqs[i % 3]
            p = int(rng.integers(0, g.size - 400))
            r = decode(mutate(rng, g[p:p + 100], int(rng.integers(0, 5))))
            fq.write(f"@r{i}\n{r}\n+\n{'I' * len(r)}\n")
            m2 = decode(comp[g[p + 250:p + 350]][::-1])
            f1.write(f"@p{i}\n{decode(g[p:p + 100])}\n+\n{'I' * 100}\n")
            f2.write(f"@p{i}\n{m2}\n+\n{'I' * 100}\n")
    for name, extra in (("whole", []), ("seg", ["--segment-bases", "13000"]), ("whole_ph", ["--ph"]),
                        ("seg_ph", ["--ph", "--segment-bases", "25000"]), ("fm_whole", ["--kind", "fm"]),
                        ("fm_seg", ["--kind", "fm", "--segment-bases", "40000"]),
                        ("fm_blocks", ["--kind", "fm", "--block-bases", "25000"])):
        run = seedmap(d, "index", "ref.fa", "-o", f"{name}.smi", "-q", *extra)
        assert run.returncode == 0, run.stderr
    return d


def test_segmented_index_is_stored_in_segments(workdir):
    import json

    header = json.loads((workdir / "seg.smi" / "header.json").read_text())
    bounds = header["params"]["segments"]
    assert len(bounds) == 6 and bounds[-1] == 60_000
    assert "seg4.pos" in header["arrays"] and "pos" not in header["arrays"]
    fm_header = json.loads((workdir / "fm_seg.smi" / "header.json").read_text())
    assert fm_header["params"]["segments"] == [0, 40_000, 60_000]  # cut between sequences: c0 c1 | c2
    assert "seg1.fwd_occ" in fm_header["arrays"] and "fwd_occ" not in fm_header["arrays"]


def test_fm_index_built_in_blocks_is_the_one_piece_index(workdir):
    """Blocks of whole sequences (c0 | c1 | c2) merged: the one-piece index's arrays, byte for byte, and the
    blocks are not part of the stored index."""
    import json

    header = json.loads((workdir / "fm_blocks.smi" / "header.json").read_text())
    whole = json.loads((workdir / "fm_whole.smi" / "header.json").read_text())
    assert header["params"] == whole["params"] and header["arrays"] == whole["arrays"]
    for name in whole["arrays"]:
        assert (workdir / "fm_blocks.smi" / f"{name}.npy").read_bytes() == \
            (workdir / "fm_whole.smi" / f"{name}.npy").read_bytes(), name


def test_fm_blocks_chosen_to_fit_max_memory():
    """An FM index too large for one piece within --max-memory is built in blocks (not segments) while it fits
    in blocks; a sequence larger than a block is one clear error under the user's limit."""
    rng = np.random.default_rng(5)
    ref = Reference.from_codes(["a", "b", "c", "d"], [random_genome(rng, 100_000) for _ in range(4)])
    fixed = segments.FIXED_BUILD_BYTES + ref.packed.nbytes + ref.nmask.nbytes
    n = ref.total + 4
    one_piece = fixed + n * fm.build_bytes_per_base(8)
    assert plan_build(ref, "fm", fm.FmParams(8), BuildLimits(max_memory=int(one_piece) + 1)) == fm.FmParams(8)
    limit = int(fixed + n * fm_blocks.MERGE_OCC_BYTES + 210_000 * fm_blocks.SORT_BYTES)
    params = plan_build(ref, "fm", fm.FmParams(8), BuildLimits(max_memory=limit))
    assert params.blocks == (0, 2, 4) and not params.segments
    big = Reference.from_codes(["a", "b", "c"], [random_genome(rng, m) for m in (300_000, 50_000, 50_000)])
    fixed = segments.FIXED_BUILD_BYTES + big.packed.nbytes + big.nmask.nbytes
    limit = int(fixed + (big.total + 3) * fm_blocks.MERGE_OCC_BYTES + 200_000 * fm_blocks.SORT_BYTES)
    with pytest.raises(SeedmapError, match="too large"):
        plan_build(big, "fm", fm.FmParams(8), BuildLimits(max_memory=limit))
    assert plan_build(ref, "fm", fm.FmParams(8), BuildLimits(block_bases=150_000)).blocks == (0, 1, 2, 3, 4)


def test_interrupted_blockwise_build_leaves_nothing(tmp_path, monkeypatch):
    """An interruption while the blocks merge leaves neither an index nor the build's scratch files."""
    from seedmap.kinds import BuildLimits, build_index

    rng = np.random.default_rng(2)
    (tmp_path / "ref.fa").write_text("".join(f">c{i}\n{decode(random_genome(rng, 5000))}\n" for i in range(3)))

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(fm_blocks, "_interleave", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_index(str(tmp_path / "ref.fa"), None, "fm", fm.FmParams(8), BuildLimits(block_bases=6000))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ref.fa"]


@pytest.mark.parametrize("args", [
    ["reads.fq", "-e", "4"],
    ["reads.fq", "-e", "4", "--best"],
    ["reads.fq", "-e", "4", "-n", "3", "-t", "2", "--batch-size", "37"],
    ["reads.fq", "-e", "3", "--filter", "bpr", "--fe", "1"],
    ["r1.fq", "r2.fq", "-e", "3"],
])
def test_segmented_index_gives_byte_identical_sam(workdir, args):
    """Neighborhood segments, and FM segments (runs of whole sequences): the unsegmented index's SAM."""
    for name in ("whole", "seg", "fm_seg", "fm_blocks"):
        if "--filter" in args and name.startswith("fm"):
            continue
        engine = ["--engine", "fm"] if name.startswith("fm") else []
        run = seedmap(workdir, "map", "ref.fa", *args, *engine, "--index", f"{name}.smi", "-q", "-o", f"{name}.sam")
        assert run.returncode == 0, run.stderr
    assert body(workdir / "seg.sam") == body(workdir / "whole.sam")
    if "--filter" not in args:
        assert body(workdir / "fm_seg.sam") == body(workdir / "whole.sam")
        assert body(workdir / "fm_blocks.sam") == body(workdir / "whole.sam")
    assert body(workdir / "whole.sam").count("\n") > 300


def test_segmented_perfect_hashes_and_bam(workdir):
    for name in ("whole_ph", "seg_ph"):
        run = seedmap(workdir, "map", "ref.fa", "reads.fq", "-e", "4", "--filter", "ph", "--index", f"{name}.smi",
                      "-o", f"{name}.bam")
        assert run.returncode == 0 and "building them in memory" not in run.stderr, run.stderr
    assert (workdir / "seg_ph.bam").stat().st_size > 1000
    import pysam

    def records(path):
        with pysam.AlignmentFile(str(path), check_sq=False) as f:
            return [r.to_string() for r in f]

    assert records(workdir / "seg_ph.bam") == records(workdir / "whole_ph.bam")


def test_missing_segment_array_is_one_clear_error(workdir, tmp_path):
    import shutil

    broken = tmp_path / "broken.smi"
    shutil.copytree(workdir / "seg.smi", broken)
    (broken / "seg2.nbs.npy").unlink()
    run = seedmap(workdir, "map", "ref.fa", "reads.fq", "--index", str(broken))
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "seg2.nbs" in run.stderr and len(run.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args,message", [
    (["--kind", "kmer", "--max-memory", "8G"], "the kmer index has none"),
    (["--max-memory", "1M"], "too small"),
    (["--max-memory", "lots"], "not a memory size"),
])
def test_max_memory_misuse(workdir, args, message):
    run = seedmap(workdir, "index", "ref.fa", "-o", "bad.smi", *args)
    assert run.returncode != 0 and message in run.stderr and "Traceback" not in run.stderr
    assert not (workdir / "bad.smi").exists()


# ---------------------------------------------------------------- FM segments: runs of whole sequences


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(0, 5000), min_size=1, max_size=12), cap=st.integers(1, 8000))
def test_fm_segments_are_runs_of_whole_sequences(lengths, cap):
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    lengths = np.array(lengths)
    ref = SimpleNamespace(starts=starts, names=[f"s{i}" for i in range(len(lengths))], total=int(starts[-1]))
    bounds = fm.segment_bounds(ref, 16, segment_bases=cap)
    assert bounds[0] == 0 and bounds[-1] == ref.total
    assert np.all(np.diff(bounds) > 0) or ref.total == 0
    assert set(bounds) <= set(starts.tolist())
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        first, last = fm.sequence_range(starts, a, b)
        assert starts[first] == a and starts[last] == b
        # within the cap, or one sequence larger than it (with empty ones)
        assert b - a <= cap or np.count_nonzero(lengths[first:last]) == 1


def test_fm_segments_keep_suffix_arrays_32_bit():
    """A human-sized reference (3.1 Gbp, 24 sequences) on a machine with room for one build: segments
    anyway, each text below 2^31 symbols."""
    lengths = np.full(24, 3_100_000_000 // 24)
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ref = SimpleNamespace(starts=starts, names=[str(i) for i in range(24)], total=int(starts[-1]),
                          packed=np.zeros(1, np.uint8), nmask=np.zeros(1, np.uint8))
    bounds = fm.segment_bounds(ref, 16, max_memory=1 << 40)
    assert len(bounds) == 3 and max(np.diff(bounds)) + 24 < 2**31
    small = fm.segment_bounds(ref, 16, max_memory=8 << 30)  # 8 GB: smaller segments, each built within it
    assert len(small) > len(bounds) and max(np.diff(small)) * fm.build_bytes_per_base(16) < 8 << 30


@pytest.mark.parametrize("seed", [3, 4])
def test_fm_segmented_engine_finds_the_oracle_locations(seed):
    rng = np.random.default_rng(seed)
    seqs = repetitive_genome(rng) + [np.zeros(0, np.uint8), genome_with_n(rng, 900), random_genome(rng, 40)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    bounds = fm.segment_bounds(ref, 4, segment_bases=ref.total // 3)
    assert len(bounds) > 3
    seg = SegmentedIndex([fm.build(ref, 4, *fm.sequence_range(ref.starts, a, b))
                          for a, b in zip(bounds[:-1], bounds[1:], strict=True)], bounds)
    reads = sample_reads(rng, [s for s in seqs if s.size > 150], 50, (40, 100), 4)
    got = engine_locations(fm_engine(seg, ref, bulk_distances), ref, reads, 3)
    assert got == engine_locations(fm_engine(fm.build(ref, 4), ref, bulk_distances), ref, reads, 3)
    assert assert_oracle(got, ref, reads, 3) > 50
