#!/usr/bin/env python3
"""Peak memory of the index build steps, in bytes per reference base (Linux only).

Each step runs in a child process of its own. The child compiles (or loads) the numba kernels on a tiny
reference first, resets the kernel's peak-RSS mark (/proc/self/clear_refs), notes its RSS, runs the step
once and reports the rise of the peak above that RSS (`extra`) and the peak itself (`peak`), both per
base. The steps:

  fasta  read_fasta(path)                      (extra = everything read_fasta holds at its peak)
  kmer   kmer.build(ref, k)                    (the reference is already loaded: not in `extra`)
  fm     fm.build(ref, r)                      (likewise)

  python benchmarks/synthetic_genome.py 100 /tmp/synth100.fa --seed 3
  PYTHONPATH=src python benchmarks/build_memory.py /tmp/synth100.fa [--steps fasta kmer fm] [-k 12] [-r 16]
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = ("fasta", "kmer", "fm")


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def child(step: str, fasta: str, k: int, r: int) -> dict:
    from seedmap.index import fm, kmer
    from seedmap.io.reference import read_fasta

    with tempfile.TemporaryDirectory() as tmp:  # compile or load every kernel first
        tiny = Path(tmp) / "tiny.fa"
        tiny.write_text(">a\nACGTNACGTTGCA\n>b\nGGNNA\n")
        small = read_fasta(tiny)
        kmer.build(small, k)
        fm.build(small, r)
    ref = None if step == "fasta" else read_fasta(fasta)
    gc.collect()
    _reset_peak()
    base = _status_kib("VmRSS")
    start = time.perf_counter()
    if step == "fasta":
        ref = read_fasta(fasta)
        size = ref.packed.nbytes + ref.nmask.nbytes
    elif step == "kmer":
        ix = kmer.build(ref, k)
        size = sum(a.nbytes for a in ix.arrays().values())
    else:
        ix = fm.build(ref, r)
        size = sum(a.nbytes for a in ix.arrays().values())
    wall = time.perf_counter() - start
    peak = _status_kib("VmHWM")
    n = ref.total
    return {"step": step, "bases": n, "wall_s": round(wall, 2), "extra_B_per_base": round((peak - base) * 1024 / n, 3),
            "peak_B_per_base": round(peak * 1024 / n, 3), "result_B_per_base": round(size / n, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fasta")
    ap.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS))
    ap.add_argument("-k", type=int, default=12, help="k-mer length (default %(default)s)")
    ap.add_argument("-r", type=int, default=16, help="FM SA sample rate (default %(default)s)")
    ap.add_argument("--child", choices=STEPS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.fasta, args.k, args.r)))
        return
    print(f"{'step':6} {'bases':>12} {'wall s':>7} {'extra B/base':>13} {'peak B/base':>12} {'result B/base':>14}")
    for step in args.steps:
        out = subprocess.run([sys.executable, __file__, args.fasta, "--child", step, "-k", str(args.k),
                              "-r", str(args.r)], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{step} failed:\n{out.stderr}")
        d = json.loads(out.stdout.splitlines()[-1])
        print(f"{step:6} {d['bases']:>12} {d['wall_s']:>7} {d['extra_B_per_base']:>13} {d['peak_B_per_base']:>12} "
              f"{d['result_B_per_base']:>14}")


if __name__ == "__main__":
    main()
