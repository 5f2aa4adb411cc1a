"""Numba kernels of the kd-tree (:mod:`viewer.index.rivals.leaftrees.kdtree`): build, point query, refit,
insert, remove, move.

The tree is a struct of flat arrays, passed whole to every kernel:

- ``obj`` : (S, 4) float64 object slots: x, y, z, r (world units). Leaves own contiguous slot ranges
  ``[start, start + cnt)`` with room for ``cap``, kept sorted by radius, largest first, so a leaf scan
  stops at the first radius too small to reach the point. ``oid`` (S,) int64 slot -> id (-1 empty);
  ``leafof`` (S,) int32 slot -> leaf; ``idslot`` (I,) int64 id -> slot.
- ``nf`` : (M, 8) float64 per node: the tight box of the centres below (lo x, y, z, hi x, y, z; empty:
  lo = +inf, hi = -inf), the largest radius below (``RMAX``), and the split value (``SPLIT``).
- ``ni`` : (M, 7) int32: ``CHILD`` (first of two adjacent children, -1 for a leaf), ``START``, ``CNT``,
  ``CAP``, ``PARENT``, ``DEPTH``, ``AXIS``. The left child's region is ``coord <= split``, the right
  child's ``coord >= split`` (ties may sit on either side); an insert goes left when ``coord < split``.
- ``reg`` : (M, 6) float64 each node's region (lo x, y, z, hi x, y, z), the split planes above it, so
  a move checks "still in my leaf?" with one row instead of a walk up the tree.
- ``st`` : (4,) int64 ``[nnodes, nslots, garbage, maxdepth]``.

Pruning is exact: for a centre inside a box, the rounded distance from the point to the box never
exceeds the rounded distance to the centre (every step of ``(dx*dx + dy*dy) + dz*dz`` is monotone), so
``d2(box) > rmax * rmax`` discards only spheres the contract's predicate rejects.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload

from viewer.kernels.jit import njit, njit_noref

from ..._contract_kernels import emit, holds
from ._leaftree_kernels import EMPTY_BOX, build_state, child_range, children_box, gather_split, finish_query, in_box
from ._leaftree_kernels import pop_node, recompute, refit_nodes, refit_up, relocate, select_kth, set_slot, split_leaf
from ._leaftree_kernels import end_steps, make_leaf, next_node, split_children, store_box, swap_rows

CHILD, START, CNT, CAP, PARENT, DEPTH, AXIS = 0, 1, 2, 3, 4, 5, 6
NI_COLS = 7
RMAX, SPLIT = 6, 7
NF_COLS = 8
NNODES, NSLOTS, GARBAGE, MAXDEPTH = 0, 1, 2, 3
INF = np.inf


@njit
def _box_d2(nf, i, px, py, pz):
    """Squared distance from the point to node i's centre box (inf for an empty node)."""
    dx = max(nf[i, 0] - px, px - nf[i, 3], 0.0)
    dy = max(nf[i, 1] - py, py - nf[i, 4], 0.0)
    dz = max(nf[i, 2] - pz, pz - nf[i, 5], 0.0)
    return (dx * dx + dy * dy) + dz * dz


# ----------------------------------------------------------------------------------------- build


@njit
def build(obj, leaf_size):
    """Median kd-tree over the centres of ``obj`` (n >= 1, 4): each node splits its objects at the
    median of the axis where their centres spread most, down to leaves of at most ``leaf_size``, each
    sorted by radius (largest first). Returns ``D`` (n, 4) the rows in slot order, ``perm`` (n,) int64
    (slot -> input row), ``nf`` (M, 8), ``ni`` (M, 7), ``nnodes``, ``maxdepth``; leaves have
    ``cap == cnt``. Boxes and radii are filled bottom-up by the caller (:func:`refit_all`). The same
    build as :func:`build_start` then :func:`build_steps` until done."""
    D, perm, nf, ni, stack, ctl = build_start(obj)
    build_steps(D, perm, nf, ni, stack, ctl, leaf_size, -1)
    nnodes = ctl[1]
    return D, perm, nf[:nnodes].copy(), ni[:nnodes].copy(), nnodes, ctl[2]


