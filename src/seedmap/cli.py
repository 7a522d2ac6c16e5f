"""Command line: `seedmap index ref.fa`, `seedmap map ref.fa reads.fq`, `seedmap check ref.fa`, `seedmap stats`."""

from __future__ import annotations

import argparse
import logging
import math
import os
import shlex
import signal
import sys
import threading
from typing import TYPE_CHECKING

from seedmap import jit
from seedmap.version import __version__

jit.activate()  # before the kernel modules below import: each binds its cache directory as it is defined

from seedmap.cli_help import MAP_SHORT_EPILOG, Formatter, HelpAll, RawFormatter, hidden_group  # noqa: E402
from seedmap.errors import SeedmapError, Terminated  # noqa: E402
from seedmap.index import fm, kmer, neighborhood  # noqa: E402
from seedmap.index.default_kind import FM_FROM_BASES, estimated_bases, kind_for, map_kind  # noqa: E402
from seedmap.index.segments import machine_memory  # noqa: E402
from seedmap.io.reference import check_fasta  # noqa: E402
from seedmap.options import CPU_BATCH, CPU_PAIRS, DEFAULT_MIN_LENGTH, GPU_READS, MapOptions  # noqa: E402

if TYPE_CHECKING:  # (imported where used: `seedmap --help` loads no pipeline)
    from seedmap.pipeline.run_options import RunOptions

log = logging.getLogger("seedmap")
CLI_HANDLER = "seedmap-cli"  # the name of the stderr handler main() installs (replaced when main() runs again)

