"""OpenCL backend throughput on this machine's OpenCL device (PoCL's CPU device where nothing else is
installed), one call, four tables: (a) verifications/s of the window kernel (backends/opencl/locate.cl: the
locations of reads in merged candidate windows, one work-item per window) beside the numba CPU kernel
(verify/windows.py) on the same windows, and of the k-mer engine's bulk verification (backends/opencl/bulk.cl,
bit-vector and banded kernels, one candidate each) beside the numba CPU kernel (verify/bulk.py) on the same
candidates, for 50 bp / e = 4 and 100 bp / e = 5, and Nouri's K20 figure for bulk verification; (b) the MAROSE
seed + filter (backends/opencl/seed_filter.cl through the neighborhood engine: windows/s and neighborhoods/s,
the unique neighborhoods of the SeedBlocks searched) beside the numba CPU engine on the same reads, whole
candidate_windows calls (the merge, on the CPU, in both), and Tran's GTX 480 figures; (c) the FM engine's
search (backends/opencl/fm_scheme.cl through OpenClFmEngine: queries/s of the search pass alone, and of whole
candidate_windows calls) beside the numba CPU engine on the same reads; (d) end-to-end reads/s of `seedmap map
--device opencl` against `--device cpu` on a random genome with simulated reads, per engine, the SAM records
compared.

    python benchmarks/opencl.py [--windows 200000] [--candidates 200000] [--filter-reads 50000] [--fm-reads 10000]
                                [--reads 20000]
    python benchmarks/opencl.py --windows 0 --candidates 0 --filter-reads 0 --fm-reads 0 --reference ecoli.fa \
                                --reads 100000   # issue 37's check

Each kernel timing follows a warm-up call (the build, numba's compilation and the reference copy
excluded); the best of --repeat runs is reported. Every OpenCL result is compared with the CPU's.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from seedmap.backends.opencl import device
from seedmap.backends.opencl.bulk import BANDED, BITVECTOR, OpenClBulkVerifier
from seedmap.backends.opencl.fm_engine import OpenClFmEngine
from seedmap.backends.opencl.locations import OpenClLocator
from seedmap.backends.opencl.neighborhood import OpenClNeighborhoodEngine
from seedmap.backends.opencl.program import OpenClDevice
from seedmap.engines.fm import FmEngine
from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.engines.neighborhood_ph import PerfectHashEngine
from seedmap.index import fm, neighborhood
from seedmap.io.reference import Reference, read_fasta
from seedmap.verify import windows
from seedmap.verify.bulk import bulk_distances, window_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import best_of  # noqa: E402
from filter_case import filter_work, sample_queries  # noqa: E402

COMP = np.array([3, 2, 1, 0, 4], dtype=np.uint8)
NOURI_K20 = 40e6 / 0.62852  # 40 M alignments (50 bp, e = 4) in 628.52 ms, kernel only (bulk verification)
TRAN_GTX480 = "BS 1e10-1e12, PH 1e11-1e12 neighborhoods/s (Tran thesis, u = 4)"


def windows_of(rng: np.random.Generator, genome: np.ndarray, n: int, m: int, e: int) -> tuple:
    """n reads of m bp with up to e substitutions, each with one merged window around its origin (as the
    engines merge a read's candidates: the read plus e on each side, and a little slack)."""
    pos = rng.integers(e + 8, genome.size - m - e - 8, n)
    reads = genome[pos[:, None] + np.arange(m)[None, :]].copy()
    for _ in range(e):
        hit = rng.random(n) < 0.5
        reads[hit, rng.integers(0, m, int(hit.sum()))] = rng.integers(0, 4, int(hit.sum()))
    qs = np.stack([reads, reads[:, ::-1]], axis=1).reshape(-1)  # each read and a second strand, as in a batch
    qoff = np.arange(2 * n + 1, dtype=np.int64) * m
    lo, hi = pos - e - 8, pos + m + e + 8
    win = np.stack([lo, hi, lo, hi], axis=1).astype(np.int64)
    return qs.astype(np.uint8), qoff, np.full(n, e, dtype=np.int64), 2 * np.arange(n, dtype=np.int64), win


def kernel_rates(args: argparse.Namespace) -> list[list[str]]:
    rng = np.random.default_rng(1)
    genome = rng.integers(0, 4, 4_000_000).astype(np.uint8)
    ref = Reference.from_codes(["g"], [genome])
    dev = OpenClDevice(device.pick(args.device))
    print(f"OpenCL device: {dev.name}", flush=True)
    locate = OpenClLocator(dev, ref)
    rows = []
    for m, e in ((50, 4), (100, 5)):
        case = windows_of(rng, genome, args.windows, m, e)
        want = windows.verify(*case, ref.packed, ref.nmask)
        got = locate(*case, ref.packed, ref.nmask)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True)), "OpenCL != CPU"
        t_cpu = best_of(lambda c=case: windows.verify(*c, ref.packed, ref.nmask), args.repeat)
        t_cl = best_of(lambda c=case: locate(*c, ref.packed, ref.nmask), args.repeat)
        n = args.windows
        rows.append([f"{m} bp, e = {e}", f"{n:,}", f"{n / t_cl:,.0f}", f"{n / t_cpu:,.0f}", f"{t_cpu / t_cl:.2f}",
                     f"{NOURI_K20:,.0f}" if (m, e) == (50, 4) else ""])
    return rows


