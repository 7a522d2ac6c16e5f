#!/usr/bin/env python3
"""Write a uniformly random genome (FASTA, 80 bases a line): a reference of any size with no repeats, for
filter benchmarks where only the seed blocks' sizes matter (n / 4^u neighborhoods per block).

    python benchmarks/random_genome.py 64 benchmarks/work/random64/random64.fa   # 64 Mbp
    mason_simulator -ir benchmarks/work/random64/random64.fa -n 20000 --illumina-read-length 100 \\
        -o benchmarks/work/random64/reads.fq
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mbp", type=float, help="length in Mbp")
    ap.add_argument("output")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    n = int(args.mbp * 1e6)
    codes = np.random.default_rng(args.seed).integers(0, 4, n, dtype=np.uint8)
    seq = np.frombuffer(b"ACGT", dtype=np.uint8)[codes]
    width = 80
    lines = np.full((n + width - 1) // width * (width + 1), ord("\n"), dtype=np.uint8)
    body = lines.reshape(-1, width + 1)
    flat = np.full(body.shape[0] * width, 0, dtype=np.uint8)
    flat[:n] = seq
    body[:, :width] = flat.reshape(-1, width)
    text = body.tobytes()
    last = n % width
    if last:  # the short last line
        text = text[: len(text) - (width + 1)] + bytes(body[-1, :last]) + b"\n"
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(b">random\n" + text)


if __name__ == "__main__":
    main()
