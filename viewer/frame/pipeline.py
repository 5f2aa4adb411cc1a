"""The frame, without GL: camera pose -> moving objects -> culling mode (query, events, frustum cull,
gather) -> instance records -> the frame's row.

Each frame flows one way; every stage (:data:`viewer.frame.STAGES`) is timed with ``perf_counter``
around its work::

    update  the camera moves (an explicit pose for replays, or input state and dt); in a scene with
            motion (``scene.motion``) the movers advance by dt (:func:`viewer.frame.motion.advance`) and the
            culling mode learns their new centres / radii through ``move_many``
    query   the culling mode's query: for :class:`viewer.frame.CpuCulling`, index.query_into(camera
            position, ids) -> the objects whose view sphere holds the camera, then the events (entered /
            left since the last frame, :class:`viewer.frame.events.VisibilityTracker`, with the frame's
            hysteresis margin; in frame_ms, no column of their own)
            With visibility ranges (``scene.begin`` / ``scene.parent``) one pass over the answer, inside the
            query's time, keeps the objects in range (:mod:`viewer.frame.ranges`)
    cull    the camera's matrices (once per frame; the draw uses them too), frustum planes, then bounding
            spheres against them -> the drawn ids
    lod     each drawn object's LOD band (``scene.lod``), the band counts and band changes (O(drawn))
    gather  the drawn ids sorted nearest first (ties by id), then their instance records into a
            preallocated array (grouped by mesh for a scene drawn with its own meshes)

:meth:`FramePipeline.run` runs the update, then :meth:`FramePipeline.select`: the culling mode's answer (ids
from an index, or records from the GPU: :class:`viewer.frame.CullingMode`), then the stages the CPU modes share;
:meth:`FramePipeline.finish` then builds the frame's :class:`FrameStats` once, with the times of the GL
stages (upload into one preallocated GPU buffer, the draw) when :class:`viewer.render.ViewerSession`, the
owner of a whole frame, ran them. :meth:`FramePipeline.step` is the GL-free frame (run + finish). Buffers
only ever grow (doubling) when a query overflows them, never per frame.

An instance record is one :data:`viewer.frame.instances.INSTANCE_DTYPE` (position relative to the render camera,
size, colour, fade: objects fade in over the last ``fade`` fraction of their view distance, so they do
not pop; in a star field, scene style "stars", over the whole of it: the record's fade is ``1 - d / r``, from
which the star shader takes the star's apparent magnitude).
"""

from __future__ import annotations

import copy
import math
from time import perf_counter
from typing import Callable

import numpy as np

from ..camera import CameraMatrices, FlyCamera, InputState, Pose
from ..index import INDEXES, QueryStats, SphereIndex, make_index
from . import _frame_kernels, events, frustum, motion, ranges
from ._frame_kernels import gather_instances, sort_front_to_back
from .culling import CpuCulling, CullingMode, Look, ModeFrame, World, index_names
from .events import VisibilityTracker
from .instances import INSTANCE_DTYPE, WORD, instance_words
from .mesh_batches import MeshBatches
from .motion import MotionState, advance
from .options import COLOUR_MODES, DRAW_MODES
from .ranges import BAND_PALETTE, Ranges
from .stages import STAGES
from .stats import FRAME_COLUMNS, FrameStats

