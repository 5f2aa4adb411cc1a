"""Numba kernels of the BSP tree (:mod:`viewer.index.rivals.leaftrees.bsp`): build over free planes, point
query, insert, move. Boxes are refitted by the BVH's kernels (:mod:`viewer.index.rivals.leaftrees._bvh_kernels`),
whose leaf storage (``obj``, ``oid``, ``leafof``, ``idslot``, ``ni``, ``st``) this tree shares. Per node:

- ``nf`` : (M, 12) float64: the padded box of the spheres below (columns 0..5, lo x, y, z, hi x, y, z,
  exactly as the BVH keeps it); an inner node's plane, unit normal ``NX, NY, NZ`` and offset ``SPLIT``
  (a centre goes left when ``n . c < SPLIT``); and ``SLO, SHI``, the interval along the *parent's*
  normal that holds every sphere below the node (the root's is unbounded). Intervals are refitted
  exactly by a build, and only grown by updates (conservative between rebuilds).
- ``ex`` : (1, 1, 1, 1) float64, the summed volume of the node boxes (the rebuild trigger, as the BVH's);
  its four dimensions are the tag by which :mod:`viewer.index.rivals.leaftrees._leaftree_ops` picks this tree's kernels.

A query enters a child only when the point is in its box *and* in its interval along the node's normal.

**The bound** (every value of :mod:`viewer.domain`; u = 2**-53). The projection ``s(c) = (nx*cx +
ny*cy) + nz*cz`` of a unit normal (``|n| <= 1 + 4u`` as rounded, so ``|n|_1 < 1.74``) is within
``2**-50 * m + 2**-1071`` of the exact one, ``m = max |c_i|``. A point the contract's rounded predicate
accepts lies within ``r * (1 + 3u) + 2**-535`` of the centre. A sphere's interval is therefore stored
as ``s(c) -+ w``, ``w = (r * (1 + 2**-40) + m * 2**-48) + 2**-500``: the slack covers both bounds and the
rounding of ``s - w`` itself (at most ``u * (|s| + w)``). The query widens the test by ``e = M * 2**-49 +
2**-1000`` (``M = max |p_i|``): ``s(p) + e >= lo`` then holds in floats whenever the exact projection does,
rounding being monotone and ``lo`` a float. No overflow: every value stays below 2**103.
"""

from __future__ import annotations

import math

import numpy as np
from numba.extending import overload

from viewer.kernels.jit import njit, njit_noref

from . import _bvh_kernels as B
from ._leaftree_kernels import build_state, end_steps, fill_split, finish_query, gather_split, in_box, make_leaf
from ._leaftree_kernels import next_node, place_in_room, pop_node, recompute, refit_up, scan_leaf, select_kth
from ._leaftree_kernels import split_children, split_leaf, start_query, swap_rows

CHILD, START, CNT, CAP, PARENT, DEPTH = B.CHILD, B.START, B.CNT, B.CAP, B.PARENT, B.DEPTH
NI_COLS = B.NI_COLS
NNODES = B.NNODES
NX, NY, NZ, SPLIT, SLO, SHI = 6, 7, 8, 9, 10, 11
NF_COLS = 12
MEDIAN_DEPTH = B.MEDIAN_DEPTH  # below this depth the builder splits at the median (bounds the depth)
SMALL_NODE = 16  # nodes this small split at the median of their widest axis
INF = np.inf
R_GROW = 1.0 + 2.0**-40
M_REL = 2.0**-48
Q_REL = 2.0**-49
W_ABS = 2.0**-500
Q_ABS = 2.0**-1000

_S2 = 1.0 / math.sqrt(2.0)
_S3 = 1.0 / math.sqrt(3.0)
#: candidate normals by name of the ``planes`` option: the axes, the 6 face and 4 body diagonals; the
#: principal direction of the node's centres is added for ``pca`` and ``all``
NORMALS = np.array(
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0],
     [_S2, _S2, 0.0], [_S2, -_S2, 0.0], [_S2, 0.0, _S2], [_S2, 0.0, -_S2], [0.0, _S2, _S2], [0.0, _S2, -_S2],
     [_S3, _S3, _S3], [_S3, _S3, -_S3], [_S3, -_S3, _S3], [-_S3, _S3, _S3]]
)
PLANES = {"axes": (3, False), "pca": (3, True), "diagonals": (13, False), "all": (13, True)}


@njit(inline="always")
def _proj(nx, ny, nz, x, y, z):
    return (nx * x + ny * y) + nz * z


