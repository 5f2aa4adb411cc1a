"""Numba kernels of the BVH (:mod:`viewer.index.rivals.leaftrees.bvh`): build, point query, refit, insert, remove, move.

The tree is a struct of flat arrays, passed whole to every kernel:

- ``obj`` : (S, 4) float64, one row per object slot: x, y, z, r (world units). Leaves own contiguous
  slot ranges ``[start, start + cnt)`` with room for ``cap`` objects; slots outside every live range are
  garbage (``oid == -1``) until the next rebuild compacts them.
- ``oid`` : (S,) int64, slot -> object id (-1: empty). ``leafof`` : (S,) int32, slot -> leaf node.
- ``idslot`` : (I,) int64, id -> slot (-1: removed), the :class:`~viewer.index._contract.IdTable` array.
- ``nf`` : (M, 6) float64 node boxes (lo x, y, z, hi x, y, z); an empty node has lo = +inf, hi = -inf.
- ``ni`` : (M, 6) int32 node topology, columns ``CHILD`` (first of two adjacent children, -1 for a
  leaf), ``START``, ``CNT``, ``CAP`` (leaf slot range), ``PARENT``, ``DEPTH``. Children always have larger
  indices than their parent, so a reverse sweep refits the whole tree bottom-up.
- ``st`` : (4,) int64 counters ``[nnodes, nslots, garbage, maxdepth]``; ``fst`` : (1,) float64, the
  summed volume of all node boxes (the expected number of nodes a uniformly random point in the root
  box enters, times the root volume: the degradation measure).

An object's box is its sphere's AABB padded outward (:func:`viewer.index._contract_kernels.box_pad`), so a
point the exact predicate accepts can never fall outside it through rounding or underflow.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload

from viewer.kernels.jit import njit, njit_noref

from ..._contract_kernels import box_pad as _pad, emit, holds
from ._leaftree_kernels import EMPTY_BOX, build_state, children_box, fill_split, gather_split, finish_query, in_box
from ._leaftree_kernels import place_in_room, pop_node, recompute, refit_nodes, refit_up, select_kth, split_leaf
from ._leaftree_kernels import end_steps, make_leaf, next_node, split_children, store_box, swap_rows

CHILD, START, CNT, CAP, PARENT, DEPTH = 0, 1, 2, 3, 4, 5
NI_COLS = 6
NNODES, NSLOTS, GARBAGE, MAXDEPTH = 0, 1, 2, 3

MEDIAN_DEPTH = 48  # below this depth the builder falls back to median splits (bounds the depth)
SMALL_NODE = 48  # nodes this small split at the median: binning them costs more than it saves
INF = np.inf


@njit(inline="always")
def _add_sphere(b0, b1, b2, b3, b4, b5, x, y, z, r):
    """Box (lo x, y, z, hi x, y, z) grown to hold the sphere's padded box."""
    p = _pad(x, r)
    q = _pad(y, r)
    w = _pad(z, r)
    return (min(b0, (x - r) - p), min(b1, (y - r) - q), min(b2, (z - r) - w),
            max(b3, (x + r) + p), max(b4, (y + r) + q), max(b5, (z + r) + w))


@njit
def _vol(b0, b1, b2, b3, b4, b5):
    if b3 < b0 or b4 < b1 or b5 < b2:
        return 0.0
    return (b3 - b0) * (b4 - b1) * (b5 - b2)


@njit
def _node_vol(nf, i):
    return _vol(nf[i, 0], nf[i, 1], nf[i, 2], nf[i, 3], nf[i, 4], nf[i, 5])


@njit
def _set_empty(nf, i):
    for a in range(3):
        nf[i, a] = INF
        nf[i, 3 + a] = -INF


# ----------------------------------------------------------------------------------------- build