@njit
def build_start(obj):
    """The state of a build over ``obj`` (n >= 1, 4) that :func:`build_steps` advances a slice at a time:
    ``D`` (n, 4) the rows (reordered in place into slot order), ``perm`` (n,) int64, ``nf`` (2n + 1, 8),
    ``ni`` (2n + 1, 7) int32, ``stack`` (2n + 1,) int64 of nodes still to split and ``ctl`` (3,) int64
    ``[stack size, nnodes, maxdepth]`` (``_leaftree_kernels.build_state``)."""
    D = obj.copy()
    perm, ni, stack, ctl = build_state(D, np.int64(NI_COLS))  # not a literal: compiled once for every tree
    nf = np.zeros((ni.shape[0], NF_COLS))
    return D, perm, nf, ni, stack, ctl


@njit
def build_steps(D, perm, nf, ni, stack, ctl, leaf_size, budget):
    """Split the nodes on ``stack`` (the state of :func:`build_start`) until the objects of the nodes
    taken reach ``budget`` (< 0: no limit); returns True when the tree is complete. A node is split
    whole, so one call does at least one node's work (the root's: every object)."""
    sp, nnodes, maxdepth = ctl[0], ctl[1], ctl[2]
    work = 0
    while sp > 0 and (budget < 0 or work < budget):
        sp, node, s, c, d, work, maxdepth = next_node(stack, sp, ni, work, maxdepth)
        if c <= leaf_size:
            make_leaf(node, c, ni)
            # sort by radius, largest first (insertion sort: leaves are small)
            for i in range(s + 1, s + c):
                j = i
                while j > s and D[j - 1, 3] < D[j, 3]:
                    swap_rows(D, perm, j - 1, j)
                    j -= 1
            continue
        k0 = INF
        k1 = INF
        k2 = INF
        m0 = -INF
        m1 = -INF
        m2 = -INF
        for o in range(s, s + c):
            k0 = min(k0, D[o, 0])
            m0 = max(m0, D[o, 0])
            k1 = min(k1, D[o, 1])
            m1 = max(m1, D[o, 1])
            k2 = min(k2, D[o, 2])
            m2 = max(m2, D[o, 2])
        a = 0
        span = m0 - k0
        if m1 - k1 > span:
            a = 1
            span = m1 - k1
        if m2 - k2 > span:
            a = 2
        mid = s + c // 2
        select_kth(D, perm, a, s, s + c - 1, mid)
        ni[node, AXIS] = a
        nf[node, SPLIT] = D[mid, a]
        sp, nnodes = split_children(node, s, c, d, mid, ni, stack, sp, nnodes)
    return end_steps(ctl, sp, nnodes, maxdepth)


# ----------------------------------------------------------------------------------------- query


@njit_noref  # no reference counting: the atomic counts of its eight arrays were a large share of a short query
def query(px, py, pz, obj, oid, nf, ni, out, stack, levels, stats):
    """Ids of the spheres holding (px, py, pz) into ``out``; returns how many (writes at most
    ``out.size`` but counts them all). ``stats`` (4,) int64 gets candidates, visible, nodes visited and
    the most nodes visited on one level. ``stack`` (>= maxdepth + 2,) and ``levels`` (>= maxdepth + 1,) are scratch."""
    size = out.shape[0]
    k = 0
    cand = 0
    visited = 0
    deepest = 0
    levels[0] = 0
    sp = 0
    r0 = nf[0, RMAX]
    if _box_d2(nf, 0, px, py, pz) <= r0 * r0:
        stack[0] = 0
        sp = 1
    while sp > 0:
        sp, node, visited, deepest = pop_node(stack, sp, ni, levels, visited, deepest)
        ch = ni[node, CHILD]
        if ch < 0:
            d2 = _box_d2(nf, node, px, py, pz)
            s = ni[node, START]
            for t in range(s, s + ni[node, CNT]):
                r = obj[t, 3]
                rr = r * r
                if rr < d2:  # sorted by radius: no later sphere reaches the point either
                    break
                cand += 1
                if holds(px, py, pz, obj[t, 0], obj[t, 1], obj[t, 2], r):
                    k = emit(out, size, k, oid[t])
        else:
            for c in range(ch, ch + 2):
                rc = nf[c, RMAX]
                if _box_d2(nf, c, px, py, pz) <= rc * rc:
                    stack[sp] = c
                    sp += 1
    return finish_query(stats, k, cand, visited, levels, deepest)


# ----------------------------------------------------------------------------------------- refit