@njit(inline="always")
def _extent(nx, ny, nz, x, y, z, r):
    """The interval ``(lo, hi)`` along the unit normal that holds every point the contract's predicate
    accepts for the sphere (x, y, z, r): the bound of the module docstring."""
    s = _proj(nx, ny, nz, x, y, z)
    w = (r * R_GROW + max(abs(x), abs(y), abs(z)) * M_REL) + W_ABS
    return s - w, s + w


@njit(inline="always")
def _slack(px, py, pz):
    """The query's widening ``e`` of the module docstring."""
    return max(abs(px), abs(py), abs(pz)) * Q_REL + Q_ABS


@njit
def _interval(D, s, e, nx, ny, nz):
    """The interval along the normal holding rows ``s .. e`` of ``D`` (x, y, z, r, ...)."""
    lo = INF
    hi = -INF
    for o in range(s, e):
        a, b = _extent(nx, ny, nz, D[o, 0], D[o, 1], D[o, 2], D[o, 3])
        lo = min(lo, a)
        hi = max(hi, b)
    return lo, hi


# ----------------------------------------------------------------------------------------- build


@njit
def _principal(D, s, e, normals, row):
    """Write the principal direction of the centres of rows ``s .. e`` (unit, by power iteration on
    their covariance) into ``normals[row]``; returns False when the centres do not spread."""
    n = e - s
    mx = my = mz = 0.0
    for o in range(s, e):
        mx += D[o, 0]
        my += D[o, 1]
        mz += D[o, 2]
    mx /= n
    my /= n
    mz /= n
    cov = np.zeros((3, 3))
    for o in range(s, e):
        d0 = D[o, 0] - mx
        d1 = D[o, 1] - my
        d2 = D[o, 2] - mz
        cov[0, 0] += d0 * d0
        cov[0, 1] += d0 * d1
        cov[0, 2] += d0 * d2
        cov[1, 1] += d1 * d1
        cov[1, 2] += d1 * d2
        cov[2, 2] += d2 * d2
    cov[1, 0] = cov[0, 1]
    cov[2, 0] = cov[0, 2]
    cov[2, 1] = cov[1, 2]
    v0, v1, v2 = 0.577, 0.578, 0.579  # not orthogonal to any axis or diagonal
    for _ in range(24):
        w0 = cov[0, 0] * v0 + cov[0, 1] * v1 + cov[0, 2] * v2
        w1 = cov[1, 0] * v0 + cov[1, 1] * v1 + cov[1, 2] * v2
        w2 = cov[2, 0] * v0 + cov[2, 1] * v1 + cov[2, 2] * v2
        norm = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        if not (norm > 0.0 and norm < INF):
            return False
        v0, v1, v2 = w0 / norm, w1 / norm, w2 / norm
    norm = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    normals[row, 0] = v0 / norm
    normals[row, 1] = v1 / norm
    normals[row, 2] = v2 / norm
    return True


@njit
def _best_split(D, s, e, normals, count, nbins, cnt_b, lo_b, hi_b, rlo, rhi, rcnt):
    """The cheapest plane over the candidate ``normals[:count]`` and ``nbins`` bins of the centres'
    projections: ``(cost, normal row, split value)``, cost inf when none splits. The cost of a plane is
    SAH-like over the spheres' extents along its normal, ``(w_L * n_L + w_R * n_R) / w``, ``w`` the
    width of an interval holding spheres: a uniformly placed point in the node's slab lands in a child's
    slab with probability ``w_child / w``."""
    best = INF
    best_row = -1
    best_split = 0.0
    for q in range(count):
        nx = normals[q, 0]
        ny = normals[q, 1]
        nz = normals[q, 2]
        kmin = INF
        kmax = -INF
        for o in range(s, e):
            v = _proj(nx, ny, nz, D[o, 0], D[o, 1], D[o, 2])
            D[o, 4] = v
            kmin = min(kmin, v)
            kmax = max(kmax, v)
        span = kmax - kmin
        if not (span > 0.0 and span < INF):
            continue
        scale = nbins / span
        for b in range(nbins):
            cnt_b[b] = 0
            lo_b[b] = INF
            hi_b[b] = -INF
        for o in range(s, e):
            b = min(int((D[o, 4] - kmin) * scale), nbins - 1)
            cnt_b[b] += 1
            a, z = _extent(nx, ny, nz, D[o, 0], D[o, 1], D[o, 2], D[o, 3])
            lo_b[b] = min(lo_b[b], a)
            hi_b[b] = max(hi_b[b], z)
        acc = 0
        lo = INF
        hi = -INF
        for b in range(nbins - 1, -1, -1):
            acc += cnt_b[b]
            lo = min(lo, lo_b[b])
            hi = max(hi, hi_b[b])
            rcnt[b] = acc
            rlo[b] = lo
            rhi[b] = hi
        width = rhi[0] - rlo[0]
        lcnt = 0
        lo = INF
        hi = -INF
        for b in range(1, nbins):
            lcnt += cnt_b[b - 1]
            lo = min(lo, lo_b[b - 1])
            hi = max(hi, hi_b[b - 1])
            if lcnt == 0 or rcnt[b] == 0:
                continue
            cost = ((hi - lo) * lcnt + (rhi[b] - rlo[b]) * rcnt[b]) / width
            if cost < best:
                best = cost
                best_row = q
                best_split = kmin + b / scale
    return best, best_row, best_split


