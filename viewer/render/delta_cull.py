"""The ``coherent`` culling mode: the drawn side follows the visibility deltas (issue 25).

A frame's query is the stateful coherent index's (``INDEXES["coherent"]``, :mod:`viewer.index.rivals.coherent`;
the octree where it does not exist), then the visibility ranges (:meth:`viewer.frame.ranges.Ranges.filter`)
and the frame's visibility events (:class:`viewer.frame.events.VisibilityTracker`, hysteresis included),
exactly as :class:`viewer.frame.CpuCulling` runs them. What follows is on the GPU and never walks the
visible set on the CPU:

- a **persistent list** of ids on the GPU holds the events' in-set (the visible set without a margin, a
  superset with one). The CPU keeps a mirror of its slots (``pos[id]``, ``slots[slot]``) and applies each
  frame's events to it in O(entered + left) (:func:`viewer.render._delta_kernels.apply_events`): a left
  object is swap-removed (the last slot's id moves into its slot), an entered one appended. Only the
  changed slots are uploaded, as ``(slot, id)`` pairs in one buffer write, and a tiny compute pass
  (``shaders/cull_visible.glsl``, ``SCATTER``) writes them into the list;
- **one dispatch over the list** (``shaders/cull_visible.glsl``), one invocation per list entry: the
  contract's exact float64 predicate and the ranges again (so a list entry kept only by the hysteresis
  margin is not drawn), the frustum test, the fade and the LOD band, and the instance record appended
  through the atomic counter that is the indirect draw command's count, into the buffers of a
  :class:`viewer.render.gpu_cull.GpuCuller` (the same record, the same draw, the same readbacks). Turning
  the camera changes only the frame's parameters (352 bytes, and the 80-byte reset of the draw command).

The deltas come from the index itself (its ``last_entered()`` / ``last_left()``) when they are the list's
(the index given the tracker's hysteresis margin before each query, its in-set equal to the tracker's after
the last frame, no visibility ranges, the list in step), else from the
tracker's ``entered`` / ``left``. The list is rebuilt from the tracker's in-set (one write of it) on the
first frame, after a restart and whenever the tracker was updated without it (by another mode): a jump.
Views sharing the mode (:class:`viewer.frame.ViewSet`) each have a list of their own (:class:`ViewList`),
following their own tracker; the index's deltas are then another view's, so the tracker's are used.

Movers: :meth:`DeltaCulling.move_many` moves them in the index (the coherent index detaches them, nothing
re-filed) and marks their GPU rows stale; before the list pass, the stale rows among the list's go up as the
``gpu`` mode uploads movers (``shaders/cull_move.glsl``), so the upload follows what the list pass reads, not
what moved.

Its row (``culling`` = ``coherent``, ``index`` = the index's name): ``query_ms`` the index query and the
range filter (CPU); ``gather_ms`` the slot mirror's update (CPU, O(changes)); ``upload_ms`` writing the
frame's parameters and the changed slots and issuing the scatter; ``cull_ms`` the frustum planes (as the
CPU path times them), the list dispatch, the wait for the GPU (``ctx.finish()``) and reading 32 bytes of
counters back (on a software renderer this is where the GPU's work lands on the CPU's cores); ``lod_ms`` 0:
the list pass selects each drawn object's LOD band, counts the bands and the band changes against the view's
own band state on the GPU (:attr:`ViewList.bands`; the ids that left the list this frame are passed to it too,
as no longer drawn), and a scene's own meshes are grouped by band on the GPU, as in the ``gpu`` mode.
"""

from __future__ import annotations

import weakref
from time import perf_counter

import moderngl
import numpy as np

from ..frame.culling import CullingMode
from ..index import INDEXES, grown_until_fits, make_index
from . import _delta_kernels as K
from .gpu_cull import GpuCuller, band_counts, gpu_cull_unavailable, hand_records, write_ranges
from .gpu_timer import NO_TIMER, GpuTimer
from .shaders import CULL_BINDINGS as B
from .shaders import ShaderLibrary

__all__ = ["COHERENT", "DeltaCulling", "ViewList", "delta_index_name"]

