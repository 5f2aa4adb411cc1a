"""The per-frame pipeline, without GL: camera pose -> moving objects -> index query -> events -> frustum
cull -> instance records.

Each frame flows one way and every stage is timed with ``perf_counter`` around its work::

    update  the camera moves (an explicit pose for replays, or input state and dt); in a scene with
            motion (``scene.motion``) the movers advance by dt (:func:`viewer.motion.advance`) and the
            index learns their new centres / radii through ``move_many``
    query   index.query_into(camera position, ids)  -> the objects whose view sphere holds the camera
    events  the visible ids -> entered / left since the last frame (:class:`viewer.events.VisibilityTracker`,
            with the pipeline's hysteresis margin); counted in the frame, not in any stage column
    cull    the camera's matrices (once per frame; the draw uses them too), frustum planes, then bounding
            spheres against them -> the drawn ids
    gather  the drawn ids sorted nearest first (ties by id), then their instance records into a
            preallocated array of instance records

:meth:`FramePipeline.run` runs these stages; :meth:`FramePipeline.finish` then builds the frame's
:class:`FrameStats` once, with the times of the GL stages (upload into one preallocated GPU buffer, one
instanced draw) when :class:`viewer.render.ViewerSession`, the owner of a whole frame, ran them.
:meth:`FramePipeline.step` is the GL-free frame (run + finish). Buffers only ever grow (doubling) when a
query overflows them, never per frame.

An instance record is one :data:`viewer.instances.INSTANCE_DTYPE` (position relative to the render camera,
size, colour, fade: objects fade in over the last ``fade`` fraction of their view distance, so they do
not pop; in a star field, scene style "stars", over the whole of it: the record's fade is ``1 - d / r``, from
which the star shader takes the star's apparent magnitude).
"""

from __future__ import annotations

import copy
import math
from dataclasses import field, make_dataclass
from time import perf_counter
from typing import Any

import numpy as np

from . import _frame_kernels, events, frustum, motion
from ._frame_kernels import gather_instances, sort_front_to_back
from .camera import CameraMatrices, FlyCamera, InputState, Pose
from .events import VisibilityTracker
from .index import INDEXES, QueryOverflow, SphereIndex, make_index, warm_up as warm_up_indexes
from .instances import INSTANCE_DTYPE, instance_words
from .motion import MotionState, advance
from .options import COLOUR_MODES
from .recording.schema import FRAME_COLUMN_INFO

__all__ = [
    "FRAME_COLUMNS",
    "INSTANCE_DTYPE",
    "LEVEL_PALETTE",
    "FramePipeline",
    "FrameStats",
    "camera_for_scene",
    "pack_colours",
    "warm",
]

#: RGBA colours of octree levels (radius bands), cycled for deeper levels.
LEVEL_PALETTE = np.array(
    [
        (230, 25, 75, 255), (60, 180, 75, 255), (255, 225, 25, 255), (0, 130, 200, 255),
        (245, 130, 48, 255), (145, 30, 180, 255), (70, 240, 240, 255), (240, 50, 230, 255),
        (210, 245, 60, 255), (250, 190, 212, 255), (0, 128, 128, 255), (170, 110, 40, 255),
    ],
    dtype=np.uint8,
)


class _FrameStatsRow:
    """What every :class:`FrameStats` can do besides holding its fields."""

    __slots__ = ()

    def as_row(self) -> tuple:
        """The values in :data:`FRAME_COLUMNS` order."""
        return tuple(getattr(self, f) for f in FRAME_COLUMNS)

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in FRAME_COLUMNS}

    @property
    def cpu_ms(self) -> float:
        """index + cull + gather + upload, milliseconds (the stages the index makes cheap)."""
        return self.query_ms + self.cull_ms + self.gather_ms + self.upload_ms


_KIND_TYPES = {"int": (int, 0), "float": (float, 0.0), "str": (str, "")}

