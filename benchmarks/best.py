#!/usr/bin/env python3
"""Best-mapping speed: seedmap --best (each engine) against yara, bwa mem and bowtie2, in one run.

Reference and reads as in scaling.py (ragout-examples, 48.2 Mbp; mason 100 bp reads). seedmap's
all-mapping run at -e E is the truth: a read's best stratum is its locations of fewest edits there.
For every run the table gives wall time, reads/s, peak RSS and two fractions of reads:

- complete: every best location of the read is reported (a record, or an XA alternative of bwa/yara),
  within TOLERANCE bases (other tools clip or place indels differently; seedmap must match exactly);
- best found: the primary record is one of the read's best locations;
- MAPQ >= 30 kept: of the reads whose all-mapping primary has MAPQ >= 30, the fraction this run also
  gives MAPQ >= 30 (a `samtools view -q 30` filter keeps them).

seedmap --best is also compared record for record with the all-mapping SAM filtered to its strata
(`--no-early-stop`), which must be identical; each engine maps all too, its records identical to the first
engine's, and a --best run's speed is given against its own engine's all-mapping (other tools': the first
engine's). Every tool gets the same thread count. One more row, the first engine's all-mapping at -e 1, is the
floor of any --best run: a read whose best location is unique needs the stratum after it searched for its MAPQ,
so --best searches every read with at least 1 edit but those tied at 0 (the row's completeness is that of an e = 1
search).

    python benchmarks/best.py --reads 1000000 -t 2       # needs bwa bowtie2 seqan-apps ragout-examples
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from pathlib import Path

import numpy as np
from benchutil import find_exe, markdown_table, run_timed, seedmap_prefix
from scaling import add_data_args, data, records_digest

TOLERANCE = 10  # bases: a best location counts as reported by another tool this close (same strand)
XA = re.compile(rb"XA:Z:([^\t\n]*)")


def _key(rid: int, pos: int, rev: bool) -> int:
    return (rid << 34) | (pos << 1) | int(rev)


def _records(sam: Path, names: dict[bytes, int]):
    """(read name, key, flag, NM or -1) per record; XA alternatives as extra keys with flag 256."""
    with open(sam, "rb") as fh:
        for line in fh:
            if line[:1] == b"@":
                if line.startswith(b"@SQ"):
                    names[line.split(b"\tSN:")[1].split(b"\t")[0].strip()] = len(names)
                continue
            f = line.split(b"\t", 11)
            flag = int(f[1])
            if flag & 4:
                yield f[0], -1, flag, -1
                continue
            nm = re.search(rb"NM:i:(\d+)", f[11]) if len(f) > 11 else None
            yield f[0], _key(names[f[2]], int(f[3]), bool(flag & 16)), flag, int(nm.group(1)) if nm else -1
            xa = XA.search(line)
            if xa:
                for alt in xa.group(1).split(b";"):
                    parts = alt.split(b",")
                    if len(parts) >= 5 and parts[3] in (b"+", b"-"):  # yara: chrom,begin,end,strand,errors
                        yield f[0], _key(names[parts[0]], int(parts[1]), parts[3] == b"-"), 256, int(parts[4])
                    elif len(parts) >= 4:  # bwa: chrom,+-pos,CIGAR,NM
                        pos = parts[1]
                        yield f[0], _key(names[parts[0]], abs(int(pos)), pos[:1] == b"-"), 256, int(parts[3])


def truth(sam: Path) -> dict[bytes, tuple[int, ...]]:
    """Each mapped read's best locations in the all-mapping SAM."""
    best: dict[bytes, tuple[int, list[int]]] = {}
    for name, key, _, nm in _records(sam, {}):
        if key < 0:
            continue
        cur = best.get(name)
        if cur is None or nm < cur[0]:
            best[name] = (nm, [key])
        elif nm == cur[0]:
            cur[1].append(key)
    return {name: tuple(keys) for name, (_, keys) in best.items()}


def _close(key: int, reported: np.ndarray, exact: bool) -> bool:
    if exact:
        return key in reported
    same = reported[(reported >> 34 == key >> 34) & (reported & 1 == key & 1)]
    return bool(np.any(np.abs((same >> 1 & ((1 << 33) - 1)) - (key >> 1 & ((1 << 33) - 1))) <= TOLERANCE))


def completeness(sam: Path, best: dict[bytes, tuple[int, ...]], exact: bool) -> tuple[float, float]:
    """(complete, best found) fractions over the reads the all-mapping run maps."""
    reported: dict[bytes, list[int]] = {}
    primary: dict[bytes, int] = {}
    for name, key, flag, _ in _records(sam, {}):
        name = name.split(b"/")[0]
        if key < 0:
            continue
        reported.setdefault(name, []).append(key)
        if not flag & (256 | 2048):
            primary[name] = key
    complete = found = 0
    for name, keys in best.items():
        got = np.array(reported.get(name, []), dtype=np.int64)
        if got.size and all(_close(k, got, exact) for k in keys):
            complete += 1
        if name in primary and _close(primary[name], np.array(keys, dtype=np.int64), exact):
            found += 1
    return complete / max(len(best), 1), found / max(len(best), 1)


