#!/usr/bin/env python3
"""Time `seedmap index` on a ~50 Mbp multi-sequence reference.

The reference is every complete genome in Debian's ragout-examples (E. coli, H. pylori,
S. aureus, V. cholerae references: 20 records, ~48 Mbp), topped up with mutated copies
(~1% substitutions, fixed RNG seed) until the total reaches --target-mbp. Copies are separate
records named <original>_mut<round>. The draft *_contigs assemblies are left out on purpose: they
duplicate the references. The FASTA is cached in the work dir; the index is always rebuilt.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
from benchutil import (
    DEFAULT_WORK,
    CommandFailed,
    find_exe,
    markdown_table,
    ragout_files,
    read_fasta,
    run_timed,
    seedmap_prefix,
    write_fasta_record,
)

BASES = np.frombuffer(b"ACGT", dtype=np.uint8)
CODE = np.zeros(256, dtype=np.uint8)  # base -> 0..3; IUPAC/N map to 0 (A) before mutating
CODE[BASES] = np.arange(4, dtype=np.uint8)


def clean_name(header_word: str) -> str:
    """'gi|386593590|ref|NC_017625.1|' -> 'NC_017625.1'; other ids just lose odd characters."""
    parts = [p for p in header_word.split("|") if p]
    name = parts[3] if len(parts) >= 4 and parts[0] == "gi" else header_word
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def load_genomes() -> list[tuple[str, str]]:
    files = ragout_files("*/references/*.fasta*")
    if not files:
        sys.exit("no genomes found: install Debian package ragout-examples")
    return [(clean_name(name), seq) for path in files for name, seq in read_fasta(path)]


def mutate(seq: str, rate: float, rng: np.random.Generator) -> str:
    """Substitute ~rate of the positions, always by a different base."""
    arr = np.frombuffer(seq.encode("ascii"), dtype=np.uint8).copy()
    pos = np.flatnonzero(rng.random(arr.size) < rate)
    shift = rng.integers(1, 4, size=pos.size, dtype=np.uint8)
    arr[pos] = BASES[(CODE[arr[pos]] + shift) % 4]
    return arr.tobytes().decode("ascii")


def build_reference(path: Path, target_bp: int, rate: float, seed: int) -> tuple[int, int]:
    """Write the FASTA; returns (records, total bp)."""
    genomes = load_genomes()
    rng = np.random.default_rng(seed)
    records = total = 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        for name, seq in genomes:
            write_fasta_record(fh, name, seq)
            records, total = records + 1, total + len(seq)
        copy_round = 0
        while total < target_bp:  # cycle through the genomes, one mutated copy each, until big enough
            copy_round += 1
            for name, seq in genomes:
                if total >= target_bp:
                    break
                write_fasta_record(fh, f"{name}_mut{copy_round}", mutate(seq, rate, rng))
                records, total = records + 1, total + len(seq)
    tmp.rename(path)
    return records, total


def fasta_stats(path: Path) -> tuple[int, int]:
    """(records, total bp) of an existing (cached) FASTA without holding it in memory."""
    records = total = 0
    with open(path) as fh:
        for line in fh:
            if line.startswith(">"):
                records += 1
            else:
                total += len(line.strip())
    return records, total


def dir_size_mb(path: Path, exclude: set[Path]) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p not in exclude) / 2**20


def clear_except(path: Path, keep: set[Path]) -> None:
    """Remove earlier index files so seedmap builds from scratch (we own this directory)."""
    for p in sorted(path.rglob("*"), reverse=True):  # children before their dirs
        if p in keep:
            continue
        if p.is_dir():
            p.rmdir()
        else:
            p.unlink()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="scratch dir (default: %(default)s)")
    ap.add_argument("--target-mbp", type=float, default=50.0, help="minimum size (default: %(default)s)")
    ap.add_argument("--mut-rate", type=float, default=0.01, help="substitution rate (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=7, help="RNG seed for the copies (default: %(default)s)")
    ap.add_argument("--seedmap-cmd", help="how to invoke seedmap, e.g. 'python -m seedmap'")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    seedmap = seedmap_prefix(args.seedmap_cmd)
    if find_exe(seedmap[0]) is None:
        print(f"seedmap: skipped, {seedmap[0]} not on PATH (try --seedmap-cmd 'python -m seedmap')")
        return

    out_dir = args.work.resolve() / "index_build"
    out_dir.mkdir(parents=True, exist_ok=True)
    fasta = out_dir / f"multi_{args.target_mbp:g}M_r{args.mut_rate:g}_s{args.seed}.fa"
    if fasta.exists():
        records, total = fasta_stats(fasta)
    else:
        records, total = build_reference(fasta, int(args.target_mbp * 1e6), args.mut_rate, args.seed)
    clear_except(out_dir, {fasta})

    log = out_dir.parent / "index_build.log"  # outside out_dir so it is not counted as index
    try:
        timing = run_timed([*seedmap, "index", str(fasta)], log, cwd=out_dir)
    except CommandFailed as exc:
        print(f"seedmap index failed: {exc}")
        sys.exit(1)

    header = ["reference", "records", "Mbp", "index s", "peak MB", "index files MB"]
    row = [
        fasta.name,
        str(records),
        f"{total / 1e6:.1f}",
        f"{timing.wall_s:.2f}",
        f"{timing.peak_mb:.0f}",
        f"{dir_size_mb(out_dir, {fasta}):.0f}",
    ]
    print(markdown_table(header, [row]))


if __name__ == "__main__":
    main()
