"""CUDA device functions made from CPU kernels' own code, so that a GPU kernel runs the very algorithm the
CPU runs (one source, one set of tests) rather than a copy of it.

A real GPU could call the @njit functions directly (numba-cuda compiles them for the device), but the
CUDA simulator cannot: it hands kernels wrapped arrays that a compiled CPU function refuses. So each
function's Python source is re-bound as a device function whose globals name the other twins instead of
the CPU dispatchers; that works the same on a GPU and in the simulator. The functions twinned must not
allocate (no np.empty and the like): scratch comes from the caller.

Which functions are twinned is read from the code: the roots given, and every @njit function their code names
as a global, and so on down (callees), so a CPU kernel that gains a helper needs no list kept by hand.
"""

from __future__ import annotations

import types as pytypes
from collections.abc import Callable, Collection
from types import SimpleNamespace
from typing import Any

from numba import cuda
from numba.core.dispatcher import Dispatcher


def callees(root: Dispatcher, opaque: Collection[int] = ()) -> list[Dispatcher]:
    """root and every @njit function it calls through a global name, transitively (not looking inside the
    functions whose id is in opaque)."""
    seen: dict[int, Dispatcher] = {}
    todo = [root]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen[id(f)] = f
        if id(f) in opaque:
            continue
        py = f.py_func
        todo.extend(value for name in py.__code__.co_names
                    if isinstance(value := py.__globals__.get(name), Dispatcher))
    return list(seen.values())


def device_twins(*roots: Dispatcher, stand_ins: dict[Dispatcher, Callable[..., Any]] | None = None) -> SimpleNamespace:
    """Device versions of the given @njit functions and of everything they call (callees), by name; inside them,
    a call of any of those functions goes to its device version. stand_ins: {function: Python function}
    compiled in its place (a CPU cache hint has no device spelling); a stand-in's own callees are not followed."""
    instead = {id(f): py for f, py in (stand_ins or {}).items()}
    functions: dict[int, Dispatcher] = {}
    for root in roots:
        for f in callees(root, instead):
            functions.setdefault(id(f), f)
    made: dict[int, object] = {}
    scopes: list[dict[str, object]] = []
    for f in functions.values():
        py = instead.get(id(f), f.py_func)
        # Only the globals the code names (numba reads them at compile time; the simulator scans them at every
        # call), the twins filled in below once all exist.
        scope = {name: py.__globals__[name] for name in py.__code__.co_names if name in py.__globals__}
        for name in ("__name__", "__builtins__"):  # the module's name: warnings and numba read it
            scope[name] = py.__globals__[name]
        scopes.append(scope)
        clone = pytypes.FunctionType(py.__code__, scope, py.__name__, py.__defaults__, py.__closure__)
        made[id(f)] = cuda.jit(device=True)(clone)
    for scope in scopes:
        for name, value in list(scope.items()):
            if id(value) in made:
                scope[name] = made[id(value)]
    by_name: dict[str, object] = {}
    for f in functions.values():
        name = f.py_func.__name__
        if name in by_name and by_name[name] is not made[id(f)]:
            raise ValueError(f"two twinned functions are named {name}")  # the namespace would hide one
        by_name[name] = made[id(f)]
    return SimpleNamespace(**by_name)
