"""The OpenCL bulk verification (bulk.cl through backends/opencl/bulk.py) and traceback (align.cl through
alignments.py), run for real on an OpenCL device (PoCL's CPU device in CI): the bulk distances against the CPU
twin (verify.bulk.bulk_distances) and the brute-force oracle, on random and repetitive genomes, both kernels;
the k-mer engine's windows with them; the CIGAR, MD and NM of every location against the CPU traceback's."""

from __future__ import annotations

import logging
import re
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import (
    COMP,
    assert_same_alignments,
    bulk_case,
    bulk_expected,
    bulk_oracle,
    bulk_run,
    genome_and_reads,
    mutate,
    mutate_acgt,
    overflow_case,
    random_genome,
    repetitive_genome,
    windows_case,
)

from seedmap.backends.base import EngineInputs
from seedmap.backends.opencl import alignments, device, program
from seedmap.backends.opencl.alignments import OpenClAligner
from seedmap.backends.opencl.backend import OpenClBackend
from seedmap.backends.opencl.bulk import BANDED, BITVECTOR, LANES, OpenClBulkVerifier, kernel_of
from seedmap.engines.kmer import KmerEngine
from seedmap.index import kmer
from seedmap.io.reference import Reference
from seedmap.kinds import cpu_engine
from seedmap.options import EngineOptions
from seedmap.pipeline import errors_per_read
from seedmap.verify import windows as cpu
from seedmap.verify.align import align
from seedmap.verify.bulk import bulk_distances

pytest.importorskip("pyopencl", reason="the opencl extra (pip install seedmap[opencl]) brings PyOpenCL and PoCL")



def distances(dev: program.OpenClDevice, case: dict, method: str) -> np.ndarray:
    verify = OpenClBulkVerifier(dev, case["ref"], method)
    return verify(case["qcodes"], case["qoff"], case["qerr"], case["cand_q"], case["ws"], case["we"],
                  case["ref"].packed, case["ref"].nmask)


def banded_share(case: dict) -> float:
    """The share of a case's candidates the banded kernel takes (bulk.py's rule)."""
    m = np.diff(case["qoff"])[case["cand_q"]]
    e = case["qerr"][case["cand_q"] >> 1]
    n = np.maximum(case["we"] - case["ws"], 0)
    width = n - m + 2 * e + 1
    return float(np.mean((m <= 256) & (m > e) & (width >= 1) & (width <= LANES)))


@pytest.mark.parametrize("method", [BITVECTOR, BANDED])
@pytest.mark.parametrize("seed", [0, 1])
def test_bulk_distances_match_cpu_and_oracle(opencl_device, method, seed):
    """Reads of 1 to 300 bp (across word boundaries; over 256 to the CPU twin), e up to 15, windows clipped at
    sequence ends, N runs, a poly-A run and a tandem repeat in the genome."""
    case = bulk_case(np.random.default_rng(seed), nreads=40, ncand=5)
    want = bulk_run(case)
    assert np.array_equal(want, bulk_expected(case))
    got = distances(opencl_device, case, method)
    assert got.dtype == np.int32 and np.array_equal(got, want)
    e_of = case["qerr"][case["cand_q"] >> 1]
    assert np.any(want <= e_of) and np.any(want > e_of)
    assert (np.diff(case["qoff"]) > 256).any()


def test_banded_kernel_on_short_reads(opencl_device):
    """Short reads, small e: half the candidates or so go to the banded kernel (bands of up to 32 diagonals;
    bulk_case widens a sixth of the windows as clusters do, some beyond)."""
    case = bulk_case(np.random.default_rng(7), nreads=12, lengths=[3, 18, 24, 9, 21, 2, 16, 12, 30], emax=5,
                     ncand=4, glens=[400, 120, 60])
    want = bulk_run(case)
    assert np.array_equal(want, bulk_expected(case))
    assert banded_share(case) > 0.4
    assert np.array_equal(distances(opencl_device, case, BANDED), want)


