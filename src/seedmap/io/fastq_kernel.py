"""A block of whole FASTQ records split into names, sequences and qualities, without the GIL.

The common case only: four-line records, '\\n' line ends, ASCII bytes, a '+' line that is bare or
repeats the header, no control character in a header but tab. `split_fastq` returns None for anything
else, and the caller parses that block with dnaio, whose records and error messages stay the reference:
the fast path never accepts a block that dnaio would read differently or reject.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from seedmap.io.alphabet import ENCODE, INVALID

NEWLINE, CR, AT, PLUS, SPACE, TAB = 10, 13, 64, 43, 32, 9


@njit(cache=True, nogil=True)
def _header_ok(buf: np.ndarray, a: int, b: int) -> bool:
    """No control character but tab (which of them end an id is dnaio's call)."""
    for k in range(a, b):
        if buf[k] < SPACE and buf[k] != TAB:
            return False
    return True


@njit(cache=True, nogil=True)
def _line_ends(buf: np.ndarray) -> np.ndarray:
    n = 0
    for c in buf:
        n += c == NEWLINE
    ends = np.empty(n, dtype=np.int64)
    n = 0
    for k in range(buf.size):
        if buf[k] == NEWLINE:
            ends[n] = k
            n += 1
    return ends


@njit(cache=True, nogil=True)
def _ascii(buf: np.ndarray) -> bool:
    acc = np.uint8(0)
    for c in buf:
        acc |= c
    return acc < 128


@njit(cache=True, nogil=True)
def _split(buf: np.ndarray, nl: np.ndarray, table: np.ndarray, names: np.ndarray, name_off: np.ndarray,
           codes: np.ndarray, offsets: np.ndarray, quals: np.ndarray) -> tuple[bool, int, int]:
    """Fill the outputs (sequences encoded by `table`) from records whose line ends are nl, 4 per record.
    Returns (taken, read, byte): taken is False at the first record the fast path leaves to dnaio;
    read and byte locate the first character that is not a nucleotide (-1, -1 if none)."""
    if not _ascii(buf):  # dnaio rejects non-ASCII input
        return False, -1, -1
    nn = 0
    ns = 0
    start = 0
    invalid = np.uint8(0)
    for r in range(nl.size // 4):
        h0, h1 = start, nl[4 * r]  # '@' header, then sequence, '+' line, qualities
        s0, s1 = h1 + 1, nl[4 * r + 1]
        p0, p1 = s1 + 1, nl[4 * r + 2]
        q0, q1 = p1 + 1, nl[4 * r + 3]
        start = q1 + 1
        if h1 <= h0 or buf[h0] != AT or p1 <= p0 or buf[p0] != PLUS or q1 - q0 != s1 - s0:
            return False, -1, -1
        if (s1 > s0 and buf[s1 - 1] == CR) or (q1 > q0 and buf[q1 - 1] == CR):  # dnaio strips a CR before '\n'
            return False, -1, -1
        if not _header_ok(buf, h0 + 1, h1):
            return False, -1, -1
        if p1 - p0 > 1:  # a repeated header must equal the first
            if p1 - p0 != h1 - h0:
                return False, -1, -1
            for k in range(1, p1 - p0):
                if buf[p0 + k] != buf[h0 + k]:
                    return False, -1, -1
        e = h0 + 1  # the id: the header up to its first space or tab
        while e < h1 and buf[e] != SPACE and buf[e] != TAB:
            e += 1
        names[nn:nn + e - h0 - 1] = buf[h0 + 1:e]
        nn += e - h0 - 1
        name_off[r + 1] = nn
        for k in range(s1 - s0):
            code = table[buf[s0 + k]]
            codes[ns + k] = code
            invalid |= code
        quals[ns:ns + s1 - s0] = buf[q0:q1]
        ns += s1 - s0
        offsets[r + 1] = ns
    if invalid < INVALID:  # codes are 0-4, INVALID has every bit set
        return True, -1, -1
    for r in range(nl.size // 4):
        for k in range(offsets[r], offsets[r + 1]):
            if codes[k] == INVALID:
                return True, r, nl[4 * r] + 1 + k - offsets[r]
    return True, -1, -1


@dataclass
class FastqBlock:
    """Reads of a block, packed: ids, sequence codes (alphabet.ENCODE), ASCII qualities; `bad` is the
    (read, character) of the first character that is not a nucleotide, or None."""

    names: np.ndarray
    name_offsets: np.ndarray
    codes: np.ndarray
    offsets: np.ndarray
    quals: np.ndarray
    bad: tuple[int, str] | None


def split_fastq(block: bytes) -> FastqBlock | None:
    """The reads of a block of whole FASTQ records ending in a newline; None where the block needs dnaio
    (see the module docstring)."""
    buf = np.frombuffer(block, dtype=np.uint8)
    if buf.size == 0 or buf[-1] != NEWLINE or buf[0] != AT:
        return None
    nl = _line_ends(buf)
    if nl.size % 4:
        return None
    n = nl.size // 4
    names = np.empty(buf.size, dtype=np.uint8)
    codes = np.empty(buf.size, dtype=np.uint8)
    quals = np.empty(buf.size, dtype=np.uint8)
    name_off = np.zeros(n + 1, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    taken, bad_read, bad_byte = _split(buf, nl, ENCODE, names, name_off, codes, offsets, quals)
    if not taken:
        return None
    size = int(offsets[-1])
    bad = (bad_read, chr(buf[bad_byte])) if bad_byte >= 0 else None
    return FastqBlock(names[:name_off[-1]].copy(), name_off, codes[:size].copy(), offsets, quals[:size].copy(), bad)
