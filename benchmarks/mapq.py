#!/usr/bin/env python3
"""MAPQ calibration on mason reads: MAPQ bin vs the observed fraction of wrong primary placements.

Origins come from mason's truth SAM (pairsim.simulate_pairs, the same simulation as paired.py). Maps
mate-1 reads single-end and the pairs paired-end with seedmap (or takes existing SAMs), and prints per
MAPQ bin: records, wrong placements (primary not within --slack bp of the origin, or other strand or
sequence), observed error, the error the bin's MAPQ claims (mean of 10^(-MAPQ/10)) and the phred of
the observed error. Calibrated here means: no bin with at least --min-reads records is wrong more
often than its lowest MAPQ allows (MAPQ never overstates confidence), and MAPQ 0 is wrong far more
often than MAPQ >= 30.

  python benchmarks/mapq.py --seedmap-cmd "python -m seedmap" [--pairs 100000]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from benchutil import DEFAULT_WORK, markdown_table, run_timed, seedmap_prefix
from ecoli import prepare_reference
from pairsim import at, mapqs, simulate_pairs

BINS = [(0, 0), (1, 9), (10, 19), (20, 29), (30, 39), (40, 49), (50, 59), (60, 60)]


def table(sam: Path, truth: dict, slack: int, min_reads: int, mates: tuple[int, ...]) -> tuple[str, bool]:
    got = mapqs(sam)
    counts = {b: [0, 0, 0.0] for b in BINS}  # records, wrong, summed claimed error
    for (name, mate), origin in truth.items():
        if mate not in mates or (name, mate) not in got:
            continue
        placement, q = got[(name, mate)]
        if placement is None:
            continue
        b = next(b for b in BINS if b[0] <= q <= b[1])
        counts[b][0] += 1
        counts[b][1] += not at(placement, origin, slack)
        counts[b][2] += 10 ** (-q / 10)
    rows, ok = [], True
    for b, (n, wrong, claimed) in counts.items():
        if n == 0:
            continue
        observed = wrong / n
        if n >= min_reads and b[0] > 0 and observed > 10 ** (-b[0] / 10) + 3 * math.sqrt(10 ** (-b[0] / 10) / n):
            ok = False
        phred = "inf" if wrong == 0 else f"{-10 * math.log10(observed):.1f}"
        rows.append([f"{b[0]}-{b[1]}", str(n), str(wrong), f"{observed:.5f}", f"{claimed / n:.5f}", phred])
    zero, high = counts[(0, 0)], [sum(counts[b][i] for b in BINS if b[0] >= 30) for i in (0, 1)]
    if zero[0] >= min_reads and high[0] and zero[1] / zero[0] <= 10 * high[1] / high[0]:
        ok = False
    return markdown_table(["MAPQ", "records", "wrong", "observed error", "claimed error", "observed phred"],
                          rows), ok


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=100_000)
    p.add_argument("--read-len", type=int, default=100)
    p.add_argument("--fragment", default="300,30")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--errors", default="0.05", help="seedmap -e (default %(default)s)")
    p.add_argument("--slack", type=int, default=10)
    p.add_argument("--min-reads", type=int, default=100)
    p.add_argument("--single-sam", type=Path, help="existing single-end SAM of the mate-1 reads")
    p.add_argument("--paired-sam", type=Path, help="existing paired SAM (e.g. from paired.py)")
    p.add_argument("--seedmap-cmd", help="command prefix for seedmap (default: seedmap)")
    p.add_argument("--work", type=Path, default=DEFAULT_WORK)
    args = p.parse_args()
    work = args.work / "mapq"
    work.mkdir(parents=True, exist_ok=True)
    ref = prepare_reference(args.work)
    mean, sd = (int(x) for x in args.fragment.split(","))
    r1, r2, truth_sam = simulate_pairs(ref, args.work, args.pairs, args.read_len, mean, sd, args.seed)
    truth = {key: value[0] for key, value in mapqs(truth_sam).items()}
    sm = seedmap_prefix(args.seedmap_cmd)
    common = [*sm, "map", "-q", "-t", str(args.threads), "-e", args.errors, str(ref)]
    single = args.single_sam or work / "single.sam"
    paired = args.paired_sam or work / "paired.sam"
    if not args.single_sam:
        run_timed([*common, str(r1), "-o", str(single)], work / "map.log")
    if not args.paired_sam:
        run_timed([*common, str(r1), str(r2), "-o", str(paired)], work / "map.log")
    verdicts = []
    for label, sam, mates in (("single-end (mate 1 reads)", single, (1,)), ("paired-end (both mates)", paired,
                                                                            (1, 2))):
        text, ok = table(sam, truth, args.slack, args.min_reads, mates)
        verdicts.append(ok)
        print(f"\n{label}: {sam}\n\n{text}\n\ncalibrated: {'yes' if ok else 'NO'}")
    raise SystemExit(0 if all(verdicts) else 1)


if __name__ == "__main__":
    main()