class Recorded:
    """A bulk verifier that keeps every call's arguments and results."""

    def __init__(self, verify: object) -> None:
        self.verify, self.calls = verify, []

    def __call__(self, *args: object) -> np.ndarray:
        out = self.verify(*args)
        self.calls.append((args, out))
        return out


@pytest.mark.parametrize("method", [BITVECTOR, BANDED])
@pytest.mark.parametrize("kind", ["repetitive", "random"])
def test_kmer_engine_windows(opencl_device, kind, method):
    """The k-mer engine with the OpenCL verifier: the CPU engine's windows, each call's distances the CPU twin's
    and (on a sample) the oracle's."""
    ref, batch = genome_and_reads(kind, 5, 60, (20, 90))
    ix = kmer.build(ref, 8)
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, 0.06)
    verifier = Recorded(OpenClBulkVerifier(opencl_device, ref, method))
    ocl = KmerEngine(ix, ref.starts, bulk=verifier, packed=ref.packed, nmask=ref.nmask)
    want = KmerEngine(ix, ref.starts, bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask)
    want_q, want_rows = want.candidate_windows(qcodes, qoff, qerr)
    got_q, got_rows = ocl.candidate_windows(qcodes, qoff, qerr)
    assert want_q.size > 0 and np.array_equal(got_q, want_q) and np.array_equal(got_rows, want_rows)
    assert verifier.calls
    genome = ref.codes()
    rng = np.random.default_rng(0)
    for args, out in verifier.calls:
        assert np.array_equal(out, bulk_distances(*args))
        q, ws, we = args[3:6]
        for k in rng.choice(q.size, min(q.size, 150), replace=False):
            read = args[0][args[1][q[k]]:args[1][q[k] + 1]]
            e = int(args[2][q[k] >> 1])
            assert out[k] == bulk_oracle(genome, read, e, int(ws[k]), int(we[k]))


def test_bulk_edges(opencl_device):
    """No candidates; every read over 256 bp (all on the CPU twin); another reference refused."""
    case = bulk_case(np.random.default_rng(2), nreads=6, lengths=[280, 300], emax=4, ncand=3)
    verify = OpenClBulkVerifier(opencl_device, case["ref"])
    args = (case["qcodes"], case["qoff"], case["qerr"])
    assert verify(*args, *(case[x][:0] for x in ("cand_q", "ws", "we"))).size == 0
    assert np.array_equal(distances(opencl_device, case, BITVECTOR), bulk_run(case))
    with pytest.raises(ValueError, match="another reference"):
        verify(*args, case["cand_q"], case["ws"], case["we"], case["ref"].packed.copy())
    with pytest.raises(ValueError, match="unknown GPU verification method"):
        OpenClBulkVerifier(opencl_device, case["ref"], "nouri")


@pytest.mark.parametrize("method", [BITVECTOR, BANDED])
def test_kmer_engine_made_and_logged(opencl_device, monkeypatch, caplog, method):
    """--device opencl with the k-mer engine: its workers' engines verify in bulk with the OpenCL kernel the
    options chose and align on the device, as the prepare line says (once); a device whose work-groups are
    smaller than the banded kernel's gets the bit-vector kernel."""
    ref, _ = genome_and_reads("random", 1, 2, (20, 30))
    ix = kmer.build(ref, 8)
    opts = EngineOptions(gpu_verify=method)
    inputs = EngineInputs("kmer", ix, ref, opts, cpu_engine("kmer", ix, ref, opts))
    backend = OpenClBackend(device.pick(None))
    monkeypatch.setattr(backend, "_device", lambda dev: opencl_device)
    with caplog.at_level(logging.INFO, logger="seedmap"):
        backend.prepare(inputs)
    assert caplog.text.count("--device opencl:") == 1
    assert (f"the bulk verification of the candidates (kmer engine, {method} kernel), the windows' verification and "
            "the traceback (CIGAR, MD) run on") in caplog.text
    assert "the seeding and the merge of each read's windows (kmer engine) run on the CPU" in caplog.text
    engine = backend.engine_maker(0)(inputs)
    assert isinstance(engine.engine.bulk, OpenClBulkVerifier) and isinstance(engine.aligner, OpenClAligner)
    assert (engine.engine.bulk.banded is not None) == (method == BANDED)
    small = SimpleNamespace(device=SimpleNamespace(max_work_group_size=32))
    assert kernel_of(small, BANDED) == BITVECTOR and kernel_of(opencl_device, method) == method


