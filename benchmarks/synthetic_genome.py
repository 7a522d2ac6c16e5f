#!/usr/bin/env python3
"""Write a synthetic genome with human-like repeat structure (FASTA), for tests and benchmarks where
repeats matter: they are what make candidate counts and index memory explode.

    python benchmarks/synthetic_genome.py 250 benchmarks/work/synth250/synth250.fa --seed 7   # 250 Mbp
    python benchmarks/synthetic_genome.py 1 tiny.fa --bed tiny.bed                          # + repeat annotation

What it holds (fractions of each chromosome's body; approximate, drawn per 4 Mbp block):
- background: i.i.d. bases, GC content varying by 300 kbp isochores around 41%;
- Alu-like family, ~10%: 3 old subfamilies of a ~310 bp GC-rich consensus ending in a poly-A tail; copies
  mostly full length, 5-20% diverged from their subfamily (85% substitutions, 15% 1-3 bp indels),
  either strand; and 2 young (AluY-like) subfamilies, each 2% from an old one, with 20% of the copies
  (--young-alu), only 1-4% diverged: reads from them have many locations within a few edits;
- L1-like family, ~15%: 3 old subfamilies of a 6 kbp AT-rich consensus; copies 5'-truncated (10% full
  length, the rest about 900 bp on average), 5-20% diverged, either strand; and 2 young (L1HS/L1PA-like)
  subfamilies with 10% of the copies (--young-l1), 1-4% diverged. BED subfamilies 0-2 are old, 3-4 young;
- segmental duplications, ~4% (--segdups): copies of 1-50 kbp (log-uniform) of other stretches of the
  same sequence, 0.5-5% diverged (substitutions and 1-3 bp indels), either strand, soft-masked as their
  source. The source lies in the same 4 Mbp block (anywhere outside its gaps and duplications) or, half
  the time, in one of the 2 body blocks before it (so up to ~12 Mbp away); only those 2 blocks are kept,
  which bounds the memory this takes to 16 MB. The copied repeats are annotated once, by the segdup
  line (segdup/SEQUENCE:SOURCE_START);
- tandem repeats: microsatellites (~2%, units of 1-6 bp, 15-150 bp arrays, 0-5% diverged) and satellite
  arrays (~1%, 171/68/42 bp units, 1-20 kbp arrays, 2-8% diverged per base); each chromosome's centromere
  is 1% alpha-like satellite around an N gap;
- N gaps: 10 kbp (at most 1% of the sequence) at both chromosome ends, the centromere's (0.5%), and
  100 bp-50 kbp gaps inside (about one per 2 Mbp);
- repeats soft-masked (lowercase, as RepeatMasker leaves them in UCSC/Ensembl FASTA); a few IUPAC codes
  (R Y K M S W B D H V; 2 per Mbp, at least one per sequence);
- records: chromosome-like sequences chr1..chrN with decreasing lengths, then small unplaced scaffolds.

Deterministic for a seed (and size, layout and feature options). The genome is made and written block by
block (4 Mbp of sequence at a time, each from its own random streams), so memory stays at a few hundred MB
whatever the size (230 MB for 1 Gbp); everything is vectorised with numpy (no per-base Python loops):
1 Gbp takes 80 s on one core. Young copies and duplications draw from streams of their own: with
--young-alu 0 --young-l1 0 --segdups 0 the output is byte for byte that of the generator before them.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

import numpy as np

BLOCK = 4_000_000  # bases generated at a time (each block has its own random stream)
ISOCHORE = 300_000
GC_MEAN = 0.41
WIDTH = 60

# Element kinds (BED names: the kind, then the subfamily; a duplication: segdup/SEQUENCE:SOURCE_START).
ALU, L1, MICRO, SATELLITE, GAP, SEGDUP = range(6)
KIND_NAMES = ("Alu", "L1", "microsatellite", "satellite", "gap", "segdup")
# Fraction of a chromosome body made of each kind (gaps inside the body are drawn separately).
FRACTIONS = {ALU: 0.10, L1: 0.15, MICRO: 0.02, SATELLITE: 0.008}
INNER_GAP_EVERY = 2_000_000  # bases per inner N gap, on average
DIVERGENCE = {ALU: (0.05, 0.20), L1: (0.05, 0.20), MICRO: (0.0, 0.05), SATELLITE: (0.02, 0.08),
              SEGDUP: (0.005, 0.05)}
# Young subfamilies (AluY-, L1HS/L1PA-like): OLD_SUBFAMILIES old ones (BED subfamilies 0-2), then
# YOUNG_SUBFAMILIES young ones (3, 4), each 2% from an old one; their copies are 1-4% diverged.
OLD_SUBFAMILIES = 3
YOUNG_SUBFAMILIES = 2
YOUNG_FROM_PARENT = 0.02
YOUNG_DIVERGENCE = (0.01, 0.04)
YOUNG_SHARE = {ALU: 0.20, L1: 0.10}  # of each family's copies (defaults of --young-alu, --young-l1)
# Segmental duplications: SEGDUP_FRACTION of each body block (default of --segdups), 1-50 kbp
# (log-uniform; at most an eighth of the block), copied from the block itself or, with probability
# SEGDUP_EARLIER, from one of the RETAIN body blocks before it in the same sequence.
SEGDUP_FRACTION = 0.04
SEGDUP_LENGTH = (1000, 50_000)
SEGDUP_EARLIER = 0.5
RETAIN = 2  # earlier body blocks kept as duplication sources: 2 bytes per base, 16 MB
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
    """Consensus sequences (codes 0..3): Alu and L1 subfamilies (OLD_SUBFAMILIES old ones, then
    YOUNG_SUBFAMILIES young ones), satellite units."""

    alu: tuple[np.ndarray, ...]
    l1: tuple[np.ndarray, ...]
    satellites: tuple[np.ndarray, ...]


@dataclass(frozen=True)
class Features:
    """The options of the features added to the generator: the share of Alu and L1 copies from young
    subfamilies, and the fraction of each body block made of segmental duplications. All 0: the genome
    the generator wrote before it had them (same seed, same bytes)."""

    young_alu: float = YOUNG_SHARE[ALU]
    young_l1: float = YOUNG_SHARE[L1]
    segdups: float = SEGDUP_FRACTION


@dataclass
class Summary:
    """What was written: records, and bases and copies per feature."""

    names: list[str] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    copies: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KIND_NAMES, 0))
    bases: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KIND_NAMES, 0))
    young_copies: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KIND_NAMES, 0))
    young_bases: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KIND_NAMES, 0))
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


def _substituted(rng: np.random.Generator, codes: np.ndarray, rate: float) -> np.ndarray:
    out = codes.copy()
    hit = np.flatnonzero(rng.random(out.size) < rate)
    out[hit] = (out[hit] + rng.integers(1, 4, hit.size)) % 4
    return out


def families(seed: int) -> Families:
    """The repeat families of genome `seed`: old subfamilies differ from their family's consensus by 3%,
    each young one from an old one (its parent, drawn) by YOUNG_FROM_PARENT."""
    rng = np.random.default_rng([seed, 0])
    young_rng = np.random.default_rng([seed, 0, 1])  # a stream of its own: the old families stay as they were

    def subfamilies(consensus: np.ndarray) -> tuple[np.ndarray, ...]:
        old = [consensus] + [_substituted(rng, consensus, 0.03) for _ in range(OLD_SUBFAMILIES - 1)]
        return tuple(old)

    def young(old: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        parents = young_rng.integers(0, len(old), YOUNG_SUBFAMILIES)
        return old + tuple(_substituted(young_rng, old[p], YOUNG_FROM_PARENT) for p in parents)

    alu = np.concatenate([_random_codes(rng, ALU_LENGTH, 0.58), np.zeros(20, np.uint8)])  # poly-A tail
    l1 = _random_codes(rng, L1_LENGTH, 0.40)
    sats = tuple(_random_codes(rng, u, 0.38) for u in SATELLITE_UNITS)
    alus = subfamilies(alu)
    l1s = subfamilies(l1)
    return Families(young(alus), young(l1s), sats)


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


def _reversed_order(lengths: np.ndarray, reverse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each position of the copies takes its value from when the copies with reverse[k] set are
    reversed, and which positions those are."""
    starts = np.cumsum(lengths) - lengths
    within = _within(lengths)
    rev = np.repeat(reverse.astype(bool), lengths)
    src = np.arange(within.size)
    src[rev] = (np.repeat(starts + lengths - 1, lengths) - within)[rev]
    return src, rev


