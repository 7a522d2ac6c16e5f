"""Streaming BAM output (io/bam_encode.py + io/bgzf.py) against `samtools view -b` on the same SAM text.

Maps a few thousand simulated pairs once, repeats their records until the SAM text is about --mb MB, then
times format_records, encode_records, BgzfWriter with 1 and 2 threads and pysam's `samtools view -b -@ 0/1/2`
(one run each).

    PYTHONPATH=src python benchmarks/bam_stream.py [--mb 50]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import dnaio
import numpy as np
import pysam

import seedmap.pipeline.stages
from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.index import neighborhood
from seedmap.io.alphabet import DECODE
from seedmap.io.bam_encode import bam_header, encode_records
from seedmap.io.bgzf import DEFLATE_NAME, BgzfWriter
from seedmap.io.reads import make_batch
from seedmap.io.reference import Reference
from seedmap.io.sam import format_records, header
from seedmap.paired.insert_size import InsertModel
from seedmap.pipeline import MapOptions, PairOptions, SamFormatter
from seedmap.pipeline.pair_stages import map_pair_batch


def pair_records(rng: np.random.Generator, n_pairs: int) -> tuple[Reference, tuple]:
    """format_records' arguments for n_pairs simulated 100 bp pairs (2% substitutions, some rc)."""
    seqs = [rng.integers(0, 4, 300_000).astype(np.uint8), rng.integers(0, 4, 100_000).astype(np.uint8)]
    ref = Reference.from_codes(["chr1", "chr2"], seqs)
    comp = np.array([3, 2, 1, 0, 4], dtype=np.uint8)
    recs = []
    for i in range(n_pairs):
        s = seqs[i % 2]
        p = int(rng.integers(0, s.size - 400))
        frag = s[p:p + int(rng.integers(250, 400))].copy()
        hits = rng.random(frag.size) < 0.02
        frag[hits] = (frag[hits] + 1) % 4
        a, b = frag[:100], comp[frag[-100:][::-1]]
        q = "".join(chr(33 + int(x)) for x in rng.integers(2, 41, 100))
        recs += [dnaio.SequenceRecord(f"pair{i}/sim", DECODE[a].tobytes().decode(), q),
                 dnaio.SequenceRecord(f"pair{i}/sim", DECODE[b].tobytes().decode(), q)]
    calls = []
    real = seedmap.pipeline.stages.format_records
    seedmap.pipeline.stages.format_records = lambda *a: calls.append(a) or real(*a)
    engine = NeighborhoodEngine(neighborhood.build(ref, 10, 16), ref.starts)
    map_pair_batch(make_batch(recs), engine, SamFormatter(ref), MapOptions(errors=4), PairOptions(),
                   InsertModel(325.0, 45.0))
    seedmap.pipeline.stages.format_records = real
    return ref, calls[0]


def repeat(args: tuple, times: int) -> tuple:
    """The records (the first argument) repeated: same reads, locations, alignments."""
    return (type(args[0])(*(np.tile(a, times) for a in args[0])), *args[1:])


def timed(f: object) -> tuple[float, object]:
    t = time.perf_counter()
    out = f()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--pairs", type=int, default=5000)
    opts = ap.parse_args()
    ref, args = pair_records(np.random.default_rng(1), opts.pairs)
    one = format_records(*args).size
    encode_records(*args)  # compiled (or loaded from the cache) before timing
    args = repeat(args, max(1, round(opts.mb * 1e6 / one)))
    n = args[0].read.size
    t_sam, sam = timed(lambda: format_records(*args))
    t_enc, bam = timed(lambda: encode_records(*args))
    text = header(ref, "bench")
    head = bam_header(text, ref.names, ref.lengths)
    mb_sam, mb_bam = sam.size / 1e6, bam.size / 1e6
    print(f"{n} records, {mb_sam:.1f} MB SAM text, {mb_bam:.1f} MB uncompressed BAM; load {os.getloadavg()[0]:.2f}")
    print(f"format_records  {t_sam:6.2f} s  {mb_sam / t_sam:7.1f} MB/s SAM  {n / t_sam / 1e6:5.2f} M records/s")
    print(f"encode_records  {t_enc:6.2f} s  {mb_bam / t_enc:7.1f} MB/s BAM  {n / t_enc / 1e6:5.2f} M records/s")
    with tempfile.TemporaryDirectory() as tmp:
        for threads in (1, 2):
            path = os.path.join(tmp, f"t{threads}.bam")

            def bgzf(path: str = path, threads: int = threads) -> None:
                with open(path, "wb") as fh, BgzfWriter(fh, threads) as w:
                    w.write(head)
                    for k in range(0, bam.size, 4 << 20):  # in 4 MB pieces, as batches would come
                        w.write(bam[k:k + (4 << 20)])

            t, _ = timed(bgzf)
            size = os.path.getsize(path) / 1e6
            print(f"BgzfWriter -t {threads}  {t:6.2f} s  {mb_bam / t:7.1f} MB/s BAM in  ({size:.1f} MB out, "
                  f"{DEFLATE_NAME})")
        sam_path = os.path.join(tmp, "x.sam")
        with open(sam_path, "wb") as fh:
            fh.write(text.encode())
            fh.write(sam.tobytes())
        for threads in (0, 1, 2):  # samtools' -@: threads besides the main one
            out = os.path.join(tmp, f"s{threads}.bam")
            t, _ = timed(lambda out=out, threads=threads: pysam.samtools.view(
                "-b", "--no-PG", "-@", str(threads), "-o", out, sam_path, catch_stdout=False))
            size = os.path.getsize(out) / 1e6
            print(f"samtools -@ {threads}    {t:6.2f} s  {mb_sam / t:7.1f} MB/s SAM in  "
                  f"(= {mb_bam / t:.1f} MB/s BAM; {size:.1f} MB out)")


if __name__ == "__main__":
    main()
