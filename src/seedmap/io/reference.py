"""Reference genomes: FASTA (plain or gz) -> one concatenated code array, 2-bit packed with an N mask."""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import dnaio
import numpy as np
from numba import njit
from xopen import xopen

from seedmap.errors import SeedmapError
from seedmap.io.alphabet import ENCODE, INVALID, N_CODE
from seedmap.io.reads import open_error_message

log = logging.getLogger("seedmap")


@dataclass
class Reference:
    """All sequences concatenated; sequence i covers [starts[i], starts[i] + lengths[i])."""

    names: list[str]
    starts: np.ndarray  # int64, one per sequence, plus the total length at the end
    packed: np.ndarray  # uint8, 4 bases per byte, base i at bits 2*(i%4)
    nmask: np.ndarray  # uint8, 1 bit per base (little bit order): 1 = N / IUPAC, never matches
    # The IUPAC codes among the masked bases (R, Y, K, ...; not N): their positions, ascending, and letters
    # (upper case), so that MD names the reference's letter there as samtools calmd does. Empty for an
    # index built before they were kept: MD says N there.
    iupac_pos: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    iupac_code: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint8))

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.starts)

    @property
    def total(self) -> int:
        return int(self.starts[-1])

    def codes(self) -> np.ndarray:
        """The whole reference as one code per base (N = 4)."""
        return unpack_codes(self.packed, self.nmask, 0, self.total)

    @classmethod
    def from_codes(cls, names: list[str], codes_per_seq: list[np.ndarray]) -> Reference:
        lengths = np.array([c.size for c in codes_per_seq], dtype=np.int64)
        starts = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        codes = np.concatenate(codes_per_seq) if codes_per_seq else np.zeros(0, np.uint8)
        packed, nmask = pack_codes(codes)
        return cls(list(names), starts, packed, nmask)


