"""The two changes `seedmap.jit.activate` makes to numba's Dispatcher class, each scoped to seedmap's kernels
(functions whose module is under `seedmap.`): every other function compiles and caches as numba would.

A class patch, not one per kernel: numba types a call to a jitted function through the callee's own
`get_call_template`, so an attribute on each seedmap dispatcher would do, but only if every kernel were
made by a seedmap decorator; they are plain `numba.njit` functions, defined as their modules import."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _ours(dispatcher: object) -> bool:
    """Whether a numba dispatcher is one of seedmap's kernels."""
    return getattr(getattr(dispatcher, "py_func", None), "__module__", "").startswith("seedmap.")


def no_seedmap_caching() -> None:
    """cache=True with nowhere to write fails as the kernels are defined (numba: 'no locator available'):
    seedmap's stay uncached instead, compiled in every run."""
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.enable_caching

    def enable_caching(self: Dispatcher) -> None:
        if not _ours(self):
            original(self)

    Dispatcher.enable_caching = enable_caching  # type: ignore[method-assign]  # the class patch


def no_literal_specialisations() -> None:
    """A call between seedmap's kernels compiles its callee for the arguments' types, not their values.

    numba types a constant argument (`f(buf, p, 78, 77, d)`, a counter's first `n = 0`) as a literal and
    compiles the callee once for each literal it meets, then again for the plain type once inference has
    unified a variable's assignments: the FM search compiled its right walk four times, ~10 s each; the
    first fm run spent a third of its 60-110 s a kernel on such copies, the SAM and BAM tags one per tag.
    No seedmap kernel needs a literal argument, so its callees are typed with the plain types."""
    from numba.core.dispatcher import Dispatcher
    from numba.core.types.misc import unliteral  # numba.core.types' stub omits it

    original = Dispatcher.get_call_template

    def get_call_template(self: Dispatcher, args: Sequence[Any], kws: dict[str, Any]) -> tuple[Any, ...]:
        if _ours(self):
            args = tuple(unliteral(a) for a in args)
            kws = {k: unliteral(v) for k, v in kws.items()}
        return original(self, args, kws)

    # The stub also allows keywords as pairs; numba's typing passes a dict.
    Dispatcher.get_call_template = get_call_template  # type: ignore[method-assign, assignment]