def confident(sam: Path) -> set[bytes]:
    """Names of the reads whose primary record has MAPQ >= 30 (what `samtools view -q 30` keeps)."""
    out = set()
    with open(sam, "rb") as fh:
        for line in fh:
            if line[:1] == b"@":
                continue
            f = line.split(b"\t", 5)
            if not int(f[1]) & 0x904 and int(f[4]) >= 30:
                out.add(f[0])
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_args(ap)
    ap.add_argument("-t", "--threads", type=int, default=2, help="threads for every tool (default: %(default)s)")
    ap.add_argument("--engines", default="neighborhood,kmer,fm", help="seedmap engines (default: %(default)s)")
    ap.add_argument("--strata", default="auto,0", help="seedmap --strata values, first engine only (default: "
                    "%(default)s)")
    ap.add_argument("--skip", default="", help="comma-separated tools to skip: yara,bwa,bowtie2")
    args = ap.parse_args(argv)
    work, ref, fq = data(args)
    seedmap = seedmap_prefix(args.seedmap_cmd)
    log = work / "best.log"
    log.unlink(missing_ok=True)
    t = str(args.threads)
    skip = set(filter(None, args.skip.split(",")))
    engines = args.engines.split(",")
    strata = args.strata.split(",")

    warm = work / "best_warm.fq"  # a few reads: --best compiles a few kernels of its own, not to be timed
    with open(fq, "rb") as src, open(warm, "wb") as dst:
        dst.writelines(itertools.islice(src, 4000))
    for kind in engines:
        run_timed([*seedmap, "index", "--kind", kind, str(ref)], log)  # compiles the kernels too
        run_timed([*seedmap, "map", "-t", t, "-e", str(args.e), "--engine", kind, "--best", "-o",
                   str(work / "best_warm.sam"), str(ref), str(warm)], log)
    runs: dict[str, tuple[object, Path, bool]] = {}

    def seedmap_run(label: str, extra: list[str], kind: str, e: object = args.e) -> None:
        sam = work / f"best_{label.replace(' ', '_').replace('-', '')}.sam"
        timing = run_timed([*seedmap, "map", "-t", t, "-e", str(e), "--engine", kind, *extra, "-o", str(sam),
                            str(ref), str(fq)], log)
        runs[label] = (timing, sam, True)

    for kind in engines:
        seedmap_run(f"seedmap all-mapping ({kind})", [], kind)
    floor = f"seedmap all-mapping at -e 1, the floor of best runs ({engines[0]})"
    seedmap_run(floor, [], engines[0], 1)
    for kind in engines:
        for s in strata if kind == engines[0] else strata[:1]:
            seedmap_run(f"seedmap --best --strata {s} ({kind})", ["--best", "--strata", s], kind)
    pct = str(-(-100 * args.e // args.length))
    yara = find_exe("yara_mapper")
    if yara and "yara" not in skip:
        idx = work / "yara_idx"
        if not Path(f"{idx}.txt.size").exists():
            run_timed(["yara_indexer", "-o", str(idx), str(ref)], log)
        sam = work / "best_yara.sam"
        runs["yara -e (best stratum)"] = (run_timed([yara, "-t", t, "-e", pct, "-o", str(sam), str(idx), str(fq)], log),
                                          sam, False)
    bwa = find_exe("bwa")
    if bwa and "bwa" not in skip:
        if not Path(f"{ref}.bwt").exists():
            run_timed([bwa, "index", str(ref)], log)
        sam = work / "best_bwa.sam"
        runs["bwa mem"] = (run_timed([bwa, "mem", "-t", t, str(ref), str(fq)], log, stdout=sam), sam, False)
    bt2 = find_exe("bowtie2")
    if bt2 and "bowtie2" not in skip:
        idx = work / "bt2_idx"
        if not Path(f"{idx}.1.bt2").exists():
            run_timed(["bowtie2-build", "--threads", t, str(ref), str(idx)], log)
        sam = work / "best_bowtie2.sam"
        runs["bowtie2"] = (run_timed([bt2, "-p", t, "-x", str(idx), "-U", str(fq), "-S", str(sam)], log), sam, False)

    all_sam = runs[f"seedmap all-mapping ({engines[0]})"][1]
    best = truth(all_sam)
    base = runs[f"seedmap all-mapping ({engines[0]})"][0].wall_s
    yara_wall = runs["yara -e (best stratum)"][0].wall_s if "yara -e (best stratum)" in runs else None
    confident_all = confident(all_sam)
    rows = []
    for label, (timing, sam, exact) in runs.items():
        complete, found = completeness(sam, best, exact)
        q30 = len(confident(sam) & confident_all) / max(len(confident_all), 1)
        check = ""
        own = base
        if label.startswith("seedmap all-mapping") and sam != all_sam and label != floor:
            check = "same" if records_digest(sam) == records_digest(all_sam) else "DIFFERENT"
        if "--best" in label:
            kind = label.split("(")[1].rstrip(")")
            own = runs[f"seedmap all-mapping ({kind})"][0].wall_s
            filtered = work / "best_filtered.sam"
            s = label.split("--strata ")[1].split(" ")[0]
            run_timed([*seedmap, "map", "-t", t, "-e", str(args.e), "--engine", kind, "--best", "--strata", s,
                       "--no-early-stop", "-o", str(filtered), str(ref), str(fq)], log)
            check = "same" if records_digest(filtered) == records_digest(sam) else "DIFFERENT"
        rows.append([label, f"{timing.wall_s:.1f}", f"{args.reads / timing.wall_s:,.0f}", f"{timing.peak_mb:.0f}",
                     f"{own / timing.wall_s:.2f}x", f"{timing.wall_s / yara_wall:.2f}" if yara_wall else "",
                     f"{complete:.5f}", f"{found:.5f}", f"{q30:.4f}", check])
    print(f"reference {ref.name} (48.2 Mbp, 20 records), {args.reads:,} x {args.length} bp mason reads, e = {args.e}, "
          f"-t {args.threads}; truth: seedmap all-mapping ({len(best):,} reads mapped)")
    print(markdown_table(["run", "wall s", "reads/s", "peak MB", "speed vs all-mapping (--best: its engine's)",
                          "time / yara", "complete", "best found", "MAPQ >= 30 kept",
                          "records vs all-mapping (filtered)"], rows))


if __name__ == "__main__":
    sys.exit(main())
