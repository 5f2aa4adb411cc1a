"""The seed's radius-banded tree in two dimensions, for flat worlds (J. Matthews, "A Fast Algorithm for
Adaptive View Distance": "applies to a single dimension ... extends trivially to more dimensions").

Most open-world games live on a plane (terrain, forests, cities: thousands of units wide, tens high).
This is the paper's structure as a quadtree over the two axes along which the scene's centres spread
widest; the third axis is not in the tree, the exact float64 predicate tests it. Kernels:
:mod:`viewer.index.rivals._quadtree_kernels`.
"""

from __future__ import annotations

import math

import numpy as np

from . import _quadtree_kernels as K
from .._contract import SphereIndex, as_objects, grown

__all__ = ["Quadtree", "fit_root", "grown_slots"]


def _pow2_at_least(x: float) -> float:
    """The smallest power of two >= x (x > 0)."""
    m, e = math.frexp(x)
    return math.ldexp(1.0, e - 1) if m == 0.5 else math.ldexp(1.0, e)


def _pow2_at_most(x: float) -> float:
    """The largest power of two <= x (x > 0)."""
    m, e = math.frexp(x)
    return math.ldexp(1.0, e - 1)


def fit_root(u: np.ndarray, v: np.ndarray, radii: np.ndarray) -> tuple[float, float, float, float]:
    """The root ``(u0, v0, edge, emin)`` for centres ``u``, ``v`` (M,) and ``radii`` (M,) float64: the root's
    half-open box holds every centre and :func:`fits <viewer.index.rivals._quadtree_kernels.fits>` every radius;
    ``emin`` (the finest edge) is a power of two near four times the 1st percentile of the radii (a node
    of edge S holds radii in about [S/4, S/2]), at least 2^-20 of the root and large enough that every
    corner stays within ``2^48 emin`` of the origin; corners are multiples of it (exact). World units."""
    if u.size:
        lo_u, hi_u, lo_v, hi_v = float(u.min()), float(u.max()), float(v.min()), float(v.max())
        rmax = float(radii.max())
        pos = radii[radii > 0]
        small = float(np.percentile(pos, 1.0)) if pos.size else 1.0
    else:
        lo_u = hi_u = lo_v = hi_v = rmax = 0.0
        small = 1.0
    extent = max(hi_u - lo_u, hi_v - lo_v)
    emin = max(_pow2_at_most(4.0 * small), 2.0**-480)
    while True:
        # corners are multiples of emin (not of the root's edge: aligned roots around a negative corner
        # would never reach a positive centre)
        u0 = math.floor(lo_u / emin) * emin
        v0 = math.floor(lo_v / emin) * emin
        s = _pow2_at_least(max(extent, emin))
        while not (K.fits(rmax, s) and hi_u < u0 + s and hi_v < v0 + s):
            s *= 2.0
        need = max(abs(u0), abs(v0)) + s
        if s * 2.0**-20 > emin:
            emin = s * 2.0**-20
        elif need > 2.0**48 * emin:
            emin = _pow2_at_least(need * 2.0**-48)
        else:
            return u0, v0, s, emin


