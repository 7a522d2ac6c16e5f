"""The index kind a run uses when the user names none: the neighborhood index for small references, the FM
index for large ones, and for mapping, an index already built for the reference before building another.

Why the size decides: a small genome's reads are mostly unique, and the neighborhood engine finds them with a
few table lookups (48 Mbp of bacteria, 200,000 reads, -t 2: 2.0 s against the FM engine's 11.4 s). A large
genome is mostly repeat families: the neighborhood index passes their diverged copies to verification and
stores 15 B/base, while the FM search walks them off within a few bases from a 3 B/base index (100 Mbp
human-like genome, 10,000 reads, -t 2: FM 4.1 s and 0.58 GB against 6.2 s and 2.3 GB, --best 1.9 s against
5.0 s). Every engine reports the same records, so the choice is one of speed and memory only;
benchmarks/human_like.py measures it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from seedmap.index import store

FM_FROM_BASES = 64_000_000  # references of about this size and more get the FM index
GZ_BASES_PER_BYTE = 4  # about what gzip leaves of a FASTA (2 bits a base, and headers and line ends gone)


def estimated_bases(fasta: str | Path) -> int:
    """About how many bases the FASTA holds, from its size alone (reading a human genome takes a minute):
    0 when it cannot be seen (a pipe, a missing file: reading it reports that)."""
    try:
        st = os.stat(fasta)
        if not stat.S_ISREG(st.st_mode):  # a pipe: a look would take bytes the reader needs
            return 0
        size = st.st_size
        with open(fasta, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
    except OSError:
        return 0
    return size * GZ_BASES_PER_BYTE if gz else size


def kind_for(bases: int) -> str:
    """The kind for a reference of this many bases (see the module docstring)."""
    return "fm" if bases >= FM_FROM_BASES else "neighborhood"


def size_kind(fasta: str | Path) -> str:
    """The kind for this reference FASTA, by its estimated size."""
    return kind_for(estimated_bases(fasta))


def map_kind(fasta: str | Path, index: str | Path | None) -> str:
    """The engine of a map run that names none: the kind of --index when given; else the size's kind when
    its index sits next to the reference, else any kind whose index does (no rebuild in memory), else the
    size's kind (built in memory)."""
    if index:
        return str(store.read_header(index).get("kind"))
    preferred = size_kind(fasta)
    for kind in (preferred, *(k for k in store.KIND_SUFFIX if k != preferred)):
        if store.default_path(fasta, kind).exists():
            return kind
    return preferred
