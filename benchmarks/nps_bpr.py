"""mflBPR microbenchmark: neighborhoods processed per second (nps), serial CPU, as in Tran (paper 001).

For random patterns (a u-base seed and an r = l - e base neighborhood part), the whole seed block is
scanned by the anchored mflBPR kernel (h neighborhoods per 64-bit register). Two layouts:
- `unique`: the reduced structure's sorted unique neighborhoods (what `--filter bpr` scans);
- `all`: one neighborhood per position (Tran's general structure; his figure, 59 Mn/s serial CPU for
  l = 8 exact, counts these words).
nps = neighborhoods scanned / seconds. `scan_blocks` is the kernel benchmarks/nps.py's bpr row times, beside bs and ph.

    python benchmarks/nps_bpr.py            # u = 4, l in 4 8 16, e in 0 1 2, ragout-examples genomes
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from seedmap.filter.mflbpr import make_tables, match_group, slices
from seedmap.index import neighborhood
from seedmap.io.reference import Reference, read_fasta


@njit(cache=True, nogil=True)
def scan_blocks(patterns: np.ndarray, u: int, l: int, e: int, words: np.ndarray, block: np.ndarray) -> tuple[int, int]:
    """(neighborhoods scanned, matches) over the seed blocks of all patterns (rows: u + r codes)."""
    r = patterns.shape[1] - u
    s, h = slices(r)
    regs = np.empty(e + 1, dtype=np.uint64)
    scanned = 0
    matches = 0
    for i in range(patterns.shape[0]):
        a = 0
        for j in range(u):
            a = (a << 2) | patterns[i, j]
        b0, b1 = block[a], block[a + 1]
        tables, masks = make_tables(patterns[i, u:], r)
        for g0 in range(b0, b1, h):
            n = min(h, b1 - g0)
            acc = match_group(tables, masks, r, e, words, g0, n, l, True, regs)
            while acc:
                matches += 1
                acc &= acc - np.uint64(1)
        scanned += b1 - b0
    return scanned, matches


def layouts(ix: neighborhood.NeighborhoodIndex) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(words, block offsets) of the unique-neighborhood layout and of the one-per-position layout."""
    nb_pos = np.asarray(ix.nb_pos)
    counts = np.diff(nb_pos)
    return {"unique": (np.asarray(ix.nbs), np.asarray(ix.seed_start)),
            "all": (np.repeat(np.asarray(ix.nbs), counts), nb_pos[np.asarray(ix.seed_start)])}


def bpr_nps(words: np.ndarray, block: np.ndarray, u: int, l: int, e: int, n_patterns: int = 200,
            seed: int = 1, min_seconds: float = 1.0) -> dict[str, float]:
    """Neighborhoods processed per second by the serial mflBPR scan of random patterns' seed blocks."""
    if l - e < 1:
        raise ValueError("the neighborhood part needs l - e >= 1 bases")
    rng = np.random.default_rng(seed)
    patterns = rng.integers(0, 4, (n_patterns, u + l - e)).astype(np.uint8)
    scan_blocks(patterns[:1], u, l, e, words, block)  # compile
    scanned = matches = 0
    t0 = time.perf_counter()
    while True:
        s, m = scan_blocks(patterns, u, l, e, words, block)
        scanned += s
        matches += m
        elapsed = time.perf_counter() - t0
        if elapsed >= min_seconds:
            break
    return {"nps": scanned / elapsed, "scanned": float(scanned), "matches": float(matches), "seconds": elapsed}


def ragout_reference(limit_bp: int) -> Reference:
    from benchutil import ragout_files

    names, seqs, total = [], [], 0
    for path in ragout_files("*.fasta.gz"):
        ref = read_fasta(path)
        codes = ref.codes()
        for name, a, b in zip(ref.names, ref.starts[:-1], ref.starts[1:], strict=True):
            names.append(f"{path.stem}:{name}")
            seqs.append(np.asarray(codes[a:b]))
            total += int(b - a)
        if total >= limit_bp:
            break
    return Reference.from_codes(names, seqs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-u", type=int, default=4)
    ap.add_argument("-l", default="4,8,16")
    ap.add_argument("-e", default="0,1,2")
    ap.add_argument("--limit-bp", type=int, default=100_000_000)
    ap.add_argument("--patterns", type=int, default=200)
    args = ap.parse_args()
    ref = ragout_reference(args.limit_bp)
    print(f"reference: {len(ref.names)} sequences, {ref.total / 1e6:.1f} Mbp; u = {args.u}, serial")
    print(f"{'l':>3} {'e':>2} {'layout':>7} {'Mn/s':>9} {'scanned':>12} {'matches':>9}")
    for l in map(int, args.l.split(",")):
        ix = neighborhood.build(ref, args.u, l)
        for name, (words, block) in layouts(ix).items():
            for e in map(int, args.e.split(",")):
                res = bpr_nps(words, block, args.u, l, e, args.patterns)
                print(f"{l:3d} {e:2d} {name:>7} {res['nps'] / 1e6:9.1f} {res['scanned']:12.0f} "
                      f"{res['matches']:9.0f}", flush=True)


if __name__ == "__main__":
    main()
