#!/usr/bin/env python3
"""Where single-end --best spends its time, by the repeat class of the reads' origins: seedmap against yara.

mason's 150 bp reads of human_pairs.py's genome are split by what their origin's midpoint lies in
(synthetic_genome.py's BED): a young Alu or L1 copy (families 3 and 4), a segmental duplication, an older
interspersed repeat or satellite, or none of these ("unique"; microsatellites and gaps count as unique), the first
of these that covers it where repeats nest. Each class is mapped alone by each tool (-t T, fastest of --rounds
rounds); a run on the first --fixed reads gives the tool's fixed CPU cost (start-up, index load), taken off each
class's CPU time, so the per-read cost of a class is (CPU - fixed) / reads. Columns: reads in the class, per-read
CPU microseconds of seedmap and yara, their ratio, the class's share of each tool's per-read CPU over all classes,
and seedmap's primaries by edit distance (NM), which says which strata the class's reads stop at. A class whose
CPU time does not exceed the fixed cost (too few reads) shows "-".

    python benchmarks/read_classes.py --size 250 --reads 200000
    python benchmarks/read_classes.py --size 250 --reads 50000 --modes best,all
    python benchmarks/read_classes.py --size 3100 --layout 24,300 --reads 100000 --skip yara   # human_pairs.py's
"""

from __future__ import annotations

import argparse
import bisect
import math
import sys
from collections import Counter, defaultdict
from itertools import accumulate
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import DEFAULT_WORK, find_exe, markdown_table, run_timed, seedmap_prefix  # noqa: E402
from human_pairs import SEED, genome, mason  # noqa: E402

CLASSES = ("unique", "old", "segdup", "young")
YOUNG = {"3", "4"}  # synthetic_genome.py's youngest Alu and L1 families


def intervals(bed: Path) -> dict[tuple[str, str], tuple[list[int], list[int]]]:
    """Per (sequence, class): the starts of that class's repeats, sorted, and the furthest end among the repeats
    up to each (so a position is inside one of them exactly when the furthest end before it lies beyond it)."""
    per: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    with open(bed) as fh:
        for line in fh:
            seq, s, e, name = line.split("\t")[:4]
            family, age = name.split("/")
            if family in ("gap", "microsatellite"):
                continue
            cls = "young" if family in ("Alu", "L1") and age in YOUNG else ("segdup" if family == "segdup" else "old")
            per[(seq, cls)].append((int(s), int(e)))
    out = {}
    for key, iv in per.items():
        iv.sort()
        out[key] = ([a for a, _ in iv], list(accumulate((b for _, b in iv), max)))
    return out


def origin_class(iv: dict, seq: str, mid: int) -> str:
    """The class of a read whose origin's midpoint is mid: the first of young, segdup, old whose repeats cover it."""
    for cls in ("young", "segdup", "old"):
        if (seq, cls) in iv:
            starts, reach = iv[(seq, cls)]
            k = bisect.bisect_right(starts, mid) - 1
            if k >= 0 and reach[k] > mid:
                return cls
    return "unique"


