"""The reference loop: the float32 structure-of-arrays scan a reader writes first, exact by a float64 recheck.

Every object is tested on every query: per block of 1,024 objects a pass writes a mask (a float32 sphere
test of ``x, y, z, r`` lanes, 16 bytes an object), and a pass rechecks the lanes it passed with the
contract's float64 predicate and writes their ids. The float32 test is conservative by a proved rounding
bound (:mod:`viewer.index._loop32_kernels`), so the answer is exactly brute force's over the whole numeric
domain. Objects stay in the order they came in; removal swaps the last slot into the hole, a move rewrites
one slot. Queries over at least :data:`PARALLEL_FROM` objects run on ``numba.get_num_threads()`` threads.
It is shown in the bench beside the scan, so every ratio against the scan can be read against the loop
anyone would write.
"""

from __future__ import annotations

import numpy as np

from . import _loop32_kernels as K
from . import _pages
from ._contract import IdTable, as_objects
from .scan import PARALLEL_FROM, FlatSlots

__all__ = ["Loop32", "PARALLEL_FROM"]

_F64 = ("_x", "_y", "_z", "_r", "_rr")
_F32 = ("_xs", "_ys", "_zs", "_rs")


class Loop32(FlatSlots):
    """Every sphere tested on every query in float32 (one thread, every core from :data:`PARALLEL_FROM`
    objects), the passing lanes rechecked in float64.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    """

    name = "loop32"

    def __init__(self, centres, radii):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        n = radii.size
        self._alloc(max(16, n))
        self._x[:n], self._y[:n], self._z[:n] = centres.T
        self._r[:n] = radii
        np.multiply(radii, radii, out=self._rr[:n])
        self._ids[:n] = np.arange(n)
        self._idt = IdTable(n)
        self._n = n
        K.set_lanes(self._x, self._y, self._z, self._r, self._xs, self._ys, self._zs, self._rs, 0, n)

    def _alloc(self, cap: int) -> None:
        for name in _F64:
            setattr(self, name, _pages.zeros(cap))
        for name in _F32:
            setattr(self, name, _pages.zeros(cap, np.float32))
        self._ids = _pages.full(cap, -1, np.int64)  # slot -> id
        self._hits = _pages.zeros(cap, np.int32)  # a query's scratch, per chunk
        self._counts = np.empty(cap // K.CHUNK + 1, dtype=np.int64)
        self._masks = np.empty((cap // K.CHUNK + 1, K.BLOCK), dtype=np.uint8)  # ... and one lane mask a chunk

    # ----------------------------------------------------------------------------- query
    def _kernel(self, parallel: bool):
        return K.loop if parallel else K.loop_serial

    def _arrays(self) -> tuple:
        return self._xs, self._ys, self._zs, self._rs, self._x, self._y, self._z, self._rr, self._ids

    # ----------------------------------------------------------------------------- updates
    def _rows(self):
        return self._x, self._y, self._z, self._r, self._rr, self._xs, self._ys, self._zs, self._rs

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        if self._n == self._x.size:
            old = {name: getattr(self, name) for name in (*_F64, *_F32, "_ids")}
            self._alloc(2 * self._x.size)
            for name, a in old.items():
                getattr(self, name)[: a.size] = a
        s = self._n
        self._x[s], self._y[s], self._z[s], self._r[s], self._rr[s] = x, y, z, r, r * r
        K.set_lanes(self._x, self._y, self._z, self._r, self._xs, self._ys, self._zs, self._rs, s, s + 1)
        self._n = s + 1
        i = self._idt.new_id(s)
        self._ids[s] = i
        return i

    def _remove(self, i: int) -> None:
        self._n = K.remove_slot(*self._rows(), self._ids, self._idt.slots, i, self._n)

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        s = self._idt.slots[i : i + 1]
        K.move_rows(*self._rows(), s, np.array([[x, y, z]]), np.array([r]))

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        K.move_rows(*self._rows(), self._idt.slots[ids], centres, radii)

    def nbytes(self) -> int:
        arrays = (*_F64, *_F32, "_ids", "_hits", "_counts", "_masks")
        return sum(getattr(self, a).nbytes for a in arrays) + self._idt.slots.nbytes
