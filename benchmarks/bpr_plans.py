"""Window plans on E. coli at e = 5: bs (e + 1 exact windows) against bpr plans with fewer, longer windows.

Each plan maps the same reads once (after a warm-up run that compiles the kernels); the SAM records of
every plan must equal bs's after sorting (the @PG line, which holds the command, is left out).

    python benchmarks/bpr_plans.py --reads benchmarks/work/reads_n100000_l100_s42.fq --fasta ecoli.fa
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from pathlib import Path

from benchutil import DEFAULT_WORK

PLANS = {
    "bs": [],
    "bpr-fe0": ["--filter", "bpr", "--fe", "0"],
    "bpr-fe1": ["--filter", "bpr", "--fe", "1"],
    "bpr-fe2": ["--filter", "bpr", "--fe", "2"],
    "bpr-fe5": ["--filter", "bpr", "--fe", "5"],
}


def sorted_digest(sam: Path) -> tuple[str, int]:
    lines = [ln for ln in sam.read_bytes().splitlines() if not ln.startswith(b"@PG")]
    lines.sort()
    return hashlib.sha256(b"\n".join(lines)).hexdigest()[:16], sum(not ln.startswith(b"@") for ln in lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fasta", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--reads", required=True)
    ap.add_argument("--warmup", help="small read file mapped once per plan first (compiles the kernels)")
    ap.add_argument("-e", default="5")
    ap.add_argument("-t", default="2")
    ap.add_argument("--plans", default=",".join(PLANS))
    ap.add_argument("--work", default=str(DEFAULT_WORK / "bpr_plans"))
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    base = [sys.executable, "-m", "seedmap", "map", "-q", "-t", args.t, "-e", args.e, "--index", args.index,
            args.fasta]
    ref_digest = None
    print(f"{'plan':10} {'wall s':>8} {'records':>9}  sorted SAM")
    for name in args.plans.split(","):
        extra = PLANS[name]
        if args.warmup:
            subprocess.run([*base, args.warmup, "-o", str(work / "warmup.sam"), *extra], check=True)
        out = work / f"{name}.sam"
        t0 = time.perf_counter()
        subprocess.run([*base, args.reads, "-o", str(out), *extra], check=True)
        wall = time.perf_counter() - t0
        digest, records = sorted_digest(out)
        ref_digest = ref_digest or digest
        same = "same as " + args.plans.split(",")[0] if digest == ref_digest else "DIFFERENT"
        print(f"{name:10} {wall:8.1f} {records:9d}  {digest} {same}", flush=True)


if __name__ == "__main__":
    main()
