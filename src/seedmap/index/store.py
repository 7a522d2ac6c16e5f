"""On-disk index store: a directory with header.json and one .npy per array, loaded by memory mapping.

The header records the format version, the index kind and parameters, the reference (names, sequence
starts, the FASTA's size and mtime) and, for every array, its dtype, shape, CRC-32 and a sample CRC-32.
The directory is written under a temporary name and renamed into place, so a crash never leaves a
half-written index.

Loading reads no more of the index than mapping will: it checks the format version, the kind, every
.npy file's dtype, shape and exact size against the header, the FASTA's stamp, and the CRC-32 of a
sample of each array (its first and last 4 KiB; all of an array up to 64 KiB). So an index from another
version, a truncated, extended, missing or swapped file is refused with one clear line, in milliseconds
whatever the index size. The full CRC-32 of every array (a pass over the whole index: about half a
second per GB from the page cache, disk speed otherwise) is checked by `check` (`seedmap check
REFERENCE`), and by `load` once per state of the index's files: a verified stamp (verified.json in the
index directory, else in the user's cache) records each file's size, mtime and inode after a full check
passed, and a load whose files all still match it skips the pass. So a damaged byte anywhere is refused
before a map run writes anything, and only the first run after the index is built, copied or changed
pays for the pass.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import mmap
import os
import shutil
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from seedmap.errors import SeedmapError
from seedmap.io.reference import Reference
from seedmap.version import __version__

log = logging.getLogger("seedmap")

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


SAMPLE_WHOLE = 64 << 10  # arrays up to this many bytes are checked whole at every load, larger ones
SAMPLE_BYTES = 4 << 10  # by their first and last SAMPLE_BYTES (two reads: the first np.load reads anyway)
CRC_CHUNK = 64 << 20  # bytes per zlib.crc32 call of a full check


def _bytes(arr: np.ndarray) -> memoryview:
    return np.ascontiguousarray(arr).reshape(-1).data.cast("B")


def _crc(arr: np.ndarray, progress: Callable[[int], object] | None = None) -> int:
    """CRC-32 of the array's bytes, in chunks (progress(bytes) after each)."""
    data = _bytes(arr)
    crc = 0
    for start in range(0, len(data), CRC_CHUNK):
        crc = zlib.crc32(data[start:start + CRC_CHUNK], crc)
        if progress is not None:
            progress(min(CRC_CHUNK, len(data) - start))
    return crc


def sample_blocks(nbytes: int) -> list[tuple[int, int]]:
    """Byte ranges [start, end) of an array of nbytes checked at every load: all of a small array, the first
    and last SAMPLE_BYTES of a larger one. More blocks would catch little more (a swapped or truncated file
    differs at its ends) and cost a disk seek each on a cold cache (about 3 ms each, measured)."""
    if nbytes <= SAMPLE_WHOLE:
        return [(0, nbytes)]
    return [(0, SAMPLE_BYTES), (nbytes - SAMPLE_BYTES, nbytes)]


def _sample_crc(arr: np.ndarray) -> int:
    data = _bytes(arr)
    crc = 0
    for a, b in sample_blocks(len(data)):
        crc = zlib.crc32(data[a:b], crc)
    return crc


