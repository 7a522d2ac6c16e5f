"""A batch's records as columns of numpy arrays (the Python API's results, seedmap.api): each column taken from
the arrays the SAM and BAM writers read (io/columns.py), with the fields written as SAM writes them (io/sam.py),
none parsed back from SAM text.

The text columns (names, CIGAR, MD) are numpy string arrays. A kernel lays each record's text out in a row of
a zero-padded byte matrix, which numpy views as fixed-width bytes and casts to str: no Python code per record.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from seedmap.flags import FLAG_PAIRED, FLAG_REVERSE, FLAG_SECONDARY, FLAG_SUPPLEMENTARY
from seedmap.io.ascii import CIGAR_CHARS, write_int
from seedmap.io.columns import Alignments, Reads, Records, RefNames

STAR = np.frombuffer(b"*", dtype=np.uint8)
NOTHING = np.zeros(0, dtype=np.uint8)


def strings(matrix: np.ndarray) -> np.ndarray:
    """Rows of a zero-padded uint8 matrix as a numpy str array (trailing zeros dropped, as numpy's bytes do)."""
    n, width = matrix.shape
    if width == 0:
        return np.full(n, "", dtype="U1")
    return np.ascontiguousarray(matrix).view(f"S{width}").reshape(n).astype(np.str_)


@njit(cache=True, nogil=True)
def slices_matrix(data: np.ndarray, start: np.ndarray, length: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Row k: data[start[k]:start[k] + length[k]], or `missing` where length[k] < 0; zero-padded."""
    width = missing.size
    for k in range(start.size):
        width = max(width, length[k])
    out = np.zeros((start.size, width), dtype=np.uint8)
    for k in range(start.size):
        if length[k] < 0:
            for i in range(missing.size):  # (loops, not slice assignments: ranges.put says why)
                out[k, i] = missing[i]
        else:
            for i in range(length[k]):
                out[k, i] = data[start[k] + i]
    return out


@njit(cache=True, nogil=True)
def cigar_matrix(rec_loc: np.ndarray, cig_off: np.ndarray, n_runs: np.ndarray, ops: np.ndarray,
                 lens: np.ndarray) -> np.ndarray:
    """Row k: the CIGAR of record k's location as SAM writes it ('*' for an unmapped record); zero-padded."""
    n = rec_loc.size
    bound = 0
    for k in range(n):
        li = rec_loc[k]
        bound += 1 if li < 0 else 11 * n_runs[li]
    flat = np.empty(bound, dtype=np.uint8)
    off = np.zeros(n + 1, dtype=np.int64)
    p = 0
    width = 1
    for k in range(n):
        li = rec_loc[k]
        if li < 0:
            flat[p] = 42  # '*'
            p += 1
        else:
            for c in range(cig_off[li], cig_off[li] + n_runs[li]):
                p = write_int(flat, p, lens[c])
                flat[p] = CIGAR_CHARS[ops[c]]
                p += 1
        off[k + 1] = p
        width = max(width, p - off[k])
    out = np.zeros((n, width), dtype=np.uint8)
    for k in range(n):
        for i in range(off[k + 1] - off[k]):
            out[k, i] = flat[off[k] + i]
    return out


def record_columns(recs: Records, reads: Reads, alns: Alignments, refs: RefNames, first: int) -> dict[str, np.ndarray]:
    """The columns of a batch's records (seedmap.api.Mapped's fields but `ref_names`); `first`: the batch's
    first read's number in the input. Positions are 0-based; a record without a location has ref_id and pos -1
    (a placed unmapped mate included), strand 0, CIGAR '*', NM -1 and MD ''."""
    loc = recs.loc
    mapped = loc >= 0
    li = np.where(mapped, loc, 0)
    has_loc = alns.start.size > 0
    start = alns.start[li] if has_loc else np.zeros(loc.size, dtype=np.int64)
    ref_id = np.where(mapped, np.searchsorted(refs.starts, start, side="right") - 1, -1)
    pos = np.where(mapped, start - refs.starts[np.maximum(ref_id, 0)], -1)
    flag = recs.flag.astype(np.uint16)
    strand = np.where(mapped, np.where(flag & FLAG_REVERSE, -1, 1), 0).astype(np.int8)
    dist = alns.dist[li] if has_loc else np.zeros(loc.size, dtype=np.int64)
    nm = np.where(mapped, dist, -1).astype(np.int32)
    md_len = np.where(mapped, alns.md_len[li] if has_loc else 0, -1)
    md = strings(slices_matrix(alns.md, alns.md_off[li] if has_loc else np.zeros(loc.size, np.int64), md_len,
                               NOTHING))
    r = recs.read
    names = strings(slices_matrix(reads.names, reads.name_off[r], reads.name_off[r + 1] - reads.name_off[r], STAR))
    cigar = strings(cigar_matrix(loc, alns.cig_off, alns.n_runs, alns.ops, alns.lens))
    # The mate's placement as SAM's RNEXT/PNEXT: the mate's primary location; an unmapped mate sits at this
    # read's position. -1 for single-end records and pairs with neither mate mapped.
    mi = recs.mate_loc
    at = np.where(mi >= 0, alns.start[np.maximum(mi, 0)] if has_loc else 0, start)
    placed = ((flag & FLAG_PAIRED) != 0) & ((mi >= 0) | mapped)
    mate_ref = np.where(placed, np.searchsorted(refs.starts, at, side="right") - 1, -1)
    mate_pos = np.where(placed, at - refs.starts[np.maximum(mate_ref, 0)], -1)
    return {
        "read": (r + first).astype(np.int64), "name": names, "flag": flag, "ref_id": ref_id.astype(np.int32),
        "pos": pos.astype(np.int64), "strand": strand, "mapq": np.where(mapped, recs.mapq, 0).astype(np.uint8),
        "cigar": cigar, "nm": nm, "md": md, "nh": np.where(mapped, recs.nh, 0).astype(np.int32),
        "primary": mapped & ((flag & (FLAG_SECONDARY | FLAG_SUPPLEMENTARY)) == 0),
        "mate_ref_id": mate_ref.astype(np.int32), "mate_pos": mate_pos.astype(np.int64),
        "tlen": recs.tlen.astype(np.int64),
    }

