"""The octree's batch query (:meth:`viewer.index.Octree.query_many`): many points answered in one call, in
the order given (the caller's Morton order). :func:`query_many` walks once a point (consecutive walks find
the nodes and object blocks they share still in cache, and no point pays the Python call and the checks of
a single query); :func:`query_shared` walks once for a group of consecutive points, carrying at each node
the points whose boxes hold it, and scans each object block once for all of them."""

from __future__ import annotations

import math

import numpy as np

from viewer.kernels.jit import njit_noref

from ._contract_kernels import file_group, load_group
from ._octree_kernels import (CHILD, COUNT, DEPTHS, EDGE, INV_STEPS, ROOT, SIB, STACK, START, _prefetch_entry,
                              _prefetch_siblings, _scan, aux_of, aux_views, node_views, query)
from ._morton import spread3

__all__ = ["GROUP_MAX", "curve_keys", "query_many", "query_shared", "shared_work_sizes"]


@njit_noref
def query_many(points, order, node, obj, oid, aux, meta, scratch, work, start, count, stats, acc):
    """Answer ``points[order[j]]`` ((K, 3) float64) for j = 0..K-1 into ``scratch`` (int64; as many ids as it
    holds), recording each view's ``start`` and ``count`` ((K,) int64); ``stats`` (4,) int64 is the single
    query's scratch, ``acc`` (4,) int64 receives the summed candidates, visible and nodes and the most
    nodes entered on one level. Returns the total (which may exceed scratch.size)."""
    cap = scratch.shape[0]
    pos = 0
    cand = 0
    nodes = 0
    deep = 0
    for j in range(order.shape[0]):
        k = order[j]
        lo = min(pos, cap)
        n = query(points[k, 0], points[k, 1], points[k, 2], node, obj, oid, aux, meta, scratch[lo:], work, stats)
        start[k] = pos
        count[k] = n
        pos += n
        cand += stats[0]
        nodes += stats[2]
        deep = max(deep, stats[3])
    acc[0] = cand
    acc[1] = pos
    acc[2] = nodes
    acc[3] = deep
    return pos


# ----------------------------------------------------------------------------- the shared walk

#: the most points one shared walk carries
GROUP_MAX = 256


def shared_work_sizes(group: int) -> tuple[int, int]:
    """The sizes of :func:`query_shared`'s int32 ``iwork`` (the stack's nodes, list offsets and lengths,
    then DEPTHS rows of ``group`` visit counters) and uint8 ``arena`` (the stacked lists of points) for
    groups of ``group`` points."""
    return 3 * STACK + DEPTHS * group, STACK * group


@njit_noref
def curve_keys(points, keys):
    """Morton keys (K,) int64 of ``points`` (K, 3) float64 on a grid of 1024 cells an axis over their
    bounding cube, into ``keys``: :func:`~._morton.morton_order`'s keys in one call (one compiled pass, many
    times cheaper than numpy's reductions and calls, which would eat into what a small batch's shared walk
    saves)."""
    k = points.shape[0]
    if k == 0:
        return
    lo0 = hi0 = points[0, 0]
    lo1 = hi1 = points[0, 1]
    lo2 = hi2 = points[0, 2]
    for j in range(1, k):
        lo0 = min(lo0, points[j, 0])
        hi0 = max(hi0, points[j, 0])
        lo1 = min(lo1, points[j, 1])
        hi1 = max(hi1, points[j, 1])
        lo2 = min(lo2, points[j, 2])
        hi2 = max(hi2, points[j, 2])
    span = max(hi0 - lo0, max(hi1 - lo1, hi2 - lo2))
    scale = 1024.0 / span if span > 0 else 0.0
    if not scale < math.inf:
        scale = 0.0
    for j in range(k):
        q0 = min(max((points[j, 0] - lo0) * scale, 0.0), 1023.0)
        q1 = min(max((points[j, 1] - lo1) * scale, 0.0), 1023.0)
        q2 = min(max((points[j, 2] - lo2) * scale, 0.0), 1023.0)
        keys[j] = spread3(np.int64(q0)) | (spread3(np.int64(q1)) << 1) | (spread3(np.int64(q2)) << 2)


