"""The FM engine's search on an OpenCL device (PoCL's CPU device in CI: the opencl extra): fm_scheme.cl's merged
candidate windows against the CPU twin (engines/fm.py: the same rows in the same order) on random and repetitive
genomes, e = 0..4, both strands, N in reads and reference, queries searched again (more strings than the first
pass keeps), a query per launch, int64 SA samples, genome segments, bulk verification and query chunks; the
locations found through it against the brute-force oracle; where the backend searches, with its one log line;
and `seedmap map --engine fm --device opencl` writing the SAM of --device cpu."""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest
from helpers import (
    assert_oracle,
    batch_of,
    engine_locations,
    genome_with_n,
    random_genome,
    repetitive_genome,
    sample_reads,
    young_family,
)

from seedmap.backends.base import EngineInputs
from seedmap.backends.opencl import device, program
from seedmap.backends.opencl.backend import OpenClBackend
from seedmap.backends.opencl.fm_engine import OpenClFmEngine
from seedmap.backends.opencl.kinds import OPENCL_KINDS
from seedmap.engines import base
from seedmap.engines.fm import FmEngine
from seedmap.engines.segmented import SegmentedEngine
from seedmap.filter import fm_pieces
from seedmap.filter.fm_scheme import ROW, Saved, bidir, count_candidates, no_memo
from seedmap.filter.fm_search import backward_search
from seedmap.index import fm
from seedmap.index.segments import SegmentedIndex
from seedmap.io.columns import Queries
from seedmap.io.reference import Reference
from seedmap.kinds import cpu_engine
from seedmap.pipeline import EngineOptions, errors_per_read
from seedmap.verify.bulk import bulk_distances

pytest.importorskip("pyopencl", reason="the opencl extra (pip install seedmap[opencl]) brings PyOpenCL and PoCL")



def genome(kind: str, rng: np.random.Generator) -> list[np.ndarray]:
    if kind == "runs":  # 40-base poly-A runs between unique stretches: pieces in them occur hundreds of times
        return [np.concatenate([np.concatenate([genome_with_n(rng, 60), np.zeros(40, np.uint8)]) for _ in range(30)])]
    if kind == "family":  # a young repeat family: its steps walk past their budget (fm_scheme.WALK_BASE)
        return [young_family(rng, 300), genome_with_n(rng, 400)]
    return repetitive_genome(rng) if kind == "repetitive" else [genome_with_n(rng, 2500), genome_with_n(rng, 400)]