@njit
def _partition(D, perm, s, e, nx, ny, nz, split):
    """Rows with ``n . c < split`` first; returns the first row of the rest."""
    i = np.int64(s)  # as i + 1: swap_rows compiles once
    j = e - 1
    while i <= j:
        if _proj(nx, ny, nz, D[i, 0], D[i, 1], D[i, 2]) < split:
            i += 1
        else:
            swap_rows(D, perm, i, j)
            j -= 1
    return i


@njit
def _widest_axis(D, s, e):
    a = 0
    span = -1.0
    for q in range(3):
        lo = INF
        hi = -INF
        for o in range(s, e):
            lo = min(lo, D[o, q])
            hi = max(hi, D[o, q])
        if hi - lo > span:
            span = hi - lo
            a = q
    return a


@njit
def build(obj, leaf_size, nbins, count, pca):
    """Top-down BSP over ``obj`` (n >= 1, 4). Each node with more than ``leaf_size`` objects takes the
    cheapest plane of :func:`_best_split` over the first ``count`` rows of :data:`NORMALS` (and, with
    ``pca``, the principal direction of its centres); small or deep nodes, or a node no plane splits,
    split at the median of the widest axis. Returns ``D`` (n, 4) the rows in slot order, ``perm`` (n,)
    int64, ``nf`` (M, 12) with planes and intervals (boxes are filled by the caller's refit), ``ni``
    (M, 6), ``nnodes``, ``maxdepth``; leaves have ``cap == cnt``. The same build as :func:`build_start` then
    :func:`build_steps` until done."""
    D, perm, nf, ni, stack, ctl = build_start(obj)
    build_steps(D, perm, nf, ni, stack, ctl, leaf_size, nbins, count, pca, -1)
    nnodes = ctl[1]
    return D[:, :4].copy(), perm, nf[:nnodes].copy(), ni[:nnodes].copy(), nnodes, ctl[2]


@njit
def build_start(obj):
    """The state of a build over ``obj`` (n >= 1, 4) that :func:`build_steps` advances a slice at a time:
    ``D`` (n, 5) rows x, y, z, r, projection scratch (reordered in place into slot order), ``perm`` (n,)
    int64, ``nf`` (2n + 1, 12), ``ni`` (2n + 1, 6) int32, ``stack`` (2n + 1,) int64 of nodes still to
    split and ``ctl`` (3,) int64 ``[stack size, nnodes, maxdepth]`` (``_leaftree_kernels.build_state``)."""
    n = obj.shape[0]
    D = np.empty((n, 5))  # x, y, z, r, projection scratch
    D[:, :4] = obj
    perm, ni, stack, ctl = build_state(D, np.int64(NI_COLS))  # not a literal: compiled once for every tree
    nf = np.zeros((ni.shape[0], NF_COLS))
    nf[0, SLO] = -INF
    nf[0, SHI] = INF
    return D, perm, nf, ni, stack, ctl


