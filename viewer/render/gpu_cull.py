"""Culling on the GPU with an indirect draw (the ``gpu`` culling mode).

Every object lives in GPU buffers: ``(x, y, z, view radius)`` as float64 (32 bytes), the same rounded to
float32 (16 bytes), its half-extent and colour (8 bytes). Each frame one compute dispatch
(``shaders/cull.glsl``, one invocation per object) culls them all:

- a float32 prefilter, conservative by a stated rounding bound (below), rejects almost every object
  from its 16-byte row; the few it keeps are tested with the index contract's exact float64 predicate
  (``(dx*dx + dy*dy) + dz*dz <= r*r``, as :func:`viewer.index.brute_query`), so the answer is exact;
- the visible ones are tested against the frustum with :func:`viewer.frame.frustum.cull_spheres`' test in float64;
- each drawn object's instance record (:data:`viewer.frame.instances.INSTANCE_DTYPE`, computed as
  :func:`viewer.frame._frame_kernels.gather_instances` does) is appended through an atomic counter, and that
  counter *is* the indirect draw command's count, so the draw that follows (``render_indirect``) needs
  nothing from the CPU;
- one "in" bit per object (the sign bit of the float32 radius, read with the row anyway) gives the
  visibility events' counts (entered / left, with :class:`viewer.frame.events.VisibilityTracker`'s hysteresis rule);
- with LOD switches (:meth:`GpuCuller.set_lod`), each drawn object's band (counted per band, and written per
  record for the mesh grouping of :mod:`viewer.render.gpu_mesh_groups`), and each object's band when last
  drawn (-1: not drawn), so a band change (:attr:`viewer.frame.ranges.Ranges.changes`' rule: drawn with
  another band, or drawn last frame and not now) is counted and appended as ``(id, previous, current)``;
  an object drawn last frame still has its "in" bit, so the prefilter keeps it and its leaving is seen.

Nothing comes back to the CPU unless asked: :meth:`GpuCuller.counters` reads 28 bytes (visible, drawn,
entered, left); :meth:`GpuCuller.drawn_ids` / :meth:`GpuCuller.visible_ids` / :meth:`GpuCuller.records`
/ :meth:`GpuCuller.band_changes` read lists back, for tests or a subscriber. Moving objects:
:meth:`GpuCuller.move` uploads only the movers' rows (36 bytes each), and ``shaders/cull_move.glsl``
scatters them into both copies (keeping the "in" bits).

The prefilter's bound: with u = 2^-23 (float32 rounding, either rounding mode), M the largest
coordinate magnitude of any centre so far and P the query point's, each float32 coordinate difference
is within u (P + M) of the exact one, so the float32 distance is within sqrt(3) u (P + M) of it and the
prefilter keeps every object with d <= r when it compares against (r + delta) (1 + 2^-19) with
delta >= sqrt(3) u (P + M) (plus 2^-120 for radii flushed to zero); the factor 1 + 2^-19 covers the
relative roundings of the radius and of the prefilter's few operations. Overflow to infinity only
keeps more objects.

The order of the records is whatever order the atomic counter hands out slots in (not nearest first as
the CPU path sorts them): with the depth test the image is the same, except where two objects have
exactly the same depth at a pixel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from time import perf_counter

import moderngl
import numpy as np

from ..frame.culling import NO_INDEX, CullingMode
from ..index import QueryOverflow, QueryStats, as_centres, as_point
from ..frame.instances import INSTANCE_DTYPE, INSTANCE_WORDS
from ..frame.pipeline import pack_colours
from ..frame.ranges import BAND_PALETTE
from .gpu_timer import NO_TIMER, GpuTimer
from .shaders import CULL_BINDINGS as B
from .shaders import ShaderLibrary

__all__ = ["GpuCounters", "GpuCuller", "GpuCulling", "GpuQueries", "gpu_cull_unavailable", "hand_records"]

_GROUP = 128  # local_size_x of both compute programs
_RECORD = INSTANCE_DTYPE.itemsize
_MESH_VERTICES = 36
_COMMAND_WORDS = 21  # command[4]; visible, entered, left, kept; EXACT's groups[3]; bands[8]; proxies; band changes
_COUNTERS = 4  # first word of the counters
_GROUPS = 8  # first word of the EXACT pass's dispatch
_BANDS = 11  # first word of the drawn objects' LOD band counts (8: bands 0..7), then the drawn proxies, band changes

_U = 2.0**-23  # float32 rounding of a stored or converted value, whichever rounding mode
_IN_BIT = np.uint32(0x80000000)

#: The per-frame uniform block of shaders/cull.glsl (std140: dvec4 planes[6], query, eye, hysteresis;
#: vec4 query_f; uvec4 info; uvec4 palette[2]: the LOD band colours, hysteresis.z 1 colouring by band).
_FRAME_DTYPE = np.dtype([("planes", "<f8", (6, 4)), ("query", "<f8", 4), ("eye", "<f8", 4),
                         ("hysteresis", "<f8", 4), ("query_f", "<f4", 4), ("info", "<u4", 4),
                         ("palette", "<u4", 8)])
assert _FRAME_DTYPE.itemsize == 352


#: The GPU culling mode's name.
GPU = "gpu"


def gpu_cull_unavailable(ctx: moderngl.Context) -> str | None:
    """Why ``ctx`` cannot run GPU culling (it needs OpenGL 4.3 compute shaders and 64-bit floats), or None."""
    version = int(getattr(ctx, "version_code", 0) or 0)
    if version < 430:
        return f"GPU culling needs OpenGL 4.3 compute shaders; this context is {version // 100}.{version % 100 // 10}"
    exts = getattr(ctx, "extensions", set()) or set()
    if version < 400 and "GL_ARB_gpu_shader_fp64" not in exts:  # core since 4.0
        return "GPU culling needs 64-bit floats in shaders (GL 4.0 / GL_ARB_gpu_shader_fp64)"
    return None


@dataclass(frozen=True, slots=True)
class GpuCounters:
    """What one frame's dispatch counted: visible (view distance holds the point), drawn (also in the
    frustum), entered / left (visibility events since the previous frame), kept (ids the float32
    prefilter passed to the exact test: the visible ones, the "in" ones, and a few near misses)."""

    visible: int
    drawn: int
    entered: int
    left: int
    kept: int


class GpuCuller:
    """All objects of one scene in GPU buffers, culled by one compute dispatch per frame.

    Parameters
    ----------
    ctx : a moderngl context with OpenGL 4.3+ (see :func:`gpu_cull_unavailable`)
    shaders : the context's :class:`ShaderLibrary`
    centres : (N, 3) float64 world units; radii : (N,) float64 view distances, world units
    sizes : (N,) float32 half-extents (the bounding sphere is ``size * sqrt(3)``, as the CPU path's)
    colours : (N,) uint32, RGBA bytes packed in memory order (:func:`viewer.frame.pack_colours`)

    GPU memory per object: 56 bytes for the objects (exact, float32 copy, look), 36 for the room a frame
    may need (its record, and its id in the drawn, visible and kept lists), so a frame never overflows;
    with LOD switches 16 more (its last band, a change, its record's band).
    """

    def __init__(self, ctx: moderngl.Context, shaders: ShaderLibrary, centres: np.ndarray, radii: np.ndarray,
                 sizes: np.ndarray, colours: np.ndarray):
        why = gpu_cull_unavailable(ctx)
        if why is not None:
            raise RuntimeError(why)
        c = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
        n = c.shape[0]
        self.ctx = ctx
        self.shaders = shaders
        self.n = n
        self.prefilter = shaders.program("cull", {"PREFILTER": 1})
        self.exact = shaders.program("cull")
        self.move_prog = shaders.program("cull_move")
        rows = np.empty((n, 4), dtype=np.float64)
        rows[:, :3] = c
        rows[:, 3] = np.asarray(radii, dtype=np.float64).reshape(n)
        cap = max(n, 1)
        self.objects = ctx.buffer(rows.tobytes() if n else bytes(32))
        approx = rows.astype(np.float32)
        self.approx = ctx.buffer(approx.tobytes() if n else bytes(16))
        self.max_coord = float(np.abs(c).max()) if n else 0.0  # M of the prefilter's bound (only grows)
        self.looks = ctx.buffer(reserve=cap * 8)
        self._looks = np.zeros((n, 2), dtype=np.uint32)
        self._looks[:, 0] = np.asarray(sizes, dtype=np.float32).reshape(n).view(np.uint32)
        self.set_colours(colours)
        self.instances = ctx.buffer(reserve=cap * _RECORD)
        self.ids = ctx.buffer(reserve=cap * 4)
        self.visible = ctx.buffer(reserve=cap * 4)
        self.kept = ctx.buffer(reserve=cap * 4)
        self.command = ctx.buffer(reserve=_COMMAND_WORDS * 4)
        self.frame_block = ctx.buffer(reserve=_FRAME_DTYPE.itemsize)
        self._frame = np.zeros((), dtype=_FRAME_DTYPE)
        self._frame["eye"][3] = math.sqrt(3.0)
        self._frame["info"][0] = n
        self._cmd = np.zeros(_COMMAND_WORDS, dtype=np.uint32)
        self._cmd[_GROUPS:_GROUPS + 3] = (0, 1, 1)
        self._mode_field = 0
        self.margin = 0.0
        self.relative = False
        self._moves: moderngl.Buffer | None = None
        self._move_ids: moderngl.Buffer | None = None
        self._move_cap = 0
        self._max_groups = int(ctx.info.get("GL_MAX_COMPUTE_WORK_GROUP_COUNT", (65535,))[0])
        self._groups = self._grid(n)
        self.ranges: moderngl.Buffer | None = None  # (begin, limit, parent, 0) per object, float64 (issue 24)
        self._ranges_key = None
        self.lods: moderngl.Buffer | None = None  # (N, L) float64 LOD switch distances (issue 24)
        self.band_state: moderngl.Buffer | None = None  # (N,) int32: each object's band when last drawn, -1 not drawn
        self.changes: moderngl.Buffer | None = None  # (N, 2) uint32: the last dispatch's band changes
        self.drawn_bands: moderngl.Buffer | None = None  # (N,) uint32: the drawn objects' bands, in record order
        self._frame["palette"] = pack_colours(BAND_PALETTE)[:8]
        self.band_colours = False  # colour the records by LOD band (the ``band`` colour mode)

    def set_lod(self, lod: np.ndarray | None) -> None:
        """The objects' LOD switch distances ((N, L) float64, world units, +inf padding; None: none): the exact
        pass then counts the drawn objects per band (:meth:`band_counts`)."""
        if self.lods is not None:
            self.lods.release()
            self.lods = None
        if lod is None or self.n == 0:
            self._frame["info"][3] = 0
            return
        a = np.ascontiguousarray(lod, dtype=np.float64).reshape(self.n, -1)
        self.lods = self.ctx.buffer(a.tobytes())
        self._frame["info"][3] = a.shape[1]
        if self.band_state is None:  # kept across new switch distances (a radius scale), as Ranges' state is
            self.band_state = self.ctx.buffer(np.full(self.n, -1, dtype=np.int32).tobytes())
            self.changes = self.ctx.buffer(reserve=self.n * 8)
            self.drawn_bands = self.ctx.buffer(reserve=self.n * 4)

    def reset_bands(self) -> None:
        """Forget the last frame's bands: the next dispatch reports every drawn object as a change from -1
        (:meth:`viewer.frame.ranges.Ranges.reset`)."""
        if self.band_state is not None:
            self.band_state.write(np.full(self.n, -1, dtype=np.int32).tobytes())

    def band_changes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The last dispatch's LOD band changes, as :attr:`viewer.frame.ranges.Ranges.changes`: ``(ids (E,)
        int64, previous (E,) int8, current (E,) int8)``, -1 meaning not drawn, in no order (a readback of 8
        bytes a change; empty without LOD switches)."""
        e = int(self.band_counts()[9]) if self.changes is not None else 0
        if e == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0, np.int8)
        w = np.frombuffer(self.changes.read(e * 8), dtype=np.uint32).reshape(e, 2)
        prev = (w[:, 1] & 0xFFFF).astype(np.int16) - 1
        cur = (w[:, 1] >> 16).astype(np.int16) - 1
        return w[:, 0].astype(np.int64), prev.astype(np.int8), cur.astype(np.int8)

    def band_counts(self) -> np.ndarray:
        """(10,) int64: the last dispatch's drawn objects per LOD band 0..7 (zeros without LOD), its drawn
        HLOD proxies (0 without ranges), then its LOD band changes (0 without LOD): a 40-byte readback."""
        return np.frombuffer(self.command.read(40, offset=_BANDS * 4), dtype=np.uint32).astype(np.int64)

    def set_ranges(self, begin: np.ndarray | None, limit: np.ndarray | None, parent: np.ndarray | None,
                   is_proxy: np.ndarray | None = None) -> None:
        """The objects' visibility ranges (:class:`viewer.frame.ranges.Ranges`' ``begin``, ``limit``,
        ``parent``: (N,) float64 / float64 / int64, zero-length for none; all None: no ranges; ``is_proxy``
        (N,) bool, counted when drawn), uploaded as (N, 4) float64 rows (32 bytes an object)."""
        if begin is None and parent is None:
            self._frame["info"][2] = 0
            return
        rows = np.zeros((self.n, 4), dtype=np.float64)
        rows[:, 2] = -1.0
        if begin is not None and begin.size:
            rows[:, 0] = begin
        if parent is not None and parent.size:
            rows[:, 1] = limit
            rows[:, 2] = parent
        if is_proxy is not None:
            rows[:, 3] = is_proxy
        if self.ranges is None:
            self.ranges = self.ctx.buffer(reserve=max(self.n, 1) * 32)
        if self.n:
            self.ranges.write(rows.tobytes())
        self._frame["info"][2] = 1

    # ----------------------------------------------------------------------------- state
    def set_colours(self, colours: np.ndarray) -> None:
        """Replace every object's colour: (N,) uint32 RGBA bytes in memory order (an N * 4 byte upload)."""
        col = np.asarray(colours, dtype=np.uint32).reshape(-1)
        if col.size != self.n:
            raise ValueError(f"colours has {col.size} entries for {self.n} objects")
        self._looks[:, 1] = col
        if self.n:
            self.looks.write(self._looks.tobytes())

    def set_hysteresis(self, margin: float, relative: bool = False) -> None:
        """The events' margin, as :meth:`viewer.frame.events.VisibilityTracker.set_margin`."""
        self.margin = float(margin)
        self.relative = bool(relative)

    def reset_events(self) -> None:
        """Forget the "in" bits and the LOD bands: the next dispatch reports every visible object as entered
        and every drawn one as a band change from -1 (the bands must go with the bits: an object with a band
        is visited because its bit is set)."""
        if self.n:
            self._run_move(self.n, mode=1)
        self.reset_bands()

    def move(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        """Objects ``ids`` (M,) are now at ``centres`` (M, 3) float64 with view distances ``radii`` (M,)
        float64: uploads these M rows (36 bytes each) and scatters them on the GPU."""
        ids = np.asarray(ids).reshape(-1)
        m = ids.size
        if m == 0:
            return
        if m > self._move_cap:
            for b in (self._moves, self._move_ids):
                if b is not None:
                    b.release()
            self._move_cap = max(m, 2 * self._move_cap)
            self._moves = self.ctx.buffer(reserve=self._move_cap * 32)
            self._move_ids = self.ctx.buffer(reserve=self._move_cap * 4)
            self._move_rows = np.empty((self._move_cap, 4), dtype=np.float64)
            self._move_idx = np.empty(self._move_cap, dtype=np.uint32)
        rows = self._move_rows[:m]
        rows[:, :3] = centres
        rows[:, 3] = radii
        self._move_idx[:m] = ids
        self._moves.write(rows)
        self._move_ids.write(self._move_idx[:m])
        self.max_coord = max(self.max_coord, float(np.abs(rows[:, :3]).max()))
        self._run_move(m, mode=0)

    def _run_move(self, count: int, mode: int) -> None:
        self.objects.bind_to_storage_buffer(B["OBJECTS"])
        self.approx.bind_to_storage_buffer(B["APPROX"])
        if self._moves is not None:
            self._moves.bind_to_storage_buffer(7)
            self._move_ids.bind_to_storage_buffer(8)
        self.move_prog["count"].value = count
        self.move_prog["mode"].value = mode
        self.move_prog.run(*self._grid(count))

    def _grid(self, count: int) -> tuple[int, int]:
        groups = -(-count // _GROUP)
        return (min(groups, self._max_groups), -(-groups // self._max_groups)) if groups else (0, 0)

    # ----------------------------------------------------------------------------- the frame
    def write_frame(self, point, eye, planes: np.ndarray, fade: float, mode: str = "sprites") -> None:
        """Write one frame's parameters (352 bytes) and reset the draw command and counters (44 bytes).

        point : (3,) the query point (the camera, or the frozen camera); eye : (3,) the render camera
        planes : (6, 4) float64 from :func:`viewer.frame.frustum.frustum_planes`; fade : the fade fraction
        mode : "sprites" (the count is the command's vertex count) or "mesh" (its instance count)
        """
        f = self._frame
        f["planes"] = planes
        f["query"][:3] = point
        f["query"][3] = fade
        f["query_f"][:3] = f["query"][:3]
        # the prefilter's absolute slack, rounded up to float32 (see the module docstring)
        f["query_f"][3] = self._slack(f["query"][None, :3])[0]
        f["eye"][:3] = eye
        f["hysteresis"][0] = self.margin
        f["hysteresis"][1] = 1.0 if self.relative else 0.0
        f["hysteresis"][2] = 1.0 if self.band_colours else 0.0
        self._mode_field = 1 if mode == "mesh" else 0
        f["info"][1] = self._mode_field
        self.frame_block.write(f.tobytes())
        cmd = self._cmd
        if mode == "mesh":
            cmd[0], cmd[1] = _MESH_VERTICES, 0
        else:
            cmd[0], cmd[1] = 0, 1
        self.command.write(cmd)

    def bind_shared(self, band_state: moderngl.Buffer | None) -> None:
        """Bind the frame block and the buffers of ``shaders/_cull_buffers.glsl`` (those that exist: the ranges
        with visibility ranges, the LOD buffers with LOD switches), ``band_state`` as the view's band state."""
        self.frame_block.bind_to_uniform_block(0)
        for name, buf in (("OBJECTS", self.objects), ("LOOKS", self.looks), ("INSTANCES", self.instances),
                          ("DRAWN_IDS", self.ids), ("COMMAND", self.command), ("VISIBLE_IDS", self.visible),
                          ("RANGES", self.ranges)):
            if buf is not None:
                buf.bind_to_storage_buffer(B[name])
        if self.lods is not None and band_state is not None:
            for name, buf in (("LODS", self.lods), ("BAND_STATE", band_state), ("CHANGES", self.changes),
                              ("DRAWN_BANDS", self.drawn_bands)):
                buf.bind_to_storage_buffer(B[name])

    def dispatch(self) -> None:
        """Run the cull over every object: the prefilter pass, then the exact pass over what it kept
        (an indirect dispatch the first pass sized). No wait: the draw and the readbacks are ordered
        after it."""
        if self.n == 0:
            return
        self.bind_shared(self.band_state)
        self.approx.bind_to_storage_buffer(B["APPROX"])
        self.kept.bind_to_storage_buffer(B["KEPT"])
        self.prefilter.run(*self._groups)
        self.ctx.memory_barrier()
        self.exact.run_indirect(self.command, offset=_GROUPS * 4)
        self.ctx.memory_barrier()

    def cull(self, point, eye, planes: np.ndarray, fade: float, mode: str = "sprites") -> None:
        """:meth:`write_frame` then :meth:`dispatch`."""
        self.write_frame(point, eye, planes, fade, mode)
        self.dispatch()

    def counters(self) -> GpuCounters:
        """Read the last dispatch's counters back (32 bytes; waits for the dispatch)."""
        c = np.frombuffer(self.command.read(_GROUPS * 4), dtype=np.uint32)
        return GpuCounters(visible=int(c[4]), drawn=int(c[self._mode_field]), entered=int(c[5]), left=int(c[6]),
                           kept=int(c[7]))

    def drawn_ids(self) -> np.ndarray:
        """Ids (drawn,) int64 of the objects the last dispatch drew, in record order (a readback)."""
        k = self.counters().drawn
        return np.frombuffer(self.ids.read(k * 4), dtype=np.uint32).astype(np.int64) if k else np.zeros(0, np.int64)

    def visible_ids(self) -> np.ndarray:
        """Ids (visible,) int64 whose view distance holds the last query point, in no order (a readback)."""
        k = self.counters().visible
        return np.frombuffer(self.visible.read(k * 4), dtype=np.uint32).astype(np.int64) if k else np.zeros(0, np.int64)

    def records(self) -> np.ndarray:
        """The drawn objects' instance records as 32-bit words, (drawn, INSTANCE_WORDS) float32, in record
        order (a readback)."""
        k = self.counters().drawn
        if k == 0:
            return np.zeros((0, 6), dtype=np.float32)
        return np.frombuffer(self.instances.read(k * _RECORD), dtype=np.float32).reshape(k, INSTANCE_WORDS).copy()

    def _slack(self, points: np.ndarray) -> np.ndarray:
        """(K,) float32: the prefilter's absolute slack for each query point (the module docstring's
        bound), rounded up to float32."""
        p_max = np.abs(points).max(axis=1) if points.size else np.zeros(0)
        delta = math.sqrt(3.0) * _U * (p_max + self.max_coord) * (1.0 + 8.0 * _U) + 2.0**-120
        return np.nextafter(delta.astype(np.float32), np.float32(np.inf))

    def query_many(self, points) -> tuple[np.ndarray, np.ndarray]:
        """The index contract's batch query on the GPU: every object tested against every point of
        ``points`` (K, 3) float64 in one dispatch (``shaders/cull_many.glsl``: the float32 prefilter, then
        the exact float64 predicate; with visibility ranges set (:meth:`set_ranges`), also the begin and HLOD
        rules of ``shaders/cull.glsl``: the ids in range). Returns ``(offsets (K + 1,) int64, ids)``: view
        ``k``'s ids are ``ids[offsets[k]:offsets[k + 1]]``, ascending. Waits for the GPU (a readback of 8
        bytes a hit)."""
        pts = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
        k = pts.shape[0]
        if k == 0 or self.n == 0:
            return np.zeros(k + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        views = np.zeros((k, 4), dtype=np.float64)
        views[:, :3] = pts
        views_f = np.empty((k, 4), dtype=np.float32)
        views_f[:, :3] = pts
        views_f[:, 3] = self._slack(pts)
        prog = self.shaders.program("cull_many")
        bufs = [self.ctx.buffer(views.tobytes()), self.ctx.buffer(views_f.tobytes()), self.ctx.buffer(reserve=4)]
        try:
            cap = getattr(self, "_pair_cap", 0) or max(4096, 4 * k)
            while True:
                pairs = self.ctx.buffer(reserve=cap * 8)
                try:
                    bufs[2].write(np.zeros(1, dtype=np.uint32))
                    self.objects.bind_to_storage_buffer(B["OBJECTS"])
                    self.approx.bind_to_storage_buffer(B["APPROX"])
                    bufs[0].bind_to_storage_buffer(2)
                    bufs[1].bind_to_storage_buffer(3)
                    pairs.bind_to_storage_buffer(4)
                    bufs[2].bind_to_storage_buffer(5)
                    prog["objects_n"].value = self.n
                    prog["views_n"].value = k
                    prog["capacity"].value = cap
                    ranged = int(self._frame["info"][2]) if self.ranges is not None else 0
                    if ranged:
                        self.ranges.bind_to_storage_buffer(B["RANGES"])
                    prog["ranged"].value = ranged
                    prog.run(*self._groups)
                    self.ctx.memory_barrier()
                    total = int(np.frombuffer(bufs[2].read(4), dtype=np.uint32)[0])
                    if total <= cap:
                        got = np.frombuffer(pairs.read(total * 8), dtype=np.uint32).reshape(total, 2) if total else \
                            np.zeros((0, 2), dtype=np.uint32)
                        break
                finally:
                    pairs.release()
                cap = max(total, 2 * cap)
            self._pair_cap = cap
        finally:
            for b in bufs:
                b.release()
        order = np.lexsort((got[:, 1], got[:, 0]))
        ids = got[order, 1].astype(np.int64)
        offsets = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(np.bincount(got[:, 0], minlength=k), out=offsets[1:])
        return offsets, ids

    def release(self) -> None:
        """Free the GPU buffers."""
        for b in (self.objects, self.approx, self.looks, self.instances, self.ids, self.visible, self.kept, self.command,
                  self.frame_block, self._moves, self._move_ids, self.ranges, self.lods, self.band_state,
                  self.changes, self.drawn_bands):
            if b is not None:
                b.release()


class GpuCulling(CullingMode):
    """The ``gpu`` culling mode (:class:`viewer.frame.CullingMode`): a :class:`GpuCuller` over the frame's
    world; its :meth:`records` is one dispatch (query, events, frustum cull and records on the GPU), its
    :meth:`upload` hands the GPU's records and draw command to the draw as they are.

    world : the :class:`viewer.frame.World` whose ``centres``, ``radii`` (the world now, kept current by its
        motion), ``sizes`` and ``colours`` are uploaded once
    gl : the session's :class:`ShaderLibrary` (its ``ctx`` is the GL context)
    """

    kind = GPU
    index_name = NO_INDEX
    answers_ids = False
    draws_records = True
    #: times the dispatch on the device (the session hands the mode its :class:`viewer.render.GpuTimer`)
    gpu_timer: GpuTimer = NO_TIMER

    @classmethod
    def unavailable(cls, gl) -> str | None:
        return "no GL context" if gl is None else gpu_cull_unavailable(gl.ctx)

    def __init__(self, world, gl: ShaderLibrary):
        self.ctx = gl.ctx
        self.world = world
        self.culler = GpuCuller(gl.ctx, gl, world.centres, world.radii, world.sizes, world.colours)
        # every object is tested each frame; no nodes
        self.stats = QueryStats(candidates=self.culler.n)
        self.last: GpuCounters | None = None
        self._groups = None  # the GpuMeshGroups of a scene drawn with its own meshes (made at its first frame)

    def __len__(self) -> int:
        return self.culler.n

    def move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray | None = None) -> None:
        """Objects ``ids`` are now at ``centres`` (radii None: unchanged): uploads only their rows."""
        ids = np.asarray(ids)
        r = self.world.radii[ids] if radii is None else radii
        self.culler.move(ids, centres, r)

    def restart(self) -> None:
        self.culler.reset_events()

    def records(self, frame, k=None) -> None:
        """Cull one frame on the GPU: the frame's query point and frustum, one dispatch, the counts back.

        The frame's ``query_ms`` runs from the dispatch until its results are ready (both passes,
        ``ctx.finish()`` and the counters' 32-byte readback); writing the frame's parameters and resetting
        the draw command (what the CPU uploads) is its ``upload_ms``. Then :meth:`upload` hands the
        records to the draw.
        """
        g = self.culler
        t0 = perf_counter()
        planes = frame.frustum()[1]
        look = frame.look
        g.set_hysteresis(frame.events.margin, frame.events.relative)
        g.band_colours = look.band_colours
        rg = frame.ranges
        write_ranges(g, rg)
        g.write_frame(frame.query_point, frame.eye, planes, look.fade, "mesh" if look.draw == "mesh" else "sprites")
        t1 = perf_counter()
        with self.gpu_timer.span():
            g.dispatch()
        self.ctx.finish()
        c = g.counters()
        t2 = perf_counter()
        self.last = c
        self.stats.visible = c.visible
        frame.visible, frame.drawn, frame.entered, frame.left = c.visible, c.drawn, c.entered, c.left
        frame.counts.update(band_counts(g, rg, c.drawn))
        st = frame.stage_ms
        st["query"], st["events"], st["cull"], st["gather"] = (t2 - t1) * 1e3, 0.0, 0.0, 0.0
        st["upload"] = (t1 - t0) * 1e3

    def upload(self, frame, draw) -> None:
        """Hand the GPU's records to ``draw`` (:func:`hand_records`)."""
        self._groups = hand_records(self.culler, frame, draw, self._groups)

    def band_groups(self):
        """The mesh grouping the last mesh-mode frame used (a :class:`GpuMeshGroups`), or None."""
        return self._groups

    def band_changes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The last frame's LOD band changes ``(ids, previous, current)`` (:meth:`GpuCuller.band_changes`: a
        readback, in no order), the GPU's :attr:`viewer.frame.ranges.Ranges.changes`."""
        return self.culler.band_changes()

    def visible_ids(self) -> np.ndarray:
        """A readback from the GPU, in no order."""
        return self.culler.visible_ids()

    def drawn_ids(self) -> np.ndarray:
        """A readback from the GPU, in the order drawn."""
        return self.culler.drawn_ids()

    def release(self) -> None:
        if self._groups is not None:
            self._groups.release()
            self._groups = None
        self.culler.release()


def write_ranges(culler: GpuCuller, rg) -> None:
    """Upload the frame's visibility ranges (begin, limits, switches) to ``culler`` when their scale or
    cross-fade changed since the last upload (``rg``: a :class:`viewer.frame.ranges.Ranges`)."""
    key = (rg.active, rg.scale, rg.fade)
    if key != culler._ranges_key:
        if rg.active:
            culler.set_ranges(rg.begin, rg.limit, rg.parent, rg.is_proxy)
        if rg.has_lod:
            culler.set_lod(rg.lod)
        culler._ranges_key = key


def band_counts(culler: GpuCuller, rg, drawn: int) -> dict[str, int]:
    """The band, proxy and band-change counts of the last dispatch (counted in the exact pass), as the
    frame's columns; a scene without LOD switches: every drawn object in band 0, no changes."""
    b = culler.band_counts() if (rg.has_lod or rg.active) else np.zeros(10, dtype=np.int64)
    if not rg.has_lod:
        b[:8] = 0
        b[0] = drawn
        b[9] = 0
    return dict(band0=int(b[0]), band1=int(b[1]), band2=int(b[2]), band3=int(b[3:8].sum()),
                band_changes=int(b[9]), proxies=int(b[8]))


def hand_records(culler: GpuCuller, frame, draw, groups=None):
    """Hand the last dispatch's records of ``culler`` to ``draw`` (a
    :class:`viewer.render.instance_draw.InstanceDraw`): one indirect draw, or for a scene drawn with its own
    meshes in mesh mode, the records grouped by the mesh of each object's LOD band on the GPU
    (:class:`viewer.render.gpu_mesh_groups.GpuMeshGroups`, timed as the frame's gather), one indirect draw per
    mesh. ``frame``: the :class:`viewer.frame.ModeFrame`; ``groups``: the grouping made for an earlier frame
    (kept while the draw's meshes are the same); returns the one to keep (None when not grouping)."""
    file_meshes = getattr(draw, "file_meshes", None)
    batches = frame.look.mesh_batches
    if batches is not None and file_meshes is not None and culler._mode_field == 1:
        from .gpu_mesh_groups import GpuMeshGroups

        t0 = perf_counter()
        if groups is None or groups.file_meshes is not file_meshes:
            if groups is not None:
                groups.release()
            groups = GpuMeshGroups(culler.ctx, culler.shaders, file_meshes, batches)
        groups.group(culler, bands=frame.ranges.has_lod)
        frame.stage_ms["gather"] += (perf_counter() - t0) * 1e3
        draw.gpu_mesh_records(groups)
        return groups
    draw.gpu_records(frame, culler.instances, culler.command, lambda: (culler.drawn_ids(), culler.records()))
    return groups

class GpuQueries:
    """The index contract's two queries on the GPU, for the clients bench (``viewer clients --index gpu``):
    ``query_into`` (one view: a batch of one) and ``query_many_into`` (every view in one dispatch) over a
    :class:`GpuCuller`; no events, no frustum. Each call waits for the GPU and reads the hits back, which
    is what a server would do with the answer.

    ctx, shaders : a context with compute shaders (:func:`gpu_cull_unavailable`) and its library
    centres : (N, 3) float64, radii : (N,) float64, world units
    """

    name = GPU
    shares_work = True  # one dispatch tests every object against every view

    def __init__(self, ctx: moderngl.Context, shaders: ShaderLibrary, centres: np.ndarray, radii: np.ndarray):
        n = len(radii)
        self.culler = GpuCuller(ctx, shaders, centres, radii, np.zeros(n, np.float32), np.zeros(n, np.uint32))

    def query_many(self, points) -> tuple[np.ndarray, np.ndarray]:
        # checked as an index checks them: real numbers (no bool, no text) inside the domain, (K, 3)
        return self.culler.query_many(as_centres(points, name="points"))

    def query(self, point) -> np.ndarray:
        return self.culler.query_many(np.array([as_point(point)], dtype=np.float64))[1]

    def query_many_into(self, points, offsets: np.ndarray, out: np.ndarray) -> int:
        offs, ids = self.query_many(points)
        offsets[:] = offs
        out[: min(ids.size, out.size)] = ids[: out.size]
        if ids.size > out.size:
            raise QueryOverflow(ids.size, out.size)
        return ids.size

    def query_into(self, point, out: np.ndarray) -> int:
        ids = self.query(point)
        out[: min(ids.size, out.size)] = ids[: out.size]
        if ids.size > out.size:
            raise QueryOverflow(ids.size, out.size)
        return ids.size

    def release(self) -> None:
        self.culler.release()
