"""What the CUDA backend does with each index kind (the names of seedmap.kinds.KINDS), registered once: its
candidate engine on the device, what of its search stays on the CPU (and why), and the kernels it launches
(compiled and loaded ahead by backend.warm_up). Every kind's windows are verified and aligned on the device."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
from numba import from_dtype, types

from seedmap.backends.base import CandidateSearch, DeviceEngine
from seedmap.backends.cuda import align_kernels as ak
from seedmap.backends.cuda import fm_kernels as fk
from seedmap.backends.cuda import locate_kernels as lk
from seedmap.backends.cuda import seed_filter_kernels as sf
from seedmap.backends.cuda import verify_kernels as vk
from seedmap.backends.cuda.engines import (
    filters_on_gpu,
    fm_candidates,
    kmer_candidates,
    make_engine,
    neighborhood_candidates,
)
from seedmap.backends.cuda.resident import DeviceShare
from seedmap.index.fm import FmIndex
from seedmap.index.neighborhood import NeighborhoodIndex
from seedmap.index.segments import SegmentedIndex
from seedmap.io.reference import Reference
from seedmap.options import EngineOptions

if TYPE_CHECKING:
    from numba.cuda.dispatcher import CUDADispatcher

Launches = list[tuple["CUDADispatcher", tuple]]  # (kernel, signature)
IndexT = TypeVar("IndexT")  # a kind's index class


def _no_cpu_stages(ix: object, options: EngineOptions) -> list[tuple[int, str]]:
    return []


@dataclass(frozen=True)
class CudaKind(Generic[IndexT]):
    """One index kind on a CUDA device. `candidates`: (index, reference, options, DeviceVerifier, stream,
    DeviceShare) -> its candidate engine; `kernels` and `cpu_stages` take (index, options), the index a
    segmented one's first part (the parts' array types are the same)."""

    candidates: Callable[..., CandidateSearch]
    kernels: Callable[[IndexT, EngineOptions], Launches]  # its candidates' launches
    cpu_stages: Callable[[IndexT, EngineOptions], list[tuple[int, str]]] = _no_cpu_stages  # (log level, line)


def _neighborhood_cpu_stages(ix: NeighborhoodIndex, options: EngineOptions) -> list[tuple[int, str]]:
    """A warning where the options sent the filter to the CPU (the GPU could have filtered with others)."""
    if not sf.check_fe(ix.l, options.fe):
        return [(logging.WARNING, f"--fe {options.fe}: more substitutions than the GPU filter enumerates; "
                                  "filtering on the CPU")]
    if not filters_on_gpu(ix, options.fe, options.filter):
        what = f"spaced seeds ({ix.shape})" if "-" in ix.shape else f"--filter {options.filter}"
        return [(logging.WARNING, f"the GPU filters are bs and ph over contiguous seeds: {what} filters on the CPU")]
    return []


def _neighborhood_kernels(ix: NeighborhoodIndex, options: EngineOptions) -> Launches:
    if not filters_on_gpu(ix, options.fe, options.filter):
        return []
    fill = sf.fill_signature(types.Array(from_dtype(np.dtype(ix.pos.dtype)), 1, "C"))
    return [(getattr(sf, name), sig) for name, sigs in sf.SIGNATURES.items()
            for sig in ([fill] if name == "fill_kernel" else sigs)]


def _fm_kernels(ix: FmIndex, options: EngineOptions) -> Launches:
    ssa = types.Array(from_dtype(np.dtype(ix.fwd_ssa.dtype)), 1, "C")
    merge = [(sf.sort_kernel, sig) for sig in sf.SIGNATURES["sort_kernel"]]
    merge += [(sf.merge_kernel, sig) for sig in sf.SIGNATURES["merge_kernel"]]
    search = [(fk.search_kernel, sig) for sig in fk.SIGNATURES["search_kernel"]]
    return search + [(fk.fill_kernel, fk.fill_signature(ssa))] + merge


def _bulk_kernels(ix: object, options: EngineOptions) -> Launches:
    names = ["bitvector_kernel"] + (["banded_kernel"] if options.gpu_verify == vk.BANDED else [])
    return [(getattr(vk, name), sig) for name in names for sig in vk.SIGNATURES[name]]


CUDA_KINDS: dict[str, CudaKind[Any]] = {  # the index a run's kind names, whatever its class
    "neighborhood": CudaKind(neighborhood_candidates, _neighborhood_kernels, _neighborhood_cpu_stages),
    "kmer": CudaKind(kmer_candidates, _bulk_kernels),
    "fm": CudaKind(fm_candidates, _fm_kernels),
}


def _first(ix: object) -> object:
    return ix.first if isinstance(ix, SegmentedIndex) else ix


def device_engine(kind: str, ix: object, ref: Reference, options: EngineOptions, stream: object = 0,
                  share: DeviceShare | None = None) -> DeviceEngine:
    """The engine of an index kind on the current CUDA device. Engines made with one `share` (the workers of
    one device) hold one copy of the reference and index."""
    return make_engine(CUDA_KINDS[kind].candidates, ix, ref, options, stream, share)


def cpu_stages(kind: str, ix: object, options: EngineOptions) -> list[tuple[int, str]]:
    """What of a --device cuda run's candidate search stays on the CPU, and why: (log level, line) each."""
    return CUDA_KINDS[kind].cpu_stages(_first(ix), options)


def launched_kernels(kind: str, ix: object, options: EngineOptions) -> Launches:
    """(kernel, signature) of every launch device_engine's engine for this run can make."""
    located: Launches = [(lk.window_locations_kernel, sig) for sig in lk.SIGNATURES["window_locations_kernel"]]
    located += [(ak.align_kernel, sig) for sig in ak.SIGNATURES["align_kernel"]]
    return CUDA_KINDS[kind].kernels(_first(ix), options) + located
