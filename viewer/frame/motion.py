"""Moving objects, frame by frame: the runtime of a scene's :class:`viewer.scenes.Motion`. No GL.

A :class:`MotionState` owns the world as it is now: a copy of the scene's centres and radii that the
movers' updates are written into (so the frame pipeline draws, and the visibility tracker measures
distances, from the same arrays the index was told about), the drifters' velocities and the clock.
:func:`advance` moves every mover by one time step and returns what changed, ready for
``index.move_many``::

    state = MotionState.from_scene(scene)
    index = make_index("octree", state.centres, state.radii)
    for frame in range(frames):
        ids, centres, radii = advance(state, 1 / 60)
        index.move_many(ids, centres, radii)      # radii is None when view radii are constant

Deterministic: the same scene (recipe and seed) and the same sequence of ``dt`` give bit-identical
positions, whatever ran before (the random walk draws from a counter-based stream keyed by the step
number). The models (drift, orbit, random walk; an optional view-radius pulse) are described in
:class:`viewer.scenes.scene.Motion`.

The world at any moment is :meth:`MotionState.snapshot` (the clock, the step count, the movers' centres,
radii and velocities); :meth:`MotionState.restore` puts a state back there and :func:`resumed` makes a scene
whose world starts there (a window take's replay starts where the take began)::

    snap = state.snapshot()                        # a take starts: its world, kept beside its files
    later = MotionState.from_scene(resumed(scene, snap))
    advance(later, dt) ...                         # the same dt sequence: the same world, bit for bit
"""

from __future__ import annotations

import copy
from typing import Mapping, Sequence

import numpy as np

from ..domain import COORD_LIMIT, RADIUS_LIMIT, first_outside
from ..terminal.text import clip
from . import _motion_kernels as K

__all__ = ["CLOCK_LIMIT", "SNAPSHOT_FIELDS", "STEP_LIMIT", "MotionState", "OtherMovers", "SnapshotError", "advance",
           "check_snapshot", "resumed", "warm"]

#: the arrays of a world's snapshot (:meth:`MotionState.snapshot`): everything :func:`advance` reads that
#: changes from step to step; the rest (start positions, orbit centres, speeds, phases) follows from the scene
SNAPSHOT_FIELDS = ("t", "step", "ids", "centres", "radii", "vel")
#: the latest world clock a snapshot may hold, seconds: the numeric domain's 2**100 (:mod:`viewer.domain`), as for
#: a camera path's times (at a clock of 1e308 an orbit's angle, speed / radius x t, overflowed and its mover's
#: centre became NaN)
CLOCK_LIMIT = COORD_LIMIT
#: the most steps a snapshot may have taken: as many again are left before the step count, an int64 in the
#: kernel's call and its random stream's key, overflows
STEP_LIMIT = 2**62


class OtherMovers(ValueError):
    """A world snapshot of other movers than the scene's (a snapshot of another scene)."""


class SnapshotError(ValueError):
    """A world snapshot that no :meth:`MotionState.snapshot` gives (:func:`check_snapshot`).

    field : the :data:`SNAPSHOT_FIELDS` name that breaks its rule; problem : the rule, and the value given
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def _shown(v) -> str:
    """A value given, for a message: an integer of many digits by its length, anything else clipped."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**24:
        return f"an integer of {len(str(abs(v)))} digits"
    return clip(repr(v), 60)


def _scalar(value, field: str, whole: bool, hi: float, what: str):
    """``value`` (a number, or a () array) as a Python int (``whole``) or float in ``[0, hi]``; a
    :class:`SnapshotError` naming ``field`` and the rule ``what`` otherwise."""
    a = np.asarray(value)
    x = a.item() if a.shape == () else None
    kinds = (int,) if whole else (int, float)
    if not (isinstance(x, kinds) and not isinstance(x, bool) and 0 <= x <= hi):  # NaN fails the range
        given = _shown(x) if a.shape == () else f"an array of shape {a.shape}"
        raise SnapshotError(field, f"must be {what}, got {given}")
    return x


