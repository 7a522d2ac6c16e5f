#!/usr/bin/env python3
"""Write a synthetic genome with human-like repeat structure (FASTA), for tests and benchmarks where
repeats matter: they are what make candidate counts and index memory explode.

    python benchmarks/synthetic_genome.py 250 benchmarks/work/synth250/synth250.fa --seed 7   # 250 Mbp
    python benchmarks/synthetic_genome.py 1 tiny.fa --bed tiny.bed                          # + repeat annotation

What it holds (fractions of each chromosome's body; approximate, drawn per 4 Mbp block):
- background: i.i.d. bases, GC content varying by 300 kbp isochores around 41%;
- Alu-like family, ~10%: 3 subfamilies of a ~310 bp GC-rich consensus ending in a poly-A tail; copies
  mostly full length, 5-20% diverged from their subfamily (85% substitutions, 15% 1-3 bp indels),
  either strand;
- L1-like family, ~15%: 3 subfamilies of a 6 kbp AT-rich consensus; copies 5'-truncated (10% full
  length, the rest about 900 bp on average), 5-20% diverged, either strand;
- tandem repeats: microsatellites (~2%, units of 1-6 bp, 15-150 bp arrays, 0-5% diverged) and satellite
  arrays (~1%, 171/68/42 bp units, 1-20 kbp arrays, 2-8% diverged per base); each chromosome's centromere
  is 1% alpha-like satellite around an N gap;
- N gaps: 10 kbp (at most 1% of the sequence) at both chromosome ends, the centromere's (0.5%), and
  100 bp-50 kbp gaps inside (about one per 2 Mbp);
- repeats soft-masked (lowercase, as RepeatMasker leaves them in UCSC/Ensembl FASTA); a few IUPAC codes
  (R Y K M S W B D H V; 2 per Mbp, at least one per sequence);
- records: chromosome-like sequences chr1..chrN with decreasing lengths, then small unplaced scaffolds.

Deterministic for a seed (and size and layout options). The genome is made and written block by block
(4 Mbp of sequence at a time, each from its own random stream), so memory stays at a few hundred MB
whatever the size (230 MB for 1 Gbp); everything is vectorised with numpy (no per-base Python loops):
1 Gbp takes 80 s on one core.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

import numpy as np

BLOCK = 4_000_000  # bases generated at a time (each block has its own random stream)
ISOCHORE = 300_000
GC_MEAN = 0.41
WIDTH = 60

# Element kinds (BED names: the kind, then the subfamily).
ALU, L1, MICRO, SATELLITE, GAP = range(5)
KIND_NAMES = ("Alu", "L1", "microsatellite", "satellite", "gap")
# Fraction of a chromosome body made of each kind (gaps inside the body are drawn separately).
FRACTIONS = {ALU: 0.10, L1: 0.15, MICRO: 0.02, SATELLITE: 0.008}
INNER_GAP_EVERY = 2_000_000  # bases per inner N gap, on average
DIVERGENCE = {ALU: (0.05, 0.20), L1: (0.05, 0.20), MICRO: (0.0, 0.05), SATELLITE: (0.02, 0.08)}
INDEL_SHARE = 0.15  # of the divergence; the rest are substitutions
ALU_LENGTH = 290  # + the poly-A tail
L1_LENGTH = 6000
SATELLITE_UNITS = (171, 68, 42)  # alpha-like (centromeres), and two others
IUPAC_PER_BASE = 2e-6

UPPER = np.frombuffer(b"ACGTNRYKMSWBDHV", dtype=np.uint8)  # codes 0..3 bases, 4 N, 5.. IUPAC
N_CODE = 4
N_IUPAC = 10


@dataclass(frozen=True)
class Families:
    """Consensus sequences (codes 0..3): Alu and L1 subfamilies, satellite units."""

    alu: tuple[np.ndarray, ...]
    l1: tuple[np.ndarray, ...]
    satellites: tuple[np.ndarray, ...]


@dataclass
class Summary:
    """What was written: records, and bases and copies per feature."""

    names: list[str] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    copies: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KIND_NAMES, 0))
    bases: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KIND_NAMES, 0))
    n_bases: int = 0  # N, gaps included
    lowercase: int = 0
    iupac: int = 0

    @property
    def total(self) -> int:
        return sum(self.lengths)


def _random_codes(rng: np.random.Generator, n: int, gc: float) -> np.ndarray:
    u = rng.random(n)
    return _codes_from_uniform(u, np.full(n, gc))


def _codes_from_uniform(u: np.ndarray, gc: np.ndarray) -> np.ndarray:
    """A C G T with P(C) = P(G) = gc / 2 from uniform draws u."""
    codes = np.where(u < gc, np.where(u < gc / 2, 1, 2), np.where(u < gc + (1 - gc) / 2, 0, 3))
    return codes.astype(np.uint8)


def families(seed: int) -> Families:
    """The repeat families of genome `seed`: subfamilies differ from their family's consensus by 3%."""
    rng = np.random.default_rng([seed, 0])

    def subfamilies(consensus: np.ndarray) -> tuple[np.ndarray, ...]:
        out = [consensus]
        for _ in range(2):
            sub = consensus.copy()
            hit = np.flatnonzero(rng.random(sub.size) < 0.03)
            sub[hit] = (sub[hit] + rng.integers(1, 4, hit.size)) % 4
            out.append(sub)
        return tuple(out)

    alu = np.concatenate([_random_codes(rng, ALU_LENGTH, 0.58), np.zeros(20, np.uint8)])  # poly-A tail
    l1 = _random_codes(rng, L1_LENGTH, 0.40)
    sats = tuple(_random_codes(rng, u, 0.38) for u in SATELLITE_UNITS)
    return Families(subfamilies(alu), subfamilies(l1), sats)


