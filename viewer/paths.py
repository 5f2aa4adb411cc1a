"""Camera paths: keyframes of position and orientation over time, smoothly interpolated.

A path is a list of keyframes ``(t, position, yaw, pitch)``: ``t`` in seconds (strictly
increasing), ``position`` (3,) world units, ``yaw`` / ``pitch`` in degrees with the camera's
conventions (:mod:`viewer.camera`: yaw 0 looks down -Z, yaw 90 down +X, pitch +90 straight up;
pitch within +-89). Between keyframes the position follows a Catmull-Rom spline (cubic Hermite with
tangents from the neighbouring keyframes, times taken into account), yaw turns the short way round
(each step between keyframes is unwrapped into (-180, 180] before the same spline) and pitch follows
the spline, clamped to +-89.

Files are TOML (or JSON with the same fields, by suffix), written to be edited by hand::

    format = "viewer-camera-path"
    version = 1
    name = "my flight"

    [[keyframe]]
    t = 0.0
    position = [0.0, 10.0, 50.0]
    yaw = 0.0
    pitch = -5.0

Paths come from three places: a file (:func:`load_path`), a flight (:class:`PathRecorder`, keyframes
dropped by a key or the whole flight captured) and the scene itself (:func:`generated_path`: a
fly-through that crosses the clusters, runs along the diagonal and passes near the remote cluster).

No GL here.
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .camera import look_at_angles
from .errors import UserError

__all__ = [
    "GENERATED",
    "PATH_FORMAT",
    "PATH_VERSION",
    "CameraPath",
    "PathRecorder",
    "PoseSamples",
    "generated_path",
    "load_path",
    "save_path",
]

PATH_FORMAT = "viewer-camera-path"
PATH_VERSION = 1
MAX_PITCH = 89.0

#: the kinds of generated path, for ``viewer record --generated``
GENERATED: tuple[str, ...] = ("flythrough", "clusters", "diagonal", "remote")


@dataclass(frozen=True)
class PoseSamples:
    """Camera poses sampled along a path at a fixed step.

    t : (F,) float64, seconds on the path
    dt : the step, seconds
    positions : (F, 3) float64, world units
    yaw, pitch : (F,) float64, degrees (yaw wrapped into [-180, 180))
    """

    t: np.ndarray
    dt: float
    positions: np.ndarray
    yaw: np.ndarray
    pitch: np.ndarray

    def __len__(self) -> int:
        return len(self.t)

    def pose(self, k: int) -> tuple[float, float, float, float, float]:
        """Frame ``k`` as ``(x, y, z, yaw, pitch)`` (what :meth:`FlyCamera.set_pose` takes)."""
        p = self.positions[k]
        return float(p[0]), float(p[1]), float(p[2]), float(self.yaw[k]), float(self.pitch[k])


class CameraPath:
    """Keyframes and their interpolation.

    Parameters
    ----------
    times : (K,) float, seconds, strictly increasing, K >= 2
    positions : (K, 3) float, world units
    yaw, pitch : (K,) float, degrees (pitch within +-89)
    name : a label for plots and metadata
    """

    def __init__(self, times, positions, yaw, pitch, name: str = "path") -> None:
        self.times = np.ascontiguousarray(times, dtype=np.float64).reshape(-1)
        self.positions = np.ascontiguousarray(positions, dtype=np.float64).reshape(-1, 3)
        self.yaw = np.ascontiguousarray(yaw, dtype=np.float64).reshape(-1)
        self.pitch = np.ascontiguousarray(pitch, dtype=np.float64).reshape(-1)
        self.name = str(name)
        k = self.times.size
        if k < 2:
            raise ValueError(f"a camera path needs at least 2 keyframes, got {k}")
        if not (self.positions.shape[0] == self.yaw.size == self.pitch.size == k):
            raise ValueError("times, positions, yaw and pitch differ in length")
        for nm, a in (("times", self.times), ("positions", self.positions), ("yaw", self.yaw), ("pitch", self.pitch)):
            if not np.isfinite(a).all():
                raise ValueError(f"{nm} holds a non-finite value")
        if not (np.diff(self.times) > 0).all():
            raise ValueError("keyframe times must be strictly increasing")
        if (np.abs(self.pitch) > MAX_PITCH).any():
            raise ValueError(f"pitch must be within +-{MAX_PITCH:g} degrees")
        # yaw unwrapped: each keyframe-to-keyframe turn is the short way round
        step = np.diff(self.yaw)
        step = (step + 180.0) % 360.0 - 180.0
        self._yaw_u = np.concatenate([self.yaw[:1], self.yaw[0] + np.cumsum(step)])

    def __len__(self) -> int:
        return self.times.size

    def __repr__(self) -> str:
        return f"<CameraPath {self.name!r} keyframes={len(self)} duration={self.duration:.3g}s>"

    @property
    def start(self) -> float:
        return float(self.times[0])

    @property
    def duration(self) -> float:
        """Seconds from the first keyframe to the last."""
        return float(self.times[-1] - self.times[0])

    # ----------------------------------------------------------------------------- evaluation
    def evaluate(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Poses at times ``t`` ((F,) seconds, clamped to the path): positions (F, 3), yaw (F,)
        wrapped into [-180, 180), pitch (F,), all float64."""
        t = np.clip(np.asarray(t, dtype=np.float64).reshape(-1), self.times[0], self.times[-1])
        values = np.column_stack([self.positions, self._yaw_u, self.pitch])  # (K, 5)
        out = _hermite(self.times, values, t)
        yaw = (out[:, 3] + 180.0) % 360.0 - 180.0
        pitch = np.clip(out[:, 4], -MAX_PITCH, MAX_PITCH)
        return np.ascontiguousarray(out[:, :3]), yaw, pitch

    def pose_at(self, t: float) -> tuple[float, float, float, float, float]:
        """``(x, y, z, yaw, pitch)`` at time ``t`` seconds."""
        p, y, pi = self.evaluate([t])
        return float(p[0, 0]), float(p[0, 1]), float(p[0, 2]), float(y[0]), float(pi[0])

    def sample(self, *, frames: int | None = None, dt: float | None = None) -> PoseSamples:
        """Poses at a fixed step: frame ``k`` is at ``start + k * dt``.

        - ``frames`` alone: the whole path in ``frames`` frames, ``dt = duration / (frames - 1)``.
        - ``dt`` alone: ``floor(duration / dt) + 1`` frames.
        - both: ``frames`` frames at ``dt`` (poses past the end hold the last keyframe).
        """
        if frames is not None and frames < 1:
            raise ValueError(f"frames must be >= 1, got {frames}")
        if dt is not None and not (dt > 0 and math.isfinite(dt)):
            raise ValueError(f"dt must be a positive number of seconds, got {dt}")
        if frames is None and dt is None:
            raise ValueError("sample needs frames, dt or both")
        if dt is None:
            dt = self.duration / (frames - 1) if frames > 1 else self.duration
        if frames is None:
            frames = int(math.floor(self.duration / dt + 1e-9)) + 1
        t = self.start + np.arange(frames, dtype=np.float64) * dt
        pos, yaw, pitch = self.evaluate(t)
        return PoseSamples(t - self.start, float(dt), pos, yaw, pitch)

    # ----------------------------------------------------------------------------- files
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": PATH_FORMAT,
            "version": PATH_VERSION,
            "name": self.name,
            "keyframe": [
                {
                    "t": float(t),
                    "position": [float(v) for v in p],
                    "yaw": float(y),
                    "pitch": float(pi),
                }
                for t, p, y, pi in zip(self.times, self.positions, self.yaw, self.pitch)
            ],
        }

    def to_toml(self) -> str:
        lines = [
            "# A camera path (viewer record --path, viewer view --path). Edit freely:",
            "#   t        seconds, strictly increasing",
            "#   position [x, y, z], world units",
            "#   yaw      degrees: 0 looks down -Z, 90 down +X (turns take the short way round)",
            "#   pitch    degrees: + looks up, within +-89",
            f'format = "{PATH_FORMAT}"',
            f"version = {PATH_VERSION}",
            f"name = {json.dumps(self.name)}",
            "",
        ]
        for t, p, y, pi in zip(self.times, self.positions, self.yaw, self.pitch):
            lines += [
                "[[keyframe]]",
                f"t = {_num(t)}",
                f"position = [{_num(p[0])}, {_num(p[1])}, {_num(p[2])}]",
                f"yaw = {_num(y)}",
                f"pitch = {_num(pi)}",
                "",
            ]
        return "\n".join(lines)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the path as TOML (``.json`` suffix: JSON) through a temporary file and a rename."""
        return save_path(self, path)


def _num(v: float) -> str:
    """A TOML float that reads back to the same float64."""
    r = repr(float(v))
    return r if ("." in r or "e" in r or "n" in r) else r + ".0"


def _hermite(times: np.ndarray, values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Catmull-Rom (cubic Hermite, finite-difference tangents over non-uniform times).

    times (K,), values (K, D), t (F,) within [times[0], times[-1]] -> (F, D) float64.
    """
    k = times.size
    m = np.empty_like(values)
    if k == 2:
        m[:] = (values[1] - values[0]) / (times[1] - times[0])
    else:
        m[1:-1] = (values[2:] - values[:-2]) / (times[2:] - times[:-2])[:, None]
        m[0] = (values[1] - values[0]) / (times[1] - times[0])
        m[-1] = (values[-1] - values[-2]) / (times[-1] - times[-2])
    i = np.clip(np.searchsorted(times, t, side="right") - 1, 0, k - 2)
    h = times[i + 1] - times[i]
    s = ((t - times[i]) / h)[:, None]
    s2 = s * s
    s3 = s2 * s
    h00 = 2 * s3 - 3 * s2 + 1
    h10 = s3 - 2 * s2 + s
    h01 = -2 * s3 + 3 * s2
    h11 = s3 - s2
    hh = h[:, None]
    return h00 * values[i] + h10 * hh * m[i] + h01 * values[i + 1] + h11 * hh * m[i + 1]


