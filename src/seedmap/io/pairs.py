"""Paired reads (two files, or one interleaved file) streamed as batches of mates.

A pair batch is an ordinary ReadBatch of 2n reads: read 2i is mate 1 of pair i, read 2i + 1 its mate 2,
so both mates go through the engine in one call. Names lose a trailing /1 or /2 (SAM QNAME is the same
for both mates); dnaio checks that the names of the two mates agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import dnaio

from seedmap.errors import SeedmapError
from seedmap.io.reads import ReadBatch, make_batch, open_error_message

_MATE_SUFFIX = re.compile(r"/[12]$")
_DNAIO_PREFIX = re.compile(r"^Error in sequence file at [^:]*:\s*")


def _strip(record: object) -> object:
    record.name = _MATE_SUFFIX.sub("", record.id) + record.name[len(record.id):]
    return record


def _pair_error(paths: str, exc: BaseException) -> str:
    text = _DNAIO_PREFIX.sub("", str(exc).strip().splitlines()[0]) if str(exc).strip() else ""
    if "improperly paired" in text or "do not match" in text.lower() or "does not match" in text:
        return f"{paths}: reads are not paired ({text.replace('Reads are improperly paired. ', '')})"
    return ""


def read_pair_batches(path1: str, path2: str | None, batch_pairs: int = 100_000) -> Iterator[ReadBatch]:
    """Batches of at most batch_pairs pairs from two files, or one interleaved file when path2 is None.
    Raises SeedmapError on bad, unpaired or empty input."""
    paths = path1 if path2 is None else f"{path1}, {path2}"
    first = 0
    try:
        opened = dnaio.open(path1, interleaved=True) if path2 is None else dnaio.open(path1, file2=path2)
        with opened as reader:
            records: list = []
            for r1, r2 in reader:
                records += (_strip(r1), _strip(r2))
                if len(records) >= 2 * batch_pairs:
                    yield make_batch(records, first, paths)
                    first += len(records)
                    records = []
            if records:
                yield make_batch(records, first, paths)
                first += len(records)
    except SeedmapError:
        raise
    except Exception as exc:
        msg = _pair_error(paths, exc)
        if msg:
            raise SeedmapError(msg) from None
        for path in (path1, path2):
            why = _readable(path) if path else ""
            if why:
                raise SeedmapError(why) from None
        raise SeedmapError(open_error_message(path1, exc)) from None
    if first == 0:
        raise SeedmapError(f"{paths}: no read pairs found")


def _readable(path: str) -> str:
    """'' when path opens as a read file, else why not."""
    try:
        with dnaio.open(path) as reader:
            next(iter(reader), None)
        return ""
    except Exception as exc:
        return open_error_message(path, exc)
