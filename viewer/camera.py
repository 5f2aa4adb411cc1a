"""A fly camera that is a pure controller: no GL, no window, no clock.

The camera holds a pose (position, yaw, pitch) and a lens (fov, near, far, aspect). ``update(dt,
input_state)`` moves it by an explicit time step, so the same inputs and the same ``dt`` replay the
same flight bit for bit. Key bindings are data (:class:`KeyBindings` maps key *names* such as ``"w"``
or ``"left_shift"`` to actions); only the window adapter (:mod:`viewer.drivers.window`) knows a toolkit's key
constants and translates them to these names.

Conventions: right-handed, +Y up, world units. ``yaw`` and ``pitch`` are degrees; yaw 0, pitch 0
looks down -Z; yaw 90 looks down +X; pitch +90 looks straight up. Matrices are (4, 4) in numpy's
row-major maths convention (``clip = proj @ view @ [x, y, z, 1]``); transpose them for GL's column-major
uniforms. They are float64 unless a float32 copy is asked for: the frustum of a far-off camera stays
exact. The projection is pyrr's (its matrices act on row vectors, hence the transpose), built once per
lens; the view basis is written out (measured: see :func:`_basis`). A frame asks for them
once (:meth:`FlyCamera.matrices`): the cull and the draw share them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple

import numpy as np
from pyrr import matrix44

from .domain import COORD_LIMIT

__all__ = [
    "ACTIONS",
    "CAMERA_LIMIT",
    "DEFAULT_BINDINGS",
    "CameraMatrices",
    "FlyCamera",
    "InputState",
    "KeyBindings",
    "Pose",
    "Spot",
    "busy_spots",
    "forward_vector",
    "look_at_angles",
    "perspective",
    "view_rotation",
]

#: how far the fly camera's moves take it on each axis: half the numeric domain (:mod:`viewer.domain`), so
#: every pose it flies is one every index answers, and so is every point of a take's path: the Catmull-Rom
#: curve through poses within +-L strays at most L / 2 beyond them (its tangent terms weigh at most 1/4 of
#: a chord of at most 2 L), inside +-1.5 L = +-0.75 COORD_LIMIT
CAMERA_LIMIT = COORD_LIMIT / 2.0

#: the longest move of one update: across the whole domain (finite, so no inf * 0 = NaN)
_MAX_STEP = 4.0 * COORD_LIMIT

#: Continuous actions the camera understands (held keys).
ACTIONS: tuple[str, ...] = ("forward", "back", "left", "right", "up", "down", "fast")


class Pose(NamedTuple):
    """A camera pose: position ``x, y, z`` (world units), ``yaw``, ``pitch`` (degrees)."""

    x: float
    y: float
    z: float
    yaw: float
    pitch: float

    @property
    def position(self) -> np.ndarray:
        """(3,) float64, world units."""
        return np.array((self.x, self.y, self.z), dtype=np.float64)


@dataclass(frozen=True)
class KeyBindings:
    """Key name -> action. Names are lower-case toolkit-neutral strings (``"w"``, ``"space"``,
    ``"left_ctrl"``, ``"left_shift"``, ...). Several keys may map to one action."""

    keys: dict[str, str] = field(
        default_factory=lambda: {
            "w": "forward",
            "s": "back",
            "a": "left",
            "d": "right",
            "e": "up",
            "space": "up",
            "q": "down",
            "left_ctrl": "down",
            "right_ctrl": "down",
            "left_shift": "fast",
            "right_shift": "fast",
        }
    )

    def actions(self, held_keys: Iterable[str]) -> frozenset[str]:
        """The set of actions the held key names trigger (unknown keys are ignored)."""
        return frozenset(self.keys[k] for k in held_keys if k in self.keys)


DEFAULT_BINDINGS = KeyBindings()


@dataclass
class InputState:
    """What the user did since the last update.

    actions : held actions (a subset of :data:`ACTIONS`)
    mouse_dx, mouse_dy : mouse motion in pixels since the last update while looking (right, down positive)
    scroll : scroll steps since the last update (up positive)
    """

    actions: frozenset[str] = frozenset()
    mouse_dx: float = 0.0
    mouse_dy: float = 0.0
    scroll: float = 0.0

    @classmethod
    def from_keys(cls, held_keys: Iterable[str], bindings: KeyBindings = DEFAULT_BINDINGS, **kw) -> "InputState":
        """Build the state from held key names through ``bindings``."""
        return cls(actions=bindings.actions(held_keys), **kw)


def forward_vector(yaw: float, pitch: float) -> np.ndarray:
    """Unit view direction (3,) float64 for ``yaw``, ``pitch`` in degrees."""
    y, p = math.radians(yaw), math.radians(pitch)
    cp = math.cos(p)
    return np.array((cp * math.sin(y), math.sin(p), -cp * math.cos(y)))


def look_at_angles(eye, target) -> tuple[float, float]:
    """(yaw, pitch) in degrees that look from ``eye`` towards ``target`` (both (3,) world units)."""
    d = np.asarray(target, dtype=np.float64) - np.asarray(eye, dtype=np.float64)
    horiz = math.hypot(d[0], d[2])
    return math.degrees(math.atan2(d[0], -d[2])), math.degrees(math.atan2(d[1], horiz))


def _basis(yaw: float, pitch: float) -> tuple[tuple[float, float, float], ...]:
    """(right, up, forward) unit vectors for ``yaw``, ``pitch`` degrees; right stays horizontal.

    Written out rather than composed from pyrr's rotations: its 3x3 yaw and pitch rotations and their
    product, or its look-at (two ``np.cross``), made the cull stage measurably slower for the same basis
    (the figures: the frame README's "Camera maths")."""
    y, p = math.radians(yaw), math.radians(pitch)
    sy, cy, sp, cp = math.sin(y), math.cos(y), math.sin(p), math.cos(p)
    fx, fy, fz = cp * sy, sp, -cp * cy
    # up = right x forward
    return (cy, 0.0, sy), (-sy * fy, sy * fx - cy * fz, cy * fy), (fx, fy, fz)


def _views(yaw: float, pitch: float, position) -> tuple[np.ndarray, np.ndarray]:
    """The view rotation and the world -> eye view, each (4, 4) float64, from one basis: rows right,
    up, -forward, the view's translated by -position ((x, y, z) floats)."""
    r, u, f = _basis(yaw, pitch)
    x, y, z = position
    rot = np.array(((*r, 0.0), (*u, 0.0), (-f[0], -f[1], -f[2], 0.0), (0.0, 0.0, 0.0, 1.0)))
    view = rot.copy()
    view[0, 3] = -(r[0] * x + r[1] * y + r[2] * z)
    view[1, 3] = -(u[0] * x + u[1] * y + u[2] * z)
    view[2, 3] = f[0] * x + f[1] * y + f[2] * z
    return rot, view


def view_rotation(yaw: float, pitch: float) -> np.ndarray:
    """The view matrix without translation, (4, 4) float64: world directions -> eye space.

    Rows are right, up and -forward (no roll: right stays horizontal). The renderer draws camera-relative
    positions (object centre minus eye, in float32), so this rotation is the whole view transform it needs.
    """
    return _views(yaw, pitch, (0.0, 0.0, 0.0))[0]


@functools.lru_cache(maxsize=16)
def _perspective(fov_y: float, aspect: float, near: float, far: float) -> np.ndarray:
    m = np.ascontiguousarray(matrix44.create_perspective_projection(fov_y, aspect, near, far, dtype=np.float64).T)
    m.flags.writeable = False  # shared by every frame with this lens
    return m


def perspective(fov_y: float, aspect: float, near: float, far: float) -> np.ndarray:
    """OpenGL perspective projection (4, 4) float64; ``fov_y`` in degrees, depth to [-1, 1] (pyrr's)."""
    return _perspective(float(fov_y), float(aspect), float(near), float(far)).copy()


class CameraMatrices(NamedTuple):
    """A camera's matrices of one frame, each (4, 4) float64, built from one view basis.

    rotation : world directions -> eye space (:func:`view_rotation`; the renderer's view matrix, since it
        draws camera-relative positions)
    projection : eye -> clip (:func:`perspective`)
    view_projection : world points -> clip (``projection @ rotation @ translate(-position)``; frustum planes)
    """

    rotation: np.ndarray
    projection: np.ndarray
    view_projection: np.ndarray


@dataclass
class FlyCamera:
    """A free-flying camera.

    position : (3,) float64, world units
    yaw, pitch : degrees (pitch clamped to +-89)
    fov : vertical field of view, degrees
    near, far : clip distances, world units
    aspect : width / height
    speed : world units per second; ``fast_factor`` multiplies it while "fast" is held
    sensitivity : degrees per pixel of mouse motion
    scroll_factor : speed multiplier per scroll step
    """

    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    yaw: float = 0.0
    pitch: float = 0.0
    fov: float = 60.0
    near: float = 0.1
    far: float = 1000.0
    aspect: float = 16.0 / 9.0
    speed: float = 10.0
    fast_factor: float = 5.0
    sensitivity: float = 0.15
    scroll_factor: float = 1.25
    min_speed: float = 1e-3
    max_speed: float = 1e7

    def __post_init__(self) -> None:
        self.position = np.array(self.position, dtype=np.float64).reshape(3)

    # ----------------------------------------------------------------------------- pose
    @property
    def pose(self) -> Pose:
        p = self.position
        return Pose(float(p[0]), float(p[1]), float(p[2]), float(self.yaw), float(self.pitch))

    def set_pose(self, pose) -> None:
        """Jump to ``pose``: a :class:`Pose` or any 5 numbers ``(x, y, z, yaw, pitch)``."""
        x, y, z, yaw, pitch = (float(v) for v in pose)
        self.position = np.array((x, y, z), dtype=np.float64)
        self.yaw = yaw
        self.pitch = max(-89.0, min(89.0, pitch))

    def look_at(self, target) -> None:
        """Turn to look at ``target`` (3,) world units."""
        self.yaw, pitch = look_at_angles(self.position, target)
        self.pitch = max(-89.0, min(89.0, pitch))

    @property
    def forward(self) -> np.ndarray:
        return forward_vector(self.yaw, self.pitch)

    @property
    def right(self) -> np.ndarray:
        y = math.radians(self.yaw)
        return np.array((math.cos(y), 0.0, math.sin(y)))

    # ----------------------------------------------------------------------------- update
    def update(self, dt: float, state: InputState) -> bool:
        """Advance by ``dt`` seconds under ``state``; returns whether the pose changed.

        Mouse motion turns the camera by ``sensitivity`` degrees per pixel whatever ``dt`` is (large
        moves at low frame rates are kept, not dropped); scroll scales ``speed``.
        """
        before = self.pose
        if state.scroll:
            self.speed = min(self.max_speed, max(self.min_speed, self.speed * self.scroll_factor**state.scroll))
        if state.mouse_dx or state.mouse_dy:
            self.yaw = (self.yaw + state.mouse_dx * self.sensitivity + 180.0) % 360.0 - 180.0
            self.pitch = max(-89.0, min(89.0, self.pitch - state.mouse_dy * self.sensitivity))
        a = state.actions
        move = np.zeros(3)
        if "forward" in a:
            move += self.forward
        if "back" in a:
            move -= self.forward
        if "right" in a:
            move += self.right
        if "left" in a:
            move -= self.right
        if "up" in a:
            move[1] += 1.0
        if "down" in a:
            move[1] -= 1.0
        norm = float(np.linalg.norm(move))
        if norm > 0.0 and dt > 0.0:
            v = self.speed * (self.fast_factor if "fast" in a else 1.0)
            step = v * dt
            if not step <= _MAX_STEP:  # an overflowing (inf) or huge step: crossing the whole domain is enough
                step = _MAX_STEP
            # the camera never leaves the numeric domain every index answers in (viewer.domain), whatever the
            # speed and time step: it stops at +-CAMERA_LIMIT (or where it was put, if further out: no jump back)
            lim = np.maximum(np.abs(self.position), CAMERA_LIMIT)
            self.position = np.clip(self.position + move * (step / norm), -lim, lim)
        return self.pose != before

    # ----------------------------------------------------------------------------- matrices
    def matrices(self) -> CameraMatrices:
        """This pose's rotation, projection and view-projection (float64; read them, do not write: the
        projection is shared while the lens stays), the view basis computed once."""
        rot, view = _views(self.yaw, self.pitch, self.position.tolist())
        proj = _perspective(self.fov, self.aspect, self.near, self.far)
        return CameraMatrices(rot, proj, proj @ view)

    def view_matrix(self) -> np.ndarray:
        """World -> eye (4, 4) float32 (rotation and translation)."""
        return _views(self.yaw, self.pitch, self.position.tolist())[1].astype(np.float32)

    def projection_matrix(self) -> np.ndarray:
        """Eye -> clip (4, 4) float32."""
        return perspective(self.fov, self.aspect, self.near, self.far).astype(np.float32)

    def view_projection(self) -> np.ndarray:
        """World -> clip (4, 4) float64, for frustum planes (kept in float64 so far-off worlds cull exactly)."""
        return self.matrices().view_projection


# ----------------------------------------------------------------------------- where a scene is busy
class Spot(NamedTuple):
    """A busy place to fly from: ``pose`` (inside the spot, looking at its middle), ``speed`` (world units
    per second: two seconds of forward flight cross about one ``spread``), ``spread`` (world units: the
    per-axis RMS distance of the spot's objects from its middle) and ``count`` (objects around it)."""

    pose: Pose
    speed: float
    spread: float
    count: int


def busy_spots(centres, radii, k: int = 8, *, grid: int = 16, sub: int = 8) -> list[Spot]:
    """The ``k`` densest places of a scene, densest first, as :class:`Spot` (no GL, no index: histograms).

    centres : (N, 3) world units; radii : (N,) view distances, world units
    grid : cubic cells along the longest side of the centres' box (a flat scene gets fewer along its thin
        axes); within each of the busiest cells, ``sub`` sub-cells a side find the densest corner, and the
        spot is the mean of the objects within 1.5 sub-cells of it.

    Each pose stands ``min(median radius / 2, spread)`` from the spot's middle (so the objects there are
    within their view distance) and looks at it. Spots closer than two spreads to a denser one are dropped.
    An empty scene: ``[]``.
    """
    c = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
    r = np.asarray(radii, dtype=np.float64).reshape(-1)
    if c.shape[0] == 0 or k <= 0:
        return []
    lo, hi = c.min(axis=0), c.max(axis=0)
    extent = float((hi - lo).max()) or 1.0
    med_r = float(np.median(r)) if r.size else 1.0
    cell = extent / grid
    dims = np.maximum(np.ceil((hi - lo) / cell).astype(np.int64), 1)
    ijk = np.minimum(((c - lo) / cell).astype(np.int64), dims - 1)
    flat = (ijk[:, 0] * dims[1] + ijk[:, 1]) * dims[2] + ijk[:, 2]
    counts = np.bincount(flat, minlength=int(np.prod(dims)))
    order = np.argsort(-counts, kind="stable")[: 4 * k]
    spots: list[Spot] = []
    for f in order:
        if counts[f] == 0 or len(spots) >= k:
            break
        members = c[flat == f]
        clo = lo + np.array(np.unravel_index(int(f), tuple(dims))) * cell
        s_cell = cell / sub
        sj = np.minimum(((members - clo) / s_cell).astype(np.int64), sub - 1)
        sflat = (sj[:, 0] * sub + sj[:, 1]) * sub + sj[:, 2]
        best = int(np.argmax(np.bincount(sflat, minlength=sub ** 3)))
        middle = clo + (np.array(np.unravel_index(best, (sub, sub, sub))) + 0.5) * s_cell
        near = members[np.linalg.norm(members - middle, axis=1) <= 1.5 * s_cell]
        if len(near) == 0:
            near = members
        target = near.mean(axis=0)
        spread = float(np.sqrt(((near - target) ** 2).sum(axis=1).mean() / 3.0))
        spread = max(spread, 1e-3 * extent, 1e-3)
        if any(np.linalg.norm(target - np.asarray(s.pose[:3])) < 2.0 * max(spread, s.spread) for s in spots):
            continue
        d = max(min(0.5 * med_r, spread), 1e-3)
        eye = target + d * np.array((0.0, 0.25, 1.0)) / math.sqrt(1.0625)
        yaw, pitch = look_at_angles(eye, target)
        spots.append(Spot(Pose(float(eye[0]), float(eye[1]), float(eye[2]), yaw, max(-89.0, min(89.0, pitch))),
                          0.5 * spread, spread, int(len(near))))
    return spots
