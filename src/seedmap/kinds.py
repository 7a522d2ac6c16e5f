"""The index kinds, each registered once: how its index is built, stored and loaded, and the engine that maps
with it on the CPU (engines/). A new kind is one entry in KINDS; each device backend registers what it does
with a kind in a table of its own keyed by the kind's name (backends/cuda/kinds.py)."""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seedmap.engines.base import CandidateEngine, Engine
from seedmap.engines.factory import neighborhood_engine
from seedmap.engines.fm import fm_engine
from seedmap.engines.kmer import KmerEngine
from seedmap.engines.segmented import SegmentedEngine
from seedmap.errors import SeedmapError
from seedmap.filter.fm_lookup import tables
from seedmap.index import fm, fm_blocks, kmer, neighborhood, segments, store
from seedmap.index.interface import StoredIndex
from seedmap.io.reference import Reference, check_fasta, read_fasta
from seedmap.options import EngineOptions
from seedmap.verify.bulk import bulk_distances

log = logging.getLogger("seedmap")


@dataclass
class IndexKind:
    """How to build, store and load one kind of index, and make its engine."""

    name: str
    arrays: Callable[[dict], tuple[str, ...]]  # the arrays a stored index with these parameters holds
    build: Callable[[Reference, dict, Path | None], StoredIndex]  # (reference, parameters, scratch directory)
    from_arrays: Callable[[dict, dict], StoredIndex]
    engine: Callable[[Any, Reference, EngineOptions], CandidateEngine]  # (this kind's index) on the CPU
    describe: Callable[[Any, dict], str]  # what a build (of this kind) made, for the log


KINDS = {
    "neighborhood": IndexKind(
        "neighborhood", neighborhood.stored_arrays,
        build=lambda ref, p, scratch: _build_neighborhood(ref, p),
        from_arrays=lambda p, a: _neighborhood_from_arrays(p, a),
        engine=lambda ix, ref, o: _neighborhood_engine(ix, ref, o),
        describe=neighborhood.describe),
    "kmer": IndexKind(
        "kmer", lambda p: ("offsets", "pos"),
        build=lambda ref, p, scratch: kmer.build(ref, p["k"]),
        from_arrays=lambda p, a: kmer.KmerIndex(p["k"], a["offsets"], a["pos"]),
        engine=lambda ix, ref, o: KmerEngine(ix, ref.starts, adjacency=o.adjacency, bulk=bulk_distances,
                                             packed=ref.packed, nmask=ref.nmask),
        describe=lambda ix, p: f"k={ix.k}: {ix.pos.size} positions"),
    "fm": IndexKind(
        "fm", fm.stored_arrays,
        build=lambda ref, p, scratch: (fm.segmented_build(ref, p["r"], segments.bounds_of(p)) if p.get("segments")
                                       else _build_fm(ref, p, scratch)),
        from_arrays=fm.from_arrays,
        engine=lambda ix, ref, o: fm_engine(ix, ref, bulk=bulk_distances),
        describe=fm.describe),
}
DEFAULT_PARAMS = {
    "neighborhood": {"u": neighborhood.DEFAULT_SEED_LENGTH, "l": neighborhood.DEFAULT_NEIGHBORHOOD_LENGTH},
    "kmer": {"k": kmer.DEFAULT_K},
    "fm": {"r": fm.DEFAULT_SA_SAMPLE},
}


def _build_fm(ref: Reference, p: dict, scratch: Path | None) -> fm.FmIndex:
    """An FM index (in one piece, or in blocks of whole sequences: the same index) with its k-mer tables,
    which a stored index keeps (each run built them: 0.15-0.2 s of a --best run's 3-4 s at 250 Mbp, -t 2)."""
    ix = fm_blocks.build(ref, p["r"], p["blocks"], scratch) if p.get("blocks") and scratch else fm.build(ref, p["r"])
    tables(ix)
    return ix


def _build_neighborhood(ref: Reference, p: dict) -> StoredIndex:
    shape, ph = p.get("shape", ""), bool(p.get("ph"))
    if p.get("segments"):  # built part by part as the store writes them
        return neighborhood.segmented_build(ref, p["u"], p["l"], shape, ph, segments.bounds_of(p))
    return neighborhood.build(ref, p["u"], p["l"], shape, ph=ph)


def _neighborhood_from_arrays(p: dict, a: dict) -> StoredIndex:
    if p.get("segments"):
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


SEGMENT_BOUNDS = {  # (reference, params, max_memory, segment_bases, map_memory) -> bounds
    "neighborhood": lambda ref, p, mem, bases, map_mem: neighborhood.segment_bounds(ref, p["u"], mem, bases, map_mem),
    "fm": lambda ref, p, mem, bases, map_mem: fm.segment_bounds(ref, p["r"], mem, bases),
}


