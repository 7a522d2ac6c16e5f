"""The Python API (seedmap/api.py): the same records as `seedmap map` on the same reads, single-end and paired,
from paths and from Python lists; one read's hits; SAM written from Python; docs/api.md's examples run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import dnaio
import numpy as np
import pytest
from helpers import EXAMPLES, decode, maps, sam_records, simulate_pairs

import seedmap
from seedmap.errors import SeedmapError
from seedmap.io.alphabet import encode

DOCS = Path(__file__).resolve().parent.parent / "docs" / "api.md"


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    """The examples/ reference (unzipped: pairs are cut from it) and reads, in a directory of their own."""
    d = tmp_path_factory.mktemp("example")
    shutil.copy(EXAMPLES / "reads.fq.gz", d / "reads.fq.gz")
    shutil.copy(EXAMPLES / "ref.fa.gz", d / "ref.fa.gz")
    return d


@pytest.fixture(scope="module")
def ix(example) -> seedmap.Index:
    return seedmap.Index(example / "ref.fa.gz")


def _sam_columns(rows: list[list[str]]) -> dict[str, list]:
    """What the API's columns say of each SAM record, read from the record's text."""
    def tag(row: list[str], name: str) -> str | None:
        return next((f[5:] for f in row[11:] if f.startswith(name + ":")), None)

    unmapped = [int(r[1]) & 4 != 0 for r in rows]
    return {
        "name": [r[0] for r in rows],
        "flag": [int(r[1]) for r in rows],
        "contig": ["*" if u else r[2] for r, u in zip(rows, unmapped, strict=True)],
        "pos": [-1 if u else int(r[3]) - 1 for r, u in zip(rows, unmapped, strict=True)],
        "mapq": [int(r[4]) for r in rows],
        "cigar": [r[5] for r in rows],
        "nm": [int(tag(r, "NM")) if tag(r, "NM") is not None else -1 for r in rows],
        "md": [tag(r, "MD") or "" for r in rows],
        "nh": [int(tag(r, "NH") or 0) for r in rows],
        "mate_pos": [-1 if r[7] == "0" else int(r[7]) - 1 for r in rows],
        "tlen": [int(r[8]) for r in rows],
    }


def _api_columns(m: seedmap.Mapped) -> dict[str, list]:
    c = m.columns()
    return {k: c[k].tolist() for k in ("name", "flag", "contig", "pos", "mapq", "cigar", "nm", "md", "nh",
                                       "mate_pos", "tlen")}


def _assert_same_records(m: seedmap.Mapped, sam_text: str) -> None:
    want = _sam_columns(sam_records(sam_text))
    got = _api_columns(m)
    assert len(m) == len(want["name"]) > 0
    for key in want:
        assert got[key] == want[key], key


def _cli(example: Path, out: str, *args: str) -> str:
    maps(example, "ref.fa.gz", *args, "-o", out)
    return (example / out).read_text()


@pytest.mark.parametrize("args", [(), ("-e", "4", "--best"), ("-e", "3", "-n", "2")])
def test_map_many_gives_the_command_lines_records(example, ix, args):
    """Every record, in the command line's order, with its FLAG, position, MAPQ, CIGAR, NM, MD and NH."""
    sam = _cli(example, "cli.sam", "reads.fq.gz", *args)
    kw = {"-e": ("e", float), "-n": ("max_hits", int)}
    opts = {kw[a][0]: kw[a][1](b) for a, b in zip(args, args[1:], strict=False) if a in kw}
    m = ix.map_many(example / "reads.fq.gz", best="--best" in args, **opts)
    _assert_same_records(m, sam)
    assert m.read.max() == 4999 and (np.diff(m.read) >= 0).all()
    assert (m.primary == ((m.flag & 0x904) == 0)).all()
    assert (m.strand[m.mapped] == np.where(m.flag[m.mapped] & 16, -1, 1)).all()


def test_reads_from_python_are_the_files_reads(example, ix):
    """The same reads as tuples, and as bare sequences (named by their number), map as from the file."""
    with dnaio.open(example / "reads.fq.gz") as f:
        reads = [(r.name.split()[0], r.sequence, r.qualities) for r in f]
    from_file = ix.map_many(example / "reads.fq.gz", e=4, best=True)
    from_tuples = ix.map_many(reads, e=4, best=True)
    assert _api_columns(from_tuples) == _api_columns(from_file)
    bare = ix.map_many([s for _, s, _ in reads[:300]], e=4, best=True)
    assert bare.name[0] == "0" and set(bare.name.tolist()) == {str(i) for i in range(300)}
    first = from_file.read < 300
    assert bare.pos.tolist() == from_file.pos[first].tolist()
    assert bare.cigar.tolist() == from_file.cigar[first].tolist()


