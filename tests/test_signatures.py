"""The count of long positional signatures (benchmarks/long_signatures.py) does not grow: a function that needs
more than 12 positional parameters takes a named structure (a NamedTuple of arrays) instead."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from long_signatures import long_signatures  # noqa: E402

CEILING = 35  # lower it as signatures are shortened


def test_long_signatures_do_not_grow():
    found = long_signatures(12)
    assert len(found) <= CEILING, "\n".join(f"{p}:{line} {name} ({n})" for n, p, line, name in found)


def test_the_count_sees_a_long_signature(tmp_path):
    (tmp_path / "m.py").write_text("def f(a, b, c, d, e, f, g, h, i, j, k, l, m):\n    pass\n"
                                   "class C:\n    def g(self, a, b, c, d, e, f, g, h, i, j, k, l):\n        pass\n")
    assert [(n, name) for n, _, _, name in long_signatures(12, tmp_path)] == [(13, "f")]
