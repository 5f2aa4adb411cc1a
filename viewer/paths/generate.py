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

__all__ = ["DRAWN_SHARE", "GENERATED", "drawn_share", "generated_path", "probe_index"]

#: the kinds of generated path, for ``viewer record --generated``
GENERATED: tuple[str, ...] = ("flythrough", "clusters", "diagonal", "remote")


#: the share of a generated path's time the pacing aims to spend with objects drawn (the promise is 75%)
DRAWN_SHARE = 0.85
#: inside view of objects the camera slows to this fraction of the cruising speed
SLOW = 0.05
#: the longest default generated path, seconds (without ``speed``, a longer one is flown faster throughout)
MAX_DURATION = 90.0


#: the index a generated path's probe runs when the run itself has none (GPU culling only)
PROBE_INDEX = "octree"


def probe_index(names) -> str:
    """The index a generated path's probe runs for a run of the cullers ``names``: the first of them that is a
    registered index available here, so the probe compiles (or loads) no kernels the run does not load anyway;
    else :data:`PROBE_INDEX`. Every index answers exactly, so the path is the same whichever probes it."""
    from ..index import INDEXES

    for name in names:
        if name in INDEXES and INDEXES[name].unavailable() is None:
            return name
    return PROBE_INDEX


def generated_path(scene, kind: str = "flythrough", *, speed: float | None = None,
                   aspect: float = 16.0 / 9.0, index: str = PROBE_INDEX) -> CameraPath:
    """A path through ``scene`` (a :class:`viewer.scenes.Scene`), deterministic for a given scene.

    kind:
      - ``"clusters"``: through the centres of the heaviest clusters (up to 6), nearest first, looping
        inside each; without clusters, through the objects of largest view distance (up to 6, spread out).
      - ``"diagonal"``: along the world's main diagonal (the scene's diagonal endpoints when it has them).
      - ``"remote"``: a pass near the remote cluster, outside its spread (scenes without one: a pass
        along the edge of the world).
      - ``"flythrough"``: all three in one flight (the default of ``viewer record``).

    Every waypoint lies within the objects' box (:func:`object_box`: their centres' box grown by
    :data:`BOX_MARGIN` a side), so a scene whose world is much larger than its objects (an imported level)
    is flown where the objects are.

    The path is paced by what a camera of the viewer's lens (:func:`viewer.frame.camera_for_scene`,
    ``aspect`` width / height) looking where it goes would draw: probed every few world units, stretches
    that draw something are flown at a twentieth of ``speed`` (world units per second; default a tenth
    of the world's size), empty ones at ``speed`` or faster, so that about :data:`DRAWN_SHARE` of the
    flight's time draws something (whenever anything along it can be seen); without ``speed``, a path
    that would last longer than :data:`MAX_DURATION` seconds is flown faster throughout to fit. The fly-through then returns
    to the pose along it that drew the most objects and ends there: its last frame shows the scene at its
    busiest. ``index`` is the registered index the probe runs (:func:`probe_index`); the path does not depend
    on it.
    """
    if kind not in GENERATED:
        raise UserError(f"unknown generated path {kind!r}; choose from {', '.join(GENERATED)}")
    v = float(speed) if speed is not None else None
    lo, hi = _bounds(scene)
    size = float(np.max(hi - lo))
    if v is not None and not (v > 0 and math.isfinite(v)):
        raise UserError(f"path speed must be a positive number, got {speed!r}")
    legs: list[np.ndarray] = []
    if kind in ("clusters", "flythrough"):
        legs.append(_cluster_leg(scene, lo, hi)[0])
    if kind in ("diagonal", "flythrough"):
        legs.append(_diagonal_leg(scene, lo, hi))
    if kind in ("remote", "flythrough"):
        legs.append(_remote_leg(scene, lo, hi))
    pts = _route(np.concatenate(legs), scene, size)
    if len(pts) < 2 or not size > 0:
        raise _too_far(scene, lo)
    if v is None:
        v = size / 10.0
    probe = _Probe(scene, aspect, index=index)
    v_slow = SLOW * v
    step = _probe_step(pts, v_slow)
    drawn = probe.along(pts, step)
    # the fly-through's way back to the busiest pose seen, and how it looks there
    at, look = drawn.busiest() if kind == "flythrough" else (None, (0.0, 0.0))
    if at is not None and np.linalg.norm(at - pts[-1]) > 1e-6 * size:
        back = _route(np.array([pts[-1], at]), scene, size)
        drawn = drawn.then(probe.along(back, step))
        pts = np.concatenate([pts, back[1:]])
    pts, slow = _drop_repeats(*drawn.segments(pts, min_run=0.5 * v_slow))
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    l_slow, l_fast = float(seg[slow].sum()), float(seg[~slow].sum())
    v_fast = v
    if l_slow > 0 and l_fast > 0:
        v_fast = max(v, v_slow * (l_fast / l_slow) * DRAWN_SHARE / (1.0 - DRAWN_SHARE))
    times = np.concatenate([[0.0], np.cumsum(seg / np.where(slow, v_slow, v_fast))])
    if speed is None and times[-1] > MAX_DURATION:
        times *= MAX_DURATION / times[-1]  # both speeds up alike: the share of time drawing stays
    yaw = np.empty(len(pts))
    pitch = np.empty(len(pts))
    for i in range(len(pts)):
        a = pts[max(0, i - 1)]
        b = pts[min(len(pts) - 1, i + 1)]
        yaw[i], pitch[i] = look_at_angles(a, b)
    if at is not None:
        yaw[-1], pitch[-1] = look
    pitch = np.clip(pitch, -80.0, 80.0)
    name = f"{getattr(scene, 'name', 'scene')}:{kind}"
    return CameraPath(times, pts, yaw, pitch, name=name)


