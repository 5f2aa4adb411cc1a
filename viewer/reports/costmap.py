"""The cost map of a world: the exact number of objects within view distance, and each index's query time,
at camera positions sampled on a plane through the world box; the largest global view-distance scale
that keeps every sample within a budget.

The camera position is the query, so the visible count at a point is exact (the index's answer, which is
brute force's); in a scene with visibility ranges (begin distances, HLOD parents: :mod:`viewer.frame.ranges`)
it counts the objects in range, the answer after the frame's range filter. A plane is ``axis = value``
(axis 0, 1, 2 for x, y, z) crossed by a ``res`` x ``res`` grid of sample points at the centres of equal cells over the box's two other axes, in order (the plane
``y = v`` is sampled over x and z). Arrays of a plane are ``(res, res)``, row ``j`` at the second in-plane
coordinate ``vs[j]``, column ``i`` at the first ``us[i]``: ``grid[j, i]`` is the sample at ``(us[i],
vs[j])``, as an image drawn with its origin at the lower left shows it.

Sampling takes an index (:func:`count_points`, :func:`time_points`: ``viewer map`` times each index's query
alone, at the same points, interleaved) or a frame (:func:`frame_counts`: the window's minimap counts what
the frame's own culling mode, radius scale and range filter see). No GL and no plotting library: the
figures are in :mod:`.costmap_figure` (matplotlib, imported only there), so sampling for a minimap pulls in
neither.
"""

from __future__ import annotations

import csv
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ..domain import RADIUS_LIMIT
from ..timing.interleave import balanced_orders
from ..files.output import atomic_file
from ..index import SphereIndex, make_index
from ..scenes.recipe import RECIPE_FIELDS

__all__ = ["AXES", "BudgetScale", "MAX_SCALE", "budget_scale", "count_points", "frame_counts", "plane_axes", "passes",
           "plane_grid", "read_csv", "round_scale", "sample_plane", "scene_ranges", "slice_values", "time_points",
           "time_column", "write_csv"]

#: the axes' names, by number
AXES = ("x", "y", "z")

#: the largest global view-distance scale the budget search tries: the most a recipe's ``radius_scale`` takes
MAX_SCALE = float(RECIPE_FIELDS["radius_scale"].hi)

#: the smallest it tries: below it a point still seeing more than the budget sits on that many centres
MIN_SCALE = 2.0 ** -60

#: significant digits of the scales the budget search tries
DIGITS = 6


def round_scale(x: float, down: bool = False) -> float:
    """``x`` (> 0) to :data:`DIGITS` significant digits, to the nearest or (``down``) never above ``x``."""
    v = float(f"{x:.{DIGITS}g}")
    if down and v > x:
        unit = 10.0 ** (math.floor(math.log10(x)) - DIGITS + 1)
        v = float(f"{math.floor(x / unit) * unit:.{DIGITS}g}")
        while v > x:  # (x / unit a hair above a whole number)
            v = float(f"{v - unit:.{DIGITS}g}")
    return v


def plane_axes(axis: int) -> tuple[int, int]:
    """The two in-plane axes of the plane across ``axis`` (0, 1, 2), in order: y -> (x, z)."""
    u, v = (a for a in range(3) if a != axis)
    return u, v