def edits_or_rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0 or (value >= 1 and not value.is_integer()):
        raise argparse.ArgumentTypeError("give a whole number of edits (e.g. 3) or a rate below 1 (e.g. 0.05)")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def memory_size(text: str) -> int:
    """Bytes from '8G', '512M', '1.5G', '2000000000' (K, M, G, T are powers of 1024; a trailing B is allowed)."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1:] if t[-1:] in SIZE_UNITS and t[-1:] else ""
    try:
        value = float(t[:-1] if unit else t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a memory size: {text!r} (e.g. 8G, 512M)") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"not a memory size: {text!r} (e.g. 8G, 512M)")
    return int(value * SIZE_UNITS[unit])


def default_max_memory() -> int:
    """Three quarters of the machine's memory: a build that would need more is segmented rather than killed
    (0, no limit, where it is unknown)."""
    return machine_memory() * 3 // 4


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def nonnegative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be at least 0")
    return value


def strata_count(text: str) -> int:
    """--strata: 'auto' (MapOptions' default, -1) or a count."""
    return MapOptions.strata if text == "auto" else nonnegative_int(text)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seedmap", description="Fully sensitive short-read mapper.",
                                formatter_class=Formatter)
    p.add_argument("--version", action="version", version=f"seedmap {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    ix = sub.add_parser("index", help="build an index of a reference FASTA", formatter_class=Formatter)
    ix.add_argument("reference", help="FASTA file, plain or gz")
    ix.add_argument("--kind", choices=["neighborhood", "kmer", "fm"], default=None,
                    help="neighborhood index (Tran), k-mer hash table (mrFAST) or FM-index (Salavert); default: "
                         f"neighborhood below about {FM_FROM_BASES // 10**6} Mbp of reference (fastest there), fm "
                         "from there on (repeat-rich genomes: faster, a third of the memory)")
    ix.add_argument("-o", "--output", metavar="DIR",
                    help="index directory (default: REFERENCE.smi, REFERENCE.kmer.smi, REFERENCE.fm.smi)")
    ix.add_argument("-u", "--seed-length", type=int, default=neighborhood.DEFAULT_SEED_LENGTH, metavar="U",
                    help="seed length u (default %(default)s; the seed table has 4^u entries)")
    ix.add_argument("-l", "--neighborhood-length", type=int, default=neighborhood.DEFAULT_NEIGHBORHOOD_LENGTH,
                    metavar="L",
                    help="neighborhood length l, at most 16 (default %(default)s)")
    ix.add_argument("--seed-shape", default="", metavar="SHAPE",
                    help="spaced seed over the seed span, '#' care and '-' don't care (e.g. '####-####', "
                         "'######-##'; u = its weight, replaces -u); every shape keeps full sensitivity")
    ix.add_argument("--ph", action="store_true",
                    help="also build every seed block's BDZ perfect hash, for map --filter ph (about 1.23 x 8 "
                         "bytes per unique neighborhood)")
    ix.add_argument("--max-memory", type=memory_size, default=0, metavar="SIZE",
                    help="build a neighborhood or FM index within about SIZE of memory (e.g. 8G; default: three "
                         "quarters of this machine's memory, and neighborhood segments that map within half of it). "
                         "An FM index that would need more is built in blocks of whole sequences and merged (the "
                         "same index); a neighborhood index (or an FM index of 2^32 bases or more) is split into "
                         "genome segments, built one at a time and searched one after the other (same hits); "
                         "mapping then holds about two segments resident")
    ix.add_argument("--segment-bases", type=positive_int, default=0, help=argparse.SUPPRESS)  # tests: segment size
    ix.add_argument("--block-bases", type=positive_int, default=0, help=argparse.SUPPRESS)  # tests: FM block size
    ix.add_argument("-k", "--kmer-length", type=int, default=kmer.DEFAULT_K, metavar="K",
                    help="k-mer length for --kind kmer, at most 14 (default %(default)s)")
    ix.add_argument("-r", "--sa-sample", type=int, default=fm.DEFAULT_SA_SAMPLE, metavar="R",
                    help="--kind fm: keep every r-th suffix array value; a locate takes at most r - 1 steps "
                         "(default %(default)s)")
    ix.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")

    _map_parser(sub)

    ck = sub.add_parser("check", help="verify every byte of an index against the checksums written at build",
                        formatter_class=Formatter,
                        description="Reads the whole index and compares every array's CRC-32 with the one "
                                    "written when it was built; prints 'INDEX: OK' per index, or one error line "
                                    "and exit status 1 (rebuild that index). map reads no more of an index "
                                    "than it uses: it refuses one of another format version, one whose FASTA "
                                    "changed, and any array whose type, shape or file size differs from the "
                                    "header or whose sampled checksum (its first and last 4 KiB) does not match, "
                                    "but only check finds damage elsewhere in a large array (a disk or copy "
                                    "error).")
    ck.add_argument("reference", help="reference FASTA the index was built from")
    ck.add_argument("--index", metavar="DIR",
                    help="index directory (default: each of REFERENCE.smi, REFERENCE.kmer.smi and REFERENCE.fm.smi "
                         "that exists)")
    ck.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")

    co = sub.add_parser("compile", help="compile every kernel into the installation's cache, once for all its users",
                        formatter_class=Formatter,
                        description="Compiles the kernels of every kind of run (engines, single-end and paired, "
                                    "--best, BAM) that the kernel cache lacks. Run by whoever can write the "
                                    "installation, it fills the installation's own cache, which every user then "
                                    "starts from instead of compiling (docs/compiling.md); otherwise this user's "
                                    "cache.")
    co.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")

    st = sub.add_parser("stats", help="summarise a SAM or BAM file: mapped, unique, multi-mapped, edits, flagstat",
                        formatter_class=Formatter,
                        description="Counts per read (a QNAME, or QNAME + mate for pairs): mapped, unmapped, "
                                    "uniquely and multi-mapped, mean locations of multi-mapped reads; histograms "
                                    "of edit distance (NM), locations per read and insert size (proper pairs); "
                                    "and the samtools flagstat counts. Text to stdout.")
    st.add_argument("alignments", help="SAM or BAM file (- for either on stdin)")
    st.add_argument("--plot", metavar="PNG", help="also draw the histograms into this PNG file")
    st.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")
    return p


def _map_parser(sub: argparse._SubParsersAction) -> None:
    """`seedmap map`: its options in groups; the engine-specific ones listed by --help-all only."""
    mp = sub.add_parser("map", help="map reads; SAM to stdout or -o", epilog=MAP_SHORT_EPILOG, add_help=False,
                        formatter_class=RawFormatter, usage="%(prog)s [options] REFERENCE READS [READS2]",
                        description="Reports every location of each read within -e edits (with --best: the best\n"
                                    "ones) as SAM, BAM or CRAM.")
    mp.add_argument("reference", help="reference FASTA (plain or gz), indexed or not")
    mp.add_argument("reads", help="FASTQ or FASTA, plain or gz (mate 1 of pairs)")
    mp.add_argument("reads2", nargs="?", help="mate 2 of paired-end reads, in the same order")

    io = mp.add_argument_group("input and output")
    io.add_argument("-h", "--help", action="help", help="this help, and exit")
    io.add_argument("-o", "--output", metavar="FILE", help="SAM (stdout by default), BAM if .bam, CRAM if .cram")
    io.add_argument("-R", "--rg", metavar="'@RG\\tID:x\\tSM:y'",
                    help="read group @RG line (tabs as \\t); records get RG:Z:x")
    io.add_argument("--secondary-seq", action="store_true",
                    help="SEQ and QUAL on secondary records too (default '*')")
    io.add_argument("--min-length", type=nonnegative_int, default=DEFAULT_MIN_LENGTH, metavar="N",
                    help="shorter reads are unmapped (default %(default)s)")
    io.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")
    io.add_argument("-v", "--verbose", action="store_true", help="also log seconds per stage and thread use")

    se = mp.add_argument_group("search")
    se.add_argument("-e", "--errors", type=edits_or_rate, default=0.05, metavar="E",
                    help="edits allowed: a count (3) or a rate of the read length (default %(default)s)")
    se.add_argument("--best", action="store_true", help="report only the best stratum (much faster)")
    se.add_argument("-n", "--max-hits", type=nonnegative_int, default=0, metavar="N",
                    help="N locations per read at most, best first (0 = all)")
    se.add_argument("--strata", type=strata_count, default=MapOptions.strata, metavar="auto|S",
                    help="--best / -n: search S strata beyond the reported ones, for MAPQ (default auto: 1 "
                         "after a unique best, 0 after a tie)")
    se.add_argument("--no-early-stop", dest="early_stop", action="store_false", help=argparse.SUPPRESS)
    se.add_argument("--engine", choices=["neighborhood", "kmer", "fm"], default=None, metavar="KIND",
                    help="neighborhood, kmer or fm: same hits, other speed (default: that of the index found)")
    se.add_argument("--index", metavar="DIR", help="index directory (default: REFERENCE.smi, .kmer.smi or .fm.smi)")

    pe = mp.add_argument_group("paired-end reads (READS READS2, or -p READS)")
    pe.add_argument("-p", "--interleaved", action="store_true", help="READS holds pairs, mate 1 then mate 2")
    pe.add_argument("-I", "--insert-size", metavar="MEAN,SD",
                    help="fragment length (default: from the first 2,000 pairs)")
    pe.add_argument("--orientation", choices=["fr", "rf", "ff"], default="fr", metavar="fr|rf|ff",
                    help="mate orientation of proper pairs (default %(default)s)")
    pe.add_argument("--rescue-edits", type=edits_or_rate, default=0.1, metavar="E",
                    help="mate rescue edits or rate (default %(default)s, 0 = off)")
    pe.add_argument("--unpaired-penalty", type=nonnegative_int, default=3, metavar="N",
                    help="edits an improper pair pays, choosing primaries (default %(default)s)")

    pf = mp.add_argument_group("performance")
    pf.add_argument("-t", "--threads", type=positive_int, default=1, metavar="N", help="threads (default %(default)s)")
    pf.add_argument("--device", default="cpu", metavar="DEV",
                    help="cpu (default), cuda, cuda:0,1, opencl, opencl:N or auto (same output on each)")
    pf.add_argument("--batch-size", type=positive_int, default=None, metavar="N",
                    help=f"reads (pairs) per batch (default {CPU_BATCH:,} ({CPU_PAIRS:,}); {GPU_READS:,} a GPU)")
    pf.add_argument("--dask", metavar="ADDR",
                    help="Dask: tcp://host:8786, a scheduler file or local:N")

    en, hidden = hidden_group(mp, "engine-specific options")
    en.add_argument("--adjacency", type=positive_int, default=1, metavar="A",
                    help="kmer engine: a candidate needs this many agreeing seeds (e + A seeds are taken, so "
                         "no location is lost; reads too short for them use A = 1)")
    en.add_argument("--windows", type=nonnegative_int, default=0, metavar="K",
                    help="neighborhood engine: disjoint windows per read (0 = e + 1)")
    en.add_argument("--step", type=nonnegative_int, default=0, metavar="D",
                    help="neighborhood engine: sliding windows with this step (0 = disjoint)")
    en.add_argument("--filter", choices=["bs", "ph", "bpr"], default="bs",
                    help="neighborhood filter: bs (binary search, default), ph (BDZ perfect hash per seed block: "
                         "constant-time lookups; built in memory when the index was not built with --ph) or "
                         "bpr (mflBPR, edits); same hits")
    en.add_argument("--fe", type=nonnegative_int, default=0, metavar="F",
                    help="neighborhood engine: errors allowed in a lookup's neighborhood: substitutions (bs, "
                         "ph) or edits (bpr)")
    en.add_argument("--gpu-verify", choices=["bitvector", "banded"], default="bitvector",
                    help="GPU bulk verification kernel of the kmer engine: Myers bit-vector, one thread per "
                         "candidate (default), or Nouri's banded DP, one lane per diagonal")
    io.add_argument("--help-all", action=HelpAll, hidden=hidden,
                    help="every option, the engine-specific ones too, and exit")


def _setup_logging(quiet: bool) -> None:
    """seedmap's messages on stderr. Only the "seedmap" logger is configured (not the root logger, whose
    handler other libraries' loggers would reach: numba-cuda logs every deallocation at INFO)."""
    logger = logging.getLogger("seedmap")
    for old in [h for h in logger.handlers if h.get_name() == CLI_HANDLER]:  # main() called again
        logger.removeHandler(old)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[seedmap] %(message)s"))
    handler.set_name(CLI_HANDLER)
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING if quiet else logging.INFO)
    logger.propagate = False


