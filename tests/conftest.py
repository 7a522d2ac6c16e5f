from __future__ import annotations

import dnaio
import numpy as np
import pytest

from seedmap.engines.factory import neighborhood_engine
from seedmap.engines.kmer import KmerEngine
from seedmap.index import kmer, neighborhood
from seedmap.io.alphabet import DECODE
from seedmap.io.reads import make_batch
from seedmap.io.reference import Reference
from seedmap.pipeline import EngineOptions, errors_per_read, locate
from seedmap.verify.bulk import bulk_distances

COMP = np.array([3, 2, 1, 0, 4], dtype=np.uint8)


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


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(autouse=True)
def _seedmap_logger_restored() -> object:
    """cli.main() in a test gives the "seedmap" logger its own stderr handler and stops propagation (which
    caplog, listening on the root logger, needs): undone after each test."""
    import logging

    logger = logging.getLogger("seedmap")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:] = saved[0]
    logger.setLevel(saved[1])
    logger.propagate = saved[2]