def check_snapshot(snap: Mapping, fields: Sequence[str] = SNAPSHOT_FIELDS) -> dict[str, np.ndarray]:
    """The ``fields`` of the world snapshot ``snap`` (a mapping of :data:`SNAPSHOT_FIELDS`), each checked: the one
    rule for a snapshot's values, wherever they come from (a take's world file and its metadata's ``world``:
    :func:`viewer.recording.takes.read_take_world`; :meth:`MotionState.restore`).

    - ``t`` () real, the world clock: seconds in ``[0, CLOCK_LIMIT]``;
    - ``step`` () whole number, the steps taken: ``[0, STEP_LIMIT]``;
    - ``ids`` (M,) whole numbers, the movers' rows of the scene (which scene's: :meth:`MotionState.restore`);
    - ``centres`` (M, 3), ``vel`` (M, 3) floats: world units and world units a second, ``|value| <= COORD_LIMIT``;
    - ``radii`` (M,) floats: world units, ``[0, RADIUS_LIMIT]`` (the numeric domain an index takes).

    M is the length of ``ids`` (when ``fields`` holds it). Returns the fields as arrays: ``t`` () float64,
    ``step`` () int64, the others as given. A :class:`SnapshotError` naming the first field missing or out of
    its rule, with the value given (the first row out of the domain).
    """
    missing = [f for f in fields if f not in snap]
    if missing:
        raise SnapshotError(missing[0], "missing")
    out: dict[str, np.ndarray] = {}
    if "t" in fields:
        t = _scalar(snap["t"], "t", False, CLOCK_LIMIT, "the world clock, seconds in [0, 2**100]")
        out["t"] = np.array(t, dtype=np.float64)
    if "step" in fields:
        step = _scalar(snap["step"], "step", True, STEP_LIMIT, "the motion step count, a whole number in [0, 2**62]")
        out["step"] = np.array(step, dtype=np.int64)
    m = None
    if "ids" in fields:
        ids = np.asarray(snap["ids"])
        if ids.ndim != 1 or ids.dtype.kind not in "iu":
            raise SnapshotError("ids", f"must be the movers' rows, (M,) whole numbers, got {ids.dtype} {ids.shape}")
        out["ids"], m = ids, ids.size
    for f, width, limit, rule in (("centres", 3, COORD_LIMIT, "|coordinate| <= 2**100"),
                                  ("radii", 0, RADIUS_LIMIT, "0 <= radius <= 2**100"),
                                  ("vel", 3, COORD_LIMIT, "|component| <= 2**100 world units a second")):
        if f not in fields:
            continue
        a = np.asarray(snap[f])
        rows = a.shape[0] if m is None and a.ndim else m
        shape = (rows, width) if width else (rows,)
        if a.shape != shape or a.dtype.kind != "f":
            of = "" if m is None else f" (M = {m}, the movers in 'ids')"
            raise SnapshotError(f, f"must be {'(M, 3)' if width else '(M,)'} floats{of}, got {a.dtype} {a.shape}")
        bad = first_outside(a, limit, nonnegative=not width)
        if bad >= 0:
            raise SnapshotError(f, f"row {bad} = {clip(str(a[bad].tolist()), 80)} is outside the numeric domain "
                                   f"(finite, {rule})")
        out[f] = a
    return out


def warm() -> None:
    """Compile the motion kernels (before anything timed)."""
    K.warm()


