"""The direct-I/O output file (io/direct.py): the same bytes as an ordinary write, whatever the sizes of the
writes; errors are the ordinary OSErrors, named by the output; and a refused direct write falls back."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seedmap.errors import SeedmapError
from seedmap.io import direct
from seedmap.io.direct import ALIGN, DirectFile, open_direct
from seedmap.io.output import output_file


def _is_direct(fd: int) -> bool:
    return bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT)


def _opened(path: Path) -> tuple[int, bool]:
    """fd of a new file at path, O_DIRECT set where the filesystem takes it (else an ordinary fd: the
    staging logic is the same)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    return fd, direct._set_direct(fd, True)


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(0, 5 * ALIGN), max_size=12), seed=st.integers(0, 2**32 - 1))
def test_same_bytes_for_any_write_sizes(tmp_path_factory: pytest.TempPathFactory, sizes: list[int], seed: int):
    path = tmp_path_factory.mktemp("direct") / "out"
    fd, _ = _opened(path)
    rng = np.random.default_rng(seed)
    parts = [rng.integers(0, 256, n, dtype=np.uint8) for n in sizes]
    f = DirectFile(fd, stage=2 * ALIGN)  # a small stage: writes span, fill and overrun it
    for i, p in enumerate(parts):
        assert f.write(p if i % 2 else p.tobytes()) == p.size  # arrays and bytes alike
    f.close()
    f.close()  # a second close (the error path's) does nothing
    assert path.read_bytes() == b"".join(p.tobytes() for p in parts)


def test_output_file_writes_direct_on_a_local_disk(tmp_path: Path):
    target = tmp_path / "out.sam"
    fd = os.open(tmp_path / "probe", os.O_WRONLY | os.O_CREAT)
    expect_direct = open_direct(fd) is not None  # what this filesystem allows
    os.close(fd)
    data = os.urandom(3 * direct.STAGE + 12345)
    with output_file(str(target)) as out:
        assert isinstance(out.fh, DirectFile) == expect_direct
        if expect_direct:
            assert _is_direct(out.fh.fd)
        out.write(data[:100])
        out.write(data[100:])
    assert target.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.sam", "probe"]  # no temporary file left


def test_a_refused_direct_write_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "out"
    fd, _ = _opened(path)
    real = os.write
    refused = []

    def write(fd: int, data: object) -> int:
        if not refused:
            refused.append(True)
            raise OSError(errno.EINVAL, "Invalid argument")
        return real(fd, data)

    monkeypatch.setattr(direct.os, "write", write)
    f = DirectFile(fd, stage=ALIGN)
    f.write(b"x" * (3 * ALIGN + 7))
    assert not f.direct and not _is_direct(fd)
    f.close()
    assert refused and path.read_bytes() == b"x" * (3 * ALIGN + 7)


def test_a_full_disk_is_an_error_naming_the_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    target = tmp_path / "out.sam"
    with pytest.raises(SeedmapError, match=f"^{target}: No space left on device$"):
        with output_file(str(target)) as out:
            if not isinstance(out.fh, DirectFile):
                pytest.skip("this filesystem takes no direct writes")
            monkeypatch.setattr(direct.os, "write", full)
            out.write(b"@HD\tVN:1.6\n" * 1000)
    assert list(tmp_path.iterdir()) == []  # the temporary file is gone


def test_no_direct_io_on_a_filesystem_not_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(direct, "_filesystem_type", lambda fd: 0x01021994)  # tmpfs
    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT)
    try:
        assert open_direct(fd) is None and not _is_direct(fd)
    finally:
        os.close(fd)
