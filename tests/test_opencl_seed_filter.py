"""MAROSE seed + filter on an OpenCL device (PoCL's CPU device in CI: the opencl extra): seed_filter.cl's
merged candidate windows against the CPU twin (engines/neighborhood.py: the same rows in the same order) on
random and repetitive genomes, for the bs and ph filters, --fe, --windows, --step, windows shorter than the
seed, int64 positions, genome segments, bulk verification and query chunks; the locations found through it
against the brute-force oracle; and which engine the backend gives each option, with its one log line."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from helpers import (
    SEED_FILTER_CASES,
    assert_oracle,
    engine_locations,
    genome_and_reads,
    random_genome,
    repetitive_genome,
    sample_reads,
)

from seedmap.backends.base import EngineInputs
from seedmap.backends.opencl import device, program
from seedmap.backends.opencl.backend import OpenClBackend
from seedmap.backends.opencl.kinds import OPENCL_KINDS
from seedmap.backends.opencl.neighborhood import OpenClNeighborhoodEngine
from seedmap.engines import base
from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.engines.neighborhood_ph import PerfectHashEngine
from seedmap.engines.segmented import SegmentedEngine
from seedmap.index import neighborhood
from seedmap.index.segments import SegmentedIndex
from seedmap.io.reference import Reference
from seedmap.kinds import cpu_engine
from seedmap.pipeline import EngineOptions, errors_per_read
from seedmap.verify.bulk import bulk_distances

pytest.importorskip("pyopencl", reason="the opencl extra (pip install seedmap[opencl]) brings PyOpenCL and PoCL")



def queries(kind: str, seed: int, n: int, lengths: tuple[int, int], errors: float) -> tuple:
    ref, batch = genome_and_reads(kind, seed, n, lengths)
    qcodes, qoff = batch.queries()
    return ref, (qcodes, qoff, errors_per_read(batch.lengths, errors))


def assert_same_windows(got: tuple, want: tuple) -> None:
    assert want[0].size > 0
    assert all(g.dtype == w.dtype and np.array_equal(g, w) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("kind,u,l,plan,errors,lengths", SEED_FILTER_CASES)
def test_seed_filter_matches_cpu(opencl_device, kind, u, l, plan, errors, lengths):
    ref, args = queries(kind, 11, 30, lengths, errors)
    ix = neighborhood.build(ref, u, l)
    want = NeighborhoodEngine(ix, ref.starts, **plan).candidate_windows(*args)
    assert_same_windows(OpenClNeighborhoodEngine(opencl_device, ix, ref.starts, **plan).candidate_windows(*args), want)


@pytest.mark.parametrize("fe", [0, 1, 2])
def test_ph_filter_matches_cpu(opencl_device, fe):
    """Full-length patterns looked up in the perfect hashes on the device (short windows binary search): the
    CPU ph engine's windows, which are the bs engine's."""
    ref, args = queries("repetitive", 6, 30, (20, 60), 0.06)
    ix = neighborhood.build(ref, 5, 4)
    cpu = PerfectHashEngine(ix, ref.starts, fe=fe)
    want = cpu.candidate_windows(*args)
    assert_same_windows(NeighborhoodEngine(ix, ref.starts, fe=fe).candidate_windows(*args), want)
    assert_same_windows(OpenClNeighborhoodEngine(opencl_device, ix, ref.starts, fe=fe, ph=cpu.ph)
                        .candidate_windows(*args), want)


def test_int64_positions_bulk_verification_and_chunks(opencl_device, monkeypatch):
    """Positions stored as int64 (references of 4 Gbp and more: the other build of seed_filter.cl), the bulk
    verification of repetitive reads' candidates (every query's, with bulk_min 0), and query chunks under a
    small candidate cap: the CPU engine's windows each time."""
    ref, args = queries("repetitive", 5, 30, (20, 60), 0.06)
    ix = neighborhood.build(ref, 5, 3)
    ix.pos = ix.pos.astype(np.int64)
    verifier = dict(bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask)
    cpu = NeighborhoodEngine(ix, ref.starts, **verifier)
    gpu = OpenClNeighborhoodEngine(opencl_device, ix, ref.starts, **verifier)
    assert_same_windows(gpu.candidate_windows(*args), cpu.candidate_windows(*args))
    with cpu.bulk_verifying_all(), gpu.bulk_verifying_all():
        want = cpu.candidate_windows(*args)
        assert_same_windows(gpu.candidate_windows(*args), want)
    assert want[0].size < NeighborhoodEngine(ix, ref.starts).candidate_windows(*args)[0].size  # it dropped some
    monkeypatch.setattr(base, "CANDIDATE_CAP", 40)
    assert_same_windows(gpu.candidate_windows(*args), cpu.candidate_windows(*args))
    none = gpu.candidate_windows(args[0][:0], args[1][:1], args[2][:0])
    assert [x.size for x in none] == [0, 0]


