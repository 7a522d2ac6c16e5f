#!/usr/bin/env python3
"""Illumina-like 150 bp reads and 2x150 bp pairs on human-like genomes: seedmap against yara and bwa mem.

Per genome size (synthetic_genome.py, seed 7, the genome human_like.py uses): mason_simulator pairs (Illumina
error profile: substitutions rising along the read, indels; fragment 300 +- 30) and single-end reads, then, each
tool with the same threads, in one run:

- seedmap (its default engine for the size, or --kinds): single-end and paired, all-mapping and --best, at -e E;
- yara: the same four (-e P = E as a percentage of the read length; all-mapping: -s P -sa record; paired with the
  library's -ll 300 -ld 30);
- bwa mem: single-end and paired (best mode only).

Columns: wall time and peak RSS (the fastest of --rounds rounds, every tool in turn); proper pairs (primary
records flagged 2, of all pairs); MAPQ >= 30: primaries kept by `samtools view -q 30`, and the wrong ones among
them (not within --slack bp of mason's origin, or another strand or sequence); records: seedmap's SAM digests,
the same across engines where more than one ran. Then each seedmap figure over yara's in the same mode, and how
the two MAPQs rank: the most primaries a MAPQ threshold keeps with no more wrong ones than yara's MAPQ >= 30 has
(and than seedmap's), for each tool (kept_within), which compares rankings where MAPQ >= 30 also compares scales.

    python benchmarks/human_pairs.py --sizes 250 --pairs 20000 --reads 200000 --rounds 2
    python benchmarks/human_pairs.py --sizes 250,1000 --skip bwa
    python benchmarks/human_pairs.py --sizes 5 --pairs 2000 --reads 2000        # a quick look
    python benchmarks/human_pairs.py --sizes 250 --variants 0.001 --modes "se best,pe best" --skip bwa
    python benchmarks/human_pairs.py --sizes 1000,3100 --layout 24,300 --reads 20000 --max-memory 12G --skip yara,bwa

With --max-memory (or --layout), seedmap's index is built by the run, timed (wall, peak RSS, size on disk; kept in
build.json beside it for later runs), and each mode's reads/s are compared across the sizes: the per-read rate at
every size over the smallest size's. --layout C,S: C chromosome-like sequences and S small scaffolds
(synthetic_genome.py's --chromosomes and --scaffolds), as a real assembly is shaped. --variants R: the reads come
from a diploid sample of the genome (mason_variator), as real reads differ from the reference at its SNPs and
indels as well as at sequencing errors; MAPQ's MISMATCH_FLOOR (seedmap/mapq.py) stands for those.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import DEFAULT_WORK, fastest_rounds, find_exe, markdown_table, run_timed, seedmap_prefix  # noqa: E402
from genome_scale import records_digest  # noqa: E402
from pairsim import at, mapqs  # noqa: E402

SEED = 7
FRAGMENT = (300, 30)
MODES = ("se all", "se best", "pe all", "pe best")
SV_KINDS = ("indel", "inversion", "translocation", "duplication")


def genome(size: float, work: Path, layout: str = "") -> Path:
    """The human-like genome of `size` Mbp (made once, in human_like.py's place), of `layout` "C,S" (C
    chromosomes, S scaffolds; default: synthetic_genome.py's)."""
    d = work / (f"g{size:g}" + (f"-{layout.replace(',', 'x')}" if layout else ""))
    d.mkdir(parents=True, exist_ok=True)
    fasta = d / f"synth{size:g}.fa"
    if not fasta.exists():
        tmp = fasta.with_suffix(".tmp.fa")
        shape = ["--chromosomes", layout.split(",")[0], "--scaffolds", layout.split(",")[1]] if layout else []
        subprocess.run([sys.executable, str(Path(__file__).with_name("synthetic_genome.py")), f"{size:g}", str(tmp),
                        "--seed", str(SEED), "--bed", str(d / f"synth{size:g}.bed"), *shape], check=True)
        tmp.rename(fasta)
    return fasta


def built_index(sm: list[str], fasta: Path, kind: str, index: Path, max_memory: str, log: Path) -> dict | None:
    """Build seedmap's index unless there is one; with max_memory, the build is timed (and its figures kept in
    build.json beside the index, for runs that find it built)."""
    record = index.with_name(f"{index.name}.build.json")
    if (index / "header.json").exists():
        return json.loads(record.read_text()) if record.exists() else None
    limit = ["--max-memory", max_memory] if max_memory else []
    m = run_timed([*sm, "index", str(fasta), "--kind", kind, "-o", str(index), *limit], log)
    row = {"tool": f"seedmap {kind}", "mode": "index", "wall_s": m.wall_s, "peak_mb": m.peak_mb, "cpu_s": m.cpu_s,
           "disk_mb": sum(f.stat().st_size for f in index.iterdir()) / 2**20, "max_memory": max_memory}
    record.write_text(json.dumps(row))
    return row


def variants(fasta: Path, rate: float) -> Path | None:
    """A diploid sample's variants for mason_simulator (mason_variator: SNPs at `rate` per base, small indels at a
    tenth of it, no structural ones), cached by the rate; None at rate 0 (reads from the reference itself)."""
    if rate <= 0:
        return None
    vcf = fasta.parent / f"variants_r{rate:g}.vcf"
    if vcf.exists():
        return vcf
    exe = find_exe("mason_variator")
    if exe is None:
        sys.exit("mason_variator not found: install Debian package seqan-apps")
    tmp = vcf.with_suffix(".tmp.vcf")
    run_timed([exe, "-ir", str(fasta), "-ov", str(tmp), "--seed", str(SEED), "-n", "2", "--snp-rate", f"{rate:g}",
               "--small-indel-rate", f"{rate / 10:g}", *(x for kind in SV_KINDS for x in (f"--sv-{kind}-rate", "0"))],
              fasta.parent / "mason.log")
    tmp.rename(vcf)
    return vcf


def mason(fasta: Path, n: int, length: int, paired: bool, seed: int,
          vcf: Path | None = None) -> tuple[list[Path], Path]:
    """mason_simulator reads (FASTQ, one file or two) and its truth SAM, cached by the parameters; with a VCF, read
    from its haplotypes (the truth stays in the reference's coordinates)."""
    tag = f"_{vcf.stem}" if vcf is not None else ""
    stem = fasta.parent / f"{'pairs' if paired else 'reads'}_n{n}_l{length}_s{seed}{tag}"
    fq = [Path(f"{stem}_1.fq"), Path(f"{stem}_2.fq")][:1 + paired]
    truth = Path(f"{stem}_truth.sam")
    if truth.exists():
        return fq, truth
    exe = find_exe("mason_simulator")
    if exe is None:
        sys.exit("mason_simulator not found: install Debian package seqan-apps")
    tmp = [p.with_suffix(".tmp.fq") for p in fq]
    cmd = [exe, "-q", "-ir", str(fasta), "-n", str(n), "--seed", str(seed), "--illumina-read-length", str(length),
           "-o", str(tmp[0]), "-oa", str(truth.with_suffix(".tmp.sam")), *(["-iv", str(vcf)] if vcf else [])]
    if paired:
        cmd += ["-or", str(tmp[1]), "--fragment-mean-size", str(FRAGMENT[0]),
                "--fragment-size-std-dev", str(FRAGMENT[1])]
    run_timed(cmd, fasta.parent / "mason.log")
    for src, dst in zip(tmp, fq, strict=True):
        src.rename(dst)
    truth.with_suffix(".tmp.sam").rename(truth)
    return fq, truth


def score(sam: Path, truth: dict, paired: bool, slack: int) -> dict:
    """Proper pairs, primaries at MAPQ >= 30 and the wrong ones among them, and per MAPQ its primaries and wrong
    ones (by_mapq: what kept_within reads)."""
    got = mapqs(sam)
    by_mapq: dict[int, list[int]] = {}
    for key, (placement, q) in got.items():
        if placement is None or key not in truth:
            continue
        cell = by_mapq.setdefault(q, [0, 0])
        cell[0] += 1
        cell[1] += not at(placement, truth[key], slack)
    kept = sum(n for q, (n, _) in by_mapq.items() if q >= 30)
    wrong = sum(w for q, (_, w) in by_mapq.items() if q >= 30)
    out = {"mapq30": kept, "mapq30_wrong": wrong, "by_mapq": {str(q): c for q, c in sorted(by_mapq.items())}}
    if paired:
        proper = pairs = 0
        with open(sam) as fh:
            for line in fh:
                if line[0] == "@":
                    continue
                flag = int(line.split("\t", 2)[1])
                if flag & 0x940 == 0x40:  # mate 1's primary
                    pairs += 1
                    proper += bool(flag & 2)
        out["proper"] = proper / max(pairs, 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="250,1000", help="genome sizes in Mbp (default %(default)s)")
    ap.add_argument("--pairs", type=int, default=20_000, help="simulated pairs (default %(default)s)")
    ap.add_argument("--reads", type=int, default=200_000, help="simulated single-end reads (default %(default)s)")
    ap.add_argument("--read-length", type=int, default=150, help="(default %(default)s)")
    ap.add_argument("-e", "--edits", type=int, default=4, help="edits searched (default %(default)s)")
    ap.add_argument("--kinds", default="", help="seedmap engines (default: the default for the size)")
    ap.add_argument("--skip", default="", help="comma-separated tools to leave out: yara, bwa")
    ap.add_argument("--modes", default=",".join(MODES), help="(default %(default)s)")
    ap.add_argument("--threads", type=int, default=2, help="(default %(default)s)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of every run; each row keeps its fastest")
    ap.add_argument("--variants", type=float, default=0.0, metavar="RATE",
                    help="read from a diploid sample with SNPs at RATE per base (human: 0.001) and small indels at a "
                         "tenth of it (mason_variator); default: the reference itself")
    ap.add_argument("--slack", type=int, default=10, help="bases a primary may lie from its origin (default 10)")
    ap.add_argument("--seedmap", help="command prefix for seedmap (default: the installed seedmap)")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK / "human_like", help="scratch dir (default %(default)s)")
    ap.add_argument("--layout", default="", metavar="C,S", help="chromosomes and small scaffolds of the genomes")
    ap.add_argument("--max-memory", default="", metavar="SIZE", help="seedmap index --max-memory; times the build")
    args = ap.parse_args()
    work = args.work.resolve()
    skip = set(filter(None, args.skip.split(",")))
    modes = [m for m in args.modes.split(",") if m]
    sm = seedmap_prefix(args.seedmap)
    results = []
    for size in (float(s) for s in args.sizes.split(",") if s):
        rows = run_size(args, size, work, sm, skip, modes)
        results += rows
        report(size, rows, args)
    rates(results)
    (work / "human_pairs.json").write_text(json.dumps(results, indent=1))
    return 0