def save(path: str | Path, kind: str, params: dict, ref: Reference,
         arrays: Mapping[str, np.ndarray] | Iterable[tuple[str, np.ndarray]], fasta: str | Path | None) -> None:
    """Write the index. `arrays` may be (name, array) pairs made as they are written (a segmented build
    makes each segment then), so only one of them need be in memory."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        tmp.mkdir(parents=False)
        pairs = arrays.items() if isinstance(arrays, Mapping) else arrays
        reference = {"ref_starts": ref.starts, "ref_packed": ref.packed, "ref_nmask": ref.nmask,
                     "ref_iupac_pos": ref.iupac_pos, "ref_iupac_code": ref.iupac_code}
        described = {}
        for name, arr in itertools.chain(reference.items(), pairs):
            arr = np.ascontiguousarray(arr)
            file = tmp / f"{name}.npy"
            np.save(file, arr, allow_pickle=False)
            _leave_page_cache(file, arr.nbytes)
            described[name] = {"dtype": arr.dtype.str, "shape": list(arr.shape), "crc32": _crc(arr),
                               "sample_crc32": _sample_crc(arr)}
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


REFERENCE_ARRAYS = ("ref_starts", "ref_packed", "ref_nmask")  # and ref_iupac_pos, ref_iupac_code where kept
IUPAC_ARRAYS = ("ref_iupac_pos", "ref_iupac_code")


Required = tuple[str, ...] | Callable[[dict], tuple[str, ...]]


def _complete(header: dict, required: Required) -> bool:
    try:
        if not isinstance(header["params"], dict) or not isinstance(header["reference"]["names"], list):
            return False
        names = required(header["params"]) if callable(required) else required
        return all(isinstance(header["arrays"][name], dict) for name in REFERENCE_ARRAYS + tuple(names))
    except (KeyError, TypeError, ValueError):
        return False


# Arrays this large ask the kernel for 2 MB pages (madvise MADV_HUGEPAGE, honoured where transparent huge pages are
# "madvise" or "always"): pages read into the page cache on a fault are then 2 MB folios mapped by one entry, so
# the FM search's random reads of the occurrence tables and SA samples take no 4 KB page walks, and a cold index
# faults in 512 times fewer pieces. Pages already cached in smaller folios (read without it) stay so; those save()
# writes are dropped from the cache (_leave_page_cache).
HUGE_PAGES_FROM = 32 << 20


def _leave_page_cache(file: Path, nbytes: int) -> None:
    """A large array just written, synced to disk and dropped from the page cache: pages written may be cached in
    small folios (a blockwise build's, one short of free memory), which the 2 MB mappings of later runs cannot use
    until evicted (3.1 Gbp human-like genome, --best right after its build: 0.74x the reads/s of a run on the same
    index read back in 2 MB pages; 250 Mbp built in 3 blocks: 0.1 of 0.5 GB in 2 MB pages). The build's own check
    of the index reads it back, through mappings that ask for 2 MB pages."""
    if nbytes < HUGE_PAGES_FROM or not hasattr(os, "posix_fadvise"):
        return
    fd = os.open(file, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    except OSError:  # a file system without either: the pages stay cached as they are
        pass
    finally:
        os.close(fd)


def _prefer_huge_pages(arr: np.ndarray) -> None:
    mm = getattr(arr, "_mmap", None)
    if mm is None or arr.nbytes < HUGE_PAGES_FROM or not hasattr(mmap, "MADV_HUGEPAGE"):
        return
    try:
        mm.madvise(mmap.MADV_HUGEPAGE)
    except OSError:  # a kernel without transparent huge pages
        pass


def _load_array(path: Path, name: str, desc: dict) -> np.ndarray:
    """One array, memory-mapped, after the cheap checks: dtype, shape, exact file size, sample CRC."""
    file = path / f"{name}.npy"
    try:
        arr = np.load(file, mmap_mode="r", allow_pickle=False)  # a file shorter than its header says fails
        size = os.path.getsize(file)
    except Exception:  # OSError, ValueError, EOFError (empty file), ...
        raise SeedmapError(f"{path}: array {name} is missing, truncated or corrupted; rebuild the index") from None
    if arr.dtype.str != desc.get("dtype") or list(arr.shape) != desc.get("shape"):
        raise SeedmapError(f"{path}: array {name} has the wrong type or size; rebuild the index")
    expected = arr.offset + arr.nbytes if isinstance(arr, np.memmap) else -1
    if size != expected:
        raise SeedmapError(f"{path}: array {name} has the wrong file size ({size} bytes, not {expected}); "
                           "rebuild the index")
    _prefer_huge_pages(arr)  # before the sample's pages are read
    if "sample_crc32" in desc and _sample_crc(arr) != desc["sample_crc32"]:  # absent in older indexes
        raise SeedmapError(f"{path}: array {name} is corrupted or from another index (checksum mismatch); "
                           "rebuild the index")
    return arr


def read_header(path: str | Path, kind: str | None = None, required: Required = (),
                fasta: str | Path | None = None) -> dict:
    """The checked header of the index at path: a seedmap index of this format version, of `kind` (any when
    None) holding the arrays `required` (or those it names for the index's parameters), built from `fasta`
    as it is now (when given and present)."""
    path = Path(path)
    try:
        header = json.loads((path / "header.json").read_text())
    except FileNotFoundError:
        raise SeedmapError(f"{path}: no index here (run: seedmap index)") from None
    except (OSError, ValueError):
        raise SeedmapError(f"{path}: the index header is unreadable or corrupted; rebuild the index") from None
    if not isinstance(header, dict) or header.get("format") != "seedmap-index":
        raise SeedmapError(f"{path}: not a seedmap index")
    if kind is not None and header.get("kind") != kind:  # before the arrays: another kind has other arrays
        raise SeedmapError(f"{path}: this is a {header.get('kind')} index, not a {kind} index")
    if not _complete(header, required):
        raise SeedmapError(f"{path}: the index header is incomplete; rebuild the index")
    if header.get("format_version") != FORMAT_VERSION:
        raise SeedmapError(f"{path}: index format version {header.get('format_version')} is not supported by "
                           f"seedmap {__version__} (version {FORMAT_VERSION}); rebuild the index")
    stamp = header["reference"].get("fasta")
    if fasta is not None and stamp is not None and os.path.exists(fasta) and fasta_stamp(fasta) != stamp:
        raise SeedmapError(f"{path}: the index is out of date ({fasta} changed since it was built); "
                           "rebuild the index")
    return header


def load(path: str | Path, kind: str, required: Required, fasta: str | Path | None = None) -> StoredIndex:
    """Load an index of `kind` that must hold the arrays `required`: the cheap checks, then every byte's
    CRC-32 unless a verified stamp says the files have not changed since they last passed (module docstring)."""
    path = Path(path)
    header = read_header(path, kind, required, fasta)
    arrays = {name: _load_array(path, name, desc) for name, desc in header["arrays"].items()}
    _verify_once(path, header, arrays)
    iupac = [np.asarray(arrays.pop(name)) for name in IUPAC_ARRAYS if name in arrays]
    ref = Reference(list(header["reference"]["names"]), np.asarray(arrays.pop("ref_starts")),
                    arrays.pop("ref_packed"), arrays.pop("ref_nmask"), *(iupac if len(iupac) == 2 else ()))
    return StoredIndex(kind, header["params"], ref, arrays, header)


def check(path: str | Path, required: Required = (), fasta: str | Path | None = None,
          progress: Callable[[int], object] | None = None) -> dict:
    """Everything load checks, then the full CRC-32 of every array against the one written at build.
    Returns the header; raises SeedmapError naming the first array that differs. progress(bytes) is called
    as the arrays are read."""
    path = Path(path)
    header = read_header(path, None, required, fasta)
    arrays = {name: _load_array(path, name, desc) for name, desc in header["arrays"].items()}
    before = _file_states(path, arrays)
    _check_all(path, header, arrays, progress)
    _write_stamp(path, before)
    return header


def _check_all(path: Path, header: dict, arrays: Mapping[str, np.ndarray],
               progress: Callable[[int], object] | None = None) -> None:
    """The full CRC-32 of every array against the header's; SeedmapError naming the first that differs."""
    for name, desc in header["arrays"].items():
        if _crc(arrays[name], progress) != desc.get("crc32"):
            raise SeedmapError(f"{path}: array {name} is corrupted (checksum mismatch); rebuild the index")


STAMP = "verified.json"
RACY_NS = 2_000_000_000  # a file changed this close to its stamp could change again within one mtime tick


def _file_states(path: Path, arrays: Iterable[str]) -> dict[str, list[int]]:
    """[size, mtime_ns, inode] of the header and these array files: what a later change or copy alters."""
    states = {}
    for name in ("header", *arrays):
        st = os.stat(path / ("header.json" if name == "header" else f"{name}.npy"))
        states[name] = [st.st_size, st.st_mtime_ns, st.st_ino]
    return states


def _stamp_paths(path: Path) -> list[Path]:
    """Where the verified stamp of the index at path may be: in it, else in the user's cache (keyed by the
    index's real path) for an index directory this user cannot write."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path(os.path.expanduser("~")) / ".cache") / "seedmap"
    key = hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:32]
    return [path / STAMP, cache / "verified" / f"{key}.json"]


def _stamped(path: Path, states: dict[str, list[int]]) -> bool:
    for where in _stamp_paths(path):
        try:
            if json.loads(where.read_text()) == {"files": states}:
                return True
        except (OSError, ValueError):
            continue
    return False


def _write_stamp(path: Path, states: dict[str, list[int]]) -> None:
    """Record that the files in these states passed the full check, in the first place that takes it; none
    (a read-only index and cache) only means the next load checks again. Not when a file changed during the
    check, nor so recently that a change within the same mtime tick could go unseen."""
    try:
        if _file_states(path, (n for n in states if n != "header")) != states:
            return
    except OSError:
        return
    if any(mtime > time.time_ns() - RACY_NS for _, mtime, _ in states.values()):
        return
    text = json.dumps({"files": states})
    for where in _stamp_paths(path):
        tmp = where.with_name(f".{where.name}.tmp-{os.getpid()}")
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text)
            os.replace(tmp, where)
            return
        except OSError:
            tmp.unlink(missing_ok=True)
    log.debug("%s: nowhere to write the verified stamp; the next load checks the index again", path)


def _verify_once(path: Path, header: dict, arrays: Mapping[str, np.ndarray]) -> None:
    """The full check of `load`, skipped when a stamp says these files passed it as they are now."""
    try:
        before = _file_states(path, arrays)
    except OSError:
        raise SeedmapError(f"{path}: the index files cannot be read; rebuild the index") from None
    if _stamped(path, before):
        return
    t0 = time.perf_counter()
    _check_all(path, header, arrays)
    release_pages(arrays.values())  # resident again as mapping touches them (a segmented index: one segment)
    _write_stamp(path, before)
    log.info("verified the index's checksums (%.0f MB in %.1f s; later runs skip this until its files change)",
             total_bytes(header) / 1e6, time.perf_counter() - t0)


def total_bytes(header: dict) -> int:
    """Bytes of all the index's arrays."""
    return sum(int(np.prod(d["shape"], dtype=np.int64)) * np.dtype(d["dtype"]).itemsize
               for d in header["arrays"].values())


def release_pages(arrays: Iterable[np.ndarray]) -> None:
    """Drop the pages of memory-mapped arrays from this process's resident set (they stay in the page cache
    and come back on the next touch): a segmented index keeps only the segment in use resident."""
    for arr in arrays:
        mm = getattr(arr, "_mmap", None)
        if mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
            mm.madvise(mmap.MADV_DONTNEED)
