"""CUDA kernels under the simulator (NUMBA_ENABLE_CUDASIM=1) against their CPU twins, exactly.

Not collected by the normal run (no test_ prefix): tests/test_cuda_backend.py runs this file in a
subprocess with the simulator switched on, since the switch must be set before numba.cuda is imported.
Inputs are small: the simulator runs every GPU thread as a Python thread.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from numba import from_dtype, typeof, types
from numba.core.typing.typeof import Purpose

if not os.environ.get("NUMBA_ENABLE_CUDASIM"):
    pytest.skip("run through tests/test_cuda_backend.py (needs NUMBA_ENABLE_CUDASIM=1)", allow_module_level=True)

from helpers import (  # noqa: E402
    SEED_FILTER_CASES,
    assert_same_alignments,
    assert_window_locations,
    batch_of,
    bulk_case,
    bulk_expected,
    bulk_run,
    genome_and_reads,
    genome_with_n,
    overflow_case,
    random_genome,
    repetitive_genome,
    sample_reads,
    windows_case,
)

from seedmap.backends import select  # noqa: E402
from seedmap.backends.cuda import (  # noqa: E402
    align_kernels,
    device,
    fm_kernels,
    locate_kernels,
    seed_filter_kernels,
    verify_kernels,
)
from seedmap.backends.cuda import kinds as cuda_kinds  # noqa: E402
from seedmap.backends.cuda.engines import CudaNeighborhoodEngine  # noqa: E402
from seedmap.backends.cuda.fm_engine import CudaFmEngine  # noqa: E402
from seedmap.backends.cuda.locations import DeviceLocator  # noqa: E402
from seedmap.backends.cuda.verify_kernels import BANDED, BITVECTOR, DeviceVerifier  # noqa: E402
from seedmap.engines.fm import SAVED_ROWS, FmEngine  # noqa: E402
from seedmap.engines.neighborhood import NeighborhoodEngine  # noqa: E402
from seedmap.filter.fm_scheme import ROW, Saved, bidir, count_candidates, no_memo  # noqa: E402
from seedmap.index import fm, neighborhood  # noqa: E402
from seedmap.io.columns import Queries  # noqa: E402
from seedmap.io.reference import Reference  # noqa: E402
from seedmap.pipeline import EngineOptions, errors_per_read  # noqa: E402
from seedmap.verify import windows as cpu  # noqa: E402
from seedmap.verify.bulk import window_of  # noqa: E402

warnings.filterwarnings("ignore", category=RuntimeWarning)  # uint64 wrap-around in the simulated kernels
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.cudasim]

# ------------------------------------------------------------------------- launch signatures, as declared

KERNEL_MODULES = (verify_kernels, seed_filter_kernels, locate_kernels, fm_kernels, align_kernels)
LAUNCHED: set[tuple[str, tuple]] = set()


def launch_type(arg: object) -> types.Type:
    """The numba type a real launch gives this argument (a device array as DeviceNDArray types it)."""
    ary = getattr(arg, "_ary", None)  # the simulator's device arrays wrap a numpy array
    if ary is None:
        return typeof(arg, Purpose.argument)
    broadcast = 0 in ary.strides and ary.size != 0
    layout = "A" if broadcast else "C" if ary.flags.c_contiguous else "F" if ary.flags.f_contiguous else "A"
    return types.Array(from_dtype(ary.dtype), ary.ndim, layout)


class Recorded:
    """A kernel whose launches must match its module's SIGNATURES (the list warm_up compiles ahead and
    tests/test_cuda_compile.py compiles for real GPUs): the declared list is checked against the code."""

    def __init__(self, name: str, kernel: object, declared: list) -> None:
        self.name, self.kernel, self.declared = name, kernel, declared

    def __getitem__(self, config: object) -> object:
        launch = self.kernel[config]

        def call(*args: object) -> object:
            sig = tuple(launch_type(a) for a in args)
            assert sig in self.declared, f"{self.name} launched with undeclared types {sig}"
            LAUNCHED.add((self.name, sig))
            return launch(*args)

        return call


@pytest.fixture(autouse=True, scope="module")
def _record_launches():
    saved = []
    for mod in KERNEL_MODULES:
        for name, sigs in mod.SIGNATURES.items():
            saved.append((mod, name, getattr(mod, name)))
            setattr(mod, name, Recorded(name, getattr(mod, name), sigs))
    yield
    for mod, name, kernel in saved:
        setattr(mod, name, kernel)


def gpu_distances(case: dict, method: str) -> np.ndarray:
    v = DeviceVerifier(case["ref"].packed, case["ref"].nmask, method=method)
    return v(case["qcodes"], case["qoff"], case["qerr"], case["cand_q"], case["ws"], case["we"], case["ref"].packed,
             case["ref"].nmask)


# ------------------------------------------------------------------------------------------ verification


@pytest.mark.parametrize("seed", [0])
def test_bitvector_matches_cpu_and_oracle(seed):
    """Lengths across word boundaries (1..300: > 256 goes to the CPU twin), e up to 15, clipped windows."""
    case = bulk_case(np.random.default_rng(seed), nreads=40, ncand=5)
    want = bulk_run(case)
    assert np.array_equal(want, bulk_expected(case))
    got = gpu_distances(case, BITVECTOR)
    assert got.dtype == np.int32
    assert np.array_equal(got, want)
    e_of = case["qerr"][case["cand_q"] >> 1]
    assert np.any(want <= e_of) and np.any(want > e_of)


@pytest.mark.parametrize("method", [BITVECTOR, BANDED])
def test_n_never_matches(method):
    """N runs in the reference and in the reads: every candidate window crosses some."""
    rng = np.random.default_rng(4)
    genome = rng.integers(0, 4, 240).astype(np.uint8)
    genome[[30, 31, 32, 75, 120, 121, 170, 200]] = 4
    ref = Reference.from_codes(["g"], [genome])
    reads = []
    for p in (20, 60, 110, 160, 190):
        r = genome[p:p + 20].copy()
        r[r == 4] = 0  # the read has A where the reference has N
        reads += [r, genome[p:p + 20].copy()]  # and the N itself (never matches either)
    qoff = np.zeros(len(reads) + 1, dtype=np.int64)
    np.cumsum([r.size for r in reads], out=qoff[1:])
    cand_q = np.repeat(np.arange(len(reads)), 3)
    cand_diag = np.array([p + d for p in (20, 60, 110, 160, 190) for _ in range(2) for d in (-1, 0, 2)])
    ws, we = window_of(cand_diag, 20, 3, 0, genome.size)
    case = dict(genome=genome, ref=ref, reads=reads, qcodes=np.concatenate(reads), qoff=qoff,
                qerr=np.full(len(reads) // 2 + 1, 3, dtype=np.int64), cand_q=cand_q, ws=ws, we=we)
    want = bulk_run(case)
    assert np.array_equal(want, bulk_expected(case))
    assert np.array_equal(gpu_distances(case, method), want)
    assert np.any(want > 0) and np.any(want <= 3)


def test_banded_matches_cpu():
    """Nouri's banded kernel on short reads (its band fits 32 lanes up to e = 7; wider ones and m <= e go
    to the bit-vector kernel)."""
    case = bulk_case(np.random.default_rng(7), nreads=8, lengths=[3, 18, 24, 9, 21, 2, 16, 12], emax=4, ncand=3,
                     glens=[400, 120, 60])
    want = bulk_run(case)
    got = gpu_distances(case, BANDED)
    assert np.array_equal(got, want)
    e_of = case["qerr"][case["cand_q"] >> 1]
    assert np.any(want <= e_of) and np.any(want > e_of)


def test_reads_resident_between_calls():
    case = bulk_case(np.random.default_rng(3), nreads=6, lengths=[40, 70], emax=5, ncand=2)
    v = DeviceVerifier(case["ref"].packed, case["ref"].nmask)
    args = (case["qcodes"], case["qoff"], case["qerr"])
    half = case["cand_q"].size // 2
    a = v(*args, case["cand_q"][:half], case["ws"][:half], case["we"][:half])
    sent = v._reads_dev
    b = v(*args, case["cand_q"][half:], case["ws"][half:], case["we"][half:])
    assert v._reads_dev is sent  # the second call sent only its candidates
    assert np.array_equal(np.concatenate([a, b]), bulk_run(case))


# ------------------------------------------------------------------------------- locations in windows


@pytest.fixture
def small_blocks(monkeypatch):
    """Two threads per block: the simulator runs a block's threads as Python threads, which slow each
    other down about tenfold here (the end-to-end runs below keep the real block size)."""
    for module in (locate_kernels, verify_kernels, seed_filter_kernels, fm_kernels, align_kernels):
        monkeypatch.setattr(module, "THREADS", 2)


def locator(ref: Reference) -> DeviceLocator:
    return DeviceLocator(DeviceVerifier(ref.packed, ref.nmask))


@pytest.mark.parametrize("seed", [0, 1])
def test_window_locations_match_the_oracle_and_cpu(seed, small_blocks):
    """Every location of every window, as the brute-force oracle has it, and the CPU verifier's output
    exactly (order and dtypes too)."""
    ref, seqs, c = windows_case(seed, 12)
    assert_window_locations(ref, seqs, c, locator(ref))


def test_window_locations_overflow_and_long_reads(small_blocks):
    """A tandem repeat gives a window more locations than its first-pass slots (verified again with room
    for all); reads longer than 256 bp go to the CPU kernel, and the two parts merge in query order."""
    ref, args = overflow_case()
    want = cpu.verify(*args)
    got = locator(ref)(*args)
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    per_query = np.bincount(got[0], minlength=8)
    assert per_query.max() > cpu.SLOTS and per_query[2] > 0 and per_query[6] > 0  # overflow; long reads found


def test_exact_search_and_no_windows(small_blocks):
    ref, _, c = windows_case(3, 6)
    args = (c["qcodes"], c["qoff"], np.zeros_like(c["qerr"]), c["win_q"], c["win"], ref.packed, ref.nmask)
    assert all(np.array_equal(g, w) for g, w in zip(locator(ref)(*args), cpu.verify(*args), strict=True))
    none = locator(ref)(c["qcodes"], c["qoff"], c["qerr"], c["win_q"][:0], c["win"][:0], ref.packed, ref.nmask)
    assert all(x.size == 0 for x in none)


@pytest.mark.parametrize("seed,scratch_bytes", [(0, 256 << 20), (4, 20_000)])
def test_traceback_matches_cpu(seed, scratch_bytes, small_blocks):
    """CIGAR runs and MD strings of every verified location, byte for byte the CPU's (reads of 2 to 256 bp,
    e up to 6, N on both sides, tandem repeats: gapped and ungapped alignments), in one launch and in many."""
    from seedmap.backends.cuda.alignments import DeviceAligner
    from seedmap.verify.align import align

    ref, _, c = windows_case(seed, 14)
    loc = cpu.verify(c["qcodes"], c["qoff"], c["qerr"], c["win_q"], c["win"], ref.packed, ref.nmask)
    assert loc[0].size > 10 and (loc[3] > 0).any()
    args = (c["qcodes"], c["qoff"], c["qerr"], *loc, ref.packed, ref.nmask, ref.starts)
    want = align(*args)
    got = DeviceAligner(DeviceVerifier(ref.packed, ref.nmask), scratch_bytes=scratch_bytes)(*args)
    assert_same_alignments(got, want)
    runs = got.n_runs
    assert (runs > 1).any()  # gapped alignments: the DP and its traceback ran, not only the ungapped path


# ----------------------------------------------------------------------------------------- seed + filter


@pytest.mark.parametrize("kind,u,l,plan,errors,lengths", SEED_FILTER_CASES)
def test_seed_filter_matches_cpu(kind, u, l, plan, errors, lengths):
    ref, batch = genome_and_reads(kind, 11, 30, lengths)
    ix = neighborhood.build(ref, u, l)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, errors)
    want_q, want_rows = NeighborhoodEngine(ix, ref.starts, **plan).candidate_windows(qcodes, qoff, qerr)
    assert want_q.size > 0
    gpu = CudaNeighborhoodEngine(ix, ref.starts, max_bytes=None, **plan)
    got_q, got_rows = gpu.candidate_windows(qcodes, qoff, qerr)
    assert np.array_equal(got_q, want_q)
    assert np.array_equal(got_rows, want_rows)


@pytest.mark.parametrize("fe,max_bytes", [(0, None), (1, None), (2, 4000)])
def test_ph_filter_on_the_gpu(fe, max_bytes, small_blocks):
    """--filter ph over contiguous seeds looks its full-length patterns up in the perfect hashes on the device
    (short windows binary search): the windows of the CPU's ph engine and of the bs engine, index slices
    included."""
    from seedmap.engines.neighborhood_ph import PerfectHashEngine

    ref, batch = genome_and_reads("repetitive", 6, 30, (20, 60))
    ix = neighborhood.build(ref, 5, 4)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, 0.06)
    want = PerfectHashEngine(ix, ref.starts, fe=fe).candidate_windows(qcodes, qoff, qerr)
    assert want[0].size > 0
    bs = NeighborhoodEngine(ix, ref.starts, fe=fe).candidate_windows(qcodes, qoff, qerr)
    assert np.array_equal(bs[0], want[0]) and np.array_equal(bs[1], want[1])
    gpu = CudaNeighborhoodEngine(ix, ref.starts, max_bytes=max_bytes, fe=fe, filter_name="ph")
    assert gpu.on_gpu and gpu.ph_on and (max_bytes is None or len(gpu.slices) > 2)
    got = gpu.candidate_windows(qcodes, qoff, qerr)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("filter_name,shape,fe", [("ph", "###-##", 0), ("bpr", "", 1)])
def test_other_filters_fall_back_to_the_cpu_engine(filter_name, shape, fe):
    """--filter bpr and spaced seeds filter on the CPU, through the engine make_engine picks."""
    from seedmap.engines.factory import neighborhood_engine as make_engine
    from seedmap.options import EngineOptions

    ref, batch = genome_and_reads("repetitive", 3, 30, (20, 60))
    ix = neighborhood.build(ref, 5, 4, shape)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, 0.06)
    options = EngineOptions(filter=filter_name, fe=fe)
    want_q, want_rows = make_engine(ix, ref.starts, options).candidate_windows(qcodes, qoff, qerr)
    assert want_q.size > 0
    gpu = CudaNeighborhoodEngine(ix, ref.starts, max_bytes=None, fe=fe, filter_name=filter_name)
    assert not gpu.on_gpu and type(gpu.cpu).__name__ == {"ph": "PerfectHashEngine",
                                                          "bpr": "NeighborhoodBprEngine"}[filter_name]
    got_q, got_rows = gpu.candidate_windows(qcodes, qoff, qerr)
    assert np.array_equal(got_q, want_q) and np.array_equal(got_rows, want_rows)


@pytest.mark.parametrize("u,l,errors,lengths,max_bytes", [(5, 3, 0.06, (20, 60), 4000), (8, 4, 0.12, (20, 30), 4000)])
def test_seed_filter_slices_and_chunks(u, l, errors, lengths, max_bytes):
    """An index cut into slices loaded in turn, and query chunks under a small candidate cap, give
    the same windows (repeats: many candidates per read, heap sort on the device; windows shorter than u
    look up ranges of seed blocks that slices cut)."""
    ref, batch = genome_and_reads("repetitive", 5, 30, lengths)
    ix = neighborhood.build(ref, u, l)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, errors)
    want = NeighborhoodEngine(ix, ref.starts).candidate_windows(qcodes, qoff, qerr)
    gpu = CudaNeighborhoodEngine(ix, ref.starts, max_bytes=max_bytes, candidate_cap=200)
    assert len(gpu.slices) > 2
    got = gpu.candidate_windows(qcodes, qoff, qerr)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    counts = np.diff(np.searchsorted(want[0], np.arange(qoff.size)))
    assert counts.max() > 0


@pytest.mark.parametrize("kind", ["neighborhood", "kmer"])
def test_workers_of_one_device_share_its_copies(kind, small_blocks):
    """Engines made with one DeviceShare (the workers of one GPU) hold one device copy of the reference and
    the index and find what an engine with copies of its own finds (the CPU's locations); another share
    makes its own copies."""
    from seedmap.backends.cuda.kinds import device_engine as make_engine
    from seedmap.backends.cuda.resident import DeviceShare
    from seedmap.index import kmer

    ref, batch = genome_and_reads("repetitive", 9, 20, (30, 60))
    ix = neighborhood.build(ref, 6, 4) if kind == "neighborhood" else kmer.build(ref, 8)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, 0.06)
    share = DeviceShare()
    a, b = (make_engine(kind, ix, ref, EngineOptions(kind=kind), share=share) for _ in range(2))
    alone = make_engine(kind, ix, ref, EngineOptions(kind=kind))
    va, vb, vo = (e.locator.device for e in (a, b, alone))
    assert va is not vb and va.d_packed is vb.d_packed and va.d_nmask is vb.d_nmask  # own reads, one reference
    assert vo.d_packed is not va.d_packed
    if kind == "neighborhood":
        assert a.engine._resident is b.engine._resident and a.engine.slices is b.engine.slices
        assert a.engine.cpu is b.engine.cpu  # the CPU filter's engine (a ph filter's tables) made once too
        assert alone.engine._resident is not a.engine._resident
    want_q, want_rows = alone.candidate_windows(qcodes, qoff, qerr)
    want = cpu.verify(qcodes, qoff, qerr, want_q, want_rows, ref.packed, ref.nmask)
    assert want[0].size > 0
    for engine in (a, b, alone):
        win_q, rows = engine.candidate_windows(qcodes, qoff, qerr)
        assert np.array_equal(win_q, want_q) and np.array_equal(rows, want_rows)
        got = engine.verify_windows(qcodes, qoff, qerr, win_q, rows, ref.packed, ref.nmask)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


def test_slices_cut_short_window_ranges():
    """Windows shorter than u look up a range of seed blocks; slice borders cut such ranges."""
    rng = np.random.default_rng(8)
    seqs = [random_genome(rng, 1500), random_genome(rng, 400)]
    ref = Reference.from_codes(["a", "b"], seqs)
    batch = batch_of(sample_reads(rng, seqs, 3, (10, 13), 2))
    ix = neighborhood.build(ref, 4, 2)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, 0.3)  # 3 edits: 4 windows of 2 or 3 bases (< u = 4)
    want = NeighborhoodEngine(ix, ref.starts).candidate_windows(qcodes, qoff, qerr)
    gpu = CudaNeighborhoodEngine(ix, ref.starts, max_bytes=6000)
    assert len(gpu.slices) > 3
    got = gpu.candidate_windows(qcodes, qoff, qerr)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_seed_filter_with_int64_positions():
    """References of 4 Gbp and more store positions as int64: the other fill_kernel signature."""
    ref, batch = genome_and_reads("random", 12, 20, (30, 50))
    ix = neighborhood.build(ref, 6, 4)
    ix.pos = ix.pos.astype(np.int64)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, 0.05)
    want = NeighborhoodEngine(ix, ref.starts).candidate_windows(qcodes, qoff, qerr)
    got = CudaNeighborhoodEngine(ix, ref.starts, max_bytes=None).candidate_windows(qcodes, qoff, qerr)
    assert want[0].size > 0
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


# --------------------------------------------------------------------------------------------- FM search


def fm_case(kind: str, seed: int, n: int, lengths: tuple[int, int]) -> tuple[Reference, object]:
    rng = np.random.default_rng(seed)
    if kind == "repetitive":
        seqs = repetitive_genome(rng)
    else:  # N runs in the reference; the reads get some too
        seqs = [genome_with_n(rng, 2500), genome_with_n(rng, 400)]
    ref = Reference.from_codes([f"c{i}" for i in range(len(seqs))], seqs)
    reads = sample_reads(rng, seqs, n, lengths, 3)
    for r in reads[::5]:
        r[int(rng.integers(0, r.size))] = 4
    return ref, batch_of(reads)


@pytest.mark.parametrize("kind,r,errors,lengths,sizes", [
    ("repetitive", 4, 0.06, (20, 50), {"saved_rows": 4}),
    # a query per launch:
    ("repetitive", 3, 0.12, (20, 30), {"scratch_bytes": 1, "candidate_cap": 300, "saved_rows": 4}),
    ("random", 16, 0.05, (30, 60), {"verify_below": 0}),
    ("random", 2, 0.0, (20, 30), {}),  # e = 0: the forward index alone
])
def test_fm_search_matches_cpu(kind, r, errors, lengths, sizes, small_blocks):
    """The FM engine's search, locates and dedupe on the device give the CPU FmEngine's windows exactly:
    queries with more accepted strings than the first pass keeps (searched again), N in reads and
    reference, scratch for one query per launch, and query chunks under a small candidate cap."""
    ref, batch = fm_case(kind, 21, 24, lengths)
    ix = fm.build(ref, r)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, errors)
    small = sizes.get("verify_below", 1)
    keep = sizes.get("saved_rows", SAVED_ROWS)
    want_q, want_rows = FmEngine(ix, ref.starts, verify_below=small, saved_rows=keep).candidate_windows(qcodes, qoff,
                                                                                                      qerr)
    assert want_q.size > 0
    got_q, got_rows = CudaFmEngine(ix, ref.starts, **sizes).candidate_windows(qcodes, qoff, qerr)
    assert np.array_equal(got_q, want_q) and np.array_equal(got_rows, want_rows)
    if kind == "repetitive":  # the second search pass ran
        nq = qoff.size - 1
        n_saved = np.empty(nq, dtype=np.int64)
        saved = Saved(np.empty((1, nq * keep, ROW), dtype=np.int64), np.empty(nq, dtype=np.int64), n_saved)
        count_candidates(Queries(qcodes, qoff, qerr), bidir(ix), small, saved, no_memo(), np.zeros(nq, dtype=np.int64),
                         0, 0, nq, np.empty((0, ROW), dtype=np.int64))
        assert n_saved.max() > keep


@pytest.mark.parametrize("ssa_dtype", [np.uint32, np.int64])
def test_fm_segments_and_wide_samples(small_blocks, ssa_dtype):
    """An FM index in genome segments (each part searched with its sequences' starts) through device_engine,
    and SA samples stored as the types of texts past 2^31 and 2^32 symbols: the CPU's locations."""
    from seedmap.backends.cuda.kinds import device_engine as make_engine
    from seedmap.index.segments import SegmentedIndex

    ref, batch = fm_case("random", 22, 16, (30, 50))
    bounds = fm.segment_bounds(ref, 4, segment_bases=ref.total // 2)
    seg = SegmentedIndex([fm.build(ref, 4, *fm.sequence_range(ref.starts, a, b))
                          for a, b in zip(bounds[:-1], bounds[1:], strict=True)], bounds)
    for part in seg.parts:
        part.fwd_ssa = part.fwd_ssa.astype(ssa_dtype)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, 0.05)
    want_q, want_rows = FmEngine(fm.build(ref, 4), ref.starts).candidate_windows(qcodes, qoff, qerr)
    want = cpu.verify(qcodes, qoff, qerr, want_q, want_rows, ref.packed, ref.nmask)
    assert want[0].size > 0
    engine = make_engine("fm", seg, ref, EngineOptions(kind="fm"))
    assert len(engine.engine.parts) > 1
    win_q, rows = engine.candidate_windows(qcodes, qoff, qerr)
    got = engine.verify_windows(qcodes, qoff, qerr, win_q, rows, ref.packed, ref.nmask)
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


DONE_ON_GPU = {"window_locations_kernel", "align_kernel"}  # every engine's windows verified and aligned there
MAROSE = {"count_kernel", "fill_kernel", "sort_kernel", "merge_kernel"}


@pytest.mark.parametrize("kind,options,want", [
    ("neighborhood", {}, MAROSE | DONE_ON_GPU),
    ("neighborhood", {"filter": "ph"}, MAROSE | DONE_ON_GPU),
    ("neighborhood", {"filter": "bpr"}, DONE_ON_GPU),  # filters on the CPU
    ("kmer", {}, {"bitvector_kernel"} | DONE_ON_GPU),
    ("fm", {"gpu_verify": BANDED}, {"search_kernel", "fill_kernel", "sort_kernel", "merge_kernel"} | DONE_ON_GPU),
])
def test_warm_up_loads_the_declared_signatures(kind, options, want):
    """What warm_up compiles and loads before the workers start: the run's kernels, as declared."""
    ref = Reference.from_codes(["a"], [random_genome(np.random.default_rng(1), 300)])
    ix = fm.build(ref, 4) if kind == "fm" else neighborhood.build(ref, 5, 3)
    got = cuda_kinds.launched_kernels(kind, ix, EngineOptions(**options))
    assert {kernel.name for kernel, _ in got} == want
    assert all(sig in kernel.declared for kernel, sig in got)
    fills = fm_kernels.SIGNATURES if kind == "fm" else seed_filter_kernels.SIGNATURES
    assert [sig for kernel, sig in got if kernel.name == "fill_kernel"] == (
        [fills["fill_kernel"][0]] if "fill_kernel" in want else [])  # uint32 positions, int32 SA samples


def test_every_declared_signature_was_launched():
    """Runs last (file order): the tests above launched every declared (kernel, signature)."""
    declared = {(name, sig) for mod in KERNEL_MODULES for name, sigs in mod.SIGNATURES.items() for sig in sigs}
    assert declared - LAUNCHED == set()


# ------------------------------------------------------------------------------------------- end to end


def test_gpu_count_under_simulator():
    assert device.gpu_count() == 1
    assert select.resolve("auto").ids == (0,)
    assert select.resolve("cuda:0,0").ids == (0, 0)


def sam_body(path: Path) -> bytes:
    return b"".join(line for line in path.read_bytes().splitlines(True) if not line.startswith(b"@PG"))


@pytest.mark.parametrize("engine", ["neighborhood", "kmer", "fm"])
def test_map_cuda_same_sam_as_cpu(tmp_path, engine):
    rng = np.random.default_rng(2)
    seqs = [random_genome(rng, 6000), random_genome(rng, 1500)]
    seqs[0][4000:4100] = seqs[0][1000:1100]  # a repeat: reads with two locations
    ref_fa = tmp_path / "ref.fa"
    ref_fa.write_text("".join(f">c{i}\n" + "".join("ACGTN"[c] for c in s) + "\n" for i, s in enumerate(seqs)))
    reads = sample_reads(rng, seqs, 16, (60, 101), 4)
    (tmp_path / "reads.fa").write_text("".join(f">r{i}\n" + "".join("ACGTN"[c] for c in r) + "\n"
                                               for i, r in enumerate(reads)))
    outs = {}
    for dev in ["cpu", "cuda:0,0"]:  # the simulated device listed twice: -t 6, three workers per entry
        out = tmp_path / f"{dev}.sam"
        cmd = [sys.executable, "-m", "seedmap", "map", "-v", "-t", "6", "--engine", engine, "--device", dev,
               "--batch-size", "7", "-o", str(out), str(ref_fa), str(tmp_path / "reads.fa")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outs[dev] = sam_body(out)
        # seedmap's own lines only: no numba-cuda log records, no warnings
        assert all(line.startswith("[seedmap] ") for line in r.stderr.splitlines()), r.stderr
        assert "mapped 16 reads" in r.stderr
        if dev != "cpu":
            assert "mapping on cuda:0,0: 6 worker threads, 3 per device" in r.stderr, r.stderr
        # -v: where the time went, the GPU workers' batch stages included
        for stage in ("candidates", "verify", "traceback", "read (reader thread)", "workers busy"):
            assert f"[seedmap]   {stage}" in r.stderr, (stage, r.stderr)
    assert outs["cpu"] == outs["cuda:0,0"]
    assert outs["cpu"].count(b"\n") > 16


@pytest.mark.parametrize("engine", ["neighborhood", "kmer"])  # fm: 330 s in the simulator; same device path
def test_paired_reads_map_on_the_gpu(tmp_path, engine):
    """Paired runs find both mates' candidates with the device engine: the CPU's SAM, several batches on two
    workers, nothing on stderr but seedmap's lines."""
    rng = np.random.default_rng(4)
    seq = random_genome(rng, 4000)
    ref_fa = tmp_path / "ref.fa"
    ref_fa.write_text(">c0\n" + "".join("ACGTN"[c] for c in seq) + "\n")
    comp = np.array([3, 2, 1, 0, 4])
    for mate in (1, 2):
        lines = []
        for i in range(12):
            s = int(rng.integers(0, 3600))
            frag = seq[s:s + 300]
            read = frag[:80] if mate == 1 else comp[frag[-80:][::-1]]
            lines.append(f">p{i}/{mate}\n" + "".join("ACGTN"[c] for c in read) + "\n")
        (tmp_path / f"r{mate}.fa").write_text("".join(lines))
    outs = {}
    for dev in ["cpu", "cuda:0,0"]:
        out = tmp_path / f"{dev}.sam"
        cmd = [sys.executable, "-m", "seedmap", "map", "--engine", engine, "--device", dev, "--batch-size", "5",
               "-o", str(out), str(ref_fa), str(tmp_path / "r1.fa"), str(tmp_path / "r2.fa")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        outs[dev] = sam_body(out)
        assert all(line.startswith("[seedmap] ") for line in r.stderr.splitlines()), r.stderr
        assert "mapped 12 pairs" in r.stderr and "CPU" not in r.stderr, r.stderr
    assert outs["cpu"] == outs["cuda:0,0"] and outs["cpu"].count(b"\n") >= 24