def drawn_share(scene, path: CameraPath, *, dt: float = 1.0 / 60.0, aspect: float = 16.0 / 9.0,
                index: str = PROBE_INDEX) -> tuple[float, int]:
    """The share of ``path``'s frames (sampled at ``dt``) in which the viewer draws at least one object
    of ``scene`` (the world as it is at t = 0), and the number of frames; the GL-free frame pipeline
    answers, with a camera of the viewer's lens."""
    samples = path.sample(dt=dt)
    probe = _Probe(scene, aspect, index=index)
    hits = sum(probe.drawn(samples.pose(k)) > 0 for k in range(len(samples)))
    return hits / max(len(samples), 1), len(samples)


#: how far a generated path may leave the box of the objects' centres, as a share of the box's side on
#: each axis (a floor of 0.1% of its longest side for a flat axis)
BOX_MARGIN = 0.05


def object_box(scene) -> tuple[np.ndarray, np.ndarray]:
    """Where generated paths fly: the box of the objects' centres, (3,) lo and hi in world units, grown by
    :data:`BOX_MARGIN` of its side on each axis (a scene whose world is far larger than its objects, such
    as an imported level, is flown where the objects are, not through the empty world around them)."""
    c = np.asarray(scene.centres, dtype=np.float64).reshape(-1, 3)
    if len(c) == 0:
        return np.full(3, -1.0), np.full(3, 1.0)
    lo, hi = c.min(axis=0), c.max(axis=0)
    grow = np.maximum(BOX_MARGIN * (hi - lo), 1e-3 * max(float(np.max(hi - lo)), 1.0))
    return lo - grow, hi + grow


def _route(pts: np.ndarray, scene, size: float) -> np.ndarray:
    """Waypoints kept within the objects' box (:func:`object_box`), deduplicated, long legs subdivided (so
    they stay straight under the spline) and kept out of the remote cluster's keep-out sphere."""
    pts = np.clip(pts, *object_box(scene))
    pts = _subdivide(_dedupe(pts, 1e-6 * size), size / 48.0)
    r = _remote(scene)
    if r is not None:
        pts = _dedupe(_avoid(pts, r["centre"], _standoff(r, size)), 1e-6 * size)
    return pts


def _probe_step(pts: np.ndarray, v_slow: float) -> float:
    """World units between probes: half a second of the slow speed, at most 4,000 probes (bisection
    then finds where drawing starts and stops to an eighth of that)."""
    length = float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())
    return max(0.5 * v_slow, length / 4_000.0, 1e-12)