def plane_grid(box_lo, box_hi, axis: int, value: float, res: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sample points of the plane ``axis = value`` across the box ``box_lo`` .. ``box_hi`` ((3,) world
    units each): ``(us (res,), vs (res,), points (res * res, 3))`` float64, world units; ``us`` / ``vs`` the
    cell centres along the first / second in-plane axis (:func:`plane_axes`), ``points`` row-major: point
    ``j * res + i`` is ``(us[i], vs[j])`` on the plane."""
    lo, hi = np.asarray(box_lo, dtype=np.float64), np.asarray(box_hi, dtype=np.float64)
    u, v = plane_axes(axis)
    cells = (np.arange(res, dtype=np.float64) + 0.5) / res
    us = lo[u] + cells * (hi[u] - lo[u])
    vs = lo[v] + cells * (hi[v] - lo[v])
    points = np.empty((res * res, 3), dtype=np.float64)
    points[:, axis] = value
    points[:, u] = np.tile(us, res)
    points[:, v] = np.repeat(vs, res)
    return us, vs, points


def slice_values(box_lo, box_hi, axis: int, slices: int) -> np.ndarray:
    """``slices`` evenly spaced planes across ``axis`` of the box: (slices,) float64, the centres of equal
    bands (one slice: the box's middle)."""
    lo, hi = float(box_lo[axis]), float(box_hi[axis])
    return lo + (np.arange(slices, dtype=np.float64) + 0.5) / slices * (hi - lo)


def scene_ranges(scene, scale: float = 1.0):
    """The range filter of ``scene`` (:class:`viewer.frame.ranges.Ranges` over its centres, no cross-fade,
    its begins and HLOD limits times ``scale``, the global view-distance scale), or None when the scene has no
    begin distances and no visibility parents (its counts are then the end spheres')."""
    from ..frame.ranges import Ranges

    if getattr(scene, "begin", None) is None and getattr(scene, "parent", None) is None:
        return None
    r = Ranges(scene, scene.centres, fade=0.0)
    if not r.active:
        return None
    r.set_scale(scale)
    return r


def count_points(index: SphereIndex, points: np.ndarray, progress: Callable[[int], None] | None = None,
                 ranges=None) -> np.ndarray:
    """The exact number of objects whose view sphere holds each of ``points`` ((K, 3) world units): (K,)
    int64; with ``ranges`` (:func:`scene_ranges`: a scene with begin distances or HLOD parents) the objects
    in range there (``begin <= d <= r``, an HLOD child only while its parent is nearer than its switch), as
    the frame's ``visible`` counts them. ``progress(done)`` is called after each thousand points."""
    out = np.empty(max(1, len(index)), dtype=np.int64)  # room for every object: never an overflow
    counts = np.empty(points.shape[0], dtype=np.int64)
    for k in range(points.shape[0]):
        counts[k] = index.query_into(points[k], out)
        if ranges is not None:
            counts[k] = ranges.filter(out, int(counts[k]), points[k])
        if progress is not None and k % 1000 == 999:
            progress(k + 1)
    return counts


def frame_counts(frame, points: np.ndarray, progress: Callable[[int], None] | None = None) -> np.ndarray:
    """The exact number of objects a frame of ``frame`` (a :class:`viewer.frame.FramePipeline`) would find
    visible with its camera at each of ``points`` ((K, 3) world units): its culling mode's index at its radius
    scale, then its range filter (begin distances, HLOD parents) when the scene has one, as the frame's
    ``visible`` counts them. (K,) int64; ``ValueError`` when the culling mode has no CPU index (the GPU's).
    ``progress(done)`` as :func:`count_points` calls it."""
    index = frame.index
    if index is None:
        raise ValueError(f"{frame.index_name}: the culling mode has no CPU index to sample")
    rg = frame.ranges
    return count_points(index, points, progress, ranges=rg if rg.active else None)


def time_points(indexes: Mapping[str, SphereIndex], points: np.ndarray,
                progress: Callable[[int], None] | None = None,
                ranges=None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Query every index at each of ``points`` ((K, 3) world units) and time each query alone
    (``perf_counter_ns`` around ``query_into``), in passes over all the points, each pass in its own random
    order (seeded: the same on every run). In each pass the indexes take turns point by point, in one order
    of :func:`viewer.timing.interleave.balanced_orders` (at least two passes): so each index queries each
    point once in each place of the order (after each other index, which leaves the caches to it), and a
    point's time is the fastest of its turns. A moment the machine was busy (an interrupt, another process)
    slows scattered points of one pass, never a row of the map, and the other pass's turn drops it. Kernels
    must be warm (:func:`viewer.index.warm_up`).

    With ``ranges`` (:func:`scene_ranges`), each query is followed by the range filter the frame runs, timed
    with it (as the frame's ``query_ms``), and the counts are the objects in range (:func:`count_points`).

    Returns ``(counts (K,) int64, {name: times (K,) float64, microseconds})``. The indexes' counts must
    agree (every index is exact, and each pass gives the same); a :class:`RuntimeError` names the first
    point where they do not. ``progress(done)`` is called after each thousand queried points, counting
    every pass (``passes(len(indexes)) * K`` in all).
    """
    names = list(indexes)
    outs = [np.empty(max(1, len(indexes[name])), dtype=np.int64) for name in names]
    k_pts = points.shape[0]
    counts = np.empty((len(names), k_pts), dtype=np.int64)
    times = np.full((len(names), k_pts), np.inf, dtype=np.float64)
    ixs = [indexes[name] for name in names]
    clock = time.perf_counter_ns
    orders = _pass_orders(len(names))
    rng = np.random.default_rng(0)
    for r, order in enumerate(orders):
        for done, k in enumerate(rng.permutation(k_pts).tolist()):
            p = points[k]
            for j in order:
                ix, out = ixs[j], outs[j]
                t0 = clock()
                c = ix.query_into(p, out)
                if ranges is not None:
                    c = ranges.filter(out, c, p)
                t = clock() - t0
                if t < times[j, k]:
                    times[j, k] = t
                if r and c != counts[j, k]:
                    raise RuntimeError(f"{names[j]} sees {c} objects at {p.tolist()}, then {counts[j, k]}")
                counts[j, k] = c
            if progress is not None and done % 1000 == 999:
                progress(r * k_pts + done + 1)
    for j in range(1, len(names)):
        bad = np.flatnonzero(counts[j] != counts[0])
        if bad.size:
            k = int(bad[0])
            raise RuntimeError(f"{names[j]} sees {counts[j, k]} objects at {points[k].tolist()}, "
                               f"{names[0]} {counts[0, k]}: an index is not exact")
    return counts[0], {name: times[j] / 1e3 for j, name in enumerate(names)}


def _pass_orders(k: int) -> list[list[int]]:
    """The orders of :func:`time_points`' passes over ``k`` indexes: the balanced orders, repeated to at
    least two passes."""
    orders = balanced_orders(k)
    return orders * math.ceil(2 / len(orders))


def passes(k: int) -> int:
    """How many passes :func:`time_points` makes over the points with ``k`` indexes."""
    return len(_pass_orders(k))


def sample_plane(index: SphereIndex, box_lo, box_hi, axis: int, value: float,
                 res: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The cost map of one index on the plane ``axis = value`` through the box ``box_lo`` .. ``box_hi``
    ((3,) world units), sampled at ``res`` x ``res`` points (:func:`plane_grid`).

    Returns ``(us (res,), vs (res,), counts (res, res) int64, times_us (res, res) float64)``: the in-plane
    coordinates of the columns and the rows (world units, along :func:`plane_axes`), the exact number of
    objects within view distance at each sample and the query's time there in microseconds;
    ``counts[j, i]`` is at ``(us[i], vs[j])``. The index's kernels must be warm for the times to mean
    anything (:func:`viewer.index.warm_up`); for counts alone :func:`count_points` does not time."""
    us, vs, points = plane_grid(box_lo, box_hi, axis, value, res)
    counts, times = time_points({"index": index}, points)
    return us, vs, counts.reshape(res, res), times["index"].reshape(res, res)


@dataclass(frozen=True)
class BudgetScale:
    """What :func:`budget_scale` found.

    scale : the largest scale tried at which no sample sees more than the budget
    peak : the most objects a sample sees at ``scale``
    next_scale : one step up (``scale * (1 + step)`` at most), where some sample sees more; None when even
        :data:`MAX_SCALE` keeps within the budget (``scale`` is then that bound)
    next_peak : the most a sample sees at ``next_scale`` (> budget); None with it
    builds : how many indexes the search built (one per scale tried)
    """

    scale: float
    peak: int
    next_scale: float | None
    next_peak: int | None
    builds: int


def budget_scale(centres: np.ndarray, radii: np.ndarray, points: np.ndarray, budget: int, *,
                 index: str = "octree", step: float = 1e-3,
                 log: Callable[[float, int], None] | None = None) -> BudgetScale:
    """The largest global view-distance scale ``s`` for which no point of ``points`` ((K, 3) world units)
    sees more than ``budget`` objects, to a relative ``step``: bisection over ``log s``, each scale tried by
    building the index ``index`` over ``centres`` (N, 3) and ``radii * s`` (N,) and counting exactly at
    every point (:func:`count_points`). A sample's count never falls as ``s`` grows, so the most any sample
    sees is monotone and the bisection's bracket stays true.

    The bracket starts at 1 and doubles (or halves) until it holds the answer, between :data:`MIN_SCALE`
    and :data:`MAX_SCALE` (and no radius beyond the numeric domain). Every scale tried has at most
    :data:`DIGITS` significant digits, so the scale printed with them (and saved in a recipe) is the one
    that was counted. It counts end spheres: in a scene with begin distances or HLOD parents the objects in
    range are a subset of them (their count is not monotone in ``s``: begins scale too), so the scale found
    keeps the in-range count within the budget too, conservatively. ``log(scale, peak)`` is called after
    each scale tried. :class:`ValueError` when ``budget >= N`` (every scale keeps within it) or when
    even the smallest scale sees more (a point on more than ``budget`` centres).
    """
    radii = np.asarray(radii, dtype=np.float64)
    if budget >= radii.shape[0]:
        raise ValueError(f"the scene has {radii.shape[0]:,} objects, no more than the budget {budget:,}: "
                         "every scale keeps within it")
    top = MAX_SCALE
    rmax = float(radii.max()) if radii.size else 0.0
    if rmax > 0:
        top = min(top, RADIUS_LIMIT / rmax)
    builds = 0

    def peak(s: float) -> int:
        nonlocal builds
        builds += 1
        p = int(count_points(make_index(index, centres, radii * s), points).max())
        if log is not None:
            log(s, p)
        return p

    s = round_scale(min(1.0, top), down=True)
    p = peak(s)
    if p <= budget:  # grow until a scale sees too much
        ok, ok_p = s, p
        while True:
            s = min(round_scale(ok * 2.0), round_scale(top, down=True))
            if s <= ok:
                return BudgetScale(ok, ok_p, None, None, builds)
            p = peak(s)
            if p > budget:
                bad, bad_p = s, p
                break
            ok, ok_p = s, p
    else:  # shrink until one keeps within
        bad, bad_p = s, p
        while True:
            s = round_scale(bad / 2.0)
            if s < MIN_SCALE:
                raise ValueError(f"even at scale {bad:.3g} a sample sees {bad_p:,} objects, more than the budget "
                                 f"{budget:,} (that many objects sit on one sampled point)")
            p = peak(s)
            if p <= budget:
                ok, ok_p = s, p
                break
            bad, bad_p = s, p
    while bad > ok * (1.0 + step):
        mid = round_scale(math.sqrt(ok * bad))
        if not ok < mid < bad:  # (the floats ran out)
            break
        p = peak(mid)
        if p <= budget:
            ok, ok_p = mid, p
        else:
            bad, bad_p = mid, p
    return BudgetScale(ok, ok_p, bad, bad_p, builds)


def time_column(name: str) -> str:
    """The CSV column of index ``name``'s query time: ``octree_us`` (microseconds)."""
    return f"{name}_us"


def write_csv(path: str | os.PathLike, points: np.ndarray, counts: np.ndarray,
              times_us: Mapping[str, np.ndarray]) -> Path:
    """Write the samples, one row each, whole or not at all (:func:`viewer.files.output.atomic_file`):
    columns ``x, y, z`` (world units, the shortest text that reads back to the same float), ``visible``
    (the exact count) and one :func:`time_column` per index (microseconds, 3 decimals). ``points`` (K, 3),
    ``counts`` (K,), each time (K,)."""
    names = list(times_us)
    path = Path(path)
    with atomic_file(path, text=True, newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["x", "y", "z", "visible", *(time_column(n) for n in names)])
        cols = [times_us[n] for n in names]
        for k in range(points.shape[0]):
            x, y, z = points[k].tolist()
            w.writerow([repr(x), repr(y), repr(z), int(counts[k]), *(f"{c[k]:.3f}" for c in cols)])
    return path


def read_csv(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The columns of a cost map's CSV (:func:`write_csv`) by name, as float64 arrays (``visible`` int64)."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    out = {}
    for j, name in enumerate(header):
        col = np.array([float(r[j]) for r in body], dtype=np.float64)
        out[name] = col.astype(np.int64) if name == "visible" else col
    return out