@njit
def build(obj, leaf_size, nbins, rkey_eps):
    """Top-down build over ``obj`` (n >= 1, 4) by binned splits minimising the volume heuristic.

    For a point query the chance of entering a child is its volume (not its surface area, which is the
    ray-tracing measure), so a split's cost is ``vol(L) * nL + vol(R) * nR``. Candidates: ``nbins`` bins
    along x, y, z of the centres and along log radius, so heavy-tailed radii get their big boxes split
    off into their own subtrees instead of inflating every box around them.

    Returns ``perm`` (n,) int64 (slot order -> input row), ``nf`` (M, 6), ``ni`` (M, 6), ``nnodes``,
    ``maxdepth``; leaves have ``cap == cnt`` (no slack) and slot ranges in ``perm`` order. The same
    build as :func:`build_start` then :func:`build_steps` until done.
    """
    D, perm, nf, ni, stack, ctl = build_start(obj, rkey_eps)
    build_steps(D, perm, nf, ni, stack, ctl, leaf_size, nbins, -1)
    nnodes = ctl[1]
    return perm, nf[:nnodes].copy(), ni[:nnodes].copy(), nnodes, ctl[2]


@njit
def build_start(obj, rkey_eps):
    """The state of a build over ``obj`` (n >= 1, 4) that :func:`build_steps` advances a slice at a time:
    ``D`` (n, 5) rows x, y, z, r, log r (reordered in place into slot order), ``perm`` (n,) int64,
    ``nf`` (2n + 1, 6), ``ni`` (2n + 1, 6) int32, ``stack`` (2n + 1,) int64 of nodes still to split and
    ``ctl`` (3,) int64 ``[stack size, nnodes, maxdepth]`` (``_leaftree_kernels.build_state``)."""
    n = obj.shape[0]
    # one row per object, rows reordered in place as the tree splits them (sequential access, no
    # gathers through a permutation; narrow rows, as the swaps are the cost): x, y, z, r, log r
    D = np.empty((n, 5))
    for i in range(n):
        for a in range(4):
            D[i, a] = obj[i, a]
        D[i, 4] = np.log(obj[i, 3] + rkey_eps)
    perm, ni, stack, ctl = build_state(D, np.int64(NI_COLS))  # not a literal: compiled once for every tree
    nf = np.empty((ni.shape[0], 6))
    return D, perm, nf, ni, stack, ctl


