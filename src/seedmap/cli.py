"""Command line: `seedmap index ref.fa` and `seedmap map ref.fa reads.fq`."""

from __future__ import annotations

import argparse
import logging
import math
import os
import shlex
import sys

from seedmap import __version__
from seedmap.errors import SeedmapError
from seedmap.index import kmer, neighborhood

log = logging.getLogger("seedmap")

MAP_EPILOG = """\
Full sensitivity: every location within e edits (substitutions, insertions, deletions) is reported
when the read is cut into at least e + 1 disjoint windows that are looked up exactly. That is the
default plan (--windows 0 = e + 1, --step 0 = disjoint, --fe 0), for every read length and e: windows
are min(u + l, m // (e + 1)) long, and a window shorter than the index's word is still one exact range
lookup. Choices that lose the guarantee, and are warned about:
  --windows K < e + 1        fewer windows; --fe F (substitutions in a window's neighborhood part)
                             finds more but guarantees nothing: the seed part is exact, so K
                             substitutions, one per seed, can hide a location
  --step D                   sliding windows every D bases (Tran's delta); guaranteed only when they
                             contain e + 1 disjoint windows (e.g. D dividing the window length)
Reads not longer than e are reported unmapped (they would match everywhere).
"""


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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seedmap", description="Fully sensitive short-read mapper.")
    p.add_argument("--version", action="version", version=f"seedmap {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    ix = sub.add_parser("index", help="build an index of a reference FASTA")
    ix.add_argument("reference", help="FASTA file, plain or gz")
    ix.add_argument("--kind", choices=["neighborhood", "kmer"], default="neighborhood",
                    help="neighborhood index (Tran; default) or k-mer hash table (mrFAST)")
    ix.add_argument("-o", "--output", help="index directory (default: REFERENCE.smi, REFERENCE.kmer.smi)")
    ix.add_argument("-u", "--seed-length", type=int, default=neighborhood.DEFAULT_SEED_LENGTH,
                    help="seed length u (default %(default)s; the seed table has 4^u entries)")
    ix.add_argument("-l", "--neighborhood-length", type=int, default=neighborhood.DEFAULT_NEIGHBORHOOD_LENGTH,
                    help="neighborhood length l, at most 16 (default %(default)s)")
    ix.add_argument("--ph", action="store_true",
                    help="also build every seed block's BDZ perfect hash, for map --filter ph (about 1.23 x 8 "
                         "bytes per unique neighborhood)")
    ix.add_argument("-k", "--kmer-length", type=int, default=kmer.DEFAULT_K,
                    help="k-mer length for --kind kmer, at most 14 (default %(default)s)")
    ix.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")

    mp = sub.add_parser("map", help="map reads; SAM to stdout or -o", epilog=MAP_EPILOG,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    mp.add_argument("reference", help="reference FASTA (its index REFERENCE.smi is used when present)")
    mp.add_argument("reads", help="reads: FASTQ or FASTA, plain or gz")
    mp.add_argument("-o", "--output", help="output SAM file (default: stdout)")
    mp.add_argument("-t", "--threads", type=positive_int, default=1, help="threads (default %(default)s)")
    mp.add_argument("-e", "--errors", type=edits_or_rate, default=0.05,
                    help="edits allowed: a number (3) or a rate of the read length (0.05; default %(default)s)")
    mp.add_argument("--best", action="store_true", help="report only the best stratum of locations")
    mp.add_argument("-n", "--max-hits", type=nonnegative_int, default=0,
                    help="report at most N locations per read, best first (default: all)")
    mp.add_argument("--engine", choices=["neighborhood", "kmer"], default="neighborhood",
                    help="index kind to map with (default %(default)s); all engines report the same hits")
    mp.add_argument("--index", help="index directory (default: REFERENCE.smi or REFERENCE.kmer.smi)")
    mp.add_argument("--adjacency", type=positive_int, default=1,
                    help="kmer engine: a candidate needs this many agreeing seeds (e + A seeds are taken, so "
                         "no location is lost; reads too short for them use A = 1)")
    mp.add_argument("--windows", type=nonnegative_int, default=0, help="disjoint windows per read (0 = e + 1)")
    mp.add_argument("--step", type=nonnegative_int, default=0, help="sliding windows with this step (0 = disjoint)")
    mp.add_argument("--fe", type=nonnegative_int, default=0, help="substitutions allowed in a window's neighborhood")
    mp.add_argument("--filter", choices=["bs", "ph"], default="bs",
                    help="neighborhood engine: look each pattern up by binary search in its seed block (bs, "
                         "default) or in the block's perfect hash (ph: constant time; built in memory when the "
                         "index was not built with --ph); same hits either way")
    mp.add_argument("--batch-size", type=positive_int, default=100_000, help="reads per batch (default %(default)s)")
    mp.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors on stderr")
    return p


def _setup_logging(quiet: bool) -> None:
    logging.basicConfig(stream=sys.stderr, format="[seedmap] %(message)s",
                        level=logging.WARNING if quiet else logging.INFO)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args.quiet)
    try:
        return _run(args, argv)
    except SeedmapError as exc:
        print(f"seedmap: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("seedmap: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except MemoryError:
        print("seedmap: error: out of memory (try a smaller --batch-size)", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"seedmap: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: one line, the traceback only on request
        if os.environ.get("SEEDMAP_DEBUG"):
            raise
        print(f"seedmap: internal error: {type(exc).__name__}: {exc} (set SEEDMAP_DEBUG=1 for details)",
              file=sys.stderr)
        return 2


def _run(args: argparse.Namespace, argv: list[str] | None) -> int:
    from seedmap import runner

    if args.command == "index":
        if args.kind == "kmer":
            if args.ph:
                raise SeedmapError("--ph builds perfect hashes of a neighborhood index, not of --kind kmer")
            kmer.check_parameters(args.kmer_length)
            params = {"k": args.kmer_length}
        else:
            neighborhood.check_parameters(args.seed_length, args.neighborhood_length)
            params = {"u": args.seed_length, "l": args.neighborhood_length}
            if args.ph:
                from seedmap.index.perfect_hash import VERSION

                params["ph"] = VERSION
        runner.build_index(args.reference, args.output, args.kind, params)
        return 0
    import numba

    from seedmap.pipeline import MapOptions

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    opts = MapOptions(errors=args.errors, best_only=args.best, max_hits=args.max_hits)
    command_line = shlex.join(["seedmap", *(sys.argv[1:] if argv is None else argv)])
    if args.filter != "bs" and args.engine != "neighborhood":
        raise SeedmapError(f"--filter {args.filter} needs the neighborhood engine, not --engine {args.engine}")
    engine_options = {"windows": args.windows, "step": args.step, "fe": args.fe, "adjacency": args.adjacency,
                      "filter": args.filter}
    runner.run_map(args.reference, args.reads, args.output, opts, index_path=args.index,
                   engine_options=engine_options, batch_reads=args.batch_size, command_line=command_line,
                   progress=sys.stderr.isatty() and not args.quiet, kind=args.engine)
    return 0
