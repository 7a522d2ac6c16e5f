#!/usr/bin/env python3
"""`seedmap map --dask local:N` against `seedmap map -t N` on the same data, in the same run.

Each round maps the reads twice, once each way (the order alternating from round to round, so neither
side always runs on a warmer cache), and checks that the records are the same. reads/s is seedmap's own
figure (its mapping clock: after set-up and warm-up, so without the local cluster's start either);
wall s is the whole command, cluster start and stop included. On a machine shared with other work the
wall times follow the neighbours' load, so each side also maps the first --head reads alone: the CPU
time of all processes beyond that run's, per 100k reads, is what mapping costs each way, whatever the
load.

Then the cost of moving one batch through Dask, on a local cluster of N workers: a task that takes a
raw batch of the input (as the client sends it) and returns as many bytes as one batch's output (as the
dask run measured them), run one at a time; minus the same task with nothing to carry; and what pickling
both ways costs. Against the mean worker time per batch, that is the overhead per batch.

    python benchmarks/dask.py --reference benchmarks/work/dask/ragout16.fa --reads benchmarks/work/dask/r300k.fq
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import statistics
import sys
import time
from pathlib import Path

# This file's folder, first on sys.path when it runs as a script, would make `import dask` import this file:
# the folder goes last (benchutil is still found; the local cluster's processes inherit the order).
_here = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here] + [str(_here)]

from benchutil import DEFAULT_WORK, markdown_table, run_timed, seedmap_prefix  # noqa: E402
from scaling import records_digest  # noqa: E402

SUMMARY = re.compile(r"mapped (\d+) (?:reads|pairs).*; (\d+) reads/s \(([\d.]+) s mapping")
DASK_LINE = re.compile(r"dask: (\d+) batches, ([\d.]+) MB sent and ([\d.]+) MB received per batch")
BUSY = re.compile(r"workers busy: (\d+) x ([\d.]+) s, (\d+)%")


def mapped(log: Path) -> dict:
    text = log.read_text()
    m = SUMMARY.findall(text)[-1]
    out = {"reads": int(m[0]), "reads_s": int(m[1]), "mapping_s": float(m[2])}
    d, b = DASK_LINE.findall(text), BUSY.findall(text)
    if d:
        out.update(batches=int(d[-1][0]), sent_mb=float(d[-1][1]), received_mb=float(d[-1][2]))
        workers, wall, pct = b[-1]
        out["worker_s_per_batch"] = int(workers) * float(wall) * int(pct) / 100 / out["batches"]
    return out


def _children_cpu() -> float:
    """CPU seconds of every finished child process and its waited-for descendants (Dask's workers too)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _echo(raw: object, size: int) -> bytes:
    return bytes(size)


def transfer_costs(reads: Path, batch_size: int, workers: int, result_bytes: int, n: int) -> dict:
    """Milliseconds per batch: the round trip of a task carrying a raw batch there and a result's bytes
    back, of an empty task, and pickling both (what Dask's serialisation does with them, at most)."""
    import dask
    from distributed import Client, LocalCluster

    from seedmap.io.chunks import raw_batches
    from seedmap.pipeline.dask_run import LOCAL_CONFIG

    raw = next(raw_batches(str(reads), batch_size))
    with (dask.config.set(LOCAL_CONFIG),
          LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                       memory_limit=0) as cluster, Client(cluster) as client):

        def trip(*args: object) -> float:
            times = []
            for k in range(n + 2):
                t = time.perf_counter()
                client.submit(_echo, *args, pure=False).result()
                if k >= 2:  # the first ones warm the workers up
                    times.append(time.perf_counter() - t)
            return 1000 * statistics.median(times)

        empty = trip(None, 0)
        loaded = trip(raw, result_bytes)
    t = time.perf_counter()
    for _ in range(n):
        pickle.loads(pickle.dumps(raw, protocol=5))
        pickle.loads(pickle.dumps(bytes(result_bytes), protocol=5))
    pickling = 1000 * (time.perf_counter() - t) / n
    return {"empty_ms": empty, "loaded_ms": loaded, "pickle_ms": pickling}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", type=Path, required=True, help="indexed reference FASTA (REFERENCE.smi beside it)")
    ap.add_argument("--reads", type=Path, required=True, help="FASTQ reads")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK / "dask", help="scratch dir (default: %(default)s)")
    ap.add_argument("--workers", type=int, default=2, help="N: -t N against --dask local:N (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of both runs (default %(default)s)")
    ap.add_argument("--batch-size", type=int, default=10_000)
    ap.add_argument("--head", type=int, default=10_000,
                    help="reads of the short runs that measure the fixed CPU costs (default %(default)s)")
    ap.add_argument("--trips", type=int, default=20, help="round trips timed per kind of task (default %(default)s)")
    ap.add_argument("--seedmap-cmd", help="how to invoke seedmap, e.g. 'python -m seedmap'")
    args = ap.parse_args(argv)

    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    seedmap = seedmap_prefix(args.seedmap_cmd)
    common = ["map", "-v", "--batch-size", str(args.batch_size)]
    sides = {
        "local": [*common, "-t", str(args.workers)],
        "dask": [*common, "-t", "1", "--dask", f"local:{args.workers}"],
    }
    head = work / "head.fq"  # the first reads: the same fixed costs (start, set-up, warm-up), little mapping
    with open(args.reads, "rb") as src, open(head, "wb") as dst:
        dst.writelines(line for _, line in zip(range(4 * args.head), src, strict=False))

    def run(side: str, reads: Path, log: Path) -> dict:
        sam = work / f"{side}.sam"
        log.unlink(missing_ok=True)
        cpu = _children_cpu()
        timing = run_timed([*seedmap, *sides[side], str(args.reference), str(reads), "-o", str(sam)], log)
        out = {**mapped(log), "wall": timing.wall_s, "peak_mb": timing.peak_mb, "cpu": _children_cpu() - cpu,
               "digest": records_digest(sam)}
        sam.unlink()
        return out

    rows, ratios, cpu_ratios, digests, dask_runs = [], [], [], set(), []
    for r in range(args.rounds):
        order = ["local", "dask"] if r % 2 == 0 else ["dask", "local"]
        got = {}
        for side in order:
            small = run(side, head, work / f"{side}-head-{r}.log")
            got[side] = run(side, args.reads, work / f"{side}-{r}.log")
            digests.add(got[side]["digest"])
            got[side]["cpu_per_100k"] = 1e5 * (got[side]["cpu"] - small["cpu"]) / (got[side]["reads"] - small["reads"])
        dask_runs.append(got["dask"])
        ratio = got["dask"]["reads_s"] / got["local"]["reads_s"]
        ratios.append(ratio)
        cpu_ratios.append(got["dask"]["cpu_per_100k"] / got["local"]["cpu_per_100k"])
        for side in order:
            g = got[side]
            rows.append([str(r + 1), " ".join(sides[side][4:]), f"{g['reads_s']:,}", f"{g['mapping_s']:.1f}",
                         f"{g['wall']:.1f}", f"{g['cpu']:.1f}", f"{g['cpu_per_100k']:.2f}", f"{g['peak_mb']:.0f}",
                         f"{ratio:.3f}" if side == "dask" else ""])
    cores = os.cpu_count() or 1
    print(f"{args.reads.name} on {args.reference.name}, batches of {args.batch_size:,} reads, {cores} cores")
    print(markdown_table(["round", "mode", "reads/s", "mapping s", "wall s", "CPU s", "CPU s / 100k reads",
                          "peak MB", "reads/s dask / local"], rows))
    print(f"(wall s and CPU s: the whole command, set-up, warm-up and the local cluster's start and stop included, "
          f"CPU s of every process; CPU s / 100k reads: over the reads beyond the first {args.head:,}, from a run "
          "on those alone, so without the fixed costs)")
    print(f"\nreads/s of dask / local: mean {statistics.mean(ratios):.3f} over {len(ratios)} rounds; CPU per read "
          f"of dask / local: {statistics.mean(cpu_ratios):.3f}; records "
          f"{'the same' if len(digests) == 1 else 'DIFFERENT'} in every run")

    d = dask_runs[-1]
    costs = transfer_costs(args.reads, args.batch_size, args.workers, int(d["received_mb"] * 1e6), args.trips)
    per_batch = 1000 * statistics.mean(x["worker_s_per_batch"] for x in dask_runs)
    moved = costs["loaded_ms"] - costs["empty_ms"]
    print(f"\nper batch ({d['sent_mb']:.2f} MB of reads there, {d['received_mb']:.2f} MB of records back; "
          f"{d['batches']} batches):")
    print(markdown_table(["what", "ms per batch", "of a batch's mapping"], [
        ["mapping on a worker (mean)", f"{per_batch:.1f}", "100%"],
        ["empty task, round trip", f"{costs['empty_ms']:.1f}", f"{100 * costs['empty_ms'] / per_batch:.1f}%"],
        ["carrying the batch both ways, more", f"{moved:.1f}", f"{100 * moved / per_batch:.1f}%"],
        ["  of which pickling both ways (client side)", f"{costs['pickle_ms']:.1f}",
         f"{100 * costs['pickle_ms'] / per_batch:.1f}%"],
        ["total overhead (loaded round trip)", f"{costs['loaded_ms']:.1f}",
         f"{100 * costs['loaded_ms'] / per_batch:.1f}%"],
    ]))
    print("(the round trips run one task at a time; in a run, DEPTH x workers batches are in flight, so the "
          "transfers overlap the mapping)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