@pytest.mark.parametrize("kind", ["random", "repetitive"])
def test_locations_match_the_oracle(opencl_device, kind):
    """Every location within e edits of every read (the e + 1 windows plan guarantees them all), found
    through the device's candidates, as the brute-force oracle has it."""
    rng = np.random.default_rng(3)
    seqs = repetitive_genome(rng) if kind == "repetitive" else [random_genome(rng, 2000), random_genome(rng, 300)]
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    reads = sample_reads(rng, seqs, 40, (20, 70), 3)
    engine = OpenClNeighborhoodEngine(opencl_device, neighborhood.build(ref, 6, 4), ref.starts)
    assert assert_oracle(engine_locations(engine, ref, reads, 0.06), ref, reads, 0.06) > 20


def inputs_for(ix: object, ref: Reference, **options: object) -> EngineInputs:
    opts = EngineOptions(**options)
    return EngineInputs("neighborhood", ix, ref, opts, cpu_engine("neighborhood", ix, ref, opts))


def test_genome_segments(opencl_device):
    """A segmented index: one device engine per part, their windows merged as the CPU's segmented engine does."""
    ref, args = queries("repetitive", 9, 30, (30, 80), 0.05)
    cuts = [0, 700, 1500, 2100, ref.total]
    parts = [neighborhood.build(ref, 6, 4, first=a, last=b) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    ix = SegmentedIndex(parts, cuts)
    inputs = inputs_for(ix, ref)
    engine = OPENCL_KINDS["neighborhood"].candidates(inputs, opencl_device)
    assert isinstance(engine, SegmentedEngine) and all(isinstance(p, OpenClNeighborhoodEngine) for p in engine.parts)
    assert_same_windows(engine.candidate_windows(*args), inputs.cpu.candidate_windows(*args))


@pytest.mark.parametrize("options,shape,why", [
    ({}, "", None),
    ({"filter": "ph", "fe": 1}, "", None),
    ({"filter": "bpr", "fe": 1}, "", "--filter bpr filters on the CPU"),
    ({}, "###-##", "spaced seeds (###-##) filter on the CPU"),
    ({"fe": 9}, "", "--fe 9: more substitutions than the OpenCL kernel enumerates"),
])
def test_which_steps_run_on_the_device(opencl_device, monkeypatch, caplog, options, shape, why):
    """The options the kernel takes filter on the device; the others (and an index the device cannot hold)
    keep the run's CPU engine, and the log line says which steps stay on the CPU, once."""
    rng = np.random.default_rng(1)
    seqs = [random_genome(rng, 3000)]
    ref = Reference.from_codes(["s"], seqs)
    inputs = inputs_for(neighborhood.build(ref, 5, 10, shape), ref, **options)
    backend = OpenClBackend(device.pick(None))
    monkeypatch.setattr(backend, "_device", lambda dev: opencl_device)
    with caplog.at_level(logging.INFO, logger="seedmap"):
        backend.prepare(inputs)
    line = caplog.text.strip()
    assert line.count("--device opencl:") == 1 and "and the traceback (CIGAR, MD) run on " in line
    engine = backend.engine_maker(0)(inputs).engine
    if why is None:
        assert isinstance(engine, OpenClNeighborhoodEngine)
        assert f"seed + filter (neighborhood engine, {options.get('filter', 'bs')} filter), the windows'" in line
        monkeypatch.setattr(program.OpenClDevice, "holds", lambda self, arrays: False)
        why = "the index is larger than the OpenCL device holds"
        engine = backend.engine_maker(0)(inputs).engine
    else:
        assert "seed + filter" not in line and why in line
    assert engine is inputs.cpu
    assert why in OPENCL_KINDS["neighborhood"].steps(inputs, opencl_device)[1]
