"""Engines on a CUDA device: the neighborhood engine's seed + filter and the fm engine's search
(fm_engine.py) run on the GPU; the k-mer engine keeps its CPU seeding and verifies its candidates in bulk
on the GPU; every engine's merged windows are verified on the GPU (locations.py) and its locations aligned
there (alignments.py). Same contract, same results as the CPU engines (engines/__init__.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import cuda

from seedmap.backends.base import CandidateSearch, DeviceEngine
from seedmap.backends.cuda import seed_filter_kernels as sf
from seedmap.backends.cuda.alignments import DeviceAligner
from seedmap.backends.cuda.fm_engine import CudaFmEngine
from seedmap.backends.cuda.locations import DeviceLocator
from seedmap.backends.cuda.merge import merged_windows
from seedmap.backends.cuda.resident import DeviceShare
from seedmap.backends.cuda.verify_kernels import DeviceVerifier, sync
from seedmap.engines.base import DEVICE_CANDIDATE_CAP, QueryMemo, in_chunks, no_windows
from seedmap.engines.factory import neighborhood_engine as make_cpu_engine
from seedmap.engines.fm import fm_engine
from seedmap.engines.kmer import KmerEngine
from seedmap.engines.segmented import SegmentedEngine
from seedmap.filter import plan
from seedmap.index.fm import FmIndex
from seedmap.index.kmer import KmerIndex
from seedmap.index.neighborhood import NeighborhoodIndex
from seedmap.index.segments import SegmentedIndex
from seedmap.io.reference import Reference
from seedmap.options import EngineOptions

if TYPE_CHECKING:
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    from numba.cuda.cudadrv.driver import Stream

log = logging.getLogger("seedmap")
# An index slice on the device: seed addresses [a_lo, a_hi), its seed_start, nbs, nb_pos and pos copies, and
# the offsets of its first seed block (nb0) and position (p0) in the whole index.
Loaded = tuple[int, int, Any, Any, Any, Any, int, int]


def index_slices(ix: NeighborhoodIndex, max_bytes: int | None) -> list[tuple[int, int]]:
    """Slices of the index loaded onto the device in turn: ranges of seed addresses whose part of the index
    takes at most max_bytes on the device (a single seed block larger than that is a slice of its own); the
    whole index when max_bytes is None."""
    nseeds = ix.seed_start.size - 1
    if max_bytes is None:
        return [(0, nseeds)]
    ss = np.asarray(ix.seed_start, dtype=np.int64)
    cum = ss * (ix.nbs.itemsize + 8) + np.asarray(ix.nb_pos, dtype=np.int64)[ss] * ix.pos.itemsize
    cum += np.arange(nseeds + 1, dtype=np.int64) * 8  # the seed_start slice itself
    bounds = [0]
    while bounds[-1] < nseeds:
        a = bounds[-1]
        b = int(np.searchsorted(cum, cum[a] + max_bytes, side="right")) - 1
        bounds.append(min(max(b, a + 1), nseeds))
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def device_memory_limit(fraction: float = 0.5) -> int | None:
    """Bytes of the current device's free memory the index may take (None: unknown, load it whole)."""
    try:
        free, _ = cuda.current_context().get_memory_info()
        return int(free * fraction)
    except Exception:  # the simulator and some drivers do not say
        return None


def filters_on_gpu(index: NeighborhoodIndex, fe: int, filter_name: str) -> bool:
    """Whether the device kernels take this filter (bs or ph over contiguous seeds, fe they enumerate)."""
    return sf.check_fe(index.l, fe) and filter_name in ("bs", "ph") and "-" not in index.shape


# The kernels' perfect-hash arguments when they do not look up: ph_off, ph_block, ph_g, ph_table, one entry each.
NO_PERFECT_HASH = (np.zeros(1, np.int64), np.zeros((1, 2), np.uint32), np.zeros(1, np.uint8), np.zeros(1, np.int64))


