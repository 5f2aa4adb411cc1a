"""Bucket tree, the "endless universe" ("Howto: Endless Universe"): a sparse, unbounded root of
fixed-size cells, each cell a tree whose leaves hold up to ``m`` objects and split into 2^3 children
when they overflow.

Adapted to view spheres the way the article's tree is searched for a viewport:

- an object belongs to the leaf that contains its centre (descending by octant);
- every node keeps the tight box of all the spheres below it (grown on insert, recomputed upwards on
  removal and moves, so it never goes stale), and a query enters a node only if the point is inside
  that box: a far dense cluster costs one box test, and nodes whose spheres are all small are pruned
  close to their cube;
- the cells a sphere holding p can be centred in lie within p +- (largest radius held), so the query
  probes that window of cells in the hash map, or tests every cell's root box when the window has
  more cells than exist;
- each leaf's objects are contiguous blocks of rows (x, y, z, r), usually one, swap-removed, so a
  leaf test streams memory; a removal that leaves 8 sibling leaves with <= m/2 objects merges them back.

A move whose centre stays in its leaf rewrites the row in place and refits the boxes; otherwise it is
removal + insertion. The article's frame-to-frame visibility flags concern rendering, not this query.
"""

from __future__ import annotations

import math

import numpy as np

from . import _buckettree_kernels as K
from ..._contract import as_length, as_objects, grown
from .hashgrid import CellTable, GrowingIndex

__all__ = ["BucketTree", "default_cell_size"]


def default_cell_size(radii: np.ndarray) -> float:
    """The smallest power of two >= the largest diameter (1.0 for no data or point spheres), so the
    window of cells a query probes is at most 2 per axis. World units."""
    d = 2.0 * float(radii.max()) if radii.size else 0.0
    if not (d > 0.0 and np.isfinite(d)):
        return 1.0
    return 2.0 ** math.ceil(math.log2(d))