#: The mode's name (and the name of the index it prefers).
COHERENT = "coherent"

_GROUP = 128  # local_size_x of shaders/cull_visible.glsl
_NONE = np.zeros(0, dtype=np.int64)
_MAX_GROUPS = 65535  # GL's minimum maximum of a dispatch's groups; the list pass loops past it

#: at most this many runs of consecutive changed slots are written in place (a buffer write each, no
#: dispatch); more go up as (slot, id) pairs in one write and a scatter dispatch (a teleport: thousands).
#: A dispatch can wait milliseconds for a software renderer's threads, where a few small writes do not; between
#: 8 and 256 runs neither way was clearly faster (the bench results README has the figures).
DIRECT_RUNS = 64


def delta_index_name() -> str:
    """The index the mode queries: ``coherent`` when registered and available, else ``octree``."""
    cls = INDEXES.get(COHERENT)
    return COHERENT if cls is not None and cls.unavailable() is None else "octree"


class _ListCuller(GpuCuller):
    """A :class:`GpuCuller` for the list pass, which reads only the exact rows (``objects``) and has no
    prefilter: its frame parameters leave the prefilter's slack at 0 (its slack, a few numpy calls, was a
    fifth of the mode's upload time on llvmpipe), and a few moved rows are written in place (no dispatch)."""

    def _slack(self, points: np.ndarray) -> np.ndarray:
        return np.zeros(len(points), dtype=np.float32)

    def move(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        """Up to :data:`DIRECT_RUNS` rows written in place, a 32-byte write each (the float32 copy the list
        pass never reads is left behind); more go up as :class:`GpuCuller` moves them (one dispatch)."""
        ids = np.asarray(ids).reshape(-1)
        if ids.size > DIRECT_RUNS:
            return super().move(ids, centres, radii)
        rows = np.empty((ids.size, 4), dtype=np.float64)
        rows[:, :3] = centres
        rows[:, 3] = radii
        if ids.size:
            self.max_coord = max(self.max_coord, float(np.abs(rows[:, :3]).max()))
        for k, i in enumerate(ids.tolist()):
            self.objects.write(rows[k], offset=i * 32)


class ViewList:
    """One view's persistent list: its GPU buffer of ids and the CPU's mirror of its slots.

    tracker : the view's :class:`viewer.frame.events.VisibilityTracker` (held weakly); n : objects
    ``pos`` (N,) int64, the slot of each id (-1: not in the list); ``slots`` (N,) int64, the id in each slot
    (the first ``count``); ``mark`` (N,) uint8 scratch of the kernel; ``buf`` the GPU's list (N uint32);
    ``frames`` the tracker's frame count and ``margin`` its margin when the list last followed it.
    """

    def __init__(self, ctx: moderngl.Context, tracker, n: int):
        self.tracker = weakref.ref(tracker)
        self.pos = np.full(n, -1, dtype=np.int64)
        self.slots = np.zeros(max(n, 1), dtype=np.int64)
        self.mark = np.zeros(max(n, 1), dtype=np.uint8)
        self.count = 0
        self.buf = ctx.buffer(reserve=max(n, 1) * 4)
        self.frames = -1  # never followed: the first frame rebuilds
        self.margin = -1.0
        self.in_step = False  # the index's in-set equalled the tracker's after the last frame (_in_step)
        #: with LOD switches: (N,) int32 on the GPU, each object's band when this view last drew it (-1: not
        #: drawn), made at the view's first frame with switches; ``restarted``: forget it at the next frame
        self.bands: moderngl.Buffer | None = None
        self.restarted = False

    def release(self) -> None:
        self.buf.release()
        if self.bands is not None:
            self.bands.release()


class DeltaCulling(CullingMode):
    """The ``coherent`` culling mode (see the module docstring).

    world : the :class:`viewer.frame.World` (``centres``, ``radii``, ``sizes``, ``colours``) indexed and
        uploaded once
    gl : the session's :class:`ShaderLibrary` (its ``ctx`` is the GL context)

    Memory: the index's, the :class:`GpuCuller`'s (92 bytes an object), and per view a list (4 bytes an object
    on the GPU, 4 more for its band state in a scene with LOD switches) and its CPU mirror (17 bytes an object:
    ``pos``, ``slots``, a mark byte); 8 bytes a changed slot (4 more a left id with LOD switches).
    """

    kind = COHERENT
    draws_records = True  # and answers ids: the index's query, then the pipeline's ranges and events
    #: times the scatter and list dispatches on the device (the session hands the mode its timer)
    gpu_timer: GpuTimer = NO_TIMER

    @classmethod
    def unavailable(cls, gl) -> str | None:
        return "no GL context" if gl is None else gpu_cull_unavailable(gl.ctx)

    def __init__(self, world, gl: ShaderLibrary):
        self.ctx: moderngl.Context = gl.ctx
        self.world = world
        name = delta_index_name()
        c, r = (world.centres, world.radii) if not world.moving else (world.centres.copy(), world.radii.copy())
        self.index = make_index(name, c, r, **world.index_options.get(name, {}))
        self.index_name = name
        self.culler = _ListCuller(gl.ctx, gl, world.centres, world.radii, world.sizes, world.colours)
        n = self.culler.n
        self.n = n
        self.list_prog = gl.program("cull_visible")
        self.scatter_prog = gl.program("cull_visible", {"SCATTER": 1})
        self._pairs = np.zeros((1024, 2), dtype=np.uint32)
        # _scatter's scratch: the changed slots in slot order, their ids, where their runs of consecutive slots begin
        self._run_slots, self._run_ids = np.zeros(1024, dtype=np.int64), np.zeros(1024, dtype=np.uint32)
        self._starts = np.zeros(1025, dtype=np.int64)
        self._pairs_buf = self.ctx.buffer(reserve=self._pairs.nbytes)
        #: each view's list, by the id of its tracker (one entry unless a ViewSet shares the mode)
        self._lists: dict[int, ViewList] = {}
        self.view: ViewList | None = None  # the list of the last frame's view (made at its first query)
        self._fresh = self._own = False  # the last query's view: its list out of step, the index's deltas its own
        #: (N,) uint8: 1 where the GPU's row is older than the world's (moved since its row last went up)
        self._stale = np.zeros(max(n, 1), dtype=np.uint8)
        self._any_stale = False
        self._uploaded = _NONE  # the stale rows uploaded since the last move_many (marked again by a repeat)
        self._queried: ViewList | None = None  # whose query the index answered last
        #: how the last frame's list changed: "events" (the tracker's), "index" (the index's own), "rebuild"
        self.last_source = ""
        #: the last frame's uploaded pairs (changed slots), and the GPU's visible count
        self.last_pairs = 0
        self.gpu_visible = 0
        #: the last frame's scatter dispatches (0: the changed slots were written in place, or none changed)
        self.last_dispatches = 0
        #: the ids that left the view's list this frame ((G,) int64), visited by the list pass as no longer drawn
        self._gone = _NONE
        self._n_gone = 0  # of them uploaded (0 without LOD switches)
        self._gone_buf: moderngl.Buffer | None = None
        self._groups = None  # the GpuMeshGroups of a scene drawn with its own meshes (made at its first frame)

    @property
    def stats(self):
        return self.index.stats

    def __len__(self) -> int:
        return self.n

    def move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray | None = None) -> None:
        """Objects ``ids`` are now at ``centres`` (radii None: unchanged): moved in the index, and their GPU rows
        marked stale. Only the rows the list pass reads go up, before it (:meth:`_fresh_rows`, from the world's
        arrays, which the pipeline moved first): a frame uploads the rows of the listed movers, not of every
        mover (in a moving world few movers are in the list at once)."""
        self.index.move_many(ids, centres, radii)  # validates the batch (a float id is refused, not cast)
        if self.index.last_move_repeated:
            # the same movers as the last batch (a moving world's frame): all of them are still marked but the
            # ones uploaded since, O(uploaded) instead of O(movers)
            self._stale[self._uploaded] = 1
        else:
            ids = np.asarray(ids, dtype=np.int64)
            self._stale[ids] = 1
        self._uploaded = _NONE
        self._any_stale = True

    def _fresh_rows(self, v: "ViewList") -> None:
        """Upload the rows of the stale objects in ``v``'s list (O(list) in a moving world, nothing in a still one)."""
        if not self._any_stale or v.count == 0:
            return
        listed = v.slots[: v.count]
        s = listed[self._stale[listed] != 0]
        if s.size:
            self._stale[s] = 0
            self._uploaded = np.concatenate([self._uploaded, s]) if self._uploaded.size else s
            self.culler.move(s, self.world.centres[s], self.world.radii[s])

    def restart(self) -> None:
        for v in self._lists.values():  # the next frame of each view rebuilds its list from its tracker's in-set
            v.frames = -1
            v.restarted = True  # and forgets its bands, as Ranges.reset does

    def _list_of(self, tracker) -> ViewList:
        """The list following ``tracker`` (a new one for a new tracker)."""
        v = self._lists.get(id(tracker))
        if v is None or v.tracker() is not tracker:
            if v is not None:
                v.release()
            v = self._lists[id(tracker)] = ViewList(self.ctx, tracker, self.n)
        return v

    def warm_up(self) -> None:
        """Compile the index's kernels, the slot mirror's, and both GPU programs (a software renderer compiles
        a compute shader at its first dispatch): each run once over nothing."""
        type(self.index).warm_up()
        K.warm()
        scratch = self.ctx.buffer(reserve=4)  # a list of no entries (a view's list is made at its first query)
        scratch.bind_to_storage_buffer(B["LIST"])
        self._pairs_buf.bind_to_storage_buffer(B["PAIRS"])
        self.scatter_prog["count"].value = 0
        self.scatter_prog.run(1, 1, 1)
        self.culler.bind_shared(None)
        scratch.bind_to_storage_buffer(B["LIST"])
        self.list_prog["count"].value = 0
        self.list_prog.run(1, 1, 1)
        self.ctx.finish()
        scratch.release()

    # ----------------------------------------------------------------------------- the frame
    def query(self, frame) -> int:
        """The index's query at the frame's point, the index told the view's hysteresis first; the view's list
        is looked up (and whether it is in step) before the pipeline's events move its tracker on."""
        ev = frame.events
        _sync_hysteresis(self.index, ev)
        v = self.view = self._list_of(ev)
        self._fresh = v.frames != ev.frames  # the tracker moved on without this list (another mode), or was reset
        self._own = self._queried is v  # the index's last answer was this view's previous one
        self._queried = v
        k, _ = grown_until_fits(lambda out: self.index.query_into(frame.query_point, out), frame.ids, frame.grow)
        return k

    def records(self, frame, k) -> None:
        """After the query, the ranges and the events (the pipeline's): the list's deltas (``gather``), their
        upload and scatter (``upload``), then one dispatch over the list, waited for (``cull``)."""
        st = frame.stage_ms
        ev = frame.events
        v = self.view
        rg = frame.ranges
        t2 = perf_counter()
        npairs = self._follow(v, ev, self._fresh, self._own and not rg.active)
        v.frames, v.margin = ev.frames, ev.margin
        v.in_step = _in_step(self.index, ev, k)
        t3 = perf_counter()

        g = self.culler
        planes = frame.frustum()[1]  # timed with the cull, as the CPU path times it
        t3f = perf_counter()
        look = frame.look
        g.band_colours = look.band_colours
        write_ranges(g, rg)
        g.write_frame(frame.query_point, frame.eye, planes, look.fade, "mesh" if look.draw == "mesh" else "sprites")
        self._band_state(v, rg.has_lod)
        self._fresh_rows(v)
        with self.gpu_timer.span():  # one span: the scatter's dispatch and the list pass (spans do not nest)
            self._scatter(npairs)
            t4 = perf_counter()
            self._dispatch()
        self.ctx.finish()
        c = g.counters()
        t5 = perf_counter()

        self.gpu_visible = c.visible
        frame.visible, frame.drawn = k, c.drawn
        frame.entered, frame.left = ev.n_entered, ev.n_left
        frame.counts.update(band_counts(g, rg, c.drawn))
        st["gather"] = (t3 - t2) * 1e3
        st["upload"] = (t4 - t3f) * 1e3
        st["cull"] = (t5 - t4 + t3f - t3) * 1e3
        st["lod"] = 0.0

    def _follow(self, v: ViewList, ev, fresh: bool, own: bool) -> int:
        """Apply this frame's deltas to ``v``'s slot mirror; returns the pairs to upload (-1: the whole list).
        ``own``: the index's deltas may be the list's (its last answer was this view's, no ranges)."""
        if not fresh:
            last_entered = getattr(self.index, "last_entered", None)
            if own and last_entered is not None and v.in_step and _hysteresis(self.index) == _hysteresis(ev):
                ent, left = last_entered(), self.index.last_left()
                self.last_source = "index"
            else:
                ent, left = ev.entered, ev.left
                self.last_source = "events"
            need = ent.size + left.size
            if need > self._pairs.shape[0]:
                self._pairs = np.zeros((max(need, 2 * self._pairs.shape[0]), 2), dtype=np.uint32)
            # writable int64 copies (O(changes)): one compiled signature whatever the source's flags
            gone = np.array(left, dtype=np.int64)
            count, m = K.apply_events(gone, left.size, np.array(ent, dtype=np.int64),
                                      ent.size, v.pos, v.slots, v.count, v.mark, self._pairs)
            if count >= 0:
                v.count = int(count)
                self.last_pairs = int(m)
                self._gone = gone
                return int(m)
            v.pos[:] = -1  # the list and the events disagreed (half applied): forget it all, O(N), then rebuild
            v.restarted = True  # and its bands (the last list is not known for sure)
        else:
            v.pos[v.slots[: v.count]] = -1
        old = v.slots[: v.count].copy()  # the last list, some of it maybe drawn with a band
        # a rebuild: the list is the tracker's in-set, written whole
        inside = ev.inside()
        m = inside.size
        v.pos[inside] = np.arange(m, dtype=np.int64)
        v.slots[:m] = inside
        v.count = m
        self._gone = old[v.pos[old] < 0]
        self.last_source = "rebuild"
        self.last_pairs = m
        return -1

    def _scatter(self, npairs: int) -> None:
        """Write the changed slots into the GPU's list: the whole list (``npairs`` -1, a rebuild), each run of
        consecutive changed slots written in place when there are at most :data:`DIRECT_RUNS` runs (no
        dispatch), else the pairs in one write, scattered by ``cull_visible.glsl``'s ``SCATTER`` pass."""
        v = self.view
        if npairs < 0:  # the whole list, one write
            if v.count:
                v.buf.write(v.slots[: v.count].astype(np.uint32))
            return
        self.last_dispatches = 0
        if npairs == 0:
            return
        if self._run_ids.size < npairs:
            cap = self._pairs.shape[0]
            self._run_slots, self._run_ids = np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.uint32)
            self._starts = np.zeros(cap + 1, dtype=np.int64)
        runs = K.slot_runs(self._pairs, npairs, self._run_slots, self._run_ids, self._starts)
        if runs <= DIRECT_RUNS:
            ends = self._starts[: runs + 1].tolist()
            slots, ids = self._run_slots, self._run_ids  # in slot order, each slot's final id
            for a, b in zip(ends, ends[1:]):
                v.buf.write(ids[a:b], offset=int(slots[a]) * 4)
            return
        self.last_dispatches = 1
        if self._pairs_buf.size < npairs * 8:
            self._pairs_buf.release()
            self._pairs_buf = self.ctx.buffer(reserve=self._pairs.nbytes)
        self._pairs_buf.write(self._pairs[:npairs])
        v.buf.bind_to_storage_buffer(B["LIST"])
        self._pairs_buf.bind_to_storage_buffer(B["PAIRS"])
        self.scatter_prog["count"].value = npairs
        self.scatter_prog.run(*self.culler._grid(npairs))

    def _band_state(self, v: ViewList, has_lod: bool) -> None:
        """With LOD switches: the view's band state (made at its first such frame, forgotten after a restart)
        and this frame's gone ids uploaded for the list pass; without, nothing."""
        self._n_gone = 0
        if not has_lod:
            return
        if v.bands is None or v.restarted:
            minus = np.full(max(self.n, 1), -1, dtype=np.int32)
            if v.bands is None:
                v.bands = self.ctx.buffer(minus)
            else:
                v.bands.write(minus)
            v.restarted = False
            self._gone = _NONE  # nothing was drawn before
        g = self._gone
        if g.size:
            if self._gone_buf is None or self._gone_buf.size < g.size * 4:
                if self._gone_buf is not None:
                    self._gone_buf.release()
                self._gone_buf = self.ctx.buffer(reserve=max(g.size, 1024) * 4)
            self._gone_buf.write(g.astype(np.uint32))
            self._n_gone = int(g.size)

    def _dispatch(self) -> None:
        count = self.view.count
        total = count + self._n_gone
        if total == 0:
            return
        self.ctx.memory_barrier()  # the scatter's and the movers' writes before the list pass reads them
        self._bind()
        self.list_prog["count"].value = count
        self.list_prog["gone"].value = self._n_gone
        self.list_prog.run(min(-(-total // _GROUP), _MAX_GROUPS), 1, 1)
        self.ctx.memory_barrier()

    def _bind(self) -> None:
        """The list pass's buffers: the culler's shared ones, with the view's band state, and the view's list
        and gone ids."""
        v = self.view
        self.culler.bind_shared(v.bands)
        v.buf.bind_to_storage_buffer(B["LIST"])
        if v.bands is not None and self._gone_buf is not None:
            self._gone_buf.bind_to_storage_buffer(B["GONE"])

    def upload(self, frame, draw) -> None:
        """Hand the list pass's records to ``draw`` (a scene's own meshes grouped by the mesh of each object's
        LOD band on the GPU, as the ``gpu`` mode does: :func:`viewer.render.gpu_cull.hand_records`)."""
        self._groups = hand_records(self.culler, frame, draw, self._groups)

    def band_changes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The last frame's LOD band changes ``(ids, previous, current)`` for its view (a readback, in no
        order), the GPU's :attr:`viewer.frame.ranges.Ranges.changes`."""
        return self.culler.band_changes()

    def band_groups(self):
        """The mesh grouping the last mesh-mode frame used (a :class:`GpuMeshGroups`), or None."""
        return self._groups

    def drawn_ids(self) -> np.ndarray:
        """A readback from the GPU, in the order drawn."""
        return self.culler.drawn_ids()

    def list_ids(self) -> np.ndarray:
        """The last frame's view's persistent list on the GPU, (count,) int64 in slot order (a readback, for tests)."""
        v = self.view
        if v.count == 0:
            return np.zeros(0, dtype=np.int64)
        return np.frombuffer(v.buf.read(v.count * 4), dtype=np.uint32).astype(np.int64)

    def release(self) -> None:
        if self._groups is not None:
            self._groups.release()
            self._groups = None
        self.culler.release()
        for v in self._lists.values():
            v.release()
        self._pairs_buf.release()
        if self._gone_buf is not None:
            self._gone_buf.release()


def _hysteresis(obj) -> tuple[float, bool]:
    """``(margin, relative)`` of a tracker or an index (``(0.0, False)``: none)."""
    m = float(getattr(obj, "margin", 0.0))
    return (m, bool(getattr(obj, "relative", False))) if m > 0.0 else (0.0, False)


def _sync_hysteresis(index, tracker) -> None:
    """Give the index the tracker's margin before the query (both apply a change at this frame's update)."""
    set_margin = getattr(index, "set_margin", None)
    if set_margin is not None and _hysteresis(index) != _hysteresis(tracker):
        set_margin(*_hysteresis(tracker))


def _in_step(index, tracker, k: int) -> bool:
    """Whether the index's in-set (its ``k`` visible objects and its held ones) is the tracker's now, so that
    its next events are the tracker's: same margin, same size, and every held id in the tracker's in-set
    (O(held))."""
    held_ids = getattr(index, "held_ids", None)
    if held_ids is None or _hysteresis(index) != _hysteresis(tracker):
        return False
    nh = int(index.held)
    if len(tracker) != k + nh:
        return False
    return nh == 0 or bool(np.isin(held_ids(), tracker.inside()).all())
