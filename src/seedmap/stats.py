"""`seedmap stats FILE`: what a SAM or BAM file says about its reads.

A read is a QNAME, or a QNAME and its mate bit (flag 64 / 128) for pairs. It is mapped when any of its
records is mapped, unique with exactly one location (mapped, non-supplementary record) and multi-mapped
with more. Edit distances are the NM tags; insert sizes |TLEN| of the first mate's primary record of
properly paired reads. The flagstat block counts exactly what `samtools flagstat` counts.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

import numpy as np

from seedmap.errors import SeedmapError
from seedmap.flags import (
    FLAG_DUPLICATE,
    FLAG_FIRST,
    FLAG_LAST,
    FLAG_MATE_UNMAPPED,
    FLAG_PAIRED,
    FLAG_PROPER,
    FLAG_QCFAIL,
    FLAG_SECONDARY,
    FLAG_SUPPLEMENTARY,
    FLAG_UNMAPPED,
)
from seedmap.io.output import samtools_message
from seedmap.io.sam_scan import SamFields, Summary, scan_chunk

CHUNK = 32 << 20
HIST_MAX = 20  # text histograms list values up to this, then one '>' line



# ---------------------------------------------------------------------------------------------- reading


def _scan_stream(fh: BinaryIO, label: str) -> SamFields:
    parts, carry, line0 = [], b"", 0
    while True:
        block = fh.read(CHUNK)
        data = carry + block
        if not block:
            cut = len(data)
        else:
            cut = data.rfind(b"\n") + 1
        if cut:
            fields, n_lines, bad = scan_chunk(data[:cut])
            if bad >= 0:
                raise SeedmapError(f"{label}: line {line0 + bad + 1} is not a SAM record (not a SAM or BAM file?)")
            parts.append(fields)
            line0 += n_lines - 1
        carry = data[cut:]
        if not block:
            return SamFields.concat(parts)


def _bgzf_fields(path: str, label: str, tmp: str) -> SamFields:
    """The fields of a BAM or bgzipped SAM file, converted to SAM text in `tmp` by pysam's samtools."""
    import pysam

    sam = os.path.join(tmp, "records.sam")
    pysam.set_verbosity(0)  # htslib's own messages would be extra stderr lines; samtools' come in exc
    try:
        pysam.samtools.view("-o", sam, path, catch_stdout=False)
    except pysam.utils.SamtoolsError as exc:
        raise SeedmapError(f"{label}: not a readable BAM file ({samtools_message(exc)})") from None
    with open(sam, "rb") as fh:
        return _scan_stream(fh, label)


def _check_magic(magic: bytes, label: str) -> None:
    if not magic:
        raise SeedmapError(f"{label}: empty file")
    if magic.startswith(b"CRAM"):
        raise SeedmapError(f"{label}: CRAM is not supported (convert it with 'samtools view -b')")


def _stdin_fields() -> SamFields:
    """SAM text, or BAM (its BGZF magic), on stdin. BAM is copied to a temporary file for samtools: what was
    peeked at has left the descriptor that samtools would read."""
    stdin = sys.stdin.buffer
    magic = stdin.peek(4)[:4] if hasattr(stdin, "peek") else b""
    if magic.startswith(b"\x1f\x8b"):
        with tempfile.TemporaryDirectory(prefix="seedmap-stats-") as tmp:
            copy = os.path.join(tmp, "stdin.bam")
            with open(copy, "wb") as fh:
                shutil.copyfileobj(stdin, fh, CHUNK)
            return _bgzf_fields(copy, "stdin", tmp)
    if magic:
        _check_magic(magic, "stdin")
    return _scan_stream(stdin, "stdin")


