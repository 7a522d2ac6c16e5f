"""A new user's first runs (docs/compiling.md): `seedmap index` of the shipped example with an empty kernel
cache, then `seedmap map -t 2`, then the same map with the cache warm; and a map run that finds the cache
empty (index built earlier). Wall and CPU seconds (user + system, the compiling workers included) of each.

    python benchmarks/first_run.py [--rounds 3] [--src DIR ...]

Each --src is a seedmap source tree (a `src` directory; default this checkout's), run as `python -m seedmap`
with PYTHONPATH set to it: with several (say, an older commit's `git archive` beside this one), the rounds
alternate between them so that each meets the same neighbours. A fresh NUMBA_CACHE_DIR stands for a fresh
installation. "others" is the CPU time the rest of the machine used meanwhile (from /proc/stat): where it is
more than a few percent of the wall time times the cores, the wall time is not the command's alone.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from benchutil import RUN_ENV, run_timed

REPO = Path(__file__).resolve().parent.parent
STEPS = (("index, empty cache", "index"), ("first map", "map"), ("map, warm cache", "map"),
         ("map, empty cache", "map"))


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (Linux), None elsewhere."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def one_round(src: Path, work: Path, log: Path) -> list[tuple[str, float, float, float | None]]:
    """(step, wall, CPU, others' CPU) of each step, in a fresh directory with fresh caches."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for name in ("ref.fa.gz", "reads.fq.gz"):
        shutil.copy(REPO / "examples" / name, work / name)
    rows = []
    for k, (label, command) in enumerate(STEPS):
        cache = work / ("cache" if k < 3 else "cache-2")  # the last step: a second, empty cache
        env = {**RUN_ENV, "PYTHONPATH": str(src), "NUMBA_CACHE_DIR": str(cache)}
        args = (["index", "ref.fa.gz"] if command == "index"
                else ["map", "-t", "2", "ref.fa.gz", "reads.fq.gz", "-o", "ex.sam"])
        before = busy_seconds()
        t = run_timed([sys.executable, "-m", "seedmap", *args], log, cwd=work, env=env)
        after = busy_seconds()
        others = None if before is None else max(0.0, after - before - t.cpu_s)
        rows.append((label, t.wall_s, t.cpu_s, others))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", action="append", type=Path, help="a seedmap source tree (default: this checkout's src)")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    srcs = [p.resolve() for p in (args.src or [REPO / "src"])]
    results: dict[Path, list] = {s: [] for s in srcs}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for src in srcs:
                rows = one_round(src, Path(tmp) / "work", Path(tmp) / "log.txt")
                results[src].append(rows)
                print(f"round {r + 1}, {src}")
                print(f"  {'':24} {'wall s':>7} {'CPU s':>7} {'others s':>9}")
                for label, wall, cpu, others in rows:
                    print(f"  {label:24} {wall:7.2f} {cpu:7.2f} {'' if others is None else f'{others:9.1f}'}")
                first = rows[0][1] + rows[1][1]
                print(f"  {'index + first map':24} {first:7.2f} {rows[0][2] + rows[1][2]:7.2f}", flush=True)
    if args.rounds > 1:
        print("medians")
        for src, runs in results.items():
            print(f"  {src}")
            for k, (label, _) in enumerate(STEPS):
                walls = [run[k][1] for run in runs]
                cpus = [run[k][2] for run in runs]
                print(f"  {label:24} {statistics.median(walls):7.2f} {statistics.median(cpus):7.2f}")


if __name__ == "__main__":
    main()