class MotionState:
    """The moving world: current centres and radii of every object, and the movers' state.

    Parameters
    ----------
    motion : :class:`viewer.scenes.scene.Motion` (M movers)
    centres : (N, 3) float64, world units: the objects' start positions (copied)
    radii : (N,) float64, world units: their view distances at t = 0 (copied)
    lo, hi : (3,) float64: the world box the movers stay in

    Attributes
    ----------
    centres, radii : (N, 3) / (N,) float64: the world now (updated in place by :func:`advance`)
    ids : (M,) int64: the movers
    t : float, seconds since the start; step : int, steps taken
    """

    def __init__(self, motion, centres, radii, lo, hi):
        self.motion = motion
        self.centres = np.array(centres, dtype=np.float64, order="C").reshape(-1, 3)
        n = self.centres.shape[0]
        self.radii = np.array(radii, dtype=np.float64).reshape(n)
        self.lo = np.ascontiguousarray(lo, dtype=np.float64).reshape(3)
        self.hi = np.ascontiguousarray(hi, dtype=np.float64).reshape(3)
        self.ids = np.ascontiguousarray(motion.ids, dtype=np.int64)
        if self.ids.size and (self.ids.min() < 0 or self.ids.max() >= n):
            raise ValueError(f"motion ids must be rows 0..{n - 1} of the scene")
        self.kind = np.ascontiguousarray(motion.kind, dtype=np.int8)
        self.speed = np.ascontiguousarray(motion.speed, dtype=np.float64)
        self.direction = np.ascontiguousarray(motion.direction, dtype=np.float64).reshape(-1, 3)
        self.axis = np.ascontiguousarray(motion.axis, dtype=np.float64).reshape(-1, 3)
        self.orbit_radius = np.ascontiguousarray(motion.orbit_radius, dtype=np.float64)
        self.phase = np.ascontiguousarray(motion.phase, dtype=np.float64)
        self.phase_cs = np.ascontiguousarray(np.stack([np.sin(self.phase), np.cos(self.phase)], axis=1).reshape(-1, 2))
        self.pulse = float(motion.radius_pulse)
        self.period = float(motion.radius_period)
        self.key = int(motion.seed)
        self.start = self.centres[self.ids].copy()
        self.base_r = self.radii[self.ids].copy()
        self.orbit_centre = self.start - self.orbit_radius[:, None] * self.direction
        self.vel = np.where((self.kind == 0)[:, None], self.speed[:, None] * self.direction, 0.0)
        self.out_c = self.start.copy()
        self.out_r = self.base_r.copy()
        self.t = 0.0
        self.step = 0

    @classmethod
    def from_scene(cls, scene) -> "MotionState | None":
        """The state of ``scene``'s motion (``scene.motion``), or None for a static scene.

        A scene made by :func:`resumed` starts where its snapshot says (a take's world, replayed), not at
        t = 0."""
        motion = getattr(scene, "motion", None)
        if motion is None:
            return None
        lo, hi = scene.bounds
        state = cls(motion, scene.centres, scene.radii, lo, hi)
        snap = getattr(scene, "world_start", None)
        if snap is not None:
            state.restore(snap)
        return state

    def snapshot(self) -> dict[str, np.ndarray]:
        """The world now, as arrays (copies): ``t`` () float64 seconds, ``step`` () int64 steps taken, and
        per mover ``ids`` (M,) int64, ``centres`` (M, 3), ``radii`` (M,) and the drifters' ``vel`` (M, 3),
        float64. With the scene (recipe and seed) it is the whole state: :meth:`restore` then the same
        ``dt`` sequence give the same world, bit for bit, as running on from here."""
        return {
            "t": np.array(self.t, dtype=np.float64),
            "step": np.array(self.step, dtype=np.int64),
            "ids": self.ids.copy(),
            "centres": self.centres[self.ids].copy(),
            "radii": self.radii[self.ids].copy(),
            "vel": self.vel.copy(),
        }

    def restore(self, snap) -> None:
        """Put the world where :meth:`snapshot` ``snap`` (a mapping of :data:`SNAPSHOT_FIELDS`) says.

        A :class:`SnapshotError` (a :class:`ValueError`) naming the field when a value breaks the snapshot's
        rule (:func:`check_snapshot`: shapes, dtypes, the clock, the step count, the numeric domain), and
        :class:`OtherMovers` for other movers than this scene's; nothing changes then."""
        checked = check_snapshot(snap)
        ids = checked["ids"]
        if ids.size != self.m or not np.array_equal(ids, self.ids):
            raise OtherMovers(f"ids: the snapshot's {ids.size} movers are not this scene's {self.m}")
        arrays = {f: checked[f].astype(np.float64) for f in ("centres", "radii", "vel")}
        t, step = checked["t"], checked["step"]
        self.centres[self.ids] = arrays["centres"]
        self.radii[self.ids] = arrays["radii"]
        self.vel[:] = arrays["vel"]
        self.out_c[:] = arrays["centres"]
        self.out_r[:] = arrays["radii"]
        self.t = float(t)
        self.step = int(step)

    @property
    def m(self) -> int:
        """Number of moving objects."""
        return int(self.ids.size)

    @property
    def changes_radii(self) -> bool:
        """Whether the movers' view radii change (a radius pulse)."""
        return self.pulse > 0.0

    def __repr__(self) -> str:
        return f"<MotionState m={self.m} of {self.centres.shape[0]} t={self.t:g} s step={self.step}>"


def resumed(scene, snap):
    """A shallow copy of ``scene`` whose moving world starts where the snapshot ``snap``
    (:meth:`MotionState.snapshot`) says: every :class:`MotionState` made from it (:meth:`MotionState.from_scene`,
    so every :class:`viewer.frame.FramePipeline` and its indexes) starts at that clock, step and those
    positions. ``snap`` is checked first (a :class:`ValueError` naming the field); ``scene`` is unchanged."""
    state = MotionState.from_scene(scene)
    if state is None:
        raise ValueError("the scene has no motion: there is no moving world to resume")
    state.restore(snap)  # checked on a throwaway state
    out = copy.copy(scene)
    out.world_start = {f: np.array(snap[f], copy=True) for f in SNAPSHOT_FIELDS}
    return out


def advance(state: MotionState, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Move every mover of ``state`` by ``dt`` seconds (in place) and return what moved.

    Returns ``(ids (M,) int64, centres (M, 3) float64, radii (M,) float64 or None)``: the movers,
    their new centres and (when the view radii change) their new radii. The arrays are the state's own
    buffers, overwritten by the next call: pass them on (``index.move_many(*advance(state, dt))``) or copy.
    """
    dt = float(dt)
    t_new = state.t + dt
    K.advance_kernel(state.ids, state.kind, state.speed, state.direction, state.axis, state.orbit_radius,
                     state.phase_cs, state.start, state.orbit_centre, state.vel, state.base_r, state.centres,
                     state.radii, state.out_c, state.out_r, state.lo, state.hi, dt, t_new, state.step,
                     state.key, state.pulse, state.period)
    state.t = t_new
    state.step += 1
    return state.ids, state.out_c, (state.out_r if state.pulse > 0.0 else None)
