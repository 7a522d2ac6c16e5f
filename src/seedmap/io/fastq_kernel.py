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
from seedmap.ranges import put

NEWLINE, CR, AT, PLUS, SPACE, TAB = 10, 13, 64, 43, 32, 9
SLASH, ONE, TWO = 47, 49, 50  # the '/1' and '/2' of mate ids


@njit(cache=True, nogil=True)
def _header_ok(buf: np.ndarray, a: int, b: int) -> bool:
    """No control character but tab (which of them end an id is dnaio's call)."""
    for k in range(a, b):
        if buf[k] < SPACE and buf[k] != TAB:
            return False
    return True


_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_NEWLINES = np.uint64(0x0A0A0A0A0A0A0A0A)
_BYTE_ONES = np.uint64(0x0101010101010101)


@njit(cache=True, nogil=True, inline="always")
def _newline_bits(word: np.uint64) -> np.uint64:
    """Bit 7 of each byte of `word` (eight bytes of text) that is a newline, every other bit clear."""
    x = word ^ _NEWLINES
    return ~(((x & _LOW7) + _LOW7) | x) & ~_LOW7


@njit(cache=True, nogil=True, inline="always")
def _newlines_in(word: np.uint64) -> int:
    """How many of the eight bytes of `word` are newlines."""
    return int((_newline_bits(word) >> np.uint64(7)) * _BYTE_ONES >> np.uint64(56))


