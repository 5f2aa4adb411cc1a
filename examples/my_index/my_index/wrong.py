"""Two uniform grids that are each wrong in one small way, as real bugs are: what ``viewer check-index`` is for.

Each passes a casual test (most queries, most moves are right) and fails one property of the conformance kit.
"""

from __future__ import annotations

import numpy as np

from .grid import UniformGrid

__all__ = ["LostMoverGrid", "SurfaceMissGrid"]


class SurfaceMissGrid(UniformGrid):
    """A camera exactly on a sphere's surface misses it: ``<`` where the contract says ``<=``."""

    @staticmethod
    def _holds(d2: np.ndarray, r2: np.ndarray) -> np.ndarray:
        return d2 < r2


class LostMoverGrid(UniformGrid):
    """A batch move loses its last mover: it stays where it was, though ``move_many`` returned."""

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        super()._move_many(ids[:-1], centres[:-1], radii[:-1])
