"""What the two leaf-bucket binary trees (:class:`~viewer.index.bvh.BVH`, :class:`~viewer.index.kdtree.KDTree`)
share: objects in contiguous leaf slot ranges, the arrays that hold them, their growth, updates through
the kernels' common signatures, batch moves with one bottom-up refit, and the rebuild policy.

A subclass names its kernel module ``K``, which provides (``ex`` being the subclass's extra array: the
BVH's (1,) summed volume, the kd-tree's (M, 6) node regions)::

    query(px, py, pz, obj, oid, nf, ni, out, stack, levels, stats) -> k
    insert(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size)
    refit_all(obj, nf, ni, ex, st)

remove, move and batch move are the shared kernels of :mod:`viewer.index._leaftree_ops`.

and implements :meth:`LeafTree._build_tree` (the bulk build), :meth:`LeafTree._after_build` and
:meth:`LeafTree._worn` (its own rebuild trigger). The array layout is described in the kernel modules.
"""

from __future__ import annotations

import numpy as np

from . import _leaftree_kernels as LK
from . import _leaftree_ops as OPS
from ._contract import IdTable, SphereIndex, as_objects, as_option, grown

__all__ = ["LeafTree"]

NNODES, NSLOTS, GARBAGE, MAXDEPTH = 0, 1, 2, 3  # st: the kernels' counters