# ----------------------------------------------------------------------------- reading files

_TOP_FIELDS = {"format", "version", "name", "keyframe", "scene"}
_KEY_FIELDS = {"t", "position", "yaw", "pitch"}


def load_path(path: str | os.PathLike) -> CameraPath:
    """Read a path file (TOML, or JSON by suffix). Every problem is one :class:`UserError` naming
    the file and the field."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such camera path file")
    if p.is_dir():
        raise UserError(f"{p}: is a directory, expected a camera path file (.toml or .json)")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise UserError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if not raw.strip():
        raise UserError(f"{p}: empty file; a camera path needs at least 2 [[keyframe]] tables")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{p}: not a text file (expected TOML or JSON)") from None
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{p}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"{p}: not valid TOML ({exc})") from None
    return path_from_dict(data, where=str(p))


def path_from_dict(data: Any, where: str = "<path>") -> CameraPath:
    """Validate a parsed path document (see the module docstring) and build the path."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a table of fields at the top level")
    unknown = sorted(set(data) - _TOP_FIELDS)
    if unknown:
        raise UserError(f"{where}: unknown field {unknown[0]!r} (allowed: {', '.join(sorted(_TOP_FIELDS))})")
    fmt = data.get("format", PATH_FORMAT)
    if fmt != PATH_FORMAT:
        raise UserError(f"{where}: field 'format' is {fmt!r}, expected {PATH_FORMAT!r}")
    ver = data.get("version", PATH_VERSION)
    if not isinstance(ver, int) or isinstance(ver, bool) or ver != PATH_VERSION:
        raise UserError(f"{where}: field 'version' is {ver!r}; this viewer reads version {PATH_VERSION}")
    name = data.get("name", Path(where).stem)
    if not isinstance(name, str):
        raise UserError(f"{where}: field 'name' must be a string")
    keys = data.get("keyframe")
    if keys is None:
        raise UserError(f"{where}: no keyframes (add [[keyframe]] tables with t, position, yaw, pitch)")
    if not isinstance(keys, list):
        raise UserError(f"{where}: field 'keyframe' must be a list of tables ([[keyframe]])")
    if len(keys) < 2:
        raise UserError(f"{where}: a camera path needs at least 2 keyframes, found {len(keys)}")
    ts, ps, ys, pis = [], [], [], []
    for i, k in enumerate(keys):
        at = f"{where}: keyframe[{i}]"
        if not isinstance(k, dict):
            raise UserError(f"{at}: must be a table with t, position, yaw, pitch")
        missing = [f for f in ("t", "position", "yaw", "pitch") if f not in k]
        if missing:
            raise UserError(f"{at}: missing field {missing[0]!r}")
        extra = sorted(set(k) - _KEY_FIELDS)
        if extra:
            raise UserError(f"{at}: unknown field {extra[0]!r} (allowed: t, position, yaw, pitch)")
        t = _number(k["t"], f"{at}.t")
        pos = k["position"]
        if not isinstance(pos, list) or len(pos) != 3:
            raise UserError(f"{at}.position: must be a list of 3 numbers [x, y, z], got {pos!r}")
        pos = [_number(v, f"{at}.position") for v in pos]
        yaw = _number(k["yaw"], f"{at}.yaw")
        pitch = _number(k["pitch"], f"{at}.pitch")
        if abs(pitch) > MAX_PITCH:
            raise UserError(f"{at}.pitch: {pitch:g} is outside -{MAX_PITCH:g}..{MAX_PITCH:g} degrees")
        if ts and t <= ts[-1]:
            raise UserError(f"{at}.t: {t:g} is not after the previous keyframe's t = {ts[-1]:g} (times must increase)")
        ts.append(t)
        ps.append(pos)
        ys.append(yaw)
        pis.append(pitch)
    return CameraPath(ts, ps, ys, pis, name=name)


