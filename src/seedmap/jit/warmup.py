"""Compile (or load from numba's cache) every kernel a run needs before its clock starts.

A few reads cut from the reference itself (and one from nowhere, and a pair whose second mate must be
rescued) go through the same stages as the real batches, so the reads/s figure never counts compilation.
The first time, numba compiles for tens of seconds (in worker processes, precompile.py): a marker in
numba's cache directory tells whether this version of the code has been compiled here before, so the wait
is announced only when it happens. `seedmap index` runs the warm-up of a single-end run too, where a user
expects to wait.
"""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import dnaio
import numpy as np

from seedmap.io.alphabet import DECODE
from seedmap.io.chunks import RawBatch, record_starts
from seedmap.io.plain_fastq import fastq_blocks
from seedmap.io.reads import ReadBatch
from seedmap.io.reference import Reference, unpack_codes
from seedmap.jit.precompile import CompileClock, compile_listed, serialized_cache_saves, variant
from seedmap.jit.quick_load import cached_kernels_load_quickly

log = logging.getLogger("seedmap")

READ_LENGTH = 100
FRAGMENT = 300


def _text(codes: np.ndarray) -> str:
    return DECODE[codes].tobytes().decode()


def _revcomp(codes: np.ndarray) -> np.ndarray:
    out = np.where(codes < 4, 3 - codes, 4).astype(np.uint8)
    return out[::-1].copy()


def _read_length(ref: Reference) -> int:
    """The warm-up's read length: half the longest sequence, at most READ_LENGTH."""
    return min(READ_LENGTH, int(ref.lengths.max()) // 2) if len(ref.lengths) else 0


def warmup_batch(ref: Reference, paired: bool) -> ReadBatch | None:
    """Reads from the longest sequence (pairs when paired: mate 2 reverse-complemented FRAGMENT bases on,
    and a last pair whose mate 2 is random), None if the reference is too short to cut reads from."""
    longest = int(np.argmax(ref.lengths))
    n = int(ref.lengths[longest])
    m = _read_length(ref)
    if m < 20:
        return None
    start = int(ref.starts[longest])
    rng = np.random.default_rng(1)
    records = []
    for k in range(4):
        a = start + int(rng.integers(0, n - m + 1))
        r1 = unpack_codes(ref.packed, ref.nmask, a, a + m)
        r1[m // 2] = (r1[m // 2] + 1) % 4  # one substitution: alignments with a mismatch
        if not paired:
            records.append(dnaio.SequenceRecord(f"w{k}", _text(r1), "I" * m))
            continue
        b = min(a + FRAGMENT - m, start + n - m) if k < 3 else -1
        r2 = (_revcomp(unpack_codes(ref.packed, ref.nmask, b, b + m)) if b >= 0
              else rng.integers(0, 4, m).astype(np.uint8))
        records += [dnaio.SequenceRecord(f"w{k}", _text(r1), "I" * m),
                    dnaio.SequenceRecord(f"w{k}", _text(r2), "I" * m)]
    if not paired:
        records.append(dnaio.SequenceRecord("w4", _text(rng.integers(0, 4, m).astype(np.uint8)), "I" * m))
    mates = (records[0::2], records[1::2]) if paired else (records,)  # cut and parsed as a run's input
    blocks = tuple(b"".join(r.fastq_bytes() for r in x) for x in mates)
    record_starts(blocks[0], fastq=True)  # the reader thread's kernels: any input, and plain FASTQ
    list(fastq_blocks(io.BytesIO(blocks[0]), 3))  # 4 or 5 records: a last block that is counted
    return RawBatch(0, blocks, ("<warm-up>",), paired).parse()


def _marker(kind: str, name: str) -> Path | None:
    """Where to note that the kernels of this kind of run (a precompile.variant key) were compiled: numba's
    cache directory, which seedmap keys by its own sources (seedmap/jit/cache.py), so an edit or upgrade
    compiles anew. None without a cache."""
    from seedmap import jit

    if jit.KERNEL_CACHE is None:
        return None
    return Path(jit.KERNEL_CACHE) / f"seedmap-compiled-{kind}{name[2:] if name.startswith('se') else '-' + name}"


_warned = threading.Event()


def compile_early(kind: str, name: str = "se") -> Callable[[], None]:
    """Start compiling the listed kernels of this kind of run (`name`: a precompile.VARIANTS key) in worker
    processes, from a thread, if the cache lacks them; returns the function that waits for it. `seedmap index`
    builds the index meanwhile: a first index of the example spent 2-3 s building it with a core idle."""
    marker = _marker(kind, name)
    if marker is None or marker.exists():
        return lambda: None
    log.info("compiling the %s mapping kernels while the index is built (once per installation; later runs load "
             "them from the cache)", kind)
    worker = threading.Thread(target=compile_listed, args=(kind, name), daemon=True, name="seedmap-compile")
    worker.start()
    return worker.join


def warm_up(ref: Reference, paired: bool, kind: str, run: Callable[[ReadBatch], object], stratified: bool = False,
            bam: bool = False, processes: bool = True, announced: bool = False) -> None:
    """Run `run` (a run's `warm`: one batch through every kernel the run may call) on reads cut from the
    reference. stratified (--best/-n, single-end) and bam say which kernels `run` uses. The first time, the
    listed kernels of this kind of run compile in worker processes first (precompile.py; not if `processes`
    is false, nor if compile_early did: `announced`), and the log says what compiles and for how long."""
    from seedmap import jit

    if jit.CACHE_WARNING and not _warned.is_set():
        _warned.set()
        log.warning(jit.CACHE_WARNING)
    if _read_length(ref) < 20:  # no reads to cut: nothing to compile either
        return
    name = variant(paired, stratified, bam, stored=not ref.packed.flags.writeable)
    marker = _marker(kind, name)
    cold = marker is None or not marker.exists()
    with cached_kernels_load_quickly(), serialized_cache_saves():
        parallel = 0
        if cold and not announced:
            log.info("compiling the %s%s mapping kernels%s%s (once per installation; later runs load them from "
                     "the cache)", kind, " paired-end" if paired else "", " for --best/-n" if stratified and not
                     paired else "", " with BAM output" if bam else "")
            if marker is not None and processes:
                parallel = compile_listed(kind, name)
        batch = warmup_batch(ref, paired)
        assert batch is not None  # (a reference long enough to cut reads from: checked above)
        with CompileClock() as clock:
            run(batch)
        if cold and clock.kernels:
            clock.report(more=parallel > 0)
    if marker is not None:
        try:
            marker.touch()
        except OSError:  # a cache gone read-only: the notice shows again next time, nothing else changes
            pass
