"""SAM output: header lines and a numba kernel that formats a batch of records into bytes."""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.flags import FLAG_PAIRED, FLAG_REVERSE, FLAG_SECONDARY
from seedmap.io.ascii import CIGAR_CHARS, write_int
from seedmap.io.columns import NO_XS, Alignments, Reads, Records, RefNames
from seedmap.io.reference import Reference, sequence_of
from seedmap.ranges import put
from seedmap.version import __version__

BASES = np.frombuffer(b"ACGTN", dtype=np.uint8)
RC_BASES = np.frombuffer(b"TGCAN", dtype=np.uint8)
UNMAPPED_FIELDS = np.frombuffer(b"*\t0\t0\t*\t*\t0\t0", dtype=np.uint8)  # RNAME..TLEN
MATE_FIELDS = np.frombuffer(b"\t*\t0\t0", dtype=np.uint8)  # RNEXT, PNEXT, TLEN
MD_TAG = np.frombuffer(b"\tMD:Z:", dtype=np.uint8)
MC_TAG = np.frombuffer(b"\tMC:Z:", dtype=np.uint8)
XA_TAG = np.frombuffer(b"\tXA:Z:", dtype=np.uint8)
XA_BYTES = 48  # an XA entry's bytes besides its sequence name and CIGAR: the sign, POS, NM and separators
UNMAPPED_MAPQ_CIGAR = np.frombuffer(b"\t0\t*\t=\t", dtype=np.uint8)  # MAPQ, CIGAR, RNEXT of a placed unmapped mate


def header(ref: Reference, command_line: str) -> str:
    lines = ["@HD\tVN:1.6\tSO:unsorted"]
    lines += [f"@SQ\tSN:{name}\tLN:{int(length)}" for name, length in zip(ref.names, ref.lengths, strict=True)]
    cl = command_line.replace("\t", " ").replace("\n", " ")
    lines.append(f"@PG\tID:seedmap\tPN:seedmap\tVN:{__version__}\tCL:{cl}")
    return "\n".join(lines) + "\n"


@njit(cache=True, nogil=True, _nrt=False)
def put_bytes(buf: np.ndarray, p: int, src: np.ndarray) -> int:
    """src written into buf at p; the position after it (SAM's fields and BAM's strings alike)."""
    put(buf, p, src)
    return p + src.size


@njit(cache=True, nogil=True, _nrt=False)
def _tag_int(buf: np.ndarray, p: int, a: int, b: int, value: int) -> int:
    buf[p] = 9
    buf[p + 1] = a
    buf[p + 2] = b
    buf[p + 3] = 58
    buf[p + 4] = 105  # 'i'
    buf[p + 5] = 58
    p += 6
    if value < 0:
        buf[p] = 45
        p += 1
        value = -value
    return write_int(buf, p, value)


@njit(cache=True, nogil=True, _nrt=False)
def put_cigar(buf: np.ndarray, p: int, li: int, alns: Alignments) -> int:
    """Location li's CIGAR as text at buf[p:] (SAM's CIGAR, and the MC tag of SAM and BAM); the position after it."""
    for c in range(alns.cig_off[li], alns.cig_off[li] + alns.n_runs[li]):
        p = write_int(buf, p, alns.lens[c])
        buf[p] = CIGAR_CHARS[alns.ops[c]]
        p += 1
    return p


@njit(cache=True, nogil=True, _nrt=False)
def _ref_pos(buf: np.ndarray, p: int, pos: int, refs: RefNames) -> int:
    """RNAME<TAB>POS of a global position."""
    s = sequence_of(refs.starts, pos)
    p = put_bytes(buf, p, refs.names[refs.name_off[s]:refs.name_off[s + 1]])
    buf[p] = 9
    return write_int(buf, p + 1, pos - refs.starts[s] + 1)


