"""The :class:`Scene`: flat arrays describing N objects, and where they came from."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Scene"]


@dataclass(eq=False)
class Scene:
    """N objects, each a view sphere plus what the viewer needs to draw it.

    Attributes
    ----------
    name : str
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0: the view distance (the object is seen from inside it)
    sizes : (N,) float32, world units: the drawn half-extent
    colours : (N, 4) uint8, RGBA
    category : (N,) int32: cluster id, -1 for background / none
    world : float, world units: edge of the world box (a cube centred at ``origin``); every centre
        lies inside it
    seed : int
    recipe : dict or None: the checked recipe (defaults filled) the scene was generated from; None for
        data that came from elsewhere
    source : str or None: the file it was loaded from
    sha256 : str or None: hex digest of that file's bytes
    cluster_centres : (K, 3) float64, world units (K = 0 for generators without clusters)
    cluster_spread : (K,) float64, world units (std dev per axis)
    extras : dict: generator-specific facts (e.g. ``extras["diagonal"]``, ``extras["remote"]``)
    origin : (3,) float64, world units: the centre of the world box
    """

    name: str
    centres: np.ndarray
    radii: np.ndarray
    sizes: np.ndarray
    colours: np.ndarray
    category: np.ndarray
    world: float
    seed: int = 0
    recipe: dict | None = None
    source: str | None = None
    sha256: str | None = None
    cluster_centres: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.float64))
    cluster_spread: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    extras: dict = field(default_factory=dict)
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3, dtype=np.float64))

    @property
    def n(self) -> int:
        """Number of objects."""
        return int(self.radii.shape[0])

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi): the world box's corners, each (3,) float64, world units."""
        o = np.asarray(self.origin, dtype=np.float64)
        h = self.world / 2.0
        return o - h, o + h

    @property
    def generator(self) -> str | None:
        """The generator's name, or None for data from elsewhere."""
        return None if self.recipe is None else self.recipe.get("generator")

    def __repr__(self) -> str:
        src = f" from {self.source}" if self.source else ""
        return f"<Scene {self.name!r} n={self.n} world={self.world:g}{src}>"
