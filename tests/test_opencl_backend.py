"""The OpenCL backend, run for real on an OpenCL device (PoCL's CPU device in CI: the opencl extra): its
window kernel against the CPU twin (verify.windows.verify) and the brute-force oracle, --device opencl
choosing and failing in one line, and `seedmap map --device opencl` writing the SAM of --device cpu (the
seed + filter kernel's own cases: test_opencl_seed_filter.py; bulk verification and traceback:
test_opencl_verify.py)."""

from __future__ import annotations

import builtins
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import COMP, assert_window_locations, mutate, overflow_case, random_genome, sample_reads, windows_case

from seedmap.backends import select
from seedmap.backends.opencl import device, program
from seedmap.backends.opencl.backend import OpenClBackend
from seedmap.backends.opencl.locations import OpenClLocator
from seedmap.cli import main
from seedmap.errors import SeedmapError
from seedmap.verify import windows as cpu

pytest.importorskip("pyopencl", reason="the opencl extra (pip install seedmap[opencl]) brings PyOpenCL and PoCL")



def test_window_locations_match_the_oracle_and_cpu(opencl_device):
    """Every location of every window (reads of 2 to 256 bp, e up to 6, tandem repeats, N), as the oracle
    has it, and the CPU verifier's output exactly (order and dtypes too)."""
    for seed in (0, 1):
        ref, seqs, c = windows_case(seed, 12)
        assert_window_locations(ref, seqs, c, OpenClLocator(opencl_device, ref))


def test_overflow_long_reads_exact_and_no_windows(opencl_device):
    """A window with more locations than its slots (verified again), reads over 256 bp (to the CPU, merged
    in query order), an exact search (e = 0: the CPU's exact path) and no windows at all."""
    ref, args = overflow_case()
    got = OpenClLocator(opencl_device, ref)(*args)
    assert all(np.array_equal(g, w) for g, w in zip(got, cpu.verify(*args), strict=True))
    per_query = np.bincount(got[0], minlength=8)
    assert per_query.max() > cpu.SLOTS and per_query[2] > 0 and per_query[6] > 0
    ref, _, c = windows_case(3, 6)
    locate = OpenClLocator(opencl_device, ref)
    args = (c["qcodes"], c["qoff"], np.zeros_like(c["qerr"]), c["win_q"], c["win"], ref.packed, ref.nmask)
    assert all(np.array_equal(g, w) for g, w in zip(locate(*args), cpu.verify(*args), strict=True))
    none = locate(c["qcodes"], c["qoff"], c["qerr"], c["win_q"][:0], c["win"][:0], ref.packed, ref.nmask)
    assert [x.size for x in none] == [0, 0, 0, 0]
    with pytest.raises(ValueError, match="another reference"):
        locate(*args[:5], ref.packed.copy(), ref.nmask)


def test_device_choice(monkeypatch, caplog):
    assert select.parse_device("opencl") == ("opencl", None)
    assert select.parse_device("OpenCL:1") == ("opencl", (1,))
    for bad in ("opencl:", "opencl:0,1", "opencl:x"):
        with pytest.raises(SeedmapError, match="opencl:N"):
            select.parse_device(bad)
    backend = select.resolve("opencl")
    assert isinstance(backend, OpenClBackend) and backend.describe().startswith("opencl:")
    n = len(device.all_devices())
    with pytest.raises(SeedmapError, match=f"opencl:{n}: only {n} OpenCL device"):
        select.resolve(f"opencl:{n}")
    # auto: CUDA first, then an OpenCL GPU, else the CPU
    monkeypatch.setattr(select.cuda_device, "gpu_count", lambda: 0)
    monkeypatch.setattr(device, "first_gpu", lambda: None)
    with caplog.at_level("INFO", logger="seedmap"):
        assert select.resolve("auto") is None
    assert "no OpenCL GPU found, mapping on the CPU" in caplog.text
    monkeypatch.setattr(device, "first_gpu", lambda: 0)
    assert isinstance(select.resolve("auto"), OpenClBackend)


def small_inputs(tmp_path) -> list[str]:
    seq = "ACGTTGCATGCAAGTCCGATGACTGATCGATGCTAGCTAGGCTAGCATCGACTAGCTACGAT" * 3
    (tmp_path / "ref.fa").write_text(f">r\n{seq}\n")
    (tmp_path / "reads.fq").write_text(f"@a\n{seq[10:60]}\n+\n{'I' * 50}\n")
    return [str(tmp_path / "ref.fa"), str(tmp_path / "reads.fq")]


