"""Paths generated from the scene itself (``viewer record --generated``): a fly-through that crosses the
clusters, runs along the diagonal and passes near the remote cluster, deterministic for a given scene.
No GL.
"""

from __future__ import annotations

import math

import numpy as np

from ..camera import look_at_angles
from ..errors import UserError
from .spline import CameraPath

__all__ = ["GENERATED", "generated_path"]

#: the kinds of generated path, for ``viewer record --generated``
GENERATED: tuple[str, ...] = ("flythrough", "clusters", "diagonal", "remote")


def generated_path(scene, kind: str = "flythrough", *, speed: float | None = None) -> CameraPath:
    """A path through ``scene`` (a :class:`viewer.scenes.Scene`), deterministic for a given scene.

    kind:
      - ``"clusters"``: through the centres of the heaviest clusters (up to 6), nearest first.
      - ``"diagonal"``: along the world's main diagonal (the scene's diagonal endpoints when it has them).
      - ``"remote"``: a pass near the remote cluster, outside its spread (scenes without one: a pass
        along the edge of the world).
      - ``"flythrough"``: all three in one flight (the default of ``viewer record``).

    The camera moves at ``speed`` (world units per second; default: a tenth of the world's size per
    second), slowing down to a twentieth of it inside the clusters it visits (looping once around each
    one's centre), and looks where it is going.
    """
    if kind not in GENERATED:
        raise UserError(f"unknown generated path {kind!r}; choose from {', '.join(GENERATED)}")
    lo, hi = _bounds(scene)
    size = float(np.max(hi - lo))
    legs: list[np.ndarray] = []
    focus, focus_spread = np.zeros((0, 3)), np.zeros(0)
    if kind in ("clusters", "flythrough"):
        leg, focus, focus_spread = _cluster_leg(scene, lo, hi)
        legs.append(leg)
    if kind in ("diagonal", "flythrough"):
        legs.append(_diagonal_leg(scene, lo, hi))
    if kind in ("remote", "flythrough"):
        legs.append(_remote_leg(scene, lo, hi))
    pts = np.concatenate(legs)
    pts = _subdivide(_dedupe(pts, 1e-6 * size), size / 48.0)
    r = _remote(scene)
    if r is not None:
        pts = _dedupe(_avoid(pts, r["centre"], _standoff(r, size)), 1e-6 * size)
    v = float(speed) if speed is not None else size / 10.0
    if not (v > 0 and math.isfinite(v)):
        raise UserError(f"path speed must be a positive number, got {speed!r}")
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    seg_v = np.full(seg.size, v)
    if len(focus):
        # slow down to a twentieth of the speed inside a cluster (within 6 spreads of its centre), so
        # the recording spends its frames where the work is
        mids = (pts[1:] + pts[:-1]) / 2
        d = np.linalg.norm(mids[:, None, :] - focus[None, :, :], axis=2)  # (S, K)
        reach = 6.0 * np.maximum(focus_spread, 1e-3 * size)
        seg_v = v * np.clip((d / reach).min(axis=1), 0.05, 1.0)
    times = np.concatenate([[0.0], np.cumsum(seg / seg_v)])
    yaw = np.empty(len(pts))
    pitch = np.empty(len(pts))
    for i in range(len(pts)):
        a = pts[max(0, i - 1)]
        b = pts[min(len(pts) - 1, i + 1)]
        yaw[i], pitch[i] = look_at_angles(a, b)
    pitch = np.clip(pitch, -80.0, 80.0)
    name = f"{getattr(scene, 'name', 'scene')}:{kind}"
    return CameraPath(times, pts, yaw, pitch, name=name)