@njit
def build_steps(D, perm, nf, ni, stack, ctl, leaf_size, nbins, count, pca, budget):
    """Split the nodes on ``stack`` (the state of :func:`build_start`) until the objects of the nodes
    taken reach ``budget`` (< 0: no limit); returns True when the tree is complete. A node is split
    whole, so one call does at least one node's work (the root's: every object)."""
    normals = np.empty((count + 1, 3))
    normals[:count] = NORMALS[:count]
    cnt_b = np.zeros(nbins, dtype=np.int64)
    lo_b = np.empty(nbins)
    hi_b = np.empty(nbins)
    rlo = np.empty(nbins)
    rhi = np.empty(nbins)
    rcnt = np.zeros(nbins, dtype=np.int64)
    sp, nnodes, maxdepth = ctl[0], ctl[1], ctl[2]
    work = 0
    while sp > 0 and (budget < 0 or work < budget):
        sp, node, s, c, d, work, maxdepth = next_node(stack, sp, ni, work, maxdepth)
        if c <= leaf_size:
            make_leaf(node, c, ni)
            continue
        cost = INF
        mid = s
        nx = ny = nz = split = 0.0
        if d < MEDIAN_DEPTH and c > SMALL_NODE:
            k = count + 1 if pca and _principal(D, s, s + c, normals, count) else count
            cost, row, split = _best_split(D, s, s + c, normals, k, nbins, cnt_b, lo_b, hi_b, rlo, rhi, rcnt)
            if cost < INF:
                nx, ny, nz = normals[row, 0], normals[row, 1], normals[row, 2]
                mid = _partition(D, perm, s, s + c, nx, ny, nz, split)
        if not (cost < INF and s < mid < s + c):
            a = _widest_axis(D, s, s + c)
            mid = s + c // 2
            select_kth(D, perm, a, s, s + c - 1, mid)
            nx = 1.0 if a == 0 else 0.0
            ny = 1.0 if a == 1 else 0.0
            nz = 1.0 if a == 2 else 0.0
            split = D[mid, a]
        nf[node, NX] = nx
        nf[node, NY] = ny
        nf[node, NZ] = nz
        nf[node, SPLIT] = split
        left = nnodes
        sp, nnodes = split_children(node, s, c, d, mid, ni, stack, sp, nnodes)
        for ch in range(left, left + 2):
            cs = ni[ch, START]
            nf[ch, SLO], nf[ch, SHI] = _interval(D, cs, cs + ni[ch, CNT], nx, ny, nz)
    return end_steps(ctl, sp, nnodes, maxdepth)


# ----------------------------------------------------------------------------------------- query


@njit_noref  # no reference counting: the atomic counts of its eight arrays were a large share of a short query
def query(px, py, pz, obj, oid, nf, ni, out, stack, levels, stats):
    """Ids of the spheres holding (px, py, pz) into ``out``; returns how many (writes at most
    ``out.size`` but counts them all). A child is entered when the point is in its box and its interval
    along the node's normal. ``stats`` (4,) int64 gets candidates, visible, nodes visited and the most
    nodes visited on one level; ``stack`` (>= maxdepth + 2,) int32 and ``levels`` (>= maxdepth + 1,) int64
    are scratch."""
    size = out.shape[0]
    e = _slack(px, py, pz)
    k, cand, visited, deepest, sp = start_query(stack, levels, in_box(nf, 0, px, py, pz))
    while sp > 0:
        sp, node, visited, deepest = pop_node(stack, sp, ni, levels, visited, deepest)
        ch = ni[node, CHILD]
        if ch < 0:
            k, cand = scan_leaf(node, px, py, pz, obj, oid, ni, out, size, k, cand)
        else:
            v = _proj(nf[node, NX], nf[node, NY], nf[node, NZ], px, py, pz)
            lo = v + e
            hi = v - e
            for c in range(ch, ch + 2):
                if lo >= nf[c, SLO] and hi <= nf[c, SHI] and in_box(nf, c, px, py, pz):
                    stack[sp] = c
                    sp += 1
    return finish_query(stats, k, cand, visited, levels, deepest)


# ----------------------------------------------------------------------------------------- refit


@njit
def refit_all(obj, nf, ni, ex, st):
    """Refit every node's box bottom-up and the summed volume (the intervals are the build's, grown by
    updates)."""
    B.refit_all(obj, nf, ni, ex.ravel(), st)


@njit
def _recompute(node, obj, nf, ni, ex):
    """The BVH's recompute of a node's box, on the summed volume ``ex`` raveled (a function of its own, so the
    ravel is compiled with reference counting even under a caller without it: the batch refit's)."""
    return B._recompute(node, obj, nf, ni, ex.ravel())


@overload(recompute, inline="always")
def _recompute_bsp(node, obj, nf, ni, ex):
    if ex.ndim == 4:  # the BSP tree's summed volume: the BVH's boxes
        return lambda node, obj, nf, ni, ex: _recompute(node, obj, nf, ni, ex)
    return None


# ----------------------------------------------------------------------------------------- updates


