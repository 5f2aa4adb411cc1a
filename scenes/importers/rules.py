"""View-distance rules: how far each imported object can be seen when the file does not say.

A rule is written ``NAME:key=value,...`` (the ``--view-distance`` flag of ``viewer scene import``):

``constant:value=500``
    every object is seen from 500 world units.
``size:factor=200``
    r = factor * size: a minimum on-screen size (an object of extent s is culled beyond 200 s, where it
    would cover about 1/200 radian, ~3.5 pixels of a 720-pixel 60-degree view).
``table:1=300,10=2000,100=inf``
    a size-to-distance table in the manner of engine cull-distance volumes: objects up to size 1 are
    culled beyond 300, up to size 10 beyond 2000, up to 100 never; objects larger than the last size take
    the last distance.

An object's *size* is its extent: the largest edge of its world-space bounding box (twice the drawn
half-extent). ``inf`` ("never culled") maps to the diagonal of the scene's world box: from anywhere in the
box an object is then in view, and the radius stays inside the numeric domain every index answers exactly
(:mod:`viewer.domain`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import SceneError

__all__ = ["ViewDistanceRule", "parse_rule", "DEFAULT_SIZED", "DEFAULT_POINTS"]

#: the default rule for objects whose size the file gives (meshes, a size column)
DEFAULT_SIZED = "size:factor=200"
#: the default rule for points without sizes: a tenth of the scene's world-box diagonal
DEFAULT_POINTS = "constant:value=diagonal/10"


@dataclass(frozen=True)
class ViewDistanceRule:
    """A parsed rule: ``kind`` (constant, size, table) and its numbers; ``text`` as written."""

    kind: str
    text: str
    value: float = 0.0  # constant (inf allowed); nan: a tenth of the diagonal
    factor: float = 0.0  # size
    sizes: tuple[float, ...] = ()  # table, increasing
    distances: tuple[float, ...] = ()

    @property
    def needs_sizes(self) -> bool:
        return self.kind in ("size", "table")

    def apply(self, extents: np.ndarray, diagonal: float) -> np.ndarray:
        """(N,) float64 view distances for objects of ``extents`` (N,) world units in a world box whose
        diagonal is ``diagonal`` (what ``inf`` becomes)."""
        n = extents.shape[0]
        if self.kind == "constant":
            v = diagonal / 10.0 if math.isnan(self.value) else self.value
            return np.full(n, diagonal if math.isinf(v) else v)
        if self.kind == "size":
            return extents * self.factor
        sizes = np.asarray(self.sizes)
        dist = np.array([diagonal if math.isinf(d) else d for d in self.distances])
        i = np.minimum(np.searchsorted(sizes, extents, side="left"), sizes.size - 1)
        return dist[i]


def _num(text: str, what: str, allow_inf: bool = False) -> float:
    t = text.strip().lower()
    if allow_inf and t in ("inf", "infinity", "never"):
        return math.inf
    try:
        v = float(t)
    except ValueError:
        raise SceneError(f"{what}: not a number: {text!r}", "--view-distance") from None
    if not math.isfinite(v) or v < 0:
        raise SceneError(f"{what}: must be a finite number >= 0{' or inf' if allow_inf else ''}, got {text!r}",
                         "--view-distance")
    return v


def parse_rule(text: str) -> ViewDistanceRule:
    """Parse ``constant:value=V``, ``size:factor=F`` or ``table:S1=D1,S2=D2,...`` (:class:`SceneError`
    naming the flag on a bad rule)."""
    name, _, rest = text.strip().partition(":")
    pairs = []
    for part in filter(None, (p.strip() for p in rest.split(","))):
        k, eq, v = part.partition("=")
        if not eq or not k.strip():
            raise SceneError(f"{text!r}: parameters are written key=value, got {part!r}", "--view-distance")
        pairs.append((k.strip(), v.strip()))
    keys = [k for k, _ in pairs]
    if name == "constant":
        if keys != ["value"]:
            raise SceneError(f"{text!r}: write constant:value=DISTANCE", "--view-distance")
        v = pairs[0][1]
        value = math.nan if v.replace(" ", "") == "diagonal/10" else _num(v, "value", allow_inf=True)
        return ViewDistanceRule("constant", text, value=value)
    if name == "size":
        if keys != ["factor"]:
            raise SceneError(f"{text!r}: write size:factor=F (distance = F * the object's size)", "--view-distance")
        f = _num(pairs[0][1], "factor")
        if f <= 0:
            raise SceneError(f"{text!r}: factor must be > 0", "--view-distance")
        return ViewDistanceRule("size", text, factor=f)
    if name == "table":
        if not pairs:
            raise SceneError(f"{text!r}: write table:SIZE=DISTANCE,... (e.g. table:1=300,10=2000,100=inf)",
                             "--view-distance")
        sizes = tuple(_num(k, "size") for k, _ in pairs)
        dist = tuple(_num(v, f"distance for size {k}", allow_inf=True) for k, v in pairs)
        if any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise SceneError(f"{text!r}: sizes must increase", "--view-distance")
        return ViewDistanceRule("table", text, sizes=sizes, distances=dist)
    raise SceneError(f"unknown rule {name!r} in {text!r}; choose constant:value=V, size:factor=F or "
                     "table:S1=D1,S2=D2,...", "--view-distance")
