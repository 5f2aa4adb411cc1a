"""A grid rebuilt from scratch every frame: the rival that keeps no structure across updates.

Research on moving objects (Sowell et al., "An Experimental Analysis of Iterated Spatial Joins in Main
Memory", VLDB 2013) finds that rebuilding an index from scratch each tick is hard to beat unless few objects
move. This rival is that approach at its fastest here, so the testbed can say at which share of movers it wins:

- the objects are rows (x, y, z, r) by slot, as brute force keeps them; an update only writes rows;
- ``move_many`` (a moving world's frame) then rebuilds the whole grid over all N objects, on every core:
  one level per power-of-two radius band, its cells hashed into buckets, the rows laid out bucket by bucket by a
  counting sort (:mod:`viewer.index.rivals._rebuild_kernels`; on one thread below 65,536 objects); single inserts, removes and moves mark it
  stale and the next query rebuilds;
- a query probes the 27 cells around the point on each non-empty level and tests their rows.

Memory: 40 bytes a slot (rows and id), 48 more for the grid (its rows, ids and keys), 4 a bucket a thread.
"""

from __future__ import annotations

import numba
import numpy as np

from . import _rebuild_kernels as K
from .._contract import IdTable, SphereIndex, as_objects, grown

__all__ = ["RebuildGrid"]


class RebuildGrid(SphereIndex):
    """A hashed multi-level grid rebuilt over every object after each batch of moves:
    ``RebuildGrid(centres (N, 3), radii (N,))``, world units, float64."""

    name = "rebuild"

    def __init__(self, centres, radii):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        n = radii.size
        cap = max(16, n)
        self._x = np.zeros(cap)
        self._y = np.zeros(cap)
        self._z = np.zeros(cap)
        self._r = np.zeros(cap)
        self._x[:n], self._y[:n], self._z[:n] = centres.T
        self._r[:n] = radii
        self._ids = np.arange(cap, dtype=np.int64)  # slot -> id
        self._idt = IdTable(n)
        self._n = n
        self._threads = max(1, numba.get_num_threads())  # from K.PARALLEL_FROM objects
        self._lcount = np.empty((1, K.LEVELS), dtype=np.int64)
        self._loff = np.zeros(K.LEVELS, dtype=np.int64)
        self._lmask = np.zeros(K.LEVELS, dtype=np.int64)
        self._linv = np.ones(K.LEVELS)
        self._counts = np.empty((1, 0), dtype=np.int32)
        self._start = np.zeros(1, dtype=np.int64)
        self._probe = np.empty(27, dtype=np.int64)
        self._rebuild()

    def __len__(self) -> int:
        return self._n

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._idt.state()

    # ----------------------------------------------------------------------------- the build
    def _rebuild(self) -> None:
        """The grid from scratch over the live rows."""
        n, cap = self._n, self._x.size
        rbits = self._r.view(np.int64)
        threads = self._threads if n >= K.PARALLEL_FROM else 1
        if self._lcount.shape[0] != threads:
            self._lcount = np.empty((threads, K.LEVELS), dtype=np.int64)
        (K.count_levels if threads > 1 else K.count_levels_serial)(rbits, n, threads, self._lcount)
        per = self._lcount.sum(axis=0)
        levels = np.flatnonzero(per)
        buckets = [1 << max(0, (int(c) // 2 - 1).bit_length()) for c in per[levels]]  # a power of two >= c / 2
        self._loff[levels] = np.cumsum([0, *buckets[:-1]])
        self._lmask[levels] = np.array(buckets, dtype=np.int64) - 1
        self._linv[levels] = np.ldexp(1.0, -(levels - K.LEVEL_BIAS + 1))  # edge 2^(e+1)
        self._levels = levels.astype(np.int64)
        nb = sum(buckets)
        if self._counts.shape != (threads, nb):
            self._counts = np.empty((threads, nb), dtype=np.int32)
            self._start = np.empty(nb + 1, dtype=np.int64)
        if getattr(self, "_rows", None) is None or self._rows.shape[0] != cap:
            self._keys = np.empty(cap, dtype=np.int64)
            self._rows = np.empty((cap, 4))
            self._rid = np.empty(cap, dtype=np.int64)
        (K.count_buckets if threads > 1 else K.count_buckets_serial)(
            self._x, self._y, self._z, rbits, n, threads, self._loff, self._lmask, self._linv, self._keys, self._counts)
        K.place_buckets(self._counts, self._start)
        (K.scatter_rows if threads > 1 else K.scatter_rows_serial)(
            self._x, self._y, self._z, self._r, self._ids, n, threads, self._keys, self._counts, self._rows, self._rid)
        self._stale = False

    # ----------------------------------------------------------------------------- query
    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        if self._stale:
            self._rebuild()
        return K.query(px, py, pz, self._levels, self._loff, self._lmask, self._linv, self._start, self._rows,
                       self._rid, self._probe, out, self._stats)

    # ----------------------------------------------------------------------------- updates: rows only
    def _grow(self) -> None:
        cap = 2 * self._x.size
        for name in ("_x", "_y", "_z", "_r", "_ids"):
            setattr(self, name, grown(getattr(self, name), cap, 0))

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        if self._n == self._x.size:
            self._grow()
        s = self._n
        self._x[s], self._y[s], self._z[s], self._r[s] = x, y, z, r
        i = self._idt.new_id(s)
        self._ids[s] = i
        self._n = s + 1
        self._stale = True
        return i

    def _remove(self, i: int) -> None:
        slots = self._idt.slots
        s = int(slots[i])
        last = self._n - 1
        if s != last:
            for a in (self._x, self._y, self._z, self._r, self._ids):
                a[s] = a[last]
            slots[self._ids[s]] = s
        slots[i] = -1
        self._n = last
        self._stale = True

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        s = int(self._idt.slots[i])
        self._x[s], self._y[s], self._z[s] = x, y, z
        if r == r:  # NaN: keep the radius
            self._r[s] = r
        self._stale = True

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        slots = self._idt.slots[ids]
        new = ~np.isnan(radii)
        if new.any():
            self._r[slots[new]] = radii[new]
        self._x[slots], self._y[slots], self._z[slots] = centres.T
        self._rebuild()  # a frame's moves: the grid is rebuilt now, in the update, not by the first query
