#!/usr/bin/env python3
"""All-mapping benchmark on E. coli K-12 MG1655: seedmap vs yara, bwa mem, bowtie2, razers3.

Reference: MG1655 from Debian's ragout-examples. Reads: mason_simulator (Illumina model, fixed
seed), single-end. Every tool gets the same thread count; index building and mapping are timed
separately (wall time; peak RSS from GNU time, see benchutil.run_timed).

razers3 (-rr 100, i.e. fully sensitive for the given identity) is the truth set. A truth location
counts as found when the tool reports the same read on the same rname and strand with a start
within --slack bp. Starts are normalised (POS minus leading clips, plus a leading deletion; see
alignment_start), so bwa mem's local clipping does not hide hits.

  recall_locs  fraction of razers3 locations found
  recall_best  fraction of razers3-mapped reads whose best (min NM, any tie) location is found

Tool command lines (E = --e, L = read length, T = --threads):
  seedmap  seedmap index ref.fa ; seedmap map -t T -e E ref.fa reads.fq -o seedmap.sam
  seedmap-kmer  seedmap index --kind kmer ref.fa ; seedmap map --engine kmer -t T -e E ref.fa reads.fq ...
  seedmap-fm    seedmap index --kind fm ref.fa ; seedmap map --engine fm -t T -e E ref.fa reads.fq ...
  seedmap-bpr   seedmap index ref.fa ; seedmap map --filter bpr --fe 1 -t T -e E ref.fa reads.fq ...
  seedmap-ph    seedmap index --ph ref.fa ; seedmap map --filter ph -t T -e E ref.fa reads.fq ...
                (every seedmap variant's sorted SAM records are compared with the default's)
  yara     yara_indexer -o idx ref.fa ;
           yara_mapper -t T -e ceil(100E/L) -s ceil(100E/L) -y full -sa record -o yara.sam idx reads.fq
           (-s = strata equal to -e reports every alignment up to the error rate, not just the
           best stratum; -y full = full sensitivity; -sa record = secondaries as flag-256 records)
  bwa      bwa index -p idx ref.fa ; bwa mem -t T -a idx reads.fq > bwa.sam
  bowtie2  bowtie2-build --threads T ref.fa idx ;
           bowtie2 -p T -a --very-sensitive --end-to-end -x idx -U reads.fq -S bowtie2.sam
           (default end-to-end --score-min L,-0.6,-0.6 = -60.6 at 100 bp admits any 5 edits:
           5 gaps cost at most 40, 5 mismatches at most 30)
  razers3  razers3 -tc T -i 100(1-E/L) -rr 100 -m 100000 -o razers3.sam ref.fa reads.fq
           (-i rounded down: razers3 allows floor((100-i)/100 * L) errors)
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import math
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchutil import (
    DEFAULT_WORK,
    CommandFailed,
    Timing,
    find_exe,
    fresh_dir,
    markdown_table,
    ragout_files,
    read_fasta,
    run_timed,
    seedmap_prefix,
    write_fasta_record,
)

TOOLS = ("seedmap", "seedmap-kmer", "seedmap-fm", "seedmap-bpr", "seedmap-ph", "yara", "bwa", "bowtie2", "razers3")
SEEDMAP_VARIANTS = tuple(t for t in TOOLS if t.startswith("seedmap-"))
TRUTH = "razers3"
START = time.perf_counter()

Key = tuple[str, str, bool]  # (read name, rname, reverse strand)
Hits = dict[Key, list[tuple[int, int]]]  # key -> [(normalised start, NM or -1)]


@dataclass
class ToolPlan:
    name: str
    exes: list[str]  # executables that must exist, for the skip check
    index_cmds: list[list[str]]
    map_cmd: list[str]
    sam: Path
    sam_on_stdout: bool = False


@dataclass
class ToolResult:
    name: str
    index: Timing | None = None
    map: Timing | None = None
    note: str = ""
    hits: Hits = field(default_factory=dict)
    mapped_reads: int = 0
    records: int = 0


Outcome = tuple[list[ToolResult], list[str]]  # per-tool results, notes for the report


# --------------------------------------------------------------------------- inputs


def prepare_reference(work: Path) -> Path:
    """Write MG1655 (the canonical E. coli K-12 reference) as plain FASTA into the work dir."""
    candidates = ragout_files("E.Coli/references/*.fasta*")
    if not candidates:
        sys.exit("E. coli FASTA not found: install Debian package ragout-examples")
    src = next((p for p in candidates if "MG1655" in p.name), candidates[0])
    ref = work / "ecoli.fa"
    if not ref.exists():
        tmp = ref.with_suffix(".tmp")
        with open(tmp, "w") as fh:
            for name, seq in read_fasta(src):
                write_fasta_record(fh, name, seq)
        tmp.rename(ref)
    return ref


def simulate_reads(ref: Path, work: Path, n: int, length: int, seed: int) -> Path:
    """Simulate single-end Illumina reads with mason; cached by (n, length, seed)."""
    reads = work / f"reads_n{n}_l{length}_s{seed}.fq"
    if reads.exists():
        return reads
    mason = find_exe("mason_simulator")
    if mason is None:
        sys.exit("mason_simulator not found: install Debian package seqan-apps")
    tmp = work / f"tmp_{reads.name}"  # keep .fq suffix, mason picks the format from it
    opts = {"-ir": ref, "-n": n, "--seed": seed, "--illumina-read-length": length, "-o": tmp}
    cmd = [mason, "-q", *(str(x) for kv in opts.items() for x in kv)]
    run_timed(cmd, work / "mason.log")
    tmp.rename(reads)
    return reads


# --------------------------------------------------------------------------- tool plans


def razers3_identity(e: int, length: int) -> str:
    # razers3 allows floor((100 - i) / 100 * L) errors; round i down so float noise cannot lose one.
    return f"{math.floor((100.0 - 100.0 * e / length) * 1e4) / 1e4:g}"


def yara_percent(e: int, length: int) -> str:
    # yara takes an integer percentage (0..10); round up so at least e errors are allowed.
    return str(min(10, math.ceil(100 * e / length)))


def make_plans(args: argparse.Namespace, ref: Path, reads: Path, work: Path) -> dict[str, ToolPlan]:
    """Index and map command lines per tool; see the module docstring for why these flags."""
    t, e, r = str(args.threads), str(args.e), str(reads)
    seedmap = seedmap_prefix(args.seedmap_cmd)
    sm_ref = str(work / "seedmap" / ref.name)  # private copy, so its index lands in a fresh dir
    km_ref = str(work / "seedmap-kmer" / ref.name)
    fm_ref = str(work / "seedmap-fm" / ref.name)
    bpr_ref = str(work / "seedmap-bpr" / ref.name)
    ph_ref = str(work / "seedmap-ph" / ref.name)
    idx = {tool: str(work / tool / "idx") for tool in TOOLS}
    sam = {tool: work / tool / f"{tool}.sam" for tool in TOOLS}
    pct = yara_percent(args.e, args.read_len)
    ident = razers3_identity(args.e, args.read_len)
    # fmt: off
    plans = [
        ToolPlan("seedmap", seedmap[:1],
                 [[*seedmap, "index", sm_ref]],
                 [*seedmap, "map", "-t", t, "-e", e, sm_ref, r, "-o", str(sam["seedmap"])],
                 sam["seedmap"]),
        ToolPlan("seedmap-kmer", seedmap[:1],
                 [[*seedmap, "index", "--kind", "kmer", km_ref]],
                 [*seedmap, "map", "--engine", "kmer", "-t", t, "-e", e, km_ref, r, "-o", str(sam["seedmap-kmer"])],
                 sam["seedmap-kmer"]),
        ToolPlan("seedmap-fm", seedmap[:1],
                 [[*seedmap, "index", "--kind", "fm", fm_ref]],
                 [*seedmap, "map", "--engine", "fm", "-t", t, "-e", e, fm_ref, r, "-o", str(sam["seedmap-fm"])],
                 sam["seedmap-fm"]),
        ToolPlan("seedmap-bpr", seedmap[:1],
                 [[*seedmap, "index", bpr_ref]],
                 [*seedmap, "map", "--filter", "bpr", "--fe", "1", "-t", t, "-e", e, bpr_ref, r,
                  "-o", str(sam["seedmap-bpr"])],
                 sam["seedmap-bpr"]),
        ToolPlan("seedmap-ph", seedmap[:1],
                 [[*seedmap, "index", "--ph", ph_ref]],
                 [*seedmap, "map", "--filter", "ph", "-t", t, "-e", e, ph_ref, r, "-o", str(sam["seedmap-ph"])],
                 sam["seedmap-ph"]),
        ToolPlan("yara", ["yara_indexer", "yara_mapper"],
                 [["yara_indexer", "-o", idx["yara"], str(ref)]],
                 ["yara_mapper", "-t", t, "-e", pct, "-s", pct, "-y", "full", "-sa", "record",
                  "-o", str(sam["yara"]), idx["yara"], r],
                 sam["yara"]),
        ToolPlan("bwa", ["bwa"],
                 [["bwa", "index", "-p", idx["bwa"], str(ref)]],
                 ["bwa", "mem", "-t", t, "-a", idx["bwa"], r],
                 sam["bwa"], sam_on_stdout=True),
        ToolPlan("bowtie2", ["bowtie2", "bowtie2-build"],
                 [["bowtie2-build", "--threads", t, str(ref), idx["bowtie2"]]],
                 ["bowtie2", "-p", t, "-a", "--very-sensitive", "--end-to-end", "-x", idx["bowtie2"],
                  "-U", r, "-S", str(sam["bowtie2"])],
                 sam["bowtie2"]),
        ToolPlan("razers3", ["razers3"],
                 [],  # no index step
                 ["razers3", "-tc", t, "-i", ident, "-rr", "100", "-m", str(args.razers3_max_hits),
                  "-o", str(sam["razers3"]), str(ref), r],
                 sam["razers3"]),
    ]
    # fmt: on
    return {p.name: p for p in plans}


def missing_exe(plan: ToolPlan) -> str | None:
    return next((exe for exe in plan.exes if find_exe(exe) is None), None)


def warmup_cmd(plan: ToolPlan, reads: Path, warm_reads: Path) -> list[str]:
    """The map command pointed at a small read subset and a throwaway SAM."""
    swap = {str(reads): str(warm_reads), str(plan.sam): str(plan.sam.with_suffix(".warmup.sam"))}
    return [swap.get(arg, arg) for arg in plan.map_cmd]


def run_tool(plan: ToolPlan, ref: Path, work: Path, warm_cmd: list[str] | None, repeat: int) -> ToolResult:
    """Build the index (from scratch) and map; failures become a note instead of aborting."""
    res = ToolResult(plan.name)
    tool_dir = fresh_dir(work / plan.name)
    if plan.name.startswith("seedmap"):
        shutil.copyfile(ref, tool_dir / ref.name)
    log = tool_dir / f"{plan.name}.log"
    try:
        if plan.index_cmds:
            timings = [run_timed(cmd, log, cwd=tool_dir) for cmd in plan.index_cmds]
            res.index = Timing(sum(x.wall_s for x in timings), max(x.peak_mb for x in timings))
        if warm_cmd:  # untimed: JIT caches (numba), page cache
            run_timed(warm_cmd, log, cwd=tool_dir)
        stdout = plan.sam if plan.sam_on_stdout else None
        runs = [run_timed(plan.map_cmd, log, stdout=stdout, cwd=tool_dir) for _ in range(repeat)]
        # Fastest run: the least disturbed by other load on a shared machine.
        res.map = Timing(min(x.wall_s for x in runs), max(x.peak_mb for x in runs))
    except CommandFailed as exc:
        res.note = f"failed: {exc}"
        return res
    res.hits, res.mapped_reads, res.records = parse_sam(plan.sam)
    return res


def subset_reads(reads: Path, n: int) -> Path:
    """First n FASTQ records, for the optional warm-up run."""
    out = reads.with_name(f"warmup_{n}_{reads.name}")
    with open(reads) as src, open(out, "w") as dst:
        dst.writelines(itertools.islice(src, 4 * n))
    return out


# --------------------------------------------------------------------------- SAM parsing & scoring

_LEADING_OPS = re.compile(r"^(?:(\d+)H)?(?:(\d+)S)?(?:(\d+)D)?")


def alignment_start(pos: int, cigar: str) -> int:
    """Normalised leftmost position: POS minus leading clips, plus a leading deletion.

    Clips: bwa mem aligns locally, so its POS is where the clipped read starts.
    Deletion: razers3 sometimes emits CIGARs like 3D5M1I94M; a leading deletion is never needed
    in a semi-global alignment and only moves POS left.
    """
    hard, soft, dele = (int(g or 0) for g in _LEADING_OPS.match(cigar).groups())
    return pos - hard - soft + dele


def parse_sam(path: Path) -> tuple[Hits, int, int]:
    """Per-(read, rname, strand) hit lists, number of mapped reads, number of alignment records."""
    hits: Hits = {}
    mapped: set[str] = set()
    records = 0
    with open(path) as fh:
        for line in fh:
            if line.startswith("@"):
                continue
            f = line.rstrip("\n").split("\t")
            flag = int(f[1])
            if flag & 0x4 or flag & 0x800 or f[2] == "*":  # unmapped / supplementary
                continue
            nm = next((int(x[5:]) for x in f[11:] if x.startswith("NM:i:")), -1)
            key = (f[0], f[2], bool(flag & 0x10))
            hits.setdefault(key, []).append((alignment_start(int(f[3]), f[5]), nm))
            mapped.add(f[0])
            records += 1
    return hits, len(mapped), records


def position_index(hits: Hits) -> dict[Key, list[int]]:
    return {key: sorted(pos for pos, _ in locs) for key, locs in hits.items()}


def is_near(sorted_pos: list[int], pos: int, slack: int) -> bool:
    i = bisect.bisect_left(sorted_pos, pos - slack)
    return i < len(sorted_pos) and sorted_pos[i] <= pos + slack


def recall(truth: Hits, tool: dict[Key, list[int]], slack: int) -> tuple[float, float]:
    """(recall_locs, recall_best) of a tool's positions against the truth hits."""
    found = total = 0
    best: dict[str, tuple[int, bool]] = {}  # read -> (best NM, a best-NM location was found)
    for key, locs in truth.items():
        positions = tool.get(key, [])
        for pos, nm in locs:
            ok = is_near(positions, pos, slack)
            found += ok
            total += 1
            prev = best.get(key[0])
            if prev is None or nm < prev[0]:
                best[key[0]] = (nm, ok)
            elif nm == prev[0] and ok:
                best[key[0]] = (nm, True)
    if not total:
        return math.nan, math.nan
    return found / total, sum(ok for _, ok in best.values()) / len(best)