@njit(inline="always")  # into the refit skeleton's loops: no call a node
def _recompute(node, obj, nf, ni):
    """Recompute node's centre box and largest radius from its objects or children; True if changed."""
    b0, b1, b2, b3, b4, b5 = EMPTY_BOX
    rm = 0.0
    ch = ni[node, CHILD]
    if ch < 0:
        s = ni[node, START]
        for t in range(s, s + ni[node, CNT]):
            b0 = min(b0, obj[t, 0])
            b3 = max(b3, obj[t, 0])
            b1 = min(b1, obj[t, 1])
            b4 = max(b4, obj[t, 1])
            b2 = min(b2, obj[t, 2])
            b5 = max(b5, obj[t, 2])
            rm = max(rm, obj[t, 3])
    else:
        b0, b1, b2, b3, b4, b5 = children_box(nf, ch)
        rm = max(nf[ch, RMAX], nf[ch + 1, RMAX])
    changed = store_box(nf, node, b0, b1, b2, b3, b4, b5)
    if rm != nf[node, RMAX]:
        nf[node, RMAX] = rm
        changed = True
    return changed


@overload(recompute, inline="always")
def _recompute_kdtree(node, obj, nf, ni, ex):
    if ex.ndim == 2:  # the kd-tree's node regions
        return lambda node, obj, nf, ni, ex: _recompute(node, obj, nf, ni)
    return None


@njit
def refit_all(obj, nf, ni, reg, st):
    """Refit every node bottom-up (children have larger indices than parents); ``reg``, the node regions,
    is unchanged (the skeleton's ``_leaftree_kernels.recompute`` knows the kd-tree by it)."""
    refit_nodes(obj, nf, ni, reg, st)


# ----------------------------------------------------------------------------------------- updates


@njit
def _copy_slot(dst, src, obj, oid, idslot):
    for q in range(4):
        obj[dst, q] = obj[src, q]
    oid[dst] = oid[src]
    idslot[oid[dst]] = dst


@njit
def _detach(slot, obj, oid, idslot, leafof, ni):
    """Take the object out of its leaf, shifting the smaller radii up one slot; returns the leaf."""
    leaf = np.int64(leafof[slot])  # int64, as every other node index: its callees compile once
    last = ni[leaf, START] + ni[leaf, CNT] - 1
    for t in range(slot, last):
        _copy_slot(t, t + 1, obj, oid, idslot)
    oid[last] = -1
    ni[leaf, CNT] -= 1
    return leaf


@njit
def _resort(slot, obj, oid, idslot, ni, leaf):
    """Restore the radius order after the object in ``slot`` changed radius (bubble it into place)."""
    s = ni[leaf, START]
    e = s + ni[leaf, CNT]
    t = slot
    while t > s and obj[t - 1, 3] < obj[t, 3]:
        _swap_slots(t - 1, t, obj, oid, idslot)
        t -= 1
    while t + 1 < e and obj[t + 1, 3] > obj[t, 3]:
        _swap_slots(t, t + 1, obj, oid, idslot)
        t += 1


@njit
def _swap_slots(a, b, obj, oid, idslot):
    for q in range(4):
        v = obj[a, q]
        obj[a, q] = obj[b, q]
        obj[b, q] = v
    i = oid[a]
    oid[a] = oid[b]
    oid[b] = i
    idslot[oid[a]] = a
    idslot[oid[b]] = b


@njit
def _find_leaf(x, y, z, nf, ni):
    node = 0
    while ni[node, CHILD] >= 0:
        a = ni[node, AXIS]
        v = x if a == 0 else (y if a == 1 else z)
        node = ni[node, CHILD] + (0 if v < nf[node, SPLIT] else 1)
    return node


@njit
def _child_regions(node, nf, ni, reg):
    """The regions of an internal node's children: its own, cut at the split (closed on both sides)."""
    ch = ni[node, CHILD]
    a = ni[node, AXIS]
    for c in range(ch, ch + 2):
        for q in range(6):
            reg[c, q] = reg[node, q]
    reg[ch, 3 + a] = nf[node, SPLIT]
    reg[ch + 1, a] = nf[node, SPLIT]


@njit
def regions(nf, ni, nnodes, reg):
    """Every node's region ``reg`` (M, 6) (lo x, y, z, hi x, y, z), top-down from the unbounded root."""
    for q in range(3):
        reg[0, q] = -INF
        reg[0, 3 + q] = INF
    for i in range(nnodes):
        if ni[i, CHILD] >= 0:
            _child_regions(i, nf, ni, reg)