class _Probe:
    """What the viewer would draw from a pose: the frame pipeline without GL (no motion: dt 0)."""

    def __init__(self, scene, aspect: float, index: str = PROBE_INDEX) -> None:
        from ..frame.pipeline import FramePipeline, camera_for_scene
        from ..index import INDEXES

        if index not in INDEXES or INDEXES[index].unavailable():
            index = "brute"
        self.camera = camera_for_scene(scene, aspect)
        self.pipeline = FramePipeline(scene, index, indexes=[index])
        self.pipeline.sort = False  # only the count matters

    def drawn(self, pose) -> int:
        """Objects a frame at ``pose`` ((x, y, z, yaw, pitch)) would draw."""
        self.pipeline.run(self.camera, 0.0, pose=pose)  # the stages only: no row, the clock stays
        return int(self.pipeline.n_drawn)

    def along(self, pts: np.ndarray, step: float, refine: int = 3) -> "_Drawn":
        """Probe the polyline ``pts`` every ``step`` world units (and at every waypoint), looking along it;
        where drawing starts or stops between two probes of one leg, bisect ``refine`` times more."""
        s_, p_, look_, n_ = [], [], [], []
        s0 = 0.0
        for a, b in zip(pts[:-1], pts[1:]):
            d = float(np.linalg.norm(b - a))
            yaw, pitch = look_at_angles(a, b)
            look = (yaw, max(-80.0, min(80.0, pitch)))
            m = max(1, int(math.ceil(d / step)))
            fs = [j / m for j in range(m)]
            ns = [self._at(a, b, f, look) for f in fs]
            for j in range(m):
                f_lo = fs[j]
                f_hi = fs[j + 1] if j + 1 < m else None
                s_.append(s0 + d * f_lo)
                p_.append(a + (b - a) * f_lo)
                look_.append(look)
                n_.append(ns[j])
                if f_hi is None or (ns[j] > 0) == (ns[j + 1] > 0):
                    continue
                lo, hi = f_lo, f_hi  # the flag flips in (lo, hi]: bisect, keeping the probes made
                for _ in range(refine):
                    mid = (lo + hi) / 2
                    nm = self._at(a, b, mid, look)
                    s_.append(s0 + d * mid)
                    p_.append(a + (b - a) * mid)
                    look_.append(look)
                    n_.append(nm)
                    if (nm > 0) == (ns[j] > 0):
                        lo = mid
                    else:
                        hi = mid
            s0 += d
        order = np.argsort(np.array(s_), kind="stable")
        return _Drawn(np.array(s_)[order], np.array(p_).reshape(-1, 3)[order],
                      np.array(look_).reshape(-1, 2)[order], np.array(n_, dtype=np.int64)[order], s0)

    def _at(self, a: np.ndarray, b: np.ndarray, f: float, look: tuple[float, float]) -> int:
        p = a + (b - a) * f
        return self.drawn((p[0], p[1], p[2], look[0], look[1]))


