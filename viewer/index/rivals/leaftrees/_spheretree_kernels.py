"""Numba kernels of the sphere tree (:mod:`viewer.index.rivals.leaftrees.spheretree`): node spheres, point
query, refit, insert, move.

The leaf storage is the leaf-bucket trees' (:mod:`viewer.index.rivals.leaftrees._bvh_kernels` describes
``obj``, ``oid``, ``leafof``, ``idslot``, ``ni`` and ``st``); the topology comes from the BVH's build. Per node:

- ``nf`` : (M, 4) float64, the node's bounding sphere: centre x, y, z and radius ``RAD`` (world units).
  An empty node has radius NaN (``d2 <= NaN * NaN`` is False: no point is inside it).
- ``ex`` : (1, 1, 1) float64, the summed cube of every node radius (proportional to the summed sphere
  volume: the expected traversal cost, the rebuild trigger). Its three dimensions are the tag by which
  :mod:`viewer.index.rivals.leaftrees._leaftree_ops` picks this tree's kernels at compile time.

**The bound** (every node, at every magnitude of :mod:`viewer.domain`). A node's stored radius is
``R = (sqrt(d2(C, c)) + r) * GROW + PAD_ABS`` maximised over its contents ``(c, r)`` (objects in a leaf,
child spheres in an inner node), ``GROW = 1 + 2**-44``, ``d2`` the contract's rounded squared distance.
With u = 2**-53: the rounded distance is at least ``dist * (1 - 3u) - 2**-536`` (squares that underflow
lose at most ``3 * 2**-1075``), so ``R >= (dist + r) * (1 + 2**-45) + 2**-501``: the exact enclosing
radius with a relative margin of 2**-45 that holds at every level by induction. A point the contract's
rounded predicate accepts for an object lies within ``r * (1 + 3u) + 2**-535`` of its centre, so within
``R / (1 + 2**-46)`` of the node's centre, and the node's rounded test ``d2(p, C) <= R * R`` (relative
error below 8u; ``R * R >= 2**-1000`` is normal, so no absolute term) accepts it. No overflow: ``R`` is
below 2**103 and ``R * R`` below 2**206.
"""

from __future__ import annotations

import math

import numpy as np
from numba.extending import overload

from viewer.kernels.jit import njit, njit_noref

from . import _bvh_kernels as B
from ..._contract_kernels import PAD_ABS
from ._leaftree_kernels import fill_split, finish_query, gather_split, place_in_room, pop_node, recompute, refit_nodes
from ._leaftree_kernels import refit_up, scan_leaf, split_leaf, start_query

CHILD, START, CNT, CAP, PARENT, DEPTH = B.CHILD, B.START, B.CNT, B.CAP, B.PARENT, B.DEPTH
NNODES = B.NNODES
CX, CY, CZ, RAD = 0, 1, 2, 3
NF_COLS = 4
GROW = 1.0 + 2.0**-44
NAN = np.nan


@njit(inline="always")
def _reach(cx, cy, cz, x, y, z, r):
    """A radius about (cx, cy, cz) that encloses the sphere (x, y, z, r) with the margin of the module
    docstring."""
    dx = x - cx
    dy = y - cy
    dz = z - cz
    return (math.sqrt((dx * dx + dy * dy) + dz * dz) + r) * GROW + PAD_ABS


@njit(inline="always")
def _inside(nf, i, px, py, pz):
    """Is the point inside node i's sphere (False for an empty node)?"""
    dx = px - nf[i, CX]
    dy = py - nf[i, CY]
    dz = pz - nf[i, CZ]
    rr = nf[i, RAD]
    return (dx * dx + dy * dy) + dz * dz <= rr * rr


@njit(inline="always")
def _cube(rr):
    return 0.0 if rr != rr else rr * rr * rr


# ----------------------------------------------------------------------------------------- build / refit


