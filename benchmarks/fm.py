#!/usr/bin/env python3
"""FM-index engine benchmark on E. coli MG1655: seedmap-fm vs yara (also an FM all-mapper), with razers3
as the truth set and the neighborhood engine for the same-SAM check. Built on ecoli.py (same inputs,
timing, SAM parsing and recall definitions).

Two read sets:
  (default)     the foundation's mason reads (--reads 100000 x --read-len 100, e = --e, default 5)
  --reads-h3 N  N reads of 40 bp with exactly 3 substitutions (h3_reads.py), e = 3

Tool command lines (E = e, T = --threads):
  seedmap-fm  seedmap index --kind fm ref.fa ; seedmap map --engine fm -t T -e E ref.fa reads.fq -o out.sam
  seedmap     seedmap index ref.fa ; seedmap map -t T -e E ref.fa reads.fq -o out.sam   (neighborhood)
  yara, razers3: as in ecoli.py (yara -e/-s = ceil(100 E / L) percent, -y full; razers3 -rr 100)

  python benchmarks/fm.py [--reads-h3 1000000] [--skip seedmap] [--threads 2] [--seedmap-cmd 'python -m seedmap']
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import ecoli
from benchutil import DEFAULT_WORK, markdown_table, seedmap_prefix
from h3_reads import make_reads

TOOLS = ("seedmap-fm", "seedmap", "yara", "razers3")


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK)
    ap.add_argument("--reads", type=int, default=100_000, help="mason reads (default %(default)s)")
    ap.add_argument("--read-len", type=int, default=100)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--e", type=int, default=5, help="edits for the mason reads (default %(default)s)")
    ap.add_argument("--reads-h3", type=int, default=0, metavar="N", help="use N H3 reads (40 bp, 3 subs), e = 3")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--slack", type=int, default=5)
    ap.add_argument("--skip", action="append", default=[], choices=TOOLS)
    ap.add_argument("--seedmap-cmd", help="how to invoke seedmap, e.g. 'python -m seedmap'")
    ap.add_argument("--warmup", type=int, default=1000, help="untimed first run on N reads (numba JIT cache)")
    ap.add_argument("--razers3-max-hits", type=int, default=100_000)
    ap.add_argument("--truth-sam", type=Path, help="razers3 SAM of an earlier run on the same reads (skips razers3)")
    return ap.parse_args()


def plans(args: argparse.Namespace, ref: Path, reads: Path, work: Path) -> dict[str, ecoli.ToolPlan]:
    base = ecoli.make_plans(args, ref, reads, work)
    seedmap = seedmap_prefix(args.seedmap_cmd)
    fm_ref = str(work / "seedmap-fm" / ref.name)
    sam = work / "seedmap-fm" / "seedmap-fm.sam"
    fm = ecoli.ToolPlan("seedmap-fm", seedmap[:1], [[*seedmap, "index", "--kind", "fm", fm_ref]],
                        [*seedmap, "map", "--engine", "fm", "-t", str(args.threads), "-e", str(args.e), fm_ref,
                         str(reads), "-o", str(sam)], sam)
    return {"seedmap-fm": fm, "seedmap": base["seedmap"], "yara": base["yara"], "razers3": base["razers3"]}


def main() -> None:
    args = parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    ref = ecoli.prepare_reference(work)
    if args.reads_h3:
        args.e, args.read_len = 3, 40
        reads = work / f"h3_n{args.reads_h3}_l40.fq"
        if not reads.exists():
            make_reads(ref, reads, args.reads_h3, 40, 3, 7)
        label = f"{args.reads_h3} x 40 bp reads with exactly 3 substitutions, e=3"
        work = work / "fm_h3"
    else:
        reads = ecoli.simulate_reads(ref, work, args.reads, args.read_len, args.seed)
        label = f"{args.reads} x {args.read_len} bp mason reads, e={args.e}"
        work = work / "fm_mason"
    work.mkdir(exist_ok=True)
    warm = ecoli.subset_reads(reads, args.warmup) if args.warmup else None
    results: list[ecoli.ToolResult] = []
    notes: list[str] = []
    for name, plan in plans(args, ref, reads, work).items():
        if name in args.skip or ecoli.missing_exe(plan) or (name == "razers3" and args.truth_sam):
            notes.append(f"{name}: skipped")
            continue
        ecoli.log(f"{name}: running")
        res = ecoli.run_tool(plan, ref, work, ecoli.warmup_cmd(plan, reads, warm) if warm else None, 1)
        results.append(res)
        if res.note:
            notes.append(f"{name}: {res.note}")
        ecoli.log(f"{name}: done {res.map.wall_s if res.map else math.nan:.1f} s")
    by_name = {r.name: r for r in results}
    truth = by_name["razers3"].hits if "razers3" in by_name and by_name["razers3"].map else None
    if args.truth_sam:
        truth = ecoli.parse_sam(args.truth_sam)[0]
        notes.append(f"truth: {args.truth_sam} (razers3, same reads and options, earlier run)")
    header = ["tool", "index s", "map s", "peak MB (index)", "peak MB (map)", "recall_locs", "recall_best",
              "mapped reads", "records"]
    print(f"\nE. coli MG1655, {label}, {args.threads} threads, truth = razers3, slack = {args.slack} bp\n")
    print(markdown_table(header, ecoli.table_rows(results, truth, args.slack)))
    line = ecoli.ratio_line(by_name, "seedmap-fm", "yara")
    print(f"\n{line}" if line else "\nseedmap-fm/yara: n/a")
    same = ecoli.same_records(work / "seedmap-fm" / "seedmap-fm.sam", work / "seedmap" / "seedmap.sam")
    if same is not None and {"seedmap", "seedmap-fm"} <= by_name.keys():  # not a SAM left by an earlier run
        print(f"\nseedmap-fm vs seedmap (neighborhood) SAM records after sorting: {same}")
    for note in notes:
        print(f"- {note}")
    print(f"\ntotal script time {time.perf_counter() - ecoli.START:.1f}s")


if __name__ == "__main__":
    main()