def _bounds(scene) -> tuple[np.ndarray, np.ndarray]:
    """The world box: the diagonal's ends when the scene names them; else a cube of side ``world``
    around ``origin`` (or the middle of the centres' bounding box); else that bounding box."""
    ends = _extra(scene, "diagonal")
    if isinstance(ends, dict) and "start" in ends and "end" in ends:
        a = np.asarray(ends["start"], dtype=np.float64).reshape(3)
        b = np.asarray(ends["end"], dtype=np.float64).reshape(3)
        return np.minimum(a, b), np.maximum(a, b)
    c = np.asarray(scene.centres, dtype=np.float64).reshape(-1, 3)
    mid = (c.min(axis=0) + c.max(axis=0)) / 2 if len(c) else np.zeros(3)
    origin = getattr(scene, "origin", None)
    if origin is not None:
        mid = np.asarray(origin, dtype=np.float64).reshape(3)
    w = getattr(scene, "world", None)
    if w is not None and np.isfinite(w) and w > 0:
        return mid - float(w) / 2, mid + float(w) / 2
    if len(c) == 0:
        return mid - 1.0, mid + 1.0
    return c.min(axis=0), c.max(axis=0)


def _extra(scene, *names):
    ex = getattr(scene, "extras", None) or {}
    for n in names:
        if n in ex and ex[n] is not None:
            return ex[n]
    return None


def _cluster_leg(scene, lo, hi) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Waypoints through the heaviest clusters (nearest first), and the (K, 3) centres and (K,)
    spreads of the clusters visited."""
    cc = np.asarray(getattr(scene, "cluster_centres", np.zeros((0, 3))), dtype=np.float64).reshape(-1, 3)
    spread = np.asarray(getattr(scene, "cluster_spread", np.zeros(0)), dtype=np.float64).reshape(-1)
    if spread.size != len(cc):
        spread = np.zeros(len(cc))
    weights = _cluster_weights(scene, len(cc))
    remote = _remote_centre(scene)
    if remote is not None and len(cc):
        # the remote cluster is passed on its own leg, never crossed
        keep = np.linalg.norm(cc - remote, axis=1) > 1e-9 * float(np.max(hi - lo))
        cc, spread, weights = cc[keep], spread[keep], weights[keep]
    start = lo + 0.15 * (hi - lo)
    if len(cc) == 0:
        mid = (lo + hi) / 2
        q = (hi - lo) / 4
        pts = np.array([start, mid + q * [-1, 0.2, 1], mid + q * [1, -0.2, 1], mid + q * [1, 0.2, -1]])
        return pts, np.zeros((0, 3)), np.zeros(0)
    order = list(np.argsort(-weights, kind="stable")[:6])
    tour = [start]
    visited = []
    while order:
        d = [float(np.linalg.norm(cc[i] - tour[-1])) for i in order]
        i = order.pop(int(np.argmin(d)))
        # a loop inside the cluster, one spread around its centre: the frames that matter are the
        # ones among the objects, so the tour lingers there rather than only crossing the centre
        s = max(float(spread[i]), 1e-3 * float(np.max(hi - lo)))
        tour.append(cc[i])
        for v in ((1.0, 0.3, 0.0), (0.0, 1.0, -0.3), (-1.0, -0.3, 0.0), (0.0, -1.0, 0.3)):
            tour.append(np.clip(cc[i] + s * np.array(v), lo, hi))
        tour.append(cc[i])
        visited.append(i)
    return np.array(tour), cc[visited], spread[visited]


def _cluster_weights(scene, k: int) -> np.ndarray:
    """Objects per cluster when the scene says (``category`` holding cluster ids), else equal."""
    cat = getattr(scene, "category", None)
    if cat is not None:
        cat = np.asarray(cat)
        if cat.ndim == 1 and np.issubdtype(cat.dtype, np.integer) and len(cat):
            counts = np.bincount(cat[(cat >= 0) & (cat < k)].astype(np.int64), minlength=k)
            return counts[:k].astype(np.float64)
    return np.ones(k)


def _diagonal_leg(scene, lo, hi) -> np.ndarray:
    ends = _extra(scene, "diagonal")
    if isinstance(ends, dict) and "start" in ends and "end" in ends:
        a = np.asarray(ends["start"], dtype=np.float64).reshape(3)
        b = np.asarray(ends["end"], dtype=np.float64).reshape(3)
    else:
        a, b = lo, hi
    # enter a little inside the ends, so the flight stays within the world
    return np.array([a + 0.05 * (b - a), b - 0.05 * (b - a)])


def _remote(scene) -> dict | None:
    """The scene's remote cluster, ``{"centre": (3,), "spread": float, "keep_out": float|None}``."""
    r = _extra(scene, "remote")
    if not isinstance(r, dict) or r.get("centre") is None:
        return None
    return {
        "centre": np.asarray(r["centre"], dtype=np.float64).reshape(3),
        "spread": float(r.get("spread") or 0.0),
        "keep_out": None if r.get("keep_out") is None else float(r["keep_out"]),
    }


