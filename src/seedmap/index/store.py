"""On-disk index store: a directory with header.json and one .npy per array, loaded by memory mapping.

The header records the format version, the index kind and parameters, the reference (names, sequence
starts, the FASTA's size and mtime) and, for every array, its dtype, shape and CRC-32, so that an index
from another version, a truncated or a corrupted one is refused with one clear line. The directory is
written under a temporary name and renamed into place, so a crash never leaves a half-written index.
"""

from __future__ import annotations

import json
import os
import shutil
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from seedmap import __version__
from seedmap.errors import SeedmapError
from seedmap.io.reference import Reference

FORMAT_VERSION = 1
KIND_SUFFIX = {"neighborhood": ".smi", "kmer": ".kmer.smi", "fm": ".fm.smi"}


@dataclass
class StoredIndex:
    kind: str
    params: dict
    reference: Reference
    arrays: dict[str, np.ndarray]
    header: dict


def default_path(fasta: str | Path, kind: str) -> Path:
    return Path(str(fasta) + KIND_SUFFIX[kind])


def fasta_stamp(fasta: str | Path) -> dict:
    st = os.stat(fasta)
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _crc(arr: np.ndarray) -> int:
    return zlib.crc32(memoryview(np.ascontiguousarray(arr)).cast("B"))


def save(path: str | Path, kind: str, params: dict, ref: Reference, arrays: dict[str, np.ndarray],
         fasta: str | Path | None) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        tmp.mkdir(parents=False)
        everything = {"ref_starts": ref.starts, "ref_packed": ref.packed, "ref_nmask": ref.nmask, **arrays}
        described = {}
        for name, arr in everything.items():
            arr = np.ascontiguousarray(arr)
            np.save(tmp / f"{name}.npy", arr, allow_pickle=False)
            described[name] = {"dtype": arr.dtype.str, "shape": list(arr.shape), "crc32": _crc(arr)}
        header = {
            "format": "seedmap-index",
            "format_version": FORMAT_VERSION,
            "seedmap_version": __version__,
            "kind": kind,
            "params": params,
            "reference": {"names": ref.names, "fasta": fasta_stamp(fasta) if fasta else None},
            "arrays": described,
        }
        (tmp / "header.json").write_text(json.dumps(header))
        _replace_dir(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace_dir(tmp: Path, path: Path) -> None:
    if path.exists():
        old = path.with_name(f".{path.name}.old-{os.getpid()}")
        os.rename(path, old)
        os.rename(tmp, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(tmp, path)


REFERENCE_ARRAYS = ("ref_starts", "ref_packed", "ref_nmask")


def _complete(header: dict, required: tuple[str, ...]) -> bool:
    try:
        return (isinstance(header["params"], dict) and isinstance(header["reference"]["names"], list)
                and all(isinstance(header["arrays"][name], dict) for name in REFERENCE_ARRAYS + required))
    except (KeyError, TypeError):
        return False


def load(path: str | Path, kind: str, required: tuple[str, ...], fasta: str | Path | None = None,
         verify: bool = True) -> StoredIndex:
    """Load and check an index of `kind` that must hold the arrays `required`."""
    path = Path(path)
    try:
        header = json.loads((path / "header.json").read_text())
    except FileNotFoundError:
        raise SeedmapError(f"{path}: no index here (run: seedmap index)") from None
    except (OSError, ValueError):
        raise SeedmapError(f"{path}: the index header is unreadable or corrupted; rebuild the index") from None
    if not isinstance(header, dict) or header.get("format") != "seedmap-index":
        raise SeedmapError(f"{path}: not a seedmap index")
    if not _complete(header, required):
        raise SeedmapError(f"{path}: the index header is incomplete; rebuild the index")
    if header.get("format_version") != FORMAT_VERSION:
        raise SeedmapError(f"{path}: index format version {header.get('format_version')} is not supported by "
                           f"seedmap {__version__} (version {FORMAT_VERSION}); rebuild the index")
    if header.get("kind") != kind:
        raise SeedmapError(f"{path}: this is a {header.get('kind')} index, not a {kind} index")
    stamp = header["reference"].get("fasta")
    if fasta is not None and stamp is not None and os.path.exists(fasta) and fasta_stamp(fasta) != stamp:
        raise SeedmapError(f"{path}: the index is out of date ({fasta} changed since it was built); "
                           "rebuild the index")
    arrays = {}
    for name, desc in header["arrays"].items():
        try:
            arr = np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
        except Exception:  # OSError, ValueError, EOFError (empty file), ...
            raise SeedmapError(f"{path}: array {name} is missing or corrupted; rebuild the index") from None
        if arr.dtype.str != desc.get("dtype") or list(arr.shape) != desc.get("shape"):
            raise SeedmapError(f"{path}: array {name} has the wrong type or size; rebuild the index")
        if verify and _crc(arr) != desc.get("crc32"):
            raise SeedmapError(f"{path}: array {name} is corrupted (checksum mismatch); rebuild the index")
        arrays[name] = arr
    ref = Reference(list(header["reference"]["names"]), np.asarray(arrays.pop("ref_starts")),
                    arrays.pop("ref_packed"), arrays.pop("ref_nmask"))
    return StoredIndex(kind, header["params"], ref, arrays, header)
