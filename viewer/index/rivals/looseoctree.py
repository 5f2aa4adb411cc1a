"""Loose octree (T. Ulrich, "Loose Octrees", Game Programming Gems, 2000): what many engines ship for objects
of every size. Each object lives at the depth its radius selects, in the cell of its centre, whose bounds are
stretched by a looseness factor k so that the cell's *loose* bounds hold the whole sphere: insertion and
moves compute the cell and need no search. Kernels: :mod:`viewer.index.rivals._looseoctree_kernels`.
"""

from __future__ import annotations

import math

import numpy as np

from . import _looseoctree_kernels as K
from .._contract import SphereIndex, as_objects, as_option, grown
from ._quadtree_kernels import fits
from .quadtree import grown_slots

__all__ = ["LooseOctree", "grid_levels"]

#: finest cells keep every bound within this many finest edges of the origin (exact with room to spare)
_EXACT = 2.0**-40


def _pow2_at_least(x: float) -> float:
    m, e = math.frexp(x)
    return math.ldexp(1.0, e - 1) if m == 0.5 else math.ldexp(1.0, e)


def grid_levels(centres: np.ndarray, radii: np.ndarray, looseness: float, cells: int):
    """The levels of a loose octree over ``centres`` (N, 3) and ``radii`` (N,) float64: ``(edge (NL,),
    dim (NL, 3) int64, org (3,))``. Level 0's edge is the power of two at least the centres' widest extent;
    each next level halves it while the total of cells stays within ``cells``, the 1st percentile of the
    radii would still live there, and the finest edge is at least 2^-40 of the world's largest coordinate
    (exact bounds). ``org`` is the centres' lowest corner rounded down to a multiple of the finest edge.
    World units."""
    if radii.size:
        lo, hi = centres.min(axis=0), centres.max(axis=0)
        pos = radii[radii > 0]
        small = float(np.percentile(pos, 1.0)) if pos.size else 0.0
    else:
        lo = hi = np.zeros(3)
        small = 0.0
    ext = float((hi - lo).max())
    big = float(max(np.abs(lo).max(), np.abs(hi).max()))
    e0 = _pow2_at_least(max(ext, 2.0**-400))
    e_min = max(_pow2_at_least(max(big, e0) * _EXACT), 2.0**-400)
    e0 = max(e0, e_min)
    edges = [e0]
    total = _cells(lo, hi, e0)
    while len(edges) < 48:
        e = edges[-1] * 0.5
        more = _cells(lo, hi, e)
        if e < e_min or total + more > cells or not fits(small, (looseness - 1.0) * e):
            break
        edges.append(e)
        total += more
    edge = np.array(edges)
    org = np.floor(lo / edge[-1]) * edge[-1]
    dim = (np.floor((hi - org)[None, :] / edge[:, None]) + 1).astype(np.int64)
    return edge, dim, org


def _cells(lo: np.ndarray, hi: np.ndarray, e: float) -> int:
    return int(np.prod(np.floor((hi - lo) / e) + 2))