# --------------------------------------------------------------------------- report


def fmt(x: float | None, spec: str) -> str:
    return "-" if x is None or math.isnan(x) else format(x, spec)


def table_rows(results: list[ToolResult], truth: Hits | None, slack: int) -> list[list[str]]:
    rows = []
    for res in results:
        if res.map is None:
            continue
        rl, rb = recall(truth, position_index(res.hits), slack) if truth else (math.nan, math.nan)
        rows.append(
            [
                res.name,
                fmt(res.index.wall_s if res.index else None, ".2f"),
                fmt(res.map.wall_s, ".2f"),
                fmt(res.index.peak_mb if res.index else None, ".0f"),
                fmt(res.map.peak_mb, ".0f"),
                fmt(rl, ".4f"),
                fmt(rb, ".4f"),
                str(res.mapped_reads),
                str(res.records),
            ]
        )
    return rows


def same_records(a: Path, b: Path) -> str | None:
    """'identical (N records)' or how many differ; None when either SAM is missing."""
    if not (a.exists() and b.exists()):
        return None

    def records(path: Path) -> list[str]:
        with open(path) as fh:
            return sorted(line for line in fh if not line.startswith("@"))

    ra, rb = records(a), records(b)
    if ra == rb:
        return f"identical ({len(ra)} records)"
    return f"DIFFERENT: {len(set(ra) ^ set(rb))} records in only one of them"