@njit
def _leaf_sphere(node, obj, ni):
    """The sphere of a leaf: centred on the middle of its spheres' box, the radius enclosing each."""
    s = ni[node, START]
    e = s + ni[node, CNT]
    if e == s:
        return 0.0, 0.0, 0.0, NAN
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for t in range(s, e):
        r = obj[t, 3]
        lo0 = min(lo0, obj[t, 0] - r)
        lo1 = min(lo1, obj[t, 1] - r)
        lo2 = min(lo2, obj[t, 2] - r)
        hi0 = max(hi0, obj[t, 0] + r)
        hi1 = max(hi1, obj[t, 1] + r)
        hi2 = max(hi2, obj[t, 2] + r)
    cx = lo0 * 0.5 + hi0 * 0.5  # halves first: no overflow
    cy = lo1 * 0.5 + hi1 * 0.5
    cz = lo2 * 0.5 + hi2 * 0.5
    rr = 0.0
    for t in range(s, e):
        rr = max(rr, _reach(cx, cy, cz, obj[t, 0], obj[t, 1], obj[t, 2], obj[t, 3]))
    return cx, cy, cz, rr


@njit
def _merge(nf, a, b):
    """The sphere enclosing nodes a and b's spheres: the smallest one's centre, or the one of a sphere
    that holds the other (then the radius grows by no margin); an empty node is left out."""
    ra = nf[a, RAD]
    rb = nf[b, RAD]
    if rb != rb:
        if ra != ra:
            return 0.0, 0.0, 0.0, NAN
        return nf[a, CX], nf[a, CY], nf[a, CZ], ra
    if ra != ra:
        return nf[b, CX], nf[b, CY], nf[b, CZ], rb
    if rb > ra:
        a, b = b, a
        ra, rb = rb, ra
    ax, ay, az = nf[a, CX], nf[a, CY], nf[a, CZ]
    bx, by, bz = nf[b, CX], nf[b, CY], nf[b, CZ]
    reach = _reach(ax, ay, az, bx, by, bz, rb)
    if reach <= ra:
        return ax, ay, az, ra
    dx = bx - ax
    dy = by - ay
    dz = bz - az
    d = math.sqrt((dx * dx + dy * dy) + dz * dz)
    t = 0.5 * (d + rb - ra) / d if d > 0.0 else 0.0
    cx = ax + dx * t
    cy = ay + dy * t
    cz = az + dz * t
    rr = max(_reach(cx, cy, cz, ax, ay, az, ra), _reach(cx, cy, cz, bx, by, bz, rb))
    return cx, cy, cz, rr


@njit(inline="always")  # into the refit skeleton's loops: no call a node
def _recompute(node, obj, nf, ni, ex):
    """Recompute ``node``'s sphere from its objects (leaf) or its two children; True if it changed (the
    change of its radius cubed is added to the cost ``ex``)."""
    ch = ni[node, CHILD]
    if ch < 0:
        cx, cy, cz, rr = _leaf_sphere(node, obj, ni)
    else:
        cx, cy, cz, rr = _merge(nf, ch, ch + 1)
    old = nf[node, RAD]
    if cx == nf[node, CX] and cy == nf[node, CY] and cz == nf[node, CZ] and (rr == old or (rr != rr and old != old)):
        return False
    ex[0, 0, 0] += _cube(rr) - _cube(old)
    nf[node, CX] = cx
    nf[node, CY] = cy
    nf[node, CZ] = cz
    nf[node, RAD] = rr
    return True


@overload(recompute, inline="always")
def _recompute_spheretree(node, obj, nf, ni, ex):
    if ex.ndim == 3:  # the sphere tree's summed radius cubes
        return lambda node, obj, nf, ni, ex: _recompute(node, obj, nf, ni, ex)
    return None


@njit
def refit_all(obj, nf, ni, ex, st):
    """Every node's sphere, bottom-up (children have larger indices), and the summed cost ``ex``."""
    nn = st[NNODES]
    nf[:nn, RAD] = -1.0  # never equal to a recomputed radius: every node is rewritten
    refit_nodes(obj, nf, ni, ex, st)
    total = 0.0
    for i in range(nn):
        total += _cube(nf[i, RAD])
    ex[0, 0, 0] = total


# ----------------------------------------------------------------------------------------- query


