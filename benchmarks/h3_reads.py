#!/usr/bin/env python3
"""Reads of the seeds' H3 shape: L bp (default 40) taken from a reference at random positions and
strands, each with exactly 3 substitutions at distinct positions (a base replaced by another base);
windows holding anything but ACGT are skipped. Deterministic for a seed. Read names carry the origin:
h3_<i>_<name>:<1-based start><+|->.

  python benchmarks/h3_reads.py REF.fa OUT.fq [-n 1000000] [-l 40] [--subs 3] [--seed 7]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from benchutil import read_fasta

CODE = np.full(256, 4, dtype=np.uint8)
CODE[np.frombuffer(b"ACGT", dtype=np.uint8)] = np.arange(4, dtype=np.uint8)
LETTER = np.frombuffer(b"ACGT", dtype=np.uint8)


def make_reads(ref: Path, out: Path, n: int, length: int, subs: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    names, seqs = zip(*read_fasta(ref), strict=True)
    codes = [CODE[np.frombuffer(s.upper().encode(), dtype=np.uint8)] for s in seqs]
    starts = np.cumsum([0] + [c.size for c in codes])
    text = np.concatenate(codes)
    bad = np.concatenate([[0], np.cumsum(text > 3)])  # non-ACGT before each position
    # Oversample start positions, keep windows inside one sequence and free of non-ACGT.
    pos = np.sort(rng.integers(0, text.size - length + 1, 2 * n + 1000))
    seq = np.searchsorted(starts, pos, side="right") - 1
    ok = (pos + length <= starts[seq + 1]) & (bad[pos + length] == bad[pos])
    pos, seq = rng.permutation(np.stack([pos[ok], seq[ok]], axis=1))[:n].T
    if pos.size < n:
        raise SystemExit("reference too small or too many N for the requested reads")
    reads = text[pos[:, None] + np.arange(length)]
    minus = rng.integers(0, 2, n).astype(bool)
    reads[minus] = 3 - reads[minus, ::-1]
    where = np.argsort(rng.random((n, length)), axis=1)[:, :subs]  # distinct positions per read
    rows = np.arange(n)[:, None]
    reads[rows, where] = (reads[rows, where] + rng.integers(1, 4, (n, subs))) % 4
    with open(out, "w") as fh:
        for i in range(n):
            strand = "-" if minus[i] else "+"
            fh.write(f"@h3_{i}_{names[seq[i]]}:{pos[i] - starts[seq[i]] + 1}{strand}\n"
                     f"{LETTER[reads[i]].tobytes().decode()}\n+\n{'I' * length}\n")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reference", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("-n", "--reads", type=int, default=1_000_000)
    ap.add_argument("-l", "--length", type=int, default=40)
    ap.add_argument("--subs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    tmp = a.output.with_name(a.output.name + ".tmp")
    make_reads(a.reference, tmp, a.reads, a.length, a.subs, a.seed)
    tmp.rename(a.output)


if __name__ == "__main__":
    main()
