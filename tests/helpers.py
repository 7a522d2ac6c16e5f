"""Helpers shared by the tests: inputs (genomes, reads, batches, FASTA/FASTQ text), engines, the oracle
checks, and the command line run as a black box. Tests import from here, never from one another (and
never from conftest, which holds only fixtures)."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

import dnaio
import numpy as np
from oracle import group, hits_one

from seedmap.engines.factory import neighborhood_engine
from seedmap.engines.kmer import KmerEngine
from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.index import kmer, neighborhood
from seedmap.io.alphabet import DECODE
from seedmap.io.reads import make_batch
from seedmap.io.reference import Reference
from seedmap.paired.insert_size import InsertModel
from seedmap.pipeline import EngineOptions, MapOptions, RunOptions, errors_per_read, locate
from seedmap.pipeline.run import run_map
from seedmap.verify import windows as cpu_windows
from seedmap.verify.align import Traceback, align
from seedmap.verify.bulk import AUTO, bulk_distances, window_of

# --------------------------------------------------------------------------------------- genomes, reads, batches


COMP = np.array([3, 2, 1, 0, 4], dtype=np.uint8)
NO_TABLE = np.zeros((1, 2), dtype=np.uint32)  # no k-mer table (fm_lookup.py): every search from its first symbol


def decode(codes: np.ndarray) -> str:
    return DECODE[codes].tobytes().decode()


def random_genome(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 4, n).astype(np.uint8)


def genome_with_n(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random genome of n bases with up to three N runs."""
    g = random_genome(rng, n)
    for _ in range(int(rng.integers(0, 4))):
        if n:
            a = int(rng.integers(0, n))
            g[a:a + int(rng.integers(1, 30))] = 4
    return g


def repetitive_genome(rng: np.random.Generator) -> list[np.ndarray]:
    """Tandem repeats, many mutated copies of one segment, a poly-A run, N runs, a tiny sequence."""
    seg = random_genome(rng, 150)
    parts = [random_genome(rng, 300)]
    for _ in range(12):
        copy = seg.copy()
        for k in rng.integers(0, copy.size, rng.integers(0, 3)):
            copy[k] = rng.integers(0, 4)
        parts += [copy, random_genome(rng, int(rng.integers(0, 40)))]
    parts.append(np.tile(np.array([0, 1, 2, 3, 3, 2], np.uint8), 60))  # tandem repeat
    parts.append(np.full(80, 0, np.uint8))
    parts.append(np.full(25, 4, np.uint8))  # N run
    parts.append(np.tile(np.array([0, 1], np.uint8), 70))
    parts.append(random_genome(rng, 200))
    chrom1 = np.concatenate(parts)
    chrom2 = np.concatenate([seg[:90], np.full(3, 4, np.uint8), seg[60:], random_genome(rng, 100)])
    return [chrom1, chrom2, random_genome(rng, 7)]


def ragged_fasta(records: list[tuple[str, str]], rng: np.random.Generator, min_width: int = 1,
                 description: str = "some description") -> str:
    """FASTA text with lines of random widths (min_width..89), as real references have."""
    text = ""
    for name, seq in records:
        text += f">{name} {description}\n"
        i = 0
        while i < len(seq):
            width = int(rng.integers(min_width, 90))
            text += seq[i:i + width] + "\n"
            i += width
    return text


def mutate(rng: np.random.Generator, read: np.ndarray, edits: int) -> np.ndarray:
    r = list(read)
    for _ in range(edits):
        k = int(rng.integers(0, len(r) + 1))
        op = rng.integers(0, 4)
        if op == 0 and k < len(r):
            r[k] = (r[k] + rng.integers(1, 4)) % 4
        elif op == 1:
            r.insert(k, int(rng.integers(0, 4)))
        elif op == 2 and k < len(r) and len(r) > 1:
            del r[k]
        elif k < len(r):
            r[k] = 4  # N in the read
    return np.array(r, dtype=np.uint8)


def young_family(rng: np.random.Generator, copies: int) -> np.ndarray:
    """A random genome holding `copies` copies of one 160-base element, each with up to 3 edits (a young
    repeat family: a read of one copy is within a few edits of hundreds)."""
    element = random_genome(rng, 160)
    parts = [random_genome(rng, 500)]
    for _ in range(copies):
        parts += [mutate(rng, element, int(rng.integers(0, 4))), random_genome(rng, int(rng.integers(5, 60)))]
    return np.concatenate(parts).astype(np.uint8)


