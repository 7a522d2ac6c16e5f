"""seedmap's Python API, in the style of mappy and pysam (docs/api.md):

    ix = seedmap.Index("ref.fa")              # the stored index next to the FASTA, else one built in memory
    ix.map("ACGT...")                         # one read: a list of Hit
    ix.map_many("reads.fq.gz")                # many: a Mapped, columns of numpy arrays (.to_pandas())
    ix.map_pairs("r1.fq.gz", "r2.fq.gz")      # pairs
    ix.write("reads.fq.gz", "out.bam")        # SAM, BAM or CRAM, as `seedmap map` writes it

Every call maps its reads as `seedmap map` does: batches through the same stages (pipeline/stages.py
`map_batch`, pipeline/pair_stages.py `map_pair_batch`), on the same worker threads (pipeline/scheduler.py), after
the same warm-up; the columns are the records those stages make (io/record_columns.py), not SAM text parsed back.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from seedmap import jit

if TYPE_CHECKING:  # (seedmap's modules load on the first call: `import seedmap` stays light)
    from seedmap.verify.align import Traceback

# Reads: a FASTA/FASTQ path (plain or gz), or a sequence of reads, each a str (its name: its number) or a
# (name, sequence) or (name, sequence, qualities) tuple.
Reads = str | os.PathLike | Sequence[str] | Sequence[tuple]

DEFAULT_ERRORS = 0.05  # `seedmap map -e`'s default: a rate of each read's length


@dataclass(frozen=True)
class Hit:
    """One location of a read (a SAM record with a location): the sequence's name, the 0-based leftmost
    position and the end (exclusive) on it, the strand (+1 forward, -1 reverse), CIGAR, NM (edit distance), MD,
    MAPQ, and whether the record is the read's primary one; `flag`: the SAM FLAG."""

    contig: str
    pos: int
    end: int
    strand: int
    cigar: str
    nm: int
    md: str
    mapq: int
    primary: bool
    flag: int