__all__ = [
    "FRAME_COLUMNS",
    "INSTANCE_DTYPE",
    "LEVEL_PALETTE",
    "RESCALE_BY_MOVE",
    "FramePipeline",
    "FrameStats",
    "camera_for_scene",
    "pack_colours",
    "select_views",
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

#: Indexes that learn a new radius scale (:meth:`FramePipeline.set_radius_scale`) faster by ``move_many`` of
#: every object than by a rebuild at the scaled radii; the others are rebuilt (culling modes of ``modes``
#: always move). Chosen by timing both at 1e6 objects: the figures are in the bench results README.
RESCALE_BY_MOVE = frozenset({"scan", "bvh", "buckettree"})

#: a stage time every frame has, though no column: the events, inside frame_ms
_UNCOLUMNED = ("events",)


def pack_colours(rgba: np.ndarray) -> np.ndarray:
    """(N, 4) uint8 RGBA -> (N,) uint32 whose memory bytes are R, G, B, A (what the GPU reads)."""
    a = np.ascontiguousarray(np.asarray(rgba, dtype=np.uint8).reshape(-1, 4))
    return a.view(np.uint32).reshape(-1).copy()


def warm(*, motion: bool = True) -> None:
    """Compile the numba kernels of the pipeline (before anything timed): the frustum cull, the gather and
    sort, the visibility events and, with ``motion`` (a moving world), the movers' step. Compilations are
    reported as the ``frame`` group (:func:`viewer.kernels.compile.compile_group`)."""
    from ..kernels.compile import compile_group
    from . import motion as movers  # (the argument hides the module's name)

    with compile_group("frame"):
        frustum.warm()
        _frame_kernels.warm()
        events.warm()
        ranges.warm()
        if motion:
            movers.warm()


#: seconds of the movers' step that :meth:`FramePipeline.warm_up` moves a moving world's mode by, and back
WARM_STEP = 1.0 / 60.0


class FramePipeline:
    """Runs the GL-free stages of each frame for one scene and owns their preallocated buffers.

    Parameters
    ----------
    scene : anything with ``centres`` (N, 3) float64, ``radii`` (N,) float64 view distances,
        ``sizes`` (N,) float32 half-extents, ``colours`` (N, 4) uint8 RGBA (a :class:`viewer.scenes.Scene`)
    index : the culler to start with: an index (a key of :data:`viewer.index.INDEXES`, or any index spec's text:
        :mod:`viewer.index.specs`; culled by :class:`viewer.frame.CpuCulling` over it) or a mode of ``modes``
    indexes : the names :meth:`cycle_index` goes through (default: every available index, the baseline and
        the core first: :func:`viewer.frame.culling.index_names`)
    fade : fraction of each view distance, at its far end, over which objects fade in; a scene of style
        "stars" (``scene.style``) ignores it: there :attr:`fade` is 1, so a record's fade is ``1 - d / r``
        (d: the query camera's distance), the star's brightness (``shaders/stars.glsl``)
    capacity : initial size of the id and instance buffers (they grow when a query overflows)
    index_options : per-index keyword options, ``{name: {...}}``
    hysteresis : ``(margin, relative)`` of the visibility events (see :class:`viewer.frame.events.VisibilityTracker`);
        default none
    modes : ``{name: factory(world) -> CullingMode}``, the culling modes of :data:`viewer.frame.MODES`
        its owner can run (the GPU's needs the session's GL context), each built over :attr:`world`; an
        index name needs none

    In a scene with motion (``scene.motion`` not None), :attr:`motion` is its
    :class:`viewer.frame.motion.MotionState` and :attr:`centres` / :attr:`radii` are the state's arrays (the
    world now, a copy of the scene's): each frame with ``dt > 0`` advances the movers and moves them in
    the current mode; a mode switched to later catches up in one ``move_many``.

    ``sort`` (default True) draws nearest first: on a software rasteriser the depth test then skips
    most hidden fragments, a several-fold saving where big sprites overlap.

    Modes are built on first use and kept, so switching back is instant. While :attr:`frozen`, the
    query and the cull use the pose and frustum captured when freezing, and the instances are still
    drawn relative to the moving camera: fly out and look at what the frozen camera sees.
    """

    def __init__(self, scene, index: str = "brute", *, indexes: list[str] | None = None, fade: float = 0.15,
                 capacity: int = 1024, index_options: dict[str, dict] | None = None,
                 hysteresis: tuple[float, bool] | None = None,
                 modes: dict[str, Callable[[World], CullingMode]] | None = None):
        self.motion: MotionState | None = MotionState.from_scene(scene)
        if self.motion is not None:
            self.centres = self.motion.centres
            self.radii = self.motion.radii
        else:
            self.centres = np.ascontiguousarray(scene.centres, dtype=np.float64).reshape(-1, 3)
            self.radii = np.ascontiguousarray(scene.radii, dtype=np.float64).reshape(self.centres.shape[0])
        #: the world's own view radii (N,) float64; :attr:`radii` is them times :attr:`radius_scale`
        self.world_radii = self.radii
        self._radius_scale = 1.0
        n = self.centres.shape[0]
        self.sizes = np.ascontiguousarray(scene.sizes, dtype=np.float32).reshape(n)
        self.bounds = self.sizes.astype(np.float64) * math.sqrt(3.0)  # sphere around the cube of half-extent size
        self.category_colours = pack_colours(scene.colours)
        if self.category_colours.size != n:
            raise ValueError(f"scene colours has {self.category_colours.size} rows, centres {n}")
        self.name = str(getattr(scene, "name", "scene"))
        self.stars = getattr(scene, "style", "objects") == "stars"
        #: a scene with its own meshes: the drawn records grouped by mesh each frame (None: not grouped)
        self.mesh_batches: MeshBatches | None = None
        self._meshes = getattr(scene, "meshes", None)
        #: how the records are drawn (fade, draw mode, band colours, mesh batches), as a mode that makes them sees it
        self.look = Look()
        self.draw_mode = "sprites"
        #: visibility ranges, LOD bands and HLOD parents (issue 24; inactive for a scene without them)
        self.ranges = Ranges(scene, self.centres, fade)
        self.fade = fade
        self.index_options = dict(index_options or {})
        #: the objects the culling modes are built over (the world now; :attr:`radii` kept current)
        self.world = World(self.centres, self.radii, self.sizes, self.category_colours, self.motion is not None,
                           self.index_options)
        self._factories = dict(modes or {})
        if indexes is None:
            indexes = index_names(available=True)
        if index not in indexes:
            indexes = [index, *indexes]
        self.index_names: list[str] = list(indexes)
        self._built: dict[str, CullingMode] = {}
        self._synced: dict[str, int] = {}  # culler name -> the motion step its objects are at
        self._scaled: dict[str, float] = {}  # culler name -> the radius scale its objects are at
        self.build_s: dict[str, float] = {}
        self.events = VisibilityTracker(n, *(hysteresis or (0.0, False)))
        self.colour_mode = "category"
        self.frozen = False
        self._frozen_pose: Pose | None = None
        self._frozen_planes: np.ndarray | None = None
        self.frame = 0
        self.t = 0.0
        cap = max(16, int(capacity))
        self.drawn_ids = np.empty(cap, dtype=np.int64)
        self._alloc_instances(cap)
        self.sort = True
        self.planes = np.zeros((6, 4))
        self._camera: FlyCamera | None = None  # the camera of the frame being selected (for its frustum)
        #: what the culling mode sees of this view's frame (inputs, the ids buffer, the counts, stage times)
        self.io = self._mode_frame(np.empty(cap, dtype=np.int64))
        self.colours = self.category_colours
        self.mode: CullingMode
        self.index_name = ""
        #: which view of the frame this pipeline is (0: the first; :meth:`sibling` makes the others)
        self.view = 0
        #: whether this pipeline's update advances the world's movers (a :meth:`sibling` view's does not)
        self.moves_world = True
        self.use_index(index)

    @property
    def fade(self) -> float:
        """The fraction of each view distance, at its far end, over which objects fade in (what the gather
        writes in each record's fade); 1 in a star field, whatever was set."""
        return 1.0 if self.stars else self._fade

    @fade.setter
    def fade(self, value: float) -> None:
        self._fade = float(value)
        self.ranges.set_fade(self.fade)
        self.look.fade = self.fade

    @property
    def radius_scale(self) -> float:
        """The global range scale: every view radius, begin, LOD switch and HLOD limit times it (1: the world's)."""
        return self._radius_scale

    @radius_scale.setter
    def radius_scale(self, value: float) -> None:
        self._radius_scale = float(value)
        self.ranges.set_scale(self._radius_scale)

    @property
    def index(self) -> SphereIndex | None:
        """The index of the current culling mode (None for a mode without one)."""
        return self.mode.index

    # ----------------------------------------------------------------------------- what the mode sees
    def _mode_frame(self, ids: np.ndarray) -> ModeFrame:
        """This view's :class:`ModeFrame` over ``ids``, with fresh stage times and counts."""
        return ModeFrame(query_point=np.zeros(3), eye=np.zeros(3), events=self.events, ranges=self.ranges,
                         look=self.look, ids=ids, grower=self._grow, frustum_of=self._frustum,
                         stage_ms=dict.fromkeys((*(s.name for s in STAGES), *_UNCOLUMNED), 0.0))

    @property
    def ids(self) -> np.ndarray:
        """(M,) int64, the last query's answer in ``ids[:n_visible]`` (the culling mode's ids buffer)."""
        return self.io.ids

    @property
    def stage_ms(self) -> dict[str, float]:
        """The last frame's stage times, milliseconds, by stage name (every stage of STAGES, and the events)."""
        return self.io.stage_ms

    @property
    def counts(self) -> dict[str, int]:
        """The last frame's counts of columns a stage adds (by column name)."""
        return self.io.counts

    @property
    def view_stats(self) -> QueryStats | None:
        """The query counters of this view's row when its query was a share of a batch (None: the mode's)."""
        return self.io.view_stats

    @property
    def n_visible(self) -> int:
        return self.io.visible

    @property
    def n_drawn(self) -> int:
        return self.io.drawn

    @property
    def n_entered(self) -> int:
        return self.io.entered

    @property
    def n_left(self) -> int:
        return self.io.left

    # ----------------------------------------------------------------------------- buffers
    def _alloc_instances(self, cap: int) -> None:
        self.instance_data, self.instance_u32 = instance_words(cap)
        self.sort_keys = np.empty(cap, dtype=np.float64)
        self.sort_scratch = np.empty(cap, dtype=np.int64)

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

    def _grow(self, needed: int) -> np.ndarray:
        """Every per-object buffer at least ``needed`` long (doubling); returns the new ids buffer."""
        cap = max(int(needed), 2 * self.io.ids.size)
        self.io.ids = np.empty(cap, dtype=np.int64)
        self.drawn_ids = np.empty(cap, dtype=np.int64)
        self._alloc_instances(cap)
        return self.io.ids

    def set_draw_mode(self, mode: str) -> None:
        """How the frame's records will be drawn (one of :data:`viewer.frame.DRAW_MODES`): in ``"mesh"`` mode
        a scene with its own meshes has its drawn records grouped by mesh each frame (:attr:`mesh_batches`)."""
        if mode not in DRAW_MODES:
            raise ValueError(f"draw mode must be one of {', '.join(DRAW_MODES)}; got {mode!r}")
        self.draw_mode = mode
        if mode == "mesh" and self._meshes is not None:
            if self.mesh_batches is None:
                self.mesh_batches = MeshBatches(self._meshes, self.centres)
        else:
            self.mesh_batches = None
        self.look.draw, self.look.mesh_batches = mode, self.mesh_batches

    # ----------------------------------------------------------------------------- culling modes
    def use_index(self, name: str) -> CullingMode:
        """Switch to the culler ``name`` (an index, or a culling mode of ``modes``), building it on first use;
        one built at another :attr:`radius_scale` learns the scaled radii first (rebuilt, or every object
        moved: :data:`RESCALE_BY_MOVE`)."""
        if name in self._built and self._scaled[name] != self.radius_scale and name not in RESCALE_BY_MOVE \
                and name not in self._factories:
            self._built.pop(name).release()  # rebuilt below at the scaled radii
        if name not in self._built:
            t0 = perf_counter()
            if name in self._factories:  # made by the owner from this pipeline's world (the GPU's copy)
                self._built[name] = self._factories[name](self.world)
            else:
                # with motion, the index gets its own copy: the arrays here change under it every frame
                c, r = (self.centres, self.radii) if self.motion is None else (self.centres.copy(), self.radii.copy())
                try:  # a registered name or any index spec's text (viewer.index.specs)
                    index = make_index(name, c, r, **self.index_options.get(name, {}))
                except KeyError:
                    known = [*INDEXES, *self._factories]
                    raise KeyError(f"unknown index {name!r}; choose from {', '.join(known)}") from None
                self._built[name] = CpuCulling(index, name)
            self.build_s[name] = perf_counter() - t0
            if name not in self.index_names:
                self.index_names.append(name)
        elif self._scaled[name] != self.radius_scale:  # every object, so the movers catch up too
            self._built[name].move_many(np.arange(len(self.radii), dtype=np.int64), self.centres, self.radii)
        elif self.motion is not None and self._synced.get(name) != self.motion.step:
            mo = self.motion
            self._built[name].move_many(mo.ids, self.centres[mo.ids], self.radii[mo.ids] if mo.changes_radii else None)
        self._scaled[name] = self.radius_scale
        if self.motion is not None:
            self._synced[name] = self.motion.step
        self.mode = self._built[name]
        self.index_name = name
        self._refresh_colours()
        return self.mode

    def set_radius_scale(self, scale: float) -> float:
        """Every view radius times ``scale`` (> 0, finite; 1: the world's own) from this frame on, exactly: the
        culling mode is told the scaled radius of every object (rebuilt at them, or ``move_many`` of every
        object: :data:`RESCALE_BY_MOVE`; the events and the records' fade read :attr:`radii` too), a mode
        built earlier when it is next used. Returns the seconds the current mode took to learn them. In a
        moving world the movers' radii stay the world's (:attr:`world_radii`, what a take's world file
        keeps) and are scaled as they move."""
        scale = float(scale)
        if not 0.0 < scale < math.inf:
            raise ValueError(f"radius scale must be > 0 and finite; got {scale!r}")
        if scale == self.radius_scale:
            return 0.0
        self.radius_scale = scale
        self.radii = self.world.radii = self.world_radii if scale == 1.0 else self.world_radii * scale
        t0 = perf_counter()
        self.use_index(self.index_name)
        return perf_counter() - t0

    def cycle_index(self, step: int = 1) -> str:
        """Switch to the next (``step`` 1) or previous (-1) culler of :attr:`index_names`; returns its name."""
        i = self.index_names.index(self.index_name) if self.index_name in self.index_names else 0
        self.use_index(self.index_names[(i + step) % len(self.index_names)])
        return self.index_name

    def node_boxes(self):
        """The index's nodes as wire boxes, or None when the culling mode has none.

        Returns ``(boxes (M, 4) float64 [x0, y0, z0, edge], visited (M,) bool)`` where visited marks
        the nodes a query at the last query point enters.
        """
        return self.mode.node_boxes(self.io.query_point)

    def release(self) -> None:
        """Free what the culling modes hold outside Python (GPU buffers)."""
        for m in self._built.values():
            m.release()

    # ----------------------------------------------------------------------------- colour
    @property
    def has_levels(self) -> bool:
        return self.mode.has_levels

    def set_colour_mode(self, mode: str) -> None:
        """``"category"`` (the scene's colours), ``"level"`` (the octree level holding each object;
        indexes without levels keep the category colours) or ``"band"`` (each drawn object's LOD band,
        :data:`viewer.frame.ranges.BAND_PALETTE`; set per frame by the gather)."""
        if mode not in COLOUR_MODES:
            raise ValueError(f"colour mode must be one of {', '.join(COLOUR_MODES)}, got {mode!r}")
        self.colour_mode = mode
        self.look.band_colours = mode == "band"
        self._refresh_colours()

    def toggle_colour_mode(self) -> str:
        """Category -> level -> category (the ``band`` mode has a key of its own: :meth:`toggle_band_colours`)."""
        self.set_colour_mode("level" if self.colour_mode == "category" else "category")
        return self.colour_mode

    def toggle_band_colours(self) -> str:
        """Colour by LOD band, or back to the scene's colours."""
        self.set_colour_mode("category" if self.colour_mode == "band" else "band")
        return self.colour_mode

    def colour_by_band(self) -> None:
        """Overwrite the colour of the last frame's records with their LOD band's
        (:data:`viewer.frame.ranges.BAND_PALETTE`; band 0 for a scene without LOD switches)."""
        m = self.io.drawn
        if m:
            pal = pack_colours(BAND_PALETTE)
            self.instance_u32[:m, WORD["colour"]] = pal[np.minimum(self.ranges.bands, pal.size - 1)]

    def _refresh_colours(self) -> None:
        levels = self.mode.levels() if self.colour_mode == "level" else None
        if levels is not None:
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
        return self.io.query_point

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
        self.ranges.reset()
        for m in self._built.values():
            m.restart()

    # ----------------------------------------------------------------------------- warm-up
    def warm_up(self) -> None:
        """Compile every kernel a frame of this pipeline runs, with the arrays it runs them on, so no
        timed frame pays for compilation: the frame kernels (cull, gather, events; motion in a moving world), the culling
        mode's own (:meth:`viewer.frame.CullingMode.warm_up`), and in a moving world one step of the
        movers (:data:`WARM_STEP`) on a copy of their state, the movers moved in the mode to where that step
        takes them and back (the world does not change). The mode thus meets a real displacement before the
        first timed frame: the octree, whose boxes a bulk build fits tightly, grows them ahead of its movers
        here, instead of in the first recorded frame (which was then a moving world's worst).
        Query, cull and gather then run in the caller's unrecorded warm-up frames."""
        mo = self.motion
        warm(motion=mo is not None and bool(mo.m))  # a still world never runs the movers' kernel
        self.mode.warm_up()
        if mo is not None and mo.m:
            ids, ahead, rad = advance(copy.deepcopy(mo), WARM_STEP)
            self.mode.move_many(ids, ahead, None if rad is None else rad * self._radius_scale)
            self.mode.move_many(mo.ids, self.centres[mo.ids], self.radii[mo.ids] if mo.changes_radii else None)

    # ----------------------------------------------------------------------------- the frame
    def run(self, camera: FlyCamera, dt: float, *, pose=None, input_state: InputState | None = None) -> CameraMatrices:
        """Run the GL-free stages of one frame: :meth:`update`, then the culling mode's select (query,
        events, cull, gather); returns the camera's matrices of this frame. Counts and stage times wait in
        the pipeline until :meth:`finish` turns them into the frame's row."""
        self.update(camera, dt, pose=pose, input_state=input_state)
        return self.select(camera)

    def update(self, camera: FlyCamera, dt: float, *, pose=None, input_state: InputState | None = None):
        """The update stage, the start of a frame: the camera moves, then the movers (the world's own step
        timed as the ``motion`` stage, their moves in the culling mode as ``update``).

        camera : updated in place: set to ``pose`` ((x, y, z, yaw, pitch)) when given, else moved by
            ``input_state`` over ``dt`` seconds (neither: it stays)
        dt : seconds; with motion and ``dt > 0`` the moving objects advance by ``dt`` and move in the
            current culling mode (``dt == 0``, e.g. warm-up frames, leaves them still)
        Returns what moved, ``(ids (M,) int64, centres (M, 3) float64, radii (M,) float64 or None)`` (the
        motion state's buffers), or None.
        """
        t0 = perf_counter()
        if pose is not None:
            camera.set_pose(pose)
        elif input_state is not None:
            camera.update(dt, input_state)
        moved = None
        self.stage_ms["motion"] = 0.0
        if self.motion is not None and dt > 0.0 and self.moves_world:
            t1 = perf_counter()
            moved = advance(self.motion, dt)
            self.stage_ms["motion"] = (perf_counter() - t1) * 1e3  # the world's step: its own stage
            if moved[2] is not None and self.radii is not self.world_radii:  # the movers' new radii, scaled
                self.radii[moved[0]] = moved[2] * self.radius_scale
                moved = (moved[0], moved[1], self.radii[moved[0]])
            self.mode.move_many(*moved)
            self._synced[self.index_name] = self.motion.step
        self._t0 = t0
        self._dt = float(dt)
        self._moved = 0 if moved is None else int(moved[0].size)
        self.stage_ms["update"] = (perf_counter() - t0) * 1e3 - self.stage_ms["motion"]
        return moved

    def select(self, camera: FlyCamera) -> CameraMatrices:
        """This frame's culling after :meth:`update`: the culling mode's answer, then the stages the CPU modes
        share (module docstring).

        Returns the camera's matrices of this frame (built once, in the cull stage: the cull and the draw
        use the same). For a CPU mode the records are then in :attr:`instances` / :meth:`instance_bytes`;
        the counts are in :attr:`n_visible` / :attr:`n_drawn`, the stage times in :attr:`stage_ms`.
        """
        io = self._begin(camera)
        if self.mode.answers_ids:
            t1 = perf_counter()
            k = self.mode.query(io)
            k = self.ranges.filter(io.ids, k, io.query_point)  # visibility ranges: begin, HLOD children (O(visible))
            io.stage_ms["query"] = (perf_counter() - t1) * 1e3
            self._after_query(k)
        else:
            self.mode.records(io, None)
        self._pose = camera.pose
        return io.frustum()[0]

    def _begin(self, camera: FlyCamera) -> ModeFrame:
        """Set this view's :class:`ModeFrame` for a frame of ``camera``: its query point (the frozen camera's
        while frozen), its eye, no frustum yet, the GL stages' times at 0 (added by the frame's owner)."""
        io = self.io
        qp = io.query_point
        if self._frozen_pose is not None:
            q = self._frozen_pose
            qp[0], qp[1], qp[2] = q.x, q.y, q.z
        else:
            qp[:] = camera.position
        io.eye[:] = camera.position
        io._frustum = None
        io.view_stats = None
        io.stage_ms["upload"] = io.stage_ms["draw"] = 0.0
        self._camera = camera
        return io

    def _frustum(self) -> tuple[CameraMatrices, np.ndarray]:
        """The camera's matrices of the frame being selected and the frustum planes the cull uses (the frozen
        ones while frozen; also kept in :attr:`planes`): :meth:`ModeFrame.frustum`'s source."""
        matrices = self._camera.matrices()
        planes = self._frozen_planes if self._frozen_planes is not None else frustum.frustum_planes(matrices.view_projection)
        self.planes = planes
        return matrices, planes

    def _after_query(self, k: int) -> None:
        """The stages after an ids-answering mode's query, ``ids[:k]`` holding its answer in range: the events,
        then the mode's own records, or the CPU's frustum cull, LOD bands and gather (timed as ``cull``,
        ``lod`` and ``gather``)."""
        io, rg = self.io, self.ranges
        st, qp = io.stage_ms, io.query_point
        t2 = perf_counter()
        self.events.update(io.ids, k, qp, self.centres, self.radii, ranges=rg)
        t2e = perf_counter()
        st["events"] = (t2e - t2) * 1e3  # in frame_ms only (no column of its own)
        if self.mode.draws_records:
            self.mode.records(io, k)
            return

        planes = io.frustum()[1]
        m = frustum.cull_spheres(planes, self.centres, self.bounds, io.ids, k, self.drawn_ids)
        t3 = perf_counter()
        eye = io.eye
        if self.sort:
            sort_front_to_back(self.drawn_ids, m, self.centres, eye, self.sort_keys, self.sort_scratch)
        t3l = perf_counter()
        rg.select_bands(self.drawn_ids, m, qp)  # the lod stage: bands, counts, band changes (O(drawn))
        t3g = perf_counter()
        gather_instances(self.drawn_ids, m, self.centres, self.sizes, self.radii, self.colours, eye, qp,
                         self.fade, self.instance_data, self.instance_u32)
        rg.fades(self.drawn_ids, m, qp, self.instance_data)  # fade in at begin, HLOD cross-fade
        io.drawn = m
        if self.colour_mode == "band":
            self.colour_by_band()
        if self.mesh_batches is not None:  # a scene drawn with its own meshes: its batches, by mesh (and band)
            self.mesh_batches.group(self.drawn(), self.instances, rg.bands if rg.has_lod else None)
        t4 = perf_counter()

        io.visible, io.entered, io.left = k, self.events.n_entered, self.events.n_left
        io.counts.update(rg.counts(self.drawn()))
        st["cull"] = (t3 - t2e) * 1e3
        st["lod"] = (t3g - t3l) * 1e3
        st["gather"] = (t4 - t3 - (t3g - t3l)) * 1e3

    def upload(self, draw) -> None:
        """Hand this frame's records to ``draw`` (a :class:`viewer.render.InstanceDraw`): the CPU's gather, or
        those the culling mode made itself."""
        if self.mode.draws_records:
            self.mode.upload(self.io, draw)
        else:
            draw.cpu_records(self)

    def visible_ids(self) -> np.ndarray:
        """Ids (visible,) int64 of the last frame's visible objects (an ids-answering mode's, in its order, a
        view; else a readback from the mode, in no order)."""
        return self.io.ids[: self.io.visible] if self.mode.answers_ids else self.mode.visible_ids()

    def drawn_in_order(self) -> np.ndarray:
        """Ids (drawn,) int64 of the last frame's drawn objects, in the order drawn (the CPU's, a view; or a
        readback from a mode that makes its own records)."""
        return self.mode.drawn_ids() if self.mode.draws_records else self.drawn()

    def row(self, *, t: float | None = None, draw_calls: int = 0, end: float | None = None) -> FrameStats:
        """The :class:`FrameStats` of the frame just run (the one place a row is filled); no side effect.

        Stage times come from :attr:`stage_ms` (the GL stages, upload and draw, are 0 unless the frame's
        owner timed them there).

        t : the time to record (default: the pipeline's clock, the sum of dt since :meth:`restart`)
        draw_calls : the instanced draws issued
        end : ``perf_counter()`` at the end of the frame (default: now); ``frame_ms`` runs from the start
            of :meth:`update` to it
        """
        pose, mode = self._pose, self.mode
        s = self.io.view_stats if self.io.view_stats is not None else mode.stats
        ms = self.stage_ms
        return FrameStats(
            frame=self.frame, t=self.t if t is None else float(t), dt=self._dt,
            cam_x=pose.x, cam_y=pose.y, cam_z=pose.z, yaw=pose.yaw, pitch=pose.pitch,
            index=mode.index_name, culling=mode.kind, objects=len(mode), candidates=int(s.candidates),
            visible=int(self.n_visible), drawn=int(self.n_drawn), nodes_visited=int(s.nodes_visited),
            max_nodes_per_level=int(s.max_nodes_per_level), moved=self._moved,
            frame_ms=((perf_counter() if end is None else end) - self._t0) * 1e3,
            entered=self.n_entered, left=self.n_left, draw_calls=int(draw_calls), view=self.view,
            **{st.column: ms[st.name] for st in STAGES}, **self.counts,
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
        """Ids (n_drawn,) int64 of the objects drawn in the last frame (a view; CPU culling)."""
        return self.drawn_ids[: self.n_drawn]

    def sibling(self, view: int) -> FramePipeline:
        """Another view of this pipeline's world (:class:`viewer.frame.ViewSet`): it shares the objects, the
        motion, the culling modes and the options, and has its own camera side: buffers, visibility events,
        freeze, counts and clock. Its update never advances the movers (the first view's does, once a
        frame). A radius scale or culler changed here reaches it through its :class:`ViewSet`."""
        v = copy.copy(self)
        v.view = int(view)
        v.moves_world = False
        cap = self.ids.size
        v.drawn_ids = np.empty(cap, dtype=np.int64)
        v._alloc_instances(cap)
        v.events = VisibilityTracker(len(self.radii), self.events.margin, self.events.relative)
        v.ranges = Ranges(_RangeSource(self.ranges), self.centres, self._fade)
        v.ranges.set_scale(self._radius_scale)
        v.look = Look(self.look.fade, self.look.draw, self.look.band_colours)
        v.io = v._mode_frame(np.empty(cap, dtype=np.int64))
        v.planes = np.zeros((6, 4))
        v._camera = None
        v._frozen_pose = v._frozen_planes = None
        v.frozen = False
        v.mesh_batches = None
        v.set_draw_mode(self.draw_mode)
        return v


def select_views(frames: list[FramePipeline], cameras: list[FlyCamera]) -> list[CameraMatrices]:
    """:meth:`FramePipeline.select` for every view of a frame (:class:`viewer.frame.ViewSet`): ``frames`` the
    views' pipelines (one world, one culling mode), ``cameras`` theirs. An ids-answering mode that leaves the
    records to the CPU answers every view in one batch (:meth:`viewer.frame.CullingMode.query_views`); each
    view's ``query_ms`` is then its share of the batch's time plus its own range filter. Any other mode
    selects view after view. Returns each view's matrices."""
    mode = frames[0].mode
    if not mode.answers_ids or mode.draws_records:
        return [f.select(c) for f, c in zip(frames, cameras)]
    ios = [f._begin(c) for f, c in zip(frames, cameras)]
    t1 = perf_counter()
    ks = mode.query_views(ios)
    share = (perf_counter() - t1) * 1e3 / len(frames)
    out = []
    for f, c, io, k in zip(frames, cameras, ios, ks):
        t2 = perf_counter()
        kept = f.ranges.filter(io.ids, k, io.query_point)
        if io.view_stats is not None:
            io.view_stats.visible = kept
        io.stage_ms["query"] = share + (perf_counter() - t2) * 1e3
        f._after_query(kept)
        f._pose = c.pose
        out.append(io.frustum()[0])
    return out


class _RangeSource:
    """The world's begin / lod / parent of a pipeline's :class:`Ranges` (a sibling view's state is its own)."""

    def __init__(self, r: Ranges):
        self.begin = r.world_begin if r.world_begin.size else None
        self.lod = r.world_lod
        self.parent = r.parent if r.parent.size else None


def camera_for_scene(scene, aspect: float = 16.0 / 9.0) -> FlyCamera:
    """A camera that starts inside the scene's densest spot (:func:`viewer.camera.busy_spots`), looking at
    its middle from within the typical view distance, with clip planes scaled to the scene and a speed at
    which two seconds of forward flight stay among that spot's objects.

    far : the largest view distance (nothing beyond it can be visible); speed : world units per second
    (at most the old fit to the whole scene, ``max(median radius / 2, extent / 200)``)
    """
    from ..camera import busy_spots

    c = np.asarray(scene.centres, dtype=np.float64).reshape(-1, 3)
    r = np.asarray(scene.radii, dtype=np.float64).reshape(-1)
    if c.shape[0] == 0:
        return FlyCamera(position=(0.0, 0.0, 10.0), aspect=aspect)
    far = max(float(r.max()) * 1.05, 1.0)
    extent = float((c.max(0) - c.min(0)).max()) or 1.0
    spot = busy_spots(c, r, k=1)[0]
    cruise = max(float(np.median(r)) / 2.0, extent / 200.0)
    cam = FlyCamera(position=spot.pose[:3], aspect=aspect, far=far, near=max(far * 1e-5, 1e-3),
                    speed=min(cruise, spot.speed))
    cam.set_pose(spot.pose)
    return cam