@njit
def build_steps(D, perm, nf, ni, stack, ctl, leaf_size, nbins, budget):
    """Split the nodes on ``stack`` (the state of :func:`build_start`) until the objects of the nodes
    taken reach ``budget`` (< 0: no limit); returns True when the tree is complete. A node is split
    whole, so one call does at least one node's work (the root's: every object)."""
    sp, nnodes, maxdepth = ctl[0], ctl[1], ctl[2]
    work = 0
    cnt_b = np.zeros(nbins, dtype=np.int64)
    box_b = np.empty((nbins, 6))
    rcnt = np.zeros(nbins, dtype=np.int64)
    rbox = np.empty((nbins, 6))
    kmin = np.empty(4)
    kmax = np.empty(4)
    while sp > 0 and (budget < 0 or work < budget):
        sp, node, s, c, d, work, maxdepth = next_node(stack, sp, ni, work, maxdepth)
        # node box and key ranges, in locals (no stores through arrays in the hot loop)
        b0, b1, b2, b3, b4, b5 = EMPTY_BOX
        k0 = INF
        k1 = INF
        k2 = INF
        k3 = INF
        m0 = -INF
        m1 = -INF
        m2 = -INF
        m3 = -INF
        for o in range(s, s + c):
            x = D[o, 0]
            y = D[o, 1]
            z = D[o, 2]
            r = D[o, 3]
            lr = D[o, 4]
            b0, b1, b2, b3, b4, b5 = _add_sphere(b0, b1, b2, b3, b4, b5, x, y, z, r)
            k0 = min(k0, x)
            m0 = max(m0, x)
            k1 = min(k1, y)
            m1 = max(m1, y)
            k2 = min(k2, z)
            m2 = max(m2, z)
            k3 = min(k3, lr)
            m3 = max(m3, lr)
        store_box(nf, node, b0, b1, b2, b3, b4, b5)
        kmin[0] = k0
        kmin[1] = k1
        kmin[2] = k2
        kmin[3] = k3
        kmax[0] = m0
        kmax[1] = m1
        kmax[2] = m2
        kmax[3] = m3
        if c <= leaf_size:
            make_leaf(node, c, ni)
            continue
        # a small floor on every extent: flat boxes (points on a plane) still rank by area
        ext = max(nf[node, 3] - nf[node, 0], nf[node, 4] - nf[node, 1], nf[node, 5] - nf[node, 2])
        eps = 1e-3 * ext
        best_cost = INF
        best_axis = -1
        best_bin = -1
        if d < MEDIAN_DEPTH and c > SMALL_NODE:
            for a in range(4):
                span = kmax[a] - kmin[a]
                if not span > 0.0:
                    continue
                scale = nbins / span
                for b in range(nbins):
                    cnt_b[b] = 0
                    for q in range(3):
                        box_b[b, q] = INF
                        box_b[b, 3 + q] = -INF
                col = a if a < 3 else 4
                for o in range(s, s + c):
                    b = int((D[o, col] - kmin[a]) * scale)
                    if b >= nbins:
                        b = nbins - 1
                    cnt_b[b] += 1
                    r = D[o, 3]
                    for q in range(3):
                        x = D[o, q]
                        p = _pad(x, r)
                        if (x - r) - p < box_b[b, q]:
                            box_b[b, q] = (x - r) - p
                        if (x + r) + p > box_b[b, 3 + q]:
                            box_b[b, 3 + q] = (x + r) + p
                # suffix sums: rcnt[b], rbox[b] over bins b..nbins-1
                acc = 0
                r0 = INF
                r1 = INF
                r2 = INF
                r3 = -INF
                r4 = -INF
                r5 = -INF
                for b in range(nbins - 1, -1, -1):
                    acc += cnt_b[b]
                    r0 = min(r0, box_b[b, 0])
                    r1 = min(r1, box_b[b, 1])
                    r2 = min(r2, box_b[b, 2])
                    r3 = max(r3, box_b[b, 3])
                    r4 = max(r4, box_b[b, 4])
                    r5 = max(r5, box_b[b, 5])
                    rcnt[b] = acc
                    rbox[b, 0] = r0
                    rbox[b, 1] = r1
                    rbox[b, 2] = r2
                    rbox[b, 3] = r3
                    rbox[b, 4] = r4
                    rbox[b, 5] = r5
                lcnt = 0
                l0 = INF
                l1 = INF
                l2 = INF
                l3 = -INF
                l4 = -INF
                l5 = -INF
                for b in range(1, nbins):
                    lcnt += cnt_b[b - 1]
                    l0 = min(l0, box_b[b - 1, 0])
                    l1 = min(l1, box_b[b - 1, 1])
                    l2 = min(l2, box_b[b - 1, 2])
                    l3 = max(l3, box_b[b - 1, 3])
                    l4 = max(l4, box_b[b - 1, 4])
                    l5 = max(l5, box_b[b - 1, 5])
                    nr = rcnt[b]
                    if lcnt == 0 or nr == 0:
                        continue
                    vl = (l3 - l0 + eps) * (l4 - l1 + eps) * (l5 - l2 + eps)
                    vr = (
                        (rbox[b, 3] - rbox[b, 0] + eps)
                        * (rbox[b, 4] - rbox[b, 1] + eps)
                        * (rbox[b, 5] - rbox[b, 2] + eps)
                    )
                    cost = vl * lcnt + vr * nr
                    if cost < best_cost:
                        best_cost = cost
                        best_axis = a
                        best_bin = b
        if best_axis >= 0:
            a = best_axis
            scale = nbins / (kmax[a] - kmin[a])
            col = a if a < 3 else 4
            i = np.int64(s)  # as i + 1: swap_rows compiles once
            j = s + c - 1
            while i <= j:
                b = int((D[i, col] - kmin[a]) * scale)
                if b >= nbins:
                    b = nbins - 1
                if b < best_bin:
                    i += 1
                else:
                    swap_rows(D, perm, i, j)
                    j -= 1
            mid = i
        else:
            # every key equal, or too deep: median of the longest centre axis
            a = np.int64(0)  # not a literal 0: select_kth compiles once, for the int64 axis the others pass
            span = kmax[0] - kmin[0]
            for q in range(1, 3):
                if kmax[q] - kmin[q] > span:
                    span = kmax[q] - kmin[q]
                    a = q
            mid = s + c // 2
            select_kth(D, perm, a, s, s + c - 1, mid)
        sp, nnodes = split_children(node, s, c, d, mid, ni, stack, sp, nnodes)
    return end_steps(ctl, sp, nnodes, maxdepth)