# ------------------------------------------------------------------------------------------------ traceback


def locations_and_alignments(dev: program.OpenClDevice, ref: Reference, c: dict, scratch_bytes: int) -> tuple:
    loc = cpu.verify(c["qcodes"], c["qoff"], c["qerr"], c["win_q"], c["win"], ref.packed, ref.nmask)
    args = (c["qcodes"], c["qoff"], c["qerr"], *loc, ref.packed, ref.nmask, ref.starts)
    return loc, align(*args), OpenClAligner(dev, ref, scratch_bytes=scratch_bytes)(*args)


@pytest.mark.parametrize("seed,reads,scratch_bytes", [(0, 14, 256 << 20), (4, 14, 20_000), (1, 150, 256 << 20)])
def test_traceback_matches_cpu(opencl_device, seed, reads, scratch_bytes):
    """CIGAR runs, MD strings and distances (NM) of every verified location, byte for byte the CPU's (reads of 2
    to 256 bp, e up to 6, N on both sides, tandem repeats: gapped and ungapped), in one launch and in many; the
    150 reads hold over a hundred one-gap alignments (align.cl's one_gap, not the DP)."""
    ref, _, c = windows_case(seed, reads)
    loc, want, got = locations_and_alignments(opencl_device, ref, c, scratch_bytes)
    assert loc[0].size > 10 and (loc[3] > 0).any()
    assert_same_alignments(got, want)
    assert (got.n_runs > 1).any()  # gapped alignments: the DP and its traceback ran, not only the ungapped path


def ends_case() -> tuple[Reference, dict]:
    """Reads with an insertion at their first or last base at a sequence's start or end (where it cannot move
    out), deletions next to their ends, N in the reference under them, every other read from the reverse
    strand (its query's reverse complement is found), one window (its sequence) per query."""
    rng = np.random.default_rng(11)
    seqs, reads = [], []
    for k in range(8):
        s = rng.integers(0, 4, 120).astype(np.uint8)
        if k % 2:
            s[[5, 40, 41, 100]] = 4  # N in the reference
        seqs.append(s)
        m = 60
        if k % 4 == 0:
            r = np.concatenate([[int(rng.integers(0, 4))], s[:m]])  # a leading insertion at the sequence start
        elif k % 4 == 1:
            r = np.concatenate([s[-m:], [int(rng.integers(0, 4))]])  # a trailing insertion at its end
        elif k % 4 == 2:
            r = np.concatenate([s[30:32], s[33:30 + m]])  # a deletion after the second base
        else:
            r = mutate_acgt(rng, np.concatenate([s[30:30 + m - 3], s[30 + m - 1:30 + m + 1]]), 1)  # near the end
        reads.append(r.astype(np.uint8) if k % 2 == 0 else COMP[r[::-1]])
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    qs = [x for r in reads for x in (r, COMP[r[::-1]])]
    qoff = np.zeros(len(qs) + 1, dtype=np.int64)
    np.cumsum([q.size for q in qs], out=qoff[1:])
    starts = np.asarray(ref.starts, dtype=np.int64)
    win_q = np.arange(len(qs), dtype=np.int64)
    lo, hi = starts[win_q >> 1], starts[(win_q >> 1) + 1]
    return ref, dict(qcodes=np.concatenate(qs), qoff=qoff, qerr=np.full(len(reads), 3, dtype=np.int64),
                     win_q=win_q, win=np.stack([lo, hi, lo, hi], axis=1))


def cigars(aln: dict) -> list[str]:
    return ["".join(f"{n}{'MID'[o]}" for o, n in zip(aln.ops[a:a + r], aln.lens[a:a + r], strict=True))
            for a, r in zip(aln.cig_off[:-1], aln.n_runs, strict=True)]


