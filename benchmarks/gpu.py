"""GPU backend throughput, one call, one table: (a) bulk verification (alignments/s, kernel time with the
reads, reference and candidates already on the device) for 50 bp / e = 4 and 100 bp / e = 5, both
kernels, beside Nouri's K20 figure and the CPU kernel; (b) the MAROSE seed + filter (windows/s and
neighborhoods/s: the unique neighborhoods of the SeedBlocks searched) beside Tran's GTX 480 figures, and
the verify stage on its merged windows (locations, CPU against GPU); (c) end-to-end reads/s of `seedmap
map --device cpu` and `--device cuda` on the E. coli benchmark, in the same run, with the SAM records
compared, and each run's stage timings (-v); --gpu-batch-sizes 12500,50000 adds a GPU run per batch size
(-t N gives the GPU N worker threads: tune both in one call); --engines neighborhood,kmer,fm runs each engine
end to end; (d) the FM engine's search (scheme, locates, dedupe: queries/s, CPU against GPU, same windows)
on --fm-reads reads (0: skipped; the index of the whole reference is built in memory).

    python benchmarks/gpu.py [--reference benchmarks/work/ecoli.fa] [--reads benchmarks/work/reads_n100000_l100_s42.fq]
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu.py --tiny     # the simulator: checks it runs, numbers mean nothing

Every GPU result is compared with its CPU twin (a mismatch stops the run). Kernel timings follow a
warm-up call (compilation excluded); the best of --repeat runs is reported.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchutil import best_of  # noqa: E402
from filter_case import filter_work, sample_queries  # noqa: E402

NOURI_K20 = 40e6 / 0.62852  # 40 M alignments (50 bp, e = 4) in 628.52 ms, kernel only
TRAN_GTX480 = "BS 1e10-1e12, PH 1e11-1e12, mflBPR up to 3.7e9 neighborhoods/s (Tran thesis, u = 4)"


def launch(kernel: object, ncand: int, args: list) -> None:
    from numba import cuda

    from seedmap.backends.cuda import verify_kernels as vk

    if kernel is vk.banded_kernel:
        kernel[(ncand + vk.SLOTS - 1) // vk.SLOTS, (vk.LANES, vk.SLOTS)](*args)
    else:
        kernel[(ncand + vk.THREADS - 1) // vk.THREADS, vk.THREADS](*args)
    cuda.synchronize()


def verification_rows(ncand: int, repeat: int, genome_len: int) -> list[list[str]]:
    from bulk_verify import make_setting
    from numba import cuda

    from seedmap.backends.cuda import verify_kernels as vk
    from seedmap.io.reference import Reference
    from seedmap.verify.bulk import bulk_distances

    rng = np.random.default_rng(1)
    seqs = [rng.integers(0, 4, n).astype(np.uint8) for n in (genome_len // 2, genome_len // 4, genome_len // 4)]
    ref = Reference.from_codes([f"chr{i}" for i in range(3)], seqs)
    genome = np.concatenate(seqs)
    rows = []
    for m, e in [(50, 4), (100, 5)]:
        args = make_setting(rng, ref, genome, ncand, m, e)
        want = bulk_distances(*args)
        t_cpu = best_of(lambda a=args: bulk_distances(*a), repeat)
        rows.append([f"{m} bp, e={e}", "CPU bulk (banded bit-vector)", f"{ncand:,}", f"{t_cpu * 1e3:.2f}",
                     f"{ncand / t_cpu / 1e6:.2f} M", ""])
        dev = [cuda.to_device(np.ascontiguousarray(x)) for x in args[:6]]  # reads and windows
        d_packed, d_nmask = cuda.to_device(ref.packed), cuda.to_device(ref.nmask)
        for name, kernel in [(vk.BITVECTOR, vk.bitvector_kernel), (vk.BANDED, vk.banded_kernel)]:
            d_out = cuda.device_array(ncand, dtype=np.int32)
            secs = best_of(partial(launch, kernel, ncand, [*dev, d_packed, d_nmask, d_out]), repeat)
            if not np.array_equal(d_out.copy_to_host(), want):
                raise SystemExit(f"GPU {name} kernel disagrees with the CPU kernel at m={m}, e={e}")
            # the whole call as the k-mer engine makes it: candidates sent, results fetched
            ver = vk.DeviceVerifier(ref.packed, ref.nmask, method=name)
            t_call = best_of(lambda v=ver, a=args: v(*a), repeat)
            nouri = f"Nouri K20: {NOURI_K20 / 1e6:.0f} M/s" if (m, e) == (50, 4) else ""
            rows.append([f"{m} bp, e={e}", f"GPU {name}", f"{ncand:,}", f"{secs * 1e3:.2f}",
                         f"{ncand / secs / 1e6:.2f} M ({ncand / t_call / 1e6:.2f} M with transfers)", nouri])
    return rows


def filter_rows(ref_path: Path, nreads: int, repeat: int) -> list[list[str]]:
    from seedmap.backends.cuda.engines import CudaNeighborhoodEngine
    from seedmap.engines.neighborhood import NeighborhoodEngine
    from seedmap.index import neighborhood
    from seedmap.io.reference import read_fasta

    ref = read_fasta(str(ref_path))
    codes = ref.codes()
    rows = []
    for u, l, fe, m, e in [(10, 16, 0, 100, 5), (10, 6, 1, 50, 3)]:
        ix = neighborhood.build(ref, u, l)
        qcodes, qoff, qerr = sample_queries(codes, nreads, m, e, np.random.default_rng(2))
        nwin, nbs = filter_work(ix, qcodes, m, e, 2 if fe else 0, fe)
        plan = {"windows": 2 if fe else 0, "fe": fe}
        cpu = NeighborhoodEngine(ix, ref.starts, **plan)
        gpu = CudaNeighborhoodEngine(ix, ref.starts, **plan)
        want = cpu.candidate_windows(qcodes, qoff, qerr)
        got = gpu.candidate_windows(qcodes, qoff, qerr)
        if not (np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])):
            raise SystemExit(f"GPU seed + filter disagrees with the CPU at u={u}, l={l}, fe={fe}")
        for name, eng in [("CPU", cpu), ("GPU", gpu)]:
            secs = best_of(partial(eng.candidate_windows, qcodes, qoff, qerr), repeat)
            rows.append([f"u={u} l={l} fe={fe}, {m} bp e={e}", name, f"{nwin:,} windows", f"{secs * 1e3:.2f}",
                         f"{nwin / secs / 1e6:.2f} M windows/s, {nbs / secs:.3g} neighborhoods/s",
                         TRAN_GTX480 if name == "GPU" else ""])
        rows += location_rows(ref, f"u={u} l={l} fe={fe}, {m} bp e={e}", qcodes, qoff, qerr, *want, repeat)
    return rows


def fm_rows(ref_path: Path, nreads: int, repeat: int) -> list[list[str]]:
    """The FM engine's candidate search on the CPU (all threads) and the GPU, same windows required."""
    from seedmap.backends.cuda.fm_engine import CudaFmEngine
    from seedmap.engines.fm import FmEngine
    from seedmap.index import fm
    from seedmap.io.reference import read_fasta

    ref = read_fasta(str(ref_path))
    codes = ref.codes()
    t0 = time.perf_counter()
    ix = fm.build(ref)
    print(f"fm index built in {time.perf_counter() - t0:.1f} s", flush=True)
    rows = []
    for m, e in [(100, 5), (100, 3)]:
        qcodes, qoff, qerr = sample_queries(codes, nreads, m, e, np.random.default_rng(4), substitutions=e)
        cpu, gpu = FmEngine(ix, ref.starts), CudaFmEngine(ix, ref.starts)
        want, got = cpu.candidate_windows(qcodes, qoff, qerr), gpu.candidate_windows(qcodes, qoff, qerr)
        if not (np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])):
            raise SystemExit(f"GPU FM search disagrees with the CPU at {m} bp e={e}")
        for name, eng in [("CPU", cpu), ("GPU", gpu)]:
            secs = best_of(partial(eng.candidate_windows, qcodes, qoff, qerr), repeat)
            rows.append([f"fm search, {m} bp e={e}", name, f"{2 * nreads:,} queries", f"{secs * 1e3:.2f}",
                         f"{2 * nreads / secs / 1e6:.3f} M queries/s, {want[0].size:,} windows", ""])
    return rows