@njit
def total_volume(nf, nnodes):
    v = 0.0
    for i in range(nnodes):
        v += _node_vol(nf, i)
    return v


# ----------------------------------------------------------------------------------------- query


@njit_noref  # no reference counting: the atomic counts of its eight arrays were a large share of a short query
def query(px, py, pz, obj, oid, nf, ni, out, stack, levels, stats):
    """Ids of the spheres holding (px, py, pz) into ``out``; returns how many (writes at most
    ``out.size`` but counts them all). ``stats`` (4,) int64 gets candidates, visible, nodes visited and
    the most nodes visited on one level. ``stack`` (>= maxdepth + 2,) int32 and ``levels`` (>= maxdepth + 1,) int64 are scratch."""
    size = out.shape[0]
    k = 0
    cand = 0
    visited = 0
    deepest = 0
    sp = 0
    if in_box(nf, 0, px, py, pz):
        stack[0] = 0
        sp = 1
    levels[0] = 0
    while sp > 0:
        sp, node, visited, deepest = pop_node(stack, sp, ni, levels, visited, deepest)
        ch = ni[node, CHILD]
        if ch < 0:
            s = ni[node, START]
            e = s + ni[node, CNT]
            cand += e - s
            for t in range(s, e):
                if holds(px, py, pz, obj[t, 0], obj[t, 1], obj[t, 2], obj[t, 3]):
                    k = emit(out, size, k, oid[t])
        else:
            for c in range(ch, ch + 2):
                if in_box(nf, c, px, py, pz):
                    stack[sp] = c
                    sp += 1
    return finish_query(stats, k, cand, visited, levels, deepest)


# ----------------------------------------------------------------------------------------- refit


@njit(inline="always")  # into the refit skeleton's loops: no call a node
def _recompute(node, obj, nf, ni, fst):
    """Recompute ``node``'s box from its objects (leaf) or children; returns True if it changed and
    adds the volume change to ``fst[0]``."""
    b0, b1, b2, b3, b4, b5 = EMPTY_BOX
    ch = ni[node, CHILD]
    if ch < 0:
        s = ni[node, START]
        for t in range(s, s + ni[node, CNT]):
            b0, b1, b2, b3, b4, b5 = _add_sphere(b0, b1, b2, b3, b4, b5, obj[t, 0], obj[t, 1], obj[t, 2], obj[t, 3])
    else:
        b0, b1, b2, b3, b4, b5 = children_box(nf, ch)
    old = _node_vol(nf, node)
    if not store_box(nf, node, b0, b1, b2, b3, b4, b5):
        return False
    fst[0] += _vol(b0, b1, b2, b3, b4, b5) - old
    return True


@overload(recompute, inline="always")
def _recompute_bvh(node, obj, nf, ni, ex):
    if ex.ndim == 1:  # the BVH's summed volume (the BSP tree's, raveled)
        return lambda node, obj, nf, ni, ex: _recompute(node, obj, nf, ni, ex)
    return None


@njit
def refit_all(obj, nf, ni, fst, st):
    """Refit every node bottom-up (children have larger indices) and recompute ``fst[0]``."""
    refit_nodes(obj, nf, ni, fst, st)
    fst[0] = total_volume(nf, st[NNODES])


# ----------------------------------------------------------------------------------------- updates


@njit
def _detach(slot, obj, oid, leafof, idslot, ni):
    """Take the object out of its leaf (the leaf's last object fills the hole); returns the leaf."""
    leaf = np.int64(leafof[slot])  # int64, as every other node index: its callees compile once
    last = ni[leaf, START] + ni[leaf, CNT] - 1
    if slot != last:
        for q in range(4):
            obj[slot, q] = obj[last, q]
        oid[slot] = oid[last]
        idslot[oid[slot]] = slot
    oid[last] = -1
    ni[leaf, CNT] -= 1
    return leaf


