#!/usr/bin/env python3
"""Seed + filter stage only, --filter bs vs ph, on E. coli reads: the time to produce every query's
candidate windows (engine.candidate_windows), which is where the two filters differ; verification,
alignment and SAM output are the same for both and left out. Both engines must give identical windows.

    PYTHONPATH=src python benchmarks/filter_ecoli.py --index benchmarks/work/ecoli_ph/ecoli_ph.smi \\
        -e 5 --windows 2 --fe 2 benchmarks/work/ecoli.fa benchmarks/work/reads_n100000_l100_s42.fq

Any reference works: the filters' relative speed depends on the seed blocks' size (n / 4^u neighborhoods
each), so also run it on an index with a smaller -u, or on a bigger genome (benchmarks/random_genome.py
writes one, mason_simulator simulates its reads).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from seedmap.engines.neighborhood import NeighborhoodEngine  # noqa: E402
from seedmap.engines.neighborhood_ph import PerfectHashEngine  # noqa: E402
from seedmap.io.chunks import read_batches  # noqa: E402
from seedmap.kinds import load_or_build  # noqa: E402
from seedmap.pipeline import errors_per_read  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reference")
    ap.add_argument("reads")
    ap.add_argument("--index", help="index directory (with --ph arrays, else they are built in memory)")
    ap.add_argument("-e", "--errors", type=float, default=5)
    ap.add_argument("--windows", type=int, default=2)
    ap.add_argument("--fe", type=int, default=2)
    ap.add_argument("--step", type=int, default=0)
    ap.add_argument("-t", "--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-reads", type=int, default=10**9, help="use only the first reads (default: all)")
    args = ap.parse_args(argv)

    from seedmap.spread import set_share

    set_share(args.threads)
    ref, ix = load_or_build(args.reference, args.index)
    plan = {"windows": args.windows, "step": args.step, "fe": args.fe}
    engines = {"bs": NeighborhoodEngine(ix, ref.starts, **plan), "ph": PerfectHashEngine(ix, ref.starts, **plan)}
    batch = next(read_batches(args.reads, args.max_reads))
    qcodes, qoff = batch.queries()
    qerr = errors_per_read(batch.lengths, args.errors)
    best = {name: float("inf") for name in engines}
    out = {}
    for name, engine in engines.items():
        out[name] = engine.candidate_windows(qcodes, qoff, qerr)  # compiles
    for _ in range(args.repeats):  # alternate, so that load from other processes hits both alike
        for name, engine in engines.items():
            t0 = time.perf_counter()
            engine.candidate_windows(qcodes, qoff, qerr)
            best[name] = min(best[name], time.perf_counter() - t0)
    same = all(np.array_equal(a, b) for a, b in zip(out["bs"], out["ph"], strict=True))
    print(f"{batch.size} reads, e={args.errors:g}, windows={args.windows}, fe={args.fe}, step={args.step}, "
          f"{args.threads} thread(s); {out['bs'][0].size} merged windows; identical: {same}")
    for name in engines:
        print(f"  {name}: {best[name]:.2f} s (best of {args.repeats}), {batch.size / best[name]:.0f} reads/s")
    if not same:
        sys.exit("the filters disagree")


if __name__ == "__main__":
    main()
