"""A kd-tree over the centres whose nodes keep the largest radius below them: a query prunes a subtree
when the point is farther than that radius from the subtree's box of centres.

The kernels are in :mod:`viewer.index._kdtree_kernels`, which also describes the array layout.
"""

from __future__ import annotations

import numpy as np

from . import _kdtree_kernels as K
from ._contract import IdTable, SphereIndex, as_objects, grown as _grown

__all__ = ["KDTree"]


class KDTree(SphereIndex):
    """kd-tree over the sphere centres, each node holding the tight box of the centres below it and the
    largest radius below it.

    Built by median splits on the axis where the centres spread most, down to leaves of at most
    ``leaf_size`` objects in contiguous slots, sorted by radius (largest first) so a leaf scan stops at
    the first sphere too small to reach the point. A query descends into a child only when the squared
    distance from the point to the child's box is at most its largest radius squared.

    Updates: ``move`` is in place when the new centre stays inside its leaf's region (the split planes
    above it); the leaf's box and largest radius are then refitted up the chain (tightening as well as
    loosening). A centre that leaves the region is removed and reinserted into the leaf whose region
    holds it; a full leaf splits at its median. The tree is rebuilt (at most once per ``n / 4``
    updates) when dead slots exceed the live ones or the depth has grown by more than 16 levels.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    leaf_size : int, objects per leaf (default 8)
    """

    name = "kdtree"
    updates_in_place = True
    update_note = "in place within the leaf's region, else remove + insert; periodic rebuild"

    warm_options = {"leaf_size": 2}

    def __init__(self, centres, radii, *, leaf_size: int = 8):
        super().__init__()
        if not (isinstance(leaf_size, (int, np.integer)) and 1 <= leaf_size <= 256):
            raise ValueError(f"leaf_size must be an integer in 1..256, got {leaf_size!r}")
        centres, radii = as_objects(centres, radii)
        self.leaf_size = int(leaf_size)
        n = radii.size
        self._idt = IdTable(n)
        obj = np.empty((n, 4))
        obj[:, :3] = centres
        obj[:, 3] = radii
        self.rebuilds = 0  # rebuilds since construction (degradation, waste or depth)
        self._build(obj, np.arange(n, dtype=np.int64))

    # ----------------------------------------------------------------------------------------- build
    def _build(self, obj: np.ndarray, ids: np.ndarray) -> None:
        n = obj.shape[0]
        if n:
            D, perm, nf, ni, nnodes, maxdepth = K.build(obj, self.leaf_size)
        else:
            D, perm = obj, np.zeros(0, dtype=np.int64)
            nf = np.zeros((1, K.NF_COLS))
            ni = np.array([[-1, 0, 0, 0, -1, 0, 0]], dtype=np.int32)
            nnodes, maxdepth = 1, 0
        slots = n + n // 4 + 4 * self.leaf_size + 16
        self._obj = np.zeros((slots, 4))
        self._obj[:n] = D
        self._oid = np.full(slots, -1, dtype=np.int64)
        self._oid[:n] = ids[perm]
        self._idt.slots[ids[perm]] = np.arange(n, dtype=np.int64)
        self._leafof = np.zeros(slots, dtype=np.int32)
        K.assign_leaves(ni, nnodes, self._leafof)
        rows = nnodes + nnodes // 4 + 16
        self._nf = _grown(nf, rows, 0.0)
        self._ni = _grown(ni, rows, 0)
        self._nf[:nnodes, :6] = 0.0  # so refit_all sees every node as changed
        self._reg = np.zeros((rows, 6))
        K.regions(self._nf, self._ni, nnodes, self._reg)
        K.refit_all(self._obj, self._nf, self._ni, nnodes)
        self._st = np.array([nnodes, n, 0, maxdepth], dtype=np.int64)
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
        if st[K.GARBAGE] > max(self._n, 1024) or st[K.MAXDEPTH] > self._depth0 + 16:
            self.rebuild()

    def _reserve(self, inserts: int) -> None:
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
            self._reg = _grown(self._reg, rows, 0.0)

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
            self._reg, self._st, self.leaf_size,
        )
        self._n += 1
        self._after_update()
        return i

    def _remove(self, i: int) -> None:
        s = int(self._idt.slots[i])
        K.remove(s, self._obj, self._oid, self._leafof, self._idt.slots, self._nf, self._ni)
        self._n -= 1
        self._after_update()

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        s = int(self._idt.slots[i])
        if r != r:  # NaN: keep the radius
            r = float(self._obj[s, 3])
        self._reserve(1)
        K.move_one(
            s, x, y, z, r, self._obj, self._oid, self._leafof, self._idt.slots, self._nf, self._ni,
            self._reg, self._st, self.leaf_size,
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
                self._ni, self._reg, self._st, self.leaf_size, sweep, self._dirty,
            )
        if sweep and m:
            K.refit_dirty(self._obj, self._nf, self._ni, int(self._st[K.NNODES]), self._dirty)
        self._after_update(m)

    # ----------------------------------------------------------------------------------------- report
    def nbytes(self) -> int:
        arrays = (self._obj, self._oid, self._leafof, self._nf, self._ni, self._reg, self._idt.slots, self._dirty)
        return int(sum(a.nbytes for a in arrays))

    def check_bounds(self) -> None:
        """Assert the invariants (tests): each node's box holds the centres below it and its largest
        radius bounds theirs; leaves are radius-sorted and their centres lie in their regions."""
        nn = int(self._st[K.NNODES])
        nf, ni = self._nf[:nn], self._ni[:nn]
        live = 0
        for node in range(nn):
            ch = ni[node, K.CHILD]
            if ch >= 0:
                for c in (ch, ch + 1):
                    assert ni[c, K.PARENT] == node
                    if ni[c, K.CHILD] >= 0 or ni[c, K.CNT]:
                        assert (nf[node, :3] <= nf[c, :3]).all() and (nf[node, 3:6] >= nf[c, 3:6]).all()
                        assert nf[node, K.RMAX] >= nf[c, K.RMAX]
                continue
            s, cnt = ni[node, K.START], ni[node, K.CNT]
            assert cnt <= ni[node, K.CAP]
            rs = self._obj[s : s + cnt, 3]
            assert (np.diff(rs) <= 0).all(), "leaf not sorted by radius"
            for t in range(s, s + cnt):
                live += 1
                x = self._obj[t]
                i = self._oid[t]
                assert i >= 0 and self._idt.slots[i] == t and self._leafof[t] == node
                assert (nf[node, :3] <= x[:3]).all() and (nf[node, 3:6] >= x[:3]).all()
                assert nf[node, K.RMAX] >= x[3]
                assert K._in_region(node, x[0], x[1], x[2], self._nf, self._ni)
                assert (self._reg[node, :3] <= x[:3]).all() and (self._reg[node, 3:] >= x[:3]).all()
        assert live == self._n
        tight = self._nf.copy()
        K.refit_all(self._obj, tight, self._ni, nn)
        assert np.array_equal(tight[:nn], nf), "a box or largest radius is not tight"
