"""Where numba kernels spend their time, function by function: `seedmap ...` run in this process under Linux
perf, each sample mapped to the compiled function it fell in (py-spy sees only the Python line that called a
kernel; perf sees the machine code but not numba's names).

    python benchmarks/perf_kernels.py [--top 25] -- map ref.fa reads.fq -e 5 -t 1 -o /dev/null

numba loads a kernel as an object file into its JIT engine. This script keeps every object file numba loads
(compiled here or read from its cache), asks the engine where each object's functions lie, records the run
with `perf record -p <this process>`, and sums perf's samples per function (inlined helpers count in their
caller). Needs `perf` (linux-perf); no hardware counters are needed (perf falls back to the cpu-clock). Run
the command once before, so that the kernels load from the cache: compiling in this process would count too.
`--annotate _left_walk` also lists that function's hottest instructions (perf annotate cannot: perf does not
know numba's code). A single thread (-t 1) keeps the numbers a kernel's own; "(not a numba function)" is
Python, numpy, the kernel's callers and compiling. Example, 250 Mbp human-like genome, e = 5, the fm search's
count pass: the walks 52 %, the cut of the reads into pieces 22 %, the lower bounds 16 % (filter/fm_pieces.py);
the same genome, 2,000 reads, -t 1: 37-41 % of _left_walk's samples wait on a single-row node's
occurrence-table block, 12-21 % on its superblock row (filter/fm_scheme.py's notes).
"""

from __future__ import annotations

import argparse
import bisect
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba.core.codegen as codegen

OBJECTS: list[bytes] = []
_set_compiled_object = codegen.CPUCodeLibrary._set_compiled_object


def _keep(self: codegen.CPUCodeLibrary, value: bytes) -> None:
    OBJECTS.append(value)
    _set_compiled_object(self, value)


def _symbols(obj: Path) -> list[tuple[str, int, int, str]]:
    """(section, offset, size, name) of the object's defined functions."""
    out = subprocess.run(["objdump", "-t", str(obj)], capture_output=True, text=True, check=True).stdout
    funcs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 6 and "F" in f[2:-3] and f[-3].startswith(".") and "text" in f[-3]:
            funcs.append((f[-3], int(f[0], 16), int(f[-2], 16), f[-1]))
    return funcs


def _short(name: str) -> str:
    """seedmap.filter.fm_scheme._right_walk from numba's mangled name."""
    m = re.match(r"_ZN(.*?)(?:B\d+v\d+|E)", name)
    if not m:
        return name[:80]
    parts, s = [], m.group(1)
    while s:
        n = re.match(r"(\d+)", s)
        if not n:
            break
        k = int(n.group(1))
        parts.append(s[len(n.group(1)):len(n.group(1)) + k])
        s = s[len(n.group(1)) + k:]
    return ".".join(parts).replace("_3c", "<").replace("_3e", ">") or name[:80]


def function_map(engine: object, workdir: Path) -> list[tuple[int, int, str, Path, int, str]]:
    """(address, size, name, object file, offset in its section, symbol) of every function of the kept objects,
    from the JIT engine's symbol addresses."""
    out = []
    for k, data in enumerate(OBJECTS):
        path = workdir / f"{k}.o"
        path.write_bytes(data)
        funcs = _symbols(path)
        bases: dict[str, int] = {}
        for section, offset, _, name in funcs:  # one known address per section gives the section's base
            if section not in bases:
                addr = engine.get_function_address(name)
                if addr:
                    bases[section] = addr - offset
        for section, offset, size, name in funcs:
            if section in bases and size:
                out.append((bases[section] + offset, size, _short(name), path, offset, name))
    return sorted(set(out))


def annotate(func: tuple[int, int, str, Path, int, str], samples: dict[int, int], top: int) -> None:
    """The function's `top` instructions by samples (an instruction's samples are mostly time spent waiting for
    the one before it to retire, e.g. a load that missed the cache)."""
    _, _, short, path, offset, symbol = func
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--disassemble={symbol}", str(path)],
                         capture_output=True, text=True, check=True).stdout
    lines = []
    for line in dis.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(.*)", line)
        if m:
            lines.append((int(m.group(1), 16) - offset, m.group(2)))
    total = sum(samples.values())
    print(f"{short}: {total} samples, {len(lines)} instructions; the {top} with most samples, in code order:",
          file=sys.stderr)
    hot = {at for at, _ in sorted(lines, key=lambda x: -samples.get(x[0], 0))[:top]}
    for i, (at, ins) in enumerate(lines):
        if at in hot:
            before = lines[i - 1][1] if i else ""
            print(f"{samples.get(at, 0):8d} {100 * samples.get(at, 0) / max(total, 1):5.1f}%  +{at:#06x}  "
                  f"{ins[:60]:60s}  after: {before[:50]}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=25, help="functions listed (and instructions, with --annotate)")
    ap.add_argument("--freq", type=int, default=999, help="samples per second")
    ap.add_argument("--annotate", metavar="NAME", help="also list the hot instructions of the function whose name "
                    "ends with NAME (e.g. _left_walk)")
    ap.add_argument("seedmap_args", nargs=argparse.REMAINDER, help="-- then seedmap's arguments")
    args = ap.parse_args()
    sm_args = args.seedmap_args[1:] if args.seedmap_args[:1] == ["--"] else args.seedmap_args
    codegen.CPUCodeLibrary._set_compiled_object = _keep
    from numba.core.registry import cpu_target

    from seedmap.cli import main as seedmap_main

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "perf.data"
        perf = subprocess.Popen(["perf", "record", "-F", str(args.freq), "-p", str(os.getpid()), "-o", str(data)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # perf attaches
        try:
            seedmap_main(sm_args)
        except SystemExit:
            pass
        perf.send_signal(2)
        perf.wait()
        funcs = function_map(cpu_target.target_context.codegen()._engine._ee, work)
        ips = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip"], capture_output=True, text=True).stdout
        starts = [f[0] for f in funcs]
        total, by, within = 0, {}, {}
        for line in ips.split():
            ip = int(line, 16)
            total += 1
            i = bisect.bisect_right(starts, ip) - 1
            known = i >= 0 and ip < funcs[i][0] + funcs[i][1]
            name = funcs[i][2] if known else "(not a numba function)"
            by[name] = by.get(name, 0) + 1
            if known and args.annotate and name.endswith(args.annotate):
                within.setdefault(i, {}).setdefault(ip - funcs[i][0], 0)
                within[i][ip - funcs[i][0]] += 1
        print(f"{total} samples of the whole process ({len(funcs)} numba functions known)", file=sys.stderr)
        for name, n in sorted(by.items(), key=lambda x: -x[1])[:args.top]:
            print(f"{n:8d} {100 * n / max(total, 1):5.1f}%  {name}", file=sys.stderr)
        for i, samples in within.items():
            annotate(funcs[i], samples, args.top)


if __name__ == "__main__":
    main()
