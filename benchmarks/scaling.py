#!/usr/bin/env python3
"""Thread scaling of `seedmap map` against yara on a multi-genome reference, in one run.

Reference: every complete genome in Debian's ragout-examples (16 files, 20 records, 48.2 Mbp; names
cleaned, lines re-wrapped so mason can index it). Reads: mason_simulator, single-end Illumina, 100 bp,
fixed seed. seedmap maps with -t 1, -t 2 and every core (when the machine has more), all-mapping at
-e E; yara maps all-mapping (-e/-s as a percentage, -sa record) with -t 2 and every core. Each seedmap
SAM is compared record for record with the -t 1 one (header lines aside: @PG holds the command line).

Every command runs once per round, thread counts alternating, and the best wall time of each counts (this
VM's speed drifts by 10-20% over minutes; noise only ever adds time). Prints a table: wall times, CPU
seconds, reads/s, peak RSS, speed-up over seedmap -t 1 (best against best, and within each round, where
the two runs met the same machine state), time over yara at the same thread count; and seedmap's own stage
timings (-v) of the -t 2 run.

    python benchmarks/scaling.py --reads 1000000        # needs bwa/seqan-apps/ragout-examples (Debian)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

from benchutil import (
    DEFAULT_WORK,
    Timing,
    find_exe,
    markdown_table,
    ragout_files,
    read_fasta,
    run_timed,
    seedmap_prefix,
    write_fasta_record,
)
from index_build import clean_name


def reference(work: Path) -> Path:
    ref = work / "ragout16.fa"
    if not ref.exists():
        files = ragout_files("*/references/*.fasta*")
        if not files:
            sys.exit("no genomes found: install Debian package ragout-examples")
        tmp = ref.with_suffix(".tmp")
        with open(tmp, "w") as fh:
            for path in files:
                for name, seq in read_fasta(path):
                    write_fasta_record(fh, clean_name(name), seq, width=70)
        tmp.rename(ref)
    return ref


def reads(work: Path, ref: Path, n: int, length: int, seed: int) -> Path:
    out = work / f"reads_n{n}_l{length}_s{seed}.fq"
    if not out.exists():
        mason = find_exe("mason_simulator")
        if mason is None:
            sys.exit("mason_simulator not found: install Debian package seqan-apps")
        tmp = work / f"tmp_{out.name}"
        run_timed([mason, "-q", "-ir", str(ref), "-n", str(n), "--seed", str(seed),
                   "--illumina-read-length", str(length), "-o", str(tmp)], work / "mason.log")
        tmp.rename(out)
    return out


def records_digest(sam: Path) -> str:
    """sha256 of the SAM without its header (the @PG line holds each run's command line)."""
    h = hashlib.sha256()
    with open(sam, "rb") as fh:
        for line in fh:
            if not line.startswith(b"@"):
                h.update(line)
    return h.hexdigest()


def stage_lines(log: Path) -> list[str]:
    """The last run's `-v` stage timing block from a log (lines after 'stage timings')."""
    lines = log.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if "stage timings" in line]
    return lines[starts[-1]:] if starts else []