def _reverse_complement(codes: np.ndarray, lengths: np.ndarray, reverse: np.ndarray) -> np.ndarray:
    """The copies with reverse[k] set reverse-complemented in place (N stays N)."""
    src, rev = _reversed_order(lengths, reverse)
    out = codes[src]
    flip = rev & (out < 4)
    out[flip] = 3 - out[flip]
    return out


def _interspersed(rng: np.random.Generator, young_rng: np.random.Generator, subfams: tuple[np.ndarray, ...],
                  lengths: np.ndarray, kind: int, young: float) -> Elements:
    """Copies of a family's subfamilies: the last `lengths[k]` bases of the consensus (5' truncation),
    diverged, on a random strand. A share `young` of them (drawn from young_rng) are copies of a young
    subfamily, less diverged."""
    n = lengths.size
    cons = np.concatenate(subfams)
    cons_start = np.cumsum([0] + [s.size for s in subfams])[:-1]
    fam = rng.integers(0, OLD_SUBFAMILIES, n)
    lo, hi = DIVERGENCE[kind]
    divergence = rng.uniform(lo, hi, n)
    if young > 0 and n:
        is_young = young_rng.random(n) < young
        m = int(is_young.sum())
        fam[is_young] = OLD_SUBFAMILIES + young_rng.integers(0, len(subfams) - OLD_SUBFAMILIES, m)
        divergence[is_young] = young_rng.uniform(*YOUNG_DIVERGENCE, m)
    full = np.array([s.size for s in subfams])[fam]
    lengths = np.minimum(lengths, full)
    src = np.repeat(cons_start[fam] + full - lengths, lengths) + _within(lengths)
    codes, lengths = _diverge(rng, cons[src], lengths, divergence)
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