@njit
def _growth(l0, l1, l2, l3, l4, l5, x, y, z, r):
    """Volume of box l grown to hold the sphere's box, and the volume of l."""
    u0, u1, u2, u3, u4, u5 = _add_sphere(l0, l1, l2, l3, l4, l5, x, y, z, r)
    return _vol(u0, u1, u2, u3, u4, u5), _vol(l0, l1, l2, l3, l4, l5)


@njit
def _choose_leaf(x, y, z, r, nf, ni):
    """Descend to the leaf whose box grows the least (by volume) to take the sphere."""
    node = 0
    while ni[node, CHILD] >= 0:
        ch = ni[node, CHILD]
        ua, va = _growth(nf[ch, 0], nf[ch, 1], nf[ch, 2], nf[ch, 3], nf[ch, 4], nf[ch, 5], x, y, z, r)
        c2 = ch + 1
        ub, vb = _growth(nf[c2, 0], nf[c2, 1], nf[c2, 2], nf[c2, 3], nf[c2, 4], nf[c2, 5], x, y, z, r)
        ga = ua - va
        gb = ub - vb
        if ga < gb or (ga == gb and ua <= ub):
            node = ch
        else:
            node = c2
    return node


@njit
def _place(leaf, x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, fst, leaf_size):
    """Put the object into ``leaf``: in a free slot of its range, else the range is moved to the end of
    storage with room for ``leaf_size``, else the leaf splits in two at the median of its longest centre
    axis. The caller has reserved 2 nodes and 2 * leaf_size slots."""
    if place_in_room(leaf, x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, fst, leaf_size):
        return
    # split: gather cnt + 1 objects, order them along the longest centre axis, halve
    m = ni[leaf, CNT] + 1
    tmp, tid, a = gather_split(obj, oid, ni[leaf, START], m - 1, x, y, z, r, id)
    order = np.argsort(tmp[:, a])
    left = split_leaf(leaf, m, oid, ni, st, leaf_size)
    fill_split(left, m, order, tmp, tid, obj, oid, idslot, leafof, ni)
    for c in range(left, left + 2):
        _set_empty(nf, c)
        _recompute(c, obj, nf, ni, fst)
    refit_up(leaf, obj, nf, ni, fst)


@njit
def insert(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, fst, st, leaf_size):
    """Insert one sphere into the leaf that grows least (reserve 2 nodes, 2 * leaf_size slots first)."""
    leaf = _choose_leaf(x, y, z, r, nf, ni)
    _place(leaf, x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, fst, leaf_size)


@njit
def _move(slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, st, fst, leaf_size, growth, refit):
    """Move one object. If its new box would grow its leaf's volume by more than ``growth`` times (leaf +
    object) it is detached and reinserted where it fits; otherwise it is updated in its slot and, if
    ``refit``, the leaf and the chain above are refitted (else the caller refits everything)."""
    leaf = np.int64(leafof[slot])  # int64, as every other node index: its callees compile once
    u, v = _growth(
        nf[leaf, 0], nf[leaf, 1], nf[leaf, 2], nf[leaf, 3], nf[leaf, 4], nf[leaf, 5], x, y, z, r
    )
    if u > v:
        ou, _ = _growth(INF, INF, INF, -INF, -INF, -INF, x, y, z, r)
        if u > growth * (v + ou):
            id = oid[slot]
            _detach(slot, obj, oid, leafof, idslot, ni)
            if refit:
                refit_up(leaf, obj, nf, ni, fst)
            target = _choose_leaf(x, y, z, r, nf, ni)
            _place(target, x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, fst, leaf_size)
            return
    obj[slot, 0] = x
    obj[slot, 1] = y
    obj[slot, 2] = z
    obj[slot, 3] = r
    if refit:
        refit_up(leaf, obj, nf, ni, fst)