def cut_reads(ix: fm.FmIndex, args: tuple) -> int:
    """Queries whose equal pieces occur more than fm_pieces.CUT_ABOVE times in all: those the search cuts."""
    qcodes, qoff, qerr = args
    cut = 0
    for qi in range(qoff.size - 1):
        q, k = qcodes[qoff[qi]:qoff[qi + 1]], int(qerr[qi >> 1]) + 1
        if k >= fm_pieces.CUT_FROM:
            ends = [j * q.size // k for j in range(k + 1)]
            rows = [backward_search(ix.fwd_occ, ix.counts, ix.n, q[ends[j]:ends[j + 1]]) for j in range(k)]
            cut += sum(hi - lo for lo, hi in rows) > fm_pieces.CUT_ABOVE
    return cut


def fm_case(kind: str, seed: int, n: int, lengths: tuple[int, int], errors: float) -> tuple[Reference, tuple]:
    """A genome, and the queries (both strands) of n reads from it, every fifth with an N, and their edits."""
    rng = np.random.default_rng(seed)
    seqs = genome(kind, rng)
    ref = Reference.from_codes([f"c{i}" for i in range(len(seqs))], seqs)
    reads = sample_reads(rng, seqs, n, lengths, 4)
    for r in reads[::5]:
        r[int(rng.integers(0, r.size))] = 4
    batch = batch_of(reads)
    qcodes, qoff = batch.queries()
    return ref, (qcodes, qoff, errors_per_read(batch.lengths, errors))


def assert_same_windows(got: tuple, want: tuple) -> None:
    assert want[0].size > 0
    assert all(g.dtype == w.dtype and np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def strings_per_query(ix: fm.FmIndex, args: tuple, small: int) -> np.ndarray:
    """Each query's accepted strings, as the CPU search has them."""
    qcodes, qoff, qerr = args
    nq = qoff.size - 1
    n_saved = np.empty(nq, dtype=np.int64)
    saved = Saved(np.empty((1, 0, ROW), dtype=np.int64), np.empty(nq, dtype=np.int64), n_saved)
    count_candidates(Queries(qcodes, qoff, qerr), bidir(ix), small, saved, no_memo(), np.zeros(nq, dtype=np.int64), 0,
                     0, nq, np.empty((0, ROW), dtype=np.int64))
    return n_saved


@pytest.mark.parametrize("kind", ["random", "repetitive"])
@pytest.mark.parametrize("e", [0, 1, 2, 3, 4])
def test_fm_search_matches_cpu(opencl_device, kind, e):
    """Every edit count, both strands: the CPU engine's merged windows (without bulk verification: the
    candidates as they are)."""
    ref, args = fm_case(kind, 20 + e, 30, (25, 60), e)
    ix = fm.build(ref, 4)
    assert_same_windows(OpenClFmEngine(opencl_device, ix, ref.starts).candidate_windows(*args),
                        FmEngine(ix, ref.starts).candidate_windows(*args))


@pytest.mark.parametrize("kind,r,errors,lengths,sizes", [
    ("repetitive", 4, 0.06, (20, 50), {"saved_rows": 4}),  # queries searched again
    ("repetitive", 3, 0.12, (20, 30), {"scratch_bytes": 1, "saved_rows": 4}),  # a query per launch
    ("random", 16, 0.05, (30, 60), {"verify_below": 0}),  # every string walked to its end
    ("random", 2, 5, (60, 100), {}),  # e = 5: equal pieces (they occur too rarely to weigh a cut)
    ("runs", 2, 5, (60, 100), {}),  # e = 5: pieces cut by their occurrences (fm_pieces.CUT_FROM, CUT_ABOVE)
    ("family", 4, 5, (90, 120), {}),  # walks past their budget: their pieces' rows verified instead
])
def test_fm_search_options_match_cpu(opencl_device, kind, r, errors, lengths, sizes):
    ref, args = fm_case(kind, 21, 24, lengths, errors)
    ix = fm.build(ref, r)
    small = sizes.get("verify_below", 1)
    want = FmEngine(ix, ref.starts, verify_below=small).candidate_windows(*args)
    assert_same_windows(OpenClFmEngine(opencl_device, ix, ref.starts, **sizes).candidate_windows(*args), want)
    if "saved_rows" in sizes:  # the second search pass ran
        assert strings_per_query(ix, args, small).max() > sizes["saved_rows"]
    assert (cut_reads(ix, args) > 0) == (kind in ("runs", "family"))


def test_int64_samples_bulk_verification_and_chunks(opencl_device, monkeypatch):
    """SA samples stored as int64 (texts of 2 Gbp and more: the other build of the kernels), the CPU engine's
    bulk verification of every candidate, and query chunks under a small candidate cap: the CPU's windows."""
    ref, args = fm_case("repetitive", 5, 30, (20, 60), 0.08)
    ix = fm.build(ref, 4)
    ix.fwd_ssa = ix.fwd_ssa.astype(np.int64)
    verifier = dict(bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask)
    cpu = FmEngine(ix, ref.starts, **verifier)
    dev = OpenClFmEngine(opencl_device, ix, ref.starts, **verifier)
    want = cpu.candidate_windows(*args)
    assert_same_windows(dev.candidate_windows(*args), want)
    assert want[0].size < FmEngine(ix, ref.starts).candidate_windows(*args)[0].size  # the bulk step dropped some
    monkeypatch.setattr(base, "CANDIDATE_CAP", 40)
    assert_same_windows(dev.candidate_windows(*args), cpu.candidate_windows(*args))
    none = dev.candidate_windows(args[0][:0], args[1][:1], args[2][:0])
    assert [x.size for x in none] == [0, 0]


@pytest.mark.parametrize("kind", ["random", "repetitive"])
@pytest.mark.parametrize("e", [0, 2, 4])
def test_locations_match_the_oracle(opencl_device, kind, e):
    """Every location within e edits of every read, both strands, found through the device's candidates, as
    the brute-force oracle has it."""
    rng = np.random.default_rng(3 + e)
    seqs = repetitive_genome(rng) if kind == "repetitive" else [random_genome(rng, 2000), random_genome(rng, 300)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    reads = sample_reads(rng, seqs, 40, (20, 70), e)
    engine = OpenClFmEngine(opencl_device, fm.build(ref, 4), ref.starts)
    assert assert_oracle(engine_locations(engine, ref, reads, e), ref, reads, e) > 20


def inputs_for(ix: object, ref: Reference) -> EngineInputs:
    opts = EngineOptions(kind="fm")
    return EngineInputs("fm", ix, ref, opts, cpu_engine("fm", ix, ref, opts))


def test_genome_segments(opencl_device):
    """A segmented index: one device engine per part (each with its sequences' starts), their windows merged
    as the CPU's segmented engine does."""
    ref, args = fm_case("random", 22, 16, (30, 50), 0.05)
    bounds = fm.segment_bounds(ref, 4, segment_bases=ref.total // 2)
    seg = SegmentedIndex([fm.build(ref, 4, *fm.sequence_range(ref.starts, a, b))
                          for a, b in zip(bounds[:-1], bounds[1:], strict=True)], bounds)
    inputs = inputs_for(seg, ref)
    engine = OPENCL_KINDS["fm"].candidates(inputs, opencl_device)
    assert isinstance(engine, SegmentedEngine) and len(engine.parts) > 1
    assert all(isinstance(p, OpenClFmEngine) for p in engine.parts)
    assert_same_windows(engine.candidate_windows(*args), inputs.cpu.candidate_windows(*args))


def test_which_steps_run_on_the_device(opencl_device, monkeypatch, caplog):
    """The search runs on the device, said once in the log line; an index the device cannot hold keeps the run's
    CPU engine, and the line says why."""
    rng = np.random.default_rng(1)
    ref = Reference.from_codes(["s"], [random_genome(rng, 3000)])
    inputs = inputs_for(fm.build(ref, 4), ref)
    backend = OpenClBackend(device.pick(None))
    monkeypatch.setattr(backend, "_device", lambda dev: opencl_device)
    for fits in (True, False):
        if not fits:
            monkeypatch.setattr(program.OpenClDevice, "holds", lambda self, arrays: False)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="seedmap"):
            backend.prepare(inputs)
        line = caplog.text.strip()
        assert line.count("--device opencl:") == 1 and "the traceback (CIGAR, MD) run on " + opencl_device.name in line
        engine = backend.engine_maker(0)(inputs).engine
        assert ("the search scheme and the locates (fm engine), the windows' verification" in line) == fits
        assert isinstance(engine, OpenClFmEngine) == fits and (engine is inputs.cpu) != fits
    assert "the index is larger than the OpenCL device holds, searching on the CPU" in line


def fasta(path, seqs: list[np.ndarray], suffix: str = "") -> str:
    path.write_text("".join(f">r{i}{suffix}\n" + "".join("ACGTN"[c] for c in s) + "\n" for i, s in enumerate(seqs)))
    return str(path)


@pytest.mark.parametrize("options", [("-e", "0"), ("-e", "4"), ("-e", "4", "--best")])
@pytest.mark.usefixtures("opencl_device")  # (skipped where the device builds no kernel)
def test_map_fm_opencl_same_sam_as_cpu(tmp_path, options):
    """`seedmap map --engine fm` on a repetitive genome, two workers, several batches (with --best: the strata
    searched one edit count at a time): --device opencl writes the SAM of --device cpu byte for byte, and its
    log says the search ran on the device."""
    rng = np.random.default_rng(7)
    seqs = repetitive_genome(rng) + [random_genome(rng, 3000)]
    ref = fasta(tmp_path / "ref.fa", seqs)
    reads = fasta(tmp_path / "reads.fa", sample_reads(rng, seqs, 60, (40, 120), 4))
    outs = {}
    for dev in ("cpu", "opencl"):
        out = tmp_path / f"{dev}.sam"
        r = subprocess.run([sys.executable, "-m", "seedmap", "map", "--engine", "fm", *options, "--device", dev,
                            "-t", "2", "--batch-size", "11", "-o", str(out), ref, reads], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        outs[dev] = [line for line in out.read_bytes().splitlines() if not line.startswith(b"@PG")]
        on_device = "the search scheme and the locates (fm engine), the windows' verification"
        assert (r.stderr.count(on_device) == 1) == (dev == "opencl"), r.stderr
    assert outs["cpu"] == outs["opencl"]
    assert len([line for line in outs["cpu"] if not line.startswith(b"@")]) >= 60
