"""Culling modes: how a frame finds what to draw, behind one small interface (GL-free).

A frame (:class:`viewer.frame.FramePipeline`) runs the update stage (the camera, then the movers, handed to
the mode's :meth:`CullingMode.move_many`) and every stage the CPU modes share; a culling mode answers only
what differs:

- **which ids** (:attr:`CullingMode.answers_ids`): :meth:`CullingMode.query` writes the ids whose view
  sphere holds the frame's query point (:meth:`CullingMode.query_views`: many views at once). The pipeline
  then keeps those in range, runs the visibility events and, unless the mode draws its records itself, the
  frustum cull, the LOD bands and the gather on the CPU;
- **which records** (:attr:`CullingMode.draws_records`): :meth:`CullingMode.records` makes the frame's
  records itself (on the GPU), after the events when it answered ids too, and :meth:`CullingMode.upload`
  hands them to the draw.

A mode sees the frame only through a :class:`ModeFrame` (one view's inputs, the buffers it may write and
the frame's counts) and the world it culls through a :class:`World` (the arrays it is built over); it reads
nothing else of the pipeline.

:class:`CpuCulling` wraps any index of :data:`viewer.index.INDEXES` (ids, then the CPU). The modes that are
not "an index, then the CPU" are named in the render layer (:data:`viewer.render.modes.MODES`), which hands
them to the pipeline as factories: this layer never names them. A recording names the mode (``culling``
column) and the index (``index``) apart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..index import QueryStats, grown_until_fits
from .stages import NO_INDEX

if TYPE_CHECKING:  # annotations only (lower modules: no cycle)
    from ..camera import CameraMatrices
    from ..index import SphereIndex
    from .events import VisibilityTracker
    from .mesh_batches import MeshBatches
    from .ranges import Ranges

__all__ = [
    "NO_INDEX",
    "CpuCulling",
    "CullingMode",
    "Look",
    "ModeFrame",
    "World",
    "index_names",
]

@dataclass(slots=True, eq=False)
class World:
    """The objects a frame culls, as a culling mode is built over them (owned by the pipeline).

    centres : (N, 3) float64 and radii : (N,) float64, world units: the world now (a moving world's
        movers change in place; ``radii`` is replaced when the radius scale changes)
    sizes : (N,) float32 half-extents; colours : (N,) uint32 packed RGBA (the scene's categories)
    moving : whether the arrays change under the mode (an index over them takes a copy)
    index_options : per-index keyword options, ``{name: {...}}``
    """

    centres: np.ndarray
    radii: np.ndarray
    sizes: np.ndarray
    colours: np.ndarray
    moving: bool = False
    index_options: dict = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class Look:
    """How a frame's records are drawn, as a mode that writes them must know.

    fade : fraction of each view distance over which objects fade in; draw : ``"sprites"`` or ``"mesh"``;
    band_colours : records coloured by their LOD band; mesh_batches : a scene drawn with its own meshes,
    the records grouped by mesh (None: not grouped)
    """

    fade: float = 0.15
    draw: str = "sprites"
    band_colours: bool = False
    mesh_batches: MeshBatches | None = None


@dataclass(slots=True, eq=False)
class ModeFrame:
    """One view's frame as a culling mode sees it: what the pipeline set before the mode runs, the buffers
    the mode may write and the frame's counts it fills. Nothing else of the pipeline reaches a mode.

    Inputs: ``query_point`` (3,) float64 (the camera, or the frozen camera), ``eye`` (3,) float64 (the
    render camera: records are relative to it), ``events`` (the view's
    :class:`viewer.frame.events.VisibilityTracker`, with its hysteresis margin), ``ranges`` (the view's
    :class:`viewer.frame.ranges.Ranges`), ``look`` (:class:`Look`) and :meth:`frustum`.

    Outputs: ``ids`` (M,) int64, an ids-answering mode's answer in ``ids[:k]`` (:meth:`grow` for more);
    ``visible``, ``drawn``, ``entered``, ``left`` and ``counts`` (the columns a stage adds, by name) of a
    mode that makes its own records; ``stage_ms`` the times of the stages it ran; ``view_stats`` a view's
    share of a batch's query counters (None: the mode's own).
    """

    query_point: np.ndarray
    eye: np.ndarray
    events: VisibilityTracker
    ranges: Ranges
    look: Look
    ids: np.ndarray
    stage_ms: dict
    grower: Callable[[int], np.ndarray]
    frustum_of: Callable[[], tuple]
    visible: int = 0
    drawn: int = 0
    entered: int = 0
    left: int = 0
    counts: dict = field(default_factory=dict)
    view_stats: QueryStats | None = None
    _frustum: tuple | None = None

    def grow(self, needed: int) -> np.ndarray:
        """A larger :attr:`ids` (at least ``needed``; the frame's buffers beside it grow too); returns it."""
        self.ids = self.grower(int(needed))
        return self.ids

    def frustum(self) -> tuple[CameraMatrices, np.ndarray]:
        """The camera's matrices of this frame (the draw uses the same) and the (6, 4) float64 frustum planes
        the cull uses (the frozen ones while frozen): built once a frame, by the first caller (timed there)."""
        if self._frustum is None:
            self._frustum = self.frustum_of()
        return self._frustum


class CullingMode(ABC):
    """How a frame finds what to draw (see the module docstring).

    kind : the recording's ``culling`` column (``"cpu"``, ``"gpu"``, ...)
    index : the index that answers the query, or None; index_name : the recording's ``index`` column
    stats : the last query's :class:`viewer.index.QueryStats` (candidates, nodes visited, ...)
    answers_ids : :meth:`query` answers the frame's ids (the pipeline then runs the ranges and the events)
    draws_records : :meth:`records` makes the frame's records (else the pipeline's CPU cull and gather do)

    A mode that needs a GL context is built by the render layer from ``(world, gl)`` (``gl``: the session's
    shader library) and says why a context cannot run it in :meth:`unavailable`.
    """

    kind: str = "cpu"
    index: SphereIndex | None = None
    index_name: str = NO_INDEX
    stats: QueryStats = QueryStats()  # none counted (a mode with counters keeps its own)
    answers_ids: bool = True
    draws_records: bool = False

    @classmethod
    def unavailable(cls, gl) -> str | None:
        """Why this mode cannot run on ``gl`` (a session's GL resources, or None without GL), or None."""
        return None

    @abstractmethod
    def __len__(self) -> int:
        """Objects the mode culls."""

    @abstractmethod
    def move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray | None = None) -> None:
        """Objects ``ids`` (M,) int64 are now at ``centres`` (M, 3) float64 with ``radii`` (M,) float64 (None:
        unchanged), world units: the update stage's movers."""

    def query(self, frame: ModeFrame) -> int:
        """Write the ids whose view sphere holds ``frame.query_point`` into ``frame.ids`` (grown with
        ``frame.grow``) and return their number (a mode that :attr:`answers_ids`)."""
        raise NotImplementedError(f"{type(self).__name__} answers no ids")

    def query_views(self, frames: list[ModeFrame]) -> list[int]:
        """:meth:`query` for every view of a frame (:class:`viewer.frame.ViewSet`). The base queries view after
        view; a mode that can share its work among the views overrides it (setting each ``view_stats``)."""
        return [self.query(f) for f in frames]

    def records(self, frame: ModeFrame, k: int | None) -> None:
        """Make this frame's records (a mode that :attr:`draws_records`): after the events when the mode
        :attr:`answers_ids` (``k`` of them in ``frame.ids``, in range), else from nothing (``k`` None). Fills
        ``frame.visible``, ``drawn``, ``entered``, ``left``, ``counts`` and the ``stage_ms`` it ran."""
        raise NotImplementedError(f"{type(self).__name__} makes no records")

    def upload(self, frame: ModeFrame, draw) -> None:
        """Hand the records :meth:`records` made to ``draw`` (a :class:`viewer.render.InstanceDraw`)."""
        raise NotImplementedError(f"{type(self).__name__} makes no records")

    def visible_ids(self) -> np.ndarray:
        """Ids (visible,) int64 of the last frame's visible objects, for a mode that answers no ids."""
        raise NotImplementedError

    def drawn_ids(self) -> np.ndarray:
        """Ids (drawn,) int64 of the last frame's drawn objects in the order drawn, for a mode that
        :attr:`draws_records`."""
        raise NotImplementedError

    def restart(self) -> None:
        """Forget which objects were in view (the next frame reports every visible one as entered)."""

    def warm_up(self) -> None:
        """Compile what a frame of this mode runs, before anything is timed."""

    def node_boxes(self, point):
        """``(boxes (M, 4) float64 [x0, y0, z0, edge], visited (M,) bool)`` of the index's nodes, or None."""
        fn = getattr(self.index, "debug_boxes", None)
        if fn is None:
            return None
        try:
            return fn(tuple(float(v) for v in point))
        except TypeError:  # an index whose boxes take no point
            return fn()

    def levels(self) -> np.ndarray | None:
        """(N,) int the index level holding each object, or None when the mode has no levels."""
        return None

    @property
    def has_levels(self) -> bool:
        """Whether :meth:`levels` has an answer (cheap: asked every HUD frame)."""
        return False

    def release(self) -> None:
        """Free what the mode holds outside Python (GPU buffers)."""


