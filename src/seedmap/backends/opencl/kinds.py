"""What the OpenCL backend does with each index kind (the names of seedmap.kinds.KINDS), registered once: the
candidate engine of one worker and the steps of its search that run on the device and on the CPU (the log
line). The neighborhood engine's seed + filter runs on the device (seed_filter.cl) where the kernel takes
the options and the index fits, and so does the FM engine's search (fm_scheme.cl) where the index fits; the
k-mer engine seeds on the CPU and verifies its candidates in bulk on the device (bulk.py). Every kind's merged
windows are verified on the device (locations.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from seedmap.backends.base import EngineInputs
from seedmap.backends.opencl.bulk import OpenClBulkVerifier, kernel_of
from seedmap.backends.opencl.fm_engine import SSA_TYPES, OpenClFmEngine, fm_program
from seedmap.backends.opencl.neighborhood import OpenClNeighborhoodEngine
from seedmap.backends.opencl.program import OpenClDevice
from seedmap.engines.base import Engine
from seedmap.engines.fm import fm_engine
from seedmap.engines.kmer import KmerEngine
from seedmap.engines.neighborhood_ph import ensure_perfect_hash
from seedmap.engines.segmented import SegmentedEngine
from seedmap.filter.degenerate import device_enumerates
from seedmap.index.fm import FmIndex
from seedmap.index.kmer import KmerIndex
from seedmap.index.neighborhood import NeighborhoodIndex
from seedmap.index.segments import SegmentedIndex
from seedmap.verify.bulk import bulk_distances

MAX_FE = 8  # seed_filter.cl's MAX_FE: substitutions per window the kernel enumerates
IndexT = TypeVar("IndexT", NeighborhoodIndex, FmIndex)


@dataclass(frozen=True)
class OpenClKind:
    """One index kind on an OpenCL device. `candidates`: (inputs, device) -> one worker's candidate engine;
    `steps`: (inputs, device) -> (what of the candidate search runs on the device, "" for nothing; what on
    the CPU)."""

    candidates: Callable[[EngineInputs, OpenClDevice], Engine]
    steps: Callable[[EngineInputs, OpenClDevice], tuple[str, str]]


def _parts(index: object, kind: type[IndexT]) -> list[IndexT]:
    """A segmented index's parts, or the index alone, each a `kind` (a neighborhood or an FM index)."""
    parts = list(index.parts) if isinstance(index, SegmentedIndex) else [index]
    found = [ix for ix in parts if isinstance(ix, kind)]
    assert len(found) == len(parts), f"the index is not made of {kind.__name__}"
    return found


def filter_on_cpu(inputs: EngineInputs, device: OpenClDevice) -> str | None:
    """Why the neighborhood filter stays on the CPU (None: it runs on the device): a filter or seed the
    kernel does not take, more substitutions than it enumerates, an index larger than the device holds."""
    options, parts = inputs.options, _parts(inputs.index, NeighborhoodIndex)
    if options.filter not in ("bs", "ph"):
        return f"--filter {options.filter} filters on the CPU"
    if "-" in parts[0].shape:
        return f"spaced seeds ({parts[0].shape}) filter on the CPU"
    if not device_enumerates(parts[0].l, options.fe, MAX_FE):
        return f"--fe {options.fe}: more substitutions than the OpenCL kernel enumerates, filtering on the CPU"
    arrays = [a for ix in parts for a in ix.arrays().values()]
    if not device.holds(arrays):
        return "the index is larger than the OpenCL device holds, filtering on the CPU"
    return None


def _neighborhood_candidates(inputs: EngineInputs, device: OpenClDevice) -> Engine:
    if filter_on_cpu(inputs, device) is not None:
        return inputs.cpu
    o, ref = inputs.options, inputs.ref
    engines = [OpenClNeighborhoodEngine(device, ix, ref.starts, windows=o.windows, step=o.step, fe=o.fe,
                                        ph=ensure_perfect_hash(ix) if o.filter == "ph" else None,
                                        bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask)
               for ix in _parts(inputs.index, NeighborhoodIndex)]  # the CPU engine's bulk verifier (seedmap.kinds)
    return SegmentedEngine(engines) if isinstance(inputs.index, SegmentedIndex) else engines[0]


def _neighborhood_steps(inputs: EngineInputs, device: OpenClDevice) -> tuple[str, str]:
    why = filter_on_cpu(inputs, device)
    if why is not None:
        return "", f"the candidates (neighborhood engine: {why})"
    pos = _parts(inputs.index, NeighborhoodIndex)[0].pos
    device.filter_program(pos.dtype)  # built now: a build failure stops the run here
    return (f"seed + filter (neighborhood engine, {inputs.options.filter} filter)",
            "the dedupe (bulk verification of a repetitive read's candidates, merging each read's windows)")


def fm_on_cpu(inputs: EngineInputs, device: OpenClDevice) -> str | None:
    """Why the FM search stays on the CPU (None: it runs on the device): an index larger than the device holds,
    or SA samples of a type the kernels are not built for."""
    parts = _parts(inputs.index, FmIndex)
    if any(np.dtype(ix.fwd_ssa.dtype) not in SSA_TYPES for ix in parts):
        return f"SA samples of type {parts[0].fwd_ssa.dtype} are searched on the CPU"
    if not device.holds([a for ix in parts for a in ix.arrays().values()]):
        return "the index is larger than the OpenCL device holds, searching on the CPU"
    return None


def _fm_candidates(inputs: EngineInputs, device: OpenClDevice) -> Engine:
    if fm_on_cpu(inputs, device) is not None:
        return inputs.cpu
    ref, index = inputs.ref, inputs.index
    assert isinstance(index, FmIndex | SegmentedIndex)
    return fm_engine(index, ref, make=lambda part, starts: OpenClFmEngine(
        device, part, starts, bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask))  # the CPU engine's verifier


def _fm_steps(inputs: EngineInputs, device: OpenClDevice) -> tuple[str, str]:
    why = fm_on_cpu(inputs, device)
    if why is not None:
        return "", f"the candidates (fm engine: {why})"
    fm_program(device, _parts(inputs.index, FmIndex)[0].fwd_ssa.dtype)  # built now: a build failure stops the run here
    return ("the search scheme and the locates (fm engine)",
            "the dedupe (bulk verification of the candidates, merging each read's windows)")


def _kmer_candidates(inputs: EngineInputs, device: OpenClDevice) -> Engine:
    o, ref, index = inputs.options, inputs.ref, inputs.index
    assert isinstance(index, KmerIndex)
    return KmerEngine(index, ref.starts, adjacency=o.adjacency, packed=ref.packed, nmask=ref.nmask,
                      bulk=OpenClBulkVerifier(device, ref, o.gpu_verify))


def _kmer_steps(inputs: EngineInputs, device: OpenClDevice) -> tuple[str, str]:
    return (f"the bulk verification of the candidates (kmer engine, {kernel_of(device, inputs.options.gpu_verify)} "
            "kernel)",
            "the seeding and the merge of each read's windows (kmer engine)")


OPENCL_KINDS = {
    "neighborhood": OpenClKind(_neighborhood_candidates, _neighborhood_steps),
    "kmer": OpenClKind(_kmer_candidates, _kmer_steps),
    "fm": OpenClKind(_fm_candidates, _fm_steps),
}
