"""Copies of an index's most randomly read arrays in 2 MB pages, made in the background.

A memory-mapped index lives in the page cache in 4 kB pages, so nearly every occurrence-table lookup of a large
genome's search misses the TLB as well as the cache: a page walk before each memory wait. Anonymous memory
advised for transparent huge pages (Linux, whose usual default is to honour the advice) needs one TLB entry per
2 MB. The copy (250 MB at 250 Mbp, about 0.35 s) is read from the file, not through the map (whose pages would
count twice), in a thread while the run warms up; the search keeps the memory maps until it is done, then takes
the copies (the same bytes, so the same hits) and the maps' pages are released. 250 Mbp human-like genome,
3,000 reads, e = 5, the fm engine's count pass (search and locate) in one process, six times each in alternating
order: maps 5.32 s, copies in 2 MB pages 4.75 s, copies in 4 kB pages 5.21 s (so the pages, not the copy); again:
maps 4.95 s, occurrence tables in 2 MB pages 4.32 s, and the SA samples and their marks too 4.24 s (not worth
their 190 MB more to copy). Two more such runs while yara_indexer loaded the other core showed no difference
(e = 3: 3.63 / 3.61 s, e = 5: 5.45 / 5.58 s): the gain is there when the memory system is not shared.

Larger tables are not copied (HUGE_MAX): a search of more than a few reads waits for the copies, and at 1 Gbp
(1 GB of occurrence tables, one segment) the wait outweighed the gain. 20,000 reads, -t 2, --best, alternated
without / with copies: 1 Gbp 5.92 / 8.22, 4.56 / 7.55, 4.55 / 5.41 s; all-mapping 28.95 / 25.65, 23.73 / 29.54 s
(noise); 250 Mbp --best 2.80 / 2.79, 2.56 / 2.57, 2.61 / 2.77, 2.93 / 2.61, 2.91 / 2.72 s (kept).
"""

from __future__ import annotations

import mmap
import threading
from collections.abc import Sequence

import numpy as np

from seedmap.index.store import release_pages

HUGE = 2 << 20
HUGE_MIN = 32 << 20  # smaller arrays stay memory-mapped (they take few TLB entries anyway)
HUGE_MAX = 512 << 20  # arrays (all those named) larger than this in all stay memory-mapped (see the notes)


def huge_page_copy(arr: np.memmap) -> np.ndarray:
    """A read-only copy of a memory-mapped array (read from its file) in anonymous memory advised for
    transparent huge pages, 2 MB aligned; read-only like the map it replaces (the kernels' type)."""
    nbytes = arr.nbytes
    # Private: shared anonymous memory is shmem, whose huge pages are off by default (shmem_enabled).
    mm = mmap.mmap(-1, nbytes + HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    mm.madvise(mmap.MADV_HUGEPAGE)  # before the first touch: the pages are 2 MB from the start
    buf = np.frombuffer(mm, dtype=np.uint8)  # (the array keeps the map alive)
    start = -buf.ctypes.data % HUGE
    region = buf[start:start + nbytes]
    with open(arr.filename, "rb") as f:
        f.seek(arr.offset)
        view = memoryview(region)
        done = 0
        while done < nbytes:
            got = f.readinto(view[done:])
            if not got:
                raise OSError(f"{arr.filename}: shorter than its array")
            done += got
    out = region.view(arr.dtype).reshape(arr.shape)
    out.flags.writeable = False
    return out


class HugePageCopies:
    """Background copies (huge_page_copy) of the named memory-mapped array attributes of `owner` that are at
    least HUGE_MIN bytes, if the named arrays take at most HUGE_MAX bytes in all. take() (cheap, any thread) puts
    them in place once all are made and releases the maps' pages; until then the owner keeps its maps. Nothing is
    copied where the system has no such advice."""

    def __init__(self, owner: object, names: Sequence[str]) -> None:
        self.owner = owner
        wanted = hasattr(mmap, "MADV_HUGEPAGE") and sum(getattr(owner, n).nbytes for n in names) <= HUGE_MAX
        self.names = [n for n in names if isinstance(getattr(owner, n), np.memmap)
                      and getattr(owner, n).nbytes >= HUGE_MIN] if wanted else []
        self.copies: dict[str, np.ndarray] = {}
        self.done = threading.Event()
        self.taken = not self.names
        self._lock = threading.Lock()
        if self.names:
            threading.Thread(target=self._copy, name="seedmap-huge-pages", daemon=True).start()

    def _copy(self) -> None:
        try:
            self.copies = {n: huge_page_copy(getattr(self.owner, n)) for n in self.names}
        except (OSError, ValueError):  # (no memory for them, or a file gone: the maps serve)
            self.copies = {}
        self.done.set()

    def take(self, wait: bool) -> None:
        """Put the copies in place if they are made; `wait`: wait for them first (a search of more than a few
        reads on the maps makes most of their pages resident, beside the copies: peak memory)."""
        if self.taken:
            return
        if wait:
            self.done.wait()
        elif not self.done.is_set():
            return
        with self._lock:
            if self.taken:
                return
            self.taken = True
            old = [getattr(self.owner, n) for n in self.copies]
            for n, arr in self.copies.items():
                setattr(self.owner, n, arr)
        release_pages(old)  # (a search still reading them faults them back in from the page cache)
