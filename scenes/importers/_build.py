"""Imported arrays -> a checked :class:`~viewer.scenes.Scene`: the numeric domain, the world box, view
distances (a column or a rule), sizes and colours (the file's, else the default look)."""

from __future__ import annotations

import math

import numpy as np

from viewer.domain import COORD_LIMIT, RADIUS_LIMIT, first_outside

from ..errors import SceneError
from ..look import default_look, make_sizes
from ..scene import Scene
from .rules import DEFAULT_POINTS, DEFAULT_SIZED, ViewDistanceRule, parse_rule

__all__ = ["check_values", "make_scene", "world_box"]


def check_values(values: np.ndarray, field: str, *, limit: float = COORD_LIMIT, nonnegative: bool = False,
                 row_offset: int = 0, what: str = "row") -> None:
    """:class:`SceneError` naming ``field`` and the first row whose value is NaN, infinite or outside the
    numeric domain (:mod:`viewer.domain`). values : (N,) or (N, k) float64."""
    i = first_outside(values, limit, nonnegative)
    if i >= 0:
        v = values[i]
        shown = v.tolist() if np.ndim(v) else float(v)
        if not np.all(np.isfinite(v)):
            why = "is not a finite number"
        elif nonnegative and np.any(np.asarray(v) < 0):
            why = "is negative"
        else:
            why = f"is outside the numeric domain (|value| <= 2**100 = {limit:.4g})"
        raise SceneError(f"{what} {i + row_offset}: {shown} {why}", field)


def world_box(centres: np.ndarray) -> tuple[np.ndarray, float]:
    """(origin (3,), world edge): the smallest cube around ``centres`` (N, 3) (edge 1 for a single point),
    nudged up until rounding can leave no centre outside it."""
    lo, hi = centres.min(axis=0), centres.max(axis=0)
    origin = (lo + hi) / 2
    world = float((hi - lo).max()) or 1.0
    while ((lo < origin - world / 2) | (hi > origin + world / 2)).any():
        world = world * (1 + 2**-40) + 1e-300
    return origin, world


def radius_colours(radii: np.ndarray) -> np.ndarray:
    """(N, 4) uint8: the default look's colour by view distance (viridis over log r, min..max), through a
    256-entry table (a million objects in milliseconds; the generators' portable ramp is not needed for
    data that came from a file)."""
    from ..look import PALETTES, _ramp
    from .._schema import check_colour

    stops = np.array([check_colour(c, "palette") for c in PALETTES["viridis"]], dtype=np.float64)
    lut = np.empty((256, 4), dtype=np.uint8)
    lut[:, :3] = np.rint(_ramp(stops, np.linspace(0.0, 1.0, 256))).astype(np.uint8)
    lut[:, 3] = 255
    pos = radii > 0
    if not pos.any():
        return np.repeat(lut[:1], radii.size, axis=0)
    lr = np.log2(np.where(pos, radii, radii[pos].min()))
    lo, hi = float(lr.min()), float(lr.max())
    t = np.zeros(radii.size) if hi <= lo else (lr - lo) * (255.0 / (hi - lo))
    return lut[np.clip(np.rint(t), 0, 255).astype(np.intp)]


def make_scene(name: str, centres: np.ndarray, *, fmt: str, radii: np.ndarray | None = None,
               extents: np.ndarray | None = None, colours: np.ndarray | None = None,
               rule: str | None = None, meshes=None, facts: dict | None = None) -> Scene:
    """A scene from imported arrays.

    centres : (N, 3) float64, world units (already checked finite and in the domain)
    radii : (N,) float64 view distances from the file, or None: the ``rule`` decides
    extents : (N,) float64 object sizes (largest edge of each world-space bounding box), or None
    colours : (N, 4) uint8 RGBA from the file, or None (the default look)
    rule : a view-distance rule (:mod:`.rules`); None: :data:`DEFAULT_SIZED` with sizes, else
        :data:`DEFAULT_POINTS`. Ignored when ``radii`` is given.
    facts : what to record about the import (format, columns, ...); the recipe keeps them with the rule
    """
    n = centres.shape[0]
    if n == 0:
        raise SceneError("holds no objects")
    origin, world = world_box(centres)
    diagonal = world * math.sqrt(3.0)
    record = {"format": fmt, **(facts or {})}
    if radii is None:
        text = rule or (DEFAULT_SIZED if extents is not None else DEFAULT_POINTS)
        r = parse_rule(text)
        if r.needs_sizes and extents is None:
            raise SceneError(f"the rule {text!r} needs object sizes, and this file gives none (add a size "
                             "column, or use --view-distance constant:value=DISTANCE)", "--view-distance")
        radii = _apply(r, extents, n, diagonal)
        record["view_distance"] = text
        record["inf_means"] = diagonal
    else:
        record["view_distance"] = "from the file"
    check_values(radii, "view distance", limit=RADIUS_LIMIT, nonnegative=True, what="object")
    sizes = (extents / 2).astype(np.float32) if extents is not None else \
        make_sizes(np.random.default_rng(0), radii, default_look())
    if colours is None:
        colours = radius_colours(radii)
    return Scene(name=name, centres=centres, radii=np.ascontiguousarray(radii, dtype=np.float64), sizes=sizes,
                 colours=colours, category=np.full(n, -1, dtype=np.int32), world=world, origin=origin,
                 recipe={"import": record}, meshes=meshes)


def _apply(rule: ViewDistanceRule, extents: np.ndarray | None, n: int, diagonal: float) -> np.ndarray:
    return rule.apply(extents if extents is not None else np.zeros(n), diagonal)
