"""Hierarchical hash grid: the "series of arrays" variant the adaptive view-distance octree's author
mentions (J. Matthews, "A Fast Algorithm for Adaptive View Distance"), one grid per radius band.

Level k holds the spheres of radius in (base 2^(k-1), base 2^k] (level 0: r <= base), each stored
once, in the cell of its centre, on a grid whose edge is ``cell_factor * 2 * base * 2^k``: with the
default ``cell_factor = 1`` a cell is as wide as its band's largest sphere, so a sphere holding p has
its centre in one of at most 2 cells per axis around p, 2^3 = 8 cells per level. Grids are hashed
(unbounded world, memory only for occupied cells) and share one hash map keyed (level, x, y, z).

- query: for each non-empty level, probe the cells of the box p +- (largest radius on that level),
  skip a cell whose own largest radius rules it out, test its objects: logarithmically many levels in
  the radius range, at most 8 cells each (``stats.max_nodes_per_level``);
- insert / remove / move: O(1): each cell's objects are a doubly linked list threaded through one
  slot array (laid out cell by cell at build time, so a query streams contiguous rows); a move inside
  the same cell and band only rewrites the row.

Unlike the octree there is no hierarchy between levels: a far-away dense cluster costs a probe per level
but no descent, and a level's window is as wide as its largest sphere even where only small ones live.
"""

from __future__ import annotations

import math

import numpy as np

from . import _hgrid_kernels as K
from ....domain import RADIUS_LIMIT
from ..._contract import SphereIndex, as_length, as_objects, as_option, grown
from .hashgrid import CellTable

__all__ = ["HGrid", "default_base"]


def default_base(radii: np.ndarray, percentile: float = 1.0) -> float:
    """The largest power of two <= the ``percentile`` of the positive radii (1.0 when none): level 0's
    band then starts at the small end of the data. World units."""
    pos = radii[radii > 0]
    if pos.size == 0:
        return 1.0
    v = float(np.percentile(pos, percentile))
    return 2.0 ** math.floor(math.log2(v))


