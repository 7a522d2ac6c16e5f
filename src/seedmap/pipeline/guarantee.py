"""Warnings for window plans that do not keep full sensitivity, once per read length."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from seedmap.filter import plan
from seedmap.options import MAX_ERROR_RATE, MapOptions, errors_per_read

log = logging.getLogger("seedmap")


class GuaranteeWarnings:
    """Warns once per read length whose window plan does not keep full sensitivity."""

    def __init__(self, opts: MapOptions, max_window: int, windows: int, step: int, fe: int,
                 plan_guarantee: Callable[[int, int], str] | None = None) -> None:
        self.opts, self.max_window, self.windows, self.step, self.fe = opts, max_window, windows, step, fe
        self.plan_guarantee = plan_guarantee  # the engine's own (m, e) -> guarantee, when it has one
        self.seen: set[int] = set()
        self.clipped = False  # a read length whose -e count was cut to a quarter of it was logged
        self.lock = threading.Lock()  # workers check their batches side by side

    def check(self, lengths: np.ndarray) -> None:
        for m in np.unique(lengths).tolist():
            with self.lock:
                if m in self.seen:
                    continue
                self.seen.add(m)
            if m < self.opts.min_length:
                continue  # not searched; counted in the summary
            e = self._errors(m)
            g = self._guarantee(m, e)
            with self.lock:
                first_clipped = e < self.opts.errors and self.opts.errors >= 1 and not self.clipped
                self.clipped |= first_clipped
            if first_clipped:
                log.warning("reads of %d bp are searched with %d edits, not %d: at most a quarter of a read's length "
                            "(the same for any shorter read; see -e)", m, e, int(self.opts.errors))
            if m <= e:
                log.warning("reads of length %d are not longer than the %d edits allowed: reported unmapped", m, e)
            elif g == plan.SUBSTITUTIONS_ONLY:
                log.warning("reads of length %d, e=%d: this window plan finds every location whose edits are "
                            "substitutions, but may miss some with indels (not fully sensitive)", m, e)
            elif g == plan.NONE:
                log.warning("reads of length %d, e=%d: this window plan is NOT fully sensitive", m, e)

    def _errors(self, m: int) -> int:
        return int(errors_per_read(np.array([m]), self.opts.errors, 0, MAX_ERROR_RATE)[0])

    def _guarantee(self, m: int, e: int) -> str:
        if self.plan_guarantee is not None:
            return self.plan_guarantee(m, e) if m > e else plan.NONE
        return plan.guarantee(m, e, self.max_window, self.windows, self.step, self.fe)

    def warm(self, m: int) -> None:
        """Work out the guarantee for reads of length m, warning nothing and noting nothing (the warm-up
        loads its kernels: the first batch of the run is checked in a worker)."""
        self._guarantee(m, self._errors(m))