def bulk_rates(args: argparse.Namespace) -> list[list[str]]:
    """The bulk verification of --candidates candidates, one per read on the read's own diagonal (windows_of's
    reads: up to e substitutions), numba CPU kernel against each OpenCL kernel."""
    rng = np.random.default_rng(4)
    genome = rng.integers(0, 4, 4_000_000).astype(np.uint8)
    ref = Reference.from_codes(["g"], [genome])
    dev = OpenClDevice(device.pick(args.device))
    rows = []
    for m, e in ((50, 4), (100, 5)):
        qcodes, qoff, qerr, win_q, win = windows_of(rng, genome, args.candidates, m, e)
        cands = (win_q, *window_of(win[:, 0] + e + 8, m, e, 0, genome.size))
        case = (qcodes, qoff, qerr, *cands, ref.packed, ref.nmask)
        want = bulk_distances(*case)
        t_cpu = best_of(lambda c=case: bulk_distances(*c), args.repeat)
        for method in (BITVECTOR, BANDED):
            verify = OpenClBulkVerifier(dev, ref, method)
            assert np.array_equal(verify(*case), want), "OpenCL != CPU"
            t_cl = best_of(lambda c=case, v=verify: v(*c), args.repeat)
            n = args.candidates
            rows.append([f"bulk ({method}), {m} bp, e = {e}", f"{n:,}", f"{n / t_cl:,.0f}", f"{n / t_cpu:,.0f}",
                         f"{t_cpu / t_cl:.2f}", f"{NOURI_K20:,.0f}" if (m, e) == (50, 4) else ""])
    return rows