def pack_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2-bit packing (N stored as A) plus a bit mask of N positions."""
    n = codes.size
    padded = np.zeros((n + 3) // 4 * 4, dtype=np.uint8)
    padded[:n] = np.where(codes == N_CODE, 0, codes)
    quads = padded.reshape(-1, 4)
    packed = (quads[:, 0] | (quads[:, 1] << 2) | (quads[:, 2] << 4) | (quads[:, 3] << 6)).astype(np.uint8)
    nmask = np.packbits(codes == N_CODE, bitorder="little")
    return packed, nmask


@njit(cache=True, nogil=True, _nrt=False)
def sequence_of(starts: np.ndarray, pos: int) -> int:
    """The sequence holding global position pos (starts: Reference.starts): the last s with starts[s] <= pos,
    as np.searchsorted(starts, pos, side="right") - 1, written out so that the GPU's kernels run it too (the
    one rule for every kernel, CPU or GPU; sequences_of for arrays of positions)."""
    lo, hi = 0, starts.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if starts[mid] <= pos:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def sequences_of(starts: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """sequence_of of each position of an array (numpy, for code outside the kernels)."""
    return np.searchsorted(starts, pos, side="right") - 1


@njit(cache=True, nogil=True, _nrt=False)
def ref_code(packed: np.ndarray, nmask: np.ndarray, i: int) -> int:
    """Code of reference base i (4 for N)."""
    if (nmask[i >> 3] >> (i & 7)) & 1:
        return 4
    return (packed[i >> 2] >> ((i & 3) << 1)) & 3


@njit(cache=True, nogil=True, _nrt=False)
def unpack_into(packed: np.ndarray, nmask: np.ndarray, start: int, out: np.ndarray) -> None:
    """out[k] = ref_code(start + k). Eight bases at a time from 8-aligned positions: two packed bytes and one
    N-mask byte, which is 0 almost everywhere (the verifiers unpack every window they read: a quarter of
    their time base by base)."""
    n = out.size
    k = 0
    while k < n and (start + k) & 7:
        out[k] = ref_code(packed, nmask, start + k)
        k += 1
    while k + 8 <= n:
        i = start + k
        if nmask[i >> 3]:
            for r in range(8):
                out[k + r] = ref_code(packed, nmask, i + r)
        else:
            lo = packed[i >> 2]
            hi = packed[(i >> 2) + 1]
            for r in range(4):
                out[k + r] = (lo >> (2 * r)) & 3
                out[k + 4 + r] = (hi >> (2 * r)) & 3
        k += 8
    while k < n:
        out[k] = ref_code(packed, nmask, start + k)
        k += 1


def unpack_codes(packed: np.ndarray, nmask: np.ndarray, start: int, end: int) -> np.ndarray:
    out = np.empty(end - start, dtype=np.uint8)
    unpack_into(packed, nmask, start, out)
    return out


def check_fasta(path: str | Path) -> None:
    """A SeedmapError unless `path` opens and starts like FASTA: a map run checks this before it logs or
    writes anything (reading the whole reference, or loading its index, takes a while)."""
    path = str(path)
    try:
        if path == "-" or (not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path)):
            return  # a pipe is read once, by read_fasta: what a look here took would be lost to it
        with xopen(path, "rb") as fh:
            start = fh.read(1 << 16).lstrip()[:1]  # dnaio skips blank lines before the first record too
    except Exception as exc:  # xopen raises OS errors, gzip's and others
        raise SeedmapError(open_error_message(path, exc)) from None
    if start == b"@":
        raise SeedmapError(f"{path}: the reference must be FASTA, not FASTQ")
    if start not in (b">", b""):  # an empty file: read_fasta says it holds no sequences
        raise SeedmapError(f"{path}: not valid FASTA (it starts with {start.decode('latin-1')!r}, not '>')")


def read_fasta(path: str | Path) -> Reference:
    """Parse a nucleotide FASTA. Empty records are skipped with a warning; bad input raises SeedmapError.

    Each sequence is packed as it is read, into packed/N-mask buffers that grow as needed (their untouched
    pages cost no memory) and are trimmed at the end: the peak is the packed reference plus one sequence.
    """
    path = str(path)
    names: list[str] = []
    ends: list[int] = []
    seen: set[str] = set()
    buf = _PackBuffer(_size_hint(path))
    try:
        with dnaio.open(path, mode="r") as reader:
            if not isinstance(reader, dnaio.FastaReader):
                raise SeedmapError(f"{path}: the reference must be FASTA, not FASTQ")
            for record in reader:
                name = record.id
                if not record.sequence:
                    log.warning("%s: skipping empty sequence %r", path, name)
                    continue
                if name in seen:
                    raise SeedmapError(f"{path}: sequence name {name!r} occurs twice")
                seen.add(name)
                buf.append(record.sequence, name, path)
                names.append(name)
                ends.append(buf.n)
                del record
    except SeedmapError:
        raise
    except Exception as exc:  # dnaio/xopen raise many kinds: format, gzip, OS errors
        raise SeedmapError(open_error_message(path, exc)) from None
    if not names:
        raise SeedmapError(f"{path}: no sequences found in the reference")
    starts = np.zeros(len(ends) + 1, dtype=np.int64)
    starts[1:] = ends
    packed, nmask = buf.finish()
    iupac_pos, iupac_code = buf.iupac()
    return Reference(names, starts, packed, nmask, iupac_pos, iupac_code)


IUPAC = np.zeros(256, dtype=bool)  # the upper-case letters of two or more bases (N aside)
IUPAC[np.frombuffer(b"RYKMSWBDHV", dtype=np.uint8)] = True
_CHUNK = 1 << 22  # bases encoded at a time: the str -> bytes copies stay this small
_COMPRESSED = (".gz", ".bgz", ".bz2", ".xz", ".zst")


def _size_hint(path: str) -> int:
    """Bases to make room for at first: at most the file size for plain FASTA, a guess for compressed."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return 0
    return size * 4 if path.endswith(_COMPRESSED) else size


