"""BAM output without samtools: the binary header, and a numba kernel that encodes a batch of records
into uncompressed BAM records (the same records `seedmap.io.sam.format_records` writes as SAM text).

The kernel is serial and releases the GIL, so worker threads encode different batches in parallel; the
concatenated output goes through `seedmap.io.bgzf.BgzfWriter`. Integer tags take the smallest type that
holds the value (c/C/s/S/i/I), as samtools does when it converts SAM text, so the files look standard.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from numba import njit

from seedmap.errors import SeedmapError
from seedmap.flags import FLAG_PAIRED, FLAG_REVERSE, FLAG_SECONDARY
from seedmap.io.columns import NO_XS, Alignments, Reads, Records, RefNames
from seedmap.io.reference import sequence_of
from seedmap.io.sam import put_bytes, put_cigar, xa_entries, xa_size

BAM_MAGIC = b"BAM\x01"
SEQ_NIBBLES = np.array([1, 2, 4, 8, 15], dtype=np.uint8)  # A C G T N in "=ACMGRSVTWYHKDBN"
RC_NIBBLES = np.array([8, 4, 2, 1, 15], dtype=np.uint8)  # the complement of each code
NO_RG = np.zeros(0, dtype=np.uint8)
MAX_NAME = 254  # l_read_name (one byte) counts the NUL
MAX_LENGTH = 2**31 - 1  # l_ref, pos, next_pos and tlen are int32


def bam_header(text: str, names: Sequence[str], lengths: Sequence[int] | np.ndarray) -> bytes:
    """The BAM header: magic, the SAM header text, and the reference dictionary (names, lengths). A sequence
    longer than 2^31 - 1 bases (BAM's 32-bit positions) is a SeedmapError: SAM text has no such limit."""
    too_long = np.flatnonzero(np.asarray(lengths, dtype=np.int64) > MAX_LENGTH)
    if too_long.size:
        i = int(too_long[0])
        raise SeedmapError(f"reference sequence {names[i]!r} is {int(lengths[i])} bp: BAM holds positions up to "
                           f"2^31 - 1 only; write SAM instead (-o FILE.sam)")
    raw = text.encode()
    parts = [BAM_MAGIC, struct.pack("<i", len(raw)), raw, struct.pack("<i", len(names))]
    for name, length in zip(names, lengths, strict=True):
        b = name.encode() + b"\0"
        parts.append(struct.pack("<i", len(b)) + b + struct.pack("<i", int(length)))
    return b"".join(parts)


def encode_records(recs: Records, reads: Reads, alns: Alignments, refs: RefNames, secondary_seq: bool = False,
                   rg: np.ndarray | bytes | None = None) -> np.ndarray:
    """BAM records (uint8, concatenated, uncompressed) of a batch: the arguments of `format_records`, plus
    `rg`, the read-group ID (uint8 array or bytes; None or empty: no RG tag), added as every record's last tag
    RG:Z:<id>. Safe to call from several threads at once on different batches. A read name longer than 254
    characters (BAM's limit, and the SAM spec's) is a SeedmapError."""
    long = recs.read[np.diff(reads.name_off)[recs.read] > MAX_NAME]
    if long.size:
        name = reads.names[reads.name_off[long[0]]:reads.name_off[long[0] + 1]].tobytes().decode(errors="replace")
        raise SeedmapError(f"read {name[:40]!r}...: names longer than {MAX_NAME} characters do not fit in BAM")
    if rg is None:
        rg = NO_RG
    elif isinstance(rg, bytes | bytearray):
        rg = np.frombuffer(rg, dtype=np.uint8)
    return _encode(tuple(recs), tuple(reads), tuple(alns), tuple(refs), secondary_seq, rg)


@njit(cache=True, nogil=True)
def _put32(buf: np.ndarray, p: int, value: int) -> int:
    """A little-endian 32-bit integer (two's complement for negatives)."""
    for i in range(4):
        buf[p + i] = (value >> (8 * i)) & 0xFF
    return p + 4


@njit(cache=True, nogil=True)
def _reg2bin(beg: int, end: int) -> int:
    """The BAI bin of the 0-based half-open interval [beg, end) (SAM spec, section 5.3)."""
    end -= 1
    if beg >> 14 == end >> 14:
        return ((1 << 15) - 1) // 7 + (beg >> 14)
    if beg >> 17 == end >> 17:
        return ((1 << 12) - 1) // 7 + (beg >> 17)
    if beg >> 20 == end >> 20:
        return ((1 << 9) - 1) // 7 + (beg >> 20)
    if beg >> 23 == end >> 23:
        return ((1 << 6) - 1) // 7 + (beg >> 23)
    if beg >> 26 == end >> 26:
        return ((1 << 3) - 1) // 7 + (beg >> 26)
    return 0


@njit(cache=True, nogil=True)
def _tag_name(buf: np.ndarray, p: int, a: int, b: int, typ: int) -> int:
    buf[p] = a
    buf[p + 1] = b
    buf[p + 2] = typ
    return p + 3


@njit(cache=True, nogil=True)
def _tag_int(buf: np.ndarray, p: int, a: int, b: int, value: int) -> int:
    """An integer tag in the smallest type that holds it: c/s/i if negative, else C/S/I."""
    if value < 0:
        if value >= -0x80:
            buf[_tag_name(buf, p, a, b, 99)] = value & 0xFF  # 'c'
            return p + 4
        if value >= -0x8000:
            q = _tag_name(buf, p, a, b, 115)  # 's'
            buf[q] = value & 0xFF
            buf[q + 1] = (value >> 8) & 0xFF
            return q + 2
        return _put32(buf, _tag_name(buf, p, a, b, 105), value)  # 'i'
    if value <= 0xFF:
        buf[_tag_name(buf, p, a, b, 67)] = value  # 'C'
        return p + 4
    if value <= 0xFFFF:
        q = _tag_name(buf, p, a, b, 83)  # 'S'
        buf[q] = value & 0xFF
        buf[q + 1] = value >> 8
        return q + 2
    return _put32(buf, _tag_name(buf, p, a, b, 73), value)  # 'I'


@njit(cache=True, nogil=True)
def _tag_str(buf: np.ndarray, p: int, a: int, b: int, src: np.ndarray) -> int:
    """A Z tag: the string and its NUL."""
    p = put_bytes(buf, _tag_name(buf, p, a, b, 90), src)
    buf[p] = 0
    return p + 1


@njit(cache=True, nogil=True)
def _cigar_ops(buf: np.ndarray, p: int, li: int, alns: Alignments) -> tuple[int, int]:
    """The binary CIGAR (len << 4 | op; seedmap's ops 0/1/2 are BAM's M/I/D); also the reference span."""
    span = 0
    ops, lens = alns.ops, alns.lens
    for c in range(alns.cig_off[li], alns.cig_off[li] + alns.n_runs[li]):
        p = _put32(buf, p, (lens[c] << 4) | ops[c])
        if ops[c] != 1:
            span += lens[c]
    return p, span


@njit(cache=True, nogil=True)
def _seq_qual(buf: np.ndarray, p: int, codes: np.ndarray, a: int, b: int, reverse: bool, quals: np.ndarray,
              has_quals: bool) -> int:
    """SEQ as 4-bit codes (reverse-complemented on the reverse strand), then QUAL (phred; 0xFF if absent)."""
    m = b - a
    for i in range((m + 1) // 2):
        buf[p + i] = 0
    for i in range(m):
        nib = RC_NIBBLES[codes[b - 1 - i]] if reverse else SEQ_NIBBLES[codes[a + i]]
        buf[p + i // 2] |= nib << 4 if i % 2 == 0 else nib
    p += (m + 1) // 2
    for i in range(m):
        buf[p + i] = ((quals[b - 1 - i] if reverse else quals[a + i]) - 33) if has_quals else 0xFF
    return p + m


@njit(cache=True, nogil=True)
def _encode(rec_t: tuple, read_t: tuple, aln_t: tuple, ref_t: tuple, secondary_seq: bool, rg: np.ndarray) -> np.ndarray:
    """encode_records' kernel, given the NamedTuples as plain tuples (as sam._format is, for its call cost)."""
    recs, reads, alns, refs = Records(*rec_t), Reads(*read_t), Alignments(*aln_t), RefNames(*ref_t)
    rec_read, rec_loc, rec_flag, rec_mapq, rec_nh = recs.read, recs.loc, recs.flag, recs.mapq, recs.nh
    mate_loc, mate_mapq, tlen = recs.mate_loc, recs.mate_mapq, recs.tlen
    names, name_off, codes, offsets, quals = reads.names, reads.name_off, reads.codes, reads.offsets, reads.quals
    loc_s, loc_d, n_runs, md_off, md, md_len = alns.start, alns.dist, alns.n_runs, alns.md_off, alns.md, alns.md_len
    ref_starts = refs.starts
    # Upper bound of the output size, then one pass writing it.
    size = 0
    for k in range(rec_read.size):
        r = rec_read[k]
        size += name_off[r + 1] - name_off[r] + 2 * (offsets[r + 1] - offsets[r]) + rg.size + 96
        li = rec_loc[k]
        if li >= 0:
            size += 4 * n_runs[li] + md_len[li]
        mi = mate_loc[k]
        if mi >= 0:
            size += 11 * n_runs[mi] + 16
        size += xa_size(k, recs, alns, refs) + 16  # XS, XA
    buf = np.empty(size, dtype=np.uint8)
    p = 0
    hi = 0
    for k in range(rec_read.size):
        r = rec_read[k]
        hi = hi + 1 if k > 0 and rec_read[k - 1] == r else 1  # a read's records are consecutive
        li = rec_loc[k]
        mi = mate_loc[k]
        flag = rec_flag[k]
        paired = (flag & FLAG_PAIRED) != 0
        start = p
        n_name = name_off[r + 1] - name_off[r]
        a, b = offsets[r], offsets[r + 1]
        if (flag & FLAG_SECONDARY) != 0 and not secondary_seq:
            b = a  # l_seq 0: SEQ and QUAL '*'
        ref_id, pos, mapq, n_cig = -1, -1, 0, 0
        next_ref, next_pos, t = -1, -1, 0
        if li >= 0:
            ref_id = sequence_of(ref_starts, loc_s[li])
            pos = loc_s[li] - ref_starts[ref_id]
            mapq = rec_mapq[k]
            n_cig = n_runs[li]
            if paired:
                at = loc_s[li] if mi < 0 else loc_s[mi]  # an unmapped mate sits at this read's position
                next_ref = sequence_of(ref_starts, at)
                next_pos = at - ref_starts[next_ref]
                t = tlen[k]
        elif paired and mi >= 0:  # unmapped, placed at its mate
            ref_id = sequence_of(ref_starts, loc_s[mi])
            pos = loc_s[mi] - ref_starts[ref_id]
            next_ref, next_pos = ref_id, pos
        p = _put32(buf, p + 4, ref_id)  # block_size goes in at the end
        p = _put32(buf, p, pos)
        buf[p] = n_name + 1
        buf[p + 1] = mapq
        p += 4  # bin (two bytes at p - 2) once the reference span is known
        buf[p] = n_cig & 0xFF
        buf[p + 1] = n_cig >> 8
        buf[p + 2] = flag & 0xFF
        buf[p + 3] = flag >> 8
        p = _put32(buf, p + 4, b - a)
        p = _put32(buf, p, next_ref)
        p = _put32(buf, p, next_pos)
        p = _put32(buf, p, t)
        p = put_bytes(buf, p, names[name_off[r]:name_off[r + 1]])
        buf[p] = 0
        p += 1
        span = 1  # an unmapped read placed at its mate covers one base for the bin
        if li >= 0:
            p, span = _cigar_ops(buf, p, li, alns)
        bin_ = _reg2bin(pos, pos + span)
        buf[start + 14] = bin_ & 0xFF
        buf[start + 15] = bin_ >> 8
        p = _seq_qual(buf, p, codes, a, b, (flag & FLAG_REVERSE) != 0, quals, reads.has_quals)
        if li >= 0:
            d = loc_d[li]
            p = _tag_int(buf, p, 78, 77, d)  # NM
            p = _tag_str(buf, p, 77, 68, md[md_off[li]:md_off[li] + md_len[li]])  # MD
            p = _tag_int(buf, p, 65, 83, -d)  # AS
            p = _tag_int(buf, p, 78, 72, rec_nh[k])  # NH
            p = _tag_int(buf, p, 72, 73, hi)  # HI, as in the SAM text
            if recs.xs[k] != NO_XS:
                p = _tag_int(buf, p, 88, 83, recs.xs[k])  # XS
            if recs.xa_off[k + 1] > recs.xa_off[k]:
                p = xa_entries(buf, _tag_name(buf, p, 88, 65, 90), k, recs, alns, refs)  # XA, as text
                buf[p] = 0
                p += 1
        if paired and mi >= 0:
            p = put_cigar(buf, _tag_name(buf, p, 77, 67, 90), mi, alns)  # MC, as text
            buf[p] = 0
            p = _tag_int(buf, p + 1, 77, 81, mate_mapq[k])  # MQ
        if rg.size:
            p = _tag_str(buf, p, 82, 71, rg)  # RG
        _put32(buf, start, p - start - 4)
    return buf[:p]
