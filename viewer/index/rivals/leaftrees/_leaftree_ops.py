"""The update kernels the leaf-bucket trees (:mod:`viewer.index.rivals.leaftrees._leaftree`) share: remove,
move, batch move and the bottom-up refit of a batch, written once. Each calls its tree's own ``_move`` and
``_detach``, chosen at compile time by the number of dimensions of the extra array ``ex`` (1: the BVH's
summed volume; 2: the kd-tree's node regions; 3: the sphere tree's summed radius cubes; 4: the BSP tree's
summed box volume), and the refit skeleton of :mod:`viewer.index.rivals.leaftrees._leaftree_kernels`
(``refit_up``, and ``recompute``, which each tree implements for its ``ex``), so a compiled kernel holds only
its tree's code. The array layout is described in :mod:`viewer.index.rivals.leaftrees._bvh_kernels` and
:mod:`viewer.index.rivals.leaftrees._kdtree_kernels`.

These entry points are compiled without numba's reference counting (``njit_noref``), and the helpers they
call with them (numba types a callee in its caller's context): no array passed down costs an atomic
increment and decrement (a batch of moves much faster). Nothing on their paths allocates; the trees'
``insert``, which reaches a leaf's split and its scratch arrays, keeps the counting.
"""

from __future__ import annotations

from numba.extending import overload

from viewer.kernels.jit import njit_noref

from . import _bsp_kernels as P
from . import _bvh_kernels as B
from . import _kdtree_kernels as D
from . import _spheretree_kernels as S
from ._leaftree_kernels import recompute, refit_up

PARENT = B.PARENT
assert PARENT == D.PARENT
NNODES, NSLOTS = B.NNODES, B.NSLOTS


def _move(slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth, refit):  # pragma: no cover
    raise NotImplementedError


def _detach(slot, obj, oid, leafof, idslot, ni, ex):  # pragma: no cover
    raise NotImplementedError


@overload(_move)
def _move_impl(slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth, refit):
    if ex.ndim == 1:
        return lambda slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth, refit: B._move(
            slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size, growth, refit)
    if ex.ndim == 3:
        return lambda slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth, refit: S._move(
            slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size, growth, refit)
    if ex.ndim == 4:
        return lambda slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth, refit: P._move(
            slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size, refit)
    return lambda slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth, refit: D._move(
        slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, refit)


@overload(_detach)
def _detach_impl(slot, obj, oid, leafof, idslot, ni, ex):
    if ex.ndim != 2:  # the BVH's, the sphere tree's and the BSP tree's: the leaf's last object fills the hole
        return lambda slot, obj, oid, leafof, idslot, ni, ex: B._detach(slot, obj, oid, leafof, idslot, ni)
    return lambda slot, obj, oid, leafof, idslot, ni, ex: D._detach(slot, obj, oid, idslot, leafof, ni)


@njit_noref
def remove(slot, obj, oid, leafof, idslot, nf, ni, ex):
    """Remove the object in ``slot``; its leaf and the chain above are refitted."""
    idslot[oid[slot]] = -1
    refit_up(_detach(slot, obj, oid, leafof, idslot, ni, ex), obj, nf, ni, ex)


@njit_noref
def move_one(slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth):
    """Move one object (reserve 2 nodes and 2 * leaf_size slots first)."""
    _move(slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth, True)


@njit_noref
def move_batch(first, ids, xyz, rad, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth, sweep, dirty):
    """Move ``ids[first:]`` to ``xyz`` (M, 3) with radii ``rad`` (M,) (NaN: keep the radius). Stops
    early when storage runs short and returns the index of the next move to do. With ``sweep`` the
    per-object chain refits are skipped: the leaves left are flagged in ``dirty`` (per node, uint8) and
    the caller refits them with :func:`refit_dirty` (a reinsert refits its new leaf itself)."""
    m = ids.size
    obj_cap = obj.shape[0]
    node_cap = nf.shape[0]
    for i in range(first, m):
        if st[NSLOTS] + 2 * leaf_size > obj_cap or st[NNODES] + 2 > node_cap:
            return i
        slot = idslot[ids[i]]
        if sweep:
            dirty[leafof[slot]] = 1
        r = rad[i]
        if r != r:  # NaN: keep the radius
            r = obj[slot, 3]
        _move(slot, xyz[i, 0], xyz[i, 1], xyz[i, 2], r, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size, growth,
              not sweep)
    return m


@njit_noref
def refit_dirty(obj, nf, ni, ex, st, dirty):
    """Refit the flagged nodes bottom-up (children have larger indices), flagging each changed node's
    parent; clears the flags."""
    for i in range(st[NNODES] - 1, -1, -1):
        if dirty[i]:
            dirty[i] = 0
            if recompute(i, obj, nf, ni, ex):
                p = ni[i, PARENT]
                if p >= 0:
                    dirty[p] = 1
