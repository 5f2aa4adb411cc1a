"""The linear scan engine teams use instead of a tree: every object tested on every query, as fast as
flat arrays, SIMD and every core allow. The baseline every speed-up of ``viewer bench`` is measured against.

Storage is structure-of-arrays: float64 ``x, y, z, r, r*r`` (the exact predicate's operands) and a 16-bit
prefilter that a query streams through: each object's centre as int16 and its radius as uint16 in the units
of its block's frame (64 objects share an origin and a power-of-two scale), 8 bytes an object. A build
stores the objects in the Morton order of their centres, so a block's objects sit close together (a fine
frame) and the few that one query accepts share a few blocks. The prefilter is conservative by a proved
rounding bound (see :mod:`viewer.index._scan_kernels`), so it never drops an object the exact test accepts;
the lanes it passes (in the few blocks it flags) are rechecked with the contract's float64 predicate, so
the answer is exactly brute force's. Removal swaps the last slot into the hole; every update rewrites one
slot (and refits its block's frame when the slot no longer fits it). Queries over at least
:data:`PARALLEL_FROM` objects run on ``numba.get_num_threads()`` threads, smaller ones on one.
"""

from __future__ import annotations

import numba
import numpy as np

from . import _pages
from . import _scan_kernels as K
from ._contract import IdTable, SphereIndex, as_objects
from ._morton import morton_order

__all__ = ["LinearScan", "PARALLEL_FROM"]

#: objects from which a query uses every core (below, waking the threads costs more than it saves)
PARALLEL_FROM = 1 << 18

_F64 = ("_x", "_y", "_z", "_r", "_rr")
_LANES = ("_qx", "_qy", "_qz", "_rq")  # the prefilter: int16 centre, uint16 radius, in frame units
_LANE_TYPES = (np.int16, np.int16, np.int16, np.uint16)


class LinearScan(SphereIndex):
    """Every sphere tested on every query: a 16-bit SIMD prefilter on all cores, an exact float64 recheck.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    """

    name = "scan"
    updates_in_place = True

    def __init__(self, centres, radii):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        n = radii.size
        # slots in Morton order: the objects one query accepts then sit in a few blocks, so few blocks
        # are rechecked (measured at 1e6 on the diagonal workload: 737 -> 603 us a query near the objects)
        order = morton_order(centres)
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
        for name in _F64:
            setattr(self, name, _pages.zeros(cap))
        for name, dt in zip(_LANES, _LANE_TYPES):
            setattr(self, name, _pages.zeros(cap, dt))
        self._words = tuple(getattr(self, name).view(np.uint64) for name in _LANES)  # read_floor's view
        self._bo = np.zeros((cap // K.BLOCK, 3))  # block frames: origin, world units
        self._bs = np.ones(cap // K.BLOCK)  # ... and scale (a power of two)
        self._rr[:] = -1.0  # padding: no float64 test accepts it
        self._ids = _pages.full(cap, -1, np.int64)  # slot -> id
        self._hits = _pages.zeros(cap, np.int32)  # per-chunk scratch of a query
        self._counts = np.empty(cap // K.CHUNK + 1, dtype=np.int64)
        self._partial = np.empty(cap // K.CHUNK + 1, dtype=np.uint64)  # read_floor's scratch

    def __len__(self) -> int:
        return self._n

    @property
    def threads(self) -> int:
        """Threads a query over the current objects runs on."""
        return numba.get_num_threads() if self._n >= PARALLEL_FROM else 1

    # ----------------------------------------------------------------------------- query
    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._idt.state()

    def _query(self, px: float, py: float, pz: float, out: np.ndarray, parallel: bool | None = None) -> int:
        n = self._n
        if parallel is None:
            parallel = n >= PARALLEL_FROM
        kernel = K.scan if parallel else K.scan_serial
        k = kernel(self._qx, self._qy, self._qz, self._rq, self._bo, self._bs, self._x, self._y, self._z, self._rr,
                   self._ids, n, px, py, pz, self._counts, self._hits, out)
        s = self._stats
        s[0] = n
        s[1] = k
        return k

    def read_floor(self, parallel: bool | None = None) -> float:
        """Read the prefilter arrays once (8 bytes an object), chunked and threaded as a query does (the
        time of this call is the scan's physical floor). Returns a meaningless sum."""
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
        old = {name: getattr(self, name) for name in (*_F64, *_LANES, "_ids", "_bo", "_bs")}
        self._alloc(2 * self._x.size)
        for name, a in old.items():
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
        arrays = (*_F64, *_LANES, "_bo", "_bs", "_ids", "_hits", "_counts", "_partial")
        return sum(getattr(self, a).nbytes for a in arrays) + self._idt.slots.nbytes

    def _warm_more(self) -> None:
        # the tiny warm-up index queries on one thread: compile the threaded kernel, a point far beyond
        # the frames (the exact path of a block) and the floor too
        out = np.empty(self._n + 1, dtype=np.int64)
        for parallel in (True, False):
            self._query(0.0, 0.0, 0.0, out, parallel)
            self._query(2.0**70, 0.0, 0.0, out, parallel)
            self.read_floor(parallel)


def _capacity(n: int) -> int:
    """Slots for ``n`` objects: whole blocks, at least one."""
    return max(K.BLOCK, -(-n // K.BLOCK) * K.BLOCK)
