"""Where mapped records go: SAM to stdout or a file, BAM (streamed, BGZF blocks compressed in parallel)
when the file name ends in .bam.

A regular output file is atomic: written under a temporary name beside the target and renamed only when
everything was written, so an error, Ctrl-C or SIGTERM never leaves a partial file (nor a temporary
one) behind; on a local disk it is written with direct I/O (io/direct.py). A target that is not a regular
file (a pipe, /dev/stdout, /dev/null) is written directly.
Every write error is an error naming the output, whatever the target.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np

from seedmap.errors import SeedmapError
from seedmap.io.direct import open_direct


def is_bam(path: str | None) -> bool:
    return path is not None and path.lower().endswith(".bam")


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

    def __init__(self, fh: BinaryIO, label: str) -> None:
        self.fh = fh
        self.label = label

    def error(self, exc: OSError) -> SeedmapError:
        return SeedmapError(f"{self.label}: {exc.strerror or exc}")

    def write(self, data: bytes | np.ndarray) -> None:
        try:
            self.fh.write(data)
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


def _close_quietly(fh: BinaryIO) -> None:
    """After an error the file is being discarded: a second error on close adds nothing."""
    try:
        fh.close()
    except OSError:
        pass


class Sink:
    """Takes the SAM header text once, then each batch's record bytes (SAM lines, or BAM records when the
    output is BAM), in order."""

    def __init__(self, out: _Named, bgzf: object = None, ref: object = None) -> None:
        self.out = out
        self.bgzf = bgzf
        self.ref = ref

    def header(self, text: str) -> None:
        if self.bgzf is None:
            self.out.write(text.encode())
            return
        from seedmap.io.bam_encode import bam_header

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
def open_sink(path: str | None, ref: object = None, threads: int = 1) -> Iterator[Sink]:
    """SAM to stdout or `path`; BAM when `path` ends in .bam: BGZF blocks compressed by `threads` threads
    as the records come (ref gives the BAM header its sequences)."""
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