def ratio_line(by_name: dict[str, ToolResult], num: str, den: str) -> str | None:
    a, b = by_name.get(num), by_name.get(den)
    if not (a and b and a.map and b.map and a.index and b.index):
        return None
    total = (a.index.wall_s + a.map.wall_s) / (b.index.wall_s + b.map.wall_s)
    return (
        f"{num}/{den} wall time: map {a.map.wall_s / b.map.wall_s:.2f}x, "
        f"index {a.index.wall_s / b.index.wall_s:.2f}x, index+map {total:.2f}x"
    )


def check_truth(truth: Hits, e: int) -> None:
    worst = max((nm for locs in truth.values() for _, nm in locs), default=0)
    if worst > e:
        print(f"warning: razers3 reported NM up to {worst} > e={e}; check -i rounding", file=sys.stderr)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="scratch dir (default: %(default)s)")
    ap.add_argument("--reads", type=int, default=100_000, help="number of reads (default: %(default)s)")
    ap.add_argument("--read-len", type=int, default=100, help="read length (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=42, help="mason seed (default: %(default)s)")
    ap.add_argument("--e", type=int, default=5, help="max edit distance (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=2, help="threads per tool (default: %(default)s)")
    ap.add_argument("--slack", type=int, default=5, help="max |pos - truth pos| (default: %(default)s)")
    ap.add_argument("--skip", action="append", default=[], choices=TOOLS, help="skip a tool (repeatable)")
    ap.add_argument("--seedmap-cmd", help="how to invoke seedmap, e.g. 'python -m seedmap'")
    ap.add_argument(
        "--warmup",
        type=int,
        default=0,
        metavar="N",
        help="first run each mapper untimed on N reads (JIT/page cache); default off",
    )
    ap.add_argument("--repeat", type=int, default=1, help="timed map runs per tool; fastest is reported")
    ap.add_argument("--razers3-max-hits", type=int, default=100_000, help="razers3 -m (default: %(default)s)")
    return ap.parse_args(argv)


def run_all(args: argparse.Namespace, ref: Path, reads: Path, work: Path) -> Outcome:
    """Run every tool not skipped or missing, in TOOLS order; returns results and notes for the report."""
    plans = make_plans(args, ref, reads, work)
    warm_reads = subset_reads(reads, args.warmup) if args.warmup else None
    results, notes = [], []
    for name in TOOLS:
        missing = missing_exe(plans[name])
        if name in args.skip:
            notes.append(f"{name}: skipped (--skip)")
        elif missing:
            hint = " (try --seedmap-cmd 'python -m seedmap')" if name == "seedmap" else ""
            notes.append(f"{name}: skipped, {missing} not on PATH{hint}")
        else:
            log(f"{name}: running")
            warm_cmd = warmup_cmd(plans[name], reads, warm_reads) if warm_reads else None
            res = run_tool(plans[name], ref, work, warm_cmd, args.repeat)
            results.append(res)
            if res.note:
                notes.append(f"{name}: {res.note}")
            else:
                log(f"{name}: done, {res.records} records")
        if notes and notes[-1].startswith(name):
            log(notes[-1])
    return results, notes


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - START:7.1f}s] {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    ref = prepare_reference(work)
    reads = simulate_reads(ref, work, args.reads, args.read_len, args.seed)
    log(f"reference {ref}, reads {reads}")

    results, notes = run_all(args, ref, reads, work)
    by_name = {r.name: r for r in results}
    truth = by_name[TRUTH].hits if TRUTH in by_name and by_name[TRUTH].map else None
    if truth is not None:
        check_truth(truth, args.e)
    else:
        notes.append("no razers3 results: recall columns unavailable")

    header = [
        "tool",
        "index s",
        "map s",
        "peak MB (index)",
        "peak MB (map)",
        "recall_locs",
        "recall_best",
        "mapped reads",
        "records",
    ]
    print(
        f"\nE. coli MG1655, {args.reads} x {args.read_len} bp reads, e={args.e}, "
        f"{args.threads} threads, truth = razers3, slack = {args.slack} bp\n"
    )
    print(markdown_table(header, table_rows(results, truth, args.slack)))
    for name in ("seedmap", *SEEDMAP_VARIANTS):
        line = ratio_line(by_name, name, "yara")
        print(f"\n{line}" if line else f"\n{name}/yara wall time: n/a (needs both)")
    for name in SEEDMAP_VARIANTS:
        same = same_records(work / "seedmap" / "seedmap.sam", work / name / f"{name}.sam")
        if same is not None:
            print(f"\nseedmap (neighborhood, bs) vs {name} SAM records after sorting: {same}")
    for note in notes:
        print(f"- {note}")
    print(f"\ntotal script time {time.perf_counter() - START:.1f}s")


if __name__ == "__main__":
    main()