#: One frame's row for the recorder: a slotted dataclass with one field per column of
#: :data:`viewer.recording.schema.FRAME_COLUMN_INFO` (its name, type and zero default), in file order.
FrameStats = make_dataclass(
    "FrameStats",
    [(c.name, _KIND_TYPES[c.kind][0], field(default=_KIND_TYPES[c.kind][1])) for c in FRAME_COLUMN_INFO],
    bases=(_FrameStatsRow,),
    slots=True,
)
FrameStats.__module__ = __name__
FrameStats.__doc__ = "One frame's row for the recorder (fields from the CSV schema, in file order):\n\n" + "\n".join(
    f"    {c.name} : {c.kind}{f' ({c.unit})' if c.unit else ''}, {c.doc}" for c in FRAME_COLUMN_INFO
)

#: Column names of a frame row, in order.
FRAME_COLUMNS: tuple[str, ...] = tuple(c.name for c in FRAME_COLUMN_INFO)


def pack_colours(rgba: np.ndarray) -> np.ndarray:
    """(N, 4) uint8 RGBA -> (N,) uint32 whose memory bytes are R, G, B, A (what the GPU reads)."""
    a = np.ascontiguousarray(np.asarray(rgba, dtype=np.uint8).reshape(-1, 4))
    return a.view(np.uint32).reshape(-1).copy()


def warm() -> None:
    """Compile the numba kernels of the pipeline (before anything timed)."""
    frustum.warm()
    _frame_kernels.warm()
    motion.warm()
    events.warm()


