"""`seedmap stats --plot report.png`: the histograms of a Summary in one PNG (matplotlib, Agg backend)."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import numpy as np

from seedmap.errors import SeedmapError
from seedmap.io.output import atomic_path, check_target
from seedmap.io.sam_scan import Summary

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _bars(ax: Axes, counts: np.ndarray, label: str, offset: float = 0.0, width: float = 0.8) -> None:
    x = np.arange(counts.size)
    ax.bar(x + offset, counts, width=width, label=label)


def check_plot_path(path: str) -> None:
    """Fail before the work, not after it."""
    if not path.lower().endswith(".png"):
        raise SeedmapError(f"--plot {path}: give a .png file name")
    check_target(path)


def write_plot(s: Summary, path: str, title: str = "") -> None:
    check_plot_path(path)
    import matplotlib

    logging.getLogger("matplotlib").setLevel(logging.WARNING)  # e.g. its font cache notice on a first run
    matplotlib.use("Agg")  # no display needed; must come before pyplot
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    (a_reads, a_nm), (a_hits, a_ins) = axes
    cats = ["unique", "multi-mapped", "unmapped"]
    vals = [s.unique, s.multi, s.unmapped]
    a_reads.bar(cats, vals, color=["tab:green", "tab:orange", "tab:gray"])
    a_reads.set_title(f"{s.reads} reads; mean hits of multi-mapped {s.mean_multi_hits:.2f}")
    a_reads.set_ylabel("reads")

    _bars(a_nm, s.nm_primary, "primary", -0.2, 0.4)
    _bars(a_nm, s.nm_all, "all records", 0.2, 0.4)
    a_nm.set_title("edit distance (NM)")
    a_nm.set_xlabel("edits")
    a_nm.set_ylabel("records")
    a_nm.legend()

    _bars(a_hits, s.hits, "reads")
    a_hits.set_title("locations per read")
    a_hits.set_xlabel("locations")
    a_hits.set_ylabel("reads")
    if s.hits.size and s.hits.max() > 0:
        a_hits.set_yscale("log")

    if s.insert_sizes.size:
        a_ins.hist(s.insert_sizes, bins=min(100, max(10, int(np.sqrt(s.insert_sizes.size)))))
        a_ins.set_title(f"insert size of {s.insert_sizes.size} proper pairs")
    else:
        a_ins.text(0.5, 0.5, "no proper pairs", ha="center", va="center", transform=a_ins.transAxes)
        a_ins.set_title("insert size")
    a_ins.set_xlabel("|TLEN|")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    try:
        with atomic_path(path) as (fd, _), os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format="png", dpi=100)
    finally:
        plt.close(fig)
