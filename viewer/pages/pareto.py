"""The Pareto front of a trade-off: the points no other point beats on both costs."""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["pareto_front"]


def pareto_front(x: Sequence[float], y: Sequence[float]) -> np.ndarray:
    """Which points lie on the front when both ``x`` and ``y`` are costs (lower is better): a (N,) bool mask, True
    for each point that no other point matches or beats on both and beats on one. Points with a value that is
    not finite are never on it."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    front = np.zeros(len(x), dtype=bool)
    for i in np.flatnonzero(ok):
        others = ok & (x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i]))
        front[i] = not others.any()
    return front
