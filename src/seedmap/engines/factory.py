"""The neighborhood engine with the filter the options name: one place that knows all three, so the
variants import the base engine and nothing imports back."""

from __future__ import annotations

import numpy as np

from seedmap.engines.base import CandidateEngine
from seedmap.engines.neighborhood import NeighborhoodEngine
from seedmap.engines.neighborhood_bpr import NeighborhoodBprEngine
from seedmap.engines.neighborhood_ph import PerfectHashEngine
from seedmap.index.neighborhood import NeighborhoodIndex
from seedmap.options import EngineOptions

FILTERS = {"bs": NeighborhoodEngine, "ph": PerfectHashEngine, "bpr": NeighborhoodBprEngine}


def neighborhood_engine(ix: NeighborhoodIndex, ref_starts: np.ndarray, options: EngineOptions,
                        **verifier: object) -> CandidateEngine:
    """bs: binary search, ph: perfect hash, bpr: mflBPR. verifier: bulk, packed and nmask, to verify the
    candidates of repetitive reads in bulk (NeighborhoodEngine)."""
    return FILTERS[options.filter](ix, ref_starts, windows=options.windows, step=options.step, fe=options.fe,
                                   **verifier)
