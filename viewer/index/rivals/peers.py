"""The libraries a user would otherwise reach for, behind the index contract: ``rtree``
(libspatialindex) and ``scipy.spatial.cKDTree``. Both are optional (``pip install '.[peers]'``); when
one is missing its class reports why through :meth:`unavailable` and raises ``ImportError`` if built.

Neither library can answer "which spheres hold this point" by itself, so each returns candidates that
the exact filter (the contract's predicate, in :mod:`viewer.index.rivals._peers_kernels`) reduces to the
answer. Their queries allocate inside the library; ``query_into`` allocates nothing of its own.
"""

from __future__ import annotations

import importlib
import math
import sys
import time

import numpy as np

from . import _peers_kernels as K
from .._contract import IdTable, SphereIndex, _is_real, as_objects, grown

__all__ = ["CKDTreeIndex", "RTreeIndex"]

PEERS_HINT = "pip install '.[peers]'"
_SAMPLE_MOVES = 64  # the rtree times this many deletes + inserts of a large batch before choosing a bulk load
_LEAFSIZE_MAX = 2**31 - 1  # scipy keeps leafsize in a C integer


def _import(module: str):
    return importlib.import_module(module)


def _missing(module: str, package: str) -> str | None:
    try:
        _import(module)
    except ImportError as exc:
        return f"{package} not installed: {PEERS_HINT} ({exc})"
    return None


