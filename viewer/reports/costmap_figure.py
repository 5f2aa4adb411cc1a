"""The cost map's figures: a heatmap per plane of one quantity (the visible count, an index's query time)
on a shared logarithmic colour scale, the axes in world units, the scene's cluster centres near each
plane marked. The samples come from :mod:`viewer.reports.costmap`.

matplotlib is imported only here, and only its Agg canvas (no pyplot, no GUI backend, no display).
"""

from __future__ import annotations

import math
import os
import textwrap
from pathlib import Path
from typing import Sequence

import numpy as np

from ..files.output import atomic_file
from .costmap import AXES, plane_axes

__all__ = ["draw_heatmaps"]

#: panels in a row before the next row starts
COLUMNS = 3


def draw_heatmaps(out: str | os.PathLike, us: np.ndarray, vs: np.ndarray, axis: int, values: Sequence[float],
                  grids: Sequence[np.ndarray], *, title: str, label: str, marks: Sequence[np.ndarray] | None = None,
                  note: str = "", clip: float | None = None, zero: str = "white", panel_px: int = 560,
                  dpi: int = 100) -> Path:
    """Draw one heatmap per plane ``axis = values[k]`` into the PNG ``out`` (whole or not at all).

    us, vs : (res,) the in-plane coordinates of the grids' columns and rows, world units (the first and
        second of :func:`viewer.reports.costmap.plane_axes`); grids : one (res, res) array per plane,
        ``grid[j, i]`` at ``(us[i], vs[j])``; label : what the colour is (``visible objects``, ``octree
        query, us``), on the colour bar. Every panel shares one logarithmic scale from the smallest positive
        value to the largest (``clip``: to that percentile, e.g. 99.9, the few above drawn in its colour and
        said so); zeros (no object in view) are drawn in the colour ``zero`` and said so. marks : per plane,
        (M, 2) in-plane points to mark (cluster centres near the plane), or None. note : a line under the
        panels (the machine the times were measured on).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure
    from matplotlib import colormaps

    n = len(grids)
    cols = min(n, COLUMNS)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(cols * panel_px / dpi + 1.6, rows * panel_px / dpi + 1.3), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    positive = [g[g > 0] for g in grids]
    lo = min((float(p.min()) for p in positive if p.size), default=1.0)
    hi = max((float(p.max()) for p in positive if p.size), default=1.0)
    top = hi
    if clip is not None and any(p.size for p in positive):
        hi = max(lo, float(np.percentile(np.concatenate(positive), clip)))
    if hi <= lo:  # one value everywhere: a decade around it
        lo, hi = lo / math.sqrt(10), hi * math.sqrt(10)
    norm = LogNorm(vmin=lo, vmax=hi)
    cmap = colormaps["viridis"].with_extremes(bad=zero, under=zero)
    u, v = plane_axes(axis)
    extent = (float(us[0] - (us[1] - us[0]) / 2) if us.size > 1 else float(us[0]) - 0.5,
              float(us[-1] + (us[1] - us[0]) / 2) if us.size > 1 else float(us[0]) + 0.5,
              float(vs[0] - (vs[1] - vs[0]) / 2) if vs.size > 1 else float(vs[0]) - 0.5,
              float(vs[-1] + (vs[1] - vs[0]) / 2) if vs.size > 1 else float(vs[0]) + 0.5)
    image = None
    axes = []
    for k, grid in enumerate(grids):
        ax = fig.add_subplot(rows, cols, k + 1)
        shown = np.ma.masked_less_equal(np.asarray(grid, dtype=np.float64), 0.0)
        image = ax.imshow(shown, origin="lower", extent=extent, norm=norm, cmap=cmap, interpolation="nearest")
        if marks is not None and marks[k] is not None and len(marks[k]):
            m = np.asarray(marks[k])
            ax.scatter(m[:, 0], m[:, 1], s=40, facecolors="none", edgecolors="red", linewidths=1.0)
        ax.set_xlabel(f"{AXES[u]} (world units)")
        ax.set_ylabel(f"{AXES[v]} (world units)")
        zeros = int(np.count_nonzero(np.asarray(grid) <= 0))
        sub = f"{AXES[axis]} = {values[k]:.6g}" + (f"; {zero}: none in view ({zeros:,} samples)" if zeros else "")
        ax.set_title(sub, fontsize=10)
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
        axes.append(ax)
    fig.suptitle(textwrap.fill(title, int(fig.get_figwidth() * dpi / 8.5)), fontsize=12)  # ~8 pixels a character
    fig.colorbar(image, ax=axes, label=f"{label} (log scale)", extend="max" if top > hi else "neither",
                 shrink=0.9)
    if top > hi:
        note = f"colours clipped at the {clip:g}th percentile, {hi:.3g}; the largest is {top:.3g}" + (
            f"; {note}" if note else "")
    if marks is not None and any(m is not None and len(m) for m in marks):
        note = "red circles: cluster centres within two spreads of the plane" + (f"; {note}" if note else "")
    if note:
        chars = int(fig.get_figwidth() * dpi / 6.2)  # ~6 pixels a character at this size
        fig.supxlabel(textwrap.fill(note, chars), fontsize=8, color="0.3", ha="left", x=0.01)
    out = Path(out)
    with atomic_file(out) as fh:
        fig.savefig(fh, format="png", dpi=dpi)
    return out
