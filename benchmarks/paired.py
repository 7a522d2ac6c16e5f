#!/usr/bin/env python3
"""Paired-end benchmark on E. coli K-12 MG1655: seedmap vs bwa mem vs bowtie2, in one run.

Reads: mason_simulator pairs (Illumina model, fr, fragment mean/sd given, fixed seed) with their
truth SAM. Every tool maps the same pairs with the same threads; wall time of mapping only (indexes
are built first, untimed; one warm-up run on 1,000 pairs first so numba's compile cache is warm).

  origin      fraction of pairs whose two primary records both lie at their origin (same sequence and
              strand, start within --slack bp; soft clips undone)
  at_bwa      of the pairs bwa mem places at their origin, the fraction this tool places there too
  proper      fraction of pairs flagged proper (flag 2)

Command lines (T = --threads):
  seedmap  seedmap index ref.fa ; seedmap map -t T ref.fa r1.fq r2.fq -o seedmap.sam
  bwa      bwa index -p idx ref.fa ; bwa mem -t T idx r1.fq r2.fq > bwa.sam
  bowtie2  bowtie2-build ref.fa idx ; bowtie2 -p T -x idx -1 r1.fq -2 r2.fq -S bowtie2.sam
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

from benchutil import DEFAULT_WORK, find_exe, markdown_table, run_timed, seedmap_prefix
from ecoli import prepare_reference
from pairsim import at, primaries, simulate_pairs

TOOLS = ("seedmap", "bwa", "bowtie2")


def head_pairs(r1: Path, r2: Path, n: int, work: Path) -> tuple[Path, Path]:
    out = (work / f"warm_{n}_1.fq", work / f"warm_{n}_2.fq")
    for src, dst in zip((r1, r2), out, strict=True):
        with open(src) as fh, open(dst, "w") as o:
            o.writelines(itertools.islice(fh, 4 * n))
    return out


def commands(tool: str, args: argparse.Namespace, ref: Path, r1: Path, r2: Path, sam: Path,
             work: Path) -> tuple[list[list[str]], list[str], bool]:
    """(index commands, map command, SAM on stdout)."""
    t = str(args.threads)
    idx = str(work / tool / "idx")
    if tool == "seedmap":
        sm_ref = work / "seedmap" / ref.name
        if not sm_ref.exists():
            sm_ref.symlink_to(ref.resolve())
        sm = seedmap_prefix(args.seedmap_cmd)
        return ([[*sm, "index", str(sm_ref)]] if not Path(f"{sm_ref}.smi").exists() else [],
                [*sm, "map", "-q", "-t", t, str(sm_ref), str(r1), str(r2), "-o", str(sam)], False)
    if tool == "bwa":
        return ([["bwa", "index", "-p", idx, str(ref)]] if not Path(f"{idx}.bwt").exists() else [],
                ["bwa", "mem", "-t", t, idx, str(r1), str(r2)], True)
    return ([["bowtie2-build", str(ref), idx]] if not Path(f"{idx}.1.bt2").exists() else [],
            ["bowtie2", "-p", t, "-x", idx, "-1", str(r1), "-2", str(r2), "-S", str(sam)], False)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=100_000)
    p.add_argument("--read-len", type=int, default=100)
    p.add_argument("--fragment", default="300,30", help="fragment mean,sd (default %(default)s)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--slack", type=int, default=10)
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--seedmap-cmd", help="command prefix for seedmap (default: seedmap)")
    p.add_argument("--work", type=Path, default=DEFAULT_WORK)
    args = p.parse_args()
    work = args.work / "paired"
    work.mkdir(parents=True, exist_ok=True)
    ref = prepare_reference(args.work)
    mean, sd = (int(x) for x in args.fragment.split(","))
    r1, r2, truth_sam = simulate_pairs(ref, args.work, args.pairs, args.read_len, mean, sd, args.seed)
    truth = primaries(truth_sam)
    names = sorted({name for name, _ in truth})
    warm = head_pairs(r1, r2, 1000, work)
    placed: dict[str, dict] = {}
    rows = []
    for tool in args.tools.split(","):
        (work / tool).mkdir(exist_ok=True)
        sam = work / tool / f"{tool}.sam"
        index_cmds, map_cmd, on_stdout = commands(tool, args, ref, r1, r2, sam, work)
        if find_exe(map_cmd[0]) is None and tool != "seedmap":
            print(f"{tool}: not installed, skipped")
            continue
        for cmd in index_cmds:
            run_timed(cmd, work / tool / "index.log")
        warm_cmd = [str(warm[0]) if c == str(r1) else str(warm[1]) if c == str(r2) else c for c in map_cmd]
        warm_cmd = [str(work / tool / "warm.sam") if c == str(sam) else c for c in warm_cmd]
        run_timed(warm_cmd, work / tool / "map.log", stdout=work / tool / "warm.sam" if on_stdout else None)
        timing = run_timed(map_cmd, work / tool / "map.log", stdout=sam if on_stdout else None)
        got = primaries(sam)
        placed[tool] = {n: at(got.get((n, 1)), truth[(n, 1)], args.slack) and at(got.get((n, 2)), truth[(n, 2)],
                                                                                  args.slack) for n in names}
        proper = _proper_fraction(sam)
        rows.append([tool, f"{timing.wall_s:.1f}", f"{timing.peak_mb:.0f}",
                     f"{sum(placed[tool].values()) / len(names):.4f}", f"{proper:.4f}"])
    if "bwa" in placed:
        bwa_ok = [n for n in names if placed["bwa"][n]]
        for row in rows:
            row.append(f"{sum(placed[row[0]][n] for n in bwa_ok) / max(len(bwa_ok), 1):.4f}")
    print(f"\n{args.pairs} mason pairs {args.read_len} bp, fragment {mean}+-{sd}, {args.threads} threads "
          f"(timings from one run on a shared machine: compare within this table only)\n")
    header = ["tool", "map s", "peak MiB", "origin", "proper"] + (["at_bwa"] if "bwa" in placed else [])
    print(markdown_table(header, rows))


def _proper_fraction(sam: Path) -> float:
    pairs = proper = 0
    with open(sam) as fh:
        for line in fh:
            if line.startswith("@"):
                continue
            flag = int(line.split("\t", 2)[1])
            if flag & 0x900 or not flag & 64:
                continue
            pairs += 1
            proper += bool(flag & 2)
    return proper / max(pairs, 1)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"\n(benchmark wall time {time.perf_counter() - t0:.0f} s)")