class _Drawn:
    """Probes along a polyline: arc length s (M,), positions (M, 3), looks (M, 2) yaw/pitch, objects drawn
    (M,), and the polyline's length."""

    def __init__(self, s, p, look, n, length) -> None:
        self.s, self.p, self.look, self.n, self.length = s, p, look, n, float(length)

    def then(self, other: "_Drawn") -> "_Drawn":
        return _Drawn(np.concatenate([self.s, other.s + self.length]), np.concatenate([self.p, other.p]),
                      np.concatenate([self.look, other.look]), np.concatenate([self.n, other.n]),
                      self.length + other.length)

    def busiest(self) -> tuple[np.ndarray | None, tuple[float, float]]:
        """The probe that drew the most (its position and look), or None when none drew anything."""
        if not len(self.n) or self.n.max() <= 0:
            return None, (0.0, 0.0)
        i = int(np.argmax(self.n))
        return self.p[i].copy(), (float(self.look[i, 0]), float(self.look[i, 1]))

    def segments(self, pts: np.ndarray, min_run: float) -> tuple[np.ndarray, np.ndarray]:
        """Waypoints with the places where drawing starts or stops added, and per segment whether it
        draws (runs shorter than ``min_run`` world units are merged into the run before them)."""
        drawn = self.n > 0
        change = np.flatnonzero(drawn[1:] != drawn[:-1]) + 1
        starts = np.concatenate([[0.0], self.s[change], [self.length]])
        flags = np.concatenate([drawn[:1], drawn[change]])
        runs = [(0.0, bool(flags[0]))]  # (start, draws), merged
        for k in range(1, len(flags)):
            f = bool(flags[k]) if starts[k + 1] - starts[k] >= min_run else runs[-1][1]
            if f != runs[-1][1]:
                runs.append((float(starts[k]), f))
        keep_cuts = [r[0] for r in runs[1:]]
        # insert the cuts as waypoints
        seg_len = np.linalg.norm(np.diff(pts, axis=0), axis=1)
        cum = np.concatenate([[0.0], np.cumsum(seg_len)])
        eps = 1e-9 * max(self.length, 1.0)
        extra_s = [c for c in keep_cuts if np.abs(cum - c).min() > eps]
        all_s = np.union1d(cum, np.array(extra_s))
        j = np.clip(np.searchsorted(cum, all_s, side="right") - 1, 0, len(pts) - 2)
        f = np.where(seg_len[j] > 0, (all_s - cum[j]) / np.where(seg_len[j] > 0, seg_len[j], 1.0), 0.0)
        out = pts[j] + (pts[j + 1] - pts[j]) * f[:, None]
        out[-1] = pts[-1]
        # each segment's flag: the merged run its middle lies in
        mids = (all_s[1:] + all_s[:-1]) / 2
        run_starts = np.array([r[0] for r in runs])
        run_flags = np.array([r[1] for r in runs], dtype=bool)
        slow = run_flags[np.searchsorted(run_starts, mids, side="right") - 1]
        return out, slow


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
        return _landmark_leg(scene, start, lo, hi), np.zeros((0, 3)), np.zeros(0)
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


def _landmark_leg(scene, start: np.ndarray, lo, hi, count: int = 6) -> np.ndarray:
    """Without clusters: a tour from ``start`` through the ``count`` objects with the largest view
    distances (outside the remote cluster's keep-out), nearest first: each is seen from far, so the
    camera flies towards it in view of something even in a sparse world."""
    c = np.asarray(scene.centres, dtype=np.float64).reshape(-1, 3)
    r = np.asarray(scene.radii, dtype=np.float64).reshape(-1)
    mid = (lo + hi) / 2
    if len(c) == 0:
        q = (hi - lo) / 4
        return np.array([start, mid + q * [-1, 0.2, 1], mid + q * [1, -0.2, 1], mid + q * [1, 0.2, -1]])
    ok = np.ones(len(c), dtype=bool)
    rem = _remote(scene)
    if rem is not None:
        ok = np.linalg.norm(c - rem["centre"], axis=1) > 1.1 * _standoff(rem, float(np.max(hi - lo)))
    cand = np.flatnonzero(ok)
    big = cand[np.argsort(-r[cand], kind="stable")[: 8 * count]]
    # among the largest, spread out: greedily the ones farthest from those already chosen
    chosen = [int(big[0])]
    while len(chosen) < min(count, len(big)):
        d = np.min(np.linalg.norm(c[big][:, None, :] - c[chosen][None, :, :], axis=2), axis=1)
        chosen.append(int(big[int(np.argmax(d))]))
    tour = [start]
    left = list(chosen)
    while left:
        j = int(np.argmin([np.linalg.norm(c[i] - tour[-1]) for i in left]))
        tour.append(c[left.pop(j)])
    return np.array(tour)


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


def _drop_repeats(pts: np.ndarray, slow: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Waypoints ``pts`` (M, 3) and their segments' flags ``slow`` (M - 1,) without the waypoints equal to
    the one before (far from the origin float64 resolves whole units and more, and points placed between two
    waypoints round onto them): a path's times must strictly increase."""
    moves = np.any(pts[1:] != pts[:-1], axis=1)
    return pts[np.concatenate([[True], moves])], slow[moves]


def _too_far(scene, lo: np.ndarray) -> UserError:
    """The error for a scene whose objects' box has no extent float64 can fly: it names the scene's file."""
    where = getattr(scene, "source", None) or getattr(scene, "name", "the scene")
    reach = float(np.max(np.abs(lo)))
    return UserError(
        f"{where}: no camera path can be generated: at {reach:.4g} from the origin float64 steps by "
        f"{np.spacing(reach):.4g} world units, too coarse for the objects' box; give a --path or --pose, or "
        f"move the scene nearer the origin")


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
