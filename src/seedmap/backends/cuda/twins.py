"""CUDA device functions made from CPU kernels' own code, so that a GPU kernel runs the very algorithm the
CPU runs (one source, one set of tests) rather than a copy of it.

A real GPU could call the @njit functions directly (numba-cuda compiles them for the device), but the
CUDA simulator cannot: it hands kernels wrapped arrays that a compiled CPU function refuses. So each
function's Python source is re-bound as a device function whose globals name the other twins instead of
the CPU dispatchers; that works the same on a GPU and in the simulator. The functions twinned must not
allocate (no np.empty and the like): scratch comes from the caller.
"""

from __future__ import annotations

import types as pytypes
from types import SimpleNamespace

from numba import cuda


def device_twins(*functions: object, stand_ins: dict | None = None) -> SimpleNamespace:
    """Device versions of the given @njit functions, by name; inside them, a call of any of the given
    functions goes to its device version (so every function one of them calls must be given too).
    stand_ins: {given function: Python function} compiled in its place (a CPU cache hint has no device spelling)."""
    originals = {id(f): f for f in functions}
    instead = {id(f): py for f, py in (stand_ins or {}).items()}
    made: dict[int, object] = {}
    scopes: list[dict] = []
    for f in functions:
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
            if id(value) in originals:
                scope[name] = made[id(value)]
    return SimpleNamespace(**{f.py_func.__name__: made[id(f)] for f in functions})