def sample_reads(rng: np.random.Generator, seqs: list[np.ndarray], n: int, lengths: tuple[int, int],
                 max_edits: int) -> list[np.ndarray]:
    reads = []
    for _ in range(n):
        s = seqs[int(rng.integers(0, len(seqs)))]
        m = int(rng.integers(*lengths))
        if s.size < m or rng.random() < 0.1:
            read = random_genome(rng, m)
        else:
            p = int(rng.integers(0, s.size - m + 1))
            read = mutate(rng, s[p:p + m], int(rng.integers(0, max_edits + 1)))
        if rng.random() < 0.5:
            read = COMP[read[::-1]]
        reads.append(read)
    return reads


def batch_of(reads: list[np.ndarray], quals: bool = True):
    recs = [dnaio.SequenceRecord(f"r{i}", decode(r), "I" * r.size if quals else None)
            for i, r in enumerate(reads)]
    return make_batch(recs)


def aligned_locations(ref: Reference, batch, e: int) -> tuple:
    """Every location of a batch's reads within e (a neighborhood index, CPU verification) and its alignment:
    (queries' codes and offsets, the locations' query, start, end and distance, their Traceback)."""
    qcodes, qoff = batch.queries()
    qerr = np.full(batch.size, e, dtype=np.int64)
    engine = NeighborhoodEngine(neighborhood.build(ref, 6, 8), ref.starts)
    win_q, windows = engine.candidate_windows(qcodes, qoff, qerr)
    lq, ls, le, ld = cpu_windows.verify(qcodes, qoff, qerr, win_q, windows, ref.packed, ref.nmask)
    return qcodes, qoff, lq, ls, le, ld, align(qcodes, qoff, qerr, lq, ls, le, ld, ref.packed, ref.nmask, ref.starts)


def genome_and_reads(kind: str, seed: int, n: int, lengths: tuple[int, int]) -> tuple[Reference, object]:
    """A repetitive (repetitive_genome) or random genome and a batch of n reads sampled from it (up to 3
    edits, some random, either strand): the seed + filter cases of the device kernels."""
    rng = np.random.default_rng(seed)
    seqs = repetitive_genome(rng) if kind == "repetitive" else [random_genome(rng, 3000), random_genome(rng, 500)]
    ref = Reference.from_codes([f"c{i}" for i in range(len(seqs))], seqs)
    return ref, batch_of(sample_reads(rng, seqs, n, lengths, 3))


# ------------------------------------------------------------------------------------ engines against the oracle


def make_engine(ref: Reference, engine: str = "neighborhood", u: int = 10, l: int = 16, k: int = 12,
                shape: str = "", **plan):
    if engine == "kmer":
        return KmerEngine(kmer.build(ref, k), ref.starts, bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask,
                          **plan)
    bulk_min = plan.pop("bulk_min", None)  # neighborhood: verify in bulk the candidates of queries with more
    if bulk_min is None:
        return neighborhood_engine(neighborhood.build(ref, u, l, shape), ref.starts, EngineOptions(**plan))
    engine = neighborhood_engine(neighborhood.build(ref, u, l, shape), ref.starts, EngineOptions(**plan),
                                 bulk=bulk_distances, packed=ref.packed, nmask=ref.nmask)
    engine.bulk_min = bulk_min
    return engine


def engine_locations(engine, ref: Reference, reads: list[np.ndarray], errors: float) -> list[set]:
    """{(strand, start, end, dist)} per read, as the engine + verifier report them."""
    batch = batch_of(reads)
    qerr = errors_per_read(batch.lengths, errors)
    loc, _ = locate(batch, engine, ref, qerr)
    out: list[set] = [set() for _ in reads]
    for q, s, e, d in zip(loc.query, loc.start, loc.end, loc.dist, strict=True):
        out[q >> 1].add((int(q & 1), int(s), int(e), int(d)))
    return out


