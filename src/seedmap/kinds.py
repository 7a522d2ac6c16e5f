"""The index kinds, each registered once: how its index is built, stored and loaded, and the engine that maps
with it on the CPU (engines/). A new kind is one entry in KINDS; each device backend registers what it does
with a kind in a table of its own keyed by the kind's name (backends/cuda/kinds.py)."""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic

import numpy as np

from seedmap.engines.base import CandidateEngine, Engine
from seedmap.engines.factory import neighborhood_engine
from seedmap.engines.fm import fm_engine
from seedmap.engines.kmer import KmerEngine
from seedmap.engines.segmented import SegmentedEngine
from seedmap.errors import SeedmapError
from seedmap.filter.fm_lookup import tables
from seedmap.index import fm, fm_blocks, kmer, neighborhood, segments, store
from seedmap.index.interface import StoredIndex
from seedmap.index.params import P, Params, from_header, to_header
from seedmap.io.reference import Reference, check_fasta, read_fasta
from seedmap.options import EngineOptions
from seedmap.verify.bulk import bulk_distances

log = logging.getLogger("seedmap")


@dataclass(frozen=True)
class IndexChoices:
    """The command line's choices of an index's parameters (seedmap index), for each kind to read its own."""

    seed_length: int = neighborhood.DEFAULT_SEED_LENGTH
    neighborhood_length: int = neighborhood.DEFAULT_NEIGHBORHOOD_LENGTH
    seed_shape: str = ""
    ph: bool = False
    kmer_length: int = kmer.DEFAULT_K
    sa_sample: int = fm.DEFAULT_SA_SAMPLE


@dataclass(frozen=True)
class BuildLimits:
    """What bounds a build (plan_build): the user's --max-memory, the share of this machine's memory allowed
    without it, and segment or block sizes set instead (tests, experiments); 0: none."""

    max_memory: int = 0
    machine_memory: int = 0
    segment_bases: int = 0
    block_bases: int = 0


@dataclass(frozen=True)
class IndexKind(Generic[P]):
    """How to build, store and load one kind of index, and make its engine. P: the kind's parameters."""

    name: str
    params: type[P]
    default: Callable[[], P]  # the parameters a build without choices uses
    choose: Callable[[IndexChoices], P]  # the parameters of the command line's choices, checked
    arrays: Callable[[P], tuple[str, ...]]  # the arrays a stored index with these parameters holds
    build: Callable[[Reference, P, Path | None], StoredIndex]  # (reference, parameters, scratch directory)
    from_arrays: Callable[[P, dict[str, np.ndarray]], StoredIndex]
    engine: Callable[[Any, Reference, EngineOptions], CandidateEngine]  # (this kind's index) on the CPU
    describe: Callable[[Any, P], str]  # what a build (of this kind) made, for the log
    segment_bounds: SegmentBounds | None = None  # how --max-memory splits it into genome segments (None: it can't)
    perfect_hashes: bool = False  # whether --ph builds perfect hashes of it

    def header_arrays(self, header: dict[str, Any]) -> tuple[str, ...]:
        """The arrays a stored index whose header holds these parameters holds (store.load's check)."""
        return self.arrays(from_header(self.params, header))

    def load(self, stored: store.StoredIndex) -> StoredIndex:
        """The index of a loaded store."""
        return self.from_arrays(from_header(self.params, stored.params), stored.arrays)


# (reference, params, max_memory, segment_bases, map_memory) -> genome segments' bounds
SegmentBounds = Callable[[Reference, Any, int, int, int], list[int]]

NEIGHBORHOOD: IndexKind[neighborhood.NeighborhoodParams] = IndexKind(
    "neighborhood", neighborhood.NeighborhoodParams, neighborhood.default_params,
    choose=lambda c: neighborhood.checked_params(c.seed_length, c.neighborhood_length, c.seed_shape, c.ph),
    arrays=neighborhood.stored_arrays,
    build=lambda ref, p, scratch: _build_neighborhood(ref, p),
    from_arrays=lambda p, a: _neighborhood_from_arrays(p, a),
    engine=lambda ix, ref, o: _neighborhood_engine(ix, ref, o),
    describe=neighborhood.describe,
    segment_bounds=lambda ref, p, mem, bases, map_mem: neighborhood.segment_bounds(ref, p.u, mem, bases, map_mem),
    perfect_hashes=True)
