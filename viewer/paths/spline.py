"""Camera paths as keyframes and their interpolation: :class:`CameraPath` and the fixed-step
:class:`PoseSamples` a replay renders.

Between keyframes the position follows a Catmull-Rom spline (cubic Hermite with tangents from the
neighbouring keyframes, times taken into account), yaw turns the short way round (each step between
keyframes is unwrapped into (-180, 180] before the same spline) and pitch follows the spline, clamped to
+-89. No GL; reading path files is :mod:`viewer.paths.files`, and the writing methods hand the path to
:mod:`viewer.paths.document`, which does not import this module.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..domain import COORD_LIMIT
from ..errors import UserError
from .document import path_to_dict, path_to_toml, save_path

__all__ = ["FRAME_DT", "MAX_PITCH", "CameraPath", "PathDomainError", "PoseSamples"]

#: the steepest pitch a path (and the camera) takes, degrees
MAX_PITCH = 89.0

#: seconds: the step of a frame when nothing else sets one (60 frames a second)
FRAME_DT = 1.0 / 60.0


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


class PathDomainError(UserError, ValueError):
    """A camera path whose keyframes, or the curve between them, leave the numeric domain
    (:mod:`viewer.domain`): a :class:`ValueError` for code, one message and exit 2 on the command line."""


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
        with np.errstate(over="ignore", invalid="ignore"):  # times 1e308 apart: checked below, by name
            increasing = (np.diff(self.times) > 0).all()
        if not increasing:
            raise ValueError("keyframe times must be strictly increasing")
        if (np.abs(self.pitch) > MAX_PITCH).any():
            raise ValueError(f"pitch must be within +-{MAX_PITCH:g} degrees")
        if not self.duration <= COORD_LIMIT:  # a recording's t column holds seconds from the start
            raise PathDomainError(f"the keyframe times span {self.times[0]:g}..{self.times[-1]:g} s: more than the "
                                  "numeric domain's 2**100 s (viewer.domain)")
        values = np.column_stack([self.positions, self.yaw, self.pitch])
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            slope = np.diff(values, axis=0) / np.diff(self.times)[:, None]
        bad = np.flatnonzero(~np.isfinite(slope).all(axis=1))
        if bad.size:
            i = int(bad[0])
            raise PathDomainError(f"keyframes {i} and {i + 1} (t = {self.times[i]:g} and {self.times[i + 1]:g} s) are too "
                                  "close in time for the distance between them: the curve's speed overflows")
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
        """The first keyframe's time, seconds."""
        return float(self.times[0])

    @property
    def duration(self) -> float:
        """Seconds from the first keyframe to the last."""
        return float(self.times[-1]) - float(self.times[0])  # Python floats: inf, not a numpy overflow

    # ----------------------------------------------------------------------------- evaluation
    def evaluate(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Poses at times ``t`` ((F,) seconds, clamped to the path): positions (F, 3), yaw (F,)
        wrapped into [-180, 180), pitch (F,), all float64."""
        t = np.clip(np.asarray(t, dtype=np.float64).reshape(-1), self.times[0], self.times[-1])
        values = np.column_stack([self.positions, self._yaw_u, self.pitch])  # (K, 5)
        with np.errstate(over="ignore", invalid="ignore"):
            out = _hermite(self.times, values, t)
        # checked where sampled, not only at the keyframes: the cubic overshoots them between
        ok = np.isfinite(out).all(axis=1) & (np.abs(out[:, :3]) <= COORD_LIMIT).all(axis=1)
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            raise PathDomainError(f"path {self.name!r} leaves the numeric domain (|coordinate| <= 2**100, finite) at "
                                  f"t = {t[j] - self.times[0]:g} s: position {out[j, :3].tolist()}")
        yaw = (out[:, 3] + 180.0) % 360.0 - 180.0
        pitch = np.clip(out[:, 4], -MAX_PITCH, MAX_PITCH)
        return np.ascontiguousarray(out[:, :3]), yaw, pitch

    def pose_at(self, t: float) -> tuple[float, float, float, float, float]:
        """``(x, y, z, yaw, pitch)`` at time ``t`` seconds."""
        p, y, pi = self.evaluate([t])
        return float(p[0, 0]), float(p[0, 1]), float(p[0, 2]), float(y[0]), float(pi[0])

    def sample(self, *, frames: int | None = None, dt: float | None = None) -> PoseSamples:
        """Poses at a fixed step: frame ``k`` is at ``start + k * dt``.

        - ``frames`` alone: the whole path in ``frames`` frames, ``dt = duration / (frames - 1)`` (one frame, or
          a path that lasts no time: its start at :data:`FRAME_DT`, one ordinary frame's step).
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
            dt = self.duration / (frames - 1) if frames > 1 and self.duration > 0 else FRAME_DT
        if frames is None:
            frames = int(math.floor(self.duration / dt + 1e-9)) + 1
        t = self.start + np.arange(frames, dtype=np.float64) * dt
        pos, yaw, pitch = self.evaluate(t)
        return PoseSamples(t - self.start, float(dt), pos, yaw, pitch)

    # ----------------------------------------------------------------------------- files
    def to_dict(self) -> dict[str, Any]:
        """The path as the document :func:`viewer.paths.save_path` writes (JSON-ready)."""
        return path_to_dict(self)

    def to_toml(self) -> str:
        """The path as an annotated TOML document that reads back to the same floats."""
        return path_to_toml(self)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the path as TOML (``.json`` suffix: JSON) through a temporary file and a rename."""
        return save_path(self, path)


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
