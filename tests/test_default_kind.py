"""The index kind of runs that name none: the neighborhood index below FM_FROM_BASES of reference, the FM
index from there on, and for mapping, an index already built beside the reference."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import numpy as np
import pytest

from seedmap import cli
from seedmap.index import default_kind, store
from seedmap.index.default_kind import estimated_bases, map_kind, size_kind


def write_fasta(path: Path, n: int, seed: int = 1) -> Path:
    seq = "".join(np.random.default_rng(seed).choice(list("ACGT"), n))
    path.write_text(">a\n" + "\n".join(seq[i:i + 60] for i in range(0, n, 60)) + "\n")
    return path


def test_estimated_bases(tmp_path: Path):
    plain = write_fasta(tmp_path / "r.fa", 6000)
    assert estimated_bases(plain) == plain.stat().st_size
    gz = tmp_path / "r.fa.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    assert estimated_bases(gz) == default_kind.GZ_BASES_PER_BYTE * gz.stat().st_size
    assert estimated_bases(tmp_path / "missing.fa") == 0
    os.mkfifo(tmp_path / "pipe.fa")
    assert estimated_bases(tmp_path / "pipe.fa") == 0  # not opened: no reader yet would block, and bytes be lost


def test_size_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    ref = write_fasta(tmp_path / "r.fa", 6000)
    assert size_kind(ref) == "neighborhood"  # far below the threshold
    monkeypatch.setattr(default_kind, "FM_FROM_BASES", ref.stat().st_size)
    assert size_kind(ref) == "fm"
    monkeypatch.setattr(default_kind, "FM_FROM_BASES", ref.stat().st_size + 1)
    assert size_kind(ref) == "neighborhood"


def test_map_prefers_an_index_that_is_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd):
    ref = write_fasta(tmp_path / "r.fa", 3000)
    assert map_kind(ref, None) == "neighborhood"  # none there: the size's kind, built in memory
    assert cli.main(["index", str(ref), "--kind", "kmer", "-q"]) == 0
    assert map_kind(ref, None) == "kmer"  # the only index there
    monkeypatch.setattr(default_kind, "FM_FROM_BASES", 1)
    assert map_kind(ref, None) == "kmer"
    capfd.readouterr()
    assert cli.main(["index", str(ref)]) == 0  # the size's kind now: fm
    assert "building the fm index" in capfd.readouterr().err
    assert store.default_path(ref, "fm").exists() and not store.default_path(ref, "neighborhood").exists()
    assert map_kind(ref, None) == "fm"  # the size's kind, there too
    assert map_kind(ref, store.default_path(ref, "kmer")) == "kmer"  # --index names its kind


def test_map_engine_options_imply_their_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd):
    """--windows with no --engine maps with the neighborhood engine even where the size would pick fm (fm
    would refuse --windows); with no such option, fm maps, and the records are the same."""
    ref = write_fasta(tmp_path / "r.fa", 3000)
    reads = tmp_path / "reads.fa"
    seq = ref.read_text().split("\n", 1)[1].replace("\n", "")
    reads.write_text(">q\n" + seq[100:200] + "\n")
    monkeypatch.setattr(default_kind, "FM_FROM_BASES", 1)
    out = tmp_path / "out.sam"
    assert cli.main(["map", str(ref), str(reads), "--windows", "3", "-e", "2", "-o", str(out), "-q"]) == 0
    capfd.readouterr()
    assert cli.main(["map", str(ref), str(reads), "-e", "2", "-o", str(tmp_path / "fm.sam")]) == 0
    assert "no fm index at" in capfd.readouterr().err  # built in memory: the size's kind
    body = [line for line in out.read_text().splitlines() if not line.startswith("@PG")]
    assert body == [line for line in (tmp_path / "fm.sam").read_text().splitlines() if not line.startswith("@PG")]
    assert any(line.startswith("q\t0\ta\t101\t") for line in body)