def _rss_bytes() -> int:
    """Resident set size of this process (Linux ``/proc``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    except (OSError, ValueError, IndexError):
        return 0


class _ById:
    """Objects stored by id: ``obj`` (capacity, 4) float64 rows x, y, z, r; ``alive`` (capacity,) bool."""

    def __init__(self, centres: np.ndarray, radii: np.ndarray):
        n = radii.size
        cap = max(16, n)
        self.obj = np.zeros((cap, 4))
        self.obj[:n, :3] = centres
        self.obj[:n, 3] = radii
        self.alive = np.zeros(cap, dtype=bool)
        self.alive[:n] = True
        self.idt = IdTable(n)
        self.n = n

    def add(self, x: float, y: float, z: float, r: float) -> int:
        i = self.idt.new_id(0)
        self.idt.slots[i] = i
        if i >= self.obj.shape[0]:
            cap = 2 * self.obj.shape[0]
            self.obj, self.alive = grown(self.obj, cap, 0.0), grown(self.alive, cap, False)
        self.obj[i] = (x, y, z, r)
        self.alive[i] = True
        self.n += 1
        return i

    def kill(self, i: int) -> None:
        self.idt.slots[i] = -1
        self.alive[i] = False
        self.n -= 1

    def nbytes(self) -> int:
        return self.obj.nbytes + self.alive.nbytes + self.idt.slots.nbytes


class RTreeIndex(SphereIndex):
    """Each sphere's box in a libspatialindex R-tree (the ``rtree`` package), bulk-loaded from arrays
    (STR packing); a query asks for the boxes holding the point, then applies the exact filter.

    Moves are a delete + insert in the R-tree (``updates_in_place`` is False), or, for a batch whose
    deletes and inserts would take longer than loading the whole tree again, that bulk load (STR packing
    of every live box): what a user of the library does when a large share of a world moves. The rule
    compares the batch's size times the measured seconds of one delete + insert (timed on the first
    moves of a batch) with the measured seconds of the last bulk load (dynamic-1m, 100,000 of 1e6
    objects moving: one by one took tens of times longer a frame than a bulk load).
    ``nbytes`` adds to the wrapper's arrays the growth of the process's resident memory while the tree
    was built (the library exposes no size of its own), so it is an estimate.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    leaf_capacity : int, entries per leaf node (default 16; libspatialindex's default is 100, which
        made deletes several times slower for the same query speed)
    index_capacity : int, entries per internal node (default 16)
    """

    name = "rtree"
    updates_in_place = False
    update_note = "moves are delete + insert in libspatialindex; a batch that would take longer reloads the tree"

    @classmethod
    def unavailable(cls) -> str | None:
        return _missing("rtree.index", "rtree")

    def __init__(self, centres, radii, *, leaf_capacity: int = 16, index_capacity: int = 16):
        why = self.unavailable()
        if why:
            raise ImportError(why)
        super().__init__()
        for nm, v in (("leaf_capacity", leaf_capacity), ("index_capacity", index_capacity)):
            if not (isinstance(v, (int, np.integer)) and 4 <= v <= 10_000):
                raise ValueError(f"{nm} must be an integer in 4..10000, got {v!r}")
        centres, radii = as_objects(centres, radii)
        rindex = _import("rtree.index")
        self._objs = _ById(centres, radii)
        p = rindex.Property()
        p.dimension = 3
        p.leaf_capacity = int(leaf_capacity)
        p.index_capacity = int(index_capacity)
        # libspatialindex requires this below both capacities (its default, 32, is not)
        p.near_minimum_overlap_factor = max(1, min(32, int(leaf_capacity) - 1, int(index_capacity) - 1))
        self._props = p
        self._move_s = math.nan  # seconds of one delete + insert (measured on the first moves of a batch)
        self._load(np.arange(radii.size, dtype=np.int64))
        self._lo = np.empty((1, 3))
        self._hi = np.empty((1, 3))
        self._one = np.zeros(1, dtype=np.int64)

    def _load(self, ids: np.ndarray) -> None:
        """A new tree bulk-loaded with the boxes of ``ids`` (every live object), timed (:attr:`_load_s`)."""
        rindex = _import("rtree.index")
        t0 = time.perf_counter()
        if ids.size:
            lo = np.empty((ids.size, 3))
            hi = np.empty((ids.size, 3))
            K.boxes(self._objs.obj, ids, lo, hi)
            before = _rss_bytes()
            tree = rindex.Index((ids, lo, hi), properties=self._props)
            grew = _rss_bytes() - before
            del lo, hi
        else:
            before = _rss_bytes()
            tree = rindex.Index(properties=self._props)
            grew = _rss_bytes() - before
        self._tree = tree  # the old one (if any) answered until here: a failed load leaves it in place
        self._load_s = time.perf_counter() - t0
        self._tree_bytes = max(0, grew)

    def __len__(self) -> int:
        return self._objs.n

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._objs.idt.state()

    def _box(self, i: int) -> tuple[float, ...]:
        self._one[0] = i
        K.boxes(self._objs.obj, self._one, self._lo, self._hi)
        return (*self._lo[0].tolist(), *self._hi[0].tolist())

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        # the generator form answers in one library call; intersection_v re-runs the search
        # whenever its small initial buffer overflows, which made it slower for single points
        cand = np.fromiter(self._tree.intersection((px, py, pz, px, py, pz), objects=False), dtype=np.int64)
        k = K.filter_ids(px, py, pz, cand, self._objs.obj, out, 0)
        self._record(int(cand.size), k)  # libspatialindex does not report per-query node visits
        return k

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        i = self._objs.add(x, y, z, r)
        self._tree.insert(i, self._box(i))
        return i

    def _remove(self, i: int) -> None:
        self._tree.delete(i, self._box(i))
        self._objs.kill(i)

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        if r != r:  # NaN: keep the radius
            r = float(self._objs.obj[i, 3])
        self._tree.delete(i, self._box(i))
        self._objs.obj[i] = (x, y, z, r)
        self._tree.insert(i, self._box(i))

    def _move_many(self, ids: np.ndarray, xyz: np.ndarray, rad: np.ndarray) -> None:
        # a delete + insert each, unless that would cost more than loading the tree again (class docstring)
        m = ids.size
        lo = np.empty((m, 3))
        hi = np.empty((m, 3))
        obj = self._objs.obj
        K.boxes(obj, ids, lo, hi)
        old = np.concatenate([lo, hi], axis=1).tolist()
        keep = np.isnan(rad)
        obj[ids, :3] = xyz
        obj[ids, 3] = np.where(keep, obj[ids, 3], rad)
        K.boxes(obj, ids, lo, hi)
        new = np.concatenate([lo, hi], axis=1).tolist()
        tree = self._tree
        done = 0
        if m > _SAMPLE_MOVES and (math.isnan(self._move_s) or m * self._move_s > self._load_s):
            t0 = time.perf_counter()
            for i, a, b in zip(ids[:_SAMPLE_MOVES].tolist(), old, new):
                tree.delete(i, a)
                tree.insert(i, b)
            self._move_s = (time.perf_counter() - t0) / _SAMPLE_MOVES
            done = _SAMPLE_MOVES
            if (m - done) * self._move_s > self._load_s:
                self._load(np.flatnonzero(self._objs.alive[: self._objs.idt.next_id]).astype(np.int64))
                return
        for i, a, b in zip(ids[done:].tolist(), old[done:], new[done:]):
            tree.delete(i, a)
            tree.insert(i, b)

    def nbytes(self) -> int:
        return self._objs.nbytes() + self._tree_bytes


class CKDTreeIndex(SphereIndex):
    """``scipy.spatial.cKDTree`` over the centres: ``query_ball_point(p, r_max)`` returns every centre
    within the largest radius, and the exact filter keeps the spheres that hold the point. A cKDTree
    cannot change, so any update marks it stale and it is **rebuilt on change** (lazily, at the next
    query).

    With ``bands > 1`` (the default, ``"auto"``), objects are split by radius into bands a factor of
    ``band_ratio`` apart, one cKDTree per band queried with that band's largest radius, and only the
    bands an update touched are rebuilt: what a user who knows the heavy tail would write. ``bands=1``
    is the plain form (one tree, one ball of the largest radius).

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    bands : "auto" or 1 (default "auto")
    band_ratio : float, radius ratio between bands (default 4.0)
    leafsize : int, cKDTree leaf size (default 16)
    """

    name = "ckdtree"
    updates_in_place = False
    update_note = "rebuilt on change (lazily, on the next query; per radius band)"

    @classmethod
    def unavailable(cls) -> str | None:
        return _missing("scipy.spatial", "scipy")

    def __init__(self, centres, radii, *, bands="auto", band_ratio: float = 4.0, leafsize: int = 16):
        why = self.unavailable()
        if why:
            raise ImportError(why)
        super().__init__()
        if isinstance(bands, (bool, np.bool_)) or bands not in ("auto", 1):  # True == 1 to Python
            raise ValueError(f"bands must be 'auto' or 1, got {bands!r}")
        if not (_is_real(band_ratio) and 1.0 < band_ratio <= sys.float_info.max):  # NaN, inf and a huge int fail
            raise ValueError(f"band_ratio must be a number > 1, got {band_ratio!r}")
        if not (_is_real(leafsize) and isinstance(leafsize, (int, np.integer)) and 1 <= leafsize <= _LEAFSIZE_MAX):
            raise ValueError(f"leafsize must be an integer in 1..2**31-1, got {leafsize!r}")
        centres, radii = as_objects(centres, radii)
        self._cKDTree = _import("scipy.spatial").cKDTree
        self.banded = bands == "auto"
        self.band_ratio = float(band_ratio)
        self.leafsize = int(leafsize)
        self._objs = _ById(centres, radii)
        self._band = np.zeros(self._objs.obj.shape[0], dtype=np.int32)
        self._band[: radii.size] = self._band_of(radii)
        self._trees: dict[int, tuple] = {}  # band -> (tree, members (K,) int64, r_max)
        self._order: list[int] = []  # the bands that have a tree, ascending
        self._dirty: set[int] = set(np.unique(self._band[: radii.size]).tolist())
        self._refresh()

    def _band_of(self, r: np.ndarray) -> np.ndarray:
        if not self.banded:
            return np.zeros(np.shape(r), dtype=np.int32)
        with np.errstate(divide="ignore"):
            b = np.floor(np.log(np.maximum(r, 1e-300)) / math.log(self.band_ratio))
        return np.clip(b, -64, 64).astype(np.int32)

    def _refresh(self) -> None:
        """Rebuild the trees of the bands changed since the last query."""
        if not self._dirty:
            return
        live = self._objs.alive
        nb = live.size
        for b in sorted(self._dirty):
            members = np.flatnonzero(live & (self._band[:nb] == b))
            if members.size == 0:
                self._trees.pop(b, None)
                continue
            obj = self._objs.obj[members]
            tree = self._cKDTree(obj[:, :3], leafsize=self.leafsize, balanced_tree=False, compact_nodes=False)
            self._trees[b] = (tree, members, float(obj[:, 3].max()))
        self._dirty.clear()
        self._order = sorted(self._trees)

    def __len__(self) -> int:
        return self._objs.n

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._objs.idt.state()

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        self._refresh()
        k = 0
        cand = 0
        p = (px, py, pz)
        obj = self._objs.obj
        for b in self._order:
            tree, members, rmax = self._trees[b]
            pos = tree.query_ball_point(p, rmax, return_sorted=False)
            if pos:
                ids = members[pos]
                cand += ids.size
                k = K.filter_ids(px, py, pz, ids, obj, out, k)
        self._record(cand, k, len(self._order))  # trees searched; cKDTree reports no node visits
        return k

    def _grow_band(self) -> None:
        if self._band.size < self._objs.obj.shape[0]:
            g = np.zeros(self._objs.obj.shape[0], dtype=np.int32)
            g[: self._band.size] = self._band
            self._band = g

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        i = self._objs.add(x, y, z, r)
        self._grow_band()
        b = int(self._band_of(np.array([r]))[0])
        self._band[i] = b
        self._dirty.add(b)
        return i

    def _remove(self, i: int) -> None:
        self._objs.kill(i)
        self._dirty.add(int(self._band[i]))

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        if r != r:  # NaN: keep the radius
            r = float(self._objs.obj[i, 3])
        self._dirty.add(int(self._band[i]))
        self._objs.obj[i] = (x, y, z, r)
        b = int(self._band_of(np.array([r]))[0])
        self._band[i] = b
        self._dirty.add(b)

    def _move_many(self, ids: np.ndarray, xyz: np.ndarray, rad: np.ndarray) -> None:
        obj = self._objs.obj
        self._dirty.update(np.unique(self._band[ids]).tolist())
        obj[ids, :3] = xyz
        obj[ids, 3] = np.where(np.isnan(rad), obj[ids, 3], rad)
        self._band[ids] = self._band_of(obj[ids, 3])
        self._dirty.update(np.unique(self._band[ids]).tolist())

    def nbytes(self) -> int:
        """The wrapper's arrays plus each tree's data, indices and nodes (an estimate: scipy reports no
        size; a node is about 72 bytes)."""
        total = self._objs.nbytes() + self._band.nbytes
        for tree, members, _ in self._trees.values():
            total += tree.data.nbytes + tree.indices.nbytes + tree.size * 72 + members.nbytes
        return int(total)