# ------------------------------------------------------------------------------------------- elements


@dataclass
class Elements:
    """Element copies of one block, concatenated: codes (N = 4), and per copy its length, kind, subfamily
    and strand (1 = reverse complement)."""

    codes: np.ndarray
    lengths: np.ndarray
    kind: np.ndarray
    family: np.ndarray
    strand: np.ndarray

    @staticmethod
    def concat(parts: list[Elements]) -> Elements:
        return Elements(*(np.concatenate([getattr(p, f) for p in parts])
                          for f in ("codes", "lengths", "kind", "family", "strand")))


def _within(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ..., lengths[k] - 1 for every k, concatenated."""
    total = int(lengths.sum())
    return np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def _lengths_up_to(rng: np.random.Generator, target: int, draw: object) -> np.ndarray:
    """Lengths from draw(rng, n) until they add up to about `target` bases."""
    if target <= 0:
        return np.zeros(0, dtype=np.int64)
    sample = np.asarray(draw(rng, 64), dtype=np.int64)
    n = max(8, int(2 * target / max(sample.mean(), 1)) + 8)
    lengths = np.asarray(draw(rng, n), dtype=np.int64)
    return lengths[np.cumsum(lengths) <= target]


def _diverge(rng: np.random.Generator, codes: np.ndarray, lengths: np.ndarray,
             divergence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each copy k (codes[sum(lengths[:k]):][:lengths[k]]) mutated at rate divergence[k] per base:
    substitutions, and 1-3 bp insertions and deletions (INDEL_SHARE of the events)."""
    if codes.size == 0:
        return codes, lengths
    d = np.repeat(divergence, lengths)
    u = rng.random(codes.size)
    sub = u < d * (1 - INDEL_SHARE)
    ins = (u >= d * (1 - INDEL_SHARE)) & (u < d * (1 - INDEL_SHARE / 2))
    dele = (u >= d * (1 - INDEL_SHARE / 2)) & (u < d)
    codes = codes.copy()
    codes[sub] = (codes[sub] + rng.integers(1, 4, int(sub.sum()), dtype=np.uint8)) % 4
    per = (~dele).astype(np.int64)
    per[ins] += rng.integers(1, 4, int(ins.sum()))
    per[np.cumsum(lengths) - 1] = np.maximum(per[np.cumsum(lengths) - 1], 1)  # no copy vanishes
    out = rng.integers(0, 4, int(per.sum()), dtype=np.uint8)  # inserted bases: random
    slot = np.cumsum(per) - per
    keep = per > 0
    out[slot[keep]] = codes[keep]
    new_lengths = np.add.reduceat(per, np.cumsum(lengths) - lengths)
    return out, new_lengths


def _reverse_complement(codes: np.ndarray, lengths: np.ndarray, reverse: np.ndarray) -> np.ndarray:
    """The copies with reverse[k] set reverse-complemented in place (N stays N)."""
    starts = np.cumsum(lengths) - lengths
    within = _within(lengths)
    rev = np.repeat(reverse.astype(bool), lengths)
    src = np.arange(codes.size)
    src[rev] = (np.repeat(starts + lengths - 1, lengths) - within)[rev]
    out = codes[src]
    flip = rev & (out < 4)
    out[flip] = 3 - out[flip]
    return out


def _interspersed(rng: np.random.Generator, subfams: tuple[np.ndarray, ...], lengths: np.ndarray,
                  kind: int) -> Elements:
    """Copies of a family's subfamilies: the last `lengths[k]` bases of the consensus (5' truncation),
    diverged, on a random strand."""
    n = lengths.size
    cons = np.concatenate(subfams)
    cons_start = np.cumsum([0] + [s.size for s in subfams])[:-1]
    fam = rng.integers(0, len(subfams), n)
    full = np.array([s.size for s in subfams])[fam]
    lengths = np.minimum(lengths, full)
    src = np.repeat(cons_start[fam] + full - lengths, lengths) + _within(lengths)
    lo, hi = DIVERGENCE[kind]
    codes, lengths = _diverge(rng, cons[src], lengths, rng.uniform(lo, hi, n))
    strand = rng.integers(0, 2, n)
    codes = _reverse_complement(codes, lengths, strand)
    return Elements(codes, lengths, np.full(n, kind), fam, strand)


def _tandem(rng: np.random.Generator, units: np.ndarray, unit_len: np.ndarray, lengths: np.ndarray,
            kind: int, family: np.ndarray) -> Elements:
    """Arrays of lengths[k] bases repeating units[k, :unit_len[k]] from a random phase, diverged."""
    n = lengths.size
    within = _within(lengths)
    k = np.repeat(np.arange(n), lengths)
    phase = rng.integers(0, 1 << 20, n)
    codes = units[k, (within + phase[k]) % unit_len[k]]
    lo, hi = DIVERGENCE[kind]
    codes, lengths = _diverge(rng, codes, lengths, rng.uniform(lo, hi, n))
    return Elements(codes, lengths, np.full(n, kind), family, np.zeros(n, dtype=np.int64))


def _block_elements(rng: np.random.Generator, fams: Families, size: int) -> Elements:
    def alu_lengths(r: np.random.Generator, n: int) -> np.ndarray:
        full = fams.alu[0].size
        return np.where(r.random(n) < 0.9, full, r.integers(100, full, n))

    def l1_lengths(r: np.random.Generator, n: int) -> np.ndarray:
        return np.where(r.random(n) < 0.1, L1_LENGTH, np.clip(r.exponential(900, n), 100, L1_LENGTH))

    parts = [
        _interspersed(rng, fams.alu, _lengths_up_to(rng, int(FRACTIONS[ALU] * size), alu_lengths), ALU),
        _interspersed(rng, fams.l1, _lengths_up_to(rng, int(FRACTIONS[L1] * size), l1_lengths), L1),
    ]
    # Microsatellites: units of 1-6 bases (mostly 1, 2 and 4, as in human), arrays of 15-150 bases.
    lengths = _lengths_up_to(rng, int(FRACTIONS[MICRO] * size),
                             lambda r, n: np.clip(15 + r.geometric(1 / 30, n), 15, 150))
    n = lengths.size
    unit_len = rng.choice(np.arange(1, 7), n, p=[0.3, 0.3, 0.1, 0.2, 0.05, 0.05])
    units = rng.integers(0, 4, (n, 6), dtype=np.uint8)
    parts.append(_tandem(rng, units, unit_len, lengths, MICRO, unit_len))
    # Satellite arrays: one of the satellite units, 1-20 kbp (at most an eighth of the block).
    lengths = _lengths_up_to(rng, int(FRACTIONS[SATELLITE] * size),
                             lambda r, n: r.integers(1000, max(1001, min(20_000, size // 8)), n))
    n = lengths.size
    fam = rng.integers(0, len(fams.satellites), n)
    units = np.zeros((len(fams.satellites), max(SATELLITE_UNITS)), dtype=np.uint8)
    for i, unit in enumerate(fams.satellites):
        units[i, :unit.size] = unit
    parts.append(_tandem(rng, units[fam], np.array(SATELLITE_UNITS)[fam], lengths, SATELLITE, fam))
    # Inner N gaps: log-uniform 100 bp - 50 kbp (at most a fiftieth of the block).
    n = rng.poisson(size / INNER_GAP_EVERY)
    top = max(101, min(50_000, size // 50))
    lengths = np.exp(rng.uniform(np.log(100), np.log(top), n)).astype(np.int64)
    parts.append(Elements(np.full(int(lengths.sum()), N_CODE, np.uint8), lengths, np.full(n, GAP),
                          np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)))
    return Elements.concat(parts)


# ------------------------------------------------------------------------------------------- blocks


@dataclass
class Chunk:
    """Some consecutive bases of one sequence: codes (0..3, N = 4, IUPAC 5..), soft-mask, and the
    elements placed in it (start within the chunk, length, kind, subfamily, strand)."""

    codes: np.ndarray
    lower: np.ndarray
    elements: tuple[np.ndarray, ...] = ()


def _body_block(rng: np.random.Generator, fams: Families, size: int, first: bool) -> Chunk:
    """`size` bases of chromosome body: background with the block's elements placed between runs of it.
    The first block of a sequence has at least one IUPAC code."""
    n_iso = size // ISOCHORE + 1
    gc = np.clip(rng.normal(GC_MEAN, 0.04, n_iso), 0.30, 0.60)
    codes = _codes_from_uniform(rng.random(size), np.repeat(gc, ISOCHORE)[:size])
    lower = np.zeros(size, dtype=bool)
    el = _block_elements(rng, fams, size)
    order = rng.permutation(el.lengths.size)
    order = order[np.cumsum(el.lengths[order]) <= size]  # a tiny block keeps what fits
    lens = el.lengths[order]
    background = size - int(lens.sum())
    cuts = np.sort(rng.integers(0, background + 1, order.size))
    dest = cuts + np.cumsum(lens) - lens  # background before the element + the elements before it
    src = (np.cumsum(el.lengths) - el.lengths)[order]
    within = _within(lens)
    d = np.repeat(dest, lens) + within
    codes[d] = el.codes[np.repeat(src, lens) + within]
    lower[d] = np.repeat(el.kind[order] != GAP, lens)
    # IUPAC codes outside gaps
    spots = np.flatnonzero(codes < N_CODE)
    if spots.size:
        spots = spots[rng.integers(0, spots.size, max(int(first), rng.poisson(IUPAC_PER_BASE * size)))]
    codes[spots] = 5 + rng.integers(0, N_IUPAC, spots.size)
    return Chunk(codes, lower, (dest, lens, el.kind[order], el.family[order], el.strand[order]))


def _whole(kind: int, size: int) -> tuple[np.ndarray, ...]:
    """A region's one element, carried by its first chunk: start 0, `size` bases (the chunks that follow)."""
    return np.array([0]), np.array([size]), np.array([kind]), np.array([0]), np.array([0])


def _gap(size: int) -> Iterator[Chunk]:
    for a in range(0, size, BLOCK):
        n = min(BLOCK, size - a)
        yield Chunk(np.full(n, N_CODE, np.uint8), np.zeros(n, dtype=bool), _whole(GAP, size) if a == 0 else ())


def _centromere_satellite(rng: np.random.Generator, unit: np.ndarray, size: int) -> Iterator[Chunk]:
    """Alpha-like satellite: the unit repeated, 2-8% substitutions (one divergence per array)."""
    phase = int(rng.integers(0, unit.size))
    rate = rng.uniform(*DIVERGENCE[SATELLITE])
    for a in range(0, size, BLOCK):
        n = min(BLOCK, size - a)
        codes = unit[(phase + a + np.arange(n)) % unit.size]
        hit = np.flatnonzero(rng.random(n) < rate)
        codes[hit] = (codes[hit] + rng.integers(1, 4, hit.size, dtype=np.uint8)) % 4
        yield Chunk(codes, np.ones(n, dtype=bool), _whole(SATELLITE, size) if a == 0 else ())


def _sequence(seed: int, index: int, length: int, chromosome: bool, fams: Families) -> Iterator[Chunk]:
    """The chunks of sequence `index`: a chromosome has N gaps at both ends and a centromere (satellite
    around an N gap) in the middle; a scaffold is body only."""
    rng = np.random.default_rng([seed, 1, index])
    telomere = min(10_000, length // 100) if chromosome else 0
    cen_gap = length // 200 if chromosome else 0
    cen_sat = length // 200 if chromosome else 0  # on each side of the gap
    body = length - 2 * telomere - cen_gap - 2 * cen_sat
    left = body // 2
    layout = [("gap", telomere), ("body", left), ("sat", cen_sat), ("gap", cen_gap), ("sat", cen_sat),
              ("body", body - left), ("gap", telomere)]
    block = 0
    for what, size in layout:
        if size <= 0:
            continue
        if what == "gap":
            yield from _gap(size)
        elif what == "sat":
            yield from _centromere_satellite(rng, fams.satellites[0], size)
        else:
            for a in range(0, size, BLOCK):
                yield _body_block(np.random.default_rng([seed, 2, index, block]), fams, min(BLOCK, size - a),
                                  block == 0)
                block += 1


def layout(size: int, chromosomes: int, scaffolds: int) -> list[tuple[str, int, bool]]:
    """(name, length, is a chromosome) of every record: scaffolds get 0.2% of the size each (at least
    1 kbp), chromosomes share the rest with lengths falling linearly to 40% of chr1's."""
    scaffold_len = max(1000, size // 500) if scaffolds else 0
    rest = size - scaffolds * scaffold_len
    if chromosomes < 1 or rest < 1000 * chromosomes:
        raise ValueError(f"{size} bases are too few for {chromosomes} chromosomes and {scaffolds} scaffolds")
    weights = 1 - 0.6 * np.arange(chromosomes) / max(chromosomes - 1, 1)
    lengths = np.floor(rest * weights / weights.sum()).astype(np.int64)
    lengths[0] += rest - int(lengths.sum())
    records = [(f"chr{i + 1}", int(n), True) for i, n in enumerate(lengths)]
    return records + [(f"chrUn_scaffold{i + 1}", scaffold_len, False) for i in range(scaffolds)]


# ------------------------------------------------------------------------------------------- output


class _Wrapper:
    """Writes one sequence's bases in lines of `width`, chunk by chunk."""

    def __init__(self, out: BinaryIO, width: int) -> None:
        self.out = out
        self.width = width
        self.col = 0

    def write(self, text: np.ndarray) -> None:
        breaks = np.arange(self.width - self.col, text.size + 1, self.width)
        self.out.write(np.insert(text, breaks, ord("\n")).tobytes())
        self.col = (self.col + text.size) % self.width

    def end(self) -> None:
        if self.col:
            self.out.write(b"\n")
        self.col = 0


def write_genome(path: str | Path, size: int, seed: int = 7, chromosomes: int = 5, scaffolds: int = 2,
                 bed: str | Path | None = None, width: int = WIDTH) -> Summary:
    """Write the genome of `size` bases to `path` (FASTA; gzip when it ends in .gz) and, with `bed`, its
    repeat and gap annotation (BED6: sequence, start, end, kind/subfamily, 0, strand). Same seed, size
    and layout: same files."""
    fams = families(seed)
    summary = Summary()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    bed_fh = open(bed, "w") if bed is not None else None
    lower_table = UPPER.copy()
    lower_table[:N_CODE] += 32
    try:
        with (gzip.GzipFile(path, "wb", compresslevel=1, mtime=0) if path.suffix == ".gz" else open(path, "wb")) as out:
            for index, (name, length, chromosome) in enumerate(layout(size, chromosomes, scaffolds)):
                out.write(f">{name} synthetic seed={seed}\n".encode())
                lines = _Wrapper(out, width)
                pos = 0
                for chunk in _sequence(seed, index, length, chromosome, fams):
                    text = np.where(chunk.lower, lower_table[chunk.codes], UPPER[chunk.codes])
                    lines.write(text)
                    _count(summary, chunk)
                    if bed_fh is not None and chunk.elements:
                        _write_bed(bed_fh, name, pos, chunk.elements)
                    pos += chunk.codes.size
                lines.end()
                summary.names.append(name)
                summary.lengths.append(pos)
    finally:
        if bed_fh is not None:
            bed_fh.close()
    return summary


def _count(summary: Summary, chunk: Chunk) -> None:
    summary.n_bases += int(np.count_nonzero(chunk.codes == N_CODE))
    summary.iupac += int(np.count_nonzero(chunk.codes > N_CODE))
    summary.lowercase += int(np.count_nonzero(chunk.lower & (chunk.codes < N_CODE)))
    if chunk.elements:
        _, lens, kind, _, _ = chunk.elements
        for k, name in enumerate(KIND_NAMES):
            summary.copies[name] += int(np.count_nonzero(kind == k))
            summary.bases[name] += int(lens[kind == k].sum())


def _write_bed(fh: TextIO, name: str, pos: int, elements: tuple[np.ndarray, ...]) -> None:
    """One line per element: its kind and subfamily (microsatellites: unit length; gaps: 0) as the name."""
    start, lens, kind, family, strand = (a.tolist() for a in elements)
    fh.write("".join(f"{name}\t{pos + a}\t{pos + a + n}\t{KIND_NAMES[k]}/{f}\t0\t{'-' if r else '+'}\n"
                     for a, n, k, f, r in zip(start, lens, kind, family, strand, strict=True)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mbp", type=float, help="length in Mbp (e.g. 250, 3100, 0.5)")
    ap.add_argument("output", help="FASTA to write (gzip when it ends in .gz)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--chromosomes", type=int, default=5, help="chromosome-like records (default %(default)s)")
    ap.add_argument("--scaffolds", type=int, default=2, help="small unplaced scaffolds (default %(default)s)")
    ap.add_argument("--bed", help="also write the repeats and gaps as BED6")
    ap.add_argument("--width", type=int, default=WIDTH, help="bases per FASTA line (default %(default)s)")
    args = ap.parse_args()
    s = write_genome(args.output, int(round(args.mbp * 1e6)), args.seed, args.chromosomes, args.scaffolds,
                     args.bed, args.width)
    print(f"{args.output}: {len(s.names)} sequences, {s.total} bp; N {s.n_bases}, lowercase {s.lowercase}, "
          f"IUPAC {s.iupac}", file=sys.stderr)
    for name in KIND_NAMES:
        print(f"  {name:>14}: {s.copies[name]:>9} copies, {s.bases[name]:>12} bp "
              f"({100 * s.bases[name] / max(s.total, 1):.1f}%)", file=sys.stderr)


if __name__ == "__main__":
    main()