@njit_noref(inline="always")
def _qbounds(q, row, off, nlev, ncorner, n):
    """The bounds (lo x, hi x, lo y, hi y, lo z, hi z) :func:`~._octree_kernels._in_qbox` tests a point
    against, computed once for many points (the same float operations, so the same answers)."""
    e = EDGE[nlev[n]]
    step = e * INV_STEPS
    slack = e * 1e-12
    b = ncorner[n, 0] - 0.5 * e
    x0 = b + q[row, off] * step - slack
    x1 = b + (q[row, off + 3] + 1) * step + slack
    b = ncorner[n, 1] - 0.5 * e
    y0 = b + q[row, off + 1] * step - slack
    y1 = b + (q[row, off + 4] + 1) * step + slack
    b = ncorner[n, 2] - 0.5 * e
    z0 = b + q[row, off + 2] * step - slack
    z1 = b + (q[row, off + 5] + 1) * step + slack
    return x0, x1, y0, y1, z0, z1


@njit_noref(inline="always")
def _filter(q, row, off, nlev, ncorner, n, gx, gy, gz, src, m, dst, d0):
    """Copy into ``dst[d0:]`` the points ``src[:m]`` (indices into ``gx, gy, gz``) inside the box at
    ``q[row, off:off + 6]`` on node n's grid; returns how many."""
    x0, x1, y0, y1, z0, z1 = _qbounds(q, row, off, nlev, ncorner, n)
    j = d0
    for i in range(m):
        p = src[i]
        x = gx[p]
        y = gy[p]
        z = gz[p]
        if not (x < x0 or x > x1 or y < y0 or y > y1 or z < z0 or z > z1):
            dst[j] = p
            j += 1
    return j - d0


@njit_noref(inline="always")
def _scan_points(gx, gy, gz, act, m, obj, oid, s0, s1, seg, base, span, cur):
    """Slots s0..s1 tested for each point ``act[:m]`` in turn (the block stays in L1 across them), each
    point's hits appended to its own segment ``seg[base + p * span:][:span]`` at its cursor ``cur[p]``
    (the single query's :func:`~._octree_kernels._scan`, so the same tests, order and overflow)."""
    for i in range(m):
        p = act[i]
        b = base + p * span
        cur[p] = _scan(gx[p], gy[p], gz[p], obj, oid, s0, s1, seg[b:b + span], cur[p])


