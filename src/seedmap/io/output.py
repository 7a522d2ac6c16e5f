"""Where mapped records go: SAM to stdout or a file, BAM (streamed, BGZF blocks compressed in parallel)
when the file name ends in .bam, CRAM when it ends in .cram (BAM written to a temporary file, then encoded
against the reference by htslib, through pysam's samtools).

A regular output file is atomic: written under a temporary name beside the target and renamed only when
everything was written, so an error, Ctrl-C or SIGTERM never leaves a partial file (nor a temporary
one) behind; on a local disk it is written with direct I/O (io/direct.py). A target that is not a regular
file (a pipe, /dev/stdout, /dev/null) is written directly.
Every write error is an error naming the output, whatever the target.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeGuard

import numpy as np

from seedmap.errors import SeedmapError
from seedmap.io.direct import DirectFile, open_direct

if TYPE_CHECKING:
    from seedmap.io.bgzf import BgzfWriter
    from seedmap.io.reference import Reference

log = logging.getLogger("seedmap")


def is_bam(path: str | None) -> bool:
    return path is not None and path.lower().endswith(".bam")


def is_cram(path: str | None) -> TypeGuard[str]:
    return path is not None and path.lower().endswith(".cram")


def bam_records(path: str | None) -> bool:
    """Whether the workers encode BAM records for this output (BAM, or CRAM made from BAM)."""
    return is_bam(path) or is_cram(path)


def check_target(path: str) -> Path:
    target = Path(path)
    if target.is_dir():
        raise SeedmapError(f"{path}: is a directory")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise SeedmapError(f"{path}: the directory {parent} does not exist")
    return target


def _special(target: Path) -> bool:
    """An existing target that is not a regular file (device, pipe): written in place, never renamed over."""
    try:
        return not stat.S_ISREG(os.stat(target).st_mode)
    except FileNotFoundError:
        return False


def _temp_beside(target: Path, suffix: str) -> tuple[int, str]:
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    except OSError as exc:
        raise SeedmapError(f"{target}: cannot write here ({exc.strerror})") from None
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; an output file follows the umask like any other
    return fd, tmp


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


@contextmanager
def atomic_path(path: str, suffix: str = ".tmp") -> Iterator[tuple[int, str]]:
    """A temporary file (open descriptor, name) beside `path`, renamed to it only when the block ends
    without an error, else removed."""
    target = check_target(path)
    fd, tmp = _temp_beside(target, suffix)
    try:
        yield fd, tmp
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise


class _Named:
    """A binary file whose write and close errors become one SeedmapError naming the output."""

    def __init__(self, fh: BinaryIO | DirectFile, label: str) -> None:
        self.fh = fh
        self.label = label

    def error(self, exc: OSError) -> SeedmapError:
        return SeedmapError(f"{self.label}: {exc.strerror or exc}")

    def write(self, data: bytes | np.ndarray) -> None:
        try:
            self.fh.write(data.data if isinstance(data, np.ndarray) else data)  # see BgzfWriter.write
        except OSError as exc:
            raise self.error(exc) from None

    def close(self) -> None:
        try:
            self.fh.flush()
            if self.fh is not sys.stdout.buffer:
                self.fh.close()
        except OSError as exc:
            raise self.error(exc) from None


@contextmanager
def output_file(path: str | None) -> Iterator[_Named]:
    """stdout, a special file written in place, or a temporary file renamed to `path` when complete."""
    if path is None or path == "-":
        out = _Named(sys.stdout.buffer, "standard output")
        yield out
        out.close()
        return
    target = check_target(path)
    if _special(target):
        try:
            fh = open(target, "wb")  # closed by _Named.close, or below on an error
        except OSError as exc:
            raise SeedmapError(f"{path}: {exc.strerror}") from None
        out = _Named(fh, path)
        try:
            yield out
            out.close()
        finally:
            _close_quietly(fh)
        return
    with atomic_path(path) as (fd, _):
        out = _Named(open_direct(fd) or os.fdopen(fd, "wb", buffering=1 << 20), path)
        try:
            yield out
            out.close()
        finally:
            _close_quietly(out.fh)


def _close_quietly(fh: BinaryIO | DirectFile) -> None:
    """After an error the file is being discarded: a second error on close adds nothing."""
    try:
        fh.close()
    except OSError:
        pass


class Sink:
    """Takes the SAM header text once, then each batch's record bytes (SAM lines, or BAM records when the
    output is BAM), in order."""

    def __init__(self, out: _Named, bgzf: BgzfWriter | None = None, ref: Reference | None = None) -> None:
        self.out = out
        self.bgzf = bgzf
        self.ref = ref

    def header(self, text: str) -> None:
        if self.bgzf is None:
            self.out.write(text.encode())
            return
        from seedmap.io.bam_encode import bam_header

        assert self.ref is not None, "BAM output needs the reference"
        self.records(bam_header(text, self.ref.names, self.ref.lengths))

    def records(self, data: bytes | np.ndarray) -> None:
        if self.bgzf is None:
            self.out.write(data)
            return
        try:
            self.bgzf.write(data)
        except OSError as exc:
            raise self.out.error(exc) from None


@contextmanager
def open_sink(path: str | None, ref: Reference | None = None, threads: int = 1,
              fasta: str | None = None) -> Iterator[Sink]:
    """SAM to stdout or `path`; BAM when `path` ends in .bam: BGZF blocks compressed by `threads` threads
    as the records come (ref gives the BAM header its sequences); CRAM when it ends in .cram, encoded
    against `fasta` (the reference FASTA file) once every record is written."""
    if is_cram(path):
        with _cram_sink(path, ref, threads, fasta) as sink:
            yield sink
        return
    with output_file(path) as out:
        if not is_bam(path):
            yield Sink(out)
            return
        from seedmap.io.bgzf import BgzfWriter

        bgzf = BgzfWriter(out.fh, threads)
        sink = Sink(out, bgzf, ref)
        try:
            yield sink
        except BaseException:
            bgzf.abort()
            raise
        try:
            bgzf.close()
        except OSError as exc:
            raise out.error(exc) from None


@contextmanager
def _cram_sink(path: str, ref: Reference | None, threads: int, fasta: str | None) -> Iterator[Sink]:
    """BAM into a temporary directory beside `path`, then CRAM from it (htslib's encoder: no per-record
    Python), written under a temporary name and renamed, or in place to a special file."""
    if fasta is None:
        raise SeedmapError(f"{path}: CRAM needs the reference FASTA")
    target = check_target(path)
    try:
        tmp = tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise SeedmapError(f"{target}: cannot write here ({exc.strerror})") from None
    try:
        bam = os.path.join(tmp, "records.bam")
        with open_sink(bam, ref, threads) as sink:
            yield sink
        t0 = time.perf_counter()
        reference = _cram_reference(fasta, tmp)
        embed = reference != fasta  # the copy is deleted: a CRAM that named it would decode nowhere
        if _special(target):
            _bam_to_cram(bam, reference, str(target), threads, path, embed)
        else:
            with atomic_path(path, ".cram.tmp") as (fd, out):
                os.close(fd)
                _bam_to_cram(bam, reference, out, threads, path, embed)
        log.info("%s: CRAM encoded in %.1f s", path, time.perf_counter() - t0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _cram_reference(fasta: str, tmp: str) -> str:
    """A FASTA htslib can read by its .fai index: `fasta` itself when it is plain or bgzip-compressed with
    lines of one length (its .fai is made beside it when missing, as samtools does), else a copy in `tmp`
    with one line per sequence (a gzip-compressed or ragged FASTA: same names, same bases)."""
    import dnaio
    import pysam

    pysam.set_verbosity(0)  # htslib's messages would be extra stderr lines; a failure says enough here
    try:
        pysam.FastaFile(fasta).close()  # loads its .fai, or builds it
        return fasta
    except (OSError, ValueError):
        pass
    copy = os.path.join(tmp, "reference.fa")
    with dnaio.open(fasta) as reader, open(copy, "w") as fh:
        for record in reader:
            if record.sequence:  # the header skips empty sequences too
                fh.write(f">{record.id}\n{record.sequence}\n")
    pysam.faidx(copy)
    log.info("%s: htslib cannot index it (gzip, or lines of unequal length): the CRAM was encoded against a copy "
             "with the same sequences, and holds the parts of it its records cover (embed_ref: it decodes without "
             "a reference; a plain or bgzip FASTA makes a smaller CRAM)", fasta)
    return copy


def samtools_message(exc: Exception) -> str:
    """What samtools printed on stderr, on one line (pysam's SamtoolsError wraps it in a long repr)."""
    text = str(exc)
    text = text.split("stderr=", 1)[1] if "stderr=" in text else text
    return " ".join(text.replace("\\n", " ").strip("'\" \n").split())


def _bam_to_cram(bam: str, reference: str, out: str, threads: int, label: str, embed: bool = False) -> None:
    """MD and NM are stored as written (htslib would otherwise drop them and make them anew on reading, at
    the end of the tags): `samtools view` of the CRAM prints the SAM records exactly. `embed`: the CRAM holds
    the reference its records cover (for a reference that will not be there to decode with)."""
    import pysam

    embedded = ["--output-fmt-option", "embed_ref=1"] if embed else []
    try:
        pysam.samtools.view("-C", "--no-PG", "-@", str(max(threads - 1, 0)), "--output-fmt-option", "store_md=1",
                            "--output-fmt-option", "store_nm=1", *embedded, "-T", reference, "-o", out, bam,
                            catch_stdout=False)
    except pysam.utils.SamtoolsError as exc:
        raise SeedmapError(f"{label}: cannot write CRAM ({samtools_message(exc)})") from None
