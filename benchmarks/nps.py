#!/usr/bin/env python3
"""Neighborhood-filter microbenchmark: neighborhoods processed per second (nps), as in Tran's thesis §5.1.

Tran's metric: a query pattern sq (seed s of u bases + neighborhood q of l bases) is matched, with at
most e substitutions in q, against the SeedBlock of s; that counts as N_s neighborhoods processed,
N_s = the block's size in the *general* structure (every occurrence of s, duplicates included, which
here is the number of positions of s). For a set of queries P filtered in time T:

    nps = sum over sq in P of N_s / T

For binary search (bs) and perfect hashing (ph) this measures index information covered, not
comparisons made (neither looks at every neighborhood); it is the number the thesis reports. The time
here covers the filter only (patterns enumerated and looked up, matching position ranges summed), as
in the thesis (position retrieval excluded), serial on one core.

Setup as in the thesis: u = 4, l in {4, 8, 16}, e in {0, 1, 2} (Hamming), 1000 queries; the text is the
first 100 Mbp-equivalent of the Debian ragout-examples genomes (all references, about 48 Mbp, topped up
with 1%-mutated copies as benchmarks/index_build.py does; --mbp takes a smaller prefix). Queries are
words of the text at random positions (so most have hits). Every filter must return the same count.

Add a filter by putting a function (index, words, e) -> matching positions into FILTERS: index is a
NeighborhoodIndex (u, l, seed_start, nbs, nb_pos, pos, ph), words a uint8 array (queries, u + l).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
from benchutil import DEFAULT_WORK, markdown_table
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from nps_bpr import scan_blocks  # noqa: E402

from seedmap.filter.degenerate import max_patterns  # noqa: E402
from seedmap.filter.neighborhood_passes import Plan, SeedBlocks, _lookup, new_scratch  # noqa: E402
from seedmap.index import neighborhood, perfect_hash  # noqa: E402
from seedmap.io.reference import Reference, read_fasta  # noqa: E402

# Tran (thesis 000, Ch. 5; paper 003): published throughput, neighborhoods per second.
PUBLISHED = {
    "bs": "CPU 10^9-10^11 (GPU 10^10-10^12)",
    "ph": "CPU 10^9-10^11 (GPU 10^11-10^12)",
    "bpr": "serial CPU 5.9e7 (l=8, e=0)",
}


@njit(cache=True, nogil=True)
def _count(words: np.ndarray, plan: Plan, ix: SeedBlocks, ph: perfect_hash.Tables | None) -> int:
    """Positions matched by every word, looked up by perfect hash (ph) or binary search (ph None)."""
    l, e = plan.l, plan.fe
    out = np.empty((max_patterns(l, e), 2), dtype=np.int64)
    scratch = new_scratch(ph, max_patterns(l, e))
    total = 0
    u = plan.care.size
    for w in range(words.shape[0]):
        n = _lookup(words[w], 0, u + l, plan, ix, ph, out, scratch)
        for i in range(n):
            total += out[i, 1] - out[i, 0]
    return total


def bs_filter(ix: neighborhood.NeighborhoodIndex, words: np.ndarray, e: int) -> int:
    return int(_count(words, Plan(ix.care, ix.l, 0, 0, e), SeedBlocks(ix.seed_start, ix.nbs, ix.nb_pos, ix.pos), None))


def ph_filter(ix: neighborhood.NeighborhoodIndex, words: np.ndarray, e: int) -> int:
    ph = ix.ph
    return int(_count(words, Plan(ix.care, ix.l, 0, 0, e), SeedBlocks(ix.seed_start, ix.nbs, ix.nb_pos, ix.pos),
                      perfect_hash.Tables(ph.ph_off, ph.ph_block, ph.ph_g, ph.ph_table)))


def bpr_filter(ix: neighborhood.NeighborhoodIndex, words: np.ndarray, e: int) -> int:
    """Unique neighborhoods matched by mflBPR (anchored, e edits over the first l - e bases)."""
    if ix.l - e < 1:
        return -1  # no neighborhood part left to match
    patterns = np.ascontiguousarray(words[:, :ix.u + ix.l - e])
    return int(scan_blocks(patterns, ix.u, ix.l, e, ix.nbs, ix.seed_start)[1])


FILTERS: dict[str, Callable[[neighborhood.NeighborhoodIndex, np.ndarray, int], int]] = {
    "bs": bs_filter,
    "ph": ph_filter,
    "bpr": bpr_filter,
}
SAME_HITS = ("bs", "ph")  # Hamming filters over the same patterns


def text(work: Path, mbp: float) -> Reference:
    """The first `mbp` Mbp of the ragout-examples genomes (topped up to 100 Mbp with mutated copies)."""
    from index_build import build_reference

    fasta = work / "nps" / "ragout_100M.fa"
    if not fasta.exists():
        fasta.parent.mkdir(parents=True, exist_ok=True)
        build_reference(fasta, 100_000_000, 0.01, 7)
    ref = read_fasta(str(fasta))
    n = min(int(mbp * 1e6), ref.total)
    codes = ref.codes()[:n]
    return Reference.from_codes(["text"], [codes])


def queries(codes: np.ndarray, k: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n N-free words of length k at random positions of the text."""
    out = []
    while sum(len(o) for o in out) < n:
        p = rng.integers(0, codes.size - k, 2 * n)
        words = codes[p[:, None] + np.arange(k)]
        out.append(words[(words < 4).all(axis=1)])
    return np.ascontiguousarray(np.concatenate(out)[:n])


