#!/usr/bin/env python3
"""seedmap against yara and bwa mem on human-like synthetic genomes (issue 34): young Alu/L1 subfamilies and
segmental duplications (synthetic_genome.py, seed 7) make reads with many close locations.

For each genome size, in one run: the genome, READS simulated reads (genome_scale.simulate_reads: 100 bp,
either strand, 0-5 edits), then

- every seedmap engine (--kinds): index build (wall time, peak RSS, size on disk), all-mapping at e = 5 and
  --best (wall time, peak RSS);
- yara (yara_indexer; yara_mapper -e 5 -s 5 -sa record for all-mapping, -e 5 for its best mode; -e/-s are
  percentages of the read length, 5 edits at 100 bp; the default sensitivity, "-y full" is 100x slower here)
  and bwa mem (bwa index; bwa mem): index build, size, map time and peak RSS.

Recall: the truth is the fm all-mapping SAM (else the first engine's that ran). A read counts as found when
every record of a seedmap --best run (its best locations), or the primary record of yara's best mode and of
bwa mem, lies within TOLERANCE bases (leftmost base of the alignment with its clips, same sequence and
strand) of one of the read's truth locations; recall = found / reads the truth maps. "best stratum": the
primary is one of the read's fewest-edit truth locations. All-mapping runs: the truth locations they report.
seedmap's all-mapping SAMs are compared record for record across engines (@PG aside: genome_scale's digest).

With --rounds N every mapping run is repeated N times, all of them in turn (seedmap's engines, yara, bwa, then
again), and each row keeps its fastest round (walls_s in the raw results lists them all).

Prints a markdown table per size, then time, memory and build ratios of each seedmap engine (the default
engine first) to yara; raw results go to WORK/results.json (rows of other sizes from earlier runs are kept).
A missing tool is skipped with a note, a failing command is an error row. Without --keep the indexes and
SAMs of a size are removed before the next size; with it they stay and an index found is used, not rebuilt
(its build figures come from the earlier results, where they are).

    python benchmarks/human_like.py                                   # 250 Mbp and 1 Gbp, 20,000 reads
    python benchmarks/human_like.py --sizes 5 --reads 2000            # a quick look (5 Mbp)
    python benchmarks/human_like.py --sizes 250 --skip bwa --kinds fm,neighborhood --keep
    python benchmarks/human_like.py --sizes 1000 --kinds fm --skip bwa --keep --rounds 3
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import (  # noqa: E402
    DEFAULT_WORK,
    CommandFailed,
    fastest_rounds,
    find_exe,
    markdown_table,
    run_timed,
    seedmap_prefix,
)
from genome_scale import READ_LENGTH, disk_bytes, records_digest, simulate_reads  # noqa: E402

KINDS = ("fm", "neighborhood", "kmer")
TOOLS = ("yara", "bwa")
EDITS = 5
TOLERANCE = 10  # bases between a record's clipped-in start and a truth location
SEED = 7
POS_BITS = 33  # a key: (read, sequence, strand) << POS_BITS | leftmost base
CIGAR_CLIP = re.compile(rb"^(\d+)[SH]")


# ------------------------------------------------------------------------------------------- SAM reading


class Locations:
    """The mapped records of a SAM as sorted keys ((read, sequence, strand) << POS_BITS | start, where start is
    POS minus a leading clip), with NM (-1 when absent) and whether the record is the read's primary."""

    def __init__(self, sam: Path, reads: dict[bytes, int], refs: dict[bytes, int]) -> None:
        keys, nms, primary = [], [], []
        with open(sam, "rb") as fh:
            for line in fh:
                if line[:1] == b"@":
                    continue
                f = line.split(b"\t", 11)
                flag = int(f[1])
                if flag & 4:
                    continue
                read = reads.setdefault(f[0].split(b"/")[0], len(reads))
                ref = refs.setdefault(f[2], len(refs))
                clip = CIGAR_CLIP.match(f[5])
                start = int(f[3]) - (int(clip.group(1)) if clip else 0)
                nm = re.search(rb"\tNM:i:(\d+)", line)
                keys.append((((read * 64 + ref) * 2 + bool(flag & 16)) << POS_BITS) | max(start, 0))
                nms.append(int(nm.group(1)) if nm else -1)
                primary.append(not flag & (256 | 2048))
        if len(refs) > 64 or len(reads) > 1 << (63 - POS_BITS - 7):
            raise ValueError("more than 64 reference sequences or 2^23 reads: widen the key")
        order = np.argsort(np.array(keys, dtype=np.int64), kind="stable")
        self.keys = np.array(keys, dtype=np.int64)[order]
        self.nm = np.array(nms, dtype=np.int64)[order]
        self.primary = np.array(primary, dtype=bool)[order]
        self.read = self.keys >> POS_BITS >> 7  # (sequence, strand) take 7 bits

    def best_stratum(self) -> np.ndarray:
        """Keys of each read's fewest-edit records (all records when NM is missing)."""
        if self.keys.size == 0:
            return self.keys
        order = np.lexsort((self.nm, self.read))
        read, nm = self.read[order], self.nm[order]
        first = np.r_[True, read[1:] != read[:-1]]
        least = np.maximum.accumulate(np.where(first, np.arange(read.size), 0))  # each read's first (fewest)
        return np.sort(self.keys[order][nm == nm[least]])