def location_rows(ref: object, setting: str, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
                  win_q: np.ndarray, win: np.ndarray, repeat: int) -> list[list[str]]:
    """The verify stage on those merged windows: verify.windows.verify (every CPU thread) against the GPU
    locator, whole calls (windows sent, locations fetched; the reads already on the device)."""
    from seedmap.backends.cuda.locations import DeviceLocator
    from seedmap.backends.cuda.verify_kernels import DeviceVerifier
    from seedmap.verify import windows as cpu

    locate = DeviceLocator(DeviceVerifier(ref.packed, ref.nmask))
    args = (qcodes, qoff, qerr, win_q, win, ref.packed, ref.nmask)
    want, got = cpu.verify(*args), locate(*args)
    if not all(np.array_equal(a, b) for a, b in zip(want, got, strict=True)):
        raise SystemExit(f"GPU window locations disagree with the CPU at {setting}")
    rows = []
    for name, fn in [("CPU verify (locations)", cpu.verify), ("GPU locator (with transfers)", locate)]:
        secs = best_of(partial(fn, *args), repeat)
        rows.append([setting, name, f"{win_q.size:,} windows", f"{secs * 1e3:.2f}",
                     f"{win_q.size / secs / 1e6:.2f} M windows/s, {want[0].size:,} locations", ""])
    return rows