def test_map_one_read(ix, example):
    """One read's hits: those map_many reports for it, its primary first; a read with no location: []."""
    with dnaio.open(example / "reads.fq.gz") as f:
        read = next(iter(f))
    hits = ix.map(read.sequence)
    m = ix.map_many([read.sequence])
    assert [(h.contig, h.pos, h.cigar, h.nm, h.md, h.mapq, h.strand, h.primary) for h in hits] == list(zip(
        m.contig.tolist(), m.pos.tolist(), m.cigar.tolist(), m.nm.tolist(), m.md.tolist(), m.mapq.tolist(),
        m.strand.tolist(), m.primary.tolist(), strict=True))
    assert hits and hits[0].primary and not any(h.primary for h in hits[1:])
    h = hits[0]
    assert h.end - h.pos == sum(int(n) for n, op in re.findall(r"(\d+)([MID])", h.cigar) if op in "MD")
    assert ix.map("ACGT" * 25, e=0) == []
    best = ix.map(read.sequence, best=True)
    assert best and all(b.nm == min(x.nm for x in hits) for b in best)


def _pairs(example: Path) -> tuple[list[tuple], list[tuple]]:
    """600 simulated pairs of the example genome (helpers.simulate_pairs: some random, some with one random mate)."""
    with dnaio.open(example / "ref.fa.gz") as f:
        seqs = [encode(r.sequence.encode()) for r in f if len(r.sequence) > 1000]
    pairs = simulate_pairs(np.random.default_rng(75), seqs, 600, 100, "fr", 3)
    r1 = [(f"p{i}", decode(a), "I" * a.size) for i, (a, _) in enumerate(pairs)]
    r2 = [(f"p{i}", decode(b), "I" * b.size) for i, (_, b) in enumerate(pairs)]
    return r1, r2


def test_pairs_give_the_command_lines_records(example, ix):
    """Pairs from two files, and the same pairs as lists: the records of `seedmap map ref r1 r2`, mate fields
    and TLEN included."""
    r1, r2 = _pairs(example)
    for name, reads in (("r1.fq", r1), ("r2.fq", r2)):
        (example / name).write_text("".join(f"@{n}\n{s}\n+\n{q}\n" for n, s, q in reads))
    sam = _cli(example, "pairs.sam", "r1.fq", "r2.fq")
    from_files = ix.map_pairs(example / "r1.fq", example / "r2.fq")
    _assert_same_records(from_files, sam)
    assert (from_files.flag & 1).all()
    from_lists = ix.map_pairs(r1, r2)
    assert _api_columns(from_lists) == _api_columns(from_files)
    interleaved = [r for pair in zip(r1, r2, strict=True) for r in pair]
    assert _api_columns(ix.map_many(interleaved, paired=True)) == _api_columns(from_files)
    sam_rows = sam_records(sam)
    mate_contig = [r[6] if r[6] != "=" else r[2] for r in sam_rows]
    placed = from_files.mate_ref_id >= 0
    names = np.append(np.array(ix.ref_names), "*")[from_files.mate_ref_id]
    assert names[placed].tolist() == [c for c, p in zip(mate_contig, placed.tolist(), strict=True) if p]


def test_write_is_the_command_lines_output(example, ix):
    """SAM written from Python: the command line's records, byte for byte (the @PG line names the API)."""
    sam = _cli(example, "cli.sam", "reads.fq.gz", "-e", "4", "--best")
    counts = ix.write(example / "reads.fq.gz", example / "api.sam", e=4, best=True)
    assert sam_records((example / "api.sam").read_text()) == sam_records(sam)
    assert counts.reads == 5000 and counts.records == len(sam_records(sam))


def test_bad_reads_are_one_line_errors(ix):
    with pytest.raises(SeedmapError, match="invalid character"):
        ix.map_many(["ACGT" * 25, "ACGJ" * 25])
    with pytest.raises(SeedmapError, match="reads2"):
        ix.map_pairs(["ACGT" * 25], ["ACGT" * 25] * 2)
    assert len(ix.map_many([])) == 0


def test_to_pandas(ix, example):
    pd = pytest.importorskip("pandas")
    df = ix.map_many(example / "reads.fq.gz").to_pandas()
    assert isinstance(df, pd.DataFrame) and {"contig", "pos", "cigar", "nm", "md", "mapq"} <= set(df.columns)


def _docs_blocks() -> list[str]:
    """docs/api.md's python blocks, each padded with the lines before it: a failure names its line there."""
    text = DOCS.read_text()
    return ["\n" * text[:m.start(1)].count("\n") + m.group(1) for m in re.finditer(r"```python\n(.*?)```", text, re.S)]


def test_the_docs_examples_run(example, monkeypatch):
    """docs/api.md's python blocks, run in order in one namespace, in a directory holding the examples: each
    `assert` in them is checked."""
    blocks = _docs_blocks()
    assert len(blocks) >= 3
    monkeypatch.chdir(example)
    namespace: dict = {}
    for block in blocks:
        if "import pandas" in block and not _has_pandas():
            continue
        exec(compile(block, str(DOCS), "exec"), namespace)


def _has_pandas() -> bool:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True
