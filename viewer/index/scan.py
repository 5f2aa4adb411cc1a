"""The linear scan engine teams use instead of a tree: every object tested on every query, as fast as
flat arrays, SIMD and every core allow. The baseline every speed-up of ``viewer bench`` is measured against.

Storage is structure-of-arrays: float64 ``x, y, z, r, r*r`` (the exact predicate's operands) and a 16-bit
prefilter that a query streams through: each object's centre as int16 and its radius as uint16 in the units
of its block's frame (256 objects share an origin, a power-of-two scale and their largest radius), 8 bytes
an object. A build stores the objects by octave of radius, then in the Morton order of their centres
(:func:`slot_order`), so a block's objects sit close together (a fine frame) and have like radii, and the
few that one query accepts share a few blocks. Each query tests every centre against its block's largest
radius (6 bytes an object read), then, in the few blocks that flags, every lane against its own radius;
the prefilter is conservative by a proved rounding bound (see :mod:`viewer.index._scan_kernels`), so it never
drops an object the exact test accepts; the lanes it passes are rechecked with the contract's float64
predicate, so the answer is exactly brute force's. Removal swaps the last slot into the hole; every update
rewrites one slot (and refits its block's frame when the slot no longer fits it). Queries over at least
:data:`PARALLEL_FROM` objects run on ``numba.get_num_threads()`` threads, smaller ones on one.
"""

from __future__ import annotations

import numba
import numpy as np

from . import _pages
from . import _scan_kernels as K
from . import _scan_many_kernels as MK
from ._contract import IdTable, SphereIndex, as_objects
from ._morton import morton_order

__all__ = ["FlatSlots", "LinearScan", "PARALLEL_FROM", "slot_order"]

#: objects from which a query uses every core (below, waking the threads costs more than it saves)
PARALLEL_FROM = 1 << 18

_F64 = ("_x", "_y", "_z", "_r", "_rr")


class FlatSlots(SphereIndex):
    """What the scan and the reference loop (:class:`viewer.index.loop32.Loop32`) share: the live objects in
    slots ``0..n-1`` (``_n``), ids through an :class:`IdTable` (``_idt``), a query on one thread or, from
    :data:`PARALLEL_FROM` objects, on every core."""

    updates_in_place = True
    _n: int
    _idt: IdTable

    def __len__(self) -> int:
        return self._n

    @property
    def threads(self) -> int:
        """Threads a query over the current objects runs on."""
        return numba.get_num_threads() if self._n >= PARALLEL_FROM else 1

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._idt.state()

    def _query(self, px: float, py: float, pz: float, out: np.ndarray, parallel: bool | None = None) -> int:
        n = self._n
        kernel = self._kernel(n >= PARALLEL_FROM if parallel is None else parallel)
        # the scratch: per chunk a hit count and a lane mask, per slot a hit
        k = kernel(*self._arrays(), n, px, py, pz, self._counts, self._hits, self._masks, out)
        s = self._stats
        s[0] = n
        s[1] = k
        return k

    def _kernel(self, parallel: bool):  # pragma: no cover - abstract
        """The query kernel, threaded or not: ``kernel(*self._arrays(), n, px, py, pz, counts, hits, masks,
        out) -> count``."""
        raise NotImplementedError

    def _arrays(self) -> tuple:  # pragma: no cover - abstract
        """The index's arrays the query kernel takes before ``n``."""
        raise NotImplementedError

    def _warm_more(self) -> None:
        # the tiny warm-up index queries on one thread: compile the threaded kernel too, and a point far
        # beyond every lane's reach (the scan's exact path of a block)
        out = np.empty(self._n + 1, dtype=np.int64)
        for parallel in (True, False):
            self._query(0.0, 0.0, 0.0, out, parallel)
            self._query(2.0**70, 0.0, 0.0, out, parallel)


