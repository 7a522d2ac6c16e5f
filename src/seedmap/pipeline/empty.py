"""A map run of input that holds no reads: the header alone, exit 0, as bwa, minimap2 and bowtie2 do (a
pipeline's later steps, samtools among them, take an empty SAM/BAM; an error would stop the pipeline)."""

from __future__ import annotations

import logging

from seedmap.io.output import open_sink
from seedmap.io.reference import Reference
from seedmap.io.sam import header
from seedmap.pipeline.run_options import RunOptions

log = logging.getLogger("seedmap")


def header_only(opts: RunOptions, ref: Reference) -> None:
    with open_sink(opts.output, ref, 1, opts.reference) as sink:
        text = header(ref, opts.command_line)
        sink.header(opts.read_group.add_to_header(text) if opts.read_group else text)
    files = ", ".join(p for p in (opts.reads, opts.reads2) if p is not None)
    log.info("%s: no %s; wrote the header only", files, "read pairs" if opts.paired else "reads")