def read_fields(path: str) -> SamFields:
    """The record fields of a SAM file or a BAM / bgzipped SAM (via pysam's samtools); '-': either on stdin."""
    if path == "-":
        return _stdin_fields()
    p = Path(path)
    if p.is_dir():
        raise SeedmapError(f"{path}: is a directory")
    if not p.exists():
        raise SeedmapError(f"{path}: no such file")
    with open(p, "rb") as fh:
        magic = fh.read(4)
    _check_magic(magic, path)
    if magic.startswith(b"\x1f\x8b"):
        with tempfile.TemporaryDirectory(prefix="seedmap-stats-") as tmp:
            return _bgzf_fields(path, path, tmp)
    with open(p, "rb") as fh:
        return _scan_stream(fh, path)


# ---------------------------------------------------------------------------------------------- counting


def _percent(n: int, total: int) -> str:
    """samtools' percent(): (float)n / total * 100.0, or N/A."""
    if total == 0:
        return "N/A"
    return f"{float(np.float32(n) / np.float32(total)) * 100.0:.2f}%"


def flagstat(f: SamFields) -> dict[str, tuple[int, int]]:
    """The counts of samtools flagstat (bam_stat.c), QC-passed and QC-failed."""
    flag = f.flag
    fail = (flag & FLAG_QCFAIL) != 0
    unmapped = (flag & FLAG_UNMAPPED) != 0
    secondary = (flag & FLAG_SECONDARY) != 0
    supplementary = ((flag & FLAG_SUPPLEMENTARY) != 0) & ~secondary
    primary = ~secondary & ~supplementary
    paired = primary & ((flag & FLAG_PAIRED) != 0)
    pair_map = paired & ~unmapped & ((flag & FLAG_MATE_UNMAPPED) == 0)
    diffchr = pair_map & f.diff_ref
    masks = {
        "total": np.ones(flag.size, dtype=bool),
        "primary": primary,
        "secondary": secondary,
        "supplementary": supplementary,
        "duplicates": (flag & FLAG_DUPLICATE) != 0,
        "primary duplicates": primary & ((flag & FLAG_DUPLICATE) != 0),
        "mapped": ~unmapped,
        "primary mapped": primary & ~unmapped,
        "paired in sequencing": paired,
        "read1": paired & ((flag & FLAG_FIRST) != 0),
        "read2": paired & ((flag & FLAG_LAST) != 0),
        "properly paired": paired & ((flag & FLAG_PROPER) != 0) & ~unmapped,
        "with itself and mate mapped": pair_map,
        "singletons": paired & ((flag & FLAG_MATE_UNMAPPED) != 0) & ~unmapped,
        "with mate mapped to a different chr": diffchr,
        "with mate mapped to a different chr (mapQ>=5)": diffchr & (f.mapq >= 5),
    }
    return {k: (int(np.count_nonzero(m & ~fail)), int(np.count_nonzero(m & fail))) for k, m in masks.items()}


def format_flagstat(c: dict[str, tuple[int, int]]) -> str:
    """The text `samtools flagstat` prints for these counts."""
    pct_of = {"mapped": "total", "primary mapped": "primary", "properly paired": "paired in sequencing",
              "singletons": "paired in sequencing"}
    lines = []
    for key, (ok, bad) in c.items():
        label = "in total (QC-passed reads + QC-failed reads)" if key == "total" else key
        line = f"{ok} + {bad} {label}"
        if key in pct_of:
            tot = c[pct_of[key]]
            line += f" ({_percent(ok, tot[0])} : {_percent(bad, tot[1])})"
        lines.append(line)
    return "\n".join(lines) + "\n"