def one_error_line(capsys, tmp_path, device_text: str) -> str:
    out = tmp_path / "out.sam"
    assert main(["map", "--device", device_text, "-o", str(out), *small_inputs(tmp_path)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("seedmap: error: "), lines
    assert not out.exists()
    return lines[0]


def test_errors_are_one_line(monkeypatch, capsys, tmp_path):
    """No pyopencl, no OpenCL platform, a device number past the last: one line each, no output file."""
    real = builtins.__import__

    def no_pyopencl(name, *args, **kwargs):
        if name == "pyopencl":
            raise ModuleNotFoundError("No module named 'pyopencl'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyopencl)
    line = one_error_line(capsys, tmp_path, "opencl")
    assert "pyopencl cannot be imported (ModuleNotFoundError" in line and "pip install seedmap[opencl]" in line
    monkeypatch.undo()
    monkeypatch.setattr(device, "all_devices", lambda: [])
    assert "no OpenCL platform or device found" in one_error_line(capsys, tmp_path, "opencl:0")


def test_a_device_without_64_bit_integers_is_one_line():
    platform = SimpleNamespace(name="Some platform")
    small = SimpleNamespace(name="tiny", platform=platform, profile="EMBEDDED_PROFILE", extensions="cl_khr_fp16")
    with pytest.raises(SeedmapError, match="Some platform: tiny has no 64-bit integers"):
        device.check_int64(small)
    device.check_int64(SimpleNamespace(**{**vars(small), "extensions": "cles_khr_int64 cl_khr_fp16"}))
    device.check_int64(SimpleNamespace(**{**vars(small), "profile": "FULL_PROFILE"}))


def test_build_failure_is_one_line_with_the_log(opencl_device):
    with pytest.raises(SeedmapError) as err:
        program.build(opencl_device.context, opencl_device.device, "__kernel void k(__global int *x) { x[0] = y; }")
    text = str(err.value)
    assert "\n" not in text and text.startswith("the OpenCL kernels do not build on ")
    assert "undeclared identifier 'y'" in text  # the compiler's own words (PoCL's clang)


def sam_body(path) -> bytes:
    return b"".join(line for line in path.read_bytes().splitlines(True) if not line.startswith(b"@PG"))


def map_both(tmp_path, engine: str, inputs: list[str], lines: int, *options: str) -> None:
    """`seedmap map` on the CPU and on the OpenCL device (two workers, several batches; `options` on both): the
    same SAM, byte for byte, nothing on stderr but seedmap's lines, the steps left on the CPU said once."""
    outs = {}
    for dev in ["cpu", "opencl"]:
        out = tmp_path / f"{dev}.sam"
        r = subprocess.run([sys.executable, "-m", "seedmap", "map", "--engine", engine, "--device", dev, "-t", "2",
                            "--batch-size", "9", *options, "-o", str(out), *inputs], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert all(line.startswith("[seedmap] ") for line in r.stderr.splitlines()), r.stderr
        outs[dev] = sam_body(out)
        if dev == "opencl":
            assert r.stderr.count("the windows' verification and the traceback (CIGAR, MD) run on") == 1, r.stderr
            assert "mapping on opencl:" in r.stderr and "2 worker threads" in r.stderr, r.stderr
            assert ("seed + filter (neighborhood engine" in r.stderr) == (engine == "neighborhood"), r.stderr
            assert ("bulk verification of the candidates (kmer engine" in r.stderr) == (engine == "kmer"), r.stderr
            assert r.stderr.count("reads longer than 256 bp are aligned on the CPU") <= 1, r.stderr
    assert outs["cpu"] == outs["opencl"]
    assert outs["cpu"].count(b"\n") >= lines


def write_fasta(path, reads: list[np.ndarray], suffix: str = "") -> str:
    path.write_text("".join(f">r{i}{suffix}\n" + "".join("ACGTN"[c] for c in r) + "\n" for i, r in enumerate(reads)))
    return str(path)


def genome(rng) -> list[np.ndarray]:
    seqs = [random_genome(rng, 6000), random_genome(rng, 1500)]
    seqs[0][4000:4100] = seqs[0][1000:1100]  # a repeat: reads with two locations
    return seqs


@pytest.mark.parametrize("engine,options", [("neighborhood", ()), ("neighborhood", ("--filter", "ph", "--fe", "1")),
                                            ("kmer", ()), ("kmer", ("--gpu-verify", "banded")), ("fm", ())])
@pytest.mark.usefixtures("opencl_device")  # (skipped where the device builds no kernel)
def test_map_opencl_same_sam_as_cpu(tmp_path, engine, options):
    """Every engine (the neighborhood engine's seed + filter on the device, bs and ph filters; the k-mer engine's
    bulk verification on the device, both kernels; every engine's traceback on the device)."""
    rng = np.random.default_rng(2)
    seqs = genome(rng)
    ref = write_fasta(tmp_path / "ref.fa", seqs)
    reads = sample_reads(rng, seqs, 40, (60, 300), 4)  # some over 256 bp: verified on the CPU
    map_both(tmp_path, engine, [ref, write_fasta(tmp_path / "reads.fa", reads)], 41, *options)


@pytest.mark.usefixtures("opencl_device")  # (skipped where the device builds no kernel)
def test_map_pairs_opencl_same_sam_as_cpu(tmp_path):
    """Paired reads: both mates' windows verified on the device (insert size, rescue, pairing on the CPU)."""
    rng = np.random.default_rng(4)
    seqs = genome(rng)
    ref = write_fasta(tmp_path / "ref.fa", seqs)
    starts = rng.integers(0, 5600, 20)
    frags = [seqs[0][s:s + 300] for s in starts]
    mate1 = [mutate(rng, f[:90], 2) for f in frags]
    mate2 = [mutate(rng, COMP[f[-90:][::-1]], 2) for f in frags]
    map_both(tmp_path, "kmer", [ref, write_fasta(tmp_path / "r1.fa", mate1, "/1"),
                                write_fasta(tmp_path / "r2.fa", mate2, "/2")], 40)