@dataclass
class Mapped:
    """The records of a mapping run as columns, one row per SAM record in the order `seedmap map` writes
    them (each read's records together, its primary first; a read without a location has one unmapped row).

    read: the read's number in the input (pairs: 2i and 2i + 1 are pair i's mates); name; flag (SAM FLAG);
    ref_id (into ref_names) and pos (0-based), -1 without a location; strand (+1, -1; 0 without a location);
    mapq; cigar ('*' without a location); nm (edits, -1 without a location); md ('' without a location);
    nh (the read's records: SAM's NH tag); primary (a located record that is neither secondary nor
    supplementary); mate_ref_id, mate_pos (SAM's RNEXT and PNEXT, -1 where SAM writes '*') and tlen (pairs)."""

    read: np.ndarray
    name: np.ndarray
    flag: np.ndarray
    ref_id: np.ndarray
    pos: np.ndarray
    strand: np.ndarray
    mapq: np.ndarray
    cigar: np.ndarray
    nm: np.ndarray
    md: np.ndarray
    nh: np.ndarray
    primary: np.ndarray
    mate_ref_id: np.ndarray
    mate_pos: np.ndarray
    tlen: np.ndarray
    ref_names: tuple[str, ...]

    def __len__(self) -> int:
        return int(self.read.size)

    @property
    def contig(self) -> np.ndarray:
        """Each record's sequence name ('*' without a location)."""
        return np.append(np.array(self.ref_names, dtype=np.str_), "*")[self.ref_id]

    @property
    def mapped(self) -> np.ndarray:
        """Whether each record has a location."""
        return self.ref_id >= 0

    def columns(self) -> dict[str, np.ndarray]:
        """The columns by name, `contig` included (ref_names left out)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "ref_names"}
        out["contig"] = self.contig
        return out

    def to_pandas(self) -> Any:
        """The columns as a pandas DataFrame (pandas must be installed)."""
        import pandas as pd

        return pd.DataFrame(self.columns())

    def hits(self) -> list[Hit]:
        """The located records as Hit objects (one Python object each: for a few reads, not millions)."""
        contig = self.contig
        ends = self.pos + _reference_lengths(self.cigar)
        return [Hit(str(contig[k]), int(self.pos[k]), int(ends[k]), int(self.strand[k]), str(self.cigar[k]),
                    int(self.nm[k]), str(self.md[k]), int(self.mapq[k]), bool(self.primary[k]), int(self.flag[k]))
                for k in np.flatnonzero(self.mapped).tolist()]


@dataclass(frozen=True)
class Counts:
    """What Index.write mapped and wrote: reads (mates counted one by one), those mapped, SAM records, reads too
    short to search; of pairs, the pairs, those placed as proper pairs, and mates found by rescue (0 unpaired)."""

    reads: int = 0
    mapped: int = 0
    records: int = 0
    short: int = 0
    pairs: int = 0
    proper: int = 0
    rescued: int = 0


def _reference_lengths(cigar: np.ndarray) -> np.ndarray:
    """Reference bases each CIGAR spans (M and D), 0 for '*'."""
    out = np.zeros(cigar.size, dtype=np.int64)
    for k, text in enumerate(cigar.tolist()):  # (Hit objects only: a few reads)
        n = 0
        for ch in text:
            if ch.isdigit():
                n = 10 * n + int(ch)
            else:
                if ch in "MD=X":
                    out[k] += n
                n = 0
    return out


class Index:
    """A reference and its index, ready to map reads.

    `reference`: the FASTA. Its stored index (`seedmap index`: REFERENCE.smi, .fm.smi or .kmer.smi) is
    memory-mapped when there is one, else one is built in memory (`build=True`: built and stored next to the
    FASTA first, as `seedmap index` would). `index`: a stored index elsewhere. `kind`: neighborhood, fm or kmer
    (default: as `seedmap map` chooses). `e`, `best`, `max_hits`, `threads`: the calls' defaults, as
    `seedmap map -e/--best/-n/-t` (e: edits when >= 1, else a rate of each read's length)."""

    def __init__(self, reference: str | os.PathLike, *, index: str | os.PathLike | None = None,
                 kind: str | None = None, e: float = DEFAULT_ERRORS, best: bool = False, max_hits: int = 0,
                 threads: int = 1, build: bool = False) -> None:
        jit.activate()  # before the first kernel module imports (seedmap/jit)
        from seedmap.index import store
        from seedmap.index.default_kind import map_kind
        from seedmap.kinds import build_index
        from seedmap.options import EngineOptions
        from seedmap.pipeline.single import load_engine

        self.reference = str(reference)
        index = str(index) if index is not None else None
        self.kind = kind or map_kind(self.reference, index)
        if build and index is None and not store.default_path(self.reference, self.kind).exists():
            build_index(self.reference, None, self.kind)
        self.e, self.best, self.max_hits, self.threads = e, best, max_hits, threads
        self._index = index
        self._engine_options = EngineOptions(kind=self.kind)
        self._loaded = load_engine(self._options(e, best, max_hits, threads))
        self._warmed: set[tuple] = set()
        self._lock = threading.Lock()  # one run at a time: each uses every thread it is given

    @property
    def ref_names(self) -> tuple[str, ...]:
        """The reference's sequence names."""
        return tuple(self._loaded[0].names)

    def _options(self, e: float | None, best: bool | None, max_hits: int | None, threads: int | None,
                 reads2: bool = False, output: str | None = None) -> Any:
        from seedmap.options import MapOptions
        from seedmap.pipeline.inputs import check_error_rate
        from seedmap.pipeline.run_options import RunOptions

        e = self.e if e is None else e
        check_error_rate(e)
        return RunOptions(
            reference=self.reference, reads="", reads2="" if reads2 else None, output=output, index=self._index,
            threads=self.threads if threads is None else threads, command_line="seedmap (Python API)",
            map=MapOptions(errors=e, best_only=self.best if best is None else best,
                           max_hits=self.max_hits if max_hits is None else max_hits),
            engine=self._engine_options).with_batch_size()

    def map(self, seq: str, e: float | None = None, best: bool | None = None, max_hits: int | None = None) -> list[Hit]:
        """The locations of one read (a sequence), as `seedmap map` reports them: every location within `e`
        edits, or with `best` those of the fewest edits; [] when it has none."""
        return self.map_many([seq], e=e, best=best, max_hits=max_hits, threads=1).hits()

    def map_many(self, reads: Reads, reads2: Reads | None = None, *, e: float | None = None,
                 best: bool | None = None, max_hits: int | None = None, paired: bool = False,
                 threads: int | None = None) -> Mapped:
        """Map many reads (a path or a sequence of reads, module docstring) as `seedmap map` does, into
        columns. With `reads2`, or `paired=True` (then `reads` holds interleaved pairs), they are pairs."""
        from seedmap.pipeline.stages import SamFormatter

        opts = self._options(e, best, max_hits, threads, reads2=reads2 is not None or paired)

        class Columns(SamFormatter):
            """The records' columns instead of their SAM text (io/record_columns.py)."""

            def records(self, recs: Any, batch: Any, loc_s: np.ndarray, loc_d: np.ndarray,  # type: ignore[override]
                        aln: Traceback) -> dict:  # (columns where the formatter returns SAM bytes: the API's run)
                from seedmap.io.record_columns import record_columns

                return record_columns(recs, batch.columns, self.alignments(loc_s, loc_d, aln), self.refs, batch.first)

        parts = [data for data, _ in self._run(opts, reads, reads2, paired, lambda ref: Columns(ref))]
        names = tuple(self._loaded[0].names)
        if not parts:
            return _empty(names)
        return Mapped(**{k: np.concatenate([p[k] for p in parts]) for k in parts[0]}, ref_names=names)

    def map_pairs(self, reads1: Reads, reads2: Reads, **kw: Any) -> Mapped:
        """Map pairs: mate 1 of each from `reads1`, mate 2 from `reads2` (map_many's keywords)."""
        return self.map_many(reads1, reads2, **kw)

    def write(self, reads: Reads, output: str | os.PathLike, reads2: Reads | None = None, *, e: float | None = None,
              best: bool | None = None, max_hits: int | None = None, paired: bool = False,
              threads: int | None = None) -> Counts:
        """Map reads (pairs: as map_many) and write their records to `output` as `seedmap map -o` does: SAM,
        or BAM (.bam) or CRAM (.cram); '-': SAM on stdout. Returns the run's counts."""
        from seedmap.io.output import bam_records, open_sink
        from seedmap.io.sam import header
        from seedmap.pipeline.stages import SamFormatter

        out = str(output)
        opts = self._options(e, best, max_hits, threads, reads2=reads2 is not None or paired, output=out)
        bam = bam_records(out)
        totals = dict.fromkeys((f.name for f in fields(Counts)), 0)
        ref = self._loaded[0]
        with open_sink(out, ref, opts.threads, self.reference) as sink:
            sink.header(header(ref, opts.command_line))
            for data, stats in self._run(opts, reads, reads2, paired, lambda r: SamFormatter(r, bam=bam)):
                sink.records(data)
                for key, value in vars(stats).items():
                    totals[key] += value
        return Counts(**totals)

    def _run(self, opts: Any, reads: Reads, reads2: Reads | None, paired: bool,
             formatter: Any) -> Iterator[tuple[Any, Any]]:
        """(data, stats) of each batch in input order: `seedmap map`'s run (pipeline/run.py) with the
        formatter `formatter(ref)` making each batch's data. Like the command line, the first run has glibc's
        malloc keep large allocations in its heap (pipeline/threads.py): for the whole process."""
        from seedmap.jit.warmup import warm_up
        from seedmap.pipeline import threads as threading_setup
        from seedmap.pipeline.pairs import PairRun
        from seedmap.pipeline.scheduler import Scheduler
        from seedmap.pipeline.single import DEPTH, SingleRun, prepare
        from seedmap.pipeline.timings import RunTimings
        from seedmap.spread import set_share

        with self._lock:
            threading_setup.set_environment()  # as the command line: the first batches' page faults, 1.5 s of 9
            s = prepare(opts, self._loaded)
            s.fmt = formatter(s.ref)
            run = PairRun(opts, s) if opts.paired else SingleRun(opts, s)
            shares = threading_setup.ThreadShares(opts.threads)
            set_share(shares.threads)
            key = (opts.paired, opts.map.stratified, s.fmt.bam, type(s.fmt).__name__)
            if key not in self._warmed:
                warm_up(s.ref, opts.paired, self.kind, run.warm, opts.map.stratified, s.fmt.bam)
                self._warmed.add(key)
            head = _head(opts, reads, reads2, paired, shares.threads)
            timings = RunTimings()
            sched = Scheduler(run.batches(head), [run.worker(shares, timings)] * shares.threads, DEPTH)
            for data, stats, *_ in sched.results():
                yield data, stats


def _empty(names: tuple[str, ...]) -> Mapped:
    """No records (no reads)."""
    i64, i32 = np.zeros(0, np.int64), np.zeros(0, np.int32)
    text = np.zeros(0, dtype="U1")
    return Mapped(i64, text, np.zeros(0, np.uint16), i32, i64, np.zeros(0, np.int8), np.zeros(0, np.uint8), text,
                  i32, text, i32, np.zeros(0, bool), i32, i64, i64, names)


def _is_path(reads: Reads) -> bool:
    return isinstance(reads, (str, os.PathLike)) and (not isinstance(reads, str) or Path(reads).exists()
                                                       or not set(reads.upper()) <= set("ACGTN"))


def _head(opts: Any, reads: Reads, reads2: Reads | None, paired: bool, workers: int) -> Any:
    """The run's opened reads (pipeline/inputs.py Head): files opened as `seedmap map` opens them, or the
    given reads packed into batches of opts.batch_size (pairs: mates interleaved, as a paired run's batches)."""
    from dataclasses import replace

    from seedmap.errors import SeedmapError
    from seedmap.pipeline.inputs import ESTIMATE_PAIRS, Head, check_error_count, open_reads

    if isinstance(reads, str) and not _is_path(reads):
        raise SeedmapError("reads: give a path, or a list of reads (a single sequence: Index.map)")
    if _is_path(reads):
        if reads2 is not None and not _is_path(reads2):
            raise SeedmapError("reads2: a path, as reads is")
        return open_reads(replace(opts, reads=str(reads), reads2=None if reads2 is None else str(reads2),
                                  interleaved=paired and reads2 is None), workers)
    assert not isinstance(reads, (str, os.PathLike))  # (a path returned above)
    names, seqs, quals = _unpack(reads, 0)
    if reads2 is not None:
        assert not isinstance(reads2, (str, os.PathLike))  # (a path where reads is one: above)
        names2, seqs2, quals2 = _unpack(reads2, len(names))
        if len(names2) != len(names):
            raise SeedmapError(f"reads2: {len(names2)} reads, not {len(names)} as reads")
        names, seqs, quals = _interleave(names, names2), _interleave(seqs, seqs2), (
            _interleave(quals, quals2) if quals is not None and quals2 is not None else None)
    elif paired and len(names) % 2:
        raise SeedmapError(f"paired reads: an odd number of reads ({len(names)}), not interleaved pairs")
    batches = _batches(names, seqs, quals, opts.batch_size * (2 if opts.paired else 1))
    wanted = 2 * ESTIMATE_PAIRS if opts.paired else 1
    parsed, n = [], 0
    while batches and n < wanted:
        parsed.append(batches.pop(0))
        n += parsed[-1].size
    head = Head([], parsed, iter(batches))
    check_error_count(opts.map, head.lengths())
    return head


def _unpack(reads: Sequence, first: int) -> tuple[list[str], list[str], list[str] | None]:
    """(names, sequences, qualities or None) of reads given as strings or tuples; a str read is named by
    its number (from `first`)."""
    from seedmap.errors import SeedmapError

    reads = list(reads)
    if not reads:
        return [], [], None
    if isinstance(reads[0], str):
        return np.arange(first, first + len(reads)).astype(str).tolist(), reads, None
    try:
        columns = list(zip(*reads, strict=True))
    except (TypeError, ValueError):
        raise SeedmapError("reads: each a sequence, or a (name, sequence[, qualities]) tuple, all alike") from None
    if len(columns) not in (2, 3):
        raise SeedmapError("reads: each a sequence, or a (name, sequence[, qualities]) tuple")
    quals = list(columns[2]) if len(columns) == 3 else None
    return [str(n) for n in columns[0]], list(columns[1]), quals


def _interleave(a: list, b: list) -> list:
    out = [None] * (len(a) + len(b))
    out[0::2], out[1::2] = a, b
    return out


def _batches(names: list[str], seqs: list[str], quals: list[str] | None, size: int) -> list:
    """The reads in batches of `size`, their arrays writable as the FASTQ parser's are: numba types a read-only
    array apart, and would compile each stage's kernels again for it."""
    from seedmap.io.reads import batch_of

    out = []
    for i in range(0, len(names), size):
        b = batch_of(names[i:i + size], seqs[i:i + size], None if quals is None else quals[i:i + size], i, "<reads>")
        b.names, b.quals = b.names.copy(), b.quals.copy()
        out.append(b)
    return out
