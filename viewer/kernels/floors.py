"""The least work a moving frame's update can be, measured beside every index's ``move_many``.

A frame of a moving world hands M movers (ids, new centres) to the index. Whatever the structure, an index
that keeps a row per object at its id must at least write each mover's row there: the **scatter floor**, one
thread writing each mover's 32-byte row (x, y, z, r) at its id in an (N, 4) float64 table. An index that keeps
its movers apart (the coherent index) need only write them one after another: the **contiguous floor**, the same
rows into an (M, 4) table. An index's update over the scatter floor says how much of it is structure rather than
the unavoidable write, as the scan's query over its read floor does for queries.
"""

from __future__ import annotations

import numpy as np

from .jit import njit_noref

__all__ = ["UpdateFloors"]


@njit_noref
def _scatter(ids, centres, radii, rows):
    for k in range(ids.shape[0]):
        i = ids[k]
        rows[i, 0] = centres[k, 0]
        rows[i, 1] = centres[k, 1]
        rows[i, 2] = centres[k, 2]
        rows[i, 3] = radii[k]


@njit_noref
def _contiguous(centres, radii, rows):
    for k in range(centres.shape[0]):
        rows[k, 0] = centres[k, 0]
        rows[k, 1] = centres[k, 1]
        rows[k, 2] = centres[k, 2]
        rows[k, 3] = radii[k]


class UpdateFloors:
    """The two floors of a world of ``n`` objects (radii ``radii`` (N,) float64, world units): each call writes
    one frame's movers as the floor says. The tables are touched once here, so the first timed frame does not
    pay for their pages."""

    def __init__(self, radii: np.ndarray) -> None:
        self.radii = np.ascontiguousarray(radii, dtype=np.float64)
        self.rows = np.zeros((self.radii.size, 4))
        self.packed = np.zeros((0, 4))
        tiny = np.zeros(1, dtype=np.int64)
        _scatter(tiny[:0], np.zeros((0, 3)), np.zeros(0), self.rows)  # compiled (or loaded) before any timing
        _contiguous(np.zeros((0, 3)), np.zeros(0), self.packed)

    def movers(self, ids: np.ndarray) -> None:
        """The frames to come move ``ids`` ((M,) int64): their radii gathered and the packed table sized now,
        outside the timed writes."""
        self.ids = np.ascontiguousarray(ids, dtype=np.int64)
        self.mover_radii = self.radii[self.ids]
        if self.packed.shape[0] < self.ids.size:
            self.packed = np.zeros((self.ids.size, 4))

    def scatter(self, centres: np.ndarray) -> None:
        """Each mover's row (its new centre, ``centres`` (M, 3) float64, and its radius) at its id."""
        _scatter(self.ids, centres, self.mover_radii, self.rows)

    def contiguous(self, centres: np.ndarray) -> None:
        """The movers' rows one after another."""
        _contiguous(centres, self.mover_radii, self.packed)
