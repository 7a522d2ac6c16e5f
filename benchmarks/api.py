#!/usr/bin/env python3
"""The Python API's `Index.map_many` against `seedmap map` on the same reads and stored index: wall seconds of
the whole process (start, imports, index, warm-up, mapping; the command line's output too) and of the mapping
alone (the command line's own "s mapping" figure, writing included; map_many's second call, its kernels loaded),
best of --repeat, and their ratio (goal: map_many within 1.2x of the command line); and CPU seconds (the whole
processes, to the end of the first map_many; map_many's second call alone): on a shared machine, wall times
vary with its load, CPU seconds much less. The record counts are checked to be the same (tests/test_api.py
checks the records).

    python benchmarks/api.py                                   # examples/ (300 kbp, 5,000 reads)
    python benchmarks/api.py --mbp 20 --reads 200000 --work /tmp/api-bench   # a synthetic 20 Mbp genome

With --mbp the genome is benchmarks/synthetic_genome.py's (--seed 7) and the reads genome_scale.py's
simulate_reads. Kernels are compiled (or loaded) by an untimed run first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import DEFAULT_WORK, markdown_table  # noqa: E402

BENCH = Path(__file__).resolve().parent
EXAMPLES = BENCH.parent / "examples"

# (label, the command line's options, map_many's keywords)
RUNS = (("all, e 0.05", [], {}), ("--best -e 4", ["-e", "4", "--best"], {"e": 4, "best": True}))

API_RUN = """
import json, sys, time
t0 = time.perf_counter()
import seedmap
ix = seedmap.Index(sys.argv[1])
kw = json.loads(sys.argv[3])
m = ix.map_many(sys.argv[2], **kw)
t1, c0 = time.perf_counter(), time.process_time()
records = len(m)
del m
c1 = time.process_time()
t2 = time.perf_counter()
again = ix.map_many(sys.argv[2], **kw)
t3 = time.perf_counter()
print(json.dumps({"first": t1 - t0, "first_cpu": c0, "mapping": t3 - t2, "cpu": time.process_time() - c1,
                  "records": records, "same": len(again) == records}))
"""


def _inputs(args: argparse.Namespace, work: Path) -> tuple[Path, Path]:
    if not args.mbp:
        shutil.copy(EXAMPLES / "ref.fa.gz", work / "ref.fa.gz")
        return work / "ref.fa.gz", EXAMPLES / "reads.fq.gz"
    fasta, reads = work / f"g{args.mbp}.fa", work / f"g{args.mbp}-{args.reads}.fq"
    if not fasta.exists():
        subprocess.run([sys.executable, str(BENCH / "synthetic_genome.py"), str(args.mbp), str(fasta), "--seed", "7"],
                       check=True)
    if not reads.exists():
        from genome_scale import simulate_reads

        simulate_reads(fasta, reads, args.reads, 7)
    return fasta, reads


def _cli(fasta: Path, reads: Path, out: Path, opts: list[str]) -> tuple[float, float, float]:
    """(process wall seconds, the run's own mapping seconds, the process's CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "seedmap", "map", str(fasta), str(reads), "-o", str(out), *opts],
                       capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    mapping = float(re.search(r"\(([\d.]+) s mapping", p.stderr).group(1))
    return wall, mapping, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _api(fasta: Path, reads: Path, kw: dict) -> dict:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", API_RUN, str(fasta), str(reads), json.dumps(kw)], capture_output=True,
                       text=True, check=True)
    out = json.loads(p.stdout.splitlines()[-1])
    out["wall"] = time.perf_counter() - t0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mbp", type=int, default=0, help="a synthetic genome of this many Mbp (default: examples/)")
    ap.add_argument("--reads", type=int, default=200_000, help="simulated reads (with --mbp)")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK / "api")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    fasta, reads = _inputs(args, args.work)
    subprocess.run([sys.executable, "-m", "seedmap", "index", str(fasta)], check=True, capture_output=True)
    rows = []
    for threads in [int(t) for t in args.threads.split(",")]:
        for label, opts, kw in RUNS:
            opts, kw = [*opts, "-t", str(threads)], {**kw, "threads": threads}
            out = args.work / "cli.sam"
            _cli(fasta, reads, out, opts)  # compiles or loads the kernels: untimed
            _api(fasta, reads, kw)
            cli = [_cli(fasta, reads, out, opts) for _ in range(args.repeat)]
            api = [_api(fasta, reads, kw) for _ in range(args.repeat)]
            records = sum(1 for line in out.read_text().splitlines() if not line.startswith("@"))
            assert all(a["records"] == records and a["same"] for a in api), (records, api)
            c_wall, c_map, c_cpu = (min(c[i] for c in cli) for i in range(3))
            a_wall, a_map, a_cpu, a_all = (min(a[k] for a in api) for k in ("first", "mapping", "cpu", "first_cpu"))
            rows.append([label, str(threads), f"{records:,}", f"{c_wall:.2f}", f"{a_wall:.2f}",
                         f"{a_wall / c_wall:.2f}x", f"{c_map:.2f}", f"{a_map:.2f}", f"{a_map / c_map:.2f}x",
                         f"{c_cpu:.2f}", f"{a_all:.2f}", f"{a_cpu:.2f}"])
    print(f"{fasta.name}, {reads.name}; best of {args.repeat}; python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs")
    print(markdown_table(["run", "threads", "records", "CLI process s", "API process s", "ratio",
                          "CLI mapping s", "map_many s", "ratio", "CLI process CPU s", "API process CPU s",
                          "map_many CPU s"], rows))


if __name__ == "__main__":
    main()