@njit_noref  # no reference counting: the atomic counts of its eight arrays were a large share of a short query
def query(px, py, pz, obj, oid, nf, ni, out, stack, levels, stats):
    """Ids of the spheres holding (px, py, pz) into ``out``; returns how many (writes at most
    ``out.size`` but counts them all). A child is entered only when the point is inside its sphere.
    ``stats`` (4,) int64 gets candidates, visible, nodes visited and the most nodes visited on one level;
    ``stack`` (>= maxdepth + 2,) int32 and ``levels`` (>= maxdepth + 1,) int64 are scratch."""
    size = out.shape[0]
    k, cand, visited, deepest, sp = start_query(stack, levels, _inside(nf, 0, px, py, pz))
    while sp > 0:
        sp, node, visited, deepest = pop_node(stack, sp, ni, levels, visited, deepest)
        ch = ni[node, CHILD]
        if ch < 0:
            k, cand = scan_leaf(node, px, py, pz, obj, oid, ni, out, size, k, cand)
        else:
            for c in range(ch, ch + 2):
                if _inside(nf, c, px, py, pz):
                    stack[sp] = c
                    sp += 1
    return finish_query(stats, k, cand, visited, levels, deepest)


# ----------------------------------------------------------------------------------------- updates


@njit
def _growth(nf, i, x, y, z, r):
    """(radius cubed of node i's sphere grown to hold the sphere (x, y, z, r) about its centre, and before)."""
    old = nf[i, RAD]
    if old != old:
        return r * r * r, 0.0
    need = max(old, _reach(nf[i, CX], nf[i, CY], nf[i, CZ], x, y, z, r))
    return need * need * need, old * old * old


@njit
def _choose_leaf(x, y, z, r, nf, ni):
    """Descend to the leaf whose sphere grows the least (by volume) to take the sphere."""
    node = 0
    while ni[node, CHILD] >= 0:
        ch = np.int64(ni[node, CHILD])  # as ch + 1: _growth compiles once
        ua, va = _growth(nf, ch, x, y, z, r)
        ub, vb = _growth(nf, ch + 1, x, y, z, r)
        ga = ua - va
        gb = ub - vb
        node = ch if ga < gb or (ga == gb and ua <= ub) else ch + 1
    return node


@njit
def _place(leaf, x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size):
    """Put the object into ``leaf``: in a free slot, else in a relocated range with room, else the leaf
    splits in two at the median of its longest centre axis. The caller reserved 2 nodes, 2 * leaf_size
    slots."""
    if place_in_room(leaf, x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size):
        return
    m = ni[leaf, CNT] + 1
    tmp, tid, a = gather_split(obj, oid, ni[leaf, START], m - 1, x, y, z, r, id)
    order = np.argsort(tmp[:, a])
    left = split_leaf(leaf, m, oid, ni, st, leaf_size)
    fill_split(left, m, order, tmp, tid, obj, oid, idslot, leafof, ni)
    for c in range(left, left + 2):
        nf[c, RAD] = NAN
        _recompute(c, obj, nf, ni, ex)
    refit_up(leaf, obj, nf, ni, ex)


@njit
def insert(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size):
    """Insert one sphere into the leaf that grows least (reserve 2 nodes, 2 * leaf_size slots first)."""
    _place(_choose_leaf(x, y, z, r, nf, ni), x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size)


@njit
def _move(slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size, growth, refit):
    """Move one object: in its slot (the leaf's sphere and the chain above refitted if ``refit``), unless
    its leaf's sphere would grow by more than ``growth`` times the volume (leaf + object): then it is
    detached and reinserted where it fits."""
    leaf = np.int64(leafof[slot])  # int64, as every other node index: its callees compile once
    u, v = _growth(nf, leaf, x, y, z, r)
    if u > growth * (v + r * r * r):
        id = oid[slot]
        B._detach(slot, obj, oid, leafof, idslot, ni)
        if refit:
            refit_up(leaf, obj, nf, ni, ex)
        _place(_choose_leaf(x, y, z, r, nf, ni), x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size)
        return
    obj[slot, 0] = x
    obj[slot, 1] = y
    obj[slot, 2] = z
    obj[slot, 3] = r
    if refit:
        refit_up(leaf, obj, nf, ni, ex)