def filter_rates(args: argparse.Namespace) -> list[list[str]]:
    """The seed + filter stage (candidate_windows, no bulk verification) of --filter-reads reads on a random
    genome of --genome-bases, numba CPU engine against the OpenCL one, for the bs filter (u = 10, l = 16,
    100 bp, e = 5), and the bs and ph filters with fe = 1 (u = 10, l = 6, 50 bp, e = 3, two windows)."""
    rng = np.random.default_rng(3)
    genome = rng.integers(0, 4, args.genome_bases).astype(np.uint8)
    ref = Reference.from_codes(["g"], [genome])
    dev = OpenClDevice(device.pick(args.device))
    rows = []
    for u, l, fe, m, e, name in [(10, 16, 0, 100, 5, "bs"), (10, 6, 1, 50, 3, "bs"), (10, 6, 1, 50, 3, "ph")]:
        ix = neighborhood.build(ref, u, l, ph=name == "ph")
        qcodes, qoff, qerr = sample_queries(genome, args.filter_reads, m, e, np.random.default_rng(2))
        plan = {"windows": 2 if fe else 0, "fe": fe}
        nwin, nbs = filter_work(ix, qcodes, m, e, plan["windows"], fe)
        cpu = (PerfectHashEngine if name == "ph" else NeighborhoodEngine)(ix, ref.starts, **plan)
        ocl = OpenClNeighborhoodEngine(dev, ix, ref.starts, ph=ix.ph, **plan)
        want, got = cpu.candidate_windows(qcodes, qoff, qerr), ocl.candidate_windows(qcodes, qoff, qerr)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True)), "OpenCL != CPU"
        batch = (qcodes, qoff, qerr)
        t_cpu, t_cl = (best_of(lambda x=x, b=batch: x.candidate_windows(*b), args.repeat) for x in (cpu, ocl))
        rows.append([f"{name}, u={u} l={l} fe={fe}, {m} bp e={e}", f"{nwin:,}",
                     f"{nwin / t_cl / 1e6:.2f} M, {nbs / t_cl:.3g}", f"{nwin / t_cpu / 1e6:.2f} M, {nbs / t_cpu:.3g}",
                     f"{t_cpu / t_cl:.2f}", TRAN_GTX480 if name == "bs" and fe == 0 else ""])
    return rows


def fm_rates(args: argparse.Namespace) -> list[list[str]]:
    """The FM engine's search of --fm-reads reads (both strands) on a random genome of --genome-bases: the
    search pass alone (_count: every query's accepted strings and candidates) and whole candidate_windows
    calls (the locates and sort on the device, the merge on the CPU; no bulk verification), numba CPU engine
    against the OpenCL one, for 100 bp reads with up to 3 substitutions at e = 3 and e = 5."""
    rng = np.random.default_rng(5)
    genome = rng.integers(0, 4, args.genome_bases).astype(np.uint8)
    ref = Reference.from_codes(["g"], [genome])
    ix = fm.build(ref)
    dev = OpenClDevice(device.pick(args.device))
    rows = []
    for e in (3, 5):
        batch = sample_queries(genome, args.fm_reads, 100, e, np.random.default_rng(6), substitutions=3)
        cpu, ocl = FmEngine(ix, ref.starts), OpenClFmEngine(dev, ix, ref.starts)
        want, got = cpu.candidate_windows(*batch), ocl.candidate_windows(*batch)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True)), "OpenCL != CPU"
        nq = batch[1].size - 1
        t_cpu, t_cl = (best_of(lambda x=x, b=batch: x._count(*b), args.repeat) for x in (cpu, ocl))
        w_cpu, w_cl = (best_of(lambda x=x, b=batch: x.candidate_windows(*b), args.repeat) for x in (cpu, ocl))
        rows.append([f"100 bp, e = {e}", f"{nq:,}", f"{nq / t_cl:,.0f}", f"{nq / t_cpu:,.0f}", f"{t_cpu / t_cl:.2f}",
                     f"{nq / w_cl:,.0f}", f"{nq / w_cpu:,.0f}"])
    return rows