def near(query: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """For each key of query, whether truth holds a key of the same read, sequence and strand within
    TOLERANCE bases."""
    if truth.size == 0 or query.size == 0:
        return np.zeros(query.size, dtype=bool)
    group = query >> POS_BITS << POS_BITS
    i = np.searchsorted(truth, np.maximum(query - TOLERANCE, group))
    hit = np.minimum(i, truth.size - 1)
    return (i < truth.size) & (truth[hit] <= query + TOLERANCE) & (truth[hit] >> POS_BITS << POS_BITS == group)


# ------------------------------------------------------------------------------------------- runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="250,1000", help="genome sizes in Mbp (default %(default)s)")
    ap.add_argument("--reads", type=int, default=20_000, help="simulated reads (default %(default)s)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="seedmap engines (default %(default)s)")
    ap.add_argument("--skip", default="", help="comma-separated tools to leave out: yara, bwa")
    ap.add_argument("--threads", type=int, default=2, help="threads for every mapper (default %(default)s)")
    ap.add_argument("--max-memory", default="8G", help="seedmap index --max-memory, neighborhood (default %(default)s)")
    # The fm index as a user builds it by default (its limit: three quarters of the machine's memory): on a 24 GB
    # machine one segment at 1 Gbp (632 s, 7.2 GB peak; 4G: three segments, --best 10-15 % slower).
    ap.add_argument("--fm-max-memory", default="", help="seedmap index --max-memory, fm (default: seedmap's own)")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK / "human_like", help="scratch dir (default %(default)s)")
    ap.add_argument("--seedmap", help="command prefix for seedmap (default: the installed seedmap)")
    ap.add_argument("--keep", action="store_true", help="keep indexes and SAMs; use indexes already built")
    ap.add_argument("--rounds", type=int, default=1, help="times each mapping runs, in turn with the others; the "
                    "table shows the fastest (default %(default)s; this machine's speed moves within minutes)")
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    sizes = [float(s) for s in args.sizes.split(",") if s]
    kinds = [k for k in args.kinds.split(",") if k]
    skip = set(filter(None, args.skip.split(",")))
    saved = work / "results.json"
    earlier = json.loads(saved.read_text()) if saved.exists() else []
    results = [r for r in earlier if r.get("size_mbp") not in sizes]
    seedmap = seedmap_prefix(args.seedmap)
    if not shutil.which(seedmap[0]):
        print(f"# {seedmap[0]} not found: no seedmap runs", file=sys.stderr)
        kinds = []
    tools = {}
    for tool, exes in (("yara", ("yara_indexer", "yara_mapper")), ("bwa", ("bwa",))):
        found = [find_exe(e) for e in exes]
        if tool in skip:
            continue
        if None in found:
            print(f"# {tool}: {', '.join(e for e, f in zip(exes, found, strict=True) if f is None)} not found, "
                  "skipped", file=sys.stderr)
            continue
        tools[tool] = found
    warm_up(seedmap, kinds, work)
    for size in sizes:
        rows = run_size(args, size, kinds, tools, seedmap, work, earlier)
        results += rows
        saved.write_text(json.dumps(results, indent=1))
        report(size, rows, kinds)
    print(f"\nraw results: {saved}")
    return 0


def warm_up(seedmap: list[str], kinds: list[str], work: Path) -> None:
    """Index and map a tiny genome with every engine, untimed: numba's caches are then filled and no timed
    run compiles."""
    d = work / "warmup"
    d.mkdir(exist_ok=True)
    fasta, reads = d / "tiny.fa", d / "tiny.fq"
    try:
        if not fasta.exists():
            subprocess.run([sys.executable, str(Path(__file__).with_name("synthetic_genome.py")), "0.2", str(fasta),
                            "--seed", str(SEED)], check=True, capture_output=True)
        if not reads.exists():
            simulate_reads(fasta, reads, 200, seed=1)
        for kind in kinds:
            index = d / f"idx.{kind}"
            run_timed([*seedmap, "index", str(fasta), "--kind", kind, "-o", str(index), "-q"], d / "warmup.log")
            for extra in ([], ["--best"]):
                run_timed([*seedmap, "map", str(fasta), str(reads), "--engine", kind, "--index", str(index), "-e",
                           str(EDITS), "-t", "2", "-q", "-o", str(d / "out.sam"), *extra], d / "warmup.log")
    except (CommandFailed, OSError, subprocess.CalledProcessError) as exc:
        print(f"# warm-up: {exc}", file=sys.stderr)


def run_size(args: argparse.Namespace, size: float, kinds: list[str], tools: dict[str, list[str]],
             seedmap: list[str], work: Path, earlier: list[dict]) -> list[dict]:
    """Every run on the genome of `size` Mbp: rows of the table (dicts, as saved)."""
    d = work / f"g{size:g}"
    d.mkdir(exist_ok=True)
    log = d / "runs.log"
    fasta = d / f"synth{size:g}.fa"
    reads = d / f"reads{args.reads}.fq"
    base = {"size_mbp": size, "reads": args.reads, "threads": args.threads}
    try:
        if not fasta.exists():
            tmp = fasta.with_suffix(".tmp.fa")
            subprocess.run([sys.executable, str(Path(__file__).with_name("synthetic_genome.py")), f"{size:g}",
                            str(tmp), "--seed", str(SEED), "--bed", str(d / f"synth{size:g}.bed")], check=True)
            tmp.rename(fasta)
        if not reads.exists():
            tmp = reads.with_suffix(".tmp.fq")
            simulate_reads(fasta, tmp, args.reads, seed=round(size * 1000))
            tmp.rename(reads)
    except Exception as exc:  # fail soft: an error row
        return [{**base, "tool": "genome", "mode": "", "error": f"{type(exc).__name__}: {exc}"}]
    t = str(args.threads)
    rows: list[dict] = []
    sams: dict[tuple[str, str], Path] = {}

    def build(tool: str, index: Path, exists: Path, cmd: list[str]) -> dict | None:
        """Index figures (reused from `earlier` when --keep finds the index), or None after an error row."""
        if args.keep and exists.exists():
            old = [r for r in earlier if r.get("size_mbp") == size and r.get("tool") == tool and "build_s" in r]
            fig = {k: old[-1][k] for k in ("build_s", "build_peak_mb") if old}
            return {**fig, "index_mb": index_mb(index), "reused_index": True}
        try:
            b = run_timed(cmd, log)
        except (CommandFailed, OSError) as exc:
            rows.append({**base, "tool": tool, "mode": "index", "error": str(exc)})
            print(f"# {exc}", file=sys.stderr)
            return None
        return {"build_s": b.wall_s, "build_peak_mb": b.peak_mb, "index_mb": index_mb(index)}

    jobs: list[tuple[dict, list[str], Path, bool]] = []

    def mapping(tool: str, mode: str, fig: dict, cmd: list[str], sam: Path, stdout: bool = False) -> None:
        jobs.append(({**base, "tool": tool, "mode": mode, **fig}, cmd, sam, stdout))

    def run_jobs() -> None:
        """Every mapping run, args.rounds times in turn (benchutil.fastest_rounds)."""
        round_of: dict[int, int] = {}

        def done(row: dict, sam: Path) -> None:
            sams[(row["tool"], row["mode"])] = sam
            round_of[id(row)] = round_of.get(id(row), 0) + 1
            if round_of[id(row)] == args.rounds:
                print(json.dumps(row), flush=True)

        fastest_rounds(jobs, args.rounds, log, done)
        rows.extend(row for row, *_ in jobs)

    for kind in kinds:
        index = d / f"idx.{kind}"
        cmd = [*seedmap, "index", str(fasta), "--kind", kind, "-o", str(index), "-q"]
        limit = {"neighborhood": args.max_memory, "fm": args.fm_max_memory}.get(kind)
        if limit:
            cmd += ["--max-memory", limit]
        if not (args.keep and (index / "header.json").exists()):
            shutil.rmtree(index, ignore_errors=True)
        fig = build(f"seedmap {kind}", index, index / "header.json", cmd)
        if fig is None:
            continue
        for mode, extra in (("all", []), ("best", ["--best"])):
            sam = d / f"{kind}.{mode}.sam"
            mapping(f"seedmap {kind}", mode, fig, [*seedmap, "map", str(fasta), str(reads), "--engine", kind,
                                                   "--index", str(index), "-e", str(EDITS), "-t", t, "-q",
                                                   "-o", str(sam), *extra], sam)
    if "yara" in tools:
        indexer, mapper = tools["yara"]
        index = d / "yara_idx"
        fig = build("yara", index, Path(f"{index}.txt.size"), [indexer, "-o", str(index), str(fasta)])
        pct = str(math.ceil(100 * EDITS / READ_LENGTH))
        if fig is not None:
            for mode, extra in (("all", ["-s", pct, "-sa", "record"]), ("best", [])):
                sam = d / f"yara.{mode}.sam"
                mapping("yara", mode, fig, [mapper, "-t", t, "-e", pct, *extra, "-o", str(sam), str(index),
                                            str(reads)], sam)
    if "bwa" in tools:
        (bwa,) = tools["bwa"]
        index = d / "bwa_idx"
        fig = build("bwa mem", index, Path(f"{index}.bwt"), [bwa, "index", "-p", str(index), str(fasta)])
        if fig is not None:
            sam = d / "bwa.sam"
            mapping("bwa mem", "best", fig, [bwa, "mem", "-t", t, str(index), str(reads)], sam, stdout=True)
    run_jobs()
    try:
        score(rows, sams, kinds)
    except Exception:  # fail soft: the timings stand without recall
        print(f"# recall not computed:\n{traceback.format_exc()}", file=sys.stderr)
    if not args.keep:
        for path in [*sams.values(), *d.glob("yara_idx.*"), *d.glob("bwa_idx.*")]:
            path.unlink(missing_ok=True)
        for kind in kinds:
            shutil.rmtree(d / f"idx.{kind}", ignore_errors=True)
    return rows


def index_mb(index: Path) -> float:
    """An index's size on disk: its directory (seedmap), or the files PREFIX.* (yara, bwa)."""
    if index.is_dir():
        return disk_bytes(index) / 2**20
    return sum(f.stat().st_size for f in index.parent.glob(index.name + ".*") if f.is_file()) / 2**20


def score(rows: list[dict], sams: dict[tuple[str, str], Path], kinds: list[str]) -> None:
    """Recall of every row against the truth all-mapping SAM, and the seedmap SAMs' digests."""
    truth_kind = next((k for k in ["fm", *kinds] if (f"seedmap {k}", "all") in sams), None)
    for row in rows:
        key = (row["tool"], row["mode"])
        if row["tool"].startswith("seedmap") and key in sams:
            row["digest"] = records_digest(sams[key])
    if truth_kind is None:
        return
    reads: dict[bytes, int] = {}
    refs: dict[bytes, int] = {}
    truth = Locations(sams[(f"seedmap {truth_kind}", "all")], reads, refs)
    best = truth.best_stratum()
    mapped = int(np.unique(truth.read).size)
    for row in rows:
        key = (row["tool"], row["mode"])
        if key not in sams or "error" in row:
            continue
        row["truth"] = f"seedmap {truth_kind} all"
        row["truth_mapped"] = mapped
        if key == (f"seedmap {truth_kind}", "all"):
            row["truth_locations"] = int(truth.keys.size)
            continue
        run = Locations(sams[key], reads, refs)
        if row["mode"] == "all":
            row["locations_found"] = int(near(truth.keys, run.keys).sum())
            row["truth_locations"] = int(truth.keys.size)
            continue
        ok = near(run.keys, truth.keys)
        if row["tool"].startswith("seedmap"):  # every record: the read's best locations
            reads_with = np.unique(run.read)
            reads_bad = np.unique(run.read[~ok])
            row["found"] = int(np.setdiff1d(reads_with, reads_bad).size)
        else:  # the primary
            row["found"] = int(ok[run.primary].sum())
        row["mapped_by_run"] = int(np.unique(run.read).size)
        row["best_stratum"] = int(near(run.keys[run.primary], best).sum())


# ------------------------------------------------------------------------------------------- report


def _gb(mb: float | None) -> str:
    return "" if mb is None else f"{mb / 1024:.2f}"


def _s(s: float | None) -> str:
    return "" if s is None else f"{s:.1f}"


def report(size: float, rows: list[dict], kinds: list[str]) -> None:
    print(f"\n### {size:g} Mbp synthetic genome (seed {SEED}), {rows[0]['reads'] if rows else 0:,} reads of "
          f"{READ_LENGTH} bp, e = {EDITS}, -t {rows[0]['threads'] if rows else ''}\n")
    truth_digest = None
    truth = next((r["truth"] for r in rows if "truth" in r), None)
    for r in rows:
        if truth and f"{r['tool']} {r['mode']}" == truth:
            truth_digest = r.get("digest")
    table = []
    for r in rows:
        if "error" in r:
            table.append([r["tool"], r["mode"], "error", "", "", "", "", r["error"][:90], "", ""])
            continue
        if "found" in r:
            recall = f"{r['found']}/{r['truth_mapped']} = {r['found'] / max(r['truth_mapped'], 1):.4f}"
            stratum = f"{r['best_stratum'] / max(r['truth_mapped'], 1):.4f}"
        elif "locations_found" in r:
            recall = f"{r['locations_found']}/{r['truth_locations']} locations"
            stratum = ""
        elif "truth_locations" in r:
            recall = f"truth: {r['truth_mapped']} reads, {r['truth_locations']} locations"
            stratum = ""
        else:
            recall = stratum = ""
        records = ""
        if r["mode"] == "all" and "digest" in r and truth_digest:
            records = "same as truth" if r["digest"] == truth_digest else "DIFFERENT"
        elif "digest" in r:
            records = r["digest"]
        reused = " (reused)" if r.get("reused_index") else ""
        table.append([r["tool"], r["mode"], _s(r.get("wall_s")), _gb(r.get("peak_mb")), _gb(r.get("index_mb")),
                      _s(r.get("build_s")) + reused, _gb(r.get("build_peak_mb")), recall, stratum, records])
    print(markdown_table(["tool/engine", "mode", "wall s", "peak GB", "index GB", "build s", "build peak GB",
                          "recall", "best stratum", "records"], table))
    all_digests = {r["tool"]: r.get("digest") for r in rows if r["tool"].startswith("seedmap") and r["mode"] == "all"
                   and "error" not in r}
    if len(all_digests) > 1:
        same = len(set(all_digests.values())) == 1
        print(f"\nseedmap all-mapping records identical across engines ({', '.join(all_digests)}): "
              f"{'yes' if same else 'NO'}")
    print(f"recall: reads whose best locations (seedmap --best: every record; yara best, bwa mem: the primary) "
          f"are truth locations ({truth or 'no truth run'}; within {TOLERANCE} bases of the clipped-in start), "
          "over the reads the truth maps; best stratum: primary among the fewest-edit truth locations; "
          "all-mapping rows: truth locations reported.")
    ratios(rows, kinds, default_engine(size))


def default_engine(size_mbp: float) -> str:
    """The engine seedmap maps with when none is named, for a reference of this size (its FASTA's bytes)."""
    from seedmap.index import default_kind

    return default_kind.kind_for(int(size_mbp * 1e6))


def ratios(rows: list[dict], kinds: list[str], default: str) -> None:
    """Each engine's figures over yara's (the default engine first)."""
    ok = {(r["tool"], r["mode"]): r for r in rows if "error" not in r}
    yara_all, yara_best = ok.get(("yara", "all")), ok.get(("yara", "best"))
    engines = sorted(kinds, key=lambda k: k != default)
    if not (yara_all or yara_best) or not engines:
        return
    figures = (("all-mapping time", "all", "wall_s"), ("--best time", "best", "wall_s"),
               ("all-mapping peak RSS", "all", "peak_mb"), ("--best peak RSS", "best", "peak_mb"),
               ("index build time", "all", "build_s"), ("index build peak RSS", "all", "build_peak_mb"),
               ("index size", "all", "index_mb"))
    table = []
    for label, mode, key in figures:
        y = (yara_all if mode == "all" else yara_best) or {}
        cells = []
        for kind in engines:
            s = ok.get((f"seedmap {kind}", mode), {})
            cells.append(f"{s[key] / y[key]:.2f}x" if s.get(key) is not None and y.get(key) else "")
        table.append([label, *cells])
    if not any(cell for row in table for cell in row[1:]):
        return
    head = ["seedmap / yara", *(f"{k} (default)" if k == default else k for k in engines)]
    print()
    print(markdown_table(head, table))


if __name__ == "__main__":
    sys.exit(main())