def block_sizes(ix: neighborhood.NeighborhoodIndex, words: np.ndarray) -> int:
    """Sum of N_s (general-structure block sizes: positions of each query's seed)."""
    a = np.zeros(words.shape[0], dtype=np.int64)
    for i in range(ix.u):
        a = (a << 2) | words[:, i]
    return int((ix.nb_pos[ix.seed_start[a + 1]] - ix.nb_pos[ix.seed_start[a]]).sum())


def timed(fn: Callable[[], int], min_seconds: float) -> tuple[int, float]:
    """(result, seconds per call), repeating until min_seconds have passed (best of the repeats)."""
    result = fn()  # compiles
    best, spent = float("inf"), 0.0
    while spent < min_seconds:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
    return result, best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mbp", type=float, default=100.0, help="text prefix in Mbp (default %(default)s)")
    ap.add_argument("-u", type=int, default=4, help="seed length (default %(default)s)")
    ap.add_argument("--lengths", default="4,8,16", help="neighborhood lengths l (default %(default)s)")
    ap.add_argument("--errors", default="0,1,2", help="substitutions e (default %(default)s)")
    ap.add_argument("--queries", type=int, default=1000, help="query patterns (default %(default)s)")
    ap.add_argument("--filters", default=",".join(FILTERS), help="filters (default %(default)s)")
    ap.add_argument("--min-seconds", type=float, default=0.3, help="time per measurement (default %(default)s)")
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="scratch dir (default %(default)s)")
    args = ap.parse_args(argv)

    from seedmap.spread import set_share

    set_share(1)
    t0 = time.perf_counter()
    ref = text(args.work, args.mbp)
    codes = ref.codes()
    print(f"text: {ref.total / 1e6:.1f} Mbp ({time.perf_counter() - t0:.0f} s to load)", flush=True)
    rng = np.random.default_rng(1)
    rows = []
    for l in (int(x) for x in args.lengths.split(",")):
        t0 = time.perf_counter()
        ix = neighborhood.build(ref, args.u, l)
        t1 = time.perf_counter()
        ix.ph = perfect_hash.build(ix.seed_start, ix.nbs)
        t2 = time.perf_counter()
        print(f"u={args.u} l={l}: {ix.nbs.size} unique neighborhoods; index {t1 - t0:.1f} s, perfect hashes "
              f"{t2 - t1:.1f} s ({ix.ph.ph_table.size / max(ix.nbs.size, 1):.3f} slots per key)", flush=True)
        words = queries(codes, args.u + l, args.queries, rng)
        ns = block_sizes(ix, words)
        for e in (int(x) for x in args.errors.split(",")):
            counts = {}
            for name in args.filters.split(","):
                count, seconds = timed(partial(FILTERS[name], ix, words, e), args.min_seconds)
                counts[name] = count
                rows.append([name, str(l), str(e), str(count), f"{seconds * 1e3:.3f}", f"{ns / seconds:.2e}",
                             PUBLISHED.get(name, "")])
                print(f"  {name} l={l} e={e}: {count} hits, {seconds * 1e3:.3f} ms, {ns / seconds:.2e} nps",
                      flush=True)
            if len({counts[name] for name in SAME_HITS if name in counts}) > 1:
                sys.exit(f"filters disagree at l={l}, e={e}: {counts}")
    print()
    print(f"{args.queries} queries, u = {args.u}, text {ref.total / 1e6:.1f} Mbp, serial (1 thread); "
          "nps = sum of the queries' seed-block sizes (general structure) / filter time")
    print(markdown_table(["filter", "l", "e", "hits", "ms", "nps", "Tran (published)"], rows))


if __name__ == "__main__":
    main()