class _PackBuffer:
    """Growing 2-bit packed bases + N-mask bits, both zero-filled (bits are or-ed in)."""

    def __init__(self, capacity: int) -> None:
        self.n = 0
        self.capacity = max(int(capacity), 1 << 16)
        self.packed = np.zeros((self.capacity + 3) // 4, dtype=np.uint8)
        self.nmask = np.zeros((self.capacity + 7) // 8, dtype=np.uint8)
        self.iupac_parts: list[tuple[np.ndarray, np.ndarray]] = []

    def _reserve(self, extra: int) -> None:
        need = self.n + extra
        if need <= self.capacity:
            return
        self.capacity = max(need, 2 * self.capacity)
        for attr, per_byte in (("packed", 4), ("nmask", 8)):
            old = getattr(self, attr)
            grown = np.zeros((self.capacity + per_byte - 1) // per_byte, dtype=np.uint8)
            used = (self.n + per_byte - 1) // per_byte
            grown[:used] = old[:used]
            del old
            setattr(self, attr, grown)

    def append(self, sequence: str, name: str, path: str) -> None:
        if not sequence.isascii():  # O(1) for a str
            raise SeedmapError(f"{path}: sequence {name!r} has non-ASCII characters")
        self._reserve(len(sequence))
        for i in range(0, len(sequence), _CHUNK):
            chunk = np.frombuffer(sequence[i:i + _CHUNK].encode("ascii"), dtype=np.uint8)
            bad = _pack_ascii(chunk, ENCODE, self.packed, self.nmask, self.n + i)
            if bad >= 0:
                at = i + bad
                raise SeedmapError(f"{path}: sequence {name!r} has an invalid character {sequence[at]!r} at {at + 1}")
            self._keep_iupac(chunk, self.n + i)
        self.n += len(sequence)

    def _keep_iupac(self, chunk: np.ndarray, offset: int) -> None:
        """The IUPAC letters of a packed chunk: only its masked bases are looked at (the mask is 8 bases a
        byte, most of them zero), so a chunk without N costs one pass over an eighth of its size."""
        lo, hi = offset >> 3, (offset + chunk.size + 7) >> 3
        nz = np.flatnonzero(self.nmask[lo:hi])
        if not nz.size:
            return
        bits = np.unpackbits(self.nmask[lo:hi][nz], bitorder="little").reshape(-1, 8)
        pos = ((nz + lo) * 8)[:, None] + np.arange(8)
        pos = pos[bits.astype(bool)]
        pos = pos[(pos >= offset) & (pos < offset + chunk.size)]
        letters = chunk[pos - offset] & np.uint8(0xDF)  # upper case
        keep = IUPAC[letters]
        if keep.any():
            self.iupac_parts.append((pos[keep].astype(np.int64), letters[keep]))

    def iupac(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.iupac_parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint8)
        return (np.concatenate([p for p, _ in self.iupac_parts]), np.concatenate([c for _, c in self.iupac_parts]))

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """The buffers trimmed to n bases in place (a shrinking realloc: no copy)."""
        packed, nmask = self.packed, self.nmask
        del self.packed, self.nmask
        packed.resize((self.n + 3) // 4, refcheck=False)
        nmask.resize((self.n + 7) // 8, refcheck=False)
        return packed, nmask


@njit(cache=True, nogil=True)
def _pack_ascii(chars: np.ndarray, table: np.ndarray, packed: np.ndarray, nmask: np.ndarray, offset: int) -> int:
    """Encode chars and or them in at base offset (N: a mask bit, stored as A); the first invalid index or -1."""
    for j in range(chars.size):
        c = table[chars[j]]
        if c == INVALID:
            return j
        i = offset + j
        if c == N_CODE:
            nmask[i >> 3] |= np.uint8(1 << (i & 7))
        else:
            packed[i >> 2] |= np.uint8(c << ((i & 3) << 1))
    return -1
