"""Two subtly wrong indexes the kit must catch, on the brute-force index's storage: one whose balls are open (a
camera exactly on a sphere's surface misses it), one whose batch move loses its last mover. And a right one that
hands out other ids than the rest, which the kit must pass."""

from __future__ import annotations

from viewer.index import BruteForce


class OpenBalls(BruteForce):
    """``<`` where the contract says ``<=``."""

    def _query(self, px, py, pz, out):
        n = self._n
        d = (px - self._x[:n]) ** 2 + (py - self._y[:n]) ** 2 + (pz - self._z[:n]) ** 2
        ids = self._ids[:n][d < self._rr[:n]]
        out[: min(ids.size, out.size)] = ids[: out.size]
        self._record(n, ids.size)
        return ids.size


class LosesLastMover(BruteForce):
    """A batch move that skips its last mover."""

    def _move_many(self, ids, centres, radii):
        super()._move_many(ids[:-1], centres[:-1], radii[:-1])


class SkipsIds(BruteForce):
    """Right, but each insert takes an id, frees it and hands out the next: ids other than the other indexes'."""

    def insert(self, centre, radius):
        self.remove(super().insert(centre, radius))
        return super().insert(centre, radius)


__all__ = ["LosesLastMover", "OpenBalls", "SkipsIds"]