@njit
def _side(nf, p, x, y, z):
    """0 when the centre goes to node p's left child, else 1."""
    return 0 if _proj(nf[p, NX], nf[p, NY], nf[p, NZ], x, y, z) < nf[p, SPLIT] else 1


@njit
def _in_region(leaf, x, y, z, nf, ni):
    """Would the centre descend to ``leaf`` (on the same side of every plane above it)? O(depth)."""
    node = leaf
    p = ni[node, PARENT]
    while p >= 0:
        if ni[p, CHILD] + _side(nf, p, x, y, z) != node:
            return False
        node = p
        p = ni[node, PARENT]
    return True


@njit
def _widen_path(leaf, x, y, z, r, nf, ni):
    """Grow the interval of ``leaf`` and of every node above it to hold the sphere; returns whether the
    centre is on the leaf's side of every plane on the way (:func:`_in_region`). One walk, O(depth)."""
    inside = True
    node = leaf
    p = ni[node, PARENT]
    while p >= 0:
        nx = nf[p, NX]
        ny = nf[p, NY]
        nz = nf[p, NZ]
        lo, hi = _extent(nx, ny, nz, x, y, z, r)
        if lo < nf[node, SLO]:
            nf[node, SLO] = lo
        if hi > nf[node, SHI]:
            nf[node, SHI] = hi
        if ni[p, CHILD] + (0 if _proj(nx, ny, nz, x, y, z) < nf[p, SPLIT] else 1) != node:
            inside = False
        node = p
        p = ni[node, PARENT]
    return inside


@njit
def _find_leaf(x, y, z, nf, ni):
    node = np.int64(0)  # not a literal 0: _side compiles once
    while ni[node, CHILD] >= 0:
        node = ni[node, CHILD] + _side(nf, node, x, y, z)
    return node


@njit
def _place(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size):
    """Insert into the leaf the planes lead the centre to, widening the intervals on the way; a full
    range moves to the end of storage with room for ``leaf_size``; a full leaf splits at the median of
    its widest axis (an axis plane). The caller reserved 2 nodes and 2 * leaf_size slots."""
    leaf = _find_leaf(x, y, z, nf, ni)
    _widen_path(leaf, x, y, z, r, nf, ni)
    fst = ex.ravel()
    if place_in_room(leaf, x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, fst, leaf_size):
        return
    m = ni[leaf, CNT] + 1
    tmp, tid, a = gather_split(obj, oid, ni[leaf, START], m - 1, x, y, z, r, id)
    # a contiguous copy of the column: the stable sort compiles once, for the layout the frame sorts too
    order = np.argsort(np.ascontiguousarray(tmp[:, a]), kind="mergesort")
    left = split_leaf(leaf, m, oid, ni, st, leaf_size)
    nf[leaf, NX] = 1.0 if a == 0 else 0.0
    nf[leaf, NY] = 1.0 if a == 1 else 0.0
    nf[leaf, NZ] = 1.0 if a == 2 else 0.0
    nf[leaf, SPLIT] = tmp[order[m // 2], a]
    fill_split(left, m, order, tmp, tid, obj, oid, idslot, leafof, ni)
    for c in range(left, left + 2):
        s = ni[c, START]
        nf[c, SLO], nf[c, SHI] = _interval(obj, s, s + ni[c, CNT], nf[leaf, NX], nf[leaf, NY], nf[leaf, NZ])
        B._set_empty(nf, c)
        B._recompute(c, obj, nf, ni, fst)
    refit_up(leaf, obj, nf, ni, fst)


@njit
def insert(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size):
    """Insert one sphere (reserve 2 nodes and 2 * leaf_size slots first)."""
    _place(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size)


@njit
def _move(slot, x, y, z, r, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size, refit):
    """In place when the planes still lead the new centre to its leaf (the intervals above widened on the
    walk that checks it, the boxes refitted up the chain if ``refit``), otherwise remove + insert (the
    widened intervals stay conservative). O(depth) either way."""
    leaf = np.int64(leafof[slot])  # int64, as every other node index: its callees compile once
    if _widen_path(leaf, x, y, z, r, nf, ni):
        obj[slot, 0] = x
        obj[slot, 1] = y
        obj[slot, 2] = z
        obj[slot, 3] = r
        if refit:
            refit_up(leaf, obj, nf, ni, ex.ravel())
        return
    id = oid[slot]
    B._detach(slot, obj, oid, leafof, idslot, ni)
    if refit:
        refit_up(leaf, obj, nf, ni, ex.ravel())
    # the new leaf's chain is refitted now even in a batch (its flag would be lost otherwise)
    _place(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size)