def simulate(work: Path, args: argparse.Namespace) -> tuple[Path, Path]:
    """The reference (--reference, copied here: its index is written beside it; else a random genome with a
    repeat) and --reads 100 bp reads from it, 0-3 substitutions each, either strand."""
    rng = np.random.default_rng(7)
    ref = work / "ref.fa"
    if args.reference:
        shutil.copy(args.reference, ref)
        genome = read_fasta(ref).codes()
    else:
        genome = rng.integers(0, 4, args.genome_bases).astype(np.uint8)
        n = genome.size
        genome[n // 2:n // 2 + n // 50] = genome[n // 10:n // 10 + n // 50]  # a repeat: reads with two locations
        ref.write_text(">g\n" + "".join("ACGT"[c] for c in genome) + "\n")
    lines = []
    for i in range(args.reads):
        p = int(rng.integers(0, genome.size - 100))
        r = genome[p:p + 100].copy()
        r[rng.integers(0, 100, int(rng.integers(0, 4)))] = rng.integers(0, 4)
        if rng.random() < 0.5:
            r = COMP[r][::-1]
        lines.append(f"@r{i}\n" + "".join("ACGTN"[c] for c in r) + "\n+\n" + "I" * 100 + "\n")
    reads = work / "reads.fq"
    reads.write_text("".join(lines))
    return ref, reads


def end_to_end(args: argparse.Namespace) -> list[list[str]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ref, reads = simulate(work, args)
        for engine in args.engines.split(","):
            subprocess.run([sys.executable, "-m", "seedmap", "index", "--kind", engine, str(ref)], check=True,
                           capture_output=True)
            rates, bodies = {}, {}
            for dev in ("cpu", "opencl" if args.device is None else f"opencl:{args.device}"):
                out = work / f"{engine}.{dev}.sam"
                cmd = [sys.executable, "-m", "seedmap", "map", "--engine", engine, "--device", dev, "-t",
                       str(args.threads), "--batch-size", str(args.batch_size), "-o", str(out), str(ref), str(reads)]
                for _ in range(2):  # the first run compiles (numba, the OpenCL build): the second is timed
                    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
                rates[dev] = float(re.search(r"; (\d+) reads/s", r.stderr).group(1))
                bodies[dev] = [x for x in out.read_text().splitlines() if not x.startswith("@PG")]
            same = "yes" if len(set(map(tuple, bodies.values()))) == 1 else "NO"
            cpu, cl = rates.values()
            rows.append([engine, f"{cpu:,.0f}", f"{cl:,.0f}", f"{cl / cpu:.2f}", same])
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join("| " + " | ".join(r) + " |" for r in [header, ["---"] * len(header), *rows])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--windows", type=int, default=200_000, help="windows per kernel timing (0: skip)")
    ap.add_argument("--candidates", type=int, default=200_000, help="candidates per bulk timing (0: skip)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--filter-reads", type=int, default=50_000, help="reads per seed + filter timing (0: skip)")
    ap.add_argument("--fm-reads", type=int, default=10_000, help="reads per FM search timing (0: skip)")
    ap.add_argument("--reads", type=int, default=20_000, help="reads per end-to-end run (0: skip)")
    ap.add_argument("--genome-bases", type=int, default=1_000_000)
    ap.add_argument("--reference", help="map reads simulated from this FASTA instead of a random genome")
    ap.add_argument("--engines", default="neighborhood,kmer,fm")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=2500, help="reads per batch, both devices (one batch per "
                    "worker in flight at once: the default keeps every worker busy)")
    ap.add_argument("--device", type=int, default=None, help="opencl:N (default: the first GPU, else device 0)")
    args = ap.parse_args()
    if args.windows or args.candidates:
        rows = (kernel_rates(args) if args.windows else []) + (bulk_rates(args) if args.candidates else [])
        print(table(["windows / candidates", "n", "OpenCL verifications/s", "numba CPU verifications/s",
                     "OpenCL / CPU", "Nouri K20 (bulk, /s)"], rows), flush=True)
    if args.filter_reads:
        print()
        print(table(["seed + filter", "windows", "OpenCL windows/s, neighborhoods/s",
                     "numba CPU windows/s, neighborhoods/s", "OpenCL / CPU", "Tran GTX 480"], filter_rates(args)),
              flush=True)
    if args.fm_reads:
        print()
        print(table(["FM search", "queries", "OpenCL queries/s", "numba CPU queries/s", "OpenCL / CPU",
                     "OpenCL candidate_windows queries/s", "numba CPU candidate_windows queries/s"], fm_rates(args)),
              flush=True)
    if args.reads:
        print()
        print(table(["engine", "--device cpu reads/s", "--device opencl reads/s", "opencl / cpu", "same SAM"],
                    end_to_end(args)))


if __name__ == "__main__":
    main()