def run_size(args: argparse.Namespace, size: float, work: Path, sm: list[str], skip: set[str],
             modes: list[str]) -> list[dict]:
    from seedmap.index import default_kind

    fasta = genome(size, work, args.layout)
    d = fasta.parent
    log = d / "human_pairs.log"
    kinds = [k for k in args.kinds.split(",") if k] or [default_kind.kind_for(fasta.stat().st_size)]
    vcf = variants(fasta, args.variants)
    pe, pe_truth = mason(fasta, args.pairs, args.read_length, True, SEED, vcf)
    se, se_truth = mason(fasta, args.reads, args.read_length, False, SEED + 1, vcf)
    truth = {"pe": mapqs(pe_truth), "se": mapqs(se_truth)}
    truth = {k: {key: v[0] for key, v in t.items()} for k, t in truth.items()}
    t, e = str(args.threads), str(args.edits)
    pct = str(math.ceil(100 * args.edits / args.read_length))  # yara's -e: a percentage of the read length
    jobs: list[tuple[dict, list[str], Path, bool]] = []
    builds = []
    for kind in kinds:
        index = d / f"idx.{kind}"
        build = built_index(sm, fasta, kind, index, args.max_memory, log)
        if build is not None:
            builds.append({"size_mbp": size, **build})
            print(json.dumps(builds[-1]), flush=True)
        for mode in modes:
            reads = pe if mode.startswith("pe") else se
            sam = d / f"hp.{kind}.{mode.replace(' ', '_')}.sam"
            cmd = [*sm, "map", str(fasta), *map(str, reads), "--engine", kind, "--index", str(index), "-e", e,
                   "-t", t, "-q", "-o", str(sam), *(["--best"] if mode.endswith("best") else [])]
            jobs.append(({"size_mbp": size, "tool": f"seedmap {kind}", "mode": mode,
                          "reads": args.pairs * 2 if mode.startswith("pe") else args.reads}, cmd, sam, False))
    if "yara" not in skip and find_exe("yara_mapper"):
        index = d / "yara_idx"
        if not Path(f"{index}.txt.size").exists():
            run_timed([find_exe("yara_indexer"), "-o", str(index), str(fasta)], log)
        for mode in modes:
            reads = pe if mode.startswith("pe") else se
            extra = ["-s", pct, "-sa", "record"] if mode.endswith("all") else []
            if mode.startswith("pe"):
                extra += ["-ll", str(FRAGMENT[0]), "-ld", str(FRAGMENT[1])]
            sam = d / f"hp.yara.{mode.replace(' ', '_')}.sam"
            cmd = [find_exe("yara_mapper"), "-t", t, "-e", pct, *extra, "-o", str(sam), str(index), *map(str, reads)]
            jobs.append(({"size_mbp": size, "tool": "yara", "mode": mode}, cmd, sam, False))
    if "bwa" not in skip and find_exe("bwa"):
        index = d / "bwa_idx"
        if not Path(f"{index}.bwt").exists():
            run_timed(["bwa", "index", "-p", str(index), str(fasta)], log)
        for mode in (m for m in modes if m.endswith("best")):
            reads = pe if mode.startswith("pe") else se
            sam = d / f"hp.bwa.{mode.replace(' ', '_')}.sam"
            jobs.append(({"size_mbp": size, "tool": "bwa mem", "mode": mode},
                         ["bwa", "mem", "-t", t, str(index), *map(str, reads)], sam, True))
    fastest_rounds(jobs, args.rounds, log)
    for row, _, sam, _ in jobs:
        if "error" not in row:
            paired = row["mode"].startswith("pe")
            row.update(score(sam, truth["pe" if paired else "se"], paired, args.slack))
            if row["tool"].startswith("seedmap"):
                row["digest"] = records_digest(sam)
        print(json.dumps(row), flush=True)
    return builds + [row for row, *_ in jobs]