def map_run(ref_path: Path, reads: Path, dev: str, threads: int, out: Path, index: Path | None,
            batch_size: int | None = None, engine: str = "neighborhood") -> str:
    """stderr of one `seedmap map -v` run."""
    cmd = [sys.executable, "-m", "seedmap", "map", "-v", "-t", str(threads), "--device", dev, "-o", str(out),
           "--engine", engine]
    cmd += ["--index", str(index)] if index else []
    cmd += ["--batch-size", str(batch_size)] if batch_size else []
    r = subprocess.run([*cmd, str(ref_path), str(reads)], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"seedmap map --device {dev} failed: {r.stderr.strip()}")
    return r.stderr


def stage_block(stderr: str) -> list[str]:
    """The `-v` stage timing lines of a run's stderr."""
    lines = stderr.splitlines()
    first = next((i for i, x in enumerate(lines) if "stage timings" in x), len(lines))
    return [x.removeprefix("[seedmap] ") for x in lines[first:] if "workers busy" not in x][:20]


def end_to_end_rows(ref_path: Path, reads: Path, threads: int, work: Path, index: Path | None,
                    stages: dict[str, list[str]], gpu_batches: list[int | None],
                    engine: str = "neighborhood") -> list[list[str]]:
    """The CPU run, then a GPU run per batch size (None: the default), each GPU run's SAM compared with the
    CPU's; stages gets each run's -v block. `index` (a stored index) is used by the neighborhood engine;
    the others build theirs in memory."""
    index = index if engine == "neighborhood" else None
    warm = work / "warmup.fq"  # the first 1,000 reads: compilation stays out of the timed runs
    with reads.open() as src, warm.open("w") as dst:
        dst.writelines(line for _, line in zip(range(4000), src, strict=False))
    rows, cpu_body = [], b""
    for dev, batch in [("cpu", None)] + [("cuda", b) for b in gpu_batches]:
        out = work / f"gpu_bench_{dev}.sam"
        map_run(ref_path, warm, dev, threads, out, index, batch, engine)
        err = map_run(ref_path, reads, dev, threads, out, index, batch, engine)
        label = f"seedmap --engine {engine} --device {dev} -t {threads}" + (f" --batch-size {batch}" if batch else "")
        stages[label] = stage_block(err)
        rate = re.search(r"; (\d+) reads/s \(([\d.]+) s mapping", err)
        body = b"".join(x for x in out.read_bytes().splitlines(True) if not x.startswith(b"@PG"))
        if dev == "cpu":
            cpu_body, same = body, ""
        else:
            same = "SAM identical to the CPU's" if body == cpu_body else "SAM DIFFERS from the CPU's"
        rows.append([reads.name, label, "", rate.group(2) + " s" if rate else "?",
                     f"{rate.group(1)} reads/s" if rate else "?", same])
    return rows


