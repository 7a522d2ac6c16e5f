"""The FM index of a text too large to sort in one piece, built in blocks of whole sequences and merged:
byte for byte the one-piece index (fm_order.py: the suffix order that makes this exact), in a fraction of
its memory.

Per text (forward, then reverse): each block is sorted on its own (divsufsort, a 32-bit suffix array) and
kept on disk as its BWT, one byte per row (the symbol, | MARK where the row's SA value is sampled), and its
SA samples. Then the blocks are merged left to right into a run M (Holt and McMillan's BWT merge, as
ropebwt and grlBWT do): the rank in M of every suffix of the next block B comes from a backward walk over
B's text through M's occ table (a separator suffix of B ranks after M's separators, which lie before it;
then rank(cX) = C_M[c] + O_M(c, rank(X))), one walk per sequence, several walks interleaved per thread so
that their memory reads overlap. Sorted, those ranks say where each of B's rows falls among M's, and one
streaming pass interleaves the two runs. The last run's rows fill the tables (fm.Tables) in memory-mapped
files of the scratch directory.

Peak: the reference, one block's text and its suffix array (5 B/base of the block), or one block's text,
its ranks (4 B/base) and M's occ table (0.5 B/base of M); the runs stream through ROWS_PER_PASS rows at a
time. The text must stay below 2^32 symbols (32-bit ranks).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from numba import njit
from numpy.typing import DTypeLike

from seedmap.errors import SeedmapError
from seedmap.index import fm, segments
from seedmap.index.fm_occ import occ
from seedmap.io.reference import Reference

log = logging.getLogger("seedmap")

MAX_TEXT = 2**32 - 1  # ranks and rows are 32-bit in the merge
SORT_BYTES = 5.0  # per base of a block: its text and its 32-bit suffix array (or its text and its ranks)
MERGE_OCC_BYTES = fm.OCC_WORDS * 8 / 128  # per base of the run merged into: its occ table
CHAINS = 8  # walks interleaved per thread
STEPS = 1 << 20  # steps of each walk per kernel call (progress and interrupts between calls)
PROGRESS_SECONDS = 60.0

Block = tuple[Callable[[], np.ndarray], int]  # a function making a block's text, and the block's text offset


def block_bases(ref: Reference, r: int, max_memory: int) -> int:
    """Bases per block of a build within max_memory bytes (0: it does not fit even in blocks)."""
    n = ref.total + len(ref.names)
    fixed = segments.FIXED_BUILD_BYTES + ref.packed.nbytes + ref.nmask.nbytes
    final = n * (2 * MERGE_OCC_BYTES + 16 / 64 + fm.ssa_dtype(n).itemsize / r)  # what the store reads at the end
    if n > MAX_TEXT or fixed + final > max_memory:
        return 0
    return max(0, int((max_memory - fixed - MERGE_OCC_BYTES * n) / SORT_BYTES))


def block_bounds(ref: Reference, bases: int) -> list[int]:
    """Sequence indices cutting the reference into blocks of whole sequences of at most `bases` text symbols
    each, as equal as the sequences allow; SeedmapError when one sequence alone is larger."""
    sizes = np.diff(np.asarray(ref.starts, dtype=np.int64)) + 1
    if sizes.size and sizes.max() > bases:
        raise SeedmapError(f"sequence {ref.names[int(sizes.argmax())]} ({int(sizes.max()) - 1} bases) is too large "
                           f"to index within the memory limit (blocks of {bases} bases): raise --max-memory")
    parts = max(1, -(-int(sizes.sum()) // max(bases, 1)))
    target = sizes.sum() / parts
    bounds, size = [0], 0
    for s, m in enumerate(sizes):
        if size and (size + m > bases or size + m / 2 > target):
            bounds.append(s)
            size = 0
        size += m
    return bounds + [len(ref.names)]


@dataclass
class Run:
    """Rows of BWT symbols (| MARK) in a file, and the SA samples of the marked rows in another."""

    sym: Path
    ssa: Path
    rows: int
    marked: int


def build(ref: Reference, r: int, bounds: list[int], scratch: Path, threads: int = 0) -> fm.FmIndex:
    """The FM index of all of ref, its blocks the sequences bounds[i] .. bounds[i + 1]; its tables are
    memory-mapped files in scratch (which must outlive the index)."""
    fm.check_parameters(r)
    threads = threads or len(os.sched_getaffinity(0))
    starts = np.asarray(ref.starts, dtype=np.int64)
    text_starts = starts + np.arange(starts.size)
    n = int(text_starts[-1])
    if n > MAX_TEXT:
        raise SeedmapError(f"a text of {n} symbols is beyond the blockwise build (2^32)")
    k = len(bounds) - 1
    pairs = list(zip(bounds[:-1], bounds[1:], strict=True))
    fwd_blocks: list[Block] = [(partial(_text, ref, a, b), int(text_starts[a])) for a, b in pairs]
    rev_blocks: list[Block] = [(partial(_reversed_text, ref, a, b), 0) for a, b in reversed(pairs)]
    dtype = fm.ssa_dtype(n)
    fwd = _one_text(fwd_blocks, n, r, dtype, scratch, "forward", threads)
    rev = _one_text(rev_blocks, n, 0, dtype, scratch, "reverse", threads)
    counts = fwd.c_table()
    log.info("built the FM index in %d blocks of whole sequences", k)
    return fm.FmIndex(r, n, counts, text_starts.astype(np.int64), fwd.occ, fwd.mark, fwd.ssa, rev.occ)


def _text(ref: Reference, a: int, b: int) -> np.ndarray:
    """The text of sequences a .. b (a block's)."""
    return fm.make_text(ref, a, b)[0]


def _reversed_text(ref: Reference, a: int, b: int) -> np.ndarray:
    text = _text(ref, a, b)
    fm.reverse_body(text)
    return text


def _one_text(blocks: list[Block], n: int, r: int, dtype: np.dtype, scratch: Path, name: str,
              threads: int) -> fm.Tables:
    """The tables of one text from its blocks (a function making each block's text, and its offset)."""
    run: Run | None = None
    for b, (make, offset) in enumerate(blocks):
        text = make()
        t0 = time.perf_counter()
        block = _sorted_block(text, offset, r, dtype, scratch / f"{name}.block{b}",
                              f"{name} text: sorting block {b + 1} of {len(blocks)}")
        log.info("%s text: block %d of %d sorted (%d symbols, %.0f s)", name, b + 1, len(blocks), text.size,
                 time.perf_counter() - t0)
        if run is None:
            run = block
            continue
        t0 = time.perf_counter()
        ranks = _ranks_in_run(text, run, threads, f"{name} text: merging block {b + 1} of {len(blocks)}")
        del text
        ranks.sort()
        merged = _interleave(run, block, ranks, dtype, scratch / f"{name}.run{b}")
        del ranks
        for old in (run, block):
            old.sym.unlink()
            old.ssa.unlink()
        run = merged
        log.info("%s text: block %d of %d merged (%.0f s)", name, b + 1, len(blocks), time.perf_counter() - t0)
    assert run is not None and run.rows == n
    tables = fm.Tables.empty(n, r, run.marked, dtype, make=_memmaps(scratch / name))
    for _, sym in _passes(run.sym, np.uint8, n):
        tables.add(sym)
    for lo, part in _passes(run.ssa, dtype, run.marked):
        tables.ssa[lo:lo + part.size] = part
    tables.marked = run.marked
    for arr in (tables.occ, tables.mark, tables.ssa):
        if isinstance(arr, np.memmap):
            arr.flush()
    return _reopened(tables, scratch / name)


def _memmaps(stem: Path) -> fm.MakeArray:
    names = iter(("occ", "mark", "ssa"))

    def make(shape: tuple[int, ...], dtype: DTypeLike) -> np.ndarray:
        return np.lib.format.open_memmap(f"{stem}.{next(names)}.npy", mode="w+", dtype=dtype, shape=shape)
    return make


def _reopened(tables: fm.Tables, stem: Path) -> fm.Tables:
    """The tables read-only from their files (the written pages leave this process's resident set)."""
    occ_t, mark, ssa = (np.load(f"{stem}.{part}.npy", mmap_mode="r") for part in ("occ", "mark", "ssa"))
    return fm.Tables(tables.n, occ_t, mark, ssa, count=tables.count, filled=tables.filled, marked=tables.marked)


def _passes(path: Path, dtype: DTypeLike, count: int) -> Iterator[tuple[int, np.ndarray]]:
    """(first item, items) of a raw file of `count` items, ROWS_PER_PASS at a time."""
    size = np.dtype(dtype).itemsize
    with open(path, "rb") as fh:
        for lo in range(0, count, fm.ROWS_PER_PASS):
            part = np.fromfile(fh, dtype=dtype, count=min(fm.ROWS_PER_PASS, count - lo))
            if part.size != min(fm.ROWS_PER_PASS, count - lo):
                raise SeedmapError(f"{path}: short read in the index build ({lo * size} bytes in)")
            yield lo, part


def _sorted_block(text: np.ndarray, offset: int, r: int, dtype: np.dtype, stem: Path, stage: str) -> Run:
    """One block's run: its suffix array made (while a line a minute says the sort goes on) and turned into
    rows of BWT symbols and SA samples (+ offset, the block's text position), written to stem.sym/.ssa."""
    sa = _logging_while(lambda: fm.suffix_array(text), stage)
    run = Run(Path(f"{stem}.sym"), Path(f"{stem}.ssa"), text.size, 0)
    sym = np.empty(min(text.size, fm.ROWS_PER_PASS), dtype=np.uint8)
    ssa = np.empty(min(text.size, fm.ROWS_PER_PASS), dtype=dtype)
    with open(run.sym, "wb") as fs, open(run.ssa, "wb") as fa:
        for lo in range(0, text.size, fm.ROWS_PER_PASS):
            hi = min(text.size, lo + fm.ROWS_PER_PASS)
            m = fm.row_symbols(text, sa, lo, hi, offset, r, sym, ssa)
            sym[:hi - lo].tofile(fs)
            ssa[:m].tofile(fa)
            run.marked += m
    return run


def _logging_while(work: Callable[[], np.ndarray], stage: str) -> np.ndarray:
    """work() in a thread while this one logs the stage once a minute."""
    out: list = []
    worker = threading.Thread(target=lambda: out.append(_caught(work)), daemon=True)
    t0 = time.perf_counter()
    worker.start()
    while worker.is_alive():
        worker.join(PROGRESS_SECONDS)
        if worker.is_alive():
            log.info("%s (%.0f min)", stage, (time.perf_counter() - t0) / 60)
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


def _caught(work: Callable[[], object]) -> object:
    try:
        return work()
    except BaseException as e:  # re-raised in the calling thread
        return e


def _ranks_in_run(text: np.ndarray, run: Run, threads: int, stage: str) -> np.ndarray:
    """ranks[p]: how many of the run's suffixes are smaller than the text's suffix p (the text follows the run's
    in the whole text), by backward walks over each of its sequences through the run's occ table."""
    tables = fm.Tables.empty(run.rows, 0, 0, np.int64)
    for _, sym in _passes(run.sym, np.uint8, run.rows):
        tables.add(sym)
    counts = tables.c_table()
    ends = np.flatnonzero(text == 0)
    starts = np.concatenate([[0], ends[:-1] + 1])
    ranks = np.empty(text.size, dtype=np.uint32)
    work: queue.Queue = queue.Queue()
    for s in np.argsort(starts - ends, kind="stable"):  # the longest first
        work.put((int(starts[s]), int(ends[s])))
    done = [0]
    lock = threading.Lock()

    def walker() -> None:
        pos = np.zeros(CHAINS, dtype=np.int64)
        stop = np.zeros(CHAINS, dtype=np.int64)
        rank = np.zeros(CHAINS, dtype=np.int64)
        while True:
            for j in range(CHAINS):
                if pos[j] <= stop[j]:
                    try:
                        a, e = work.get_nowait()
                    except queue.Empty:
                        continue
                    pos[j], stop[j], rank[j] = e, a, counts[0]  # a separator ranks after the run's separators
                    ranks[e] = counts[0]
            if not (pos > stop).any():
                return
            steps = _walk(text, pos, stop, rank, tables.occ, counts, ranks, STEPS)
            with lock:
                done[0] += steps

    pool = [threading.Thread(target=walker, daemon=True) for _ in range(threads)]
    for t in pool:
        t.start()
    t0 = last = time.perf_counter()
    for t in pool:
        while t.is_alive():
            t.join(1.0)
            if time.perf_counter() - last > PROGRESS_SECONDS:
                last = time.perf_counter()
                log.info("%s: %.0f %% (%.0f min)", stage, 100 * done[0] / max(text.size, 1), (last - t0) / 60)
    return ranks


@njit(cache=True, nogil=True)
def _walk(text: np.ndarray, pos: np.ndarray, stop: np.ndarray, rank: np.ndarray, occ_tab: np.ndarray,
          counts: np.ndarray, ranks: np.ndarray, steps: int) -> int:
    """Each walk j (pos[j] > stop[j]) takes up to `steps` steps back towards stop[j]: the rank of the suffix
    at pos[j] - 1 from the rank of the one at pos[j]. The walks interleave, so their occ reads overlap.
    Returns the steps taken."""
    taken = 0
    for _ in range(steps):
        active = False
        for j in range(pos.size):
            p = pos[j] - 1
            if p >= stop[j]:
                c = np.int64(text[p]) - 1
                rank[j] = counts[c] + occ(occ_tab, c, rank[j])
                ranks[p] = rank[j]
                pos[j] = p
                taken += 1
                active = True
        if not active:
            break
    return taken


def _interleave(m: Run, b: Run, ranks: np.ndarray, dtype: np.dtype, stem: Path) -> Run:
    """The run of M's rows and B's, B's row j placed after ranks[j] of M's rows (ranks sorted)."""
    out = Run(Path(f"{stem}.sym"), Path(f"{stem}.ssa"), m.rows + b.rows, m.marked + b.marked)
    rows = out.rows
    km = jb = 0  # rows of M and of B written
    with open(m.sym, "rb") as msym, open(m.ssa, "rb") as mssa, open(b.sym, "rb") as bsym, open(b.ssa, "rb") as bssa, \
            open(out.sym, "wb") as osym, open(out.ssa, "wb") as ossa:
        for x0 in range(0, rows, fm.ROWS_PER_PASS):
            x1 = min(rows, x0 + fm.ROWS_PER_PASS)
            j1 = _rows_before(ranks, x1)
            mb, mm = j1 - jb, (x1 - x0) - (j1 - jb)
            sym_m, sym_b = np.fromfile(msym, np.uint8, mm), np.fromfile(bsym, np.uint8, mb)
            ssa_m = np.fromfile(mssa, dtype, int(np.count_nonzero(sym_m & fm.MARK)))
            ssa_b = np.fromfile(bssa, dtype, int(np.count_nonzero(sym_b & fm.MARK)))
            sym = np.empty(x1 - x0, dtype=np.uint8)
            ssa = np.empty(ssa_m.size + ssa_b.size, dtype=dtype)
            _merge_rows(ranks[jb:j1], jb, x0, sym_m, sym_b, ssa_m, ssa_b, sym, ssa)
            sym.tofile(osym)
            ssa.tofile(ossa)
            km += mm
            jb = j1
    assert km == m.rows and jb == b.rows
    return out


@njit(cache=True, nogil=True)
def _rows_before(ranks: np.ndarray, x: int) -> int:
    """B's rows that land before merged row x: the j with ranks[j] + j < x (increasing in j)."""
    lo, hi = 0, ranks.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if np.int64(ranks[mid]) + mid < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _merge_rows(ranks: np.ndarray, j0: int, x0: int, sym_m: np.ndarray, sym_b: np.ndarray, ssa_m: np.ndarray,
                ssa_b: np.ndarray, sym: np.ndarray, ssa: np.ndarray) -> None:
    """Merged rows x0 .. x0 + sym.size: B's row j0 + t where ranks[t] + j0 + t is the row, M's next otherwise;
    the SA samples follow their rows."""
    t = km = mm = mb = o = 0
    for x in range(x0, x0 + sym.size):
        if t < ranks.size and np.int64(ranks[t]) + j0 + t == x:
            c = sym_b[t]
            t += 1
            if c & fm.MARK:
                ssa[o] = ssa_b[mb]
                mb += 1
                o += 1
        else:
            c = sym_m[km]
            km += 1
            if c & fm.MARK:
                ssa[o] = ssa_m[mm]
                mm += 1
                o += 1
        sym[x - x0] = c
