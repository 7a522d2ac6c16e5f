"""The OpenCL bulk verification (bulk.cl through backends/opencl/bulk.py), run for real on an OpenCL device
(PoCL's CPU device in CI): the bulk distances against the CPU twin (verify.bulk.bulk_distances) and the
brute-force oracle, on random and repetitive genomes, both kernels; the k-mer engine's windows with them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    bulk_case,
    bulk_expected,
    bulk_oracle,
    bulk_run,
    genome_and_reads,
)

from seedmap.backends.opencl import device, program
from seedmap.backends.opencl.bulk import BANDED, BITVECTOR, LANES, OpenClBulkVerifier
from seedmap.engines.kmer import KmerEngine
from seedmap.index import kmer
from seedmap.pipeline import errors_per_read
from seedmap.verify.bulk import bulk_distances

pytest.importorskip("pyopencl", reason="the opencl extra (pip install seedmap[opencl]) brings PyOpenCL and PoCL")


@pytest.fixture(scope="module")
def opencl_device() -> program.OpenClDevice:
    return program.OpenClDevice(device.pick(None))


def distances(dev: program.OpenClDevice, case: dict, method: str) -> np.ndarray:
    verify = OpenClBulkVerifier(dev, case["ref"], method)
    return verify(case["qcodes"], case["qoff"], case["qerr"], case["cand_q"], case["cand_diag"], case["s0"],
                  case["s1"], case["ref"].packed, case["ref"].nmask)


def banded_share(case: dict) -> float:
    """The share of a case's candidates the banded kernel takes (bulk.py's rule)."""
    m = np.diff(case["qoff"])[case["cand_q"]]
    e = case["qerr"][case["cand_q"] >> 1]
    ws = np.maximum(case["cand_diag"] - e, case["s0"])
    n = np.maximum(np.minimum(case["cand_diag"] + m + e, case["s1"]) - ws, 0)
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
    """Short reads, small e: most candidates go to the banded kernel (bands of up to 32 diagonals)."""
    case = bulk_case(np.random.default_rng(7), nreads=12, lengths=[3, 18, 24, 9, 21, 2, 16, 12, 30], emax=5,
                     ncand=4, glens=[400, 120, 60])
    want = bulk_run(case)
    assert np.array_equal(want, bulk_expected(case))
    assert banded_share(case) > 0.5
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
        q, diag, s0, s1 = args[3:7]
        for k in rng.choice(q.size, min(q.size, 150), replace=False):
            read = args[0][args[1][q[k]]:args[1][q[k] + 1]]
            e = int(args[2][q[k] >> 1])
            assert out[k] == bulk_oracle(genome, read, e, int(diag[k]), int(s0[k]), int(s1[k]))


def test_bulk_edges(opencl_device):
    """No candidates; every read over 256 bp (all on the CPU twin); another reference refused."""
    case = bulk_case(np.random.default_rng(2), nreads=6, lengths=[280, 300], emax=4, ncand=3)
    verify = OpenClBulkVerifier(opencl_device, case["ref"])
    args = (case["qcodes"], case["qoff"], case["qerr"])
    assert verify(*args, *(case[x][:0] for x in ("cand_q", "cand_diag", "s0", "s1"))).size == 0
    assert np.array_equal(distances(opencl_device, case, BITVECTOR), bulk_run(case))
    with pytest.raises(ValueError, match="another reference"):
        verify(*args, case["cand_q"], case["cand_diag"], case["s0"], case["s1"], case["ref"].packed.copy())
    with pytest.raises(ValueError, match="unknown GPU verification method"):
        OpenClBulkVerifier(opencl_device, case["ref"], "nouri")
