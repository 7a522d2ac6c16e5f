#!/usr/bin/env python3
"""Functions in src/ with more than --over positional parameters (default 12), longest first: the signatures that
would take a few named structures (NamedTuples of arrays) instead. tests/test_signatures.py holds the count.

    python benchmarks/long_signatures.py
    python benchmarks/long_signatures.py --over 10
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "seedmap"


def positional(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Positional parameters (self and cls not counted)."""
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    return len([n for n in names if n not in ("self", "cls")])


def long_signatures(over: int = 12, src: Path = SRC) -> list[tuple[int, str, int, str]]:
    """(positional parameters, file relative to src/, line, name) of every function with more than `over`."""
    found = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (n := positional(node)) > over:
                found.append((n, str(path.relative_to(src.parent)), node.lineno, node.name))
    return sorted(found, key=lambda f: (-f[0], f[1], f[2]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--over", type=int, default=12, help="count functions with more positional parameters")
    args = ap.parse_args()
    found = long_signatures(args.over)
    print("| positional | function |\n|---|---|")
    for n, path, line, name in found:
        print(f"| {n} | `{path}:{line} {name}` |")
    print(f"\n{len(found)} functions with more than {args.over} positional parameters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