class HGrid(SphereIndex):
    """Hierarchical hash grid: one hashed grid per power-of-two radius band.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    base : float, optional
        Top of level 0's radius band, world units (default: ``default_base(radii)``).
    cell_factor : float
        Cell edge over the band's largest diameter (default 1: at most 8 cells per level; 2 halves the
        cells probed on average for 8x the objects per cell).
    """

    name = "hgrid"
    updates_in_place = True
    def __init__(self, centres, radii, base=None, cell_factor: float = 1.0):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        base = default_base(radii) if base is None else as_length(base, "hgrid: base")
        cell_factor = as_option(cell_factor, "hgrid: cell_factor (a cell at least a band's diameter)", 1.0,
                                RADIUS_LIMIT)
        self.base = float(base)
        self.cell_factor = float(cell_factor)
        edges = np.minimum(2.0 * self.cell_factor * self.base * 2.0 ** np.arange(K.MAXL), 1e300)
        self._linv = 1.0 / edges
        self._build(centres, radii)

    # ------------------------------------------------------------------------- build
    def _build(self, centres: np.ndarray, radii: np.ndarray) -> None:
        n = radii.size
        self._lc = np.zeros(K.MAXL, dtype=np.int64)
        self._lr = np.zeros(K.MAXL)
        self._ct = ct = CellTable(max(16, n // 4))
        self._crm = np.zeros(ct.ck.shape[0])
        cnt = np.zeros(ct.ck.shape[0], dtype=np.int64)
        cobj = np.empty(n, dtype=np.int32)
        s = 0
        while True:
            s = K.build_count(s, centres, radii, self.base, self._linv, ct.tab, ct.ck, ct.cfree, ct.cmeta,
                              self._crm, cnt, cobj, self._lc, self._lr)
            if s == n:
                break
            self._grow_cells()
            if cnt.size < ct.ck.shape[0]:
                cnt = grown(cnt, ct.ck.shape[0], 0)
        ncell = int(ct.cmeta[0])
        off = np.zeros(ncell + 1, dtype=np.int64)
        np.cumsum(cnt[:ncell], out=off[1:])
        scap = max(16, n + n // 8)
        self._sd = np.zeros((scap, 4))
        self._sl = np.full((scap, 3), -1, dtype=np.int32)
        self._sid = np.full(scap, -1, dtype=np.int64)
        self._id2s = np.full(max(16, n), -1, dtype=np.int64)
        K.build_fill(centres, radii, cobj, off, np.empty(ncell, dtype=np.int64), ct.ck, self._sd, self._sl, self._sid,
                     self._id2s)
        self._meta = np.zeros(4, dtype=np.int64)
        self._meta[K.SLOT_TOP] = n
        self._meta[K.NLIVE] = n
        self._next_id = n

    def _grow_cells(self) -> None:
        ct = self._ct
        ct.grow_for(1)
        if self._crm.size < ct.ck.shape[0]:
            self._crm = grown(self._crm, ct.ck.shape[0], 0.0)

    def _grow(self) -> None:
        m = self._meta
        if m[K.SLOT_FREEN] == 0 and m[K.SLOT_TOP] >= self._sd.shape[0]:
            cap = 2 * self._sd.shape[0]
            self._sd, self._sl, self._sid = grown(self._sd, cap, 0.0), grown(self._sl, cap, -1), grown(self._sid, cap, -1)
        self._grow_cells()

    # ------------------------------------------------------------------------- contract
    def __len__(self) -> int:
        return int(self._meta[K.NLIVE])

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        ct = self._ct
        return K.query(px, py, pz, ct.tab, ct.ck, ct.cmeta, self._crm, self._sd, self._sl, self._sid, self._lc, self._lr,
                    self._linv, out, self._stats)

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._next_id, self._id2s

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        i = self._next_id
        if i >= self._id2s.size:
            self._id2s = grown(self._id2s, 2 * self._id2s.size, -1)
        while True:
            ct = self._ct
            if K.insert_one(i, x, y, z, r, self.base, self._linv, ct.tab, ct.ck, ct.cfree, ct.cmeta, self._crm,
                            self._sd, self._sl, self._sid, self._id2s, self._lc, self._lr, self._meta):
                break
            self._grow()
        self._next_id = i + 1
        return i

    def _remove(self, i: int) -> None:
        ct = self._ct
        K.remove_one(i, ct.tab, ct.ck, ct.cfree, ct.cmeta, self._sl, self._sid, self._id2s, self._lc, self._lr,
                     self._meta)

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        # r NaN keeps the radius (the kernels follow the contract's convention)
        while True:
            ct = self._ct
            if K.move_one(i, x, y, z, r, self.base, self._linv, ct.tab, ct.ck, ct.cfree, ct.cmeta, self._crm,
                          self._sd, self._sl, self._id2s, self._lc, self._lr):
                break
            self._grow_cells()

    def _move_many(self, ids: np.ndarray, cen: np.ndarray, rad: np.ndarray) -> None:
        done = 0
        while done < ids.size:
            ct = self._ct
            done = K.move_many(done, ids, cen, rad, self.base, self._linv, ct.tab, ct.ck, ct.cfree, ct.cmeta,
                               self._crm, self._sd, self._sl, self._id2s, self._lc, self._lr)
            if done < ids.size:
                self._grow_cells()

    def nbytes(self) -> int:
        arrays = (self._sd, self._sl, self._sid, self._id2s, self._crm, self._lc, self._lr, self._linv, self._meta)
        return sum(a.nbytes for a in arrays) + self._ct.nbytes()

    # ------------------------------------------------------------------------- inspection
    def level_counts(self) -> np.ndarray:
        """Objects per level, (64,) int64; level k holds radii in (base 2^(k-1), base 2^k]."""
        return self._lc.copy()

    @property
    def cell_count(self) -> int:
        """Grid cells in use now (the hash table's live cells)."""
        return self._ct.live
