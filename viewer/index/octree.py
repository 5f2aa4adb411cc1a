"""The adaptive view-distance octree ("A Fast Algorithm for Adaptive View Distance", J. Matthews).

A node of edge S holds the spheres whose centre lies in its half-open box and whose radius lies in
[S/4, S/2]; smaller spheres go down to a lazily created child octant, larger ones up. A query visits a
child only if the point lies in the child's box grown by the largest radius the child can hold, so at
most 2^3 nodes are entered per level and the cost is O(max(n, log S - log s)).

Beyond the paper:

- **Tight boxes.** Each node keeps the bounding box of its own spheres and of every sphere in its
  subtree, quantised to 8 bits per face on the paper's test box (so they can never be looser than the
  paper's bound, and cost 12 bytes a node). A child is entered only if the point is in its subtree box,
  and a node's objects are tested only if the point is in its own box. A far dense cluster therefore
  costs nothing even when its spheres are large, and candidates per visible object drop from ~40 to a
  few on heavy-tailed radii. Boxes grow on insert and move: a move that leaves its node's own box
  grows it, and the subtree boxes up the path, ahead of the object (half its radius, and 8 times its
  displacement on the side it moves to), so a drifting object's next moves stay inside and only store
  their row; a removal recomputes its node's box and tightens the ancestors while they change; the
  growths and leaving moves are counted, and each counted growth buys the refit of one object's worth
  of nodes, in slot order round the tree, a few at the end of each batch of moves: every box is
  recomputed once per N growths, amortised O(1) a move, and no frame pays for a whole refit
  (:meth:`Octree.refit` still does it at once, on demand).
- **Moves.** ``move_many`` runs in two passes: the moves that stay in their node's own box store their
  row (a few prefetched loads and four stores each; from ``PARALLEL_STAY`` moves on every core, each thread a
  run of consecutive moves: they write distinct rows and only read the nodes); the rest are then made one by
  one (unlink, place from the old node up then down, append, grow the boxes), with prefetches reaching their
  parents and siblings. From ``PARALLEL_LEAVE`` of them, those are shared among the threads by space: cells a
  few levels below the world's extent (``K.part_level``), neighbouring cells on different threads, so each
  thread alone reads and writes the nodes, blocks and objects of its cells' subtrees. A move that would
  leave its cell, starts above that level, or needs a node or a block made or freed (the shared pools) is
  left to one thread after them. ``move`` is the same general move for one object.
- **Bucket leaves.** A leaf also keeps spheres smaller than its band while it holds fewer than
  ``BUCKET`` (32) objects, and the bulk build gives a node every object of its subtree when there are
  at most 32: in a sparse world each small sphere otherwise hangs at the end of a chain of nodes of its
  own (1e6 uniform: 2.2 nodes an object, 191 bytes an object; with buckets 0.07 and ~50). A node's
  spheres below its band never number more than 32 (``check`` verifies it), so a visit costs at most
  32 extra candidates and the bound per level stands.
- **Contiguous storage.** Each node's objects sit in one block of a shared pool (x, y, z, r rows), so a
  query walks contiguous memory; removal is a swap with the block's last object (O(1)); a full block
  moves to one twice as large; freed blocks go to per-size-class free lists. A block of ``AUX_MIN``
  (24) or more objects is sorted into 8 octant runs with a box each, so a query in a dense node scans
  only the runs whose box holds the point (a removal or in-place move drops the runs until the refit's
  steps come round to the node again). The pool and the node rows grow in place, into address space
  reserved when they were made (:func:`viewer.index._pages.extend`): no frame waits for a copy.
- **One cache line per node** (corner, links, block, boxes, level: 64 bytes), renumbered breadth-first
  after a bulk build so siblings are neighbours; the bulk build places objects in Morton order. A query
  prefetches, as it pushes a node, that node's first children's rows and the head of its object block.
- **Unbounded worlds.** A centre outside the root or a radius too large for it wraps the root in new
  parents; the user never states the world's extent.
- **Finest level.** Below ``max_depth`` levels under the initial root (or where float64 corners would
  lose exactness) a node also holds every smaller sphere, so zero radii terminate.

The kernels live in :mod:`viewer.index._octree_kernels`; this class owns and grows the arrays.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from . import _octree_kernels as K
from . import _octree_many_kernels as MK
from . import _pages
from ._contract import BATCH_FROM, SphereIndex, _entry_points, _exercise, as_objects, as_point, grown, is_warm

__all__ = ["Octree"]


# The octree's warm-up (Octree.warm_up): one at a time; `quiet` marks a thread whose warm_up calls
# return at once (a build that waits for the warm-up at its end, or the warm-up's own tiny indexes).
_WARM_LOCK = threading.RLock()
_warming = threading.local()


def _quiet() -> bool:
    return getattr(_warming, "quiet", False)


# Address space (not memory: a page is backed when first written) reserved after the object pool and
# the node rows of a build, in multiples of their size, so that they grow in place (Octree._make_room,
# Octree._grow_nodes).
POOL_RESERVE = 2


def _level_of_edge(edge: float) -> int:
    return int(round(math.log2(edge))) + 128


#: a batch of at least this many moves makes its in-place moves (pass 1) on every core, each thread a run of
#: consecutive moves: below, waking the threads costs more than they share (and a forked child of a process
#: whose OpenMP threads have started must not start them)
PARALLEL_STAY = 1 << 14
#: pass 2 of such a batch runs on every core from this many moves left by pass 1 (each thread in its own subtrees)
PARALLEL_LEAVE = 256
# the arguments of K.on_threads a step does not read
_NONE = np.zeros(0, dtype=np.int64)
_NONE_U8 = np.zeros(0, dtype=np.uint8)
_NO_BOXES = np.zeros((0, 6))
_NO_ROWS = np.zeros((0, 6), dtype=np.int64)


def _threads() -> int:
    import numba

    return max(1, numba.get_num_threads())


class _MoveRecords:
    """The per-move arrays of a batch's passes (:func:`K.stay_run`, :func:`K._local_run`), kept from batch to
    batch (a moving world hands batches of one size every frame: fresh arrays cost their pages' faults each
    time). Only the rows of the moves pass 1 leaves are written, so only their pages are ever resident."""

    def __init__(self) -> None:
        self._m = -1
        self._mine = np.empty((0, 0), dtype=np.int64)

    def _fit(self, m: int) -> None:
        if m > self._m:
            self._m = m
            self._ints = np.empty((4, m), dtype=np.int64)
            self._val = np.empty((m, 4))
            self._done = np.empty(m, dtype=np.uint8)
            self._upbox = np.empty((m, 6))

    def passes(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``rest``, ``own``, ``lid`` (m,) int64 and ``val`` (m, 4) float64 for :func:`K.stay_run`."""
        self._fit(m)
        return self._ints[0, :m], self._ints[1, :m], self._ints[2, :m], self._val[:m]

    def mine(self, chunks: int, n: int) -> np.ndarray:
        """(chunks, n) int64: each thread's list of the records it moves."""
        if self._mine.shape[0] != chunks or self._mine.shape[1] < n:
            self._mine = np.empty((chunks, max(n, 2 * self._mine.shape[1])), dtype=np.int64)
        return self._mine

    def shared(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``done`` (m,) uint8, ``ups`` (m,) int64 and ``upbox`` (m, 6) float64 for :func:`K._local_run`."""
        self._fit(m)
        return self._done[:m], self._ints[3, :m], self._upbox[:m]


class Octree(SphereIndex):
    """The adaptive view-distance octree over spheres.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0 (the objects' view distances)
    max_depth : int
        Levels below the initial root after which a node keeps all smaller spheres (default 40).
    """

    name = "octree"
    updates_in_place = True

    def __init__(self, centres, radii, max_depth: int = 40):
        pending = type(self)._warm_up_start()
        was, _warming.quiet = _quiet(), True  # the build waits for the warm-up at its end, not here
        try:
            super().__init__()
        finally:
            _warming.quiet = was
        if isinstance(max_depth, bool) or not (isinstance(max_depth, int) and 1 <= max_depth <= 100):
            raise ValueError(f"octree: max_depth must be an int in 1..100, got {max_depth!r}")
        centres, radii = as_objects(centres, radii)
        n = radii.size
        self.max_depth = max_depth
        self._work = np.zeros(K.WORK, dtype=np.int32)
        self._scratch = np.empty(6, dtype=np.float64)
        self._iscratch = np.empty(12, dtype=np.int64)
        self._records = _MoveRecords()
        self._next_id = n
        self._build(centres, radii, np.arange(n, dtype=np.int32), None, None, n)
        if pending is not None:
            type(self)._warm_up_wait(pending)

    # ------------------------------------------------------------------------- warm-up
    @classmethod
    def warm_up(cls) -> None:
        """:meth:`SphereIndex.warm_up` in two parts, so that a first build overlaps most of it: the
        kernels a build runs are loaded at once (a tiny build), the rest (query, updates: numba cache
        loads the build need not wait for) by a thread started then. This call, and the end of every
        build, wait for that thread, so a built octree never loads a kernel later (no frame does)."""
        t = cls._warm_up_start()
        if t is not None:
            cls._warm_up_wait(t)

    @classmethod
    def _warm_up_start(cls) -> threading.Thread | None:
        """Load the build's kernels and start the thread that loads the others; returns it (maybe
        started earlier), or None when the warm-up is done or runs on this thread's stack."""
        if is_warm(cls) or _quiet():  # warm for the warm_scope's entry points (all, outside a scope)
            return None
        with _WARM_LOCK:
            if is_warm(cls):
                return None
            t = cls.__dict__.get("_warm_thread")
            if t is None or not (t.is_alive() or cls.__dict__.get("_warm_error")):
                # (a thread that is gone, neither done nor failed: a fork copied this class, not it)
                _warming.quiet = True
                try:
                    cls(np.zeros((1, 3)), np.ones(1))  # bounds, morton_keys, trie_walk, refit
                finally:
                    _warming.quiet = False
                t = threading.Thread(target=cls._warm_up_rest, name=f"{cls.name} warm-up")
                cls._warm_thread = t
                t.start()
            return t

    @classmethod
    def _warm_up_rest(cls) -> None:
        _warming.quiet = True
        try:
            _exercise(cls)
            cls._warmed_up = True
        except BaseException as exc:  # handed to the caller that waits
            cls._warm_error = exc

    @classmethod
    def _warm_up_wait(cls, t: threading.Thread) -> None:
        t.join()
        with _WARM_LOCK:
            exc = cls.__dict__.get("_warm_error")
            if exc is not None:  # a later call starts over
                cls._warm_error = None
                cls._warm_thread = None
                raise exc

    def _build(self, centres, radii, live, extra, min_lev, id_cap: int) -> None:
        """Bulk build of the ids ``live`` ((L,) int32; ``centres``/``radii`` are indexed by id) on a
        root fitted to them and to ``extra`` (a centre and radius that must fit too, or None);
        ``min_lev`` keeps a finest level (a rebuild), None derives it from the new root; ``id_cap``
        the rows of the id table.

        Objects are sorted by the Morton key of their centre; a first pass walks them with the
        current root-to-leaf path on a stack, counting the nodes each depth gets and each node's
        objects; a second walk writes the nodes breadth-first and the objects into their blocks
        (:func:`~._octree_kernels.trie_walk`; each with an eighth more room than it holds:
        :func:`~._octree_kernels.build_room`); :func:`~._octree_kernels.refit` computes the
        boxes and octant runs. Temporaries: ~30 bytes an object and 4 a kept node."""
        n = live.size
        corner, lev, snap = self._root_box(centres, radii, live, extra)
        self._alloc(node_cap=1024, pool_cap=16, id_cap=max(16, id_cap))  # the pool: after the count walk
        self._meta[K.SNAP_LEV] = _level_of_edge(snap)
        self._meta[K.MIN_LEV] = min_lev = max(lev - self.max_depth, 1) if min_lev is None else min_lev
        if n == 0:
            K.new_node(self._nint, self._nlev, self._ncorner, self._nq, self._meta, -1, lev, *map(float, corner))
            self._meta[K.ROOT] = 0
            return
        edge = float(K.EDGE[lev])
        x0, y0, z0 = map(float, corner)
        # key cells must have exact float bounds: 2^bits cells an axis, each >= 2^-50 of the largest
        # coordinate (corners are multiples of snap, which is at least 2^-30 of it)
        big = float(np.abs(corner).max()) + edge
        bits = 21
        while bits > 0 and big > 2.0**50 * edge / 2.0**bits:
            bits -= 1
        keys = np.empty(n, dtype=np.int64)
        dep = np.empty(n, dtype=np.uint8)
        K.morton_keys(centres, radii, live, x0, y0, z0, lev, lev - min_lev, bits, keys, dep)
        srt = np.argsort(keys)
        order = srt if n == centres.shape[0] else live.astype(np.int64)[srt]  # ids in Morton order
        per_depth = np.zeros(25, dtype=np.int64)
        late = np.empty(0, dtype=np.int32)
        cap = n // 4 + 1000  # kept nodes: 0.02-0.07 an object on the bench's worlds (more: counted again)
        walk = (srt, keys, dep, order, lev, min_lev, x0, y0, z0, bits)
        while True:
            t_count = np.empty(cap, dtype=np.int32)
            m, later, _ = K.trie_walk(False, *walk, t_count, per_depth, late, centres, radii, *self._tree(), self._meta)
            if m >= 0:
                break
            cap *= 2
        node_cap = int(per_depth.sum() * 1.02) + K.NODE_RESERVE + 400
        pool_cap = max(16, int(K.build_pool(t_count, m)))
        self._obj = _pages.zeros((pool_cap, 4), reserve=POOL_RESERVE * pool_cap)
        self._oid = _pages.full(pool_cap, -1, np.int32, reserve=POOL_RESERVE * pool_cap)
        self._meta[K.POOL_CAP] = pool_cap
        self._set_nodes(_pages.zeros((node_cap, K.NODE_BYTES), np.uint8, reserve=POOL_RESERVE * node_cap))
        self._meta[K.NODE_CAP] = node_cap
        late = np.empty(later, dtype=np.int32)
        _, _, aux_rows = K.trie_walk(True, *walk, t_count, per_depth, late, centres, radii, *self._tree(), self._meta)
        del srt, keys, dep, order, t_count, walk
        for i in late:  # deeper than the key grid: rare (radii < 2^-21 of the world)
            x, y, z = map(float, centres[i])
            while True:
                self._ensure_nodes()
                if K.insert_one(*self._tree(), self._meta, self._bfree, int(i), x, y, z, float(radii[i]), self._scratch, self._iscratch) == 0:
                    break
                self._grow_pool()
        self._refit(aux_rows)
        if {"move", "move_many"} & _entry_points(None):  # (a warm scope without moves never refits)
            self._refit_step()  # nothing to do yet: loads its kernel with the build's, never in a frame

    def _rebuild(self, x: float, y: float, z: float, r: float) -> None:
        """Build the tree again on a root that also holds (x, y, z, r): the root cannot grow that far
        with exact corners (the world grew by a factor of millions). Ids and finest level are kept."""
        live = np.flatnonzero(self._ids[: self._next_id, 0] >= 0).astype(np.int32)
        centres = np.zeros((self._next_id, 3))
        radii = np.zeros(self._next_id)
        slots = self._ids[live, 0]
        centres[live] = self._obj[slots, :3]
        radii[live] = self._obj[slots, 3]
        self._build(centres, radii, live, (np.array([x, y, z]), r), int(self._meta[K.MIN_LEV]), self._ids.shape[0])

    # ------------------------------------------------------------------------- arrays
    def _alloc(self, node_cap: int, pool_cap: int, id_cap: int) -> None:
        self._set_nodes(_pages.zeros((node_cap, K.NODE_BYTES), np.uint8))
        self._obj = _pages.zeros((pool_cap, 4), reserve=POOL_RESERVE * pool_cap)  # address space for _make_room
        self._oid = _pages.full(pool_cap, -1, np.int32, reserve=POOL_RESERVE * pool_cap)
        self._ids = _pages.full((id_cap, 2), -1, np.int32)
        self._set_aux(np.zeros((16, K.AUX_BYTES), dtype=np.uint8))
        self._meta = np.zeros(16, dtype=np.int64)
        self._bfree = np.full(64, -1, dtype=np.int32)
        self._meta[K.NODE_FREE] = -1
        self._meta[K.SNAP_LEV] = 1
        self._meta[K.NODE_CAP] = node_cap
        self._meta[K.POOL_CAP] = pool_cap

    def _set_nodes(self, node: np.ndarray) -> None:
        # the layout: K.NODE_BYTES and the offsets next to it (K.node_views makes the same views)
        self._node = node
        self._ncorner = node.view(np.float64)[:, 0:3]
        self._nint = node.view(np.int32)[:, K.NINT_I32 : K.NINT_I32 + 6]
        self._nq = node[:, K.NQ_BYTE : K.NQ_BYTE + 15]
        self._nlev = node[:, K.LEV_BYTE]

    def _set_aux(self, aux: np.ndarray) -> None:
        # octant runs of dense blocks: the layout is K.AUX_BYTES and K.AUX_Q_BYTE
        self._aux = aux
        self._aux_end = aux.view(np.int32)[:, 0:8]
        self._aux_q = aux[:, K.AUX_Q_BYTE : K.AUX_Q_BYTE + 48]

    def _tree(self):
        return self._nint, self._nlev, self._ncorner, self._nq, self._obj, self._oid, self._ids

    @staticmethod
    def _root_box(centres: np.ndarray, radii: np.ndarray, live: np.ndarray, extra=None) -> tuple[np.ndarray, int, float]:
        """The root's corner (3,), level and snap g: a box holding the centres of ``live`` (and
        ``extra``), with an edge at least twice the largest radius, at least 2^-38 of its largest
        coordinate (so its corners are exact on its grid: see ``_octree_kernels.PREC``) and at least
        2^-80; its corner a multiple of g, 2^-30 of the largest coordinate, so every corner below it
        is exact too."""
        box = np.empty(6)
        rmax = float(K.bounds(centres, radii, live, box))
        lo, hi = box[:3], box[3:]
        if extra is not None:
            lo = np.minimum(lo, extra[0]) if live.size else np.asarray(extra[0], dtype=np.float64)
            hi = np.maximum(hi, extra[0]) if live.size else np.asarray(extra[0], dtype=np.float64)
            rmax = max(rmax, float(extra[1]))
        elif not live.size:
            lo = np.full(3, -0.5)
            hi = np.full(3, 0.5)
        big = float(max(np.abs(lo).max(), np.abs(hi).max()))
        need = max(float((hi - lo).max()), 2.0 * rmax, big * 2.0**-38, 2.0**-80)
        edge = 2.0 ** math.ceil(math.log2(need))
        snap = 2.0 ** (math.ceil(math.log2(max(big, edge))) - 30)
        corner = np.floor(lo / snap) * snap
        while not (corner + edge > hi).all():  # at most a couple of doublings: corner <= lo < corner + snap
            edge *= 2.0
        return corner, _level_of_edge(edge), snap

    def _grow_nodes(self) -> None:
        # in place while the build's reserve lasts (as _make_room): a copy of many node rows stalls the
        # moving frame it lands in, mostly on the first touch of the new pages
        cap = self._node.shape[0]
        node = _pages.extend(self._node, cap + max(cap // 4, 16))
        if node is None:
            cap *= 2
            node = grown(self._node, cap, 0)
        self._set_nodes(node)
        self._meta[K.NODE_CAP] = node.shape[0]

    def _grow_pool(self) -> None:
        cap = 2 * self._obj.shape[0]
        self._obj, self._oid = grown(self._obj, cap, 0.0), grown(self._oid, cap, -1)
        self._meta[K.POOL_CAP] = cap

    def _make_room(self) -> None:
        """The object pool is full (an insert or move found no block). While the pool's mapping has
        address space reserved after it (the build and every repack reserve ``POOL_RESERVE`` times
        the pool), the pool is lengthened in place by a quarter: no copy, so no pause in the frame it
        happens in (the first moving frame after a bulk build, whose blocks were exactly full, used to
        repack every object here, a pause far longer than a frame at 1e6; a drifting world's pool then
        grows to about twice its objects). Once the reserve is used up: copy every node's block, in node
        order, into a new pool, each with a quarter more room than it holds (so the next moves into
        it append without moving the block and rewriting its objects' ids), dropping the free blocks.
        The new pool has half again as many slots as the blocks take, and never fewer than now."""
        cap = self._obj.shape[0]
        more = cap + max(cap // 4, 16)
        obj = _pages.extend(self._obj, more)
        # (the new slots' ids are left 0, not -1: a slot past the pool's top is written before it is read,
        # and filling it would touch every fresh page in this frame, the very cost growing in place avoids)
        oid = None if obj is None else _pages.extend(self._oid, more)
        if oid is not None:
            self._obj, self._oid = obj, oid
            self._meta[K.POOL_CAP] = more
            return
        need = int(K.repack_need(self._nint, self._meta))
        cap = max(cap, need + need // 2, 16)
        obj = _pages.zeros((cap, 4), reserve=POOL_RESERVE * cap)
        oid = _pages.full(cap, -1, np.int32, reserve=POOL_RESERVE * cap)
        K.repack(self._nint, self._obj, self._oid, self._ids, self._meta, self._bfree, obj, oid)
        self._obj, self._oid = obj, oid

    def _ensure_nodes(self) -> None:
        while self._meta[K.NODE_TOP] + K.NODE_RESERVE > self._meta[K.NODE_CAP]:
            self._grow_nodes()

    # ------------------------------------------------------------------------- contract
    def __len__(self) -> int:
        return int(self._meta[K.NOBJ])

    #: points a shared walk carries (``MK.query_shared``: groups of consecutive points in Morton order);
    #: 0 walks once a point (``MK.query_many``)
    shared_group = 64

    def _query_many(self, points: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> int:
        group = min(int(self.shared_group), MK.GROUP_MAX)
        k = points.shape[0]
        if group <= 0 or k < BATCH_FROM:
            # one kernel call walks every point in Morton order, sharing nodes and blocks in cache
            one = np.zeros(4, dtype=np.int64)
            return self._query_in_curve_order(points, offsets, out, lambda pts, order, scratch, start, count, acc: MK.query_many(
                pts, order, self._node, self._obj, self._oid, self._aux, self._meta, scratch, self._work, start, count,
                one, acc))
        iwork, arena, gxyz, lists = self._shared_arrays(group)
        keys = np.empty(k, dtype=np.int64)
        MK.curve_keys(points, keys)
        order = np.argsort(keys, kind="stable")
        return self._query_in_segments(points, offsets, out, order, lambda part, seg, span, start, count, acc: (
            MK.query_shared(points, part, group, self._node, self._obj, self._oid, self._aux, self._meta, seg, span,
                            iwork, arena, gxyz, lists, start, count, acc)))

    def _warm_moves(self) -> None:
        # a batch of PARALLEL_STAY moves or more runs on every core (K.on_threads: pass 1, then pass 2's shared
        # step): its kernels, on no moves
        none = np.zeros(0, dtype=np.int64)
        counts = np.zeros(max(2, _threads()), dtype=np.int64)
        batch = (none, np.zeros((0, 3)), np.zeros(0), K.part_level(self._nlev, self._nq, self._meta), none, none, none,
                 np.zeros((0, 4)))
        self._on_threads(False, *batch, counts)
        self._move_local(*batch, np.zeros(counts.size, dtype=np.int64), counts)

    def _warm_many(self) -> None:
        # a batch large enough to be shared (below BATCH_FROM points a batch is answered point by point)
        self.query_many(np.zeros((BATCH_FROM, 3)))

    def _shared_arrays(self, group: int) -> tuple[np.ndarray, ...]:
        """The work arrays of :func:`MK.query_shared` for groups of ``group`` points, kept between
        batches, and its segments (``_shared_seg``, ``_shared_span`` ids a point, grown as needed)."""
        w = self.__dict__.get("_shared_work")
        if w is None or w[0] != group:
            ni, na = MK.shared_work_sizes(group)
            w = self._shared_work = (group, np.zeros(ni, dtype=np.int32), np.empty(na, dtype=np.uint8),
                                     np.empty((3, group), dtype=np.float64),
                                     np.empty((4, MK.GROUP_MAX), dtype=np.int64))
        if "_shared_seg" not in self.__dict__:
            self._shared_span = 256
            self._shared_seg = np.empty(0, dtype=np.int32)
        return w[1:]

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        return K.query(px, py, pz, self._node, self._obj, self._oid, self._aux, self._meta, out, self._work,
                       self._stats)

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._next_id, self._ids[:, 0]

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        i = self._next_id
        if i >= self._ids.shape[0]:
            self._ids = grown(self._ids, 2 * self._ids.shape[0], -1)
        while True:
            self._ensure_nodes()
            code = K.insert_one(*self._tree(), self._meta, self._bfree, i, x, y, z, r, self._scratch, self._iscratch)
            if code == 0:
                break
            if code == 1:
                self._make_room()
            else:
                self._rebuild(x, y, z, r)
        self._next_id = i + 1
        return i

    def _remove(self, i: int) -> None:
        K.remove_one(*self._tree(), self._meta, self._bfree, i, self._scratch, self._iscratch)

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        # r NaN keeps the radius (the kernel reads it). One kernel call does the node-room check,
        # the move and the refit test: a Python call per move is what a single move costs.
        while True:
            code = K.move_single(*self._tree(), self._meta, self._bfree, i, x, y, z, r, self._scratch, self._iscratch)
            if code == 0:
                return
            if code == 4:
                self._refit_step()
                return
            if code == 3:
                self._grow_nodes()
            elif code == 1:
                self._make_room()
            else:
                if r != r:
                    r = float(self._obj[self._ids[i, 0], 3])
                self._rebuild(x, y, z, r)

    def _refit_step(self) -> None:
        """The refit spread over frames (:func:`~._octree_kernels.refit_some`): the growths counted
        since the last step buy ``REFIT_PACE`` objects refitted each, so a pass round the whole tree
        follows every N / REFIT_PACE growths (amortised O(1) a move, and never a whole refit in one
        frame: at 1e6, a stutter)."""
        budget = int(self._meta[K.LOOSE]) * K.REFIT_PACE
        self._meta[K.LOOSE] = 0
        while K.refit_some(self._nint, self._nlev, self._ncorner, self._nq, self._obj, self._oid, self._ids,
                           self._aux_end, self._aux_q, self._meta, budget) < 0:
            self._aux_room()

    def _aux_room(self) -> None:
        """The octant-run rows are all used: keep the live ones (rows dropped by moves and removals are
        left behind until here), renumbered from 0, in an array as large, or with room for as many
        again."""
        top = int(self._meta[K.NODE_TOP])
        q = self._nq[:top, 12:15].astype(np.int64)
        row = (q[:, 0] | (q[:, 1] << 8) | (q[:, 2] << 16)) - 1
        nodes = np.flatnonzero((row >= 0) & (self._nint[:top, K.PARENT] != -2))
        k = nodes.size
        aux = np.zeros((max(2 * k + 16, self._aux.shape[0]), K.AUX_BYTES), dtype=np.uint8)
        aux[:k] = self._aux[row[nodes]]
        new = np.arange(1, k + 1, dtype=np.int64)
        for b in range(3):
            self._nq[nodes, 12 + b] = (new >> (8 * b)) & 0xFF
        self._set_aux(aux)
        self._meta[K.AUX_TOP] = k

    def refit(self) -> None:
        """Recompute every node's boxes exactly (moves leave them conservative but loose) and sort
        every block of at least ``AUX_MIN`` objects into octant runs, each with its own box, so a
        query tests only the runs whose box holds the point."""
        top = int(self._meta[K.NODE_TOP])
        live = self._nint[:top, K.PARENT] != -2
        self._refit(int(np.count_nonzero(live & (self._nint[:top, K.COUNT] >= K.AUX_MIN))))

    def _refit(self, aux_rows: int) -> None:
        # aux_rows: the blocks that get octant runs (an estimate is fine: too few rows grow and retry)
        while True:
            if aux_rows > self._aux.shape[0]:
                self._set_aux(np.zeros((aux_rows + aux_rows // 4 + 16, K.AUX_BYTES), dtype=np.uint8))
            if K.refit(
                self._nint, self._nlev, self._ncorner, self._nq, self._obj, self._oid, self._ids,
                self._aux_end, self._aux_q, self._meta,
            ):
                return
            aux_rows = 2 * self._aux.shape[0]

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, rad: np.ndarray) -> None:
        # rad: NaN keeps the radius (the contract's convention, which the kernels follow). Ids are
        # distinct in a batch, so any order gives the same result: pass 1 makes the moves that stay
        # in their node's own box (most of a drifting world's), pass 2 the rest, its prefetches
        # reaching further (parents, siblings) for moves that leave their node; in a large batch, first
        # those that stay in their cell on every core (_move_local), then the others on one thread
        m = ids.size
        rest, own, lid, val = self._records.passes(m)
        chunks = _threads() if m >= PARALLEL_STAY else 1
        top = K.part_level(self._nlev, self._nq, self._meta)
        if chunks == 1:
            rest = rest[: K.stay_run(self._nint, self._nlev, self._ncorner, self._nq, self._aux, self._obj, self._ids,
                                     self._meta, ids, centres, rad, top, rest, own, lid, val, 0, 1)]
        else:
            counts = np.empty(chunks, dtype=np.int64)
            self._on_threads(False, ids, centres, rad, top, rest, own, lid, val, counts)
            starts = np.arange(chunks, dtype=np.int64) * m // chunks  # the runs' first positions, as K.stay_run's
            if counts.sum() >= PARALLEL_LEAVE:
                rest = self._move_local(ids, centres, rad, top, rest, own, lid, val, starts, counts)
            else:  # each run's leftovers, in order
                rest = np.concatenate([rest[s:s + n] for s, n in zip(starts, counts)])
        left = rest.size
        done = 0
        while True:  # at least once, even with nothing left: so the warm-up's batch loads pass 2 too
            self._ensure_nodes()
            done = K.move_many(
                *self._tree(), self._meta, self._bfree, ids, centres, rad, rest, done, self._scratch, self._iscratch
            )
            if done == left:
                break
            if self._meta[K.NODE_TOP] + K.NODE_RESERVE > self._meta[K.NODE_CAP]:
                self._grow_nodes()
            else:
                k = int(rest[done])
                self._grow_room(ids[k], centres[k], rad[k])
        self._refit_step()

    def _on_threads(self, local: bool, ids, centres, rad, top, rest, own, lid, val, counts, starts=_NONE,
                    done=_NONE_U8, ups=_NONE, upbox=_NO_BOXES, grew=_NONE, scratch=_NO_BOXES, iscratch=_NO_ROWS,
                    mine=_NO_ROWS) -> None:
        K.on_threads(local, self._nint, self._nlev, self._ncorner, self._nq, self._aux, self._obj, self._oid, self._ids,
                     self._meta, self._bfree, ids, centres, rad, top, rest, own, lid, val, starts, counts, done, ups,
                     upbox, grew, scratch, iscratch, mine)

    def _move_local(self, ids, centres, rad, top, rest, own, lid, val, starts: np.ndarray,
                    counts: np.ndarray) -> np.ndarray:
        """Pass 2's moves within one cell on level ``top`` on every core, each thread in cells of its own
        (:func:`K._local_run`), after pass 1 left ``counts[c]`` in run c (from position ``starts[c]``); returns
        the positions of the moves left to the serial pass: those above that level or leaving their cell, and
        those that need a node or a block made or freed."""
        m = rest.size
        chunks = counts.size
        done, ups, upbox = self._records.shared(m)
        grew = np.empty(chunks, dtype=np.int64)
        scratch = np.empty((chunks, 16))  # rows of two cache lines: no thread writes a line another does
        iscratch = np.empty((chunks, 16), dtype=np.int64)
        mine = self._records.mine(chunks, int(counts.sum()))
        self._on_threads(True, ids, centres, rad, top, rest, own, lid, val, counts, starts, done, ups, upbox, grew,
                         scratch, iscratch, mine)
        out = np.empty(int(counts.sum()), dtype=np.int64)
        n = K.local_rest(self._nint, self._nlev, self._ncorner, self._nq, self._meta, starts, counts, rest, done, ups,
                         upbox, grew, scratch, iscratch, out)
        return out[:n]

    def _grow_room(self, i: int, centre: np.ndarray, r: float) -> None:
        """After move_many stopped at a move it could not make: a full object pool, or a target the
        root cannot grow to exactly (rebuild)."""
        if r != r:
            r = float(self._obj[self._ids[i, 0], 3])
        x, y, z = map(float, centre)
        if self._needs_rebuild(x, y, z, r):
            self._rebuild(x, y, z, r)
        else:
            self._make_room()

    def _needs_rebuild(self, x: float, y: float, z: float, r: float) -> bool:
        root = int(self._meta[K.ROOT])
        e = float(K.EDGE[self._nlev[root]])
        c = self._ncorner[root]
        inside = r <= 0.5 * e and all(c[a] <= v < c[a] + e for a, v in enumerate((x, y, z)))
        return not inside

    # ------------------------------------------------------------------------- inspection
    def nbytes(self) -> int:
        arrays = (self._node, self._obj, self._oid, self._ids, self._aux)
        return sum(a.nbytes for a in arrays)

    @property
    def node_count(self) -> int:
        """Live nodes."""
        return int(self._meta[K.LIVE_NODES])

    def check(self) -> None:
        """Walk the tree and raise AssertionError naming the first broken invariant: centre in its
        node, radius in its node's band, ids in step, own and ancestors' boxes holding each sphere, no
        empty leaf left behind, counts right."""
        code, where = K.check_invariants(*self._tree(), self._aux_end, self._aux_q, self._meta)
        what = {
            1: "empty leaf not freed (node {})",
            2: "centre outside its node (slot {})",
            3: "radius outside its node's band (slot {})",
            4: "id table out of step (slot {})",
            5: "own/subtree box does not hold its sphere (slot {})",
            6: "a subtree box on the way up misses a sphere (slot {})",
            7: "child with wrong parent or level (node {})",
            8: "object count mismatch (saw {})",
            9: "live node count mismatch (saw {})",
            10: "octant runs reach past their block (node {})",
            11: "an octant run's box does not hold its sphere (slot {})",
        }
        if code:
            raise AssertionError(what[int(code)].format(int(where)))

    def levels(self) -> np.ndarray:
        """(next_id,) int16: the level each object's node sits on (edge = 2**(level - 128)), -1 for
        removed ids; for colouring objects by the node that holds them (its radius band, or a bucket
        leaf above it)."""
        lev = np.full(self._next_id, -1, dtype=np.int16)
        live = self._ids[: self._next_id, 1] >= 0
        lev[live] = self._nlev[self._ids[: self._next_id, 1][live]]
        return lev

    def node_of(self, id) -> tuple[np.ndarray, float]:
        """The corner (3,) float64 and edge of the node holding ``id``."""
        i = self._live(id)
        n = self._ids[i, 1]
        return self._ncorner[n].copy(), float(K.EDGE[self._nlev[n]])

    def debug_boxes(self, point=None) -> tuple[np.ndarray, np.ndarray]:
        """Every live node as ``boxes`` (M, 4) float64 [x0, y0, z0, edge], and ``visited`` (M,) bool:
        the nodes a query at ``point`` enters (all False without a point)."""
        top = int(self._meta[K.NODE_TOP])
        live = np.flatnonzero(self._nint[:top, K.PARENT] != -2)
        boxes = np.empty((live.size, 4))
        boxes[:, :3] = self._ncorner[live]
        boxes[:, 3] = K.EDGE[self._nlev[live]]
        flags = np.zeros(top, dtype=bool)
        if point is not None:
            px, py, pz = as_point(point)
            K.visited_nodes(px, py, pz, self._nint, self._nlev, self._ncorner, self._nq, self._meta, flags)
        return boxes, flags[live]
