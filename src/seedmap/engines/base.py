"""What every engine shares: count candidates, then fill them in query chunks under a candidate cap,
then merge each query's overlapping windows (the dedupe stage); then verify the windows and align the
locations found, on the CPU (a device's engine, backends.base.DeviceEngine, does both with its backend's twins).
Engine is the interface the pipeline maps with; CandidateEngine the base class of the CPU engines."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

import numpy as np
from numba import njit

from seedmap.filter import plan
from seedmap.filter.windows import merge_windows
from seedmap.verify.align import Traceback, align
from seedmap.verify.windows import verify

# Raw candidates materialised at once (24 bytes each, and 40 more while verified in bulk); more are processed in
# query chunks. 250 Mbp human-like genome, fm engine, -t 2: 8 M peaked at 0.90 GB, 1 M at 0.83 GB, same time; with
# the fm search's smaller walk budget (more raw candidates) 1 M peaked at 0.93 GB, 250 k at 0.90 GB, same time.
CANDIDATE_CAP = 250_000
DEVICE_CANDIDATE_CAP = 8_000_000  # a GPU's chunk: fewer, larger launches


# Bulk verification takes a read's candidates whose windows start at most CLUSTER_GAP apart as one window (their
# union: seeds of one location on neighbouring diagonals, indels placed differently), up to CLUSTER_SPREAD columns
# wider than one seed's (a one-word band still fits up to 62 - 4e). 250 Mbp human-like genome, fm engine, e = 5,
# 20,000 reads, one thread: 7.6 M windows verified in 2.04 s -> 4.5 M in 1.45 s (gap 1, spread 20: 4.7 M, 1.51 s).
CLUSTER_GAP = 2
CLUSTER_SPREAD = 30


@njit(cache=True, nogil=True)
def _bulk_clusters(first: int, last: int, cand_off: np.ndarray, cand_len: np.ndarray, bulk_min: int,
                   qoff: np.ndarray, qerr: np.ndarray, win_s: np.ndarray, win_e: np.ndarray,
                   win_d: np.ndarray) -> tuple:
    """The windows to verify in bulk: those of queries [first, last) with more than bulk_min candidates (the
    others keep all theirs), clustered. A query's windows are sorted by start; a window joins the cluster
    before it when it starts at most CLUSTER_GAP after the previous one and inside the cluster (so the union is
    one interval of one sequence, which merge_windows would join too) and the union stays within
    CLUSTER_SPREAD columns of one seed's window (a one-word band where one fits). Seeds of one location
    mostly give the same window: a copy of the window before it is dropped. Returns the cluster of each of
    the chunk's candidates (-1: not verified in bulk, or such a copy), and the clusters' queries, starts
    and ends. Every alignment within e in a cluster lies in the window of one of its candidates (the
    search is complete), so a cluster passes exactly when one of its windows would, and keeping all its
    windows only adds columns to a merged window that holds no other alignment."""
    base = cand_off[first]
    total = 0
    for qi in range(first, last):
        if cand_len[qi] > bulk_min:
            total += cand_len[qi]
    member = np.full(win_s.size, -1, dtype=np.int64)
    cl_q = np.empty(total, dtype=np.int64)
    cl_s = np.empty(total, dtype=np.int64)
    cl_e = np.empty(total, dtype=np.int64)
    n = 0
    for qi in range(first, last):
        if cand_len[qi] <= bulk_min:
            continue
        e = qerr[qi >> 1]
        widest = qoff[qi + 1] - qoff[qi] + 2 * e + max(min(CLUSTER_SPREAD, 62 - 4 * e), 0)
        lo = cand_off[qi] - base
        prev = -1
        for k in range(lo, lo + cand_len[qi]):
            if prev >= 0 and win_d[k] == win_d[prev] and win_s[k] == win_s[prev] and win_e[k] == win_e[prev]:
                continue  # a copy: dropped
            if (prev < 0 or win_s[k] - win_s[prev] > CLUSTER_GAP or win_s[k] >= cl_e[n - 1]
                    or max(cl_e[n - 1], win_e[k]) - cl_s[n - 1] > widest):
                cl_q[n] = qi
                cl_s[n] = win_s[k]
                cl_e[n] = win_e[k]
                n += 1
            else:
                cl_e[n - 1] = max(cl_e[n - 1], win_e[k])
            member[k] = n - 1
            prev = k
    return member, cl_q[:n], cl_s[:n], cl_e[:n]


@njit(cache=True, nogil=True)
def _passed(first: int, last: int, cand_off: np.ndarray, cand_len: np.ndarray, bulk_min: int, member: np.ndarray,
            ok_cluster: np.ndarray) -> np.ndarray:
    """Which of the chunk's candidates stay: every one of a query not verified in bulk, else those whose
    cluster passed."""
    base = cand_off[first]
    ok = np.ones(member.size, dtype=np.bool_)
    for qi in range(first, last):
        if cand_len[qi] <= bulk_min:
            continue
        lo = cand_off[qi] - base
        for k in range(lo, lo + cand_len[qi]):
            ok[k] = member[k] >= 0 and ok_cluster[member[k]]
    return ok


@njit(cache=True, nogil=True, _nrt=False)
def _keep_verified(first: int, last: int, cand_off: np.ndarray, cand_len: np.ndarray, ok: np.ndarray,
                   win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray) -> None:
    """Move each query's candidates that passed bulk verification to the front of its segment, in order."""
    base = cand_off[first]
    for qi in range(first, last):  # (one pass over memory: not worth threads)
        lo = cand_off[qi] - base
        n = 0
        for k in range(lo, lo + cand_len[qi]):
            if ok[k]:
                win_s[lo + n] = win_s[k]
                win_e[lo + n] = win_e[k]
                win_d[lo + n] = win_d[k]
                n += 1
        cand_len[qi] = n