def _block_elements(rng: np.random.Generator, young_rng: np.random.Generator, dup_rng: np.random.Generator,
                    fams: Families, size: int, feats: Features) -> Elements:
    """The elements of a body block of `size` bases, in no order yet. Young copies are drawn from young_rng
    and the duplications' slots (N so far: _body_block fills them) from dup_rng, so that with none of
    either the block is what it was before they existed."""
    def alu_lengths(r: np.random.Generator, n: int) -> np.ndarray:
        full = fams.alu[0].size
        return np.where(r.random(n) < 0.9, full, r.integers(100, full, n))

    def l1_lengths(r: np.random.Generator, n: int) -> np.ndarray:
        return np.where(r.random(n) < 0.1, L1_LENGTH, np.clip(r.exponential(900, n), 100, L1_LENGTH))

    parts = [
        _interspersed(rng, young_rng, fams.alu, _lengths_up_to(rng, int(FRACTIONS[ALU] * size), alu_lengths),
                      ALU, feats.young_alu),
        _interspersed(rng, young_rng, fams.l1, _lengths_up_to(rng, int(FRACTIONS[L1] * size), l1_lengths),
                      L1, feats.young_l1),
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
    # Segmental duplications' slots: log-uniform 1-50 kbp (at most an eighth of the block).
    lo, top = SEGDUP_LENGTH[0], min(SEGDUP_LENGTH[1], size // 8)
    if feats.segdups > 0 and top > lo:
        target = int(feats.segdups * size)
        lengths = np.exp(dup_rng.uniform(np.log(lo), np.log(top), 8 + 2 * target // lo)).astype(np.int64)
        end = np.cumsum(lengths)
        lengths = lengths[:np.searchsorted(end, target, side="right") + 1]  # the last one cut to the target:
        lengths[-1] -= max(int(lengths.sum()) - target, 0)                  # small blocks get their share too
        lengths = lengths[lengths >= lo]
        n = lengths.size
        parts.append(Elements(np.full(int(lengths.sum()), N_CODE, np.uint8), lengths, np.full(n, SEGDUP),
                              np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)))
    return Elements.concat(parts)


def _duplicate(rng: np.random.Generator, codes: np.ndarray, lower: np.ndarray, dest: np.ndarray,
               lens: np.ndarray, offset: int, earlier: list[tuple[int, np.ndarray, np.ndarray]]
               ) -> tuple[np.ndarray, np.ndarray]:
    """Fill the duplication slots codes[dest[k]:][:lens[k]] (all N so far) of the block at `offset` in its
    sequence with copies of N-free stretches of the block itself (outside its slots and gaps) or, with
    probability SEGDUP_EARLIER, of one of the `earlier` body blocks of the sequence ((offset, codes,
    soft-mask) each): DIVERGENCE[SEGDUP] diverged (_diverge: substitutions and 1-3 bp indels), on a
    random strand, soft-masked as their source (indels aside). Returns each copy's source start in the
    sequence (-1: no N-free source found in TRIES draws; the slot stays N) and strand."""
    tries = 64
    n = lens.size
    sources = [(offset, codes, lower), *earlier]
    which = np.where(rng.random(n) < SEGDUP_EARLIER, 1 + rng.integers(0, max(len(earlier), 1), n), 0)
    which[which > len(earlier)] = 0
    span = lens + lens // 50 + 20  # copied bases: room for the deletions; the copy is cut to lens[k]
    start = np.full(n, -1, dtype=np.int64)
    for j, (_, src_codes, _) in enumerate(sources):
        ks = np.flatnonzero(which == j)
        room = src_codes.size - span[ks]  # last start that fits
        cand = (rng.random((ks.size, tries)) * np.maximum(room + 1, 1)[:, None]).astype(np.int64)
        bad = np.concatenate([[0], np.cumsum(src_codes == N_CODE)])  # N (gaps, and this block's slots)
        end = np.minimum(cand + span[ks, None], src_codes.size)
        ok = (bad[end] == bad[cand]) & (room >= 0)[:, None]
        first = ok.argmax(axis=1)
        start[ks] = np.where(ok.any(axis=1), cand[np.arange(ks.size), first], -1)
    found = np.flatnonzero(start >= 0)
    source = np.full(n, -1, dtype=np.int64)
    strand = np.zeros(n, dtype=np.int64)
    if found.size == 0:
        return source, strand
    copy = np.concatenate([sources[which[k]][1][start[k]:start[k] + span[k]] for k in found])
    mask = np.concatenate([sources[which[k]][2][start[k]:start[k] + span[k]] for k in found])
    iupac = copy > N_CODE  # an earlier block's IUPAC codes: a base in the copy
    copy[iupac] = rng.integers(0, 4, int(iupac.sum()), dtype=np.uint8)
    lo, hi = DIVERGENCE[SEGDUP]
    copy, copy_lens = _diverge(rng, copy, span[found], rng.uniform(lo, hi, found.size))
    out_lens = lens[found]
    within = _within(out_lens)
    at = np.repeat(np.cumsum(copy_lens) - copy_lens, out_lens) + within
    short = within >= np.repeat(copy_lens, out_lens)  # (cannot happen: the span's room is ample)
    out = copy[np.where(short, 0, at)]
    out[short] = rng.integers(0, 4, int(short.sum()), dtype=np.uint8)
    low = mask[np.repeat(np.cumsum(span[found]) - span[found], out_lens) + within]
    strand[found] = rng.integers(0, 2, found.size)
    out = _reverse_complement(out, out_lens, strand[found])
    low = low[_reversed_order(out_lens, strand[found])[0]]
    d = np.repeat(dest[found], out_lens) + within
    codes[d] = out
    lower[d] = low
    source[found] = np.array([sources[which[k]][0] for k in found]) + start[found]
    return source, strand


# ------------------------------------------------------------------------------------------- blocks


@dataclass
class Chunk:
    """Some consecutive bases of one sequence: codes (0..3, N = 4, IUPAC 5..), soft-mask, and the
    elements placed in it (start within the chunk, length, kind, subfamily, strand)."""

    codes: np.ndarray
    lower: np.ndarray
    elements: tuple[np.ndarray, ...] = ()


def _body_block(rngs: tuple[np.random.Generator, ...], fams: Families, size: int, first: bool, feats: Features,
                offset: int = 0, earlier: list[tuple[int, np.ndarray, np.ndarray]] | None = None) -> Chunk:
    """`size` bases of chromosome body (at `offset` in its sequence): background with the block's elements
    placed between runs of it, then the duplications' slots filled from the block or the `earlier` blocks
    (_duplicate). The first block of a sequence has at least one IUPAC code. rngs: the block's streams
    (elements and layout; young copies; duplications)."""
    rng, young_rng, dup_rng = rngs
    n_iso = size // ISOCHORE + 1
    gc = np.clip(rng.normal(GC_MEAN, 0.04, n_iso), 0.30, 0.60)
    codes = _codes_from_uniform(rng.random(size), np.repeat(gc, ISOCHORE)[:size])
    lower = np.zeros(size, dtype=bool)
    el = _block_elements(rng, young_rng, dup_rng, fams, size, feats)
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
    kind, family, strand = el.kind[order], el.family[order], el.strand[order]
    dup = np.flatnonzero(kind == SEGDUP)
    if dup.size:
        family[dup], strand[dup] = _duplicate(dup_rng, codes, lower, dest[dup], lens[dup], offset, earlier or [])
        lost = dup[family[dup] < 0]  # no source found: the slot stays N, a gap
        kind[lost], family[lost] = GAP, 0
        lower[np.repeat(dest[lost], lens[lost]) + _within(lens[lost])] = False
    # IUPAC codes outside gaps
    spots = np.flatnonzero(codes < N_CODE)
    if spots.size:
        spots = spots[rng.integers(0, spots.size, max(int(first), rng.poisson(IUPAC_PER_BASE * size)))]
    codes[spots] = 5 + rng.integers(0, N_IUPAC, spots.size)
    return Chunk(codes, lower, (dest, lens, kind, family, strand))


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


def _sequence(seed: int, index: int, length: int, chromosome: bool, fams: Families,
              feats: Features = Features()) -> Iterator[Chunk]:
    """The chunks of sequence `index`: a chromosome has N gaps at both ends and a centromere (satellite
    around an N gap) in the middle; a scaffold is body only. The last RETAIN body blocks are kept (a
    reference to their codes and soft-mask, at most 2 x RETAIN x BLOCK bytes) as duplication sources."""
    rng = np.random.default_rng([seed, 1, index])
    earlier: deque[tuple[int, np.ndarray, np.ndarray]] = deque(maxlen=RETAIN)
    pos = 0
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
                rngs = tuple(np.random.default_rng([seed, stream, index, block]) for stream in (2, 3, 4))
                chunk = _body_block(rngs, fams, min(BLOCK, size - a), block == 0, feats, pos + a, list(earlier))
                earlier.append((pos + a, chunk.codes, chunk.lower))
                yield chunk
                block += 1
        pos += size


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
                 bed: str | Path | None = None, width: int = WIDTH, features: Features = Features()) -> Summary:
    """Write the genome of `size` bases to `path` (FASTA; gzip when it ends in .gz) and, with `bed`, its
    repeat and gap annotation (BED6: sequence, start, end, kind/subfamily, 0, strand; a duplication's
    name is segdup/SEQUENCE:SOURCE_START, its strand that of the copy). Same seed, size, layout and
    features: same files."""
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
                for chunk in _sequence(seed, index, length, chromosome, fams, features):
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
        _, lens, kind, family, _ = chunk.elements
        young = family >= OLD_SUBFAMILIES
        for k, name in enumerate(KIND_NAMES):
            summary.copies[name] += int(np.count_nonzero(kind == k))
            summary.bases[name] += int(lens[kind == k].sum())
            if k in (ALU, L1):
                summary.young_copies[name] += int(np.count_nonzero((kind == k) & young))
                summary.young_bases[name] += int(lens[(kind == k) & young].sum())


def _write_bed(fh: TextIO, name: str, pos: int, elements: tuple[np.ndarray, ...]) -> None:
    """One line per element: its kind and subfamily (microsatellites: unit length; gaps: 0;
    duplications: SEQUENCE:SOURCE_START) as the name."""
    start, lens, kind, family, strand = (a.tolist() for a in elements)
    fh.write("".join(f"{name}\t{pos + a}\t{pos + a + n}\t{KIND_NAMES[k]}/{f'{name}:' if k == SEGDUP else ''}{f}"
                     f"\t0\t{'-' if r else '+'}\n"
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
    ap.add_argument("--young-alu", type=float, default=YOUNG_SHARE[ALU],
                    help="share of Alu copies from young subfamilies (default %(default)s)")
    ap.add_argument("--young-l1", type=float, default=YOUNG_SHARE[L1],
                    help="share of L1 copies from young subfamilies (default %(default)s)")
    ap.add_argument("--segdups", type=float, default=SEGDUP_FRACTION,
                    help="fraction of each body block in segmental duplications (default %(default)s; "
                    "all three 0: the genome as written before these features)")
    args = ap.parse_args()
    s = write_genome(args.output, int(round(args.mbp * 1e6)), args.seed, args.chromosomes, args.scaffolds,
                     args.bed, args.width, Features(args.young_alu, args.young_l1, args.segdups))
    print(f"{args.output}: {len(s.names)} sequences, {s.total} bp; N {s.n_bases}, lowercase {s.lowercase}, "
          f"IUPAC {s.iupac}", file=sys.stderr)
    for name in KIND_NAMES:
        young = (f"; young {s.young_copies[name]:>8} copies, {s.young_bases[name]:>11} bp"
                 if name in ("Alu", "L1") else "")
        print(f"  {name:>14}: {s.copies[name]:>9} copies, {s.bases[name]:>12} bp "
              f"({100 * s.bases[name] / max(s.total, 1):.1f}%){young}", file=sys.stderr)


if __name__ == "__main__":
    main()