@njit(cache=True, nogil=True, _nrt=False)
def xa_entries(buf: np.ndarray, p: int, k: int, recs: Records, alns: Alignments, refs: RefNames) -> int:
    """Record k's XA value as bwa writes it: `RNAME,±POS,CIGAR,NM;` per alternative (Records.xa_loc)."""
    for a in range(recs.xa_off[k], recs.xa_off[k + 1]):
        li = recs.xa_loc[a] >> 1
        pos = alns.start[li]
        s = sequence_of(refs.starts, pos)
        p = put_bytes(buf, p, refs.names[refs.name_off[s]:refs.name_off[s + 1]])
        buf[p] = 44  # ','
        buf[p + 1] = 45 if recs.xa_loc[a] & 1 else 43  # '-' / '+'
        p = write_int(buf, p + 2, pos - refs.starts[s] + 1)
        buf[p] = 44
        p = put_cigar(buf, p + 1, li, alns)
        buf[p] = 44
        p = write_int(buf, p + 1, alns.dist[li])
        buf[p] = 59  # ';'
        p += 1
    return p


@njit(cache=True, nogil=True, _nrt=False)
def xa_size(k: int, recs: Records, alns: Alignments, refs: RefNames) -> int:
    """An upper bound of the bytes of record k's XA value."""
    size = 0
    for a in range(recs.xa_off[k], recs.xa_off[k + 1]):
        li = recs.xa_loc[a] >> 1
        s = sequence_of(refs.starts, alns.start[li])
        size += refs.name_off[s + 1] - refs.name_off[s] + 11 * alns.n_runs[li] + XA_BYTES
    return size


def format_records(recs: Records, reads: Reads, alns: Alignments, refs: RefNames,
                   secondary_seq: bool = False) -> np.ndarray:
    """SAM lines of a batch of records. Paired records (flag 1) take the mate fields of recs (mate_loc: the
    mate's primary location, -1 if unmapped): RNEXT/PNEXT/TLEN and MC/MQ tags; an unmapped mate of a
    mapped read is placed at its mate's position (SAM recommended practice). Secondary records (flag 256)
    get SEQ and QUAL '*', as in bwa mem, minimap2 and yara, unless secondary_seq: the primary record holds
    them, and leaving them out halves the output of multi-mapping runs."""
    return _format(tuple(recs), tuple(reads), tuple(alns), tuple(refs), secondary_seq)


@njit(cache=True, nogil=True)
def _format(rec_t: tuple, read_t: tuple, aln_t: tuple, ref_t: tuple, secondary_seq: bool) -> np.ndarray:
    """format_records' kernel. It takes the NamedTuples as plain tuples and names their fields again here:
    numba's dispatcher types a NamedTuple of arrays about 1 µs slower than a plain tuple, per call."""
    recs, reads, alns, refs = Records(*rec_t), Reads(*read_t), Alignments(*aln_t), RefNames(*ref_t)
    rec_read, rec_loc, mate_loc = recs.read, recs.loc, recs.mate_loc
    name_off, offsets = reads.name_off, reads.offsets
    loc_s, n_runs, md_len = alns.start, alns.n_runs, alns.md_len
    ref_starts, ref_name_off = refs.starts, refs.name_off
    # Upper bound of the output size, then one pass writing it.
    size = 0
    for k in range(rec_read.size):
        r = rec_read[k]
        m = offsets[r + 1] - offsets[r]
        size += name_off[r + 1] - name_off[r] + 2 * m + 190
        li = rec_loc[k]
        if li >= 0:
            s = sequence_of(ref_starts, loc_s[li])
            size += ref_name_off[s + 1] - ref_name_off[s] + 11 * n_runs[li] + md_len[li]
        mi = mate_loc[k]
        if mi >= 0:
            s = sequence_of(ref_starts, loc_s[mi])
            size += 2 * (ref_name_off[s + 1] - ref_name_off[s]) + 11 * n_runs[mi] + 80
        size += xa_size(k, recs, alns, refs)
    buf = np.empty(size, dtype=np.uint8)
    return buf[:_write(recs, reads, alns, refs, secondary_seq, buf)]