def add_data_args(ap: argparse.ArgumentParser) -> None:
    """The reference, reads and edits (-e) options shared by the benchmarks on these data."""
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK / "scaling", help="scratch dir (default: %(default)s)")
    ap.add_argument("--reads", type=int, default=1_000_000, help="mason reads (default: %(default)s)")
    ap.add_argument("--length", type=int, default=100, help="read length (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=42, help="mason seed (default: %(default)s)")
    ap.add_argument("-e", type=int, default=5, help="edits (default: %(default)s)")
    ap.add_argument("--seedmap-cmd", help="how to invoke seedmap, e.g. 'python -m seedmap'")


def data(args: argparse.Namespace) -> tuple[Path, Path, Path]:
    """The scratch folder, the reference and the reads the options name (made when missing)."""
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    ref = reference(work)
    return work, ref, reads(work, ref, args.reads, args.length, args.seed)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_args(ap)
    ap.add_argument("--threads", default="", help="comma-separated thread counts (default: 1,2 and every core)")
    ap.add_argument("--skip-yara", action="store_true")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds; the best wall time counts "
                    "(default: %(default)s)")
    args = ap.parse_args(argv)
    work, ref, fq = data(args)
    cores = os.cpu_count() or 1
    threads = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, 2, cores})
    seedmap = seedmap_prefix(args.seedmap_cmd)
    log = work / "scaling.log"
    log.unlink(missing_ok=True)

    run_timed([*seedmap, "index", str(ref)], log)  # also compiles the kernels: nothing left to compile below
    yara = find_exe("yara_mapper")
    idx = work / "yara_idx"
    if yara and not args.skip_yara and not Path(f"{idx}.txt.size").exists():
        run_timed(["yara_indexer", "-o", str(idx), str(ref)], log)
    pct = str(-(-100 * args.e // args.length))
    runs: dict[tuple[str, int], list] = {}
    digests: dict[tuple[str, int], set] = {}
    stages: list[str] = []
    for _ in range(args.rounds):  # thread counts alternate, so a slow spell of the machine hits them alike
        for t in threads:
            sam = work / f"seedmap_t{t}.sam"
            sam.unlink(missing_ok=True)
            timing = run_timed([*seedmap, "map", "-v", "-t", str(t), "-e", str(args.e), "-o", str(sam), str(ref),
                                str(fq)], log)
            runs.setdefault(("seedmap", t), []).append(timing)
            digests.setdefault(("seedmap", t), set()).add(records_digest(sam))
            if t == 2 and timing.wall_s <= min(x.wall_s for x in runs[("seedmap", 2)]):
                stages = stage_lines(log)
        for t in [t for t in threads if t > 1 and yara and not args.skip_yara]:
            out = work / f"yara_t{t}.sam"
            out.unlink(missing_ok=True)
            runs.setdefault(("yara", t), []).append(run_timed(
                [yara, "-t", str(t), "-e", pct, "-s", pct, "-y", "full", "-sa", "record", "-o", str(out), str(idx),
                 str(fq)], log))

    def best(key: tuple[str, int]) -> Timing:
        return min(runs[key], key=lambda x: x.wall_s)

    base_key = ("seedmap", threads[0])
    base_digest = next(iter(digests[base_key]))
    rows = []
    for key, timings in runs.items():
        tool, t = key
        b = best(key)
        yara_t = best(("yara", t)) if ("yara", t) in runs else None
        rows.append([tool, str(t), f"{b.wall_s:.1f}", " / ".join(f"{x.wall_s:.1f}" for x in timings),
                     f"{b.cpu_s:.1f}", f"{args.reads / b.wall_s:,.0f}", f"{max(x.peak_mb for x in timings):.0f}",
                     f"{best(base_key).wall_s / b.wall_s:.2f}x" if tool == "seedmap" else "",
                     " / ".join(f"{x.wall_s / y.wall_s:.2f}" for x, y in zip(runs[base_key], timings, strict=True))
                     if tool == "seedmap" else "",
                     f"{b.wall_s / yara_t.wall_s:.2f}" if tool == "seedmap" and yara_t else "",
                     ("same" if digests[key] == {base_digest} else "DIFFERENT") if tool == "seedmap" else ""])
    print(f"reference {ref.name} (48.2 Mbp, 20 records), {args.reads:,} x {args.length} bp mason reads, e = {args.e}, "
          f"{cores} cores; best of {args.rounds} alternating rounds (dirty pages written back before each run)")
    print(markdown_table(["tool", "-t", "best wall s", "every run s", "CPU s (best)", "reads/s", "peak MB",
                          "vs seedmap -t 1", "same round", "time / yara", "SAM vs -t 1"], rows))
    if 2 in threads:
        print("\nseedmap -t 2 stage timings (its best run):")
        print("\n".join(stages))


if __name__ == "__main__":
    main()