def _number(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise UserError(f"{where}: must be a number, got {v!r}")
    f = float(v)
    if not math.isfinite(f):
        raise UserError(f"{where}: must be finite, got {v!r}")
    return f


def save_path(path: CameraPath, dest: str | os.PathLike) -> Path:
    """Write ``path`` to ``dest`` (TOML; JSON when the suffix is ``.json``) atomically."""
    d = Path(dest)
    text = json.dumps(path.to_dict(), indent=2) + "\n" if d.suffix.lower() == ".json" else path.to_toml()
    if not d.parent.is_dir():
        raise UserError(f"{d}: directory {d.parent} does not exist")
    tmp = d.with_name(f".{d.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, d)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise UserError(f"{d}: cannot write: {exc.strerror or exc}") from None
    return d


# ----------------------------------------------------------------------------- recording a flight


class PathRecorder:
    """Builds a path while flying.

    Two ways, mixable: :meth:`add` drops a keyframe now (bind it to a key); :meth:`capture`, called
    every frame, keeps a keyframe whenever ``interval`` seconds have passed since the last one (the
    whole flight). Times are the caller's clock (the viewer's simulated time, the sum of dt).
    """

    def __init__(self, interval: float = 0.25, name: str = "recorded") -> None:
        self.interval = float(interval)
        self.name = name
        self._keys: list[tuple[float, float, float, float, float, float]] = []

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, t: float, pose) -> bool:
        """Keep ``pose`` ((x, y, z, yaw, pitch) or a Pose) at time ``t`` seconds; returns whether it
        was kept (a keyframe at the same or an earlier time than the last one is ignored)."""
        x, y, z, yaw, pitch = (float(v) for v in pose)
        if self._keys and t <= self._keys[-1][0]:
            return False
        self._keys.append((float(t), x, y, z, yaw, max(-MAX_PITCH, min(MAX_PITCH, pitch))))
        return True

    def capture(self, t: float, pose) -> bool:
        """Call every frame: keeps a keyframe when ``interval`` seconds have passed since the last."""
        if self._keys and t - self._keys[-1][0] < self.interval:
            return False
        return self.add(t, pose)

    def clear(self) -> None:
        self._keys.clear()

    def path(self) -> CameraPath:
        """The path so far, with times starting at 0. ``UserError`` with fewer than 2 keyframes."""
        if len(self._keys) < 2:
            raise UserError(f"a camera path needs at least 2 keyframes, only {len(self._keys)} recorded")
        a = np.array(self._keys, dtype=np.float64)
        return CameraPath(a[:, 0] - a[0, 0], a[:, 1:4], a[:, 4], a[:, 5], name=self.name)

    def save(self, dest: str | os.PathLike) -> Path:
        return save_path(self.path(), dest)


# ----------------------------------------------------------------------------- generated paths


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