def test_traceback_indels_at_read_ends_n_and_reverse_strand(opencl_device):
    ref, c = ends_case()
    loc, want, got = locations_and_alignments(opencl_device, ref, c, 1 << 20)
    assert_same_alignments(got, want)
    found = cigars(got)
    assert any(x.startswith("1I") for x in found), found  # a leading insertion
    assert any(re.fullmatch(r"\d+M1I\dM|\d+M1I", x) for x in found), found  # an insertion at the last bases
    assert any(re.match(r"\dM1D", x) for x in found), found  # a deletion after the first bases
    assert np.any(got.md == ord("N"))  # a mismatch against N in the reference, in MD
    assert (loc[0] & 1).any() and (loc[0] & 1 == 0).any()  # both strands' queries


def edits_at_ends_case(seed: int, repetitive: bool) -> tuple[Reference, dict]:
    """Reads with substitutions, indels and N (some at their first or last base), either strand, on a random
    or repetitive genome (tandem repeats, poly-A: ends where alignments tie), each read's window its whole
    sequence (every copy of a repeat a location)."""
    rng = np.random.default_rng(seed)
    seqs = repetitive_genome(rng) if repetitive else [random_genome(rng, 500), random_genome(rng, 300)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    reads, where = [], []
    while len(reads) < 16:
        i = int(rng.integers(0, 2))
        m = int(rng.integers(30, 90))
        p = int(rng.integers(0, seqs[i].size - m + 1))
        read = mutate(rng, seqs[i][p:p + m], int(rng.integers(0, 5)))
        for end in (0, -1):
            if rng.random() < 0.5:
                read[end] = (read[end] + 1) % 4
        reads.append(COMP[read[::-1]] if rng.random() < 0.5 else read)
        where.append(i)
    qs = [x for r in reads for x in (r, COMP[r[::-1]])]
    qoff = np.zeros(len(qs) + 1, dtype=np.int64)
    np.cumsum([q.size for q in qs], out=qoff[1:])
    starts = np.asarray(ref.starts, dtype=np.int64)
    seq = np.repeat(where, 2)
    lo, hi = starts[seq], starts[seq + 1]
    return ref, dict(qcodes=np.concatenate(qs), qoff=qoff, qerr=np.full(len(reads), 6, dtype=np.int64),
                     win_q=np.arange(len(qs), dtype=np.int64), win=np.stack([lo, hi, lo, hi], axis=1))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("repetitive", [True, False])
def test_traceback_edits_at_read_ends(opencl_device, seed, repetitive):
    ref, c = edits_at_ends_case(seed, repetitive)
    loc, want, got = locations_and_alignments(opencl_device, ref, c, 1 << 20)
    assert loc[0].size >= 16 and (loc[3] > 0).any()
    assert_same_alignments(got, want)


def test_traceback_long_reads_on_the_cpu_logged_once(opencl_device, caplog, monkeypatch):
    """Reads over 256 bp are aligned on the CPU (one log line per process), merged into the device's slots."""
    monkeypatch.setattr(alignments, "_LONG_READS_SAID", type(alignments._LONG_READS_SAID)())
    ref, args = overflow_case()
    loc = cpu.verify(*args)
    full = (*args[:3], *loc, ref.packed, ref.nmask, ref.starts)
    m = np.diff(args[1])[loc[0]]
    assert (m > 256).any() and (m <= 256).any()
    aligner = OpenClAligner(opencl_device, ref)
    with caplog.at_level(logging.INFO, logger="seedmap"):
        for _ in range(2):
            assert_same_alignments(aligner(*full), align(*full))
    assert caplog.text.count("reads longer than 256 bp are aligned on the CPU") == 1
    none = aligner(*args[:3], *(x[:0] for x in loc), ref.packed, ref.nmask, ref.starts)
    assert none.n_runs.size == 0
    with pytest.raises(ValueError, match="another reference"):
        aligner(*full[:7], ref.packed.copy(), ref.nmask, ref.starts)