class QueryMemo:
    """What engines learn of one batch's queries that holds at every e, kept across the strata rounds of that
    batch (pipeline/strata.py searches a read at e = 0, 1, 2, ...; the FM engine keeps its D arrays here, the
    neighborhood engine its window lookups).
    qoff: the batch's query offsets; ids: the batch's number of each query of the current call. Each engine
    keeps its own slots (a segmented index's parts differ)."""

    def __init__(self, qoff: np.ndarray) -> None:
        self.qoff = np.asarray(qoff, dtype=np.int64)
        self.ids = np.arange(self.qoff.size - 1, dtype=np.int64)
        self._slots: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._tables: dict[int, np.ndarray] = {}

    def slots(self, owner: object, size: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """owner's (where each batch query's slot starts, then the end; the int8 slots, zeroed: size(m) for
        a query of length m), made on first use."""
        key = id(owner)
        if key not in self._slots:
            at = np.zeros(self.qoff.size, dtype=np.int64)
            np.cumsum(size(np.diff(self.qoff)), out=at[1:])
            self._slots[key] = (at, np.zeros(int(at[-1]), dtype=np.int8))
        return self._slots[key]

    def table(self, owner: object, columns: int) -> np.ndarray:
        """owner's int64 table of `columns` values per batch query (rows by batch query number), zeroed, made on
        first use."""
        key = id(owner)
        if key not in self._tables:
            self._tables[key] = np.zeros((self.qoff.size - 1, columns), dtype=np.int64)
        return self._tables[key]


class Engine(Protocol):
    """What the pipeline maps with (pipeline/stages.py, strata.py, pair_stages.py): the three
    stages of a batch, each with the same arguments and results on every engine and device.

    candidate_windows: the contract in engines/__init__.py; memo, where given, keeps what an engine may
    reuse when the batch's queries are searched again with another e (QueryMemo). verify_windows: the
    locations in those windows, (query, start, end, distance) ordered by query then start
    (verify/windows.verify). align_locations:
    their CIGAR and MD (verify/align.align). spans_alone: which reference spans of unique best locations the
    engine's index proves alone (filter/fm_alone.py; an engine without one proves none, which costs only speed).
    max_window and guarantee: what the window plans promise
    (pipeline/guarantee.py); bulk_verifying_all: the warm-up's switch (CandidateEngine.bulk_verifying_all).
    round0_min: the share of a sample of reads that an exact search (round 0 of pipeline/strata.py) must
    settle before --best runs it on the rest of a batch; the cost of an e = 0 search against an e = 1 one.
    """

    max_window: int
    round0_min: float

    def guarantee(self, m: int, e: int) -> str: ...

    def bulk_verifying_all(self) -> AbstractContextManager[None]: ...

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
                          memo: QueryMemo | None = None) -> tuple[np.ndarray, np.ndarray]: ...

    def verify_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray,
                       win: np.ndarray, packed: np.ndarray, nmask: np.ndarray) -> tuple[np.ndarray, ...]: ...

    def align_locations(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray,
                        loc_s: np.ndarray, loc_e: np.ndarray, loc_d: np.ndarray, packed: np.ndarray,
                        nmask: np.ndarray, seq_starts: np.ndarray) -> Traceback: ...

    def spans_alone(self, packed: np.ndarray, nmask: np.ndarray, seq_starts: np.ndarray, start: np.ndarray,
                    end: np.ndarray, parts: np.ndarray) -> np.ndarray: ...