def entry() -> None:
    """The `seedmap` command: main(), then a quick exit. Everything is written and closed by then; the
    interpreter's own teardown (numba, LLVM, thread pools, a mapped index) would add half a second."""
    code = main()
    try:
        sys.stdout.flush()
    except OSError:
        code = code or 1
    sys.stderr.flush()
    os._exit(code)


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args.quiet)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run(args, argv)
    except SeedmapError as exc:
        print(f"seedmap: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("seedmap: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("seedmap: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except MemoryError:
        print("seedmap: error: out of memory (try a smaller --batch-size)", file=sys.stderr)
        return 1
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"seedmap: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: one line, the traceback only on request
        if os.environ.get("SEEDMAP_DEBUG"):
            raise
        print(f"seedmap: internal error: {type(exc).__name__}: {exc} (set SEEDMAP_DEBUG=1 for details)",
              file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, argv: list[str] | None) -> int:
    if args.command == "stats":
        from seedmap import stats

        stats.run_stats(args.alignments, args.plot)
        return 0
    if args.command == "check":
        _check(args)
        return 0
    from seedmap.pipeline import threads

    threads.set_environment()  # before the first large arrays
    if args.command == "index":
        _index(args)
        return 0
    if args.command == "compile":
        _compile()
        return 0
    from seedmap.pipeline.run import run_map

    run_map(_run_options(args, argv))
    return 0


def _compile() -> None:
    import time

    from seedmap.jit.cache import install_cache
    from seedmap.jit.precompile import compile_all, serialized_cache_saves

    where = jit.KERNEL_CACHE
    if where is None:
        raise SeedmapError(jit.CACHE_WARNING or "no directory can hold the compiled kernels")
    if where != str(install_cache()):
        log.warning("cannot write the installation's kernel cache (%s): compiling into %s, this user's only",
                    install_cache(), where)
    t0 = time.perf_counter()
    with serialized_cache_saves():
        n = compile_all()
    if n:
        log.info("%d kernels compiled into %s in %.1f s", n, where, time.perf_counter() - t0)
    else:
        log.info("every kernel is in the cache already (%s)", where)


def _index(args: argparse.Namespace) -> None:
    from seedmap.jit.precompile import serialized_cache_saves
    from seedmap.jit.warmup import compile_early
    from seedmap.kinds import KINDS, BuildLimits, IndexChoices, build_index
    from seedmap.pipeline.run import compile_for_index

    if args.kind is None:
        check_fasta(args.reference)  # its one error line comes before anything is logged
        bases = estimated_bases(args.reference)
        args.kind = "neighborhood" if args.ph else kind_for(bases)
        log.info("building the %s index (the default for a reference of about %d Mbp; --kind chooses)", args.kind,
                 bases // 10**6)
    spec = KINDS[args.kind]
    if args.ph and not spec.perfect_hashes:
        raise SeedmapError(f"--ph builds perfect hashes of a neighborhood index, not of --kind {args.kind}")
    if (args.max_memory or args.segment_bases) and spec.segment_bounds is None:
        raise SeedmapError(f"--max-memory splits an index into genome segments; the {args.kind} index has none "
                           "(docs/large-genomes.md: what it needs)")
    params = spec.choose(IndexChoices(args.seed_length, args.neighborhood_length, args.seed_shape or "", args.ph,
                                      args.kmer_length, args.sa_sample))
    limits = BuildLimits(args.max_memory or 0, default_max_memory() if spec.segment_bounds else 0,
                         args.segment_bases or 0, args.block_bases or 0)
    with serialized_cache_saves():  # (the index's kernels and the workers' may share callees)
        compiled = compile_early(args.kind)  # in worker processes while this one builds the index
        path = build_index(args.reference, args.output, args.kind, params, limits)
        compiled()
    compile_for_index(args.reference, str(path), args.kind, announced=True)  # the wait here, not in the first map


def _check(args: argparse.Namespace) -> None:
    import time

    from seedmap.index import store

    if args.index:
        paths = [args.index]
    else:
        paths = [p for p in (store.default_path(args.reference, kind) for kind in store.KIND_SUFFIX) if p.exists()]
        if not paths:
            raise SeedmapError(f"{args.reference}: no index found ({args.reference}.smi, .kmer.smi or .fm.smi; "
                               "run: seedmap index, or give --index)")
    for path in paths:
        t0 = time.perf_counter()
        header = store.check(path, fasta=args.reference)
        log.info("checked %s (%s index): %.0f MB in %.1f s", path, header.get("kind"),
                 store.total_bytes(header) / 1e6, time.perf_counter() - t0)
        print(f"{path}: OK", flush=True)


PROGRESS_SECONDS = 30.0  # a log line this often where stderr is not a terminal; SEEDMAP_PROGRESS_SECONDS sets it


def _progress_every(args: argparse.Namespace) -> float:
    """Seconds between progress log lines: none on a terminal (a live count there) or with -q."""
    if sys.stderr.isatty() or args.quiet:
        return 0.0
    given = os.environ.get("SEEDMAP_PROGRESS_SECONDS")
    try:
        every = PROGRESS_SECONDS if given is None else float(given)
    except ValueError:
        every = -1.0
    if not every >= 0:
        raise SeedmapError(f"SEEDMAP_PROGRESS_SECONDS={given}: give seconds between progress lines (0: none)")
    return every


def _run_options(args: argparse.Namespace, argv: list[str] | None) -> RunOptions:
    from seedmap.io.read_group import parse_read_group
    from seedmap.options import EngineOptions, MapOptions, PairOptions
    from seedmap.pipeline.run_options import RunOptions

    args.engine = args.engine or _engine_of(args)
    _check_engine_options(args)
    paired = args.reads2 is not None or args.interleaved
    if args.interleaved and args.reads2 is not None:
        raise SeedmapError("give either two read files or -p with one interleaved file, not both")
    insert = None
    if paired and args.insert_size is not None:
        from seedmap.paired import insert_size

        try:
            insert = insert_size.parse(args.insert_size)
        except ValueError as exc:
            raise SeedmapError(f"-I: {exc}") from None
    return RunOptions(
        reference=args.reference, reads=args.reads, reads2=args.reads2, interleaved=args.interleaved,
        output=args.output, index=args.index, threads=args.threads, batch_size=args.batch_size, device=args.device,
        progress=sys.stderr.isatty() and not args.quiet, progress_every=_progress_every(args),
        verbose=args.verbose and not args.quiet, dask=args.dask,
        command_line=shlex.join(["seedmap", *(sys.argv[1:] if argv is None else argv)]),
        read_group=parse_read_group(args.rg) if args.rg is not None else None, secondary_seq=args.secondary_seq,
        insert=insert,
        map=MapOptions(errors=args.errors, best_only=args.best, max_hits=args.max_hits, min_length=args.min_length,
                       strata=args.strata, early_stop=args.early_stop),
        engine=EngineOptions(kind=args.engine, windows=args.windows, step=args.step, fe=args.fe, filter=args.filter,
                             adjacency=args.adjacency, gpu_verify=args.gpu_verify),
        pairs=PairOptions(orientation=args.orientation, rescue_edits=args.rescue_edits,
                          unpaired_penalty=args.unpaired_penalty))


def _neighborhood_options(args: argparse.Namespace) -> tuple[tuple[str, bool], ...]:
    """(flag, given) of each option only the neighborhood engine takes."""
    return (("--filter " + args.filter, args.filter != "bs"), ("--windows", bool(args.windows)),
            ("--step", bool(args.step)), ("--fe", bool(args.fe)))


def _engine_of(args: argparse.Namespace) -> str:
    """The engine of a run that names none: the one its engine options belong to, else map_kind's."""
    if any(given for _, given in _neighborhood_options(args)):
        return "neighborhood"
    if args.adjacency != 1:
        return "kmer"
    return map_kind(args.reference, args.index)  # the log names it as the index is loaded or built


def _check_engine_options(args: argparse.Namespace) -> None:
    """An option that the chosen engine would ignore is an error, not a silent no-op."""
    if args.engine != "neighborhood":
        for flag, given in _neighborhood_options(args):
            if given:
                raise SeedmapError(f"{flag} needs the neighborhood engine, not --engine {args.engine}")
    if args.engine != "kmer" and args.adjacency != 1:
        raise SeedmapError(f"--adjacency needs --engine kmer, not --engine {args.engine}")
    if args.strata >= 0 and not (args.best or args.max_hits):
        raise SeedmapError("--strata needs --best or -n (the full search already sees every stratum)")
    if args.strata >= 0 and (args.reads2 or args.interleaved) and not args.best:
        raise SeedmapError("--strata applies to single-end reads and paired --best: paired -n searches every stratum")
