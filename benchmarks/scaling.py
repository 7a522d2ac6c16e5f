#!/usr/bin/env python3
"""Thread scaling of `seedmap map` against yara on a multi-genome reference, in one run.

Reference: every complete genome in Debian's ragout-examples (16 files, 20 records, 48.2 Mbp; names
cleaned, lines re-wrapped so mason can index it). Reads: mason_simulator, single-end Illumina, 100 bp,
fixed seed. seedmap maps with -t 1, -t 2 and every core (when the machine has more), all-mapping at
-e E; yara maps all-mapping (-e/-s as a percentage, -sa record) with -t 2 and every core. Each seedmap
SAM is compared record for record with the -t 1 one (header lines aside: @PG holds the command line).

Prints a table: wall time, reads/s, peak RSS, speed-up over seedmap -t 1, time over yara at the same
thread count; and seedmap's own stage timings (-v) of the -t 2 run.

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
    """The reference, reads and edit budget options shared by the benchmarks on these data."""
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
    args = ap.parse_args(argv)
    work, ref, fq = data(args)
    cores = os.cpu_count() or 1
    threads = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, 2, cores})
    seedmap = seedmap_prefix(args.seedmap_cmd)
    log = work / "scaling.log"
    log.unlink(missing_ok=True)

    run_timed([*seedmap, "index", str(ref)], log)  # also compiles the kernels: nothing left to compile below
    results = {}
    for t in threads:
        sam = work / f"seedmap_t{t}.sam"
        timing = run_timed([*seedmap, "map", "-v", "-t", str(t), "-e", str(args.e), "-o", str(sam), str(ref),
                            str(fq)], log)
        results[("seedmap", t)] = (timing, records_digest(sam))
        if t == 2:
            stages = stage_lines(log)
    yara = find_exe("yara_mapper")
    if yara and not args.skip_yara:
        pct = str(-(-100 * args.e // args.length))
        idx = work / "yara_idx"
        if not Path(f"{idx}.txt.size").exists():
            run_timed(["yara_indexer", "-o", str(idx), str(ref)], log)
        for t in [t for t in threads if t > 1]:
            timing = run_timed([yara, "-t", str(t), "-e", pct, "-s", pct, "-y", "full", "-sa", "record", "-o",
                                str(work / f"yara_t{t}.sam"), str(idx), str(fq)], log)
            results[("yara", t)] = (timing, "")

    base = results[("seedmap", threads[0])]
    rows = []
    for (tool, t), (timing, digest) in results.items():
        yara_t = results.get(("yara", t))
        rows.append([tool, str(t), f"{timing.wall_s:.1f}", f"{args.reads / timing.wall_s:,.0f}",
                     f"{timing.peak_mb:.0f}",
                     f"{base[0].wall_s / timing.wall_s:.2f}x" if tool == "seedmap" else "",
                     f"{timing.wall_s / yara_t[0].wall_s:.2f}" if tool == "seedmap" and yara_t else "",
                     ("same" if digest == base[1] else "DIFFERENT") if tool == "seedmap" else ""])
    print(f"reference {ref.name} (48.2 Mbp, 20 records), {args.reads:,} x {args.length} bp mason reads, e = {args.e}, "
          f"{cores} cores")
    print(markdown_table(["tool", "-t", "wall s", "reads/s", "peak MB", "vs seedmap -t 1", "time / yara",
                          "SAM vs -t 1"], rows))
    if 2 in threads:
        print("\nseedmap -t 2 stage timings:")
        print("\n".join(stages))


if __name__ == "__main__":
    main()
