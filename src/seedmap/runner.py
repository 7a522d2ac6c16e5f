"""Runs the pipeline over a read file: index loading, atomic output, batches, progress, summary."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

from seedmap.engines.base import CandidateEngine
from seedmap.engines.fm import FmEngine
from seedmap.engines.kmer import KmerEngine
from seedmap.engines.neighborhood import make_engine as neighborhood_engine
from seedmap.filter import plan
from seedmap.index import fm, kmer, neighborhood, store
from seedmap.index.perfect_hash import PerfectHash
from seedmap.io.output import open_sink, output_stream  # noqa: F401  (output_stream: used to live here)
from seedmap.io.read_group import ReadGroup
from seedmap.io.reads import ReadBatch, read_batches
from seedmap.io.reference import Reference, read_fasta
from seedmap.io.sam import header
from seedmap.pipeline import MapOptions, SamFormatter, errors_per_read, map_batch
from seedmap.verify.bulk import bulk_distances

log = logging.getLogger("seedmap")


@dataclass
class IndexKind:
    """How to build, store and load one kind of index, and make its engine."""

    name: str
    arrays: tuple[str, ...]
    build: Callable[[Reference, dict], object]
    from_arrays: Callable[[dict, dict], object]
    engine: Callable[[object, Reference, dict], CandidateEngine]
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
        engine=lambda ix, ref, o: KmerEngine(ix, ref.starts, adjacency=o.get("adjacency", 1), bulk=bulk_distances,
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


class GuaranteeWarnings:
    """Warns once per read length whose window plan does not keep full sensitivity."""

    def __init__(self, opts: MapOptions, max_window: int, windows: int, step: int, fe: int,
                 plan_guarantee: Callable[[int, int], str] | None = None) -> None:
        self.opts, self.max_window, self.windows, self.step, self.fe = opts, max_window, windows, step, fe
        self.plan_guarantee = plan_guarantee  # the engine's own (m, e) -> guarantee, when it has one
        self.seen: set[int] = set()

    def check(self, lengths: np.ndarray) -> None:
        for m in np.unique(lengths).tolist():
            if m in self.seen:
                continue
            self.seen.add(m)
            e = int(errors_per_read(np.array([m]), self.opts.errors)[0])
            if self.plan_guarantee is not None:
                g = self.plan_guarantee(m, e) if m > e else plan.NONE
            else:
                g = plan.guarantee(m, e, self.max_window, self.windows, self.step, self.fe)
            if m == 0 or m <= e:
                log.warning("reads of length %d are not longer than the %d edits allowed: reported unmapped", m, e)
            elif g == plan.SUBSTITUTIONS_ONLY:
                log.warning("reads of length %d, e=%d: this window plan finds every location whose edits are "
                            "substitutions, but may miss some with indels (not fully sensitive)", m, e)
            elif g == plan.NONE:
                log.warning("reads of length %d, e=%d: this window plan is NOT fully sensitive", m, e)


def prepare(fasta: str, index_path: str | None, kind: str, engine_options: dict,
            opts: MapOptions) -> tuple[Reference, object, CandidateEngine, SamFormatter, GuaranteeWarnings]:
    """What a map run (single or paired) needs before its first read: the reference and its index, the
    engine the options ask for, the SAM formatter, and the warnings for plans that lose sensitivity."""
    ref, ix = load_or_build(fasta, index_path, kind)
    engine = KINDS[kind].engine(ix, ref, engine_options)
    o = engine_options
    warn = GuaranteeWarnings(opts, engine.max_window, o.get("windows", 0), o.get("step", 0), o.get("fe", 0),
                             getattr(engine, "guarantee", None))
    return ref, ix, engine, SamFormatter(ref), warn


def run_map(fasta: str, reads: str, out: str | None, opts: MapOptions, *, index_path: str | None,
            engine_options: dict, batch_reads: int, command_line: str, progress: bool,
            kind: str = "neighborhood", read_group: ReadGroup | None = None,
            device: str = "cpu") -> None:
    t0 = time.perf_counter()
    from seedmap.backends.cuda.device import resolve

    choice = resolve(device)  # before the index is loaded: a missing GPU fails fast
    ref, ix, engine, fmt, warn = prepare(fasta, index_path, kind, engine_options, opts)
    n_reads = n_mapped = n_records = 0
    t_map = time.perf_counter()
    with open_sink(out, read_group, numba.get_num_threads()) as sink, _progress(progress, reads) as advance:
        sink.header(header(ref, command_line))
        for text, stats in _results(prefetch(read_batches(reads, batch_reads)), warn, choice, kind, ix, ref,
                                    engine, engine_options, fmt, opts):
            sink.records(text)
            n_reads += stats.reads
            n_mapped += stats.mapped
            n_records += stats.records
            advance(stats.reads)
    elapsed = time.perf_counter() - t_map
    log.info("mapped %d reads: %d (%.2f%%) with at least one location, %d records; %.0f reads/s "
             "(%.1f s mapping, %.1f s total)", n_reads, n_mapped, 100.0 * n_mapped / max(n_reads, 1), n_records,
             n_reads / max(elapsed, 1e-9), elapsed, time.perf_counter() - t0)


def _results(batches: Iterator[ReadBatch], warn: GuaranteeWarnings, choice: object, kind: str, ix: object,
             ref: Reference, engine: CandidateEngine, engine_options: dict, fmt: SamFormatter,
             opts: MapOptions) -> Iterator[tuple[bytes, object]]:
    """(SAM text, stats) per batch, in read order, on the CPU or on the chosen GPUs."""

    def checked() -> Iterator[ReadBatch]:
        for batch in batches:
            warn.check(batch.lengths)
            yield batch

    if choice.kind == "cpu":
        return (map_batch(batch, engine, fmt, opts) for batch in checked())
    from seedmap.backends.cuda.mapper import map_on_devices

    return map_on_devices(checked(), choice, kind, ix, ref, engine_options, fmt, opts)


def prefetch(batches: Iterator[ReadBatch]) -> Iterator[ReadBatch]:
    """Parse the next batch in a background thread while the current one is mapped (the numba kernels
    release the GIL). Errors surface, in order, where the batch would have been."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(next, batches, None)
        while True:
            batch = pending.result()
            if batch is None:
                return
            pending = pool.submit(next, batches, None)
            yield batch


@contextmanager
def _progress(enabled: bool, reads: str) -> Iterator:
    if not enabled:
        yield lambda n: None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("mapping {task.completed:,} reads"), TimeElapsedColumn(),
                  transient=True, console=_stderr_console()) as bar:
        task = bar.add_task("map", total=None)
        yield lambda n: bar.advance(task, n)


def _stderr_console() -> object:
    from rich.console import Console

    return Console(stderr=True)
