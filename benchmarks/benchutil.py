"""Helpers shared by the benchmark scripts: locating inputs and timing child processes.

Stdlib only, so the benchmarks run without installing anything beyond the external tools.
"""

from __future__ import annotations

import gzip
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_WORK = BENCH_DIR / "work"  # git-ignored (see .gitignore)

# Debian's ragout-examples package; the first path is where the files actually live.
RAGOUT_DIRS = (Path("/usr/share/doc/ragout/examples"), Path("/usr/share/doc/ragout-examples"))
# Debian's seqan-apps puts some tools (mason_simulator) only here, not in /usr/bin.
SEQAN_BIN = Path("/usr/lib/seqan/bin")
# GNU time (Debian package "time") measures peak RSS of a child; see run_timed.
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


@dataclass
class Timing:
    wall_s: float
    peak_mb: float
    cpu_s: float = 0.0  # user + system seconds of the command and its children


class CommandFailed(RuntimeError):
    pass


def find_exe(name: str) -> str | None:
    """Resolve an executable on PATH, falling back to Debian's seqan libexec dir."""
    found = shutil.which(name)
    if found:
        return found
    alt = SEQAN_BIN / name
    return str(alt) if os.access(alt, os.X_OK) else None


# Tools run as on a user's machine, where an installed Python package has its bytecode: without it (some
# sandboxes set PYTHONDONTWRITEBYTECODE) every seedmap run compiled its own sources again, 0.09 s.
RUN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_timed(cmd: list[str], log: Path, stdout: Path | None = None, cwd: Path | None = None,
              env: dict[str, str] | None = None) -> Timing:
    """Run cmd, returning wall time, peak RSS (MiB) and CPU seconds.

    The page cache is flushed first (untimed): an earlier run's output written back during this one
    would take CPU from it.

    Peak RSS comes from GNU time's %M. os.wait4 on our own child is not usable: the kernel
    carries the pre-exec RSS high-water mark across exec, so every child would report at least
    this Python process's RSS (which grows as SAM files are parsed). GNU time is a tiny parent,
    and its figure covers waited-for descendants too (e.g. bowtie2's perl wrapper -> aligner).
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    rss_file = log.with_suffix(".rss")
    wrapped = [GNU_TIME, "-f", "%M", "-o", str(rss_file), *cmd] if GNU_TIME else cmd
    with open(stdout or os.devnull, "wb") as out, open(log, "ab") as err:
        err.write(f"$ {shlex.join(cmd)}\n".encode())
        err.flush()
        os.sync()
        start = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=err, cwd=cwd, env=RUN_ENV if env is None else env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped; stop Popen waiting again
    peak_kib = _read_rss_kib(rss_file, usage.ru_maxrss)
    if proc.returncode != 0:
        raise CommandFailed(f"exit {proc.returncode}: {shlex.join(cmd)} (log: {log})")
    return Timing(wall, peak_kib / 1024, usage.ru_utime + usage.ru_stime)


def fastest_rounds(jobs: list[tuple[dict, list[str], Path, bool]], rounds: int, log: Path,
                   done: Callable[[dict, Path], None] | None = None) -> None:
    """Every job (row, command, SAM, SAM on stdout) `rounds` times in the same order (each tool meets the same
    neighbours): a row keeps the figures of its fastest round and every round's wall time (walls_s); a failing
    command is the row's error. done(row, sam): after each round's run of a row."""
    for _ in range(rounds):
        for row, cmd, sam, stdout in jobs:
            if "error" in row:
                continue
            try:
                m = run_timed(cmd, log, stdout=sam if stdout else None)
            except (CommandFailed, OSError) as exc:
                row["error"] = str(exc)
                print(f"# {exc}", file=sys.stderr)
                continue
            row.setdefault("walls_s", []).append(round(m.wall_s, 3))
            if m.wall_s <= row.get("wall_s", float("inf")):
                row.update(wall_s=m.wall_s, peak_mb=m.peak_mb, cpu_s=m.cpu_s)
            if done is not None:
                done(row, sam)


def _read_rss_kib(rss_file: Path, fallback_kib: int) -> int:
    """GNU time's %M (KiB, last line of its -o file); the inflated wait4 figure if time is missing."""
    if not GNU_TIME or not rss_file.exists():
        return fallback_kib
    lines = rss_file.read_text().splitlines()  # a killed child adds a "Command ..." line first
    rss_file.unlink()
    return int(lines[-1]) if lines and lines[-1].isdigit() else fallback_kib


def seedmap_prefix(override: str | None) -> list[str]:
    """Command prefix for seedmap: the override, else the `seedmap` script installed beside this Python
    (where a virtual environment puts it; a version manager's shim on PATH, such as pyenv's, would add its
    own start-up, 0.06 s here, to every run), else `seedmap` from PATH. Callers skip it when prefix[0] is
    missing."""
    if override:
        return shlex.split(override)
    beside = Path(sys.executable).parent / "seedmap"
    return [str(beside)] if os.access(beside, os.X_OK) else ["seedmap"]


def ragout_files(pattern: str) -> list[Path]:
    """Files shipped by ragout-examples matching a glob, searched in the known install dirs."""
    for base in RAGOUT_DIRS:
        hits = sorted(base.glob(pattern))
        if hits:
            return hits
    # Fall back to asking dpkg, in case a future package moves the examples.
    try:
        cmd = ["dpkg", "-L", "ragout-examples"]
        listing = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return sorted(Path(p) for p in listing.split() if Path(p).match(pattern) and Path(p).is_file())


def read_fasta(path: Path) -> Iterator[tuple[str, str]]:
    """Yield (first word of header, upper-case sequence); transparently handles .gz."""
    opener = gzip.open if path.suffix == ".gz" else open
    name, chunks = None, []
    with opener(path, "rt") as fh:
        for line in fh:
            line = line.strip()
            if line.startswith(">"):
                if name is not None:
                    yield name, "".join(chunks).upper()
                name, chunks = (line[1:].split() or [""])[0], []
            elif line:
                chunks.append(line)
    if name is not None:
        yield name, "".join(chunks).upper()


def write_fasta_record(fh, name: str, seq: str, width: int = 80) -> None:
    fh.write(f">{name}\n")
    for i in range(0, len(seq), width):
        fh.write(seq[i : i + width])
        fh.write("\n")


def fresh_dir(path: Path) -> Path:
    """Empty (and create) a per-tool scratch dir so every index is built from scratch."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt(header), sep, *(fmt(r) for r in rows)])


def best_of(fn: object, repeat: int) -> float:
    """Least wall seconds of `repeat` calls of fn, after one call that warms it up (compiling, loading)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