@njit(cache=True, nogil=True, inline="always")
def _words(buf: np.ndarray, start: int) -> np.ndarray:
    """buf[start:] as whole 8-byte words (start a multiple of 8), the last bytes left over."""
    return buf[start:start + (buf.size - start) // 8 * 8].view(np.uint64)


@njit(cache=True, nogil=True)
def count_newlines(buf: np.ndarray) -> int:
    words = _words(buf, 0)
    n = 0
    for w in words:
        n += _newlines_in(w)
    for k in range(8 * words.size, buf.size):
        n += buf[k] == NEWLINE
    return n


@njit(cache=True, nogil=True)
def _line_ends(buf: np.ndarray) -> np.ndarray:
    """Offsets of every newline, counted and found eight bytes at a time (a word without one is skipped)."""
    ends = np.empty(count_newlines(buf), dtype=np.int64)
    words = _words(buf, 0)
    n = 0
    for i in range(words.size):
        if _newline_bits(words[i]):
            for k in range(8 * i, 8 * i + 8):
                if buf[k] == NEWLINE:
                    ends[n] = k
                    n += 1
    for k in range(8 * words.size, buf.size):
        if buf[k] == NEWLINE:
            ends[n] = k
            n += 1
    return ends


@njit(cache=True, nogil=True)
def after_lines(buf: np.ndarray, start: int, lines: int) -> tuple[int, int]:
    """(offset just past the `lines`-th newline from `start`, 0), or (-1, the newlines still missing) when
    buf ends first. The reader's cut: eight bytes at a time, a word with too few newlines only counted."""
    i = start
    while i < buf.size and (i % 8 or buf.size - i < 8):
        if buf[i] == NEWLINE:
            lines -= 1
            if lines == 0:
                return i + 1, 0
        i += 1
    if i == buf.size:
        return -1, lines
    words = _words(buf, i)
    for w in words:
        c = _newlines_in(w)
        if c >= lines:
            break
        lines -= c
        i += 8
    while i < buf.size:
        if buf[i] == NEWLINE:
            lines -= 1
            if lines == 0:
                return i + 1, 0
        i += 1
    return -1, lines


@njit(cache=True, nogil=True)
def record_starts(buf: np.ndarray) -> np.ndarray:
    """Offsets where the four-line records of a block of whole FASTQ records start: 0, and the byte after
    every fourth newline but the block's last (the reader's hot loop: no temporary arrays)."""
    starts = np.empty(count_newlines(buf) // 4 + 1, dtype=np.int64)
    starts[0] = 0
    lines = 0
    k = 1
    for i in range(buf.size - 1):
        if buf[i] == NEWLINE:
            lines += 1
            if lines == 4:
                starts[k] = i + 1
                k += 1
                lines = 0
    return starts[:k]


@njit(cache=True, nogil=True)
def _ascii(buf: np.ndarray) -> bool:
    acc = np.uint8(0)
    for c in buf:
        acc |= c
    return bool(acc < 128)


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
        put(names, nn, buf[h0 + 1:e])
        nn += e - h0 - 1
        name_off[r + 1] = nn
        for k in range(s1 - s0):
            code = table[buf[s0 + k]]
            codes[ns + k] = code
            invalid |= code
        put(quals, ns, buf[q0:q1])
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


def split_fastq(block: bytes | bytearray) -> FastqBlock | None:
    """The reads of a block of whole FASTQ records ending in a newline; None where the block needs dnaio
    (see the module docstring)."""
    buf = np.frombuffer(block, dtype=np.uint8)
    buf.setflags(write=False)  # one kernel signature for bytes and for the reader's bytearrays
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


@njit(cache=True, nogil=True)
def _interleave(a: np.ndarray, a_off: np.ndarray, b: np.ndarray, b_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Item 2i of the result is a's item i, item 2i + 1 is b's item i (flat data with offsets)."""
    n = a_off.size - 1
    out = np.empty(a.size + b.size, dtype=a.dtype)
    off = np.zeros(2 * n + 1, dtype=np.int64)
    p = 0
    for i in range(n):
        for k in range(a_off[i], a_off[i + 1]):
            out[p] = a[k]
            p += 1
        off[2 * i + 1] = p
        for k in range(b_off[i], b_off[i + 1]):
            out[p] = b[k]
            p += 1
        off[2 * i + 2] = p
    return out, off


@njit(cache=True, nogil=True)
def _mate_names(names: np.ndarray, off: np.ndarray) -> tuple[bool, np.ndarray, np.ndarray]:
    """The ids of interleaved mates (reads 2i, 2i + 1) without a trailing /1 or /2; False unless every
    pair's ids are equal or differ only as 'x/1' and 'x/2' (dnaio checks the other spellings)."""
    out = np.empty(names.size, dtype=np.uint8)
    out_off = np.zeros(off.size, dtype=np.int64)
    p = 0
    for i in range(0, off.size - 1, 2):
        a0, a1, b0, b1 = off[i], off[i + 1], off[i + 1], off[i + 2]
        if a1 - a0 != b1 - b0:
            return False, out, out_off
        for k in range(a1 - a0):
            last = k == a1 - a0 - 1 and k > 0
            if names[a0 + k] != names[b0 + k] and not (last and names[a0 + k] == ONE and names[b0 + k] == TWO
                                                      and names[a0 + k - 1] == SLASH):
                return False, out, out_off
        for r in (i, i + 1):
            s, e = off[r], off[r + 1]
            if e - s >= 2 and names[e - 2] == SLASH and (names[e - 1] == ONE or names[e - 1] == TWO):
                e -= 2
            for k in range(s, e):
                out[p] = names[k]
                p += 1
            out_off[r + 1] = p
    return True, out[:p], out_off


def pair_reads(blocks: list[FastqBlock]) -> FastqBlock | None:
    """Mates as one block of interleaved reads (from one interleaved block or two blocks of mates 1 and
    2), ids without /1 and /2; None where dnaio must check the pairing."""
    if len(blocks) == 2:
        a, b = blocks
        if a.offsets.size != b.offsets.size:
            return None
        names, name_off = _interleave(a.names, a.name_offsets, b.names, b.name_offsets)
        codes, offsets = _interleave(a.codes, a.offsets, b.codes, b.offsets)
        quals, _ = _interleave(a.quals, a.offsets, b.quals, b.offsets)
        bads = [(2 * x.bad[0] + mate, x.bad[1]) for mate, x in enumerate(blocks) if x.bad is not None]
        one = FastqBlock(names, name_off, codes, offsets, quals, min(bads) if bads else None)
    else:
        one = blocks[0]
        if (one.name_offsets.size - 1) % 2:
            return None
    ok, names, name_off = _mate_names(one.names, one.name_offsets)
    return FastqBlock(names, name_off, one.codes, one.offsets, one.quals, one.bad) if ok else None