def _remote_centre(scene) -> np.ndarray | None:
    r = _remote(scene)
    return None if r is None else r["centre"]


def _standoff(r: dict, size: float) -> float:
    """How close a generated path comes to the remote cluster's centre, world units."""
    standoff = max(4.0 * r["spread"], 0.05 * size)
    if r["keep_out"] is not None and r["keep_out"] * 1.05 <= 0.5 * size:
        standoff = max(standoff, 1.05 * r["keep_out"])
    return standoff


def _avoid(pts: np.ndarray, centre: np.ndarray, radius: float, depth: int = 6) -> np.ndarray:
    """Waypoints that go round the sphere (centre, radius) instead of through it: points inside are
    pushed out to its surface, segments that cut it are split and their midpoints pushed out."""

    def push(p):
        d = p - centre
        n = float(np.linalg.norm(d))
        if n >= radius:
            return p
        if n < 1e-12 * radius:
            d, n = np.array([0.0, 1.0, 0.0]), 1.0
        return centre + d * (radius / n)

    def cuts(a, b):
        ab = b - a
        L = float(ab @ ab)
        s = 0.0 if L == 0 else min(1.0, max(0.0, float((centre - a) @ ab) / L))
        return float(np.linalg.norm(a + s * ab - centre)) < 0.999 * radius

    out = [push(pts[0])]

    def walk(a, b, level):
        if level < depth and cuts(a, b):
            m = push((a + b) / 2)
            walk(a, m, level + 1)
            walk(m, b, level + 1)
        else:
            out.append(b)

    for b in pts[1:]:
        walk(out[-1], push(b), 0)
    return np.array(out)


def _remote_leg(scene, lo, hi) -> np.ndarray:
    size = float(np.max(hi - lo))
    mid = (lo + hi) / 2
    r = _remote(scene)
    if r is None:
        # no remote cluster: a pass along one edge of the world
        a = np.array([lo[0], mid[1], hi[2]]) + 0.1 * (hi - lo) * [1, 0, -1]
        b = np.array([hi[0], mid[1], hi[2]]) + 0.1 * (hi - lo) * [-1, 0, -1]
        return np.array([a, b])
    centre = r["centre"]
    # Pass just outside the distance from which the scene says none of the cluster is visible
    # (its keep_out), so the run checks that the cluster costs nothing while the camera is near it;
    # without a keep_out, or when it reaches past half the world, pass at 4 spreads / 5% of the world.
    standoff = _standoff(r, size)
    # approach from the world's middle and pass the cluster sideways
    inward = mid - centre
    inward = inward / (np.linalg.norm(inward) or 1.0)
    side = np.cross(inward, [0.0, 1.0, 0.0])
    if np.linalg.norm(side) < 1e-9:
        side = np.array([1.0, 0.0, 0.0])
    side /= np.linalg.norm(side)
    near = centre + inward * standoff
    # the chord stays at >= standoff from the centre: its closest point is ``near`` itself
    return np.array([near - side * standoff, near, near + side * standoff])


def _dedupe(pts: np.ndarray, eps: float) -> np.ndarray:
    keep = [pts[0]]
    for p in pts[1:]:
        if np.linalg.norm(p - keep[-1]) > eps:
            keep.append(p)
    return np.array(keep)


def _subdivide(pts: np.ndarray, step: float) -> np.ndarray:
    """Extra collinear waypoints every ``step`` so long legs stay straight under the spline."""
    out = [pts[0]]
    for a, b in zip(pts[:-1], pts[1:]):
        n = max(1, int(math.ceil(np.linalg.norm(b - a) / step)))
        for j in range(1, n + 1):
            out.append(a + (b - a) * (j / n))
    return np.array(out)