KMER: IndexKind[kmer.KmerParams] = IndexKind(
    "kmer", kmer.KmerParams, kmer.default_params,
    choose=lambda c: kmer.check_parameters(c.kmer_length),
    arrays=lambda p: ("offsets", "pos"),
    build=lambda ref, p, scratch: kmer.build(ref, p.k),
    from_arrays=lambda p, a: kmer.KmerIndex(p.k, a["offsets"], a["pos"]),
    engine=lambda ix, ref, o: KmerEngine(ix, ref.starts, adjacency=o.adjacency, bulk=bulk_distances,
                                         packed=ref.packed, nmask=ref.nmask),
    describe=lambda ix, p: f"k={ix.k}: {ix.pos.size} positions")
FM: IndexKind[fm.FmParams] = IndexKind(
    "fm", fm.FmParams, fm.default_params,
    choose=lambda c: fm.check_parameters(c.sa_sample),
    arrays=fm.stored_arrays,
    build=lambda ref, p, scratch: (fm.segmented_build(ref, p.r, list(p.segments)) if p.segments
                                   else _build_fm(ref, p, scratch)),
    from_arrays=fm.from_arrays,
    engine=lambda ix, ref, o: fm_engine(ix, ref, bulk=bulk_distances),
    describe=fm.describe,
    segment_bounds=lambda ref, p, mem, bases, map_mem: fm.segment_bounds(ref, p.r, mem, bases))
KINDS: dict[str, IndexKind[Any]] = {kind.name: kind for kind in (NEIGHBORHOOD, KMER, FM)}


def _build_fm(ref: Reference, p: fm.FmParams, scratch: Path | None) -> fm.FmIndex:
    """An FM index (in one piece, or in blocks of whole sequences: the same index) with its k-mer tables,
    which a stored index keeps (each run built them: 0.15-0.2 s of a --best run's 3-4 s at 250 Mbp, -t 2)."""
    ix = fm_blocks.build(ref, p.r, list(p.blocks), scratch) if p.blocks and scratch else fm.build(ref, p.r)
    tables(ix)
    return ix


def _build_neighborhood(ref: Reference, p: neighborhood.NeighborhoodParams) -> StoredIndex:
    if p.segments:  # built part by part as the store writes them
        return neighborhood.segmented_build(ref, p.u, p.l, p.shape, bool(p.ph), list(p.segments))
    return neighborhood.build(ref, p.u, p.l, p.shape, ph=bool(p.ph))


def _neighborhood_from_arrays(p: neighborhood.NeighborhoodParams, a: dict[str, np.ndarray]) -> StoredIndex:
    if p.segments:
        return segments.SegmentedIndex.from_arrays(p, a, neighborhood.NeighborhoodIndex.from_arrays)
    return neighborhood.NeighborhoodIndex.from_arrays(p, a)


def _neighborhood_engine(ix: neighborhood.NeighborhoodIndex | segments.SegmentedIndex, ref: Reference,
                         o: EngineOptions) -> CandidateEngine:
    verifier = {"bulk": bulk_distances, "packed": ref.packed, "nmask": ref.nmask}
    if isinstance(ix, segments.SegmentedIndex):
        return SegmentedEngine([neighborhood_engine(part, ref.starts, o, **verifier) for part in ix.parts])
    return neighborhood_engine(ix, ref.starts, o, **verifier)


def cpu_engine(kind: str, ix: object, ref: Reference, options: EngineOptions) -> Engine:
    """The engine of an index kind on the CPU."""
    return KINDS[kind].engine(ix, ref, options)


def plan_build(ref: Reference, kind: str, params: P, limits: BuildLimits = BuildLimits()) -> P:
    """The parameters to build with: a neighborhood or FM index built within max_memory bytes (the user's
    limit, else machine_memory, the share of this machine's memory the CLI allows). An FM index that would
    not fit in one piece is built in blocks of whole sequences (`blocks`, their bounds: the same index, so
    the store does not keep them); a neighborhood index (or an FM index of 2^32 bases or more) is split into
    genome segments (`segments`, their bounds). segment_bases and block_bases (tests, experiments) set their
    sizes instead. Without the user's limit, a neighborhood index's segments are also small enough for two
    of them to map within half the machine's memory (machine_memory is three quarters of it): a build on a
    machine maps on it."""
    max_memory, machine = limits.max_memory, limits.machine_memory
    if isinstance(params, fm.FmParams) and not limits.segment_bases:
        blocks = _fm_blocks(ref, params, max_memory or machine, limits.block_bases,
                            bool(max_memory or limits.block_bases))
        if blocks:
            return replace(params, blocks=tuple(blocks))
    cut = KINDS[kind].segment_bounds
    if cut is None or not (max_memory or limits.segment_bases or machine):
        return params
    try:
        map_memory = 0 if max_memory else machine * 2 // 3
        bounds = cut(ref, params, max_memory or machine, limits.segment_bases, map_memory)
    except SeedmapError:
        if max_memory:
            raise
        return params  # a machine too small for even one segment: try the whole build
    if len(bounds) > 2:
        return replace(params, segments=tuple(int(b) for b in bounds))
    return params