def split_reads(fq: Path, truth: Path, bed: Path, out_dir: Path, length: int) -> dict[str, tuple[Path, int]]:
    """The reads of fq in one FASTQ per class (made once per input), with their counts."""
    paths = {c: out_dir / f"{fq.stem}_{c}.fq" for c in CLASSES}
    counts_file = out_dir / f"{fq.stem}_classes.txt"
    if counts_file.exists() and all(p.exists() for p in paths.values()):
        counts = dict(line.split() for line in counts_file.read_text().splitlines())
        return {c: (paths[c], int(counts[c])) for c in CLASSES}
    iv = intervals(bed)
    origin = {}
    with open(truth) as fh:
        for line in fh:
            if line[0] != "@":
                f = line.split("\t", 4)
                origin[f[0]] = (f[2], int(f[3]) - 1 + length // 2)
    counts: Counter[str] = Counter()
    outs = {c: open(p.with_suffix(".tmp"), "w") for c, p in paths.items()}
    with open(fq) as fh:
        while head := fh.readline():
            rec = head + fh.readline() + fh.readline() + fh.readline()
            cls = origin_class(iv, *origin[head[1:].split()[0]])
            counts[cls] += 1
            outs[cls].write(rec)
    for c, f in outs.items():
        f.close()
        paths[c].with_suffix(".tmp").rename(paths[c])
    counts_file.write_text("".join(f"{c} {counts[c]}\n" for c in CLASSES))
    return {c: (paths[c], counts[c]) for c in CLASSES}


def head_reads(fq: Path, n: int, out: Path) -> Path:
    with open(fq) as src, open(out, "w") as dst:
        for _ in range(4 * n):
            dst.write(src.readline())
    return out


def edit_strata(sam: Path) -> Counter[int]:
    """Primaries by NM (-1: unmapped)."""
    got: Counter[int] = Counter()
    with open(sam) as fh:
        for line in fh:
            if line[0] == "@":
                continue
            f = line.rstrip("\n").split("\t")
            if int(f[1]) & 0x900:
                continue
            nm = next((int(x[5:]) for x in f[11:] if x.startswith("NM:i:")), -1)
            got[nm if not int(f[1]) & 4 else -1] += 1
    return got


def _us(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def _share(x: float | None, n: int, total: float | None) -> str:
    """A class's share of a tool's CPU over all classes."""
    return "-" if x is None or not total else f"{100 * x * n / total:.0f}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=float, default=250, help="genome size in Mbp (default %(default)s)")
    ap.add_argument("--reads", type=int, default=200_000, help="simulated reads (default %(default)s)")
    ap.add_argument("--read-length", type=int, default=150, help="(default %(default)s)")
    ap.add_argument("-e", "--edits", type=int, default=4, help="(default %(default)s)")
    ap.add_argument("--modes", default="best", help="comma-separated: best, all (default %(default)s)")
    ap.add_argument("--threads", type=int, default=2, help="(default %(default)s)")
    ap.add_argument("--rounds", type=int, default=2, help="(default %(default)s)")
    ap.add_argument("--fixed", type=int, default=100, help="reads of the run that measures fixed costs")
    ap.add_argument("--skip", default="", help="yara to leave it out")
    ap.add_argument("--seedmap", help="command prefix for seedmap (default: the installed seedmap)")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK / "human_like", help="scratch dir (human_pairs.py's)")
    ap.add_argument("--layout", default="", metavar="C,S", help="chromosomes, scaffolds (human_pairs.py)")
    args = ap.parse_args()
    sm = seedmap_prefix(args.seedmap)
    fasta = genome(args.size, args.work, args.layout)
    d = fasta.parent
    (fq,), truth = mason(fasta, args.reads, args.read_length, False, SEED + 1)
    classes = split_reads(fq, truth, d / f"synth{args.size:g}.bed", d, args.read_length)
    fixed_fq = head_reads(classes["unique"][0], args.fixed, d / f"{fq.stem}_fixed.fq")
    index, log = d / "idx.fm", d / "read_classes.log"
    if not index.exists():
        run_timed([*sm, "index", str(fasta), "--kind", "fm", "-o", str(index)], log)
    yara = None if "yara" in args.skip else find_exe("yara_mapper")
    yara_index = d / "yara_idx"
    if yara and not Path(f"{yara_index}.txt.size").exists():
        run_timed([find_exe("yara_indexer"), "-o", str(yara_index), str(fasta)], log)
    pct = str(math.ceil(100 * args.edits / args.read_length))  # yara's -e: a percentage of the read length
    t = str(args.threads)

    def commands(mode: str, reads: Path, sam: Path) -> dict[str, list[str]]:
        cmds = {"seedmap": [*sm, "map", str(fasta), str(reads), "--index", str(index), "-e", str(args.edits),
                            "-t", t, "-q", "-o", str(sam.with_suffix(".seedmap.sam")),
                            *(["--best"] if mode == "best" else [])]}
        if yara:
            extra = ["-s", pct, "-sa", "record"] if mode == "all" else []
            cmds["yara"] = [yara, "-t", t, "-e", pct, *extra, "-o", str(sam.with_suffix(".yara.sam")),
                            str(yara_index), str(reads)]
        return cmds

    def cpu(cmd: list[str]) -> float:
        return min(run_timed(cmd, log).cpu_s for _ in range(args.rounds))

    for mode in args.modes.split(","):
        fixed = {tool: cpu(cmd) for tool, cmd in commands(mode, fixed_fq, d / f"{fq.stem}_fixed_{mode}").items()}
        per_read: dict[str, dict[str, float | None]] = defaultdict(dict)
        strata = {}
        for cls, (reads, n) in classes.items():
            sam = d / f"{fq.stem}_{cls}_{mode}"
            for tool, cmd in commands(mode, reads, sam).items():
                spent = cpu(cmd) - fixed[tool]  # at most the fixed cost: too few reads to tell
                per_read[tool][cls] = spent / max(n, 1) * 1e6 if spent > 0 else None
            strata[cls] = edit_strata(sam.with_suffix(".seedmap.sam"))
        totals = {tool: sum((us or 0.0) * classes[c][1] for c, us in got.items()) for tool, got in per_read.items()}

        rows = []
        for cls in CLASSES:
            n = classes[cls][1]
            s_us, y_us = per_read["seedmap"][cls], per_read["yara"].get(cls)
            nm = strata[cls]
            dist = " ".join(f"{k}:{100 * nm[k] / max(n, 1):.0f}%" for k in sorted(nm))
            ratio = f"{s_us / y_us:.2f}x" if s_us is not None and y_us is not None else "-"
            rows.append([cls, str(n), _us(s_us), _us(y_us), ratio, _share(s_us, n, totals.get("seedmap")),
                         _share(y_us, n, totals.get("yara")), dist])
        print(f"\n{args.size:g} Mbp, {args.reads} reads of {args.read_length} bp, e = {args.edits}, -t {t}, "
              f"mode {mode}; fixed CPU s: " + ", ".join(f"{k} {v:.2f}" for k, v in fixed.items()))
        print(markdown_table(["class", "reads", "seedmap us/read", "yara us/read", "seedmap / yara",
                              "share of seedmap", "share of yara", "seedmap primaries by NM"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