class FramePipeline:
    """Runs the GL-free stages of each frame for one scene and owns their preallocated buffers.

    Parameters
    ----------
    scene : anything with ``centres`` (N, 3) float64, ``radii`` (N,) float64 view distances,
        ``sizes`` (N,) float32 half-extents, ``colours`` (N, 4) uint8 RGBA (a :class:`viewer.scenes.Scene`)
    index : name of the index to start with (a key of :data:`viewer.index.INDEXES`)
    indexes : the names :meth:`cycle_index` goes through (default: every available index)
    fade : fraction of each view distance, at its far end, over which objects fade in; a scene of style
        "stars" (``scene.style``) ignores it: there :attr:`fade` is 1, so a record's fade is ``1 - d / r``
        (d: the query camera's distance), the star's brightness (``shaders/stars.glsl``)
    capacity : initial size of the id and instance buffers (they grow when a query overflows)
    index_options : per-index keyword options, ``{name: {...}}``
    hysteresis : ``(margin, relative)`` of the visibility events (see :class:`viewer.events.VisibilityTracker`);
        default none
    external : ``{name: factory(pipeline) -> culler}``, cullers the pipeline does not build itself (the GPU's,
        :class:`viewer.render.gpu_cull.GpuCulling`, made by the session that owns the GL context). Such a
        culler stands where an index stands (``external = True``, ``len``, ``stats``, ``move_many``,
        ``reset_events``): :meth:`update` moves the movers in it, and its owner runs the selection instead
        of :meth:`select`, filling the same counts and stage times (:meth:`set_selection`)

    In a scene with motion (``scene.motion`` not None), :attr:`motion` is its
    :class:`viewer.motion.MotionState` and :attr:`centres` / :attr:`radii` are the state's arrays (the
    world now, a copy of the scene's): each frame with ``dt > 0`` advances the movers and moves them in
    the current index; an index switched to later catches up in one ``move_many``.

    ``sort`` (default True) draws nearest first: on a software rasteriser the depth test then skips
    most hidden fragments, a several-fold saving where big sprites overlap.

    Indexes are built on first use and kept, so switching back is instant. While :attr:`frozen`, the
    query and the cull use the pose and frustum captured when freezing, and the instances are still
    drawn relative to the moving camera: fly out and look at what the frozen camera sees.
    """

    def __init__(self, scene, index: str = "brute", *, indexes: list[str] | None = None, fade: float = 0.15,
                 capacity: int = 1024, index_options: dict[str, dict] | None = None,
                 hysteresis: tuple[float, bool] | None = None, external: dict | None = None):
        self.motion: MotionState | None = MotionState.from_scene(scene)
        if self.motion is not None:
            self.centres = self.motion.centres
            self.radii = self.motion.radii
        else:
            self.centres = np.ascontiguousarray(scene.centres, dtype=np.float64).reshape(-1, 3)
            self.radii = np.ascontiguousarray(scene.radii, dtype=np.float64).reshape(self.centres.shape[0])
        n = self.centres.shape[0]
        self.sizes = np.ascontiguousarray(scene.sizes, dtype=np.float32).reshape(n)
        self.bounds = self.sizes.astype(np.float64) * math.sqrt(3.0)  # sphere around the cube of half-extent size
        self.category_colours = pack_colours(scene.colours)
        if self.category_colours.size != n:
            raise ValueError(f"scene colours has {self.category_colours.size} rows, centres {n}")
        self.name = str(getattr(scene, "name", "scene"))
        self.stars = getattr(scene, "style", "objects") == "stars"
        self.fade = fade
        self.index_options = dict(index_options or {})
        self._external = dict(external or {})
        if indexes is None:
            indexes = [k for k, cls in INDEXES.items() if cls.unavailable() is None]
        if index not in indexes:
            indexes = [index, *indexes]
        self.index_names: list[str] = list(indexes)
        self._built: dict[str, SphereIndex] = {}
        self._synced: dict[str, int] = {}  # index name -> the motion step its objects are at
        self.build_s: dict[str, float] = {}
        self.events = VisibilityTracker(n, *(hysteresis or (0.0, False)))
        #: the last frame's stage times, milliseconds (update, query, events, cull, gather)
        self.stage_ms: dict[str, float] = dict.fromkeys(("update", "query", "events", "cull", "gather"), 0.0)
        self.colour_mode = "category"
        self.frozen = False
        self._frozen_pose: Pose | None = None
        self._frozen_planes: np.ndarray | None = None
        self.frame = 0
        self.t = 0.0
        cap = max(16, int(capacity))
        self.ids = np.empty(cap, dtype=np.int64)
        self.drawn_ids = np.empty(cap, dtype=np.int64)
        self._alloc_instances(cap)
        self.sort = True
        self.n_drawn = 0
        self.n_visible = 0
        self.n_entered = 0
        self.n_left = 0
        self.planes = np.zeros((6, 4))
        self._eye = np.zeros(3)
        self._qp = np.zeros(3)
        self.colours = self.category_colours
        self.index: SphereIndex
        self.index_name = ""
        self.use_index(index)

    @property
    def fade(self) -> float:
        """The fraction of each view distance, at its far end, over which objects fade in (what the gather
        writes in each record's fade); 1 in a star field, whatever was set."""
        return 1.0 if self.stars else self._fade

    @fade.setter
    def fade(self, value: float) -> None:
        self._fade = float(value)

    # ----------------------------------------------------------------------------- buffers
    def _alloc_instances(self, cap: int) -> None:
        self.instance_data, self._inst_u = instance_words(cap)
        self._keys = np.empty(cap, dtype=np.float64)
        self._scratch = np.empty(cap, dtype=np.int64)

    @property
    def capacity(self) -> int:
        return self.ids.size

    @property
    def instances(self) -> np.ndarray:
        """The records of the last frame: (n_drawn,) :data:`INSTANCE_DTYPE` (a view, no copy)."""
        return self.instance_data[: self.n_drawn].view(INSTANCE_DTYPE).reshape(-1)

    def instance_bytes(self) -> np.ndarray:
        """The last frame's instance records as (n_drawn * INSTANCE_DTYPE.itemsize,) uint8 (a view, no copy),
        for ``buffer.write``."""
        return self.instance_data[: self.n_drawn].reshape(-1).view(np.uint8)

    def _grow(self, needed: int) -> None:
        cap = max(int(needed), 2 * self.ids.size)
        self.ids = np.empty(cap, dtype=np.int64)
        self.drawn_ids = np.empty(cap, dtype=np.int64)
        self._alloc_instances(cap)

    # ----------------------------------------------------------------------------- index
    def use_index(self, name: str) -> SphereIndex:
        """Switch to the index ``name``, building it on first use."""
        if name not in self._built:
            if name not in INDEXES and name not in self._external:
                raise KeyError(f"unknown index {name!r}; choose from {', '.join([*INDEXES, *self._external])}")
            t0 = perf_counter()
            if name in self._external:  # made by the caller from this pipeline's world (the GPU's copy)
                self._built[name] = self._external[name](self)
            else:
                # with motion, the index gets its own copy: the arrays here change under it every frame
                c, r = (self.centres, self.radii) if self.motion is None else (self.centres.copy(), self.radii.copy())
                self._built[name] = make_index(name, c, r, **self.index_options.get(name, {}))
            self.build_s[name] = perf_counter() - t0
            if name not in self.index_names:
                self.index_names.append(name)
        elif self.motion is not None and self._synced.get(name) != self.motion.step:
            mo = self.motion
            self._built[name].move_many(mo.ids, self.centres[mo.ids], self.radii[mo.ids] if mo.changes_radii else None)
        if self.motion is not None:
            self._synced[name] = self.motion.step
        self.index = self._built[name]
        self.index_name = name
        self._refresh_colours()
        return self.index

    def cycle_index(self, step: int = 1) -> str:
        """Switch to the next (``step`` 1) or previous (-1) index of :attr:`index_names`; returns its name."""
        i = self.index_names.index(self.index_name) if self.index_name in self.index_names else 0
        self.use_index(self.index_names[(i + step) % len(self.index_names)])
        return self.index_name

    def node_boxes(self):
        """The index's nodes as wire boxes, or None when the index has none.

        Returns ``(boxes (M, 4) float64 [x0, y0, z0, edge], visited (M,) bool)`` where visited marks
        the nodes a query at the last query point enters.
        """
        fn = getattr(self.index, "debug_boxes", None)
        if fn is None:
            return None
        try:
            return fn(tuple(float(v) for v in self._qp))
        except TypeError:  # an index whose boxes take no point
            return fn()

    # ----------------------------------------------------------------------------- colour
    @property
    def has_levels(self) -> bool:
        return getattr(self.index, "levels", None) is not None

    def set_colour_mode(self, mode: str) -> None:
        """``"category"`` (the scene's colours) or ``"level"`` (the octree level holding each object;
        indexes without levels keep the category colours)."""
        if mode not in COLOUR_MODES:
            raise ValueError(f"colour mode must be 'category' or 'level', got {mode!r}")
        self.colour_mode = mode
        self._refresh_colours()

    def toggle_colour_mode(self) -> str:
        self.set_colour_mode("level" if self.colour_mode == "category" else "category")
        return self.colour_mode

    def _refresh_colours(self) -> None:
        if self.colour_mode == "level" and self.has_levels:
            levels = np.asarray(self.index.levels(), dtype=np.int64)
            pal = pack_colours(LEVEL_PALETTE)
            self.colours = np.ascontiguousarray(pal[np.mod(levels, pal.size)])
        else:
            self.colours = self.category_colours

    # ----------------------------------------------------------------------------- freeze
    def set_frozen(self, frozen: bool, camera: FlyCamera | None = None) -> None:
        """Freeze (capture ``camera``'s pose and frustum for query and cull) or unfreeze."""
        if frozen:
            if camera is None:
                raise ValueError("freezing needs the camera whose view to keep")
            self._frozen_pose = camera.pose
            self._frozen_planes = frustum.frustum_planes(camera.matrices().view_projection)
        else:
            self._frozen_pose = None
            self._frozen_planes = None
        self.frozen = bool(frozen)

    def toggle_frozen(self, camera: FlyCamera) -> bool:
        self.set_frozen(not self.frozen, camera)
        return self.frozen

    @property
    def query_point(self) -> np.ndarray:
        """(3,) float64, the point the last frame queried: the camera, or the frozen camera (a view)."""
        return self._qp

    @property
    def query_pose(self) -> Pose | None:
        """The pose query and cull use: the frozen one, or None (the camera's own)."""
        return self._frozen_pose

    # ----------------------------------------------------------------------------- events
    def set_hysteresis(self, margin: float, relative: bool = False) -> None:
        """Visibility events with a margin: leave beyond r + margin (``relative``: r (1 + margin)); 0: none."""
        self.events.set_margin(margin, relative)

    @property
    def hysteresis(self) -> str:
        """The events' margin as text (``"off"``, ``"5"``, ``"10%"``)."""
        return self.events.hysteresis

    def restart(self) -> None:
        """Start the clock and frame count at 0 and forget the events' in-set (after warm-up frames), so
        the next frame reports everything visible as entered. The moving objects stay where they are."""
        self.frame = 0
        self.t = 0.0
        self.events.reset()
        for ix in self._built.values():
            if getattr(ix, "external", False):
                ix.reset_events()

    # ----------------------------------------------------------------------------- warm-up
    def warm_up(self) -> None:
        """Compile every kernel a frame of this pipeline runs, with the arrays it runs them on, so no
        timed frame pays for compilation: the frame kernels (cull, gather, events, motion), the index's
        own (:meth:`viewer.index.SphereIndex.warm_up`), and in a moving world one step of the movers on a
        copy of their state and a move of them in the index to where they already are (the world does
        not change). Query, cull and gather then run in the caller's unrecorded warm-up frames."""
        warm()
        if self.index_name in INDEXES:
            warm_up_indexes([self.index_name])
        mo = self.motion
        if mo is not None and mo.m:
            advance(copy.deepcopy(mo), 1e-3)
            self.index.move_many(mo.ids, self.centres[mo.ids], self.radii[mo.ids] if mo.changes_radii else None)

    # ----------------------------------------------------------------------------- the frame
    def run(self, camera: FlyCamera, dt: float, *, pose=None, input_state: InputState | None = None) -> CameraMatrices:
        """Run the GL-free stages of one frame: :meth:`update`, then :meth:`select` (query, events, cull,
        gather); returns the camera's matrices of this frame (see :meth:`select`). Counts and stage times
        wait in the pipeline until :meth:`finish` turns them into the frame's row."""
        self.update(camera, dt, pose=pose, input_state=input_state)
        return self.select(camera)

    def update(self, camera: FlyCamera, dt: float, *, pose=None, input_state: InputState | None = None):
        """The update stage, the start of a frame: the camera moves, then the movers.

        camera : updated in place: set to ``pose`` ((x, y, z, yaw, pitch)) when given, else moved by
            ``input_state`` over ``dt`` seconds (neither: it stays)
        dt : seconds; with motion and ``dt > 0`` the moving objects advance by ``dt`` and move in the
            current index (``dt == 0``, e.g. warm-up frames, leaves them still)
        Returns what moved, ``(ids (M,) int64, centres (M, 3) float64, radii (M,) float64 or None)`` (the
        motion state's buffers: a GPU copy of the world uploads them), or None.
        """
        t0 = perf_counter()
        if pose is not None:
            camera.set_pose(pose)
        elif input_state is not None:
            camera.update(dt, input_state)
        moved = None
        if self.motion is not None and dt > 0.0:
            moved = advance(self.motion, dt)
            self.index.move_many(*moved)
            self._synced[self.index_name] = self.motion.step
        self._t0 = t0
        self._dt = float(dt)
        self._moved = 0 if moved is None else int(moved[0].size)
        self.stage_ms["update"] = (perf_counter() - t0) * 1e3
        return moved

    def select(self, camera: FlyCamera) -> CameraMatrices:
        """Query, events, cull and gather on the CPU, after :meth:`update`.

        Returns the camera's matrices of this frame (built once, in the cull stage: the cull and the draw
        use the same). The records are then in :attr:`instances` / :meth:`instance_bytes`, their counts in
        :attr:`n_visible` / :attr:`n_drawn`, the stage times in :attr:`stage_ms` (a culling mode that runs
        elsewhere fills the same three and the same keys).
        """
        t1 = perf_counter()
        index = self.index
        qp = self._query_point(camera)
        while True:
            try:
                k = index.query_into(qp, self.ids)
                break
            except QueryOverflow as exc:
                self._grow(exc.needed)
        t2 = perf_counter()
        self.events.update(self.ids, k, qp, self.centres, self.radii)
        t2e = perf_counter()

        matrices, planes = self._frustum(camera)
        m = frustum.cull_spheres(planes, self.centres, self.bounds, self.ids, k, self.drawn_ids)
        t3 = perf_counter()

        # gather
        eye = self._eye
        eye[:] = camera.position
        if self.sort:
            sort_front_to_back(self.drawn_ids, m, self.centres, eye, self._keys, self._scratch)
        gather_instances(self.drawn_ids, m, self.centres, self.sizes, self.radii, self.colours, eye, qp,
                         self.fade, self.instance_data, self._inst_u)
        t4 = perf_counter()

        self.n_visible = k
        self.n_drawn = m
        self.n_entered = self.events.n_entered
        self.n_left = self.events.n_left
        st = self.stage_ms
        st["query"] = (t2 - t1) * 1e3
        st["events"] = (t2e - t2) * 1e3  # in frame_ms only (the CSV has no events column)
        st["cull"] = (t3 - t2e) * 1e3
        st["gather"] = (t4 - t3) * 1e3
        self._pose = camera.pose
        return matrices

    def _query_point(self, camera: FlyCamera) -> np.ndarray:
        """The query point of this frame: the camera, or the frozen camera (:attr:`query_point`)."""
        qp = self._qp
        if self._frozen_pose is not None:
            q = self._frozen_pose
            qp[0], qp[1], qp[2] = q.x, q.y, q.z
        else:
            qp[:] = camera.position
        return qp

    def _frustum(self, camera: FlyCamera) -> tuple[CameraMatrices, np.ndarray]:
        """The camera's matrices of this frame (built once: the draw uses them too) and the frustum planes
        the cull uses (the frozen ones while frozen; also kept in :attr:`planes`)."""
        matrices = camera.matrices()
        planes = self._frozen_planes if self._frozen_planes is not None else frustum.frustum_planes(matrices.view_projection)
        self.planes = planes
        return matrices, planes

    def view(self, camera: FlyCamera) -> CameraMatrices:
        """For a culling mode that runs elsewhere (the GPU), instead of :meth:`select`: the query point
        (:attr:`query_point`) and the frustum (:attr:`planes`) it culls with; returns the camera's matrices.
        Report what it selected with :meth:`set_selection`."""
        self._query_point(camera)
        matrices, _ = self._frustum(camera)
        self._pose = camera.pose
        return matrices

    def set_selection(self, visible: int, drawn: int, entered: int, left: int, *, query_ms: float,
                      cull_ms: float = 0.0, gather_ms: float = 0.0) -> None:
        """What a culling mode that runs elsewhere selected this frame, for its row (after :meth:`view`):
        counts, and the stage times (its events are inside ``query_ms``)."""
        self.n_visible, self.n_drawn, self.n_entered, self.n_left = int(visible), int(drawn), int(entered), int(left)
        st = self.stage_ms
        st["query"], st["events"], st["cull"], st["gather"] = float(query_ms), 0.0, float(cull_ms), float(gather_ms)

    def row(self, *, t: float | None = None, upload_ms: float = 0.0, draw_ms: float = 0.0, draw_calls: int = 0,
            end: float | None = None) -> FrameStats:
        """The :class:`FrameStats` of the frame just run (the one place a row is filled); no side effect.

        t : the time to record (default: the pipeline's clock, the sum of dt since :meth:`restart`)
        upload_ms, draw_ms : the GL stages' times (0 without GL); draw_calls : the instanced draws issued
        end : ``perf_counter()`` at the end of the frame (default: now); ``frame_ms`` runs from the start
            of :meth:`update` to it
        """
        pose, s, ms = self._pose, self.index.stats, self.stage_ms
        return FrameStats(
            frame=self.frame, t=self.t if t is None else float(t), dt=self._dt,
            cam_x=pose.x, cam_y=pose.y, cam_z=pose.z, yaw=pose.yaw, pitch=pose.pitch,
            index=self.index_name, objects=len(self.index), candidates=int(s.candidates), visible=int(self.n_visible),
            drawn=int(self.n_drawn), nodes_visited=int(s.nodes_visited), max_nodes_per_level=int(s.max_nodes_per_level),
            moved=self._moved, update_ms=ms["update"], query_ms=ms["query"], cull_ms=ms["cull"],
            gather_ms=ms["gather"], upload_ms=float(upload_ms), draw_ms=float(draw_ms),
            frame_ms=((perf_counter() if end is None else end) - self._t0) * 1e3,
            entered=self.n_entered, left=self.n_left, draw_calls=int(draw_calls),
        )

    def finish(self, **timing) -> FrameStats:
        """Close the frame :meth:`run` ran: its :meth:`row` (``timing``: its arguments), then the frame
        counter and the clock advance by its ``dt``."""
        st = self.row(**timing)
        self.frame += 1
        self.t += st.dt
        return st

    def step(self, camera: FlyCamera, dt: float, *, pose=None, input_state: InputState | None = None,
             t: float | None = None) -> FrameStats:
        """One GL-free frame: :meth:`run` then :meth:`finish` (``frame_ms`` covers the stages only)."""
        self.run(camera, dt, pose=pose, input_state=input_state)
        return self.finish(t=t)

    def drawn(self) -> np.ndarray:
        """Ids (n_drawn,) int64 of the objects drawn in the last frame (a view)."""
        return self.drawn_ids[: self.n_drawn]