def _fm_blocks(ref: Reference, params: fm.FmParams, max_memory: int, block_bases: int, user_limit: bool) -> list[int]:
    """The block bounds of an FM build that needs blocks to fit max_memory (or of blocks of block_bases); []
    for a build in one piece, or where not even blocks fit (then segments, or without the user's limit, a try
    of the whole build)."""
    if not block_bases:
        if not max_memory or fm.fits_in_one_piece(ref, params.r, max_memory):
            return []
        block_bases = fm_blocks.block_bases(ref, params.r, max_memory)
        if not block_bases:
            return []
    try:
        bounds = fm_blocks.block_bounds(ref, block_bases)
    except SeedmapError:
        if user_limit:
            raise
        return []
    return bounds if len(bounds) > 2 else []


def build_index(fasta: str, out: str | None, kind: str, params: Params | None = None,
                limits: BuildLimits = BuildLimits()) -> Path:
    """The index of `fasta` built (with the kind's default parameters when none are given, within limits) and
    stored at out (default: beside the FASTA); its path."""
    spec = KINDS[kind]
    t0 = time.perf_counter()
    ref = read_fasta(fasta)
    t1 = time.perf_counter()
    log.info("read %d sequences, %d bp in %.1f s", len(ref.names), ref.total, t1 - t0)
    planned = plan_build(ref, kind, params if params is not None else spec.default(), limits)
    if planned.segments:
        log.info("building in %d genome segments to stay within the memory limit", len(planned.segments) - 1)
    if isinstance(planned, fm.FmParams) and planned.blocks:
        log.info("building in %d blocks of whole sequences to stay within the memory limit", len(planned.blocks) - 1)
    path = Path(out) if out else store.default_path(fasta, kind)
    # The scratch directory (a blockwise build's runs and tables) lies beside the index and goes with any
    # interruption, as the index's own temporary directory does (store.save).
    with tempfile.TemporaryDirectory(prefix=f".{path.name}.build-", dir=path.parent) as scratch:
        ix = spec.build(ref, planned, Path(scratch))
        store.save(path, kind, to_header(planned), ref, ix.arrays(), fasta)
        log.info("built the %s index (%s) and wrote %s in %.1f s", kind, spec.describe(ix, planned), path,
                 time.perf_counter() - t1)
        del ix
    return path


def reference_only(fasta: str, index_path: str | None, kind: str = "neighborhood") -> Reference:
    """The reference a run with these options maps against, without building an index: the stored index's
    (checked as load_or_build loads it), else the FASTA's."""
    path = Path(index_path) if index_path else store.default_path(fasta, kind)
    if index_path or path.exists():
        return store.load(path, kind, KINDS[kind].header_arrays, fasta).reference
    return read_fasta(fasta)


def load_or_build(fasta: str, index_path: str | None, kind: str = "neighborhood") -> tuple[Reference, object]:
    spec = KINDS[kind]
    path = Path(index_path) if index_path else store.default_path(fasta, kind)
    if index_path or path.exists():
        t0 = time.perf_counter()
        st = store.load(path, kind, spec.header_arrays, fasta)
        ix = spec.load(st)
        log.info("loaded the %s index %s in %.1f s", kind, path, time.perf_counter() - t0)
        return st.reference, ix
    check_fasta(fasta)  # before saying what it will build from it
    log.info("no %s index at %s: building one in memory (run 'seedmap index' to keep it)", kind, path)
    ref = read_fasta(fasta)
    return ref, spec.build(ref, spec.default(), None)  # in memory: in one piece (no blocks, no scratch)