def seedmap_locations(ref: Reference, reads: list[np.ndarray], errors: float, **kw) -> list[set]:
    return engine_locations(make_engine(ref, **kw), ref, reads, errors)


def assert_oracle(got: list[set], ref: Reference, reads: list[np.ndarray], errors: float) -> int:
    """Every read's locations equal the brute-force oracle's (none when the read is not longer than e);
    returns the number of oracle locations checked."""
    from oracle import oracle_locations

    codes = ref.codes()
    e_of = errors_per_read(np.array([r.size for r in reads]), errors)
    total = 0
    for i, read in enumerate(reads):
        e = int(e_of[i])
        if read.size <= e:
            assert got[i] == set()
            continue
        want = oracle_locations(read, codes, ref.starts, e)
        assert got[i] == want, f"read {i} (len {read.size}, e={e}): missing {want - got[i]}, extra {got[i] - want}"
        total += len(want)
    return total


def check_against_oracle(ref: Reference, reads: list[np.ndarray], errors: float, **kw) -> int:
    return assert_oracle(seedmap_locations(ref, reads, errors, **kw), ref, reads, errors)

# ---------------------------------------------------- single windows (bit-vector verification, banded traceback)


def window_locations(q: np.ndarray, t: np.ndarray, e: int) -> list[tuple[int, int, int]]:
    return group(hits_one(q, t, e), q.size)


def mutate_acgt(rng: np.random.Generator, seq: np.ndarray, edits: int) -> np.ndarray:
    out = list(seq)
    for _ in range(edits):
        i = int(rng.integers(len(out) + 1))
        kind = rng.integers(3)
        if kind == 0 and i < len(out):
            out[i] = (out[i] + 1 + rng.integers(3)) % 4
        elif kind == 1:
            out.insert(i, int(rng.integers(4)))
        elif len(out) > 1:
            del out[min(i, len(out) - 1)]
    return np.array(out, dtype=np.uint8)


