"""The report's plots, as plotly figures (their JavaScript is embedded by :mod:`viewer.pages.html`).

- :func:`timeline`: a recording's stage times frame by frame (ms), one line a stage (zoom and hover are plotly's);
- :func:`query_distribution`: a bench run's timed queries (us, from its raw samples), a box per index and workload;
- :func:`tradeoff`: one cost against another, a point per (workload, index), each workload's Pareto front
  (:func:`viewer.pages.pareto.pareto_front`) drawn as a line through its points.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import plotly.graph_objects as go

from ..frame.stages import STAGES, TIMED_COLUMNS
from ..recording.reader import Run
from .pareto import pareto_front

__all__ = ["Point", "query_distribution", "timeline", "tradeoff"]

#: a stage's colour, from the stage's own declaration (viewer.frame.stages: the plot and the window use it too)
_COLOURS = {f"{s.name}_ms": "rgb({:.0f},{:.0f},{:.0f})".format(*(255 * c for c in s.colour)) for s in STAGES}
_LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=50, b=50), height=420,
               legend=dict(itemclick="toggle", itemdoubleclick="toggleothers"))


def timeline(run: Run) -> go.Figure:
    """``run``'s timed columns (ms, :data:`viewer.frame.stages.TIMED_COLUMNS` it has) against its frame number,
    one line each, the whole frame (``frame_ms``) drawn darker."""
    fig = go.Figure()
    frames = np.asarray(run["frame"])
    for col in TIMED_COLUMNS:
        if col not in run.columns:
            continue
        values = np.asarray(run[col], dtype=np.float64)
        if col != "frame_ms" and not np.any(values):
            continue  # a stage this run never spent time in (a still world's motion)
        fig.add_trace(go.Scatter(x=frames, y=values, mode="lines", name=col,
                                   line=dict(width=2 if col == "frame_ms" else 1,
                                             color="black" if col == "frame_ms" else _COLOURS.get(col))))
    fig.update_layout(title=f"{run.label}: stage times per frame", xaxis_title="frame", yaxis_title="ms",
                      hovermode="x unified", **_LAYOUT)
    return fig


def query_distribution(samples: dict, title: str) -> go.Figure:
    """The timed queries of a bench run (``samples``: (workload, index, kind, share) -> (K,) us, as
    :class:`viewer.bench.compare_runs.BenchRun` holds them), a box per index, grouped by workload, log axis."""
    fig = go.Figure()
    indexes = list(dict.fromkeys(ix for (w, ix, kind, _s) in samples if kind == "query"))
    for ix in indexes:
        xs, ys = [], []
        for (w, i, kind, _s), us in samples.items():
            if kind == "query" and i == ix:
                xs += [w] * len(us)
                ys.append(np.asarray(us, dtype=np.float64))
        fig.add_trace(go.Box(x=xs, y=np.concatenate(ys) if ys else [], name=ix, boxpoints=False))
    fig.update_layout(title=title, boxmode="group", yaxis_type="log", yaxis_title="query time (us)",
                      xaxis_title="workload", **_LAYOUT)
    return fig


class Point(NamedTuple):
    """A point of a trade-off: its workload and index, and its two costs (in the plot's units)."""

    workload: str
    index: str
    x: float
    y: float


#: marker shapes told apart in print, one a workload (cycled)
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon")


def tradeoff(points: Sequence[Point], title: str, x_title: str, y_title: str) -> go.Figure:
    """``points`` (both costs lower-better): a colour an index, a marker shape a workload, and each workload's
    Pareto front (:func:`viewer.pages.pareto.pareto_front`) a dashed line through its points, circled; both axes
    logarithmic. Hovering a point names its workload, index and both costs."""
    fig = go.Figure()
    workloads = list(dict.fromkeys(p.workload for p in points))
    shape = {w: _SYMBOLS[k % len(_SYMBOLS)] for k, w in enumerate(workloads)}
    hover = f"%{{customdata}}<br>{x_title} %{{x:.4g}}<br>{y_title} %{{y:.4g}}<extra></extra>"
    for ix in dict.fromkeys(p.index for p in points):
        pts = [p for p in points if p.index == ix]
        fig.add_trace(go.Scatter(x=[p.x for p in pts], y=[p.y for p in pts], mode="markers", name=ix,
                                 marker=dict(size=10, symbol=[shape[p.workload] for p in pts]),
                                 customdata=[f"{p.workload}: {ix}" for p in pts], hovertemplate=hover))
    for w in workloads:
        pts = [p for p in points if p.workload == w]
        on = pareto_front([p.x for p in pts], [p.y for p in pts])
        front = sorted((p for p, f in zip(pts, on) if f), key=lambda p: p.x)
        fig.add_trace(go.Scatter(x=[p.x for p in front], y=[p.y for p in front], mode="lines+markers",
                                 name=f"Pareto front: {w}", line=dict(dash="dash", width=1, color="grey"),
                                 marker=dict(size=18, symbol=f"{shape[w]}-open", color="grey"),
                                 customdata=[f"{w}: {p.index}, on the front" for p in front], hovertemplate=hover))
    fig.update_layout(title=title, xaxis_type="log", yaxis_type="log", xaxis_title=x_title, yaxis_title=y_title,
                      **_LAYOUT)
    return fig