def grown_slots(sd: np.ndarray, sl: np.ndarray, sid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The object slot arrays (rows ``sd`` (S, 4), links ``sl`` (S, 3), ids ``sid`` (S,)) doubled, the new
    slots empty (links and ids -1): for the quadtree and the loose octree, whose lists share kernels."""
    cap = 2 * sd.shape[0]
    return grown(sd, cap, 0.0), grown(sl, cap, -1), grown(sid, cap, -1)


class Quadtree(SphereIndex):
    """The paper's radius-banded tree over two axes (a quadtree); the third axis tested exactly.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    axes : (2,) ints of 0, 1, 2, optional
        The tree's two axes (default: the two along which the centres spread widest; ties: the lower
        axis).

    A node of edge S holds the spheres whose centre lies in its half-open box (on the two axes) and whose
    radius is in about [S/4, S/2] (exactly: it fits the node, not a child; see the kernel module's
    docstring for the conservative bound that makes it exact); smaller go to a lazily made child of edge
    S/2, larger up; nodes finer than ``emin`` (:func:`fit_root`) hold every smaller sphere. Beyond the
    paper, as the octree does: a leaf keeps smaller spheres while it holds fewer than 16 objects (a bucket
    leaf: far fewer nodes, and most small moves stay in their leaf; such a sphere only ever leaves it, so a
    node holds at most 16 below its band); a node keeps its objects in four lists by the quadrant of their
    centre, each with the float64 box of its spheres, and the box of its whole subtree (padded so rounding
    never loses one): a query scans a list only if the point is in its box and enters a child only if it is
    in the child's test box and subtree box (on the flat world candidates per visible object 6.6 -> 3.6
    with the quadrant lists). Boxes grow on inserts and moves and never shrink (looser, never wrong).

    Promises (tested in ``tests/index/test_looseoctree_quadtree.py``):

    - **at most 4 nodes entered per level** (``stats.max_nodes_per_level``), for every point, boundaries
      included: a child is entered only if the point is in its test box ``[a - S/2, a + 3S/2)`` on both
      axes, two of which hold any point on each axis;
    - **depth** at most ``log2(root edge / emin) <= 20`` below the root (when the root never grew); at
      most 16 spheres in a node below its band (:meth:`check`);
    - **a move** that stays in its node rewrites one row (O(1)); otherwise the paper's in-place mutation
      (up from the old node to one whose box holds it, then down, then the old node cleaned up), O(levels
      between); insert and remove O(depth); a centre outside the root or a radius too large wraps the root
      in parents, and a growth that would break exact corners rebuilds on a fitted root (ids kept).
    """

    name = "quadtree"
    updates_in_place = True

    def __init__(self, centres, radii, axes=None):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        self.axes = self._check_axes(centres, axes)
        self._work = np.zeros(K.DEPTHS + 4 * K.DEPTHS, dtype=np.int64)
        self._build(centres, radii, np.arange(radii.size, dtype=np.int64), radii.size)

    @staticmethod
    def _check_axes(centres: np.ndarray, axes) -> tuple[int, int]:
        if axes is None:
            spread = np.ptp(centres, axis=0) if centres.shape[0] else np.zeros(3)
            a, b = sorted(np.argsort(-spread, kind="stable")[:2].tolist())
            return a, b
        try:
            a, b = (int(x) for x in axes)
            ok = {a, b} <= {0, 1, 2} and a != b and all(not isinstance(x, (bool, np.bool_, float)) for x in axes)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"quadtree: axes must be two different axes of 0, 1, 2, got {axes!r}")
        return a, b

    # ------------------------------------------------------------------------- build
    def _build(self, centres: np.ndarray, radii: np.ndarray, ids: np.ndarray, next_id: int,
               pending: tuple[float, float, float] | None = None) -> None:
        """Build over ``centres`` (M, 3), ``radii`` (M,) with ids ``ids`` (M,); ``pending`` (u, v, r): an
        object about to be placed that the root must hold too."""
        a0, a1 = self.axes
        u, v, r = centres[:, a0], centres[:, a1], radii
        if pending is not None:
            u, v, r = (np.append(x, y) for x, y in zip((u, v, r), pending))
        u0, v0, s, emin = fit_root(u, v, r)
        n = radii.size
        self._meta = np.array([0, 0, -1, n, -1, n, a0, a1], dtype=np.int64)
        self._fm = np.array([emin])
        cap = max(64, n // 8) + 2 * K.NODE_ROOM
        self._nf = np.zeros((cap, 3))
        self._ni = np.full((cap, 5), -1, dtype=np.int32)
        self._bx = np.zeros((cap, 30))
        self._head = np.full(4 * cap, -1, dtype=np.int32)
        self._count = np.zeros(4 * cap, dtype=np.int32)
        K.new_node(*self._tree(), -1, u0, v0, s)
        obj_node = np.empty(n, dtype=np.int64)
        done = 0
        while True:
            done = K.build_place(centres, radii, *self._tree(), self._fm, obj_node, done)
            if done == n:
                break
            self._grow_nodes()
        nn = int(self._meta[K.NODE_TOP])
        off = np.zeros(4 * nn + 1, dtype=np.int64)
        np.cumsum(self._count[: 4 * nn], out=off[1:])
        scap = max(16, n + n // 8)
        self._sd = np.zeros((scap, 4))
        self._sl = np.full((scap, 3), -1, dtype=np.int32)
        self._sid = np.full(scap, -1, dtype=np.int64)
        self._id2s = np.full(max(16, next_id), -1, dtype=np.int64)
        K.fill_lists(centres, radii, ids, obj_node, off, self._head, self._count, self._sd, self._sl, self._sid,
                     self._id2s)
        K.build_boxes(self._ni, self._bx, self._head, self._meta, self._sd, self._sl)
        self._next_id = next_id

    def _tree(self) -> tuple:
        """The node arrays every kernel takes: nf, ni, bx, head, count, meta."""
        return self._nf, self._ni, self._bx, self._head, self._count, self._meta

    def _grow_nodes(self) -> None:
        cap = 2 * self._nf.shape[0]
        self._nf = grown(self._nf, cap, 0.0)
        self._ni = grown(self._ni, cap, -1)
        self._bx = grown(self._bx, cap, 0.0)
        self._head = grown(self._head, 4 * cap, -1)
        self._count = grown(self._count, 4 * cap, 0)

    def _grow(self) -> None:
        m = self._meta
        if m[K.SLOT_FREE] < 0 and m[K.SLOT_TOP] >= self._sd.shape[0]:
            self._sd, self._sl, self._sid = grown_slots(self._sd, self._sl, self._sid)
        if m[K.NODE_TOP] + K.NODE_ROOM > self._nf.shape[0]:
            self._grow_nodes()

    def _rebuild(self, x: float, y: float, z: float, r: float) -> None:
        """Rebuild on a root fitted to every live object and to (x, y, z, r), ids kept."""
        slots = self._id2s[: self._next_id]
        ids = np.flatnonzero(slots >= 0)
        rows = self._sd[slots[ids]]
        p = (x, y, z)
        self._build(np.ascontiguousarray(rows[:, :3]), np.ascontiguousarray(rows[:, 3]), ids, self._next_id,
                    (p[self.axes[0]], p[self.axes[1]], r))

    def _retry(self, status: int, x: float, y: float, z: float, r: float) -> None:
        """Make what an operation that returned ``status`` needs before it is tried again."""
        if status == K.NEED_ROOM:
            self._grow()
        else:
            self._rebuild(x, y, z, r)

    # ------------------------------------------------------------------------- contract
    def __len__(self) -> int:
        return int(self._meta[K.NLIVE])

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._next_id, self._id2s

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        return K.query(px, py, pz, *self._tree(), self._sd, self._sl, self._sid, out, self._work,
                       self._stats)

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        i = self._next_id
        if i >= self._id2s.size:
            self._id2s = grown(self._id2s, 2 * self._id2s.size, -1)
        while True:
            st = K.insert_one(i, x, y, z, r, *self._tree(), self._fm, self._sd, self._sl, self._sid,
                              self._id2s)
            if st == K.OK:
                break
            self._retry(st, x, y, z, r)
        self._next_id = i + 1
        return i

    def _remove(self, i: int) -> None:
        K.remove_one(i, *self._tree(), self._sl, self._sid, self._id2s)

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        while True:
            st = K.move_one(i, x, y, z, r, *self._tree(), self._fm, self._sd, self._sl, self._id2s)
            if st == K.OK:
                return
            self._retry(st, x, y, z, self._sd[self._id2s[i], 3] if r != r else r)

    def _move_many(self, ids: np.ndarray, cen: np.ndarray, rad: np.ndarray) -> None:
        done = 0
        while done < ids.size:
            done, st = K.move_many(done, ids, cen, rad, *self._tree(), self._fm, self._sd, self._sl,
                                   self._id2s)
            if st != K.OK:
                r = float(rad[done])
                self._retry(st, *cen[done].tolist(), self._sd[self._id2s[ids[done]], 3] if r != r else r)

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (*self._tree(), self._fm, self._sd, self._sl, self._sid, self._id2s, self._work))

    # ------------------------------------------------------------------------- inspection
    @property
    def node_count(self) -> int:
        """Nodes in use now (the root included)."""
        m = self._meta
        return int(np.count_nonzero(self._nf[: m[K.NODE_TOP], 2] > 0.0))

    def depth(self) -> int:
        """Levels below the root of the deepest node."""
        top = int(self._meta[K.NODE_TOP])
        e = self._nf[:top, 2]
        return int(round(math.log2(self._nf[self._meta[K.ROOT], 2] / e[e > 0].min())))

    def check(self) -> None:
        """Verify the tree's invariants (:func:`viewer.index.rivals._quadtree_kernels.check`); AssertionError if not."""
        bad = K.check(*self._tree(), self._fm, self._sd, self._sl)
        assert bad == 0, f"quadtree: {bad} invariant violations"
