"""View-distance rules: how far each imported object can be seen when the file does not say.

A rule is written ``NAME:key=value,...`` (the ``--view-distance`` flag of ``viewer scene import``):

``constant:value=500``
    every object is seen from 500 world units.
``size:factor=200``
    r = factor * size: a minimum on-screen size (an object of extent s is culled beyond 200 s, where it
    would cover about 1/200 radian, ~3.5 pixels of a 720-pixel 60-degree view). ``size:factor=34,max=1000``:
    the same, no object seen from further than 1000 (``max=inf``: the world box's diagonal).
``table:1=300,10=2000,100=inf``
    a size-to-distance table in the manner of engine cull-distance volumes: objects up to size 1 are
    culled beyond 300, up to size 10 beyond 2000, up to 100 never; objects larger than the last size take
    the last distance.

**The default** (:func:`default_rule`) is chosen from the file's own scale, so that culling does something in
a level of any size: for objects with sizes, ``size:factor=F,max=M`` with F such that the median object is
seen from an eighth of the level's extent (at most 200, the screen-size rule, when the level is vast beside
its objects) and M half the extent; for points, a tenth of the world box's diagonal. The old fixed
``size:factor=200`` gave radii of 1,200-24,000 in a level 580 wide: every object in view from everywhere.

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

__all__ = ["ViewDistanceRule", "parse_rule", "default_rule", "DEFAULT_SIZED", "DEFAULT_POINTS",
           "MEDIAN_SHARE", "MAX_SHARE", "MAX_FACTOR"]

#: the fallback rule for objects whose size the file gives (meshes, a size column) when the file has no
#: extent to scale from (every centre at one point); otherwise :func:`default_rule` picks one
DEFAULT_SIZED = "size:factor=200"
#: the default size rule's median object is seen from this share of the level's extent ...
MEDIAN_SHARE = 1 / 8
#: ... and no object from further than this share of it
MAX_SHARE = 1 / 2
#: ... and the factor is at most this (an object 1/200 radian wide, ~3.5 pixels of a 720-pixel view)
MAX_FACTOR = 200.0
#: the default rule for points without sizes: a tenth of the scene's world-box diagonal
DEFAULT_POINTS = "constant:value=diagonal/10"


@dataclass(frozen=True)
class ViewDistanceRule:
    """A parsed rule: ``kind`` (constant, size, table) and its numbers; ``text`` as written."""

    kind: str
    text: str
    value: float = 0.0  # constant (inf allowed); nan: a tenth of the diagonal
    factor: float = 0.0  # size
    limit: float | None = None  # size: the largest distance (None: no cap; inf: the world box's diagonal)
    sizes: tuple[float, ...] = ()  # table, increasing
    distances: tuple[float, ...] = ()

    @property
    def needs_sizes(self) -> bool:
        return self.kind in ("size", "table")

    def describe(self) -> str:
        """The rule in words, as the import line prints it: ``size x 34, at most 1000``, ``constant 500``,
        ``constant a tenth of the diagonal``, ``table 1=300,10=2000,100=inf``."""
        from ..fmt import num

        if self.kind == "constant":
            if math.isnan(self.value):
                return "constant a tenth of the diagonal"
            return "constant inf (the diagonal)" if math.isinf(self.value) else f"constant {num(self.value)}"
        if self.kind == "size":
            cap = "" if self.limit is None else (
                ", at most the diagonal" if math.isinf(self.limit) else f", at most {num(self.limit)}")
            return f"size x {num(self.factor)}{cap}"
        return "table " + ",".join(f"{num(a)}={'inf' if math.isinf(d) else num(d)}"
                                   for a, d in zip(self.sizes, self.distances))

    def apply(self, extents: np.ndarray, diagonal: float) -> np.ndarray:
        """(N,) float64 view distances for objects of ``extents`` (N,) world units in a world box whose
        diagonal is ``diagonal`` (what ``inf`` becomes)."""
        n = extents.shape[0]
        if self.kind == "constant":
            v = diagonal / 10.0 if math.isnan(self.value) else self.value
            return np.full(n, diagonal if math.isinf(v) else v)
        if self.kind == "size":
            with np.errstate(over="ignore"):  # inf: refused as a view distance outside the domain by the caller
                r = extents * self.factor
            if self.limit is None:
                return r
            return np.minimum(r, diagonal if math.isinf(self.limit) else self.limit)
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
        if keys not in (["factor"], ["factor", "max"]):
            raise SceneError(f"{text!r}: write size:factor=F (distance = F * the object's size) or "
                             "size:factor=F,max=DISTANCE", "--view-distance")
        f = _num(pairs[0][1], "factor")
        if f <= 0:
            raise SceneError(f"{text!r}: factor must be > 0", "--view-distance")
        limit = _num(pairs[1][1], "max", allow_inf=True) if len(pairs) > 1 else None
        return ViewDistanceRule("size", text, factor=f, limit=limit)
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


def _round2(v: float) -> float:
    """``v`` > 0 to two significant digits (a factor or distance a user can read and retype)."""
    return float(f"{v:.2g}")


def default_rule(centres: np.ndarray, extents: np.ndarray | None) -> tuple[str, str]:
    """The default view-distance rule for imported objects, picked from the file's own scale, and why, in
    words for the import line: ``(rule text, reason)``.

    centres : (N, 3) float64 world units; extents : (N,) object sizes (largest box edge), or None (points)

    With sizes: ``size:factor=F,max=M`` where the level's *extent* E is the largest edge of the box around the
    centres, F = min(:data:`MAX_FACTOR`, :data:`MEDIAN_SHARE` * E / the median positive size) (the median
    object is seen from an eighth of the level; in a level vast beside its objects, the screen-size rule)
    and M = :data:`MAX_SHARE` * E (half the level; the ``max`` is left out when no object reaches it), both
    to two significant digits. Without sizes (or with all sizes 0): :data:`DEFAULT_POINTS`. Every centre at
    one point (no extent): :data:`DEFAULT_SIZED` (sizes) or :data:`DEFAULT_POINTS`.
    """
    from ..fmt import num

    n = centres.shape[0]
    extent = float(np.max(np.ptp(centres, axis=0))) if n else 0.0
    positive = extents[extents > 0] if extents is not None else np.zeros(0)
    if extents is None or not positive.size:
        why = "no object sizes in the file" if extents is None else "every object's size is 0"
        return DEFAULT_POINTS, f"default: {why}"
    if not extent > 0:
        return DEFAULT_SIZED, "default: every object at one point, no extent to scale from"
    median = float(np.median(positive))
    factor = _round2(min(MAX_FACTOR, MEDIAN_SHARE * extent / median))
    limit = _round2(MAX_SHARE * extent)
    capped = float(np.max(extents)) * factor > limit
    text = f"size:factor={num(factor)}" + (f",max={num(limit)}" if capped else "")
    if factor >= MAX_FACTOR:
        why = f"default, from the file's {num(extent)}-unit extent: objects 1/{num(MAX_FACTOR)} radian wide"
    else:
        why = f"default, from the file's {num(extent)}-unit extent: the median object seen from an eighth of it"
    return text, why