def plan_build(ref: Reference, kind: str, params: dict) -> dict:
    """The parameters to build with: a neighborhood or FM index built within max_memory bytes (the user's
    limit, else machine_memory, the share of this machine's memory the CLI allows). An FM index that would
    not fit in one piece is built in blocks of whole sequences (`blocks`, their bounds: the same index, so
    the store does not keep them); a neighborhood index (or an FM index of 2^32 bases or more) is split into
    genome segments (stored as `segments`, their bounds). segment_bases and block_bases (tests, experiments)
    set their sizes instead. Without the user's limit, a neighborhood index's segments are also small
    enough for two of them to map within half the machine's memory (machine_memory is three quarters of
    it): a build on a machine maps on it."""
    params = dict(params)
    max_memory, segment_bases = params.pop("max_memory", 0) or 0, params.pop("segment_bases", 0) or 0
    machine, block_bases = params.pop("machine_memory", 0) or 0, params.pop("block_bases", 0) or 0
    if kind == "fm" and not segment_bases:
        blocks = _fm_blocks(ref, params, int(max_memory or machine), int(block_bases), bool(max_memory or block_bases))
        if blocks:
            params["blocks"] = blocks
            return params
    if kind not in SEGMENT_BOUNDS or not (max_memory or segment_bases or machine):
        return params
    try:
        map_memory = 0 if max_memory else int(machine) * 2 // 3
        bounds = SEGMENT_BOUNDS[kind](ref, params, int(max_memory or machine), int(segment_bases), map_memory)
    except SeedmapError:
        if max_memory:
            raise
        return params  # a machine too small for even one segment: try the whole build
    if len(bounds) > 2:
        params["segments"] = bounds
    return params


def _fm_blocks(ref: Reference, params: dict, max_memory: int, block_bases: int, user_limit: bool) -> list[int]:
    """The block bounds of an FM build that needs blocks to fit max_memory (or of blocks of block_bases); []
    for a build in one piece, or where not even blocks fit (then segments, or without the user's limit, a try
    of the whole build)."""
    if not block_bases:
        if not max_memory or fm.fits_in_one_piece(ref, params["r"], max_memory):
            return []
        block_bases = fm_blocks.block_bases(ref, params["r"], max_memory)
        if not block_bases:
            return []
    try:
        bounds = fm_blocks.block_bounds(ref, block_bases)
    except SeedmapError:
        if user_limit:
            raise
        return []
    return bounds if len(bounds) > 2 else []


def build_index(fasta: str, out: str | None, kind: str, params: dict) -> Path:
    t0 = time.perf_counter()
    ref = read_fasta(fasta)
    t1 = time.perf_counter()
    log.info("read %d sequences, %d bp in %.1f s", len(ref.names), ref.total, t1 - t0)
    params = plan_build(ref, kind, params)
    if params.get("segments"):
        log.info("building in %d genome segments to stay within the memory limit", len(params["segments"]) - 1)
    if params.get("blocks"):
        log.info("building in %d blocks of whole sequences to stay within the memory limit",
                 len(params["blocks"]) - 1)
    path = Path(out) if out else store.default_path(fasta, kind)
    stored = {name: value for name, value in params.items() if name != "blocks"}
    # The scratch directory (a blockwise build's runs and tables) lies beside the index and goes with any
    # interruption, as the index's own temporary directory does (store.save).
    with tempfile.TemporaryDirectory(prefix=f".{path.name}.build-", dir=path.parent) as scratch:
        ix = KINDS[kind].build(ref, params, Path(scratch))
        store.save(path, kind, stored, ref, ix.arrays(), fasta)
        log.info("built the %s index (%s) and wrote %s in %.1f s", kind, KINDS[kind].describe(ix, stored), path,
                 time.perf_counter() - t1)
        del ix
    return path


def reference_only(fasta: str, index_path: str | None, kind: str = "neighborhood") -> Reference:
    """The reference a run with these options maps against, without building an index: the stored index's
    (checked as load_or_build loads it), else the FASTA's."""
    path = Path(index_path) if index_path else store.default_path(fasta, kind)
    if index_path or path.exists():
        return store.load(path, kind, KINDS[kind].arrays, fasta).reference
    return read_fasta(fasta)


def load_or_build(fasta: str, index_path: str | None, kind: str = "neighborhood") -> tuple[Reference, object]:
    spec = KINDS[kind]
    path = Path(index_path) if index_path else store.default_path(fasta, kind)
    if index_path or path.exists():
        t0 = time.perf_counter()
        st = store.load(path, kind, spec.arrays, fasta)
        ix = spec.from_arrays(st.params, st.arrays)
        log.info("loaded the %s index %s in %.1f s", kind, path, time.perf_counter() - t0)
        return st.reference, ix
    check_fasta(fasta)  # before saying what it will build from it
    log.info("no %s index at %s: building one in memory (run 'seedmap index' to keep it)", kind, path)
    ref = read_fasta(fasta)
    return ref, spec.build(ref, DEFAULT_PARAMS[kind], None)  # in memory: in one piece (no blocks, no scratch)