def report(size: float, rows: list[dict], args: argparse.Namespace) -> None:
    print(f"\n### {size:g} Mbp human-like genome: {args.pairs:,} pairs 2x{args.read_length} bp and {args.reads:,} "
          f"reads of {args.read_length} bp (mason, Illumina), e = {args.edits}, -t {args.threads}\n")
    table = []
    for r in rows:
        if r["mode"] == "index":
            table.append([r["tool"], f"index (--max-memory {r['max_memory'] or 'default'})", f"{r['wall_s']:.0f}",
                          f"{r['peak_mb'] / 1024:.2f}", "", f"{r['disk_mb'] / 1024:.2f} GB on disk", ""])
            continue
        if "error" in r:
            table.append([r["tool"], r["mode"], "error: " + r["error"][:60], "", "", "", ""])
            continue
        table.append([r["tool"], r["mode"], f"{r['wall_s']:.2f}", f"{r['peak_mb'] / 1024:.2f}",
                      f"{r['proper']:.4f}" if "proper" in r else "", f"{r['mapq30']} / {r['mapq30_wrong']}",
                      r.get("digest", "")])
    print(markdown_table(["tool", "mode", "wall s", "peak GB", "proper", "MAPQ>=30 kept / wrong", "records"],
                         table))
    ok = {(r["tool"], r["mode"]): r for r in rows if "error" not in r}
    ratio_rows = []
    for (tool, mode), r in ok.items():
        y = ok.get(("yara", mode))
        if not tool.startswith("seedmap") or y is None:
            continue
        ratio_rows.append([tool, mode, f"{r['wall_s'] / y['wall_s']:.2f}x", f"{r['peak_mb'] / y['peak_mb']:.2f}x",
                           f"{r['mapq30'] - y['mapq30']:+d} / {r['mapq30_wrong'] - y['mapq30_wrong']:+d}",
                           f"{kept_within(r, y['mapq30_wrong']):,} / {y['mapq30']:,}",
                           f"{kept_within(r, r['mapq30_wrong']):,} / {kept_within(y, r['mapq30_wrong']):,}"])
    if ratio_rows:
        print()
        print(markdown_table(["seedmap", "mode", "time / yara", "peak RSS / yara", "MAPQ>=30 kept / wrong - yara's",
                              "kept at yara's MAPQ>=30 wrong: seedmap / yara",
                              "kept at seedmap's MAPQ>=30 wrong: seedmap / yara"], ratio_rows))
        print("\n(kept at N wrong: the most primaries one MAPQ threshold keeps with at most N of them wrong)")
    digests: dict[str, set] = {}
    for r in ok.values():
        if "digest" in r:
            digests.setdefault(r["mode"], set()).add(r["digest"])
    if any(len({r["tool"] for r in ok.values() if "digest" in r and r["mode"] == m}) > 1 for m in digests):
        same = all(len(v) == 1 for v in digests.values())
        print(f"\nseedmap records identical across engines, every mode: {'yes' if same else 'NO'}")