def tiny_inputs(work: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(3)
    g = rng.integers(0, 4, 30_000)
    ref = work / "tiny.fa"
    ref.write_text(">t\n" + "".join("ACGT"[c] for c in g) + "\n")
    reads = work / "tiny.fq"
    with reads.open("w") as fh:
        for i in range(24):
            p = int(rng.integers(0, g.size - 100))
            fh.write(f"@r{i}\n" + "".join("ACGT"[c] for c in g[p:p + 100]) + "\n+\n" + "I" * 100 + "\n")
    return ref, reads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=HERE / "work" / "ecoli.fa")
    ap.add_argument("--reads", type=Path, default=HERE / "work" / "reads_n100000_l100_s42.fq")
    ap.add_argument("--index", type=Path, help="neighborhood index of the reference (default: build in memory)")
    ap.add_argument("--candidates", type=int, default=4_000_000, help="alignments per verification setting")
    ap.add_argument("--filter-reads", type=int, default=200_000, help="reads for the seed + filter timing")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="CPU threads for the CPU runs")
    ap.add_argument("--gpu-batch-sizes", default="",
                    help="comma-separated --batch-size values, one end-to-end GPU run each (default: seedmap's)")
    ap.add_argument("--engines", default="neighborhood", help="comma-separated engines to run end to end")
    ap.add_argument("--only-e2e", action="store_true", help="only the end-to-end runs (no kernel or FM rows)")
    ap.add_argument("--fm-reads", type=int, default=0, help="reads for the FM search timing (0: skip)")
    ap.add_argument("--tiny", action="store_true", help="tiny inputs (runs under NUMBA_ENABLE_CUDASIM=1)")
    opts = ap.parse_args()
    import warnings

    import numba

    from seedmap.spread import set_share

    warnings.filterwarnings("ignore", category=RuntimeWarning)  # uint64 wrap-around under the simulator
    set_share(opts.threads)  # the CPU kernels' threads
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if opts.tiny:
            opts.reference, opts.reads = tiny_inputs(work)
            opts.candidates, opts.filter_reads, opts.repeat, genome_len = 8, 8, 1, 200_000
            opts.fm_reads = min(opts.fm_reads, 4)
        else:
            genome_len = 20_000_000
        sim = " (CUDA SIMULATOR: numbers are meaningless)" if numba.config.ENABLE_CUDASIM else ""
        print(f"device: {gpu_name()}{sim}; CPU threads: {opts.threads}; best of {opts.repeat}")
        rows = [] if opts.only_e2e else verification_rows(opts.candidates, opts.repeat, genome_len)
        rows += [] if opts.only_e2e else filter_rows(opts.reference, opts.filter_reads, opts.repeat)
        if opts.fm_reads and not opts.only_e2e:
            rows += fm_rows(opts.reference, opts.fm_reads, opts.repeat)
        stages: dict[str, list[str]] = {}
        gpu_batches = [int(b) for b in opts.gpu_batch_sizes.split(",") if b] or [None]
        for engine in opts.engines.split(","):
            rows += end_to_end_rows(opts.reference, opts.reads, opts.threads, work, opts.index, stages, gpu_batches,
                                    engine)
    print("\n| setting | kernel / run | work | time (ms, e2e: s) | rate | reference figure |")
    print("|---|---|---:|---:|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    for label, lines in stages.items():
        print(f"\n{label}, " + "\n".join(lines))


def gpu_name() -> str:
    from numba import cuda

    try:
        return str(cuda.gpus[0].name)
    except Exception as exc:  # no GPU: say so, the run then fails at the first kernel
        return f"no GPU ({exc})"


if __name__ == "__main__":
    main()
