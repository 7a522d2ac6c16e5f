"""What the pipeline maps with on a device: a DeviceBackend (the devices, their set-up, one engine maker per
device), and DeviceEngine, an engines.base.Engine whose verification and traceback are a backend's own.
backends/select.py turns --device into a backend; pipeline/devices.py and the Dask worker use only these."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from seedmap.engines.base import Engine, QueryMemo
from seedmap.io.reference import Reference
from seedmap.options import EngineOptions
from seedmap.verify import windows
from seedmap.verify.align import Traceback

log = logging.getLogger("seedmap")


@dataclass(frozen=True)
class EngineInputs:
    """What a run's device engines are made from: the index kind and index, the reference, the engine options,
    and the run's CPU engine (a backend may keep its candidates, or any step it does not offload, on the CPU;
    the CPU engine is read-only while mapping, so every worker may share it)."""

    kind: str
    index: object
    ref: Reference
    options: EngineOptions
    cpu: Engine


# Makes the engine of one worker thread on one device, called in that thread (it binds the thread to its
# device where the backend needs that); engines of one maker share the device's copies of reference and index.
EngineMaker = Callable[[EngineInputs], Engine]


class DeviceBackend(Protocol):
    """The devices a run maps on (a device listed twice gets twice the workers), as --device chose them."""

    ids: tuple[int, ...]

    def describe(self) -> str:
        """The devices, as the log names them (cuda:0,1)."""
        ...

    def prepare(self, inputs: EngineInputs) -> None:
        """Once per run, before any engine: log which steps stay on the CPU (once, not per worker) and load
        (compile the first time) every kernel the run launches, on every device, in the calling thread."""
        ...

    def engine_maker(self, dev: int) -> EngineMaker:
        """The maker of the engines of device `dev`'s workers: they share its copies."""
        ...

    def serialized(self) -> AbstractContextManager[object]:
        """Held around each engine's making and each batch: a simulator runs one batch at a time (a lock), a
        real device needs nothing (a null context)."""
        ...


# The twins of verify.windows.verify and verify.align.align on a device (same arguments, same results).
VerifyWindows = Callable[..., tuple[np.ndarray, ...]]
AlignLocations = Callable[..., Traceback]


class CandidateSearch(Protocol):
    """What a DeviceEngine takes from its candidate engine (a CPU Engine, or a device's own candidate engine):
    Engine's members but the verification and the traceback."""

    max_window: int
    round0_min: float

    def guarantee(self, m: int, e: int) -> str: ...

    def bulk_verifying_all(self) -> AbstractContextManager[None]: ...

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
                          memo: QueryMemo | None = None) -> tuple[np.ndarray, np.ndarray]: ...

    def spans_alone(self, packed: np.ndarray, nmask: np.ndarray, seq_starts: np.ndarray, start: np.ndarray,
                    end: np.ndarray, parts: np.ndarray) -> np.ndarray: ...


class DeviceEngine:
    """A run's engine on a device (an engines.base.Engine): the candidate engine's windows (from the device or
    the CPU), verified by `verify_windows` and their locations aligned by `align_locations`, the backend's
    twins of verify.windows.verify and verify.align.align."""

    def __init__(self, engine: CandidateSearch, verify_windows: VerifyWindows, align_locations: AlignLocations) -> None:
        self.engine = engine
        self.max_window = engine.max_window
        self.round0_min = engine.round0_min
        self.locator = verify_windows
        self.aligner = align_locations

    def guarantee(self, m: int, e: int) -> str:
        return self.engine.guarantee(m, e)

    def bulk_verifying_all(self) -> AbstractContextManager[None]:
        return self.engine.bulk_verifying_all()

    def candidate_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray,
                          memo: QueryMemo | None = None) -> tuple[np.ndarray, np.ndarray]:
        return self.engine.candidate_windows(qcodes, qoff, qerr, memo)

    def spans_alone(self, packed: np.ndarray, nmask: np.ndarray, seq_starts: np.ndarray, start: np.ndarray,
                    end: np.ndarray, parts: np.ndarray) -> np.ndarray:
        return self.engine.spans_alone(packed, nmask, seq_starts, start, end, parts)

    def verify_windows(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray,
                       win: np.ndarray, packed: np.ndarray, nmask: np.ndarray) -> tuple[np.ndarray, ...]:
        return self.locator(qcodes, qoff, qerr, win_q, win, packed, nmask)

    def align_locations(self, qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, loc_q: np.ndarray,
                        loc_s: np.ndarray, loc_e: np.ndarray, loc_d: np.ndarray, packed: np.ndarray,
                        nmask: np.ndarray, seq_starts: np.ndarray) -> Traceback:
        return self.aligner(qcodes, qoff, qerr, loc_q, loc_s, loc_e, loc_d, packed, nmask, seq_starts)


def verify_short_on_device(qcodes: np.ndarray, qoff: np.ndarray, qerr: np.ndarray, win_q: np.ndarray, win: np.ndarray,
                           packed: np.ndarray, nmask: np.ndarray, run: Callable[..., tuple], max_read: int,
                           said: threading.Event, what: str) -> tuple[np.ndarray, ...]:
    """verify.windows.verify with the device's window kernel (`run`) for reads of at most max_read bases and
    the CPU's for longer ones (logged once per process, `said`: "reads longer than ... on the CPU (what)")."""
    qoff64 = np.asarray(qoff, dtype=np.int64)
    long = (qoff64[win_q + 1] - qoff64[win_q]) > max_read
    if not long.any():
        return windows.verify(qcodes, qoff, qerr, win_q, win, packed, nmask, run=run)
    if not said.is_set():
        said.set()
        log.info("reads longer than %d bp are verified on the CPU (%s)", max_read, what)
    # A query's windows all go one way (the read's length decides), so each part keeps its queries' order,
    # and a stable sort by query merges them.
    parts = [windows.verify(qcodes, qoff, qerr, win_q[~long], win[~long], packed, nmask, run=run),
             windows.verify(qcodes, qoff, qerr, win_q[long], win[long], packed, nmask)]
    cols = [np.concatenate(c) for c in zip(*parts, strict=True)]
    order = np.argsort(cols[0], kind="stable")
    return tuple(c[order] for c in cols)
