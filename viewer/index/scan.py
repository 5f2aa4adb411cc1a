"""The linear scan engine teams use instead of a tree: every object tested on every query, as fast as
flat arrays, SIMD and every core allow. The baseline every speed-up of ``viewer bench`` is measured against.

Storage is structure-of-arrays: float64 ``x, y, z, r, r*r`` (the exact predicate's operands) and a float32
copy ``x32, y32, z32, rho`` (16 bytes per object) that a query streams through. The float32 test is
conservative (``rho`` is the radius padded by the rounding errors; see :mod:`viewer.index._scan_kernels`),
so it never drops an object the exact test accepts; the few blocks of 64 it flags are rechecked with the
contract's float64 predicate, so the answer is exactly brute force's. Removal swaps the last slot into
the hole; every update rewrites one slot of each array. Queries over at least :data:`PARALLEL_FROM`
objects run on ``numba.get_num_threads()`` threads, smaller ones on one.
"""

from __future__ import annotations

import numba
import numpy as np

from . import _scan_kernels as K
from ._contract import (
    IdTable,
    QueryOverflow,
    SphereIndex,
    as_centres,
    as_point,
    as_radii,
    as_radius,
    check_out,
)

__all__ = ["LinearScan", "PARALLEL_FROM"]

#: objects from which a query uses every core (below, waking the threads costs more than it saves)
PARALLEL_FROM = 1 << 16

_F64 = ("_x", "_y", "_z", "_r", "_rr")
_F32 = ("_x32", "_y32", "_z32", "_rho")