def kept_within(row: dict, wrong: int) -> int:
    """The most primaries one MAPQ threshold of the row's keeps with at most `wrong` wrong ones: how well its MAPQ
    ranks right placements above wrong ones, whatever its scale (MAPQ >= 30 compares scales as much as rankings)."""
    best = kept = bad = 0
    for q in sorted(map(int, row["by_mapq"]), reverse=True):
        n, w = row["by_mapq"][str(q)]
        kept, bad = kept + n, bad + w
        if bad <= wrong:
            best = kept
    return best


def rates(results: list[dict]) -> None:
    """seedmap's reads/s per mode and size, and each over the smallest size's."""
    maps = [r for r in results if r["tool"].startswith("seedmap") and "reads" in r and "error" not in r]
    sizes = sorted({r["size_mbp"] for r in maps})
    if len(sizes) < 2:
        return
    rate = {(r["tool"], r["mode"], r["size_mbp"]): r["reads"] / r["wall_s"] for r in maps}
    rows = []
    for tool, mode in dict.fromkeys((r["tool"], r["mode"]) for r in maps):
        base = rate.get((tool, mode, sizes[0]))
        cells = [f"{rate[tool, mode, s]:,.0f}" + (f" ({rate[tool, mode, s] / base:.2f}x)" if base and s != sizes[0]
                                                  else "") if (tool, mode, s) in rate else "" for s in sizes]
        rows.append([tool, mode, *cells])
    print(f"\n### reads/s by genome size (in brackets: over the {sizes[0]:g} Mbp rate)\n")
    print(markdown_table(["seedmap", "mode", *(f"{s:g} Mbp" for s in sizes)], rows))


if __name__ == "__main__":
    sys.exit(main())
