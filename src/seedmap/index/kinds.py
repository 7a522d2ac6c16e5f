"""The index kinds: how each is built, stored, loaded, and which engine maps with it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from seedmap.engines.base import CandidateEngine
from seedmap.engines.factory import neighborhood_engine
from seedmap.engines.fm import FmEngine
from seedmap.engines.kmer import KmerEngine
from seedmap.index import fm, kmer, neighborhood, store
from seedmap.index.perfect_hash import PerfectHash
from seedmap.io.reference import Reference, read_fasta
from seedmap.pipeline.options import EngineOptions
from seedmap.verify.bulk import bulk_distances

log = logging.getLogger("seedmap")


@dataclass
class IndexKind:
    """How to build, store and load one kind of index, and make its engine."""

    name: str
    arrays: tuple[str, ...]
    build: Callable[[Reference, dict], object]
    from_arrays: Callable[[dict, dict], object]
    engine: Callable[[object, Reference, EngineOptions], CandidateEngine]
    describe: Callable[[object], str]


KINDS = {
    "neighborhood": IndexKind(
        "neighborhood", ("seed_start", "nbs", "nb_pos", "pos"),
        build=lambda ref, p: neighborhood.build(ref, p["u"], p["l"], p.get("shape", ""), ph=bool(p.get("ph"))),
        from_arrays=lambda p, a: neighborhood.NeighborhoodIndex(p["u"], p["l"], a["seed_start"], a["nbs"],
                                                                a["nb_pos"], a["pos"], p.get("shape", ""),
                                                                PerfectHash.from_arrays(a, p.get("ph"))),
        engine=lambda ix, ref, o: neighborhood_engine(ix, ref.starts, o),
        describe=lambda ix: f"u={ix.u}, l={ix.l}{', shape ' + ix.shape if ix.shape else ''}: {ix.pos.size} "
                            f"positions, {ix.nbs.size} unique words"
                            + (", perfect hashes" if ix.ph is not None else "")),
    "kmer": IndexKind(
        "kmer", ("offsets", "pos"),
        build=lambda ref, p: kmer.build(ref, p["k"]),
        from_arrays=lambda p, a: kmer.KmerIndex(p["k"], a["offsets"], a["pos"]),
        engine=lambda ix, ref, o: KmerEngine(ix, ref.starts, adjacency=o.adjacency, bulk=bulk_distances,
                                             packed=ref.packed, nmask=ref.nmask),
        describe=lambda ix: f"k={ix.k}: {ix.pos.size} positions"),
    "fm": IndexKind(
        "fm", fm.ARRAYS,
        build=lambda ref, p: fm.build(ref, p["r"]),
        from_arrays=fm.FmIndex.from_arrays,
        engine=lambda ix, ref, o: FmEngine(ix, ref.starts, bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask),
        describe=lambda ix: f"r={ix.sa_sample}: {ix.n} text symbols, {ix.fwd_ssa.size} SA samples"),
}
DEFAULT_PARAMS = {
    "neighborhood": {"u": neighborhood.DEFAULT_SEED_LENGTH, "l": neighborhood.DEFAULT_NEIGHBORHOOD_LENGTH},
    "kmer": {"k": kmer.DEFAULT_K},
    "fm": {"r": fm.DEFAULT_SA_SAMPLE},
}


def build_index(fasta: str, out: str | None, kind: str, params: dict) -> Path:
    t0 = time.perf_counter()
    ref = read_fasta(fasta)
    t1 = time.perf_counter()
    log.info("read %d sequences, %d bp in %.1f s", len(ref.names), ref.total, t1 - t0)
    ix = KINDS[kind].build(ref, params)
    t2 = time.perf_counter()
    log.info("built the %s index (%s) in %.1f s", kind, KINDS[kind].describe(ix), t2 - t1)
    path = Path(out) if out else store.default_path(fasta, kind)
    store.save(path, kind, params, ref, ix.arrays(), fasta)
    log.info("wrote %s in %.1f s", path, time.perf_counter() - t2)
    return path


def load_or_build(fasta: str, index_path: str | None, kind: str = "neighborhood") -> tuple[Reference, object]:
    spec = KINDS[kind]
    path = Path(index_path) if index_path else store.default_path(fasta, kind)
    if index_path or path.exists():
        t0 = time.perf_counter()
        st = store.load(path, kind, spec.arrays, fasta)
        ix = spec.from_arrays(st.params, st.arrays)
        log.info("loaded index %s in %.1f s", path, time.perf_counter() - t0)
        return st.reference, ix
    log.info("no %s index at %s: building one in memory (run 'seedmap index' to keep it)", kind, path)
    ref = read_fasta(fasta)
    return ref, spec.build(ref, DEFAULT_PARAMS[kind])
