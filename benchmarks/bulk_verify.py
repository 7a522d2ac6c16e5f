"""Throughput of the bulk bit-parallel verifier (seedmap.verify.bulk): alignments per second.

2,000,000 candidates per setting on a random 20 Mbp genome (4 sequences): each query (500,000 of them,
the two strands of a read share e) has 2 candidates at its true diagonal (+- 2) and 2 at random diagonals.
Reads carry 0-3 substitutions, and a third of them one insertion or deletion. Each timing follows a
warm-up call (compilation excluded); the best of --repeat runs is reported, for 1 and 2 threads, for the
default kernel (banded where the band fits one word) and for Myers' column-wise kernel (method=MYERS).

    python benchmarks/bulk_verify.py [--candidates 2000000] [--repeat 3] [--threads 1,2]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def make_reads(rng: np.random.Generator, genome: np.ndarray, starts: np.ndarray, nq: int, m: int) -> tuple:
    """nq reads of length m from random positions (within one sequence), with a few edits."""
    nseq = starts.size - 1
    sid = rng.integers(0, nseq, nq)
    s0, s1 = starts[sid], starts[sid + 1]
    pos = s0 + (rng.random(nq) * (s1 - s0 - m - 2)).astype(np.int64) + 1
    cols = np.arange(m)
    kind = rng.integers(0, 6, nq)  # 0: deletion, 1: insertion, else substitutions only
    k = rng.integers(1, m - 1, nq)[:, None]
    idx = pos[:, None] + cols[None, :]
    idx = np.where((kind[:, None] == 0) & (cols[None, :] >= k), idx + 1, idx)  # skip one reference base
    idx = np.where((kind[:, None] == 1) & (cols[None, :] > k), idx - 1, idx)  # one extra read base at k
    reads = genome[idx]
    ins = kind == 1
    reads[ins, k[ins, 0]] = rng.integers(0, 4, int(ins.sum()))
    nsub = rng.integers(0, 4, nq)
    for s in range(3):
        rows = np.flatnonzero(nsub > s)
        where = rng.integers(0, m, rows.size)
        reads[rows, where] = (reads[rows, where] + rng.integers(1, 4, rows.size)) % 4
    return reads.reshape(-1), pos, s0, s1


def make_setting(rng: np.random.Generator, ref: object, genome: np.ndarray, ncand: int, m: int, e: int) -> tuple:
    nq = ncand // 4
    qcodes, pos, s0, s1 = make_reads(rng, genome, ref.starts, nq, m)
    qoff = np.arange(nq + 1, dtype=np.int64) * m
    qerr = np.full((nq + 1) // 2, e, dtype=np.int64)
    cand_q = np.repeat(np.arange(nq, dtype=np.int64), 4)
    true_diag = pos[:, None] + rng.integers(-2, 3, (nq, 2))
    rand_diag = s0[:, None] + (rng.random((nq, 2)) * (s1 - s0)[:, None]).astype(np.int64)
    cand_diag = np.concatenate([true_diag, rand_diag], axis=1).reshape(-1)
    from seedmap.verify.bulk import window_of

    ws, we = window_of(cand_diag, m, e, np.repeat(s0, 4), np.repeat(s1, 4))
    return qcodes, qoff, qerr, cand_q, ws, we, ref.packed, ref.nmask


def best_time(args: tuple, method: int, repeat: int) -> tuple[float, np.ndarray]:
    from seedmap.verify.bulk import bulk_distances

    out = bulk_distances(*args, method=method)  # warm-up (compiles on the first call)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = bulk_distances(*args, method=method)
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--seed", type=int, default=1)
    opts = ap.parse_args()
    from seedmap.io.reference import Reference
    from seedmap.spread import set_share
    from seedmap.verify.bulk import AUTO, MYERS

    rng = np.random.default_rng(opts.seed)
    lengths = [8_000_000, 6_000_000, 4_000_000, 2_000_000]
    seqs = [rng.integers(0, 4, n).astype(np.uint8) for n in lengths]
    ref = Reference.from_codes([f"chr{i}" for i in range(len(seqs))], seqs)
    genome = np.concatenate(seqs)
    threads = [int(t) for t in opts.threads.split(",")]
    settings = [(100, 5), (50, 4)]
    kernels = [("banded (default)", AUTO), ("Myers", MYERS)]
    print(f"candidates per setting: {opts.candidates:,}; best of {opts.repeat}")
    rows = []
    for m, e in settings:
        args = make_setting(rng, ref, genome, opts.candidates, m, e)
        ref_out = None
        for name, method in kernels:
            for t in threads:
                set_share(t)
                secs, out = best_time(args, method, opts.repeat)
                if ref_out is None:
                    ref_out = out
                elif not np.array_equal(out, ref_out):
                    raise SystemExit(f"kernels disagree for m={m}, e={e}")
                hit = float(np.mean(out <= e))
                rows.append((m, e, name, t, secs, opts.candidates / secs, hit))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average after the runs: {load}\n")
    print("| read length | e | kernel | threads | time (s) | alignments/s | within e |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for m, e, name, t, secs, rate, hit in rows:
        print(f"| {m} | {e} | {name} | {t} | {secs:.3f} | {rate / 1e6:.2f} M | {hit:.1%} |")


if __name__ == "__main__":
    main()
