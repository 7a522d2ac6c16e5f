"""backends/cuda/twins.py finds a kernel's callees from its code: every @njit function it names, transitively."""

from __future__ import annotations

from numba import njit

from seedmap.backends.cuda.twins import callees
from seedmap.filter import fm_scheme, fm_search


@njit(cache=False)
def _leaf(x: int) -> int:
    return x + 1


@njit(cache=False)
def _middle(x: int) -> int:
    return _leaf(x) * 2


@njit(cache=False)
def _top(x: int) -> int:
    return _middle(x) + _leaf(x)


def _names(functions: list) -> set[str]:
    return {f.py_func.__name__ for f in functions}


def test_callees_are_found_transitively_once_each():
    found = callees(_top)
    assert len(found) == 3 and _names(found) == {"_top", "_middle", "_leaf"}


def test_an_opaque_function_is_kept_but_not_looked_inside():
    assert _names(callees(_top, {id(_middle)})) == {"_top", "_middle", "_leaf"}  # _top names _leaf itself
    assert _names(callees(_middle, {id(_middle)})) == {"_middle"}


def test_the_fm_search_reaches_the_occ_table_and_its_popcount():
    found = _names(callees(fm_scheme.search))
    assert {"search", "_left_walk", "_right_walk", "occ", "popcount", "extend", "pieces"} <= found
    assert fm_search.prefetch_occ.py_func.__name__ in found
