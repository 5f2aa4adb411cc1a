"""The :class:`Scene`: flat arrays describing N objects, and where they came from; :class:`Motion`: which
of them move and how (the parameters; :mod:`viewer.frame.motion` runs the models frame by frame)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .meshes import MeshSet

__all__ = ["MOTION_KINDS", "Motion", "Scene"]

#: motion models, in the order of :attr:`Motion.kind` codes
MOTION_KINDS: tuple[str, ...] = ("drift", "orbit", "random-walk")


@dataclass(eq=False)
class Motion:
    """The moving objects of a scene and their motion models (M movers), as flat arrays.

    Attributes
    ----------
    ids : (M,) int64, sorted, distinct: the moving objects (rows of the scene's arrays)
    kind : (M,) int8: the model of each mover, an index into :data:`MOTION_KINDS`
        0 drift: straight line at ``speed`` along ``direction``, reflected by the world box's walls
        1 orbit: a circle of radius ``orbit_radius`` in the plane of ``direction`` and ``axis``, through
          the start position (which is ``orbit_radius`` from the orbit's centre along ``direction``),
          at ``speed`` along the circle (clamped into the world box)
        2 random-walk: each frame, each axis steps by a uniform draw in [-speed dt, speed dt] from a
          counter-based stream keyed by (``seed``, frame number, id, axis), reflected by the walls
    speed : (M,) float64, world units per second
    direction : (M, 3) float64 unit vectors (drift: the heading; orbit: centre -> start); zeros for walks
    axis : (M, 3) float64 unit vectors perpendicular to ``direction`` (orbit: the heading at the start);
        zeros otherwise
    orbit_radius : (M,) float64, world units (0 unless an orbit)
    phase : (M,) float64, radians: the phase of each mover's view-radius pulse
    radius_pulse : float in [0, 1): a mover's view radius is r0 (1 + radius_pulse sin(2 pi t / radius_period
        + phase)); 0 keeps view radii constant
    radius_period : float, seconds
    seed : int >= 0: the key of the random walk's stream
    """

    ids: np.ndarray
    kind: np.ndarray
    speed: np.ndarray
    direction: np.ndarray
    axis: np.ndarray
    orbit_radius: np.ndarray
    phase: np.ndarray
    radius_pulse: float = 0.0
    radius_period: float = 5.0
    seed: int = 0

    @property
    def m(self) -> int:
        """Number of moving objects."""
        return int(self.ids.shape[0])

    def counts(self) -> dict[str, int]:
        """Movers per model name."""
        return {name: int(np.count_nonzero(self.kind == k)) for k, name in enumerate(MOTION_KINDS)}

    def __repr__(self) -> str:
        return f"<Motion m={self.m} {self.counts()} pulse={self.radius_pulse:g}>"


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
    motion : :class:`Motion` or None: the objects that move (None: a static scene)
    meshes : :class:`viewer.scenes.meshes.MeshSet` or None: the meshes the objects are instances of
        (an imported glTF scene); None: drawn as sprites or cubes
    style : str, how the viewer draws the scene (:data:`viewer.scenes.look.STYLES`): "objects" (lit, in
        fog) or "stars" (unlit point sprites, brightness from apparent magnitude)
    sky : str or None: the background colour "#rrggbb"; None: the style's default
    begin : (N,) float64 or None, world units: the begin of each object's visibility range (object i is
        in range when ``begin[i] <= d <= radii[i]``, d the distance from the camera to its centre, tested
        on squares in float64: ``b*b <= (dx*dx + dy*dy) + dz*dz <= r*r``); None: all 0 (today's rule)
    lod : (N, L) float64 or None, world units: per-object LOD switch distances, ascending along a row,
        +inf padding; the band at distance d is ``#{j : lod[i, j]**2 <= d*d}`` (0 the finest); None: one
        band
    parent : (N,) int64 or None: each object's visibility parent (an HLOD proxy), -1 none: a child is
        shown only while the camera is nearer than its parent's begin (see
        :mod:`viewer.frame.ranges` for the cross-fade window); None: no parents
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
    motion: Motion | None = None
    meshes: MeshSet | None = None
    style: str = "objects"
    sky: str | None = None
    begin: np.ndarray | None = None
    lod: np.ndarray | None = None
    parent: np.ndarray | None = None

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
    def has_ranges(self) -> bool:
        """True when the scene uses begin distances, LOD bands or visibility parents (issue 24)."""
        return self.begin is not None or self.lod is not None or self.parent is not None

    @property
    def moves(self) -> bool:
        """True when some object moves: a [motion] table that moves at least one object."""
        return self.motion is not None and bool(self.motion.m)

    @property
    def generator(self) -> str | None:
        """The generator's name, or None for data from elsewhere."""
        return None if self.recipe is None else self.recipe.get("generator")

    def __repr__(self) -> str:
        src = f" from {self.source}" if self.source else ""
        mv = f" moving={self.motion.m}" if self.motion is not None else ""
        return f"<Scene {self.name!r} n={self.n} world={self.world:g}{mv}{src}>"