@njit
def _in_region(leaf, x, y, z, nf, ni):
    """Is the point inside the leaf's region (the split planes above it)?"""
    node = leaf
    p = ni[node, PARENT]
    while p >= 0:
        a = ni[p, AXIS]
        v = x if a == 0 else (y if a == 1 else z)
        if node == ni[p, CHILD]:
            if v > nf[p, SPLIT]:
                return False
        elif v < nf[p, SPLIT]:
            return False
        node = p
        p = ni[node, PARENT]
    return True


@njit
def _place(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, reg, st, leaf_size, refit):
    """Insert into the leaf whose region holds the centre, in radius order. A full range moves to the
    end of storage with room for ``leaf_size``; a full leaf splits at the median of its widest axis.
    The caller has reserved 2 nodes and 2 * leaf_size slots."""
    leaf = _find_leaf(x, y, z, nf, ni)
    cnt = ni[leaf, CNT]
    cap = ni[leaf, CAP]
    if cnt < cap or cnt < leaf_size:
        if cnt == cap:
            relocate(leaf, obj, oid, idslot, leafof, ni, st, leaf_size)
        s = ni[leaf, START]
        t = s + cnt
        while t > s and obj[t - 1, 3] < r:
            _copy_slot(t, t - 1, obj, oid, idslot)
            leafof[t] = leaf
            t -= 1
        set_slot(t, x, y, z, r, id, obj, oid, idslot, leafof, leaf)
        ni[leaf, CNT] = cnt + 1
        if refit:
            refit_up(leaf, obj, nf, ni, reg)
        return
    # split the full leaf
    m = cnt + 1
    # m - 1 (int64, as the other trees pass it), not cnt (int32): gather_split compiles once
    tmp, tid, a = gather_split(obj, oid, ni[leaf, START], m - 1, x, y, z, r, id)
    # a contiguous copy of the column: the stable sort compiles once, for the layout the frame sorts too
    order = np.argsort(np.ascontiguousarray(tmp[:, a]), kind="mergesort")
    left = split_leaf(leaf, m, oid, ni, st, leaf_size)
    half = m // 2
    for j in range(2):
        c, lo_t, hi_t = child_range(left, j, m)
        ns = ni[c, START]
        # radius order inside the child: insertion by radius
        for t in range(lo_t, hi_t):
            o = order[t]
            u = ns + t - lo_t
            while u > ns and obj[u - 1, 3] < tmp[o, 3]:
                _copy_slot(u, u - 1, obj, oid, idslot)
                leafof[u] = c
                u -= 1
            set_slot(u, tmp[o, 0], tmp[o, 1], tmp[o, 2], tmp[o, 3], tid[o], obj, oid, idslot, leafof, c)
        for q in range(NF_COLS):
            nf[c, q] = 0.0
        _recompute(c, obj, nf, ni)
    ni[leaf, AXIS] = a
    nf[leaf, SPLIT] = tmp[order[half], a]
    _child_regions(leaf, nf, ni, reg)
    if refit:
        refit_up(leaf, obj, nf, ni, reg)


@njit
def insert(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, reg, st, leaf_size):
    """Insert one sphere (reserve 2 nodes and 2 * leaf_size slots first)."""
    _place(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, reg, st, leaf_size, True)


@njit
def _move(slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, reg, st, leaf_size, refit):
    """In place when the new centre stays in the leaf's region (box and largest radius refitted up the
    chain); otherwise remove + insert."""
    leaf = np.int64(leafof[slot])  # int64, as every other node index: its callees compile once
    if in_box(reg, leaf, x, y, z):
        obj[slot, 0] = x
        obj[slot, 1] = y
        obj[slot, 2] = z
        if obj[slot, 3] != r:
            obj[slot, 3] = r
            _resort(slot, obj, oid, idslot, ni, leaf)
        if refit:
            refit_up(leaf, obj, nf, ni, reg)
        return
    id = oid[slot]
    _detach(slot, obj, oid, idslot, leafof, ni)
    if refit:
        refit_up(leaf, obj, nf, ni, reg)
    # the new leaf's chain is refitted now even in a batch (its flag would be lost otherwise)
    _place(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, reg, st, leaf_size, True)
