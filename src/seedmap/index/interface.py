"""What every index kind's index (and a build of one in genome segments) offers the rest of seedmap: its arrays,
as the store writes them (index/store.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import numpy as np


class Index(Protocol):
    """An index of any kind, whole or one segment of it."""

    def arrays(self) -> dict[str, np.ndarray]: ...


class StoredIndex(Protocol):
    """An index, or a build that makes its parts as they are written (segments.SegmentedBuild)."""

    def arrays(self) -> dict[str, np.ndarray] | Iterator[tuple[str, np.ndarray]]: ...