class CandidateEngine:
    """Subclasses implement _count (candidates per query, plus state handed to _fill) and _fill.

    With `bulk` set (a device's bulk verifier, seedmap.verify.bulk.bulk_distances or its GPU twin),
    every candidate's own window [diag - e, diag + m + e) is verified before merging (with its neighbours:
    _bulk_clusters) and the ones with no alignment within e are dropped: safe, since every such alignment
    lies in the window of its exact seed.
    Only queries with more than `bulk_min` raw candidates are verified so (a filtering engine's few
    candidates of a unique read are cheaper to verify once merged).
    """

    max_window: int
    bulk_min = 0
    # A seed engine's e = 0 search costs about two thirds of its e = 1 one (one window, the index's longest,
    # against two): ragout16 (16 related bacterial genomes), 200,000 reads, -t 1, candidates + verification
    # per read 1.19 / 1.74 us (neighborhood), 3.71 / 5.56 us (kmer). Round 0 there settles half the reads,
    # and running it cost 1.06x (neighborhood) and 1.08x (kmer) the --best wall time.
    round0_min = 0.7

    def guarantee(self, m: int, e: int) -> str:
        """What the engine guarantees for reads of length m > e with up to e edits: the k-mer and FM
        engines are always fully sensitive; window plans override this."""
        return plan.FULL

    def __init__(self, ref_starts: np.ndarray, bulk: Callable[..., np.ndarray] | None = None,
                 packed: np.ndarray | None = None, nmask: np.ndarray | None = None) -> None:
        self.ref_starts = np.ascontiguousarray(ref_starts, dtype=np.int64)
        self.bulk = bulk
        self.packed = packed
        self.nmask = nmask

    @contextmanager
    def bulk_verifying_all(self) -> Iterator[None]:
        """Within the block every query's candidates are verified in bulk, however few: the warm-up's reads
        are unique, and this loads the kernels a run's repetitive reads take. The bulk verification only
        drops candidates with no alignment within e, so the hits are the same either way."""
        saved = self.bulk_min
        self.bulk_min = 0
        try:
            yield
        finally:
            self.bulk_min = saved

    def spans_alone(self, packed: np.ndarray, nmask: np.ndarray, seq_starts: np.ndarray, start: np.ndarray,
                    end: np.ndarray, parts: np.ndarray) -> np.ndarray:
        """None proved (an engine with an FM index proves them: FmEngine)."""
        return np.zeros(start.size, dtype=np.bool_)

    def verify_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray,
                       win: np.ndarray, packed: np.ndarray, nmask: np.ndarray) -> tuple[np.ndarray, ...]:
        """The locations in the windows, verified on the CPU (verify/windows.py)."""
        return verify(qcodes, qoff, qerr, win_q, win, packed, nmask)

    def align_locations(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray,
                        loc_s: np.ndarray, loc_e: np.ndarray, loc_d: np.ndarray, packed: np.ndarray,
                        nmask: np.ndarray, seq_starts: np.ndarray) -> Traceback:
        """The locations' CIGAR and MD, aligned on the CPU (verify/align.py)."""
        return align(qcodes, qoff, qerr, loc_q, loc_s, loc_e, loc_d, packed, nmask, seq_starts)

    def _count(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
               memo: QueryMemo | None = None) -> tuple[np.ndarray, tuple]:
        raise NotImplementedError

    def _fill(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
              cand_off: np.ndarray, state: tuple, win_s: np.ndarray, win_e: np.ndarray, win_d: np.ndarray,
              cand_len: np.ndarray) -> None:
        raise NotImplementedError

    def _bulk_filter(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, first: int, last: int,
                     cand_off: np.ndarray, cand_len: np.ndarray, win_s: np.ndarray, win_e: np.ndarray,
                     win_d: np.ndarray) -> None:
        member, cl_q, cl_s, cl_e = _bulk_clusters(first, last, cand_off, cand_len, self.bulk_min, qoff, qerr, win_s,
                                                  win_e, win_d)
        if not cl_q.size:
            return
        assert self.bulk is not None  # (candidate_windows calls this only with a bulk verifier)
        dist = self.bulk(qcodes, qoff, qerr, cl_q, cl_s, cl_e, self.packed, self.nmask)
        ok = _passed(first, last, cand_off, cand_len, self.bulk_min, member, dist <= qerr[cl_q >> 1])
        _keep_verified(first, last, cand_off, cand_len, ok, win_s, win_e, win_d)

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
                          memo: QueryMemo | None = None) -> tuple[np.ndarray, np.ndarray]:
        counts, state = self._count(qcodes, qoff, qerr, memo)
        cand_off = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=cand_off[1:])
        cand_len = counts.copy()

        def chunk(first: int, last: int) -> tuple[np.ndarray, np.ndarray]:
            size = int(cand_off[last] - cand_off[first])
            win_s = np.empty(size, dtype=np.int64)
            win_e = np.empty(size, dtype=np.int64)
            win_d = np.empty(size, dtype=np.int64)
            self._fill(qcodes, qoff, qerr, first, last, cand_off, state, win_s, win_e, win_d, cand_len)
            if self.bulk is not None and size:
                self._bulk_filter(qcodes, qoff, qerr, first, last, cand_off, cand_len, win_s, win_e, win_d)
            return merge_windows(first, last, cand_off, cand_len, win_s, win_e, win_d)

        return in_chunks(cand_off, CANDIDATE_CAP, chunk)


def no_windows() -> tuple[np.ndarray, np.ndarray]:
    """No merged windows: (queries, rows) both empty."""
    return np.zeros(0, dtype=np.int64), np.zeros((0, 4), dtype=np.int64)


def in_chunks(cand_off: np.ndarray, cap: int,
              chunk: Callable[[int, int], tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """chunk(first, last)'s merged windows over query ranges whose raw candidates (cand_off: per query,
    scanned) fit `cap` (a query with more is a range of its own), concatenated in query order."""
    nq = cand_off.size - 1
    parts = []
    first = 0
    while first < nq:
        last = int(np.searchsorted(cand_off, cand_off[first] + cap, side="right")) - 1
        last = min(max(last, first + 1), nq)
        parts.append(chunk(first, last))
        first = last
    if not parts:
        return no_windows()
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
