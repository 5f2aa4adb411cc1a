"""The contract every index in :mod:`viewer.index` follows, and the input checks they share.

An index holds spheres: a centre and a radius (the object's maximum view distance, world units).
The query is a point (the camera); the answer is exactly the ids of the spheres that contain it,
with the predicate, computed in float64 in this order::

    dx = px - cx; dy = py - cy; dz = pz - cz
    (dx * dx + dy * dy) + dz * dz <= r * r

Every implementation evaluates that same expression, so all of them agree with ``brute`` bit for bit,
points exactly on a sphere's surface included.

Shared API (see :class:`SphereIndex`):

- ``Cls(centres, radii, **options)``: ``centres`` (N, 3) float, ``radii`` (N,) float, N may be 0;
  ids are ``0..N-1``.
- ``query(point) -> (K,) int64`` ids, any order.
- ``query_into(point, out) -> int``: writes the ids into ``out`` ((M,) int64, preallocated) and
  returns K. When K > M the first M ids are written and :class:`QueryOverflow` is raised, carrying
  ``needed = K``: a result is never truncated silently.
- ``insert(centre, radius) -> int`` (a new id; ids are never reused), ``remove(id)``,
  ``move(id, centre, radius=None)``, ``len(index)``.
- ``stats``: :class:`QueryStats` of the last query.

Bad input raises ``ValueError`` (values, shapes) or ``KeyError`` (ids) naming the problem, before
anything is changed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "QueryOverflow",
    "QueryStats",
    "SphereIndex",
    "as_centre",
    "as_centres",
    "as_point",
    "as_radii",
    "as_radius",
]


class QueryOverflow(ValueError):
    """``query_into`` found more ids than ``out`` holds.

    Attributes
    ----------
    needed : int
        The number of ids the query found; ``out`` must hold at least this many.
    """

    def __init__(self, needed: int, size: int):
        super().__init__(
            f"query found {needed} ids but out holds only {size}; "
            f"the first {size} were written, pass an array of at least {needed}"
        )
        self.needed = needed
        self.size = size


@dataclass(slots=True)
class QueryStats:
    """Counters of the last query.

    candidates : objects whose distance to the point was tested
    visible : objects returned
    nodes_visited : tree nodes / grid cells / buckets entered (0 for brute force)
    max_nodes_per_level : the most nodes entered on one tree level (0 where there are no levels)
    """

    candidates: int = 0
    visible: int = 0
    nodes_visited: int = 0
    max_nodes_per_level: int = 0


# --------------------------------------------------------------------------- input checks


def as_centres(centres, n: int | None = None, name: str = "centres") -> np.ndarray:
    """Validate ``centres`` as a C-contiguous (N, 3) float64 array of finite values."""
    try:
        a = np.asarray(centres, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an (N, 3) array of numbers: {exc}") from None
    if a.ndim == 1 and a.size == 0:
        a = a.reshape(0, 3)
    if a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"{name} must have shape (N, 3), got {a.shape}")
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} rows but radii has {n}")
    if a.size and not np.isfinite(a).all():
        bad = int(np.flatnonzero(~np.isfinite(a).all(axis=1))[0])
        raise ValueError(f"{name}[{bad}] is not finite: {a[bad].tolist()}")
    return np.ascontiguousarray(a)


def as_radii(radii, name: str = "radii") -> np.ndarray:
    """Validate ``radii`` as a contiguous (N,) float64 array of finite values >= 0."""
    try:
        a = np.asarray(radii, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an (N,) array of numbers: {exc}") from None
    if a.ndim != 1:
        raise ValueError(f"{name} must have shape (N,), got {a.shape}")
    if a.size:
        ok = np.isfinite(a) & (a >= 0)
        if not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"{name}[{bad}] must be finite and >= 0, got {a[bad]!r}")
    return np.ascontiguousarray(a)


def as_point(point, name: str = "point") -> tuple[float, float, float]:
    """Validate a query point / centre as three finite floats (fast path for the frame loop)."""
    try:
        if type(point) is np.ndarray:
            point = point.tolist()  # one C call instead of three numpy scalar conversions
        x, y, z = point
        x = float(x)
        y = float(y)
        z = float(z)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be 3 numbers, got {point!r}") from None
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        raise ValueError(f"{name} must be finite, got {(x, y, z)!r}")
    return x, y, z


as_centre = as_point


def as_radius(radius, name: str = "radius") -> float:
    """Validate one radius: a finite float >= 0."""
    try:
        r = float(radius)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {radius!r}") from None
    if not (math.isfinite(r) and r >= 0.0):
        raise ValueError(f"{name} must be finite and >= 0, got {r!r}")
    return r


def check_out(out) -> np.ndarray:
    """``out`` of ``query_into`` must be a writable contiguous (M,) int64 array."""
    if type(out) is np.ndarray and out.dtype is _INT64 and out.ndim == 1:
        flags = out.flags
        if flags.c_contiguous and flags.writeable:
            return out
        raise ValueError("out must be contiguous and writable")
    if not isinstance(out, np.ndarray) or out.dtype != np.int64 or out.ndim != 1:
        raise ValueError("out must be a 1-D numpy int64 array")
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise ValueError("out must be contiguous and writable")
    return out


_INT64 = np.dtype(np.int64)


def check_id(id) -> int:
    """An id must be an integer (not a bool, not a float); ``KeyError`` otherwise."""
    if isinstance(id, (bool, np.bool_)) or not isinstance(id, (int, np.integer)):
        raise KeyError(f"id must be an integer, got {id!r}")
    return int(id)


# --------------------------------------------------------------------------- base class


class SphereIndex:
    """What every index shares: ``query`` on top of ``query_into``, id bookkeeping helpers.

    Subclasses implement ``query_into``, ``insert``, ``remove``, ``move``, ``__len__`` and fill
    the counters behind ``stats`` (``self._stats`` (4,) int64, from a kernel or ``_record``). ``name`` is the key in :data:`viewer.index.INDEXES`; ``updates_in_place`` says
    whether ``move`` is a true in-place update (False: remove + insert or rebuild, reported by the
    bench).
    """

    name: str = "?"
    updates_in_place: bool = True
    update_note: str = ""  # how moves are done, printed by the bench ("rebuilt on change", ...)

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this index cannot be built here (an optional peer library missing), or None."""
        return None

    def __init__(self) -> None:
        # counters of the last query (candidates, visible, nodes visited, max nodes on a level),
        # written by the query kernel or by _record
        self._stats = np.zeros(4, dtype=np.int64)
        self._qbuf = np.empty(1024, dtype=np.int64)

    @property
    def stats(self) -> QueryStats:
        """:class:`QueryStats` of the last query."""
        s = self._stats
        return QueryStats(int(s[0]), int(s[1]), int(s[2]), int(s[3]))

    def _live(self, id) -> int:
        """``id`` as an int if it names a live object, else ``KeyError`` (not an integer, never
        handed out, or removed). Needs ``self._next_id`` and :meth:`_is_removed`."""
        i = check_id(id)
        if i < 0 or i >= self._next_id:
            raise KeyError(f"unknown id {i}")
        if self._is_removed(i):
            raise KeyError(f"id {i} was removed")
        return i

    def _is_removed(self, i: int) -> bool:  # pragma: no cover - for indexes that use _live
        raise NotImplementedError

    def _record(self, candidates: int, visible: int, nodes_visited: int = 0, max_nodes_per_level: int = 0) -> None:
        s = self._stats
        s[0] = candidates
        s[1] = visible
        s[2] = nodes_visited
        s[3] = max_nodes_per_level

    def query(self, point) -> np.ndarray:
        """Ids (K,) int64 of the spheres containing ``point`` ((3,) world units), any order."""
        while True:
            try:
                k = self.query_into(point, self._qbuf)
            except QueryOverflow as exc:
                self._qbuf = np.empty(max(exc.needed, 2 * self._qbuf.size), dtype=np.int64)
                continue
            return self._qbuf[:k].copy()

    def query_into(self, point, out: np.ndarray) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def insert(self, centre, radius) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def remove(self, id: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def move(self, id: int, centre, radius=None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __len__(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def move_many(self, ids, centres, radii=None) -> None:
        """Move ``ids`` (M,) int to ``centres`` (M, 3), with ``radii`` (M,) or None (keep). This
        fallback calls :meth:`move` per object; indexes with a batch kernel override it."""
        ids = np.asarray(ids, dtype=np.int64)
        centres = as_centres(centres, n=ids.size)
        rad = None if radii is None else as_radii(radii)
        for k in range(ids.size):
            self.move(int(ids[k]), centres[k], None if rad is None else rad[k])

    def nbytes(self) -> int:
        """Bytes held by the index's arrays (for memory-per-object reports)."""
        total = 0
        for v in vars(self).values():
            if isinstance(v, np.ndarray):
                total += v.nbytes
        return total

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} n={len(self)}>"


class IdTable:
    """Maps ids (never reused) to slots; ``slot == -1`` marks a removed id.

    ``slots``: (capacity,) int64, grown by doubling. ``next_id`` is the id ``insert`` hands out next.
    """

    def __init__(self, n: int):
        self.slots = np.full(max(16, n), -1, dtype=np.int64)
        self.slots[:n] = np.arange(n, dtype=np.int64)
        self.next_id = n

    def new_id(self, slot: int) -> int:
        i = self.next_id
        if i >= self.slots.size:
            grown = np.full(2 * self.slots.size, -1, dtype=np.int64)
            grown[: self.slots.size] = self.slots
            self.slots = grown
        self.slots[i] = slot
        self.next_id = i + 1
        return i

    def slot_of(self, id) -> int:
        """The slot of a live ``id``; ``KeyError`` for an unknown or removed id."""
        i = check_id(id)
        if i < 0 or i >= self.next_id:
            raise KeyError(f"unknown id {i}")
        s = int(self.slots[i])
        if s < 0:
            raise KeyError(f"id {i} was removed")
        return s
