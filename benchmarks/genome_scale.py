#!/usr/bin/env python3
"""How index build and mapping grow with the genome: synthetic genomes with human-like repeats
(synthetic_genome.py) of several sizes; for each index kind its build time, build peak RSS and size on
disk, then mapping time and peak RSS for simulated reads (e = 5 all-mapping, and --best); per-base
figures, their growth from the smallest to the largest genome, and the extrapolation to 3.1 Gbp.

    python benchmarks/genome_scale.py                          # 0.25, 0.5, 1 Gbp; 100 k reads
    python benchmarks/genome_scale.py --sizes 20,40 --reads 5000 --work /tmp/gs   # a quick look

Peak RSS is GNU time's (file-backed pages of the memory-mapped index count). The neighborhood index is
built with --max-memory (default 8G), the FM index with --fm-max-memory (default 4G): genomes whose index
does not build within that are split into genome segments. The
records of every engine are compared (the same hits, byte-identical SAM but for the @PG line).
Indexes of a size are removed before the next size is built (a 1 Gbp neighborhood index takes ~12 GB).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import DEFAULT_WORK, CommandFailed, markdown_table, run_timed, seedmap_prefix  # noqa: E402

HUMAN = 3.1e9
KINDS = ("neighborhood", "fm", "kmer")
READ_LENGTH = 100


def simulate_reads(fasta: Path, out: Path, n: int, seed: int) -> None:
    """n reads of READ_LENGTH from random N-free places, either strand, with 0-5 edits (4:1 substitutions
    to 1 bp indels), as FASTQ."""
    from seedmap.io.alphabet import DECODE
    from seedmap.io.reference import read_fasta, unpack_codes

    ref = read_fasta(fasta)
    rng = np.random.default_rng(seed)
    lengths = ref.lengths
    with open(out, "w") as fh:
        made = 0
        while made < n:
            s = int(rng.choice(lengths.size, p=lengths / lengths.sum()))
            if lengths[s] < READ_LENGTH + 10:
                continue
            a = int(ref.starts[s]) + int(rng.integers(0, lengths[s] - READ_LENGTH - 10))
            codes = unpack_codes(ref.packed, ref.nmask, a, a + READ_LENGTH + 10)
            if (codes == 4).any():
                continue
            read = list(codes)
            for _ in range(int(rng.integers(0, 6))):
                i = int(rng.integers(1, len(read) - 1))
                kind = rng.random()
                if kind < 0.8:
                    read[i] = (read[i] + int(rng.integers(1, 4))) % 4
                elif kind < 0.9:
                    del read[i]
                else:
                    read.insert(i, int(rng.integers(0, 4)))
            r = np.array(read[:READ_LENGTH], dtype=np.uint8)
            if rng.random() < 0.5:
                r = (3 - r)[::-1]
            fh.write(f"@r{made}\n{DECODE[r].tobytes().decode()}\n+\n{'I' * READ_LENGTH}\n")
            made += 1


def records_digest(sam: Path) -> str:
    h = hashlib.sha256()
    with open(sam, "rb") as fh:
        for line in fh:
            if not line.startswith(b"@PG"):
                h.update(line)
    return h.hexdigest()[:16]


def disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="250,500,1000", help="genome sizes in Mbp (default %(default)s)")
    ap.add_argument("--reads", type=int, default=100_000)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-memory", default="8G", help="seedmap index --max-memory for the neighborhood index")
    ap.add_argument("--fm-max-memory", default="4G",
                    help="seedmap index --max-memory for the FM index (default %(default)s: segments from 0.5 Gbp on)")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK / "genome_scale")
    ap.add_argument("--seedmap", help="command prefix for seedmap (default: seedmap)")
    ap.add_argument("--keep", action="store_true", help="keep the indexes")
    args = ap.parse_args()
    seedmap = seedmap_prefix(args.seedmap)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    kinds = args.kinds.split(",")
    saved = work / "results.json"  # rows of earlier runs (other kinds or sizes) are kept and reported too
    results = [r for r in (json.loads(saved.read_text()) if saved.exists() else [])
               if not (r["size_mbp"] in sizes and r["kind"] in kinds)]
    for size in sizes:
        d = work / f"g{size}"
        d.mkdir(exist_ok=True)
        fasta = d / f"synth{size}.fa"
        if not fasta.exists():
            subprocess.run([sys.executable, str(Path(__file__).with_name("synthetic_genome.py")), str(size),
                            str(fasta), "--seed", "7"], check=True)
        reads = d / f"reads{args.reads}.fq"
        if not reads.exists():
            simulate_reads(fasta, reads, args.reads, seed=size)
        for kind in kinds:
            index = d / f"idx.{kind}"
            log = d / f"{kind}.log"
            cmd = [*seedmap, "index", str(fasta), "--kind", kind, "-o", str(index), "-q"]
            limit = {"neighborhood": args.max_memory, "fm": args.fm_max_memory}.get(kind)
            if limit:
                cmd += ["--max-memory", limit]
            row = {"size_mbp": size, "kind": kind}
            try:
                b = run_timed(cmd, log)
                row.update(build_s=b.wall_s, build_peak_mb=b.peak_mb, disk_mb=disk_bytes(index) / 2**20)
                header = json.loads((index / "header.json").read_text())
                row["segments"] = max(1, len(header["params"].get("segments", [])) - 1)
                bases = int(np.load(index / "ref_starts.npy")[-1])
                row["bases"] = bases
                for mode, extra in (("all", []), ("best", ["--best"])):
                    sam = d / f"{kind}.{mode}.sam"
                    m = run_timed([*seedmap, "map", str(fasta), str(reads), "--engine", kind, "--index", str(index),
                                   "-e", "5", "-t", str(args.threads), "-q", "-o", str(sam), *extra], log)
                    row[f"map_{mode}_s"] = m.wall_s
                    row[f"map_{mode}_peak_mb"] = m.peak_mb
                    row[f"map_{mode}_digest"] = records_digest(sam)
                    sam.unlink()
            except CommandFailed as exc:
                row["error"] = str(exc)
                print(f"# {exc}", file=sys.stderr)
            results.append(row)
            print(json.dumps(row), flush=True)
            if not args.keep:
                shutil.rmtree(index, ignore_errors=True)
            saved.write_text(json.dumps(results, indent=1))
    results.sort(key=lambda r: (r["size_mbp"], KINDS.index(r["kind"]) if r["kind"] in KINDS else 9))
    report(results, sorted({r["size_mbp"] for r in results}),
           [k for k in KINDS if any(r["kind"] == k for r in results)])
    return 0


def report(results: list[dict], sizes: list[int], kinds: list[str]) -> None:
    ok = [r for r in results if "error" not in r]
    head = ["genome", "kind", "segments", "build s", "build peak GB", "build B/base", "disk GB", "disk B/base",
            "map e=5 s", "map peak GB", "map B/base", "--best s", "--best peak GB"]
    rows = []
    for r in ok:
        n = r["bases"]
        rows.append([f"{r['size_mbp']} Mbp", r["kind"], str(r["segments"]), f"{r['build_s']:.1f}",
                     f"{r['build_peak_mb'] / 1024:.2f}", f"{r['build_peak_mb'] * 2**20 / n:.1f}",
                     f"{r['disk_mb'] / 1024:.2f}", f"{r['disk_mb'] * 2**20 / n:.1f}", f"{r['map_all_s']:.1f}",
                     f"{r['map_all_peak_mb'] / 1024:.2f}", f"{r['map_all_peak_mb'] * 2**20 / n:.1f}",
                     f"{r['map_best_s']:.1f}", f"{r['map_best_peak_mb'] / 1024:.2f}"])
    print(markdown_table(head, rows))
    print()
    same = {}
    for size in sizes:
        for mode in ("all", "best"):
            digests = {r[f"map_{mode}_digest"] for r in ok if r["size_mbp"] == size}
            same[(size, mode)] = len(digests) == 1
    print("records identical across engines:", ", ".join(f"{s} Mbp {m}: {'yes' if v else 'NO'}"
                                                         for (s, m), v in same.items()))
    print()
    # Growth: per-base figures of the largest genome over the smallest; extrapolation to 3.1 Gbp by a
    # least-squares line through (bases, bytes) of all sizes.
    head = ["kind", "figure", f"B/base at {sizes[0]} Mbp", f"B/base at {sizes[-1]} Mbp", "ratio",
            "fit: fixed GB + B/base", "at 3.1 Gbp"]
    rows = []
    for kind in kinds:
        rs = sorted((r for r in ok if r["kind"] == kind), key=lambda r: r["bases"])
        if len(rs) < 2:
            continue
        for label, key in (("build peak", "build_peak_mb"), ("disk", "disk_mb"), ("map peak (e=5)", "map_all_peak_mb"),
                           ("map peak (--best)", "map_best_peak_mb"), ("build time", "build_s"),
                           ("map time (e=5)", "map_all_s")):
            x = np.array([r["bases"] for r in rs], dtype=float)
            y = np.array([r[key] for r in rs], dtype=float) * (2**20 if key.endswith("_mb") else 1)
            slope, icpt = np.polyfit(x, y, 1)
            unit = "s" if key.endswith("_s") else "GB"
            scale = 1 if unit == "s" else 2**30
            first, last = y[0] / x[0], y[-1] / x[-1]
            per = "ns/base" if unit == "s" else "B/base"
            f = 1e9 if unit == "s" else 1
            rows.append([kind, label, f"{first * f:.2f} {per}", f"{last * f:.2f} {per}", f"{last / first:.2f}",
                         f"{icpt / scale:.2f} {unit} + {slope * f:.2f} {per}",
                         f"{(icpt + slope * HUMAN) / scale:.1f} {unit}"])
    print(markdown_table(head, rows))
    segmented = sorted({r["kind"] for r in ok if r["segments"] > 1})
    if segmented:
        print(f"\n{', '.join(segmented)}: built in genome segments at some sizes. The line above crosses from one "
              "segment to several and overstates; their peaks follow the segment size (docs/large-genomes.md).")


if __name__ == "__main__":
    sys.exit(main())
