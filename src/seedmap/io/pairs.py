"""Paired reads (two files, or one interleaved file): what batches of mates share (io/chunks.py reads them).

A pair batch is an ordinary ReadBatch of 2n reads: read 2i is mate 1 of pair i, read 2i + 1 its mate 2,
so both mates go through the engine in one call. Names lose a trailing /1 or /2 (SAM QNAME is the same
for both mates); dnaio checks that the names of the two mates agree.
"""

from __future__ import annotations

import re

import dnaio

from seedmap.io.reads import open_error_message

_MATE_SUFFIX = re.compile(r"/[12]$")
_DNAIO_PREFIX = re.compile(r"^Error in sequence file at [^:]*:\s*")


def strip_mate(record: dnaio.SequenceRecord) -> dnaio.SequenceRecord:
    record.name = _MATE_SUFFIX.sub("", record.id) + record.name[len(record.id):]
    return record


def pair_error(paths: str, exc: BaseException) -> str:
    text = _DNAIO_PREFIX.sub("", str(exc).strip().splitlines()[0]) if str(exc).strip() else ""
    if "improperly paired" in text or "do not match" in text.lower() or "does not match" in text:
        return f"{paths}: reads are not paired ({text.replace('Reads are improperly paired. ', '')})"
    return ""


def unequal_files(path1: str, path2: str) -> str:
    """'' unless one of two mate files ends before the other (or breaks first): then one line naming it. An
    error path only: both files are read again from the start, in step, as far as the shorter goes."""
    paths = (path1, path2)
    try:
        with dnaio.open(path1) as r1, dnaio.open(path2) as r2:
            readers = (iter(r1), iter(r2))
            n = 0
            while True:
                ended = []
                for k, reader in enumerate(readers):
                    try:
                        next(reader)
                    except StopIteration:
                        ended.append(k)
                    except Exception as exc:  # this file's own record is broken
                        return open_error_message(paths[k], exc)
                if len(ended) == 1:
                    k = ended[0]
                    return (f"{paths[k]}: reads are not paired: it ends after {n:,} reads, and "
                            f"{paths[1 - k]} holds more")
                if ended:
                    return ""
                n += 1
    except Exception:  # a file that does not even open: the caller says so
        return ""


def unreadable(path: str) -> str:
    """'' when path opens as a read file, else why not."""
    try:
        with dnaio.open(path) as reader:
            next(iter(reader), None)
        return ""
    except Exception as exc:
        return open_error_message(path, exc)