def window(rng: np.random.Generator, m: int, repetitive: bool, n_rate: float) -> np.ndarray:
    if repetitive:
        unit = rng.integers(0, 4, int(rng.integers(1, 12)), dtype=np.uint8)
        t = np.tile(unit, (3 * m) // unit.size + 2)[: 2 * m + int(rng.integers(0, 40))]
        t = mutate_acgt(rng, t, int(rng.integers(0, 6)))
    else:
        t = rng.integers(0, 4, 2 * m + int(rng.integers(0, 40)), dtype=np.uint8)
    t[rng.random(t.size) < n_rate] = 4
    return t


def read_from(rng: np.random.Generator, t: np.ndarray, m: int, e: int, n_rate: float) -> np.ndarray:
    """A read of about m bases copied from t with up to e + 1 edits (so some windows miss), or random."""
    if rng.random() < 0.15:
        q = rng.integers(0, 4, m, dtype=np.uint8)
    else:
        s = int(rng.integers(0, max(1, t.size - m)))
        q = mutate_acgt(rng, np.minimum(t[s:s + m], 3), int(rng.integers(0, e + 2)))
    q[rng.random(q.size) < n_rate] = 4
    return q

# --------------------------------------------------------------------------------------- bulk verification cases


SPECIAL_LENGTHS = [1, 2, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 191, 192, 193, 256, 257, 300]


def dp_last_row(q: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Last row of the semi-global DP of q (rows) against t (columns), one column at a time."""
    m, n = q.size, t.size
    col = np.arange(m + 1, dtype=np.int64)  # column 0: i insertions
    last = np.empty(n + 1, dtype=np.int64)
    last[0] = m
    rows = np.arange(m + 1)
    qv = q.astype(np.int64)
    for j in range(1, n + 1):
        c = int(t[j - 1])
        cost = ((qv != c) | (qv > 3) | (c > 3)).astype(np.int64)
        new = np.empty(m + 1, dtype=np.int64)
        new[0] = 0
        new[1:] = np.minimum(col[:-1] + cost, col[1:] + 1)  # diagonal, horizontal (deletion)
        new = rows + np.minimum.accumulate(new - rows)  # vertical (insertion) chains
        col = new
        last[j] = col[m]
    return last


def bulk_oracle(genome: np.ndarray, q: np.ndarray, e: int, lo: int, hi: int) -> int:
    t = genome[lo:hi] if hi > lo else genome[:0]
    return min(int(dp_last_row(q, t).min()), e + 1)


def bulk_genome(rng: np.random.Generator, lengths: list[int]) -> tuple[np.ndarray, np.ndarray, Reference]:
    """Sequences with N runs (and a poly-A and a tandem repeat in the first one)."""
    seqs = []
    for n in lengths:
        s = rng.integers(0, 4, n).astype(np.uint8)
        for _ in range(int(rng.integers(0, 4))):
            a = int(rng.integers(0, n))
            s[a:a + int(rng.integers(1, 30))] = 4
        seqs.append(s)
    if lengths[0] > 400:
        seqs[0][100:160] = 0
        seqs[0][200:320] = np.tile(np.array([0, 1, 3], np.uint8), 40)
    ref = Reference.from_codes([f"s{i}" for i in range(len(seqs))], seqs)
    return np.concatenate(seqs), ref.starts, ref


def mutate_with_n(rng: np.random.Generator, read: np.ndarray, edits: int) -> np.ndarray:
    """Random substitutions, insertions, deletions and N."""
    r = list(read)
    for _ in range(edits):
        op = int(rng.integers(0, 4))
        k = int(rng.integers(0, len(r) + 1))
        if op == 0 and k < len(r):
            r[k] = (r[k] + int(rng.integers(1, 4))) % 4
        elif op == 1:
            r.insert(k, int(rng.integers(0, 4)))
        elif op == 2 and k < len(r) and len(r) > 1:
            del r[k]
        elif k < len(r):
            r[k] = 4
    return np.array(r, dtype=np.uint8)


def bulk_case(rng: np.random.Generator, nreads: int, lengths: list[int] | None = None, emax: int = 15,
              ncand: int = 6, glens: list[int] | None = None) -> dict:
    """Reads (both 'strands' share e: qerr[i >> 1]) sampled from the genome with edits; candidates near
    the true diagonal, far away, at or past sequence ends (clipped windows), sorted by query; each the window
    [ws, we) of its diagonal, or for one in six, a cluster's: that window widened by up to 35 columns on
    each side (within the sequence)."""
    genome, starts, ref = bulk_genome(rng, glens or [3000, 700, 150, 1200])
    nseq = starts.size - 1
    reads, qerr, cq, cws, cwe = [], [], [], [], []
    for i in range(nreads):
        if i % 2 == 0:
            qerr.append(int(rng.integers(0, emax + 1)))
        e = qerr[i >> 1]
        if lengths is not None:
            m = lengths[i % len(lengths)]
        else:
            m = int(rng.choice(SPECIAL_LENGTHS)) if rng.random() < 0.4 else int(rng.integers(1, 301))
        sid = int(rng.integers(0, nseq))
        s0, s1 = int(starts[sid]), int(starts[sid + 1])
        if s1 - s0 >= m + 1:
            p = int(rng.integers(s0, s1 - m + 1))
            read = genome[p:p + m].copy()
            read = mutate_with_n(rng, read, int(rng.integers(0, e + 3)))
        else:  # the sequence is shorter than the read: random read
            p = s0
            read = rng.integers(0, 5, m).astype(np.uint8)
        if read.size == 0:
            read = np.zeros(1, np.uint8)
        reads.append(read)
        for _ in range(ncand):
            kind = int(rng.integers(0, 6))
            if kind <= 1:
                d = p + int(rng.integers(-3, 4))  # near the true location
            elif kind == 2:
                d = p + int(rng.integers(-2 * e - 40, 2 * e + 41))  # overlapping windows
            elif kind == 3:
                d = int(rng.integers(s0, s1))  # anywhere in the sequence
            elif kind == 4:
                d = s0 + int(rng.integers(-read.size - e - 5, e + 6))  # clipped at the sequence start
            else:
                d = s1 + int(rng.integers(-read.size - e - 5, e + 6))  # clipped at the sequence end
            ws, we = window_of(d, read.size, e, s0, s1)
            if rng.random() < 1 / 6:
                ws = max(int(ws) - int(rng.integers(0, 36)), s0)
                we = min(int(we) + int(rng.integers(0, 36)), s1)
            cq.append(i)
            cws.append(int(ws))
            cwe.append(max(int(we), int(ws)))
    qoff = np.zeros(nreads + 1, dtype=np.int64)
    np.cumsum([r.size for r in reads], out=qoff[1:])
    return dict(genome=genome, ref=ref, reads=reads, qcodes=np.concatenate(reads), qoff=qoff,
                qerr=np.array(qerr, dtype=np.int64), cand_q=np.array(cq, dtype=np.int64),
                ws=np.array(cws, dtype=np.int64), we=np.array(cwe, dtype=np.int64))


def bulk_run(case: dict, method: int = AUTO, order: np.ndarray | None = None) -> np.ndarray:
    sel = np.arange(case["cand_q"].size) if order is None else order
    return bulk_distances(case["qcodes"], case["qoff"], case["qerr"], case["cand_q"][sel], case["ws"][sel],
                          case["we"][sel], case["ref"].packed, case["ref"].nmask, method=method)


def bulk_expected(case: dict) -> np.ndarray:
    out = np.empty(case["cand_q"].size, dtype=np.int64)
    for k, qi in enumerate(case["cand_q"]):
        out[k] = bulk_oracle(case["genome"], case["reads"][qi], int(case["qerr"][qi >> 1]), int(case["ws"][k]),
                             int(case["we"][k]))
    return out

# --------------------------------------------------------------------------------------------------- SAM records


CIGAR_RE = re.compile(r"(\d+)([MID])")
MD_RE = re.compile(r"(\d+)|(\^[A-Z]+)|([A-Z])")


def reference_from_alignment(seq: str, cigar: str, md: str) -> tuple[str, int]:
    """Rebuild the aligned reference from SEQ, CIGAR and MD; also count edits (for NM)."""
    ref_parts, qi, edits = [], 0, 0
    ops = [(int(n), op) for n, op in CIGAR_RE.findall(cigar)]
    aligned = []  # read bases aligned to reference bases (M), in order
    for n, op in ops:
        if op == "M":
            aligned.append(seq[qi:qi + n])
            qi += n
        elif op == "I":
            qi += n
            edits += n
        else:
            aligned.append(None)
            edits += n
    assert qi == len(seq), "CIGAR does not consume the whole read"
    matched = "".join(a for a in aligned if a is not None)
    mi = 0
    for num, dele, mis in MD_RE.findall(md):
        if num:
            ref_parts.append(matched[mi:mi + int(num)])
            mi += int(num)
        elif dele:
            ref_parts.append(dele[1:])
        else:
            ref_parts.append(mis)
            mi += 1
            edits += 1
    assert mi == len(matched), "MD does not cover the M bases"
    return "".join(ref_parts), edits

# --------------------------------------------------------------------------------------------------------- pairs


MODEL = InsertModel(160.0, 20.0)  # proper: 80..240


def simulate_pairs(rng: np.random.Generator, seqs: list[np.ndarray], n: int, m: int, orientation: str,
                   max_edits: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Mates of fragments of ~N(160, 20) bp in the given orientation (either strand), with up to
    max_edits edits each; some pairs random, some with one random mate."""
    pairs = []
    for _ in range(n):
        s = seqs[int(rng.integers(0, len(seqs)))]
        f = int(np.clip(rng.normal(MODEL.mean, MODEL.sd), m, 260))
        if s.size < f or rng.random() < 0.1:
            pairs.append((random_genome(rng, m), random_genome(rng, m)))
            continue
        p = int(rng.integers(0, s.size - f + 1))
        frag = s[p:p + f]
        if rng.random() < 0.5:
            frag = COMP[frag[::-1]]
        left, right = frag[:m], frag[-m:]
        a, b = {"fr": (left, COMP[right[::-1]]), "rf": (COMP[left[::-1]], right), "ff": (left, right)}[orientation]
        a, b = (mutate(rng, x, int(rng.integers(0, max_edits + 1))) for x in (a, b))
        if rng.random() < 0.05:
            b = random_genome(rng, m)
        pairs.append((a, b))
    return pairs

# ---------------------------------------------------------------------------------------------- the example data


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def map_example(ref: Path, out: Path, threads: int, batch: int, errors: float = 0.05, kind: str = "neighborhood",
         **engine_options) -> list[str]:
    run_map(RunOptions(reference=str(ref), reads=str(EXAMPLES / "reads.fq.gz"), output=str(out), threads=threads,
                       batch_size=batch, command_line="seedmap test", map=MapOptions(errors=errors),
                       engine=EngineOptions(kind=kind, **engine_options)))
    return out.read_text().splitlines()

# ----------------------------------------------------------------------------------- the command line, black box


def random_dna(rng: np.random.Generator, n: int) -> str:
    return "".join(np.array(list("ACGT"))[rng.integers(0, 4, n)])


def fasta(records: dict[str, str], width: int = 60) -> str:
    return "".join(f">{name}\n" + "".join(seq[i:i + width] + "\n" for i in range(0, len(seq), width))
                   for name, seq in records.items())


def fastq(reads: dict[str, str]) -> str:
    return "".join(f"@{name}\n{seq}\n+\n{'I' * len(seq)}\n" for name, seq in reads.items())


def seedmap(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SEEDMAP_DEBUG"}
    return subprocess.run([sys.executable, "-m", "seedmap", *args], cwd=cwd, env=env, capture_output=True,
                          encoding="utf-8", errors="replace", timeout=300)


def error_lines(stderr: str) -> list[str]:
    """stderr without the '[seedmap] ...' log lines (progress and warnings)."""
    return [line for line in stderr.splitlines() if not line.startswith("[seedmap] ")]


def fails_cleanly(cwd: Path, *args: str) -> str:
    """Run a command that must fail with one `seedmap: error:` line and leave the directory as it was."""
    before = sorted(os.listdir(cwd))
    proc = seedmap(cwd, *args)
    assert proc.returncode != 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("seedmap: error: "), proc.stderr
    assert proc.stdout == ""
    assert sorted(os.listdir(cwd)) == before, "files left behind"
    return lines[0]


def maps(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    proc = seedmap(cwd, "map", *args)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


def sam_lines(text: str, keep_pg: bool = True) -> list[str]:
    return [line for line in text.splitlines() if keep_pg or not line.startswith("@PG")]


def sam_records(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if not line.startswith("@")]


def truncated_gzip(path: Path) -> bytes:
    packed = gzip.compress(path.read_bytes())
    return packed[:int(len(packed) * 0.7)]


GARBAGE_BINARY = np.random.default_rng(7).integers(0, 256, 3000, dtype=np.uint8).tobytes()


# ------------------------------------------------- window verification cases (the CPU kernel and its device twins)


def windows_case(seed: int, n: int) -> tuple[Reference, list, dict]:
    """Windows and reads drawn as the CPU window kernel's oracle test draws them (random or tandem-repeat
    windows, N on either side, reads of one to four 64-bit words, some with more than e edits), each
    window a sequence of its own; two windows per read (the second is its reverse complement's)."""
    rng = np.random.default_rng(seed)
    seqs, reads, errs = [], [], []
    for _ in range(n):
        m = int(rng.choice([2, 31, 64, 65, 100, 129, 200, 256]))
        e = int(rng.integers(0, 7))
        n_rate = float(rng.choice([0.0, 0.0, 0.02]))
        t = window(rng, m, bool(rng.random() < 0.5), n_rate)
        q = read_from(rng, t, m, e, n_rate)
        if q.size <= e:
            continue
        seqs.append(t)
        reads.append(q)
        errs.append(e)
    ref = Reference.from_codes([f"w{i}" for i in range(len(seqs))], seqs)
    qs = [x for q in reads for x in (q, q[::-1].copy())]
    qoff = np.zeros(len(qs) + 1, dtype=np.int64)
    np.cumsum([q.size for q in qs], out=qoff[1:])
    starts = np.asarray(ref.starts, dtype=np.int64)
    win_q = np.arange(len(qs), dtype=np.int64)
    lo, hi = starts[win_q >> 1], starts[(win_q >> 1) + 1]
    win = np.stack([lo, hi, lo, hi], axis=1)
    return ref, seqs, dict(qcodes=np.concatenate(qs), qoff=qoff, qerr=np.array(errs, dtype=np.int64),
                           win_q=win_q, win=win, reads=reads)



def assert_window_locations(ref: Reference, seqs: list, c: dict, locate: object) -> None:
    """A device's window verifier (`locate`, called with verify.windows.verify's arguments) on a
    windows_case: the CPU verifier's output exactly (order and dtypes too), every location as the
    brute-force oracle has it, and the case had misses and windows over their slots."""
    args = (c["qcodes"], c["qoff"], c["qerr"], c["win_q"], c["win"], ref.packed, ref.nmask)
    want = cpu_windows.verify(*args)
    got = locate(*args)
    for w, g in zip(want, got, strict=True):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    starts = np.asarray(ref.starts)
    for i, (t, q) in enumerate(zip(seqs, c["reads"], strict=True)):
        mine = got[0] == 2 * i
        found = [(int(s - starts[i]), int(en - starts[i]), int(d)) for s, en, d in
                 zip(got[1][mine], got[2][mine], got[3][mine], strict=True)]
        assert found == window_locations(q, t, int(c["qerr"][i]))
    per_read = np.bincount(got[0], minlength=c["win_q"].size)[::2]
    assert (per_read == 0).any() and per_read.max() > cpu_windows.SLOTS  # misses, and windows over their slots


def overflow_case() -> tuple[Reference, tuple]:
    """Windows of a tandem repeat with more locations than their first-pass slots, and reads longer than
    256 bp (a device kernel's limit), in query order: (reference, verify.windows.verify's arguments)."""
    rng = np.random.default_rng(5)
    unit = rng.integers(0, 4, 15).astype(np.uint8)
    tandem = mutate_acgt(rng, np.tile(unit, 40), 4)
    plain = rng.integers(0, 4, 900).astype(np.uint8)
    ref = Reference.from_codes(["t", "p"], [tandem, plain])
    reads = [tandem[100:130].copy(), mutate_acgt(rng, plain[100:400].copy(), 3), tandem[200:245].copy(),
             mutate_acgt(rng, plain[500:800].copy(), 2)]
    qs = [x for q in reads for x in (q, q[::-1].copy())]
    qoff = np.zeros(len(qs) + 1, dtype=np.int64)
    np.cumsum([q.size for q in qs], out=qoff[1:])
    starts = np.asarray(ref.starts, dtype=np.int64)
    seq_of = np.array([0, 0, 1, 1, 0, 0, 1, 1])
    win = np.stack([starts[seq_of], starts[seq_of + 1], starts[seq_of], starts[seq_of + 1]], axis=1)
    args = (np.concatenate(qs), qoff, np.array([2, 6, 3, 5]), np.arange(8, dtype=np.int64), win, ref.packed,
            ref.nmask)
    return ref, args


# Seed + filter cases a device's kernels are checked on against the CPU engine (CUDA simulator, OpenCL):
# genome, u, l, plan options, error rate, read lengths.
SEED_FILTER_CASES = [
    ("repetitive", 6, 4, {}, 0.06, (20, 60)),
    ("repetitive", 8, 4, {}, 0.12, (20, 30)),  # windows shorter than u: ranges of seed blocks
    ("repetitive", 5, 3, {"fe": 1, "windows": 2}, 0.06, (20, 60)),
    ("random", 6, 4, {"step": 3}, 0.05, (30, 50)),
    ("random", 6, 4, {"fe": 2, "windows": 1}, 0.04, (25, 40)),
]


def assert_same_alignments(got_aln: Traceback, want_aln: Traceback) -> None:
    """Every output the same (dtypes, shapes; the filled slots of ops, lens and md byte for byte)."""
    got, want = got_aln._asdict(), want_aln._asdict()
    assert got.keys() == want.keys()
    for name in want:
        assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape, name
    for name in ("cig_off", "md_off", "n_runs", "md_len", "start", "end"):
        assert np.array_equal(got[name], want[name]), name
    used = {"ops": ("cig_off", "n_runs"), "lens": ("cig_off", "n_runs"), "md": ("md_off", "md_len")}
    for name, (off, size) in used.items():  # the slots each location filled (the rest is room, unset)
        mask = np.zeros(want[name].size, dtype=bool)
        for a, n in zip(want[off][:-1], want[size], strict=True):
            mask[a:a + n] = True
        assert np.array_equal(got[name][mask], want[name][mask]), name