class BucketTree(GrowingIndex):
    """Hash of fixed-size cells, each an octree of leaves of at most ``m`` objects with tight boxes.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    m : int
        Leaf capacity (default 16); a leaf splits into 8 when it holds more (below 24 levels).
    cell_size : float, optional
        Edge of the root's cells, world units (default: ``default_cell_size(radii)``).
    block_rows : int, optional
        Rows per storage block (default ``min(m, 8)``): a leaf's objects are a chain of blocks, one for
        a typical leaf (a split leaves ~m/8 per child), so the pool is not mostly empty rows.
    """

    name = "buckettree"
    updates_in_place = True
    K = K
    def __init__(self, centres, radii, m: int = 16, cell_size=None, block_rows=None):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 2 <= m <= 1 << 16:
            raise ValueError(f"buckettree: m must be an integer in 2..65536, got {m!r}")
        if block_rows is None:
            block_rows = min(int(m), 8)
        if isinstance(block_rows, bool) or not isinstance(block_rows, (int, np.integer)) or not 1 <= block_rows <= m:
            raise ValueError(f"buckettree: block_rows must be an integer in 1..m, got {block_rows!r}")
        if cell_size is None:
            cell_size = default_cell_size(radii)
        else:
            cell_size = as_length(cell_size, "buckettree: cell_size")
        self.m = int(m)
        self.bs = int(block_rows)
        self.cell_size = float(cell_size)
        self._inv = 1.0 / self.cell_size
        self._stack = np.zeros(8 * K.MAXD + 16, dtype=np.int64)
        self._levels = np.zeros(K.MAXD + 1, dtype=np.int64)
        n = radii.size
        self._ct = CellTable(16)
        groups = max(K.GROUPS_PER_OP + 16, n // self.m)
        blocks = max(K.BLOCKS_PER_OP + 16, n // 3)
        self._ni = np.full((8 * groups, 5), -1, dtype=np.int32)
        self._ng = np.zeros((8 * groups, 4))
        self._nb = np.zeros((8 * groups, 6))
        self._gfree = np.zeros(groups, dtype=np.int32)
        self._bd = np.zeros((blocks * self.bs, 4))
        self._bid = np.full(blocks * self.bs, -1, dtype=np.int64)
        self._bl = np.full((blocks, 3), -1, dtype=np.int32)
        self._bfree = np.zeros(blocks, dtype=np.int32)
        self._loc = np.full(max(16, n), -1, dtype=np.int64)
        self._meta = np.zeros(8, dtype=np.int64)
        self._gm = np.zeros(1)
        self._next_id = n
        if n:
            # insert cell by cell, in Morton order inside a cell, so blocks and nodes are allocated
            # (and later streamed) in spatial order
            order = _spatial_order(centres, self.cell_size)
            self._run(K.insert_many, order, centres[order], radii[order])

    # ------------------------------------------------------------------------- growth
    def _grow(self) -> None:
        m = self._meta
        groups = self._ni.shape[0] // 8
        if m[K.GRP_FREEN] + groups - m[K.GRP_TOP] < K.GROUPS_PER_OP:
            new = 2 * groups
            self._ni = grown(self._ni, 8 * new, -1)
            self._ng = grown(self._ng, 8 * new, 0.0)
            self._nb = grown(self._nb, 8 * new, 0.0)
            self._gfree = grown(self._gfree, new, 0)
        blocks = self._bl.shape[0]
        if m[K.BLK_FREEN] + blocks - m[K.BLK_TOP] < K.BLOCKS_PER_OP:
            new = 2 * blocks
            self._bd = grown(self._bd, new * self.bs, 0.0)
            self._bid = grown(self._bid, new * self.bs, -1)
            self._bl = grown(self._bl, new, -1)
            self._bfree = grown(self._bfree, new, 0)
        self._ct.grow_for(1)

    def _arrays(self):
        ct = self._ct
        return (self.m, self._inv, self.cell_size, ct.tab, ct.ck, ct.cfree, ct.cmeta, self._ni, self._ng, self._nb,
                self._bd, self._bid, self._bl, self._gfree, self._bfree, self._loc, self._meta, self._gm,
                self._stack)


    # ------------------------------------------------------------------------- contract
    def __len__(self) -> int:
        return int(self._meta[K.NLIVE])

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        ct = self._ct
        return K.query(px, py, pz, self.m, self._inv, ct.tab, ct.ck, ct.cmeta, self._ni, self._nb, self._bd, self._bid,
                    self._bl, self._gm, out, self._stack, self._levels, self._stats)

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._next_id, self._loc

    def _grow_ids(self, upto: int) -> None:
        if upto > self._loc.size:
            self._loc = grown(self._loc, max(upto, 2 * self._loc.size), -1)

    def _remove(self, i: int) -> None:
        ct = self._ct
        K.remove_one(i, self.m, ct.tab, ct.ck, ct.cfree, ct.cmeta, self._ni, self._ng, self._nb, self._bd, self._bid,
                     self._bl, self._gfree, self._bfree, self._loc, self._meta)

    def nbytes(self) -> int:
        arrays = (self._ni, self._ng, self._nb, self._gfree, self._bd, self._bid, self._bl, self._bfree, self._loc,
                  self._meta, self._gm, self._stack, self._levels)
        return sum(a.nbytes for a in arrays) + self._ct.nbytes()

    # ------------------------------------------------------------------------- inspection
    def leaves(self) -> list[np.ndarray]:
        """The ids (K,) int64 held by each non-empty leaf (for tests and plots; not fast)."""
        m = self.bs
        out = []
        nodes = np.flatnonzero((self._ni[:, 3] >= 0) & (self._ni[:, 0] < 0) & (self._ni[:, 1] >= 0))
        for n in nodes:
            ids = []
            b = int(self._ni[n, 1])
            while b >= 0:
                ids.extend(self._bid[b * m : b * m + self._bl[b, 0]].tolist())
                b = int(self._bl[b, 1])
            out.append(np.array(ids, dtype=np.int64))
        return out

    def node_boxes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(node ids (K,), cube (K, 4) mid x, y, z, half edge, tight box (K, 6)) of live nodes."""
        live = np.flatnonzero(self._ni[:, 3] >= 0)
        # a group's unused slots (a root's 7 siblings) have parent -1 and depth -1 or 0 but no cube
        live = live[(self._ni[live, 2] >= 0) | (self._ni[live, 4] >= 0)]
        return live, self._ng[live].copy(), self._nb[live].copy()

    def subtree_ids(self, n: int) -> np.ndarray:
        """Ids below node ``n``."""
        stack, ids = [int(n)], []
        while stack:
            v = stack.pop()
            if self._ni[v, 0] >= 0:
                stack.extend(range(int(self._ni[v, 0]), int(self._ni[v, 0]) + 8))
            else:
                b = int(self._ni[v, 1])
                while b >= 0:
                    ids.extend(self._bid[b * self.bs : b * self.bs + self._bl[b, 0]].tolist())
                    b = int(self._bl[b, 1])
        return np.array(ids, dtype=np.int64)

    @property
    def cell_count(self) -> int:
        """Grid cells in use now (the hash table's live cells)."""
        return self._ct.live


def _spatial_order(centres: np.ndarray, cell: float) -> np.ndarray:
    """Ids (N,) int64 sorted by cell, then by a 30-bit Morton code inside the cell."""
    q = np.floor(centres / cell)
    frac = np.clip(((centres / cell) - q) * 1024.0, 0, 1023).astype(np.uint64)
    code = np.zeros(len(centres), dtype=np.uint64)
    for bit in range(10):
        for a in range(3):
            code |= ((frac[:, a] >> np.uint64(bit)) & np.uint64(1)) << np.uint64(3 * bit + a)
    q = np.clip(q, -(2.0**20), 2.0**20).astype(np.int64)
    return np.lexsort((code, q[:, 2], q[:, 1], q[:, 0])).astype(np.int64)