@njit_noref
def query_shared(points, order, group, node, obj, oid, aux, meta, seg, span, iwork, arena, gxyz, lists,
                 start, count, acc):
    """Answer ``points[order[j]]`` ((K, 3) float64) for j = 0..K-1 as :func:`query_many` does, by one
    depth-first walk for each ``group`` (<= GROUP_MAX) consecutive points: a node is entered with the
    list of the group's points whose subtree box holds it (the single query's ``_holds`` tests, child by
    child and in its order, so each point enters exactly the nodes its own query enters, in the same
    order); its own box, then each octant run's box, filter that list again, and the points left scan
    the block while it is in cache.

    Point j's ids go to its segment ``seg[j * span:(j + 1) * span]`` (``seg`` (K * span,) int32 or int64), and
    ``start``, ``count`` (K,) int64 say where (indexed by view, ``order[j]``). ``iwork`` int32 and
    ``arena`` uint8 of :func:`shared_work_sizes` (``iwork``'s counters all zero between calls), ``gxyz``
    (3, group) float64, ``lists`` (4, GROUP_MAX) int64 scratch. ``acc`` (4,) int64 receives the summed
    candidates, visible and nodes, and the most nodes one point entered on one level. Returns the total;
    or, when a point found more than ``span`` ids, -(the most one point found): call again with a span
    at least that."""
    nint, nlev, ncorner, nq = node_views(node)
    aux_end, aux_q = aux_views(aux)
    sn = iwork[0:STACK]
    so = iwork[STACK:2 * STACK]
    sl = iwork[2 * STACK:3 * STACK]
    dcnt = iwork[3 * STACK:3 * STACK + DEPTHS * group]
    gx = gxyz[0]
    gy = gxyz[1]
    gz = gxyz[2]
    act = lists[0]  # the entered node's points
    own = lists[1]  # those in its own box
    run = lists[2]  # those in an octant run's box
    cur = lists[3]  # ids found, a point
    kk = order.shape[0]
    root = meta[ROOT]
    rlev = nlev[root]
    total = 0
    cand = 0
    visited = 0
    most = 0
    need = 0
    for g0 in range(0, kk, group):
        g = min(group, kk - g0)
        base = g0 * span
        load_group(points, order, g0, g, gx, gy, gz, cur)
        for i in range(g):
            act[i] = i
        deep = 0
        top = 0
        if nq[root, 6] <= nq[root, 9]:
            m = _filter(nq, root, 6, nlev, ncorner, root, gx, gy, gz, act, g, arena, 0)
            if m > 0:
                sn[0] = root
                so[0] = 0
                sl[0] = m
                top = 1
        while top > 0:
            top -= 1
            n = sn[top]
            atop = np.int64(so[top])
            m = np.int64(sl[top])
            for i in range(m):
                act[i] = arena[atop + i]
            visited += m
            d = rlev - nlev[n]
            if d > deep:
                deep = d
            row = d * group
            for i in range(m):
                dcnt[row + act[i]] += 1
            cnt = nint[n, COUNT]
            if cnt > 0 and nq[n, 0] <= nq[n, 3]:
                mo = _filter(nq, n, 0, nlev, ncorner, n, gx, gy, gz, act, m, own, 0)
                if mo > 0:
                    s0 = np.int64(nint[n, START])  # int64, as prev below: _scan compiles once for query_shared
                    a = aux_of(nq, np.int64(n)) - 1  # int64, as the single query's node
                    if a < 0:
                        cand += mo * cnt
                        _scan_points(gx, gy, gz, own, mo, obj, oid, s0, s0 + cnt, seg, base, span, cur)
                    else:
                        # octant runs, each for the points in its own box, then the unsorted tail
                        prev = s0
                        for j in range(8):
                            e = s0 + aux_end[a, j]
                            if e > prev:
                                mr = _filter(aux_q, a, 6 * j, nlev, ncorner, n, gx, gy, gz, own, mo, run, 0)
                                if mr > 0:
                                    cand += mr * (e - prev)
                                    _scan_points(gx, gy, gz, run, mr, obj, oid, prev, e, seg, base, span, cur)
                            prev = e
                        if prev < s0 + cnt:
                            cand += mo * (s0 + cnt - prev)
                            _scan_points(gx, gy, gz, own, mo, obj, oid, prev, s0 + cnt, seg, base, span, cur)
            # the children, each with the points its subtree box holds, stacked over this node's list
            c = nint[n, CHILD]
            _prefetch_siblings(ncorner, meta, c)
            while c >= 0:
                if nq[c, 6] <= nq[c, 9]:
                    mc = _filter(nq, c, 6, nlev, ncorner, c, gx, gy, gz, act, m, arena, atop)
                    if mc > 0:
                        _prefetch_entry(nint, ncorner, obj, oid, meta, c)
                        sn[top] = c
                        so[top] = atop
                        sl[top] = mc
                        top += 1
                        atop += mc
                c = nint[c, SIB]
        # each point's most nodes on one level (the counters zeroed for the next group), its segment
        for d in range(deep + 1):
            row = d * group
            for i in range(g):
                most = max(most, np.int64(dcnt[row + i]))
                dcnt[row + i] = 0
        total, need = file_group(order, g0, g, base, span, cur, start, count, total, need)
    acc[0] = cand
    acc[1] = total
    acc[2] = visited
    acc[3] = most
    if need > span:
        return -need
    return total