class CpuCulling(CullingMode):
    """An index answers the query; the pipeline then runs the events, the frustum cull and the gather on the CPU.

    index : any :class:`viewer.index.SphereIndex` over the frame's objects; name : its registry name
    """

    kind = "cpu"

    def __init__(self, index: SphereIndex, name: str):
        self.index = index
        self.index_name = name
        self._offsets = np.empty(0, dtype=np.int64)  # query_views' batch: the CSR answer
        self._batch = np.empty(1024, dtype=np.int64)
        self._points = np.empty((0, 3))

    @property
    def stats(self) -> QueryStats:
        return self.index.stats

    def __len__(self) -> int:
        return len(self.index)

    def move_many(self, ids, centres, radii=None) -> None:
        self.index.move_many(ids, centres, radii)

    def warm_up(self) -> None:
        type(self.index).warm_up()

    @property
    def has_levels(self) -> bool:
        return getattr(self.index, "levels", None) is not None

    def levels(self):
        fn = getattr(self.index, "levels", None)
        return None if fn is None else np.asarray(fn(), dtype=np.int64)

    def query(self, frame: ModeFrame) -> int:
        k, _ = grown_until_fits(lambda out: self.index.query_into(frame.query_point, out), frame.ids, frame.grow)
        return k

    def query_views(self, frames: list[ModeFrame]) -> list[int]:
        """Every view's query in one batch (the index's ``query_many``: one pass over the scan's arrays, the
        trees' walks in Morton order), each view's answer copied to its ``ids``; each view's query counters
        are its share of the batch's (``view_stats``: the batch's counters over K)."""
        k = len(frames)
        if self._points.shape[0] != k:
            self._points = np.empty((k, 3))
            self._offsets = np.empty(k + 1, dtype=np.int64)
        pts = self._points
        for j, f in enumerate(frames):
            pts[j] = f.query_point
        _, self._batch = grown_until_fits(lambda out: self.index.query_many_into(pts, self._offsets, out), self._batch)
        s = self.index.stats
        candidates, nodes = (max(0, int(v) // k) for v in (s.candidates, s.nodes_visited))
        counts = []
        for j, f in enumerate(frames):
            lo, hi = int(self._offsets[j]), int(self._offsets[j + 1])
            ids = f.ids if hi - lo <= f.ids.size else f.grow(hi - lo)
            ids[: hi - lo] = self._batch[lo:hi]
            f.view_stats = QueryStats(candidates, hi - lo, nodes, int(s.max_nodes_per_level))
            counts.append(hi - lo)
        return counts


#: The indexes the ``I`` cycle and every list of cullers start with: the baseline, then the core.
FIRST: tuple[str, ...] = ("scan", "octree")


def index_names(available: bool = False) -> list[str]:
    """The index names in the order users meet them: :data:`FIRST`, then the rest of the registry, then the
    installed plugins' (:func:`viewer.index.installed_plugins`); ``available``: only those whose libraries are
    installed (and, for a plugin, that loads: ``viewer check-index NAME`` says why one does not)."""
    from ..index import INDEXES, installed_plugins
    from ..index.specs import usable_plugins

    ordered = [*(k for k in FIRST if k in INDEXES), *(k for k in INDEXES if k not in FIRST)]
    if available:
        return [*(k for k in ordered if INDEXES[k].unavailable() is None), *usable_plugins()]
    return [*ordered, *(k for k in installed_plugins() if k not in INDEXES)]
