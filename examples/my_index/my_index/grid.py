"""A uniform grid over view spheres, written against viewdist-testbed's public protocol only.

Every object whose radius is at most half a cell is filed in the cell holding its centre; a query at a point
reads the point's cell and its 26 neighbours (a sphere of radius <= cell / 2 that holds the point has its centre
at most half a cell away on each axis, so in one of those 27 cells, whatever the division rounds) and tests
their objects with the contract's exact predicate. Larger spheres, and centres more than 2**40 cells from the
origin (where a cell number would stop being exact), go to one list that every query tests. A cell is at least
2**-500 wide: below that a square rounds into the subnormals (or to 0), and the predicate holds a little beyond
the radius. Pure numpy and Python: built for reading, not for speed.
"""

from __future__ import annotations

import math
import sys
from itertools import chain

import numpy as np

from viewer.index import RADIUS_LIMIT, SphereIndex, as_objects

__all__ = ["UniformGrid"]

#: cells from the origin past which a centre goes to the every-query list: float64 counts cells exactly far beyond
_FAR = 2.0**40
#: the smallest cell: below it a squared distance rounds into the subnormals (even to 0), and the predicate holds
#: for points farther than the radius, so farther than half a cell
_SMALLEST = 2.0**-500
#: the key of the list every query tests
_EVERYWHERE = None


class UniformGrid(SphereIndex):
    """``UniformGrid(centres (N, 3), radii (N,), cell_size=0.0)``: world units, float64.

    cell_size : the cells' edge (world units); 0 picks twice the 99th percentile of the radii, so 99 objects in
        100 are filed in cells and the rest in the list every query tests.
    """

    name = "mygrid"

    def __init__(self, centres, radii, cell_size: float = 0.0):
        super().__init__()  # the base class warms the class up once (a tiny index through every hook)
        centres, radii = as_objects(centres, radii)  # (N, 3), (N,) float64, inside the numeric domain
        if not 0.0 <= cell_size <= RADIUS_LIMIT:
            raise ValueError(f"cell_size must be 0 (pick one) or in (0, 2**100], got {cell_size!r}")
        n = radii.size
        auto = 2.0 * float(np.quantile(radii, 0.99)) if n else 0.0
        self._cell = max(float(cell_size) or auto or 1.0, _SMALLEST)
        cap = max(16, n)
        self._xyz = np.zeros((cap, 3))  # id -> centre; ids are slots, never reused
        self._r = np.zeros(cap)
        self._state = np.full(cap, -1, dtype=np.int64)  # id -> 0 live, -1 removed or never handed out
        self._xyz[:n], self._r[:n], self._state[:n] = centres, radii, 0
        self._next = self._n = n
        self._cells: dict = {}  # cell (i, j, k) or _EVERYWHERE -> {id: None}: a set that keeps its order
        for i in range(n):
            self._cells.setdefault(self._key(i), {})[i] = None

    def _key(self, i: int):
        """Where object ``i`` is filed: its centre's cell, or the list every query tests."""
        if self._r[i] > 0.5 * self._cell:
            return _EVERYWHERE
        q = [v / self._cell for v in self._xyz[i].tolist()]
        if not all(abs(v) < _FAR for v in q):
            return _EVERYWHERE
        return tuple(math.floor(v) for v in q)

    # ----------------------------------------------------------------------- the hooks of the protocol
    def __len__(self) -> int:
        return self._n

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._next, self._state  # live_from is 0: state[id] < 0 marks a removed id

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        lists = [self._cells.get(_EVERYWHERE, ())]
        q = (px / self._cell, py / self._cell, pz / self._cell)
        if all(abs(v) < _FAR + 2 for v in q):  # farther out, no filed sphere reaches the point
            i, j, k = (math.floor(v) for v in q)
            get = self._cells.get
            lists += [get((a, b, c), ()) for a in (i - 1, i, i + 1) for b in (j - 1, j, j + 1)
                      for c in (k - 1, k, k + 1)]
        cand = np.fromiter(chain.from_iterable(lists), dtype=np.int64)
        d = self._xyz[cand]
        dx, dy, dz = px - d[:, 0], py - d[:, 1], pz - d[:, 2]
        r = self._r[cand]
        hits = cand[self._holds((dx * dx + dy * dy) + dz * dz, r * r)]  # the contract's predicate, in its order
        k = hits.size
        m = min(k, out.size)
        out[:m] = hits[:m]  # write what fits, return the whole count: the base class raises QueryOverflow
        self._record(cand.size, k, len(lists))
        return k

    @staticmethod
    def _holds(d2: np.ndarray, r2: np.ndarray) -> np.ndarray:
        """Which squared distances lie within the squared radii: a point on the surface is inside."""
        return d2 <= r2

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        i = self._next
        if i == self._r.size:  # grow by doubling
            grow = self._r.size
            self._xyz = np.concatenate([self._xyz, np.zeros((grow, 3))])
            self._r = np.concatenate([self._r, np.zeros(grow)])
            self._state = np.concatenate([self._state, np.full(grow, -1, dtype=np.int64)])
        self._xyz[i], self._r[i], self._state[i] = (x, y, z), r, 0
        self._cells.setdefault(self._key(i), {})[i] = None
        self._next, self._n = i + 1, self._n + 1
        return i

    def _remove(self, i: int) -> None:
        del self._cells[self._key(i)][i]
        self._state[i] = -1
        self._n -= 1

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        old = self._key(i)
        self._xyz[i] = (x, y, z)
        if r == r:  # NaN keeps the radius
            self._r[i] = r
        new = self._key(i)
        if new != old:
            del self._cells[old][i]
            self._cells.setdefault(new, {})[i] = None

    def nbytes(self) -> int:
        """The arrays (the base class counts them) and the cells' tables, as Python sizes them."""
        return super().nbytes() + sys.getsizeof(self._cells) + sum(map(sys.getsizeof, self._cells.values()))

    # _move_many: the base class's, one _move per mover, is correct; an index may override it to do a batch at once