def summarise(f: SamFields) -> Summary:
    flag = f.flag
    unmapped = (flag & FLAG_UNMAPPED) != 0
    secondary = (flag & FLAG_SECONDARY) != 0
    supplementary = (flag & FLAG_SUPPLEMENTARY) != 0
    primary = ~secondary & ~supplementary
    # one key per read: QNAME hash with its low two bits replaced by the mate bits of paired records
    mate = np.where((flag & FLAG_PAIRED) != 0, (flag >> 6) & 3, 0).astype(np.uint64)
    key = (f.name & ~np.uint64(3)) | mate
    _, read_of = np.unique(key, return_inverse=True)
    n_reads = int(read_of.max()) + 1 if read_of.size else 0
    read_of = read_of.ravel()
    hits = np.bincount(read_of, weights=~unmapped & ~supplementary, minlength=n_reads).astype(np.int64)
    any_mapped = np.bincount(read_of, weights=~unmapped, minlength=n_reads) > 0
    multi = hits >= 2
    nm_ok = ~unmapped & (f.nm >= 0)
    insert = (primary & ~unmapped & ((flag & FLAG_PAIRED) != 0) & ((flag & FLAG_PROPER) != 0)
              & ((flag & FLAG_FIRST) != 0) & (f.tlen != 0))
    return Summary(
        records=int(flag.size), reads=n_reads, mapped=int(np.count_nonzero(any_mapped)),
        unique=int(np.count_nonzero(hits == 1)), multi=int(np.count_nonzero(multi)),
        mean_multi_hits=float(hits[multi].mean()) if multi.any() else 0.0,
        nm_primary=np.bincount(f.nm[nm_ok & primary]), nm_all=np.bincount(f.nm[nm_ok]),
        hits=np.bincount(hits), insert_sizes=np.abs(f.tlen[insert]), flagstat=flagstat(f))


# ---------------------------------------------------------------------------------------------- text


def _pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:.2f}%" if total else "N/A"


def _histogram_lines(columns: dict[str, np.ndarray], label: str) -> list[str]:
    width = max((c.size for c in columns.values()), default=0)
    rows = [f"{label:>14}" + "".join(f"{name:>14}" for name in columns)]
    padded = {k: np.pad(v, (0, width - v.size)) for k, v in columns.items()}
    for i in range(min(width, HIST_MAX + 1)):
        rows.append(f"{i:>14}" + "".join(f"{int(v[i]):>14}" for v in padded.values()))
    if width > HIST_MAX + 1:
        rows.append(f"{'>' + str(HIST_MAX):>14}" + "".join(f"{int(v[HIST_MAX + 1:].sum()):>14}"
                                                           for v in padded.values()))
    return rows


def format_summary(s: Summary) -> str:
    lines = [
        f"records                     {s.records}",
        f"reads                       {s.reads}",
        f"mapped                      {s.mapped} ({_pct(s.mapped, s.reads)})",
        f"unmapped                    {s.unmapped} ({_pct(s.unmapped, s.reads)})",
        f"uniquely mapped             {s.unique} ({_pct(s.unique, s.reads)})",
        f"multi-mapped                {s.multi} ({_pct(s.multi, s.reads)})",
        f"mean hits of multi-mapped   {s.mean_multi_hits:.2f}",
        "",
        "edit distance (NM) of mapped records",
        *_histogram_lines({"primary": s.nm_primary, "all": s.nm_all}, "NM"),
        "",
        "locations per read",
        *_histogram_lines({"reads": s.hits}, "hits"),
        "",
    ]
    ins = s.insert_sizes
    if ins.size:
        q = np.percentile(ins, [5, 25, 50, 75, 95])
        lines += ["insert size of proper pairs (|TLEN|, one per pair)",
                  f"pairs {ins.size}  mean {ins.mean():.1f}  sd {ins.std():.1f}  min {ins.min()}  "
                  f"5% {q[0]:.0f}  25% {q[1]:.0f}  median {q[2]:.0f}  75% {q[3]:.0f}  95% {q[4]:.0f}  max {ins.max()}",
                  ""]
    else:
        lines += ["insert size of proper pairs: no proper pairs", ""]
    lines += ["flagstat (as samtools flagstat)"]
    return "\n".join(lines) + "\n" + format_flagstat(s.flagstat)


def run_stats(path: str, plot: str | None) -> Summary:
    if plot:
        from seedmap.report_plot import check_plot_path

        check_plot_path(plot)
    summary = summarise(read_fields(path))
    if plot:
        from seedmap.report_plot import write_plot

        write_plot(summary, plot, title=os.path.basename(path))
    sys.stdout.write(format_summary(summary))
    return summary
