"""Paths from a flight: :class:`PathRecorder` keeps keyframes as the camera flies (a key press, every
``interval`` seconds, or every frame), and :func:`simplify` thins a path to the keyframes it needs to
reproduce every pose of the flight within a tolerance (what a window recording's ``take-N.path.toml``
holds). Times are the caller's clock (the viewer's simulated time, the sum of dt). No GL.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import UserError
from .document import save_path
from .spline import MAX_PITCH, CameraPath

__all__ = ["ANGLE_TOLERANCE", "POSITION_TOLERANCE", "PathRecorder", "simplify"]

#: how far a thinned path may stray from a flown pose at that pose's time: world units, and degrees of yaw
#: or pitch
POSITION_TOLERANCE = 1e-3
ANGLE_TOLERANCE = 1e-2


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
        """Forget every keyframe kept so far (the next one starts a new path at time 0)."""
        self._keys.clear()

    def path(self, *, thin: bool = False, position_tol: float = POSITION_TOLERANCE,
             angle_tol: float = ANGLE_TOLERANCE) -> CameraPath:
        """The path so far, with times starting at 0. ``UserError`` with fewer than 2 keyframes.

        thin : keep only the keyframes needed to pass within ``position_tol`` (world units) and
            ``angle_tol`` (degrees) of every kept pose at its time (:func:`simplify`)
        """
        if len(self._keys) < 2:
            raise UserError(f"a camera path needs at least 2 keyframes, only {len(self._keys)} recorded")
        a = np.array(self._keys, dtype=np.float64)
        p = CameraPath(a[:, 0] - a[0, 0], a[:, 1:4], a[:, 4], a[:, 5], name=self.name)
        return simplify(p, position_tol=position_tol, angle_tol=angle_tol) if thin else p

    def save(self, dest: str | os.PathLike, *, thin: bool = False) -> Path:
        """Write :meth:`path` (thinned when ``thin``) to ``dest`` as :func:`viewer.paths.save_path` does
        (TOML, JSON by suffix); returns ``dest``. :class:`UserError` with fewer than 2 keyframes."""
        return save_path(self.path(thin=thin), dest)


def simplify(path: CameraPath, *, position_tol: float = POSITION_TOLERANCE,
             angle_tol: float = ANGLE_TOLERANCE) -> CameraPath:
    """A path through a subset of ``path``'s keyframes (the first and last always) that, evaluated at
    every keyframe time of ``path``, is within ``position_tol`` world units of its position and
    ``angle_tol`` degrees of its yaw and pitch.

    Refinement from the two ends: while a keyframe is off, the worst one of every span between kept
    keyframes is kept too, until none is off (at worst every keyframe is kept: exact). Straight,
    evenly flown stretches keep only their ends.
    """
    t, pos, yaw, pitch = path.times, path.positions, path.yaw, path.pitch
    k = t.size
    keep = np.zeros(k, dtype=bool)
    keep[[0, -1]] = True
    while True:
        idx = np.flatnonzero(keep)
        q = CameraPath(t[idx], pos[idx], yaw[idx], pitch[idx], name=path.name)
        p, y, pi = q.evaluate(t)
        err = np.maximum(
            np.linalg.norm(p - pos, axis=1) / position_tol,
            np.maximum(np.abs((y - yaw + 180.0) % 360.0 - 180.0), np.abs(pi - pitch)) / angle_tol,
        )
        err[keep] = 0.0
        if not (err > 1.0).any():
            return q
        span = np.searchsorted(idx, np.arange(k), side="right") - 1  # the kept keyframe before each
        # the worst keyframe of each span with one off: sort by (span, err) and take each span's last
        order = np.lexsort((err, span))
        last = np.flatnonzero(np.diff(span[order], append=-1) != 0)
        worst = order[last]
        keep[worst[err[worst] > 1.0]] = True