class LinearScan(SphereIndex):
    """Every sphere tested on every query: a float32 SIMD prefilter on all cores, an exact float64 recheck.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    """

    name = "scan"
    updates_in_place = True
    _warmed = False

    def __init__(self, centres, radii, **options):
        super().__init__()
        if options:
            raise ValueError(f"scan takes no options, got {sorted(options)}")
        radii = as_radii(radii)
        centres = as_centres(centres, n=radii.size)
        n = radii.size
        self._alloc(_capacity(n))
        self._x[:n], self._y[:n], self._z[:n] = centres.T
        self._r[:n] = radii
        np.multiply(radii, radii, out=self._rr[:n])
        self._ids[:n] = np.arange(n, dtype=np.int64)
        self._idt = IdTable(n)
        self._n = n
        type(self)._warm()
        K.bound_rho(self._x, self._y, self._z, self._r, self._x32, self._y32, self._z32, self._rho, 0, n)

    def _alloc(self, cap: int) -> None:
        for name in _F64:
            setattr(self, name, np.zeros(cap))
        for name in _F32:
            setattr(self, name, np.zeros(cap, dtype=np.float32))
        self._rho[:] = np.nan  # padding: no float32 test accepts it
        self._rr[:] = -1.0  # ... and no float64 test either
        self._ids = np.full(cap, -1, dtype=np.int64)  # slot -> id
        self._hits = np.empty(cap, dtype=np.int32)  # per-chunk scratch of a query
        self._counts = np.empty(cap // K.CHUNK + 1, dtype=np.int64)
        self._partial = np.empty(cap // K.CHUNK + 1, dtype=np.float32)  # read_floor's scratch

    def __len__(self) -> int:
        return self._n

    @property
    def threads(self) -> int:
        """Threads a query over the current objects runs on."""
        return numba.get_num_threads() if self._n >= PARALLEL_FROM else 1

    # ----------------------------------------------------------------------------- query
    def query_into(self, point, out: np.ndarray) -> int:
        px, py, pz = as_point(point)
        check_out(out)
        n = self._n
        kernel = K.scan if n >= PARALLEL_FROM else K.scan_serial
        k = kernel(self._x32, self._y32, self._z32, self._rho, self._x, self._y, self._z, self._rr, self._ids,
                   n, px, py, pz, self._counts, self._hits, out)
        s = self._stats
        s[0] = n
        s[1] = k
        if k > out.size:
            raise QueryOverflow(k, out.size)
        return k

    def read_floor(self) -> float:
        """Read the float32 arrays once, chunked and threaded as a query does (the time of this call is
        the scan's physical floor). Returns a meaningless sum."""
        return float(K.read_floor(self._x32, self._y32, self._z32, self._rho, self._n, self._partial))

    # ----------------------------------------------------------------------------- updates
    def _bound(self, lo: int, hi: int) -> None:
        K.bound_rho(self._x, self._y, self._z, self._r, self._x32, self._y32, self._z32, self._rho, lo, hi)

    def _grow(self) -> None:
        old = {name: getattr(self, name) for name in (*_F64, *_F32, "_ids")}
        self._alloc(2 * self._x.size)
        for name, a in old.items():
            getattr(self, name)[: a.size] = a

    def insert(self, centre, radius) -> int:
        x, y, z = as_point(centre, "centre")
        r = as_radius(radius)
        if self._n == self._x.size:
            self._grow()
        s = self._n
        self._x[s], self._y[s], self._z[s], self._r[s], self._rr[s] = x, y, z, r, r * r
        self._bound(s, s + 1)
        i = self._idt.new_id(s)
        self._ids[s] = i
        self._n = s + 1
        return i

    def remove(self, id) -> None:
        s = self._idt.slot_of(id)
        last = self._n - 1
        if s != last:
            for name in (*_F64, *_F32, "_ids"):
                a = getattr(self, name)
                a[s] = a[last]
            self._idt.slots[self._ids[s]] = s
        self._rho[last] = np.nan
        self._rr[last] = -1.0
        self._ids[last] = -1
        self._idt.slots[int(id)] = -1
        self._n = last

    def move(self, id, centre, radius=None) -> None:
        s = self._idt.slot_of(id)
        x, y, z = as_point(centre, "centre")
        if radius is not None:
            r = as_radius(radius)
            self._r[s], self._rr[s] = r, r * r
        self._x[s], self._y[s], self._z[s] = x, y, z
        self._bound(s, s + 1)

    def move_many(self, ids, centres, radii=None) -> None:
        """Move ``ids`` (M,) int to ``centres`` (M, 3) world units, with ``radii`` (M,) or None (keep)."""
        ids = np.asarray(ids)
        if ids.ndim != 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
            raise KeyError("move_many: ids must be a 1-D array of integers")
        ids = ids.astype(np.int64, copy=False)
        centres = as_centres(centres, n=ids.size)
        if radii is None:
            rad = np.full(ids.size, np.nan)
        else:
            rad = as_radii(radii)
            if rad.size != ids.size:
                raise ValueError(f"move_many: radii has {rad.size} values but ids has {ids.size}")
        if ids.size == 0:
            return
        if ids.min() < 0 or ids.max() >= self._idt.next_id:
            bad = int(ids[(ids < 0) | (ids >= self._idt.next_id)][0])
            raise KeyError(f"move_many: unknown id {bad}")
        slots = self._idt.slots[ids]
        if (slots < 0).any():
            raise KeyError(f"move_many: id {int(ids[np.argmax(slots < 0)])} was removed")
        K.set_rows(self._x, self._y, self._z, self._r, self._rr, slots, centres, rad)
        K.bound_slots(self._x, self._y, self._z, self._r, self._x32, self._y32, self._z32, self._rho, slots)

    def nbytes(self) -> int:
        arrays = (*_F64, *_F32, "_ids", "_hits", "_counts", "_partial")
        return sum(getattr(self, a).nbytes for a in arrays) + self._idt.slots.nbytes

    @classmethod
    def _warm(cls) -> None:
        """Compile (or load from the cache) both query kernels, the parallel one included, once per process."""
        if cls._warmed:
            return
        cls._warmed = True
        ix = cls.__new__(cls)
        SphereIndex.__init__(ix)
        ix._alloc(_capacity(3))
        ix._n = 3
        ix._x[:3] = (0.0, 1.0, 2.0**70)
        ix._r[:3] = (1.0, 0.5, 1.0)
        ix._rr[:3] = ix._r[:3] ** 2
        ix._ids[:3] = (0, 1, 2)
        ix._bound(0, 3)
        out = np.empty(4, dtype=np.int64)
        for kernel in (K.scan, K.scan_serial):
            kernel(ix._x32, ix._y32, ix._z32, ix._rho, ix._x, ix._y, ix._z, ix._rr, ix._ids, 3, 0.0, 0.0, 0.0,
                   ix._counts, ix._hits, out)
        ix.read_floor()
        K.set_rows(ix._x, ix._y, ix._z, ix._r, ix._rr, np.zeros(1, np.int64), np.zeros((1, 3)), np.ones(1))
        K.bound_slots(ix._x, ix._y, ix._z, ix._r, ix._x32, ix._y32, ix._z32, ix._rho, np.zeros(1, np.int64))


def _capacity(n: int) -> int:
    """Slots for ``n`` objects: whole blocks, at least one."""
    return max(K.BLOCK, -(-n // K.BLOCK) * K.BLOCK)
