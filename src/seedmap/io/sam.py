"""SAM output: header lines and a numba kernel that formats a batch of records into bytes."""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap import __version__
from seedmap.io.reference import Reference
from seedmap.verify.align import CIGAR_CHARS, _write_int

BASES = np.frombuffer(b"ACGTN", dtype=np.uint8)
RC_BASES = np.frombuffer(b"TGCAN", dtype=np.uint8)
UNMAPPED_FIELDS = np.frombuffer(b"*\t0\t0\t*\t*\t0\t0", dtype=np.uint8)  # RNAME..TLEN
MATE_FIELDS = np.frombuffer(b"\t*\t0\t0", dtype=np.uint8)  # RNEXT, PNEXT, TLEN
MD_TAG = np.frombuffer(b"\tMD:Z:", dtype=np.uint8)


def header(ref: Reference, command_line: str) -> str:
    lines = ["@HD\tVN:1.6\tSO:unsorted"]
    lines += [f"@SQ\tSN:{name}\tLN:{int(length)}" for name, length in zip(ref.names, ref.lengths, strict=True)]
    cl = command_line.replace("\t", " ").replace("\n", " ")
    lines.append(f"@PG\tID:seedmap\tPN:seedmap\tVN:{__version__}\tCL:{cl}")
    return "\n".join(lines) + "\n"


@njit(cache=True, nogil=True)
def _copy(buf: np.ndarray, p: int, src: np.ndarray) -> int:
    buf[p:p + src.size] = src
    return p + src.size


@njit(cache=True, nogil=True)
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
    return _write_int(buf, p, value)


@njit(cache=True, nogil=True)
def format_records(rec_read: np.ndarray, rec_loc: np.ndarray, rec_flag: np.ndarray, rec_mapq: np.ndarray,
                   rec_nh: np.ndarray, names: np.ndarray, name_off: np.ndarray, codes: np.ndarray,
                   offsets: np.ndarray, quals: np.ndarray, has_quals: bool, loc_s: np.ndarray,
                   loc_d: np.ndarray, ref_starts: np.ndarray, ref_names: np.ndarray, ref_name_off: np.ndarray,
                   cig_off: np.ndarray, ops: np.ndarray, lens: np.ndarray, n_runs: np.ndarray,
                   md_off: np.ndarray, md: np.ndarray, md_len: np.ndarray) -> np.ndarray:
    # Upper bound of the output size, then one pass writing it.
    size = 0
    for k in range(rec_read.size):
        r = rec_read[k]
        m = offsets[r + 1] - offsets[r]
        size += name_off[r + 1] - name_off[r] + 2 * m + 160
        li = rec_loc[k]
        if li >= 0:
            s = np.searchsorted(ref_starts, loc_s[li], side="right") - 1
            size += ref_name_off[s + 1] - ref_name_off[s] + 11 * n_runs[li] + md_len[li]
    buf = np.empty(size, dtype=np.uint8)
    p = 0
    for k in range(rec_read.size):
        r = rec_read[k]
        li = rec_loc[k]
        flag = rec_flag[k]
        p = _copy(buf, p, names[name_off[r]:name_off[r + 1]])
        buf[p] = 9
        p = _write_int(buf, p + 1, flag)
        buf[p] = 9
        p += 1
        if li < 0:
            p = _copy(buf, p, UNMAPPED_FIELDS)
        else:
            s = np.searchsorted(ref_starts, loc_s[li], side="right") - 1
            p = _copy(buf, p, ref_names[ref_name_off[s]:ref_name_off[s + 1]])
            buf[p] = 9
            p = _write_int(buf, p + 1, loc_s[li] - ref_starts[s] + 1)
            buf[p] = 9
            p = _write_int(buf, p + 1, rec_mapq[k])
            buf[p] = 9
            p += 1
            for c in range(cig_off[li], cig_off[li] + n_runs[li]):
                p = _write_int(buf, p, lens[c])
                buf[p] = CIGAR_CHARS[ops[c]]
                p += 1
            p = _copy(buf, p, MATE_FIELDS)
        buf[p] = 9
        p += 1
        a, b = offsets[r], offsets[r + 1]
        reverse = (flag & 16) != 0
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
        if has_quals and b > a:
            for i in range(b - a):
                buf[p + i] = quals[b - 1 - i] if reverse else quals[a + i]
            p += b - a
        else:
            buf[p] = 42
            p += 1
        if li >= 0:
            d = loc_d[li]
            p = _tag_int(buf, p, 78, 77, d)  # NM
            p = _copy(buf, p, MD_TAG)
            p = _copy(buf, p, md[md_off[li]:md_off[li] + md_len[li]])
            p = _tag_int(buf, p, 65, 83, -d)  # AS
            p = _tag_int(buf, p, 78, 72, rec_nh[k])  # NH
        buf[p] = 10
        p += 1
    return buf[:p]
