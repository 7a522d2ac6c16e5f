"""The arrays of a batch (its queries, the reference, the SAM or BAM records written from them), grouped by
what they describe. numba takes NamedTuples of arrays as kernel arguments, so the kernels take a few of these
instead of two dozen arrays in an order that only the signature remembers."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

NO_XS = 1  # Records.xs of a record without XS (an alignment score is never positive: AS = -NM)


class Records(NamedTuple):
    """One row per SAM record, in output order (a read's records consecutive, its primary first). loc: the
    record's location (an index into Alignments), -1 for an unmapped read. mate_loc: the mate's primary
    location, -1 when the mate is unmapped or the read single-end; mate_mapq and tlen: 0 there. xs: a primary's
    XS (the alignment score of its read's best other location), NO_XS elsewhere. The XA tag of record k lists
    the locations xa_loc[xa_off[k]:xa_off[k + 1]] (2 * location + strand; xa_off: one more than the records)."""

    read: np.ndarray
    loc: np.ndarray
    flag: np.ndarray
    mapq: np.ndarray
    nh: np.ndarray
    mate_loc: np.ndarray
    mate_mapq: np.ndarray
    tlen: np.ndarray
    xs: np.ndarray
    xa_off: np.ndarray
    xa_loc: np.ndarray


class Reads(NamedTuple):
    """A batch's reads (io.reads.ReadBatch): read i's name is names[name_off[i]:name_off[i + 1]], its codes
    and ASCII qualities codes/quals[offsets[i]:offsets[i + 1]] (quals: empty when has_quals is False)."""

    names: np.ndarray
    name_off: np.ndarray
    codes: np.ndarray
    offsets: np.ndarray
    quals: np.ndarray
    has_quals: bool


class Alignments(NamedTuple):
    """Per location l: its start (global; the record's POS), edit distance, and alignment: CIGAR runs
    ops/lens[cig_off[l]:cig_off[l] + n_runs[l]] (0/1/2: M/I/D), MD md[md_off[l]:md_off[l] + md_len[l]]."""

    start: np.ndarray
    dist: np.ndarray
    cig_off: np.ndarray
    ops: np.ndarray
    lens: np.ndarray
    n_runs: np.ndarray
    md_off: np.ndarray
    md: np.ndarray
    md_len: np.ndarray


class RefNames(NamedTuple):
    """Sequence s starts at global position starts[s]; its name is names[name_off[s]:name_off[s + 1]]."""

    starts: np.ndarray
    names: np.ndarray
    name_off: np.ndarray


class Queries(NamedTuple):
    """A batch's queries as the kernels read them: query q (2 * read + strand) is codes[off[q]:off[q + 1]],
    searched with err[q >> 1] edits."""

    codes: np.ndarray
    off: np.ndarray
    err: np.ndarray


class PackedRef(NamedTuple):
    """The reference 2 bits a base (packed) with its N mask, one bit a base (nmask): io.reference's packing."""

    packed: np.ndarray
    nmask: np.ndarray
