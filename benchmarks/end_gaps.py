#!/usr/bin/env python3
"""Primary records whose CIGAR begins or ends with an insertion or a deletion, per SAM file.

A gap at a read end is what a variant caller reads as an indel there; bwa and yara report a substitution
where one does as well (issue 35: seedmap wrote `1I99M` at p + 1 for `100M` at p). Give the SAM files of
the same reads from several mappers:

    python benchmarks/end_gaps.py seedmap.sam yara.sam bwa.sam
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from benchutil import markdown_table

OPS = re.compile(rb"(\d+)([MIDNSHP=X])")


def end_gaps(sam: Path) -> dict[str, int]:
    counts = {"primaries": 0, "lead I": 0, "lead D": 0, "trail I": 0, "trail D": 0}
    with open(sam, "rb") as fh:
        for line in fh:
            if line[:1] == b"@":
                continue
            f = line.split(b"\t", 6)
            if int(f[1]) & 0x904:
                continue
            counts["primaries"] += 1
            ops = [op for _, op in OPS.findall(f[5]) if op not in b"SH"]  # clipping is not a gap
            for side, op in (("lead", ops[0]), ("trail", ops[-1])):
                if op in b"ID":
                    counts[f"{side} {op.decode()}"] += 1
    return counts


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sam", nargs="+", type=Path)
    args = ap.parse_args(argv)
    rows = []
    for sam in args.sam:
        c = end_gaps(sam)
        rows.append([sam.name, *(f"{v:,}" for v in c.values())])
    print(markdown_table(["SAM", "primaries", "begin I", "begin D", "end I", "end D"], rows))


if __name__ == "__main__":
    sys.exit(main())