@njit(cache=True, nogil=True, _nrt=False)  # no atomic reference counts on the per-record slices (align._align_block)
def _write(recs: Records, reads: Reads, alns: Alignments, refs: RefNames, secondary_seq: bool, buf: np.ndarray) -> int:
    """_format's records written into buf (large enough); returns the bytes written."""
    rec_read, rec_loc, rec_flag, rec_mapq, rec_nh = recs.read, recs.loc, recs.flag, recs.mapq, recs.nh
    mate_loc, mate_mapq, tlen = recs.mate_loc, recs.mate_mapq, recs.tlen
    names, name_off, codes, offsets, quals = reads.names, reads.name_off, reads.codes, reads.offsets, reads.quals
    loc_s, loc_d, md_off, md, md_len = alns.start, alns.dist, alns.md_off, alns.md, alns.md_len
    ref_starts, ref_names, ref_name_off = refs.starts, refs.names, refs.name_off
    p = 0
    hi = 0
    for k in range(rec_read.size):
        r = rec_read[k]
        hi = hi + 1 if k > 0 and rec_read[k - 1] == r else 1  # a read's records are consecutive
        li = rec_loc[k]
        mi = mate_loc[k]
        flag = rec_flag[k]
        paired = (flag & FLAG_PAIRED) != 0
        p = put_bytes(buf, p, names[name_off[r]:name_off[r + 1]])
        buf[p] = 9
        p = write_int(buf, p + 1, flag)
        buf[p] = 9
        p += 1
        if li < 0 and paired and mi >= 0:  # unmapped, placed at its mate
            p = _ref_pos(buf, p, loc_s[mi], refs)
            p = put_bytes(buf, p, UNMAPPED_MAPQ_CIGAR)
            p = write_int(buf, p, loc_s[mi] - ref_starts[sequence_of(ref_starts, loc_s[mi])] + 1)
            buf[p] = 9
            buf[p + 1] = 48
            p += 2
        elif li < 0:
            p = put_bytes(buf, p, UNMAPPED_FIELDS)
        else:
            p = _ref_pos(buf, p, loc_s[li], refs)
            buf[p] = 9
            p = write_int(buf, p + 1, rec_mapq[k])
            buf[p] = 9
            p = put_cigar(buf, p + 1, li, alns)
            if not paired:
                p = put_bytes(buf, p, MATE_FIELDS)
            else:
                own = sequence_of(ref_starts, loc_s[li])
                at = loc_s[li] if mi < 0 else loc_s[mi]  # an unmapped mate sits at this read's position
                s = sequence_of(ref_starts, at)
                buf[p] = 9
                p += 1
                if s == own:
                    buf[p] = 61  # '='
                    p += 1
                else:
                    p = put_bytes(buf, p, ref_names[ref_name_off[s]:ref_name_off[s + 1]])
                buf[p] = 9
                p = write_int(buf, p + 1, at - ref_starts[s] + 1)
                buf[p] = 9
                p += 1
                t = tlen[k]
                if t < 0:
                    buf[p] = 45
                    p += 1
                    t = -t
                p = write_int(buf, p, t)
        buf[p] = 9
        p += 1
        a, b = offsets[r], offsets[r + 1]
        if (flag & FLAG_SECONDARY) != 0 and not secondary_seq:
            b = a  # SEQ and QUAL '*'
        reverse = (flag & FLAG_REVERSE) != 0
        for i in range(b - a):
            if reverse:
                buf[p + i] = RC_BASES[codes[b - 1 - i]]
            else:
                buf[p + i] = BASES[codes[a + i]]
        if b == a:
            buf[p] = 42  # '*'
            p += 1
        p += b - a
        buf[p] = 9
        p += 1
        if reads.has_quals and b > a:
            for i in range(b - a):
                buf[p + i] = quals[b - 1 - i] if reverse else quals[a + i]
            p += b - a
        else:
            buf[p] = 42
            p += 1
        if li >= 0:
            d = loc_d[li]
            p = _tag_int(buf, p, 78, 77, d)  # NM
            p = put_bytes(buf, p, MD_TAG)
            p = put_bytes(buf, p, md[md_off[li]:md_off[li] + md_len[li]])
            p = _tag_int(buf, p, 65, 83, -d)  # AS
            p = _tag_int(buf, p, 78, 72, rec_nh[k])  # NH
            p = _tag_int(buf, p, 72, 73, hi)  # HI: 1-based among the read's records, as STAR and HISAT2 write it
            if recs.xs[k] != NO_XS:
                p = _tag_int(buf, p, 88, 83, recs.xs[k])  # XS
            if recs.xa_off[k + 1] > recs.xa_off[k]:
                p = xa_entries(buf, put_bytes(buf, p, XA_TAG), k, recs, alns, refs)
        if paired and mi >= 0:
            p = put_bytes(buf, p, MC_TAG)
            p = put_cigar(buf, p, mi, alns)
            p = _tag_int(buf, p, 77, 81, mate_mapq[k])  # MQ
        buf[p] = 10
        p += 1
    return p