class LeafTree(SphereIndex):
    """Base of the leaf-bucket trees: storage, updates and rebuilds; the subclass builds and searches."""

    K = None  # the subclass's kernel module
    ex_per_node = False  # does the extra array ``_ex`` have a row per node (grown with them)?
    growth = 0.0  # the ``growth`` argument of the move kernels
    warm_options = {"leaf_size": 2}

    def __init__(self, centres, radii, leaf_size: int):
        super().__init__()
        self._kquery = self.K.query  # bound once: the query path is the hot one
        self.leaf_size = as_option(leaf_size, "leaf_size", 1, 256, integer=True)
        centres, radii = as_objects(centres, radii)
        n = radii.size
        self._idt = IdTable(n)
        obj = np.empty((n, 4))
        obj[:, :3] = centres
        obj[:, 3] = radii
        self.rebuilds = 0  # rebuilds since construction (degradation, waste or depth)
        self._build(obj, np.arange(n, dtype=np.int64))

    # ----------------------------------------------------------------------------------------- build
    def _build_tree(self, obj: np.ndarray):
        """Bulk-build over ``obj`` (n >= 1, 4): ``(rows (n, 4) in slot order, perm (n,) int64 slot ->
        input row, nf, ni, nnodes, maxdepth)``."""
        raise NotImplementedError

    def _empty_tree(self) -> tuple[np.ndarray, np.ndarray]:
        """``(nf (1, F), ni (1, I))`` of a tree with no objects: one empty leaf."""
        raise NotImplementedError

    def _after_build(self, nnodes: int) -> None:
        """Fill ``self._ex`` and whatever else the subclass derives from a fresh tree."""

    def _worn(self) -> bool:
        """Has the tree degraded enough since its build to be rebuilt (beside dead slots)?"""
        return False

    def _build(self, obj: np.ndarray, ids: np.ndarray) -> None:
        """Build over rows ``obj`` (n, 4) carrying ``ids`` (n,) int64."""
        n = obj.shape[0]
        if n:
            rows_, perm, nf, ni, nnodes, maxdepth = self._build_tree(obj)
        else:
            rows_, perm = obj, np.zeros(0, dtype=np.int64)
            nf, ni = self._empty_tree()
            nnodes, maxdepth = 1, 0
        slots = n + n // 4 + 4 * self.leaf_size + 16
        self._obj = np.zeros((slots, 4))
        self._obj[:n] = rows_
        self._oid = np.full(slots, -1, dtype=np.int64)
        self._oid[:n] = ids[perm]
        self._idt.slots[ids[perm]] = np.arange(n, dtype=np.int64)
        self._leafof = np.zeros(slots, dtype=np.int32)
        LK.assign_leaves(ni, nnodes, self._leafof)
        rows = nnodes + nnodes // 4 + 16
        self._nf = grown(nf, rows, 0.0)
        self._ni = grown(ni, rows, 0)
        self._st = np.array([nnodes, n, 0, maxdepth], dtype=np.int64)
        self._after_build(nnodes)
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
        ns = int(self._st[NSLOTS])
        live = np.flatnonzero(self._oid[:ns] >= 0)
        self._build(self._obj[live], self._oid[live])
        self.rebuilds += 1

    def _warm_more(self) -> None:
        self.rebuild()

    def _after_update(self, k: int = 1) -> None:
        """Count ``k`` updates; rebuild (at most once per n / 4 updates) when dead slots exceed the
        live ones or the subclass says the tree is worn."""
        self._updates += k
        st = self._st
        if st[MAXDEPTH] + 4 > self._stack.size:
            self._scratch(int(st[MAXDEPTH]))
        if self._updates < self._n_build // 4 + 64:
            return
        if st[GARBAGE] > max(self._n, 1024) or self._worn():
            self.rebuild()

    def _reserve(self, inserts: int) -> None:
        """Make room for ``inserts`` insertions (each may add 2 nodes and 2 leaves' slots)."""
        st = self._st
        need = int(st[NSLOTS]) + 2 * self.leaf_size * inserts
        if need > self._obj.shape[0]:
            rows = max(need, 2 * self._obj.shape[0])
            self._obj = grown(self._obj, rows, 0.0)
            self._oid = grown(self._oid, rows, -1)
            self._leafof = grown(self._leafof, rows, 0)
        need = int(st[NNODES]) + 2 * inserts
        if need > self._nf.shape[0]:
            rows = max(need, 2 * self._nf.shape[0])
            self._nf = grown(self._nf, rows, 0.0)
            self._ni = grown(self._ni, rows, 0)
            if self.ex_per_node:
                self._ex = grown(self._ex, rows, 0.0)

    def _tree(self) -> tuple:
        """The arrays every update kernel takes, in their order."""
        return self._obj, self._oid, self._leafof, self._idt.slots, self._nf, self._ni, self._ex, self._st

    # ----------------------------------------------------------------------------------------- contract
    def __len__(self) -> int:
        return self._n

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._idt.state()

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        return self._kquery(px, py, pz, self._obj, self._oid, self._nf, self._ni, out, self._stack, self._levels,
                            self._stats)

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        self._reserve(1)
        i = self._idt.new_id(-1)
        self.K.insert(x, y, z, r, i, *self._tree(), self.leaf_size)
        self._n += 1
        self._after_update()
        return i

    def _remove(self, i: int) -> None:
        OPS.remove(int(self._idt.slots[i]), *self._tree()[:7])
        self._n -= 1
        self._after_update()

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        s = int(self._idt.slots[i])
        if r != r:  # NaN: keep the radius
            r = float(self._obj[s, 3])
        self._reserve(1)
        OPS.move_one(s, x, y, z, r, *self._tree(), self.leaf_size, self.growth)
        self._after_update()

    def _move_many(self, ids: np.ndarray, xyz: np.ndarray, rad: np.ndarray) -> None:
        # In a batch larger than an eighth of the tree, no chain is refitted per object: the leaves
        # touched are flagged and refitted, with their changed ancestors, in one bottom-up pass.
        m = ids.size
        sweep = m > int(self._st[NNODES]) // 8
        i = 0
        while i < m:
            self._reserve(min(m - i, 4096))
            if sweep and self._dirty.size < self._nf.shape[0]:
                self._dirty = grown(self._dirty, self._nf.shape[0], 0)
            i = OPS.move_batch(i, ids, xyz, rad, *self._tree(), self.leaf_size, self.growth, sweep, self._dirty)
        if sweep:
            OPS.refit_dirty(self._obj, self._nf, self._ni, self._ex, self._st, self._dirty)
        self._after_update(m)

    # ----------------------------------------------------------------------------------------- report
    def nbytes(self) -> int:
        arrays = (self._obj, self._oid, self._leafof, self._nf, self._ni, self._ex, self._idt.slots, self._dirty)
        return int(sum(a.nbytes for a in arrays))

    def _check_leaves(self, check_node, check_object) -> None:
        """Walk the tree for ``check_bounds`` (tests): ``check_node(node, child)`` on every child of an
        inner node, ``check_object(leaf, slot)`` on every live slot; asserts the id table, the slot ->
        leaf map and the object count, and that the refitted tree equals the stored one."""
        nn = int(self._st[NNODES])
        ni = self._ni[:nn]
        K = self.K
        live = 0
        for node in range(nn):
            ch = ni[node, K.CHILD]
            if ch >= 0:
                for c in (ch, ch + 1):
                    check_node(node, c)
                continue
            s, cnt = ni[node, K.START], ni[node, K.CNT]
            assert cnt <= ni[node, K.CAP]
            for t in range(s, s + cnt):
                live += 1
                i = self._oid[t]
                assert i >= 0 and self._idt.slots[i] == t and self._leafof[t] == node
                check_object(node, t)
        assert live == self._n
        tight = self._nf.copy()
        K.refit_all(self._obj, tight, self._ni, self._ex.copy(), self._st.copy())
        assert np.array_equal(tight[:nn], self._nf[:nn], equal_nan=True), "a node's bounds are not tight"
