"""A bounding volume hierarchy over the spheres' boxes: an object partition, built top-down, queried
by descent, refitted in place on moves and rebuilt when refitting has degraded it.

The kernels are in :mod:`viewer.index._bvh_kernels`, which also describes the array layout.
"""

from __future__ import annotations

import numpy as np

from . import _bvh_kernels as K
from ._contract import IdTable, SphereIndex, as_objects, grown as _grown

__all__ = ["BVH"]


class BVH(SphereIndex):
    """Bounding volume hierarchy (binary, axis-aligned boxes) over each sphere's box.

    Built top-down with binned splits that minimise the *volume* heuristic (a point lands in a box with
    probability proportional to its volume), with candidate splits along x, y, z and along log radius,
    so the few huge spheres of a heavy-tailed scene get their own subtree. Leaves hold up to
    ``leaf_size`` objects in contiguous slots. A query descends with a small stack into every child
    whose box holds the point.

    Updates: ``move`` writes the object in place and refits its leaf and the chain above (stopping
    where a box does not change); a move that would more than ``reinsert_growth``-fold its leaf's
    volume instead detaches the object and reinserts it into the leaf that grows least (splitting a
    full leaf). ``insert`` does the same; ``remove`` swaps the leaf's last object into the hole. The
    summed volume of all node boxes (the expected traversal cost) is tracked; when it exceeds
    ``rebuild_factor`` times its value at build, or dead slots exceed the live ones, the tree is rebuilt
    (at most once per ``n / 4`` updates, so the rebuild cost is amortised).

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    leaf_size : int, objects per leaf (default 4)
    bins : int, split candidates per axis (default 16)
    rebuild_factor : float, rebuild when the summed node volume grows by this factor (default 2.0)
    reinsert_growth : float, reinsert a moved object rather than refit (default 2.0)
    """

    name = "bvh"
    updates_in_place = True
    update_note = "moves refit in place; far moves reinsert; rebuilt when refits double the cost"

    warm_options = {"leaf_size": 2}

    def __init__(
        self,
        centres,
        radii,
        *,
        leaf_size: int = 4,
        bins: int = 16,
        rebuild_factor: float = 2.0,
        reinsert_growth: float = 2.0,
    ):
        super().__init__()
        if not (isinstance(leaf_size, (int, np.integer)) and 1 <= leaf_size <= 256):
            raise ValueError(f"leaf_size must be an integer in 1..256, got {leaf_size!r}")
        if not (isinstance(bins, (int, np.integer)) and 2 <= bins <= 256):
            raise ValueError(f"bins must be an integer in 2..256, got {bins!r}")
        if not rebuild_factor > 1.0:
            raise ValueError(f"rebuild_factor must be > 1, got {rebuild_factor!r}")
        if not reinsert_growth >= 1.0:
            raise ValueError(f"reinsert_growth must be >= 1, got {reinsert_growth!r}")
        centres, radii = as_objects(centres, radii)
        self.leaf_size = int(leaf_size)
        self.bins = int(bins)
        self.rebuild_factor = float(rebuild_factor)
        self.reinsert_growth = float(reinsert_growth)
        n = radii.size
        self._idt = IdTable(n)
        obj = np.empty((n, 4))
        obj[:, :3] = centres
        obj[:, 3] = radii
        self.rebuilds = 0  # rebuilds since construction (degradation, waste or depth)
        self._build(obj, np.arange(n, dtype=np.int64))

    # ----------------------------------------------------------------------------------------- build
    def _build(self, obj: np.ndarray, ids: np.ndarray) -> None:
        """Build over rows ``obj`` (n, 4) carrying ``ids`` (n,) int64."""
        n = obj.shape[0]
        if n:
            mean_r = float(obj[:, 3].mean())
            rkey_eps = 1e-3 * mean_r if mean_r > 0 else 1.0
            perm, nf, ni, nnodes, maxdepth = K.build(obj, self.leaf_size, self.bins, rkey_eps)
        else:
            perm = np.zeros(0, dtype=np.int64)
            nf = np.array([[np.inf] * 3 + [-np.inf] * 3])
            ni = np.array([[-1, 0, 0, 0, -1, 0]], dtype=np.int32)
            nnodes, maxdepth = 1, 0
        slots = n + n // 4 + 4 * self.leaf_size + 16
        self._obj = np.empty((slots, 4))
        self._obj[:n] = obj[perm]
        self._oid = np.full(slots, -1, dtype=np.int64)
        self._oid[:n] = ids[perm]
        self._idt.slots[ids[perm]] = np.arange(n, dtype=np.int64)
        self._leafof = np.zeros(slots, dtype=np.int32)
        K.assign_leaves(ni, nnodes, self._leafof)
        rows = nnodes + nnodes // 4 + 16
        self._nf = _grown(nf, rows, 0.0)
        self._ni = _grown(ni, rows, 0)
        self._st = np.array([nnodes, n, 0, maxdepth], dtype=np.int64)
        self._fst = np.array([K.total_volume(nf, nnodes)])
        self._cost0 = float(self._fst[0])
        self._depth0 = int(maxdepth)
        self._n = n
        self._n_build = n
        self._updates = 0
        self._dirty = np.zeros(0, dtype=np.uint8)  # per-node refit flags of a batch move
        self._scratch(maxdepth)

    def _scratch(self, maxdepth: int) -> None:
        if getattr(self, "_stack", None) is None or self._stack.size < maxdepth + 4:
            self._stack = np.empty(2 * maxdepth + 8, dtype=np.int32)
            self._levels = np.zeros(2 * maxdepth + 8, dtype=np.int64)

    def rebuild(self) -> None:
        """Rebuild the tree from the live objects (ids are kept)."""
        ns = int(self._st[K.NSLOTS])
        live = np.flatnonzero(self._oid[:ns] >= 0)
        self._build(self._obj[live], self._oid[live])
        self.rebuilds += 1

    def _warm_more(self) -> None:
        self.rebuild()

    def _after_update(self, k: int = 1) -> None:
        self._updates += k
        st = self._st
        if st[K.MAXDEPTH] + 4 > self._stack.size:
            self._scratch(int(st[K.MAXDEPTH]))
        if self._updates < self._n_build // 4 + 64:
            return
        degraded = self._fst[0] > self.rebuild_factor * self._cost0
        wasteful = st[K.GARBAGE] > max(self._n, 1024)
        deep = st[K.MAXDEPTH] > 2 * self._depth0 + 16
        if degraded or wasteful or deep:
            self.rebuild()

    def _reserve(self, inserts: int) -> None:
        """Make room for ``inserts`` insertions (each may add 2 nodes and 2 leaves' slots)."""
        st = self._st
        need = int(st[K.NSLOTS]) + 2 * self.leaf_size * inserts
        if need > self._obj.shape[0]:
            rows = max(need, 2 * self._obj.shape[0])
            self._obj = _grown(self._obj, rows, 0.0)
            self._oid = _grown(self._oid, rows, -1)
            self._leafof = _grown(self._leafof, rows, 0)
        need = int(st[K.NNODES]) + 2 * inserts
        if need > self._nf.shape[0]:
            rows = max(need, 2 * self._nf.shape[0])
            self._nf = _grown(self._nf, rows, 0.0)
            self._ni = _grown(self._ni, rows, 0)

    # ----------------------------------------------------------------------------------------- query
    def __len__(self) -> int:
        return self._n

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._idt.state()

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        k, cand, visited, most = K.query(
            px, py, pz, self._obj, self._oid, self._nf, self._ni, out, self._stack, self._levels
        )
        self._record(cand, k, visited, most)
        return k

    # ----------------------------------------------------------------------------------------- updates
    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        self._reserve(1)
        i = self._idt.new_id(-1)
        K.insert(
            x, y, z, r, i, self._obj, self._oid, self._leafof, self._idt.slots, self._nf, self._ni,
            self._st, self._fst, self.leaf_size,
        )
        self._n += 1
        self._after_update()
        return i

    def _remove(self, i: int) -> None:
        s = int(self._idt.slots[i])
        K.remove(s, self._obj, self._oid, self._leafof, self._idt.slots, self._nf, self._ni, self._fst)
        self._n -= 1
        self._after_update()

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        s = int(self._idt.slots[i])
        if r != r:  # NaN: keep the radius
            r = float(self._obj[s, 3])
        self._reserve(1)
        K.move_one(
            s, x, y, z, r, self._obj, self._oid, self._leafof, self._idt.slots, self._nf, self._ni,
            self._st, self._fst, self.leaf_size, self.reinsert_growth,
        )
        self._after_update()

    def _move_many(self, ids: np.ndarray, xyz: np.ndarray, rad: np.ndarray) -> None:
        # In a batch larger than an eighth of the tree, no chain is refitted per object: the leaves
        # touched are flagged and refitted, with their changed ancestors, in one bottom-up pass.
        m = ids.size
        sweep = m > int(self._st[K.NNODES]) // 8
        if sweep and self._dirty.size < self._nf.shape[0]:
            self._dirty = np.zeros(self._nf.shape[0], dtype=np.uint8)
        i = 0
        while i < m:
            self._reserve(min(m - i, 4096))
            if sweep and self._dirty.size < self._nf.shape[0]:
                self._dirty = _grown(self._dirty, self._nf.shape[0], 0)
            i = K.move_batch(
                i, ids, xyz, rad, self._obj, self._oid, self._leafof, self._idt.slots, self._nf,
                self._ni, self._st, self._fst, self.leaf_size, self.reinsert_growth, sweep, self._dirty,
            )
        if sweep and m:
            K.refit_dirty(self._obj, self._nf, self._ni, self._st, self._fst, self._dirty)
        self._after_update(m)

    # ----------------------------------------------------------------------------------------- report
    def nbytes(self) -> int:
        arrays = (self._obj, self._oid, self._leafof, self._nf, self._ni, self._idt.slots, self._dirty)
        return int(sum(a.nbytes for a in arrays))

    def check_bounds(self) -> None:
        """Assert the invariants (tests): every live object's box lies in its leaf's box and every
        child's box in its parent's; ``idslot`` and ``oid`` agree."""
        nn = int(self._st[K.NNODES])
        nf, ni = self._nf[:nn], self._ni[:nn]
        live = 0
        for node in range(nn):
            ch = ni[node, K.CHILD]
            if ch >= 0:
                for c in (ch, ch + 1):
                    if ni[c, K.CNT] or ni[c, K.CHILD] >= 0:
                        assert ni[c, K.PARENT] == node
                        if np.isfinite(nf[c]).all():
                            assert (nf[node, :3] <= nf[c, :3]).all(), (node, c)
                            assert (nf[node, 3:] >= nf[c, 3:]).all(), (node, c)
                continue
            s, cnt = ni[node, K.START], ni[node, K.CNT]
            assert cnt <= ni[node, K.CAP]
            for t in range(s, s + cnt):
                live += 1
                x = self._obj[t]
                i = self._oid[t]
                assert i >= 0 and self._idt.slots[i] == t and self._leafof[t] == node
                assert (nf[node, :3] <= x[:3] - x[3]).all() and (nf[node, 3:] >= x[:3] + x[3]).all()
        assert live == self._n
        tight = self._nf.copy()
        K.refit_all(self._obj, tight, self._ni, self._st.copy(), self._fst.copy())
        assert np.array_equal(tight[:nn], nf), "a box is not the tight union of its contents"
