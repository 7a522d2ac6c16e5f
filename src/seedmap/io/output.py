"""Where mapped records go: SAM to stdout or a file, BAM when the file name ends in .bam; read groups.

Every file output is atomic: written under a temporary name beside the target and renamed only when
everything was written, so an error never leaves a partial file (nor a temporary one) behind.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from seedmap.errors import SeedmapError
from seedmap.io.read_group import ReadGroup


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


@contextmanager
def output_stream(path: str | None) -> Iterator[BinaryIO]:
    """stdout, or a temporary file renamed to `path` only when everything was written."""
    if path is None or path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with atomic_path(path) as (fd, _), os.fdopen(fd, "wb") as fh:
        yield fh


class RecordSink:
    """Takes the SAM header text once, then SAM record bytes batch by batch; adds the read group."""

    def __init__(self, fh: BinaryIO, read_group: ReadGroup | None) -> None:
        self.fh = fh
        self.read_group = read_group
        self._tag = b"\tRG:Z:" + read_group.id.encode() + b"\n" if read_group else b""

    def header(self, text: str) -> None:
        if self.read_group:
            text = self.read_group.add_to_header(text)
        self.fh.write(text.encode())

    def records(self, data: bytes) -> None:
        if self._tag:
            data = data.replace(b"\n", self._tag)  # one RG tag ends every record line
        self.fh.write(data)


@contextmanager
def open_sink(path: str | None, read_group: ReadGroup | None = None, threads: int = 1) -> Iterator[RecordSink]:
    """SAM to stdout or `path`; BAM when `path` ends in .bam (the SAM text goes to a temporary file beside
    it and samtools, bundled with pysam, compresses it with `threads` threads at the end)."""
    if not is_bam(path):
        with output_stream(path) as fh:
            yield RecordSink(fh, read_group)
        return
    target = check_target(path)
    sam_fd, sam_tmp = _temp_beside(target, ".sam.tmp")
    try:
        with os.fdopen(sam_fd, "wb") as fh:
            yield RecordSink(fh, read_group)
        with atomic_path(path) as (bam_fd, bam_tmp):
            os.close(bam_fd)
            from seedmap.io.bam import sam_to_bam

            sam_to_bam(sam_tmp, bam_tmp, threads, label=path)
    finally:
        _unlink_quietly(sam_tmp)
