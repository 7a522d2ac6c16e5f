"""Reads the fields `seedmap stats` needs from SAM text (a numba kernel over a chunk of lines), and their Summary."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)


@dataclass
class SamFields:
    """One entry per record. `name` is a 64-bit hash of QNAME (FNV-1a); `diff_ref` tells whether RNEXT
    names another reference than RNAME (samtools' mtid != tid); `nm` is -1 without an NM:i tag."""

    name: np.ndarray
    flag: np.ndarray
    mapq: np.ndarray
    tlen: np.ndarray
    nm: np.ndarray
    diff_ref: np.ndarray

    @staticmethod
    def concat(parts: list[SamFields]) -> SamFields:
        if not parts:
            return SamFields(np.empty(0, np.uint64), np.empty(0, np.int64), np.empty(0, np.int64),
                             np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.bool_))
        return SamFields(*(np.concatenate([getattr(p, f) for p in parts]) for f in
                           ("name", "flag", "mapq", "tlen", "nm", "diff_ref")))


@dataclass
class Summary:
    """What `seedmap stats` says of a file's SamFields (stats.summarise; report_plot draws it)."""

    records: int
    reads: int
    mapped: int
    unique: int
    multi: int
    mean_multi_hits: float
    nm_primary: np.ndarray  # histogram: index = edit distance
    nm_all: np.ndarray
    hits: np.ndarray  # histogram: index = locations of a read (0 = unmapped)
    insert_sizes: np.ndarray
    flagstat: dict[str, tuple[int, int]] = field(default_factory=dict)  # QC-passed, QC-failed

    @property
    def unmapped(self) -> int:
        return self.reads - self.mapped


@njit(cache=True, nogil=True)
def _int(buf: np.ndarray, a: int, b: int) -> tuple[int, bool]:
    """The signed decimal in buf[a:b]; False when it is not one."""
    neg = a < b and buf[a] == 45
    if neg:
        a += 1
    if a >= b or b - a > 18:
        return 0, False
    v = 0
    for i in range(a, b):
        c = buf[i]
        if c < 48 or c > 57:
            return 0, False
        v = v * 10 + (c - 48)
    return (-v if neg else v), True


@njit(cache=True, nogil=True)
def _same(buf: np.ndarray, a: int, b: int, c: int, d: int) -> bool:
    if b - a != d - c:
        return False
    for i in range(b - a):
        if buf[a + i] != buf[c + i]:
            return False
    return True


@njit(cache=True, nogil=True)
def scan_records(buf: np.ndarray, n_lines: int) -> tuple:
    """Parse the record lines of `buf` (whole lines, '\\n' ended; header lines start with '@'). Returns
    (name, flag, mapq, tlen, nm, diff_ref, count, bad_line): bad_line is the 0-based line number of the
    first line that is not a SAM record, else -1."""
    name = np.empty(n_lines, np.uint64)
    flag = np.empty(n_lines, np.int64)
    mapq = np.empty(n_lines, np.int64)
    tlen = np.empty(n_lines, np.int64)
    nm = np.empty(n_lines, np.int64)
    diff_ref = np.empty(n_lines, np.bool_)
    starts = np.empty(64, np.int64)  # field boundaries of the current line (mandatory 11 + tags)
    ends = np.empty(64, np.int64)
    n = 0
    line = 0
    p = 0
    size = buf.size
    while p < size:
        q = p
        while q < size and buf[q] != 10:
            q += 1
        if q > p and buf[q - 1] == 13:  # CRLF
            end = q - 1
        else:
            end = q
        if end > p and buf[p] != 64:  # not an empty line, not a header line
            nf = 0
            a = p
            for i in range(p, end + 1):
                if i == end or buf[i] == 9:
                    if nf < 64:
                        starts[nf] = a
                        ends[nf] = i
                    nf += 1
                    a = i + 1
            if nf < 11:
                return name, flag, mapq, tlen, nm, diff_ref, n, line
            f, ok1 = _int(buf, starts[1], ends[1])
            mq, ok2 = _int(buf, starts[4], ends[4])
            tl, ok3 = _int(buf, starts[8], ends[8])
            if not (ok1 and ok2 and ok3) or f < 0 or f > 65535 or ends[0] == starts[0]:
                return name, flag, mapq, tlen, nm, diff_ref, n, line
            h = FNV_OFFSET
            for i in range(starts[0], ends[0]):
                h = (h ^ np.uint64(buf[i])) * FNV_PRIME
            d = -1
            for k in range(11, min(nf, 64)):
                a, b = starts[k], ends[k]
                if b - a > 5 and buf[a] == 78 and buf[a + 1] == 77 and buf[a + 2] == 58 and buf[a + 4] == 58:
                    d, ok = _int(buf, a + 5, b)
                    if not ok:
                        d = -1
                    break
            # mate reference: '=' is RNAME's; '*' is none (-1), as is RNAME '*'
            ra, rb, ma, mb = starts[2], ends[2], starts[6], ends[6]
            r_none = rb - ra == 1 and buf[ra] == 42
            m_none = mb - ma == 1 and buf[ma] == 42
            if mb - ma == 1 and buf[ma] == 61:
                diff = False
            elif r_none or m_none:
                diff = r_none != m_none
            else:
                diff = not _same(buf, ra, rb, ma, mb)
            name[n] = h
            flag[n] = f
            mapq[n] = mq
            tlen[n] = tl
            nm[n] = d
            diff_ref[n] = diff
            n += 1
        line += 1
        p = q + 1
    return name, flag, mapq, tlen, nm, diff_ref, n, -1


def scan_chunk(data: bytes | bytearray | memoryview) -> tuple[SamFields, int, int]:
    """Fields of the records in `data` (whole lines), the number of lines, and the first bad line or -1."""
    buf = np.frombuffer(data, dtype=np.uint8)
    n_lines = int(np.count_nonzero(buf == 10)) + 1
    name, flag, mapq, tlen, nm, diff_ref, n, bad = scan_records(buf, n_lines)
    return SamFields(name[:n], flag[:n], mapq[:n], tlen[:n], nm[:n], diff_ref[:n]), n_lines, int(bad)
