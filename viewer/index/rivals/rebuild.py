"""A grid rebuilt from scratch every frame: the rival that keeps no structure across updates.

Research on moving objects (Sowell et al., "An Experimental Analysis of Iterated Spatial Joins in Main
Memory", VLDB 2013) finds that rebuilding an index from scratch each tick is hard to beat unless few objects
move. This rival is that approach at its fastest here, so the testbed can say at which share of movers it wins:

- the objects are rows (x, y, z, r) at their ids, as the update's scatter floor keeps them
  (:mod:`viewer.kernels.floors`): an update only writes rows, a removed id's row is marked and skipped;
- ``move_many`` (a moving world's frame) then rebuilds the whole grid over all N objects, on every core:
  one level per power-of-two radius band, its cells hashed into buckets, the rows laid out bucket by bucket by a
  counting sort (:mod:`viewer.index.rivals._rebuild_kernels`; on one thread below 65,536 objects); single inserts, removes and moves mark it
  stale and the next query rebuilds;
- a query probes the 27 cells around the point on each non-empty level and tests their rows.

Memory: 32 bytes an id (its row), 48 more a live object for the grid (its rows, ids and keys), 4 a bucket a
thread.
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
        self._rows = np.zeros((max(16, n), 4))  # id -> (x, y, z, r); r = -1 once removed
        self._rows[:n, :3] = centres
        self._rows[:n, 3] = radii
        self._rows[n:, 3] = -1.0
        self._idt = IdTable(n)  # ids are rows: slot i is id i, -1 once removed
        self._n = n
        self._threads = max(1, numba.get_num_threads())  # from K.PARALLEL_FROM objects
        self._lcount = np.empty((1, K.LEVELS), dtype=np.int64)
        self._loff = np.zeros(K.LEVELS, dtype=np.int64)
        self._lmask = np.zeros(K.LEVELS, dtype=np.int64)
        self._linv = np.ones(K.LEVELS)
        self._counts = np.empty((1, 0), dtype=np.int32)
        self._start = np.zeros(1, dtype=np.int64)
        self._probe = np.empty(27, dtype=np.int64)
        self._keys = np.empty(0, dtype=np.int64)
        self._grid = np.empty((0, 4))
        self._gid = np.empty(0, dtype=np.int64)
        self._rebuild()

    def __len__(self) -> int:
        return self._n

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._idt.state()

    # ----------------------------------------------------------------------------- the build
    def _rebuild(self) -> None:
        """The grid from scratch over the live rows."""
        rows = self._rows
        ids = self._idt.next_id  # rows 0 .. ids - 1 were handed out (removed ones marked)
        rbits = rows.view(np.int64)
        threads = self._threads if ids >= K.PARALLEL_FROM else 1
        if self._lcount.shape[0] != threads:
            self._lcount = np.empty((threads, K.LEVELS), dtype=np.int64)
        (K.count_levels if threads > 1 else K.count_levels_serial)(rbits, ids, threads, self._lcount)
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
        if self._keys.size < ids:
            self._keys = np.empty(rows.shape[0], dtype=np.int64)
        if self._grid.shape[0] < self._n:
            self._grid = np.empty((rows.shape[0], 4))
            self._gid = np.empty(rows.shape[0], dtype=np.int64)
        (K.count_buckets if threads > 1 else K.count_buckets_serial)(
            rows, rbits, ids, threads, self._loff, self._lmask, self._linv, self._keys, self._counts)
        K.place_buckets(self._counts, self._start)
        (K.scatter_rows if threads > 1 else K.scatter_rows_serial)(
            rows, ids, threads, self._keys, self._counts, self._grid, self._gid)
        self._stale = False

    # ----------------------------------------------------------------------------- query
    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        if self._stale:
            self._rebuild()
        return K.query(px, py, pz, self._levels, self._loff, self._lmask, self._linv, self._start, self._grid,
                       self._gid, self._probe, out, self._stats)

    # ----------------------------------------------------------------------------- updates: rows only
    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        i = self._idt.next_id
        if i == self._rows.shape[0]:
            self._rows = grown(self._rows, 2 * i, -1.0)
        self._rows[i] = x, y, z, r
        self._idt.new_id(i)
        self._n += 1
        self._stale = True
        return i

    def _remove(self, i: int) -> None:
        self._rows[i, 3] = -1.0
        self._idt.slots[i] = -1
        self._n -= 1
        self._stale = True

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        self._rows[i, :3] = x, y, z
        if r == r:  # NaN: keep the radius
            self._rows[i, 3] = r
        self._stale = True

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        threads = self._threads if ids.size >= K.PARALLEL_FROM else 1
        (K.write_rows if threads > 1 else K.write_rows_serial)(ids, centres, radii, self._rows, threads)
        self._rebuild()  # a frame's moves: the grid is rebuilt now, in the update, not by the first query

    def _warm_moves(self) -> None:
        # a batch of PARALLEL_FROM moves or more writes its rows on every core, and a world that large builds on
        # every core: their kernels, on no moves and no objects
        none = np.zeros(0, dtype=np.int64)
        rows = np.zeros((0, 4))
        rbits = rows.view(np.int64)
        K.write_rows(none, np.zeros((0, 3)), np.zeros(0), rows, 2)
        K.count_levels(rbits, 0, 2, np.empty((2, K.LEVELS), dtype=np.int64))
        counts = np.zeros((2, 1), dtype=np.int32)
        K.count_buckets(rows, rbits, 0, 2, self._loff, self._lmask, self._linv, none, counts)
        K.scatter_rows(rows, 0, 2, none, counts, rows, none)