class LooseOctree(SphereIndex):
    """Loose octree: one full grid of cells per level, each object in one cell, found by arithmetic.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    looseness : float in (1, 2], a multiple of 1/256
        k: a cell's loose bounds are its box widened by (k - 1)/2 of its edge on every side (default 2: as
        wide again as the cell). An object lives on the deepest level whose widening holds its reach (its
        radius and the predicate's rounding), so on level L (edge e) radii up to (k - 1) e / 2.
    cells_per_object : float >= 0
        Cell budget: the levels stop before their cells total more than this times N (plus 4096).

    Level 0's cells are as wide as the world; each level halves the edge (see :func:`grid_levels`); cells
    at a grid's edge reach to infinity, so a centre moved or inserted outside the build's box is clamped onto
    it (exact; only slower there). A sphere too large for level 0 goes to one big list every query tests.

    Promises (tested in ``tests/index/test_looseoctree_quadtree.py``):

    - a query enters **at most 2 cells per axis, 8 per level** (``stats.max_nodes_per_level``), for every
      point, boundaries included, with ``k <= 2``: the cells whose loose bounds hold the point;
    - **depth**: at most 48 levels (the budget and the radii usually stop it far sooner);
    - **insert, remove and move are O(1)**: an object's level comes from its radius and its cell from
      its centre by arithmetic, the cell's list is doubly linked; a move that keeps its cell rewrites one row.
    """

    name = "looseoctree"
    updates_in_place = True

    def __init__(self, centres, radii, looseness: float = 2.0, cells_per_object: float = 2.0):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        k = as_option(looseness, "looseoctree: looseness", 1.0, 2.0, lo_open=True)
        if k * 256.0 != math.floor(k * 256.0):
            raise ValueError(f"looseoctree: looseness must be a multiple of 1/256, got {looseness!r}")
        self.looseness = k
        self.cells_per_object = as_option(cells_per_object, "looseoctree: cells_per_object", 0.0)
        n = radii.size
        edge, dim, org = grid_levels(centres, radii, k, int(self.cells_per_object * n) + 4096)
        nl = edge.size
        self._edge, self._dim, self._org = edge, dim, org
        self._inv = 1.0 / edge
        self._loose = edge * ((k - 1.0) / 2.0)
        self._off = np.zeros(nl + 1, dtype=np.int64)
        np.cumsum(np.prod(dim, axis=1), out=self._off[1:])
        ncell = int(self._off[nl]) + 1  # the big list last
        self._head = np.full(ncell, -1, dtype=np.int32)
        self._count = np.zeros(ncell, dtype=np.int32)
        self._lc = np.zeros(nl + 1, dtype=np.int64)
        self._lr = np.zeros(nl + 1)
        obj_cell = np.empty(n, dtype=np.int64)
        K.build_cells(centres, radii, *self._grid(), obj_cell, self._count, self._lc, self._lr)
        off = np.zeros(ncell + 1, dtype=np.int64)
        np.cumsum(self._count, out=off[1:])
        scap = max(16, n + n // 8)
        self._sd = np.zeros((scap, 4))
        self._sl = np.full((scap, 3), -1, dtype=np.int32)
        self._sid = np.full(scap, -1, dtype=np.int64)
        self._id2s = np.full(max(16, n), -1, dtype=np.int64)
        K.fill_lists(centres, radii, np.arange(n, dtype=np.int64), obj_cell, off, self._head, self._count, self._sd,
                     self._sl, self._sid, self._id2s)
        self._meta = np.array([n, -1, n], dtype=np.int64)
        self._next_id = n

    def _grid(self) -> tuple:
        """The level arrays every kernel takes first: edge, inv, loose, dim, off, org."""
        return self._edge, self._inv, self._loose, self._dim, self._off, self._org

    def _lists(self) -> tuple:
        """The cell lists and level counters: head, count, lc, lr."""
        return self._head, self._count, self._lc, self._lr

    # ------------------------------------------------------------------------- contract
    def __len__(self) -> int:
        return int(self._meta[K.NLIVE])

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._next_id, self._id2s

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        return K.query(px, py, pz, self._edge, self._inv, self._loose, self._dim, self._off, self._org, self._head,
                       self._count, self._lc, self._lr, self._sd, self._sl, self._sid, out, self._stats)

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        i = self._next_id
        if i >= self._id2s.size:
            self._id2s = grown(self._id2s, 2 * self._id2s.size, -1)
        while not K.insert_one(i, x, y, z, r, *self._grid(), *self._lists(), self._sd, self._sl, self._sid,
                               self._id2s, self._meta):
            self._sd, self._sl, self._sid = grown_slots(self._sd, self._sl, self._sid)
        self._next_id = i + 1
        return i

    def _remove(self, i: int) -> None:
        K.remove_one(i, self._loose, *self._lists(), self._sd, self._sl, self._sid, self._id2s, self._meta)

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        K.move_one(i, x, y, z, r, *self._grid(), *self._lists(), self._sd, self._sl, self._id2s)

    def _move_many(self, ids: np.ndarray, cen: np.ndarray, rad: np.ndarray) -> None:
        K.move_many(ids, cen, rad, *self._grid(), *self._lists(), self._sd, self._sl, self._id2s)

    def nbytes(self) -> int:
        arrays = (self._edge, self._inv, self._loose, self._dim, self._off, self._org, self._head, self._count,
                  self._lc, self._lr, self._sd, self._sl, self._sid, self._id2s, self._meta)
        return sum(a.nbytes for a in arrays)

    # ------------------------------------------------------------------------- inspection
    @property
    def levels(self) -> int:
        """Grid levels (the big list not counted)."""
        return int(self._edge.size)

    def level_counts(self) -> np.ndarray:
        """Objects per level, (levels + 1,) int64; the last entry is the big list."""
        return self._lc.copy()

    def check(self) -> None:
        """Verify the invariants (:func:`viewer.index.rivals._looseoctree_kernels.check`); AssertionError if not."""
        bad = K.check(*self._grid(), *self._lists(), self._sd, self._sl, np.zeros(self._edge.size + 1, dtype=np.int64))
        assert bad == 0, f"looseoctree: {bad} invariant violations"
