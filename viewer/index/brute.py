"""Brute force: test every sphere, vectorised with numpy. The oracle of the tests and the baseline of
every benchmark ratio, so it is made as fast as plain numpy allows: structure of arrays, squared radii
kept, preallocated scratch buffers, and the work done in cache-sized chunks.
"""

from __future__ import annotations

import numpy as np

from ._contract import IdTable, SphereIndex, as_objects, grown

__all__ = ["BruteForce", "brute_query"]

_CHUNK = 1 << 15  # 32768 float64 = 256 KiB per buffer: the chunk's passes stay in L2


def brute_query(centres: np.ndarray, radii: np.ndarray, point) -> np.ndarray:
    """The plain oracle: indices (K,) int64 of the rows of ``centres`` (N, 3) whose sphere of
    ``radii`` (N,) contains ``point`` (3,), with the contract's exact predicate."""
    c = np.asarray(centres, dtype=np.float64)
    r = np.asarray(radii, dtype=np.float64)
    p = np.asarray(point, dtype=np.float64)
    dx = p[0] - c[:, 0]
    dy = p[1] - c[:, 1]
    dz = p[2] - c[:, 2]
    return np.flatnonzero((dx * dx + dy * dy) + dz * dz <= r * r).astype(np.int64)


class BruteForce(SphereIndex):
    """Every sphere tested on every query, with numpy: ``BruteForce(centres (N, 3), radii (N,))``, world
    units, float64 (the contract's domain). The tests' oracle."""

    name = "brute"

    def __init__(self, centres, radii):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        n = radii.size
        cap = max(16, n)
        self._x = np.zeros(cap)
        self._y = np.zeros(cap)
        self._z = np.zeros(cap)
        self._r = np.zeros(cap)
        self._rr = np.zeros(cap)
        self._x[:n], self._y[:n], self._z[:n] = centres.T
        self._r[:n] = radii
        self._rr[:n] = radii * radii
        self._ids = np.arange(cap, dtype=np.int64)  # slot -> id
        self._idt = IdTable(n)
        self._n = n
        self._b0 = np.empty(_CHUNK)
        self._b1 = np.empty(_CHUNK)
        self._mask = np.empty(_CHUNK, dtype=bool)

    def __len__(self) -> int:
        return self._n

    # ----------------------------------------------------------------------------- query
    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._idt.state()

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        n = self._n
        k = 0
        size = out.size
        b0, b1, mask = self._b0, self._b1, self._mask
        for s in range(0, n, _CHUNK):
            e = min(n, s + _CHUNK)
            m = e - s
            dx = np.subtract(px, self._x[s:e], out=b0[:m])
            np.multiply(dx, dx, out=dx)
            dy = np.subtract(py, self._y[s:e], out=b1[:m])
            np.multiply(dy, dy, out=dy)
            np.add(dx, dy, out=dx)
            np.subtract(pz, self._z[s:e], out=dy)
            np.multiply(dy, dy, out=dy)
            np.add(dx, dy, out=dx)
            mk = np.less_equal(dx, self._rr[s:e], out=mask[:m])
            hits = np.flatnonzero(mk)
            h = hits.size
            if h:
                room = max(0, min(h, size - k))
                if room:
                    np.take(self._ids[s:e], hits[:room], out=out[k : k + room])
                k += h
        self._record(n, k)
        return k

    # ----------------------------------------------------------------------------- updates
    def _grow(self) -> None:
        cap = 2 * self._x.size
        for name in ("_x", "_y", "_z", "_r", "_rr", "_ids"):
            setattr(self, name, grown(getattr(self, name), cap, 0))

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        if self._n == self._x.size:
            self._grow()
        s = self._n
        self._x[s], self._y[s], self._z[s], self._r[s], self._rr[s] = x, y, z, r, r * r
        i = self._idt.new_id(s)
        self._ids[s] = i
        self._n = s + 1
        return i

    def _remove(self, i: int) -> None:
        slots = self._idt.slots
        s = int(slots[i])
        last = self._n - 1
        if s != last:
            for a in (self._x, self._y, self._z, self._r, self._rr, self._ids):
                a[s] = a[last]
            slots[self._ids[s]] = s
        slots[i] = -1
        self._n = last

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        s = int(self._idt.slots[i])
        if r != r:  # NaN: keep the radius
            r = float(self._r[s])
        self._x[s], self._y[s], self._z[s], self._r[s], self._rr[s] = x, y, z, r, r * r

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        slots = self._idt.slots[ids]
        new = ~np.isnan(radii)
        if new.any():
            s = slots[new]
            self._r[s] = radii[new]
            self._rr[s] = radii[new] * radii[new]
        self._x[slots], self._y[slots], self._z[slots] = centres.T

    def nbytes(self) -> int:
        n = sum(a.nbytes for a in (self._x, self._y, self._z, self._r, self._rr, self._ids))
        return n + self._idt.slots.nbytes

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Live ``(ids (N,) int64, centres (N, 3) float64, radii (N,) float64)``, copies."""
        n = self._n
        c = np.stack([self._x[:n], self._y[:n], self._z[:n]], axis=1)
        return self._ids[:n].copy(), c, self._r[:n].copy()
