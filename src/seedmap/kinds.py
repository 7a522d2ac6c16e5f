"""The index kinds, each registered once: how its index is built, stored and loaded, and the engine that maps
with it on the CPU (engines/). A new kind is one entry in KINDS; each device backend registers what it does
with a kind in a table of its own keyed by the kind's name (backends/cuda/kinds.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from seedmap.engines.base import CandidateEngine, Engine
from seedmap.engines.factory import neighborhood_engine
from seedmap.engines.fm import fm_engine
from seedmap.engines.kmer import KmerEngine
from seedmap.engines.segmented import SegmentedEngine
from seedmap.errors import SeedmapError
from seedmap.filter.fm_lookup import tables
from seedmap.index import fm, kmer, neighborhood, segments, store
from seedmap.io.reference import Reference, check_fasta, read_fasta
from seedmap.options import EngineOptions
from seedmap.verify.bulk import bulk_distances

log = logging.getLogger("seedmap")


@dataclass
class IndexKind:
    """How to build, store and load one kind of index, and make its engine."""

    name: str
    arrays: Callable[[dict], tuple[str, ...]]  # the arrays a stored index with these parameters holds
    build: Callable[[Reference, dict], object]
    from_arrays: Callable[[dict, dict], object]
    engine: Callable[[object, Reference, EngineOptions], CandidateEngine]  # on the CPU
    describe: Callable[[object, dict], str]  # what a build made, for the log


KINDS = {
    "neighborhood": IndexKind(
        "neighborhood", neighborhood.stored_arrays,
        build=lambda ref, p: _build_neighborhood(ref, p),
        from_arrays=lambda p, a: _neighborhood_from_arrays(p, a),
        engine=lambda ix, ref, o: _neighborhood_engine(ix, ref, o),
        describe=neighborhood.describe),
    "kmer": IndexKind(
        "kmer", lambda p: ("offsets", "pos"),
        build=lambda ref, p: kmer.build(ref, p["k"]),
        from_arrays=lambda p, a: kmer.KmerIndex(p["k"], a["offsets"], a["pos"]),
        engine=lambda ix, ref, o: KmerEngine(ix, ref.starts, adjacency=o.adjacency, bulk=bulk_distances,
                                             packed=ref.packed, nmask=ref.nmask),
        describe=lambda ix, p: f"k={ix.k}: {ix.pos.size} positions"),
    "fm": IndexKind(
        "fm", fm.stored_arrays,
        build=lambda ref, p: (fm.segmented_build(ref, p["r"], segments.bounds_of(p)) if p.get("segments")
                              else _build_fm(ref, p)),
        from_arrays=fm.from_arrays,
        engine=lambda ix, ref, o: fm_engine(ix, ref, bulk=bulk_distances),
        describe=fm.describe),
}
DEFAULT_PARAMS = {
    "neighborhood": {"u": neighborhood.DEFAULT_SEED_LENGTH, "l": neighborhood.DEFAULT_NEIGHBORHOOD_LENGTH},
    "kmer": {"k": kmer.DEFAULT_K},
    "fm": {"r": fm.DEFAULT_SA_SAMPLE},
}


def _build_fm(ref: Reference, p: dict) -> fm.FmIndex:
    """An FM index with its k-mer tables, which a stored index keeps (each run built them: 0.15-0.2 s of a
    --best run's 3-4 s at 250 Mbp, -t 2)."""
    ix = fm.build(ref, p["r"])
    tables(ix)
    return ix


def _build_neighborhood(ref: Reference, p: dict) -> object:
    shape, ph = p.get("shape", ""), bool(p.get("ph"))
    if p.get("segments"):  # built part by part as the store writes them
        return neighborhood.segmented_build(ref, p["u"], p["l"], shape, ph, segments.bounds_of(p))
    return neighborhood.build(ref, p["u"], p["l"], shape, ph=ph)


def _neighborhood_from_arrays(p: dict, a: dict) -> object:
    if p.get("segments"):
        return segments.SegmentedIndex.from_arrays(p, a, neighborhood.NeighborhoodIndex.from_arrays)
    return neighborhood.NeighborhoodIndex.from_arrays(p, a)


def _neighborhood_engine(ix: object, ref: Reference, o: EngineOptions) -> CandidateEngine:
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
    limit, else machine_memory, the share of this machine's memory the CLI allows) is split into genome
    segments (stored as `segments`, their bounds) when one would not fit (FM: nor have a 32-bit suffix
    array); segment_bases (tests, experiments) sets the segments' size instead. Without the user's limit,
    a neighborhood index's segments are also small enough for two of them to map within half the machine's
    memory (machine_memory is three quarters of it): a build on a machine maps on it."""
    params = dict(params)
    max_memory, segment_bases = params.pop("max_memory", 0) or 0, params.pop("segment_bases", 0) or 0
    machine = params.pop("machine_memory", 0) or 0
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


def build_index(fasta: str, out: str | None, kind: str, params: dict) -> Path:
    t0 = time.perf_counter()
    ref = read_fasta(fasta)
    t1 = time.perf_counter()
    log.info("read %d sequences, %d bp in %.1f s", len(ref.names), ref.total, t1 - t0)
    params = plan_build(ref, kind, params)
    if params.get("segments"):
        log.info("building in %d genome segments to stay within the memory limit", len(params["segments"]) - 1)
    ix = KINDS[kind].build(ref, params)
    path = Path(out) if out else store.default_path(fasta, kind)
    store.save(path, kind, params, ref, ix.arrays(), fasta)
    log.info("built the %s index (%s) and wrote %s in %.1f s", kind, KINDS[kind].describe(ix, params), path,
             time.perf_counter() - t1)
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
    return ref, spec.build(ref, DEFAULT_PARAMS[kind])