class CudaNeighborhoodEngine:
    """MAROSE seed + filter on the device (seed_filter_kernels); the CPU engine's results, exactly."""

    def __init__(self, index: NeighborhoodIndex, ref_starts: np.ndarray, windows: int = 0, step: int = 0,
                 fe: int = 0, max_bytes: int | None = -1, stream: int | Stream = 0,
                 candidate_cap: int = DEVICE_CANDIDATE_CAP, filter_name: str = "bs",
                 share: DeviceShare | None = None) -> None:
        self.index = index
        self.windows, self.step, self.fe = windows, step, fe
        self.max_window = index.word
        self.stream = stream
        self.candidate_cap = candidate_cap
        share = share if share is not None else DeviceShare()
        # The workers' CPU engine, one for all (a ph filter's tables are built once).
        self.cpu = share.get(index, "cpu engine", lambda: make_cpu_engine(
            index, ref_starts, EngineOptions(windows=windows, step=step, fe=fe, filter=filter_name)))
        self.round0_min = self.cpu.round0_min
        # The device kernels are the bs and ph filters over contiguous seeds; anything else filters on the
        # CPU (same hits either way).
        self.on_gpu = filters_on_gpu(index, fe, filter_name)  # cpu_stages says so, once per run
        self.ref_starts = np.ascontiguousarray(ref_starts, dtype=np.int64)
        self.d_ref_starts = cuda.to_device(self.ref_starts, stream=stream)
        # --filter ph: the perfect hashes (the CPU engine made them if the index had none), whole on the
        # device, before the index's slices are sized; other filters pass the kernels placeholders
        self.ph_on = self.on_gpu and filter_name == "ph"
        tables: Iterable[np.ndarray] = NO_PERFECT_HASH
        if self.ph_on:
            assert index.ph is not None, "the CPU engine makes the perfect hashes"
            tables = index.ph.arrays().values()
        self.d_ph = share.get(index, f"perfect hashes {self.ph_on}", lambda: tuple(
            cuda.to_device(np.ascontiguousarray(a), stream=0) for a in tables))
        # One device copy of the index for all the device's workers, and one decision on its slices (the
        # first worker's: later ones would see the device's memory taken by that copy).
        self.slices = share.get(index, "slices",
                                lambda: index_slices(index, device_memory_limit() if max_bytes == -1 else max_bytes))
        self._resident = (share.get(index, "index", lambda: self._load(*self.slices[0], stream=0))
                          if len(self.slices) == 1 else None)
        if len(self.slices) > 1:
            log.info("the index is loaded onto the device in %d slices of seed addresses", len(self.slices))

    def guarantee(self, m: int, e: int) -> str:
        return self.cpu.guarantee(m, e)

    def bulk_verifying_all(self) -> AbstractContextManager[None]:
        return self.cpu.bulk_verifying_all()  # (the device kernels verify nothing in bulk)

    def _load(self, a_lo: int, a_hi: int, stream: int | Stream | None = None) -> Loaded:
        """Device copies of the index part for seed addresses [a_lo, a_hi), on `stream` (this engine's by
        default; 0: synchronous, for a copy other workers' streams read)."""
        ix, st = self.index, self.stream if stream is None else stream
        nb0, nb1 = int(ix.seed_start[a_lo]), int(ix.seed_start[a_hi])
        p0, p1 = int(ix.nb_pos[nb0]), int(ix.nb_pos[nb1])

        def dev(x: np.ndarray) -> DeviceNDArray:
            return cuda.to_device(np.ascontiguousarray(x), stream=st)

        return (a_lo, a_hi, dev(ix.seed_start[a_lo:a_hi + 1]), dev(ix.nbs[nb0:nb1]), dev(ix.nb_pos[nb0:nb1 + 1]),
                dev(ix.pos[p0:p1] if p1 > p0 else ix.pos[:1]), nb0, p0)

    def _each_slice(self) -> Iterator[Loaded]:
        if self._resident is not None:
            yield self._resident
            return
        for a_lo, a_hi in self.slices:  # loaded in turn (MAROSE); the previous one is freed
            yield self._load(a_lo, a_hi)

    def spans_alone(self, packed: np.ndarray, nmask: np.ndarray, seq_starts: np.ndarray, start: np.ndarray,
                    end: np.ndarray, parts: np.ndarray) -> np.ndarray:
        return self.cpu.spans_alone(packed, nmask, seq_starts, start, end, parts)

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
                          memo: QueryMemo | None = None) -> tuple[np.ndarray, np.ndarray]:
        if not self.on_gpu:
            return self.cpu.candidate_windows(qcodes, qoff, qerr, memo)
        nq = qoff.size - 1
        if nq <= 0:
            return no_windows()
        st = self.stream
        u, l = self.index.u, self.index.l
        m = np.diff(np.asarray(qoff, dtype=np.int64))
        e = np.asarray(qerr, dtype=np.int64)[np.arange(nq) >> 1]
        nwin = plan.windows_per_query(m, e, u + l, self.windows, self.step)
        d_q = cuda.to_device(np.ascontiguousarray(qcodes, dtype=np.uint8), stream=st)
        d_qoff = cuda.to_device(np.ascontiguousarray(qoff, dtype=np.int64), stream=st)
        d_qerr = cuda.to_device(np.ascontiguousarray(qerr, dtype=np.int64), stream=st)
        d_counts = cuda.to_device(np.zeros(nq * nwin, dtype=np.int64), stream=st)
        grid = (nq * nwin + sf.THREADS - 1) // sf.THREADS
        for a_lo, a_hi, ss, nbs, nb_pos, _, nb0, p0 in self._each_slice():
            sf.count_kernel[grid, sf.THREADS, st](d_q, d_qoff, d_qerr, nwin, u, l, self.windows, self.step, self.fe,
                                                  a_lo, a_hi, ss, nbs, nb_pos, nb0, p0, self.ph_on, *self.d_ph,
                                                  d_counts)
        counts = d_counts.copy_to_host(stream=st)
        sync(st)
        off = np.zeros(nq * nwin + 1, dtype=np.int64)  # exclusive scan (host: one pass over 8 bytes a window)
        np.cumsum(counts, out=off[1:])
        cand_off = off[::nwin]
        return in_chunks(cand_off, self.candidate_cap,
                         lambda first, last: self._chunk(d_q, d_qoff, d_qerr, nwin, first, last, off, cand_off))

    def _chunk(self, d_q: DeviceNDArray, d_qoff: DeviceNDArray, d_qerr: DeviceNDArray, nwin: int, first: int, last: int,
               off: np.ndarray, cand_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        st = self.stream
        u, l = self.index.u, self.index.l
        base = int(cand_off[first])
        size = int(cand_off[last]) - base
        nqc = last - first
        win = [cuda.device_array(max(size, 1), dtype=np.int64, stream=st) for _ in range(3)]
        d_cursor = cuda.to_device(off[first * nwin:last * nwin] - base, stream=st)
        grid = (nqc * nwin + sf.THREADS - 1) // sf.THREADS
        for a_lo, a_hi, ss, nbs, nb_pos, pos, nb0, p0 in self._each_slice():
            sf.fill_kernel[grid, sf.THREADS, st](d_q, d_qoff, d_qerr, nwin, first * nwin, u, l, self.windows,
                                                 self.step, self.fe, a_lo, a_hi, ss, nbs, nb_pos, pos,
                                                 self.d_ref_starts, nb0, p0, self.ph_on, *self.d_ph, d_cursor, *win)
        return merged_windows(st, first, last, cand_off[first:last + 1] - base, win)


def make_engine(candidates: Callable[..., CandidateSearch], ix: object, ref: Reference, options: EngineOptions,
                stream: int | Stream = 0, share: DeviceShare | None = None) -> DeviceEngine:
    """A DeviceEngine on the current CUDA device, its candidates from `candidates` (one of the three below, as
    backends/cuda/kinds.py registers them per index kind)."""
    share = share if share is not None else DeviceShare()
    device = DeviceVerifier(ref.packed, ref.nmask, method=options.gpu_verify, stream=stream, share=share)
    return DeviceEngine(candidates(ix, ref, options, device, stream, share), DeviceLocator(device),
                        DeviceAligner(device))


def neighborhood_candidates(ix: object, ref: Reference, options: EngineOptions, device: DeviceVerifier,
                            stream: int | Stream, share: DeviceShare) -> CandidateSearch:
    """MAROSE seed + filter on the device; genome segments share it."""
    if isinstance(ix, SegmentedIndex):
        limit = share.get(ix, "memory limit", device_memory_limit)
        part_bytes = None if limit is None else limit // len(ix.parts)
        return SegmentedEngine([CudaNeighborhoodEngine(part, ref.starts, windows=options.windows, step=options.step,
                                                       fe=options.fe, max_bytes=part_bytes, stream=stream,
                                                       filter_name=options.filter, share=share)
                                for part in ix.parts])
    assert isinstance(ix, NeighborhoodIndex)
    return CudaNeighborhoodEngine(ix, ref.starts, windows=options.windows, step=options.step,
                                  fe=options.fe, stream=stream, filter_name=options.filter, share=share)


def kmer_candidates(ix: object, ref: Reference, options: EngineOptions, device: DeviceVerifier,
                    stream: int | Stream, share: DeviceShare) -> CandidateSearch:
    """CPU seeding; the candidates are verified in bulk on the GPU."""
    assert isinstance(ix, KmerIndex)
    return KmerEngine(ix, ref.starts, adjacency=options.adjacency, bulk=device, packed=ref.packed, nmask=ref.nmask)


def fm_candidates(ix: object, ref: Reference, options: EngineOptions, device: DeviceVerifier,
                  stream: int | Stream, share: DeviceShare) -> CandidateSearch:
    """The search scheme, the locates and the dedupe on the GPU."""
    assert isinstance(ix, FmIndex | SegmentedIndex)
    return fm_engine(ix, ref, make=lambda part, starts: CudaFmEngine(part, starts, stream=stream, share=share))
