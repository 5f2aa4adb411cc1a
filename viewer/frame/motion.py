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

import numpy as np

from . import _motion_kernels as K

__all__ = ["SNAPSHOT_FIELDS", "MotionState", "OtherMovers", "advance", "resumed", "warm"]

#: the arrays of a world's snapshot (:meth:`MotionState.snapshot`): everything :func:`advance` reads that
#: changes from step to step; the rest (start positions, orbit centres, speeds, phases) follows from the scene
SNAPSHOT_FIELDS = ("t", "step", "ids", "centres", "radii", "vel")


class OtherMovers(ValueError):
    """A world snapshot of other movers than the scene's (a snapshot of another scene)."""


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

        A :class:`ValueError` naming the field when the snapshot is not of this motion (other shapes, values
        that are not finite, a clock that is not a time >= 0; :class:`OtherMovers` for other movers than
        this scene's); nothing changes then."""
        missing = [f for f in SNAPSHOT_FIELDS if f not in snap]
        if missing:
            raise ValueError(f"the world snapshot has no {', '.join(missing)}")
        m = self.m
        t = np.asarray(snap["t"], dtype=np.float64)
        step = np.asarray(snap["step"])
        if t.shape != () or not (np.isfinite(t) and t >= 0.0):
            raise ValueError("t: the world clock must be a time in seconds >= 0")
        if step.shape != () or step.dtype.kind not in "iu" or int(step) < 0:
            raise ValueError("step: the step count must be a whole number >= 0")
        ids = np.asarray(snap["ids"])
        if ids.shape != (m,) or ids.dtype.kind not in "iu" or not np.array_equal(ids, self.ids):
            raise OtherMovers(f"ids: the snapshot's {ids.size} movers are not this scene's {m}")
        arrays = {}
        for f, shape in (("centres", (m, 3)), ("radii", (m,)), ("vel", (m, 3))):
            a = np.asarray(snap[f])
            if a.shape != shape or a.dtype.kind != "f" or not np.isfinite(a).all():
                raise ValueError(f"{f}: expected {shape} finite floats, got {a.dtype} {a.shape}")
            arrays[f] = a.astype(np.float64)
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
