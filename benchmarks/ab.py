#!/usr/bin/env python3
"""A/B timing of two seedmap source trees on one `seedmap map` command, in alternating order.

A shared 2-core machine drifts by tens of percent within minutes, and the first run of a back-to-back
pair tends to be the slower one, so a change's effect shows only in same-round ratios taken in both orders.
Each round runs base and new once; odd rounds run base first, even rounds new first. Every run gets its
own `-o` SAM and `-v`, and the table gives per run: wall seconds, CPU seconds (user + system), peak RSS,
the candidates stage's CPU seconds (from `-v`; the search, summed over the worker threads), and the
records' digest (SAM without its header), which must agree between the trees unless the change
alters output. The summary gives each side's fastest and median run and the median of the per-round
new / base ratios.

`--base` is a git revision (checked out into a temporary worktree, removed at the end) or a directory
holding a seedmap `src/`; `--new` defaults to this checkout. Each tree maps once untimed first, so that
numba's kernel cache is filled and no timed run compiles.

    python benchmarks/ab.py --base HEAD~1 --rounds 4 -- ref.fa reads.fq --engine fm -e 5 -t 2 --best
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchutil import BENCH_DIR, RUN_ENV, CommandFailed, markdown_table, run_timed
from scaling import records_digest

REPO = BENCH_DIR.parent
CANDIDATES = re.compile(r"^\[seedmap\]\s+candidates\s+([0-9.]+)", re.MULTILINE)


def _tree(spec: str, tmp: Path, name: str) -> tuple[Path, bool]:
    """(source tree, made here): a directory as it is, else a git revision checked out into tmp."""
    path = Path(spec)
    if (path / "src" / "seedmap").is_dir():
        return path.resolve(), False
    out = tmp / name
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-f", str(out), spec], check=True,
                   capture_output=True)
    return out, True


def _run(tree: Path, args: list[str], sam: Path, log: Path) -> tuple[float, float, float, float, str]:
    """(wall s, CPU s, peak RSS GiB, candidates CPU s or nan, records digest) of one map run."""
    env = dict(RUN_ENV, PYTHONPATH=str(tree / "src"))
    log.unlink(missing_ok=True)
    t = run_timed([sys.executable, "-m", "seedmap", "map", *args, "-v", "-o", str(sam)], log, env=env)
    found = CANDIDATES.findall(log.read_text())
    cand = float(found[-1]) if found else float("nan")
    return t.wall_s, t.cpu_s, t.peak_mb / 1024, cand, records_digest(sam)[:8]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="git revision or directory with src/seedmap (the reference)")
    ap.add_argument("--new", default=str(REPO), help="git revision or directory (default: this checkout)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of one run each (default: %(default)s)")
    ap.add_argument("--no-warm", action="store_true", help="skip the untimed first run of each tree")
    ap.add_argument("map_args", nargs=argparse.REMAINDER, help="-- then the arguments of `seedmap map` (no -o)")
    args = ap.parse_args(argv)
    map_args = args.map_args[1:] if args.map_args[:1] == ["--"] else args.map_args
    if not map_args or "-o" in map_args or "--output" in map_args:
        ap.error("give the map arguments after --, without -o (each run writes its own SAM)")
    with tempfile.TemporaryDirectory(prefix="seedmap-ab-") as tmp_name:
        tmp = Path(tmp_name)
        made: list[Path] = []
        try:
            trees = {}
            for side in ("base", "new"):
                trees[side], fresh = _tree(getattr(args, side), tmp, side)
                if fresh:
                    made.append(trees[side])
            if not args.no_warm:
                for side, tree in trees.items():
                    _run(tree, map_args, tmp / f"{side}.sam", tmp / f"{side}.log")
            rows, results = [], {"base": [], "new": []}
            for r in range(args.rounds):
                order = ("base", "new") if r % 2 == 0 else ("new", "base")
                for side in order:
                    got = _run(trees[side], map_args, tmp / f"{side}.sam", tmp / f"{side}.log")
                    results[side].append(got)
                    rows.append([str(r + 1), side, f"{got[0]:.2f}", f"{got[1]:.2f}", f"{got[2]:.2f}", f"{got[3]:.2f}",
                                 got[4]])
        except (CommandFailed, subprocess.CalledProcessError) as exc:
            print(f"ab: {exc}", file=sys.stderr)
            return 1
        finally:
            for tree in made:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                               capture_output=True)
    print(markdown_table(["round", "tree", "wall s", "CPU s", "peak GiB", "candidates CPU s", "records"], rows))
    summary = []
    for i, name in ((0, "wall s"), (1, "CPU s"), (3, "candidates CPU s")):
        ratios = [n[i] / b[i] for b, n in zip(results["base"], results["new"], strict=True) if b[i] > 0]
        spread = [f"{min(x[i] for x in results[s]):.2f} / {statistics.median(x[i] for x in results[s]):.2f}"
                  for s in ("base", "new")]
        summary.append([name, *spread, f"{statistics.median(ratios):.3f}" if ratios else "-"])
    print()
    print(markdown_table(["measure", "base fastest / median", "new fastest / median", "new / base (median of rounds)"],
                         summary))
    digests = {x[4] for side in results.values() for x in side}
    print(f"\nrecords: {'identical' if len(digests) == 1 else 'DIFFER: ' + ', '.join(sorted(digests))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
