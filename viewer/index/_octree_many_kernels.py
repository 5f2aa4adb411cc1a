"""The octree's batch query (:meth:`viewer.index.Octree.query_many`): many points answered in one call, in
the order given (the caller's Morton order), so consecutive walks find the nodes and object blocks they
share still in cache, and no point pays the Python call and the checks of a single query."""

from __future__ import annotations

from viewer.host.jit import njit_noref

from ._octree_kernels import query

__all__ = ["query_many"]


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