def camera_for_scene(scene, aspect: float = 16.0 / 9.0) -> FlyCamera:
    """A camera that starts looking at the scene's first cluster (or the median object) from inside
    the typical view distance, with clip planes and speed scaled to the scene.

    far : the largest view distance (nothing beyond it can be visible); speed : world units per second
    """
    c = np.asarray(scene.centres, dtype=np.float64).reshape(-1, 3)
    r = np.asarray(scene.radii, dtype=np.float64).reshape(-1)
    if c.shape[0] == 0:
        return FlyCamera(position=(0.0, 0.0, 10.0), aspect=aspect)
    far = max(float(r.max()) * 1.05, 1.0)
    heads = np.asarray(getattr(scene, "cluster_centres", np.zeros((0, 3))), dtype=np.float64).reshape(-1, 3)
    target = heads[0] if heads.shape[0] else np.median(c, axis=0)
    extent = float((c.max(0) - c.min(0)).max()) or 1.0
    d = max(min(0.5 * float(np.median(r)), extent / 2.0), 1e-3)
    cam = FlyCamera(position=target + np.array((0.0, 0.25 * d, d)), aspect=aspect, far=far,
                    near=max(far * 1e-5, 1e-3), speed=max(float(np.median(r)) / 2.0, extent / 200.0))
    cam.look_at(target)
    return cam
