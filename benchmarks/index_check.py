#!/usr/bin/env python3
"""What the index check of `seedmap map` costs: loading a stored index with no verified stamp (the full
CRC-32 pass of the first run after the index is built, copied or changed), with its stamp (every later
run), and without the check at all; beside the wall time of a map run of simulated reads with that index.

    python benchmarks/synthetic_genome.py 50 /tmp/g50.fa --seed 7
    python -m seedmap index --kind fm /tmp/g50.fa
    python benchmarks/index_check.py /tmp/g50.fa --index /tmp/g50.fa.fm.smi --reads 100000

The files are read from the page cache (the index was just built or read); from a cold disk the first
run's pass reads the index at disk speed instead, reading that mapping would mostly have done anyway.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from benchutil import markdown_table

from seedmap.index import store
from seedmap.io.reference import read_fasta


def timed_load(index: Path, fasta: Path, kind: str, stamped: bool, check: bool = True) -> float:
    if not stamped:
        for where in store._stamp_paths(index):
            where.unlink(missing_ok=True)
    verify = store._verify_once
    if not check:
        store._verify_once = lambda *args: None
    try:
        t0 = time.perf_counter()
        store.load(index, kind, (), fasta)
        return time.perf_counter() - t0
    finally:
        store._verify_once = verify


def simulated_reads(fasta: Path, n: int, length: int, out: Path, seed: int = 1) -> None:
    """n reads of `length` bases from random places of the reference, 1% substitutions, forward strand."""
    seq = np.frombuffer(b"ACGTN", dtype=np.uint8)[np.minimum(read_fasta(str(fasta)).codes(), 4)]
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(seq) - length, n)
    reads = seq[starts[:, None] + np.arange(length)].copy()
    subs = rng.random(reads.shape) < 0.01
    reads[subs] = np.frombuffer(b"ACGT", dtype=np.uint8)[rng.integers(0, 4, int(subs.sum()))]
    qual = b"I" * length
    with open(out, "wb") as fh:
        for i, r in enumerate(reads):
            fh.write(b"@r%d\n%s\n+\n%s\n" % (i, r.tobytes(), qual))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fasta", type=Path)
    ap.add_argument("--index", type=Path, help="index directory (default: FASTA.fm.smi)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reads", type=int, default=100_000, help="reads of the map run (0: no map run)")
    ap.add_argument("--length", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    index = args.index or store.default_path(args.fasta, "fm")
    header = store.read_header(index)
    kind = header["kind"]
    rows = []
    times = {case: [] for case in ("no check", "first run (full check)", "later runs (stamped)")}
    for _ in range(args.rounds):
        times["no check"].append(timed_load(index, args.fasta, kind, stamped=True, check=False))
        times["first run (full check)"].append(timed_load(index, args.fasta, kind, stamped=False))
        times["later runs (stamped)"].append(timed_load(index, args.fasta, kind, stamped=True))
    run_s = None
    if args.reads:
        with tempfile.TemporaryDirectory() as tmp:
            reads = Path(tmp) / "reads.fq"
            simulated_reads(args.fasta, args.reads, args.length, reads)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "seedmap", "map", str(args.fasta), str(reads), "--index", str(index),
                            "-t", str(args.threads), "-o", str(Path(tmp) / "out.sam"), "-q"], check=True)
            run_s = time.perf_counter() - t0
    base = statistics.median(times["no check"])
    for case, values in times.items():
        load_s = statistics.median(values)
        extra = load_s - base
        share = f"{100 * extra / run_s:.2f} %" if run_s else "-"
        rows.append([case, f"{load_s * 1e3:.1f}", f"{extra * 1e3:+.1f}", share])
    print(f"{index}: {kind} index, {store.total_bytes(header) / 1e6:.0f} MB; median of {args.rounds} loads"
          + (f"; map run of {args.reads} reads x {args.length} bp, -t {args.threads}: {run_s:.1f} s" if run_s else ""))
    print(markdown_table(["load", "ms", "check ms", "of the map run"], rows))


if __name__ == "__main__":
    main()
