"""Simulated pairs with known origins (mason_simulator) and the primary placements a SAM file gives.

Shared by paired.py and mapq.py. Stdlib only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from benchutil import find_exe, run_timed

Placement = tuple[str, int, bool]  # (rname, normalised 1-based start, reverse)
CLIP = re.compile(r"^(\d+)[SH]")


def simulate_pairs(ref: Path, work: Path, n: int, length: int, mean: int, sd: int, seed: int) -> tuple[Path, ...]:
    """mason paired-end Illumina reads (fr) and its truth SAM; cached by the parameters."""
    stem = work / f"pairs_n{n}_l{length}_f{mean}-{sd}_s{seed}"
    r1, r2, truth = Path(f"{stem}_1.fq"), Path(f"{stem}_2.fq"), Path(f"{stem}_truth.sam")
    if truth.exists():
        return r1, r2, truth
    mason = find_exe("mason_simulator")
    if mason is None:
        sys.exit("mason_simulator not found: install Debian package seqan-apps")
    tmp = [Path(f"{stem}_tmp{i}.{ext}") for i, ext in ((1, "fq"), (2, "fq"), (3, "sam"))]
    run_timed([mason, "-q", "-ir", str(ref), "-n", str(n), "--seed", str(seed), "--illumina-read-length",
               str(length), "--fragment-mean-size", str(mean), "--fragment-size-std-dev", str(sd),
               "-o", str(tmp[0]), "-or", str(tmp[1]), "-oa", str(tmp[2])], work / "mason_pairs.log")
    for src, dst in zip(tmp, (r1, r2, truth), strict=True):
        src.rename(dst)
    return r1, r2, truth


def primaries(sam: Path) -> dict[tuple[str, int], Placement | None]:
    """(qname without /1 /2, mate 1 or 2) -> primary placement, None when unmapped; plus MAPQ in mapqs()."""
    return {key: value[0] for key, value in _primary_records(sam).items()}


def mapqs(sam: Path) -> dict[tuple[str, int], tuple[Placement | None, int]]:
    return _primary_records(sam)


def _primary_records(sam: Path) -> dict[tuple[str, int], tuple[Placement | None, int]]:
    out: dict[tuple[str, int], tuple[Placement | None, int]] = {}
    with open(sam) as fh:
        for line in fh:
            if line.startswith("@"):
                continue
            f = line.split("\t", 6)
            flag = int(f[1])
            if flag & 0x900:
                continue
            name = f[0][:-2] if f[0][-2:] in ("/1", "/2") else f[0]
            mate = 2 if flag & 128 else 1
            if flag & 4:
                out[(name, mate)] = (None, 0)
                continue
            clip = CLIP.match(f[5])
            start = int(f[3]) - (int(clip.group(1)) if clip else 0)
            out[(name, mate)] = ((f[2], start, bool(flag & 16)), int(f[4]))
    return out


def at(placement: Placement | None, origin: Placement | None, slack: int) -> bool:
    return (placement is not None and origin is not None and placement[0] == origin[0]
            and placement[2] == origin[2] and abs(placement[1] - origin[1]) <= slack)
