"""Culling modes: how a frame finds what to draw, behind one small interface (GL-free).

A frame (:class:`viewer.frame.FramePipeline`) runs the update stage itself (the camera, then the movers,
handed to the mode's :meth:`CullingMode.move_many`), then asks its culling mode for the rest:

- :meth:`CullingMode.select` finds the visible and drawn objects and their instance records, and fills
  the frame's counts and the times of the stages it ran (``query``, ``cull``, ``gather``);
- :meth:`CullingMode.upload` hands the records to the draw (:class:`viewer.render.InstanceDraw`): from
  CPU memory (:meth:`~viewer.render.InstanceDraw.cpu_records`) or from GPU buffers the mode wrote itself
  (:meth:`~viewer.render.InstanceDraw.gpu_records`).

Two modes exist. :class:`CpuCulling` wraps any index of :data:`viewer.index.INDEXES`: the index answers
the query, then the CPU frustum cull and gather run. :data:`GPU` (:class:`viewer.render.gpu_cull.GpuCulling`)
culls every object in one compute dispatch and draws indirectly. A mode that is not "an index, then the
CPU" is declared in :data:`MODES` (its class is imported when a session first uses it, so this module
never loads GL); ``viewer view --index``, ``viewer record --index`` and the window's ``I`` cycle take the
index names and these names alike. A recording names the mode (``culling`` column) and the index
(``index``) apart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np

from ..errors import UserError
from ..index import QueryOverflow, QueryStats
from . import frustum
from ._frame_kernels import gather_instances, sort_front_to_back
from .stages import NO_INDEX

if TYPE_CHECKING:  # annotations only
    from ..camera import CameraMatrices, FlyCamera
    from ..index import SphereIndex
    from .pipeline import FramePipeline

__all__ = [
    "GPU",
    "GPU_NEEDS",
    "MODES",
    "NO_INDEX",
    "CpuCulling",
    "CullingMode",
    "ModeSpec",
    "check_cullers",
    "culler_names",
    "index_names",
    "unavailable",
]

#: The GPU culling mode's name.
GPU = "gpu"

#: What the GPU mode needs of the GL context (checked when the session makes its context).
GPU_NEEDS = "OpenGL 4.3 compute shaders with 64-bit floats"



@dataclass(frozen=True, slots=True)
class ModeSpec:
    """A culling mode other than "an index, then the CPU": where its class lives and what it needs.

    module, cls : the class (a :class:`CullingMode` taking ``(frame, gl)``), imported on first use
    needs : what it needs of the GL context, for messages ("": nothing)
    """

    module: str
    cls: str
    needs: str = ""

    def load(self) -> type[CullingMode]:
        import importlib

        return getattr(importlib.import_module(self.module), self.cls)


#: Culling modes by name, beside the index names (an index name means :class:`CpuCulling` over it).
MODES: dict[str, ModeSpec] = {
    # the coherent index's query, then the drawn side on the GPU following the deltas (issue 25); a mode
    # name shadows the index of the same name in every list of cullers (the index stays the bench's)
    "coherent": ModeSpec("viewer.render.delta_cull", "DeltaCulling", GPU_NEEDS),
    GPU: ModeSpec("viewer.render.gpu_cull", "GpuCulling", GPU_NEEDS),
}


class CullingMode(ABC):
    """How a frame finds what to draw (see the module docstring).

    kind : the recording's ``culling`` column (``"cpu"``, ``"gpu"``, ...)
    index : the index that answers the query, or None; index_name : the recording's ``index`` column
    stats : the last query's :class:`viewer.index.QueryStats` (candidates, nodes visited, ...)

    A mode that needs a GL context takes ``(frame, gl)`` (``gl``: the session's context and shader
    library) and says why a context cannot run it in :meth:`unavailable`.
    """

    kind: str = "cpu"
    index: SphereIndex | None = None
    index_name: str = NO_INDEX
    stats: QueryStats

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

    @abstractmethod
    def select(self, frame: FramePipeline, camera: FlyCamera) -> CameraMatrices:
        """Find this frame's visible and drawn objects and their records, after the update stage.

        Fills ``frame.n_visible``, ``n_drawn``, ``n_entered``, ``n_left`` and ``frame.stage_ms`` of the
        stages it ran; returns the camera's matrices of this frame (the draw uses the same).
        """

    def select_views(self, frames: list[FramePipeline], cameras: list[FlyCamera]) -> list[CameraMatrices]:
        """:meth:`select` for every view of a frame (:class:`viewer.frame.ViewSet`): ``frames`` the views'
        pipelines (one world), ``cameras`` theirs. The base selects view after view; a mode that can share
        its work among the views overrides it. Returns each view's matrices."""
        return [self.select(f, c) for f, c in zip(frames, cameras)]

    @abstractmethod
    def upload(self, frame: FramePipeline, draw) -> None:
        """Hand this frame's records to ``draw`` (a :class:`viewer.render.InstanceDraw`); timed as upload."""

    @abstractmethod
    def visible_ids(self, frame: FramePipeline) -> np.ndarray:
        """Ids (visible,) int64 of the last frame's visible objects (a view or a copy)."""

    @abstractmethod
    def drawn_ids(self, frame: FramePipeline) -> np.ndarray:
        """Ids (drawn,) int64 of the last frame's drawn objects, in the order drawn."""

    def restart(self) -> None:
        """Forget which objects were in view (the next frame reports every visible one as entered)."""

    def warm_up(self) -> None:
        """Compile what :meth:`select` runs, before anything is timed."""

    def node_boxes(self, point):
        """``(boxes (M, 4) float64 [x0, y0, z0, edge], visited (M,) bool)`` of the index's nodes, or None."""
        return None

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
    """An index answers the query, then the CPU runs the events, the frustum cull and the gather.

    index : any :class:`viewer.index.SphereIndex` over the frame's objects; name : its registry name
    """

    kind = "cpu"

    def __init__(self, index: SphereIndex, name: str):
        self.index = index
        self.index_name = name
        self._offsets = np.empty(0, dtype=np.int64)  # select_views' batch: the CSR answer
        self._batch = np.empty(1024, dtype=np.int64)

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

    def node_boxes(self, point):
        fn = getattr(self.index, "debug_boxes", None)
        if fn is None:
            return None
        try:
            return fn(tuple(float(v) for v in point))
        except TypeError:  # an index whose boxes take no point
            return fn()

    def select(self, frame: FramePipeline, camera: FlyCamera) -> CameraMatrices:
        t1 = perf_counter()
        qp = frame.query_point_of(camera)
        k = frame.query_into(self.index, qp)
        k = frame.ranges.filter(frame.ids, k, qp)  # visibility ranges: begin, HLOD children (O(visible))
        frame.stage_ms["query"] = (perf_counter() - t1) * 1e3
        return self.after_query(frame, camera, k)

    def select_views(self, frames, cameras):
        """Every view's query in one batch (the index's ``query_many``: one pass over the scan's arrays,
        the trees' walks in Morton order), then each view's events, cull and gather. Each view's
        ``query_ms`` and query counters are its share of the batch's (the batch time and counters over K)."""
        t1 = perf_counter()
        pts = np.empty((len(frames), 3))
        for j, (f, c) in enumerate(zip(frames, cameras)):
            pts[j] = f.query_point_of(c)
        if self._offsets.size != len(frames) + 1:
            self._offsets = np.empty(len(frames) + 1, dtype=np.int64)
        while True:
            try:
                self.index.query_many_into(pts, self._offsets, self._batch)
                break
            except QueryOverflow as exc:
                self._batch = np.empty(max(exc.needed, 2 * self._batch.size), dtype=np.int64)
        kept = []  # visibility ranges, in place in each view's share of the batch
        for j, f in enumerate(frames):
            lo, hi = int(self._offsets[j]), int(self._offsets[j + 1])
            kept.append(f.ranges.filter(self._batch[lo:hi], hi - lo, pts[j]))
        share = (perf_counter() - t1) * 1e3 / len(frames)
        s = self.index.stats
        per = [max(0, int(v) // len(frames)) for v in (s.candidates, s.nodes_visited)]
        out = []
        for j, (f, c) in enumerate(zip(frames, cameras)):
            lo = int(self._offsets[j])
            hi = lo + kept[j]
            if hi - lo > f.ids.size:
                f._grow(hi - lo)
            f.ids[: hi - lo] = self._batch[lo:hi]
            f.stage_ms["query"] = share
            f.view_stats = QueryStats(per[0], hi - lo, per[1], int(s.max_nodes_per_level))
            out.append(self.after_query(f, c, hi - lo))
        return out

    def after_query(self, frame: FramePipeline, camera: FlyCamera, k: int) -> CameraMatrices:
        """The stages after the query, ``frame.ids[:k]`` holding its answer at ``frame.query_point``: the
        events, the frustum cull and the gather (timed as ``cull`` and ``gather``)."""
        st = frame.stage_ms
        qp = frame.query_point
        rg = frame.ranges
        t2 = perf_counter()
        frame.events.update(frame.ids, k, qp, frame.centres, frame.radii, ranges=rg)
        t2e = perf_counter()

        matrices, planes = frame.frustum_of(camera)
        m = frustum.cull_spheres(planes, frame.centres, frame.bounds, frame.ids, k, frame.drawn_ids)
        t3 = perf_counter()

        eye = frame.eye_of(camera)
        if frame.sort:
            sort_front_to_back(frame.drawn_ids, m, frame.centres, eye, frame.sort_keys, frame.sort_scratch)
        t3l = perf_counter()
        rg.select_bands(frame.drawn_ids, m, qp)  # the lod stage: bands, counts, band changes (O(drawn))
        t3g = perf_counter()
        gather_instances(frame.drawn_ids, m, frame.centres, frame.sizes, frame.radii, frame.colours, eye, qp,
                         frame.fade, frame.instance_data, frame.instance_u32)
        rg.fades(frame.drawn_ids, m, qp, frame.instance_data)  # fade in at begin, HLOD cross-fade
        frame.n_drawn = m
        if frame.colour_mode == "band":
            frame.colour_by_band()
        if frame.mesh_batches is not None:  # a scene drawn with its own meshes: its batches, by mesh (and band)
            frame.mesh_batches.group(frame.drawn(), frame.instances, rg.bands if rg.has_lod else None)
        t4 = perf_counter()

        frame.n_visible = k
        frame.n_entered = frame.events.n_entered
        frame.n_left = frame.events.n_left
        frame.counts.update(rg.counts(frame.drawn()))
        st["events"] = (t2e - t2) * 1e3  # in frame_ms only (no column of its own)
        st["cull"] = (t3 - t2e) * 1e3
        st["lod"] = (t3g - t3l) * 1e3
        st["gather"] = (t4 - t3 - (t3g - t3l)) * 1e3
        return matrices

    def upload(self, frame: FramePipeline, draw) -> None:
        draw.cpu_records(frame)

    def visible_ids(self, frame: FramePipeline) -> np.ndarray:
        return frame.ids[: frame.n_visible]

    def drawn_ids(self, frame: FramePipeline) -> np.ndarray:
        return frame.drawn()


#: The indexes the ``I`` cycle and every list of cullers start with: the baseline, then the core.
FIRST: tuple[str, ...] = ("scan", "octree")


def index_names(available: bool = False) -> list[str]:
    """The index names in the order users meet them: :data:`FIRST`, then the rest of the registry;
    ``available``: only those whose libraries are installed."""
    from ..index import INDEXES

    ordered = [*(k for k in FIRST if k in INDEXES), *(k for k in INDEXES if k not in FIRST)]
    return [k for k in ordered if not available or INDEXES[k].unavailable() is None]


def culler_names(available: bool = False) -> list[str]:
    """Every name, once: the indexes (CPU culling, :func:`index_names`) then the modes of :data:`MODES`; a
    mode named as an index stays in the index's place and takes precedence over it;
    ``available``: only the indexes whose libraries are installed (a mode's needs are known only once a
    GL context exists)."""
    names = index_names(available)
    return [*names, *(k for k in MODES if k not in names)]


def unavailable(name: str) -> str | None:
    """Why culler ``name`` cannot run here (an index's missing library), or None. Unknown names: KeyError."""
    from ..index import INDEXES

    if name in MODES:
        return None
    if name not in INDEXES:
        raise KeyError(name)
    return INDEXES[name].unavailable()


def check_cullers(names, flag: str = "--index") -> list[str]:
    """Known, available, distinct culler names (order kept); a :class:`viewer.errors.UserError` naming
    ``flag`` otherwise."""
    out: list[str] = []
    known = culler_names()
    for n in names:
        if n not in known:
            raise UserError(f"{flag}: unknown index {n!r}; choose from {', '.join(known)}")
        why = unavailable(n)
        if why:
            raise UserError(f"{flag}: {n!r} is not available here: {why}")
        if n not in out:
            out.append(n)
    if not out:
        raise UserError(f"{flag}: give at least one index")
    return out
