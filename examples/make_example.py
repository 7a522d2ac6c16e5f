"""Generate the small example shipped in examples/: a 300 kbp genome in 3 records and 5,000 reads.

The genome has what real FASTA has: lowercase runs, IUPAC codes, an N gap, ragged line lengths,
an empty record, repeats (a 2 kbp segment copied 6 times with a few mutations, a tandem repeat).
Reads are 100 bp from both strands with up to 6 random edits (substitutions, insertions, deletions).
Deterministic: run it again to get the same files.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def genome(rng: np.random.Generator) -> list[str]:
    def rand(n: int) -> str:
        return "".join(rng.choice(list("ACGT"), n))

    seg = rand(2000)
    parts = [rand(50_000)]
    for _ in range(6):
        copy = list(seg)
        for k in rng.integers(0, len(copy), 10):
            copy[k] = "ACGT"[rng.integers(0, 4)]
        parts += ["".join(copy), rand(int(rng.integers(1000, 5000)))]
    parts += ["ACGTTGA" * 200, "N" * 500, rand(60_000)]
    chrom1 = "".join(parts)
    chrom1 = chrom1[:30_000] + chrom1[30_000:32_000].lower() + chrom1[32_000:]
    chrom2 = list(rand(120_000))
    for k in rng.integers(0, len(chrom2), 40):
        chrom2[k] = "RYKMSWN"[rng.integers(0, 7)]
    return [chrom1, "".join(chrom2), rand(30_000)]


def mutate(rng: np.random.Generator, s: str, edits: int) -> str:
    r = list(s)
    for _ in range(edits):
        k = int(rng.integers(0, len(r)))
        op = int(rng.integers(0, 3))
        if op == 0:
            r[k] = "ACGT"[rng.integers(0, 4)]
        elif op == 1:
            r.insert(k, "ACGT"[rng.integers(0, 4)])
        else:
            del r[k]
    return "".join(r)


def _gz_text(path: Path) -> io.TextIOWrapper:
    """Reproducible gzip (no timestamp in the header)."""
    return io.TextIOWrapper(gzip.GzipFile(path, "wb", compresslevel=9, mtime=0), encoding="ascii")


def main() -> None:
    rng = np.random.default_rng(2026)
    seqs = genome(rng)
    with _gz_text(HERE / "ref.fa.gz") as f:
        for name, seq in zip(["chr1", "chr2", "plasmid"], seqs, strict=True):
            f.write(f">{name} example sequence\n")
            pos = 0
            while pos < len(seq):
                width = int(rng.choice([60, 70, 80]))
                f.write(seq[pos:pos + width] + "\n")
                pos += width
            if name == "chr1":
                f.write(">empty_record\n")
    comp = str.maketrans("ACGTacgtRYKMSWN", "TGCAtgcaNNNNNNN")
    with _gz_text(HERE / "reads.fq.gz") as f:
        for i in range(5000):
            s = int(rng.integers(0, 3))
            p = int(rng.integers(0, len(seqs[s]) - 100))
            read = mutate(rng, seqs[s][p:p + 100].upper(), int(rng.integers(0, 7)))
            strand = "+"
            if rng.random() < 0.5:
                read, strand = read.translate(comp)[::-1], "-"
            qual = "".join(chr(33 + int(q)) for q in rng.integers(20, 41, len(read)))
            f.write(f"@read{i} origin={['chr1', 'chr2', 'plasmid'][s]}:{p + 1}{strand}\n{read}\n+\n{qual}\n")


if __name__ == "__main__":
    main()