class LinearScan(FlatSlots):
    """Every sphere tested on every query: a 16-bit SIMD prefilter on all cores, an exact float64 recheck.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    """

    name = "scan"

    def __init__(self, centres, radii):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        n = radii.size
        order = slot_order(centres, radii)
        self._alloc(_capacity(n))
        self._x[:n], self._y[:n], self._z[:n] = centres[order].T
        self._r[:n] = radii[order]
        np.multiply(self._r[:n], self._r[:n], out=self._rr[:n])
        self._ids[:n] = order
        self._idt = IdTable(n)
        self._idt.slots[order] = np.arange(n, dtype=np.int64)
        self._n = n
        self._frame_all()

    def _alloc(self, cap: int) -> None:
        # one array per kind, so a query passes few arrays (numba unboxes each argument on every call):
        # float64 rows x, y, z, r, r*r; int16 rows qx, qy, qz; block frames (origin, largest rq, scale)
        self._f64 = _pages.zeros((len(_F64), cap))
        for name, row in zip(_F64, self._f64):
            setattr(self, name, row)
        self._q = _pages.zeros((3, cap), np.int16)
        self._qx, self._qy, self._qz = self._q
        self._rq = _pages.zeros(cap, np.uint16)
        self._words = tuple(a.view(np.uint64) for a in self._q)  # read_floor's view
        # frames: origin (world units), largest rq (frame units) and 1 / scale (a power of two). Two rows at
        # least, so that the column view _bs is strided in every index, the warm-up's of one block too (a view
        # of one row is contiguous: a kernel compiled for it was compiled again at the first real build)
        self._bo = np.zeros((max(2, cap // K.BLOCK), 5))
        self._bo[:, 4] = 1.0
        self._bs = self._bo[:, 4]
        self._rr[:] = -1.0  # padding: no float64 test accepts it
        self._ids = _pages.full(cap, -1, np.int64)  # slot -> id
        self._hits = _pages.zeros(cap, np.int32)  # per-chunk scratch of a query
        self._counts = np.empty(cap // K.CHUNK + 1, dtype=np.int64)
        self._masks = np.empty((cap // K.CHUNK + 1, K.BLOCK), dtype=np.uint8)  # ... and one lane mask a chunk
        self._partial = np.empty(cap // K.CHUNK + 1, dtype=np.uint64)  # read_floor's scratch

    # ----------------------------------------------------------------------------- query
    def _kernel(self, parallel: bool):
        return K.scan if parallel else K.scan_serial

    def _arrays(self) -> tuple:
        return self._q, self._rq, self._bo, self._f64, self._ids

    def _query_many(self, points: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> int:
        """Groups of up to ``GROUP`` points, each group in one pass over the arrays (a chunk read once, then
        tested against every point of the group from cache: :mod:`viewer.index._scan_many_kernels`); the
        answers, in each point's order, are a single query's."""
        if points.shape[0] < 2:
            return super()._query_many(points, offsets, out)
        return self._group_query(points, offsets, out, self._n >= PARALLEL_FROM)

    def _warm_many(self) -> None:
        # the tiny warm-up index shares a batch on one thread: compile the threaded group kernel too
        pts = np.zeros((2, 3))
        offsets = np.empty(3, dtype=np.int64)
        out = np.empty(2 * self._n + 2, dtype=np.int64)
        for parallel in (True, False):
            self._group_query(pts, offsets, out, parallel)

    def _group_query(self, points: np.ndarray, offsets: np.ndarray, out: np.ndarray, parallel: bool) -> int:
        """:meth:`_query_many` of two points or more, on every core or on one."""
        k, n = points.shape[0], self._n
        cap = self._x.size
        if getattr(self, "_group_hits", None) is None or self._group_hits.shape[1] != cap:
            self._group_hits = np.empty((MK.GROUP, cap), dtype=np.int32)
            self._group_counts = np.empty((MK.GROUP, cap // K.CHUNK + 1), dtype=np.int64)
        kernel = MK.scan_group if parallel else MK.scan_group_serial
        q, rq, bo, f64, ids = self._arrays()
        offsets[0] = 0
        pos = 0
        for g0 in range(0, k, MK.GROUP):
            g1 = min(k, g0 + MK.GROUP)
            nc = kernel(q, rq, bo, f64, n, points, g0, g1, self._group_counts, self._group_hits, self._masks)
            pos = MK.gather_group(ids, self._group_hits, self._group_counts, nc, g1 - g0, g0, out, pos, offsets)
        self._record(n * k, pos)
        return pos

    def read_floor(self, parallel: bool | None = None) -> float:
        """Read the arrays every query reads whole (the int16 centres, 6 bytes an object) once, chunked and
        threaded as a query does (the time of this call is the scan's physical floor). Returns a
        meaningless sum."""
        if parallel is None:
            parallel = self._n >= PARALLEL_FROM
        kernel = K.read_floor if parallel else K.read_floor_serial
        return float(kernel(*self._words, self._n, self._partial))

    # ----------------------------------------------------------------------------- updates
    def _lanes(self):
        return self._x, self._y, self._z, self._r, self._qx, self._qy, self._qz, self._rq, self._bo, self._bs

    def _frame_all(self) -> None:
        K.frame_all(*self._lanes(), self._n)

    def _grow(self) -> None:
        old = {name: getattr(self, name) for name in ("_f64", "_q", "_rq", "_ids", "_bo")}
        self._alloc(2 * self._x.size)
        for name, a in old.items():
            if name in ("_f64", "_q"):  # rows: the slots are the second axis
                getattr(self, name)[:, : a.shape[1]] = a
            else:
                getattr(self, name)[: a.shape[0]] = a

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        if self._n == self._x.size:
            self._grow()
        s = self._n
        self._x[s], self._y[s], self._z[s], self._r[s], self._rr[s] = x, y, z, r, r * r
        self._n = s + 1
        K.fit_slot(*self._lanes(), s, self._n)
        i = self._idt.new_id(s)
        self._ids[s] = i
        return i

    def _remove(self, i: int) -> None:
        self._n = K.remove_slot(self._x, self._y, self._z, self._r, self._rr, self._qx, self._qy, self._qz, self._rq,
                                self._bo, self._bs, self._ids, self._idt.slots, i, self._n)

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        s = int(self._idt.slots[i])
        if r == r:  # NaN: keep the radius
            self._r[s], self._rr[s] = r, r * r
        self._x[s], self._y[s], self._z[s] = x, y, z
        K.fit_slot(*self._lanes(), s, self._n)

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        slots = self._idt.slots[ids]
        K.move_rows(self._x, self._y, self._z, self._r, self._rr, self._qx, self._qy, self._qz, self._rq, self._bo,
                    self._bs, slots, centres, radii, self._n)

    def nbytes(self) -> int:
        arrays = ("_f64", "_q", "_rq", "_bo", "_ids", "_hits", "_counts", "_masks", "_partial")
        return sum(getattr(self, a).nbytes for a in arrays) + self._idt.slots.nbytes

    def _warm_more(self) -> None:
        super()._warm_more()
        for parallel in (True, False):  # the floor too
            self.read_floor(parallel)


def slot_order(centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Row indices (N,) int64 of ``centres`` (N, 3) / ``radii`` (N,) in the order a build stores them: by
    octave of radius, then in the Morton order of the centres. A block's objects then share one octave of
    radius (one large radius no longer coarsens the small ones' test) and lie close together, and the
    objects one query accepts, mostly the large ones, fill a few blocks instead of flagging most of them.
    Against Morton order alone (1e6, blocks of 64, the masked recheck): the star field's query several times
    faster, the diagonal's with r = 5 * 200**(u**4) nearly twice as fast, uniform worlds unchanged."""
    order = morton_order(centres)
    octave = np.frexp(radii[order])[1]  # r in [2**(e-1), 2**e); 0 for r = 0
    return order[np.argsort(octave, kind="stable")]


def _capacity(n: int) -> int:
    """Slots for ``n`` objects: whole blocks, at least one."""
    return max(K.BLOCK, -(-n // K.BLOCK) * K.BLOCK)
