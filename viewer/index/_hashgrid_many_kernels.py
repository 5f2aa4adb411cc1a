"""The hash grid's batch query (:meth:`viewer.index.HashGrid.query_many`): many points answered in one call,
in the order given (the caller's Morton order, which puts the points of one cell next to each other, so a
cell's entries are read from memory once for all of them)."""

from __future__ import annotations

from viewer.host.jit import njit_noref

from ._hashgrid_kernels import query

__all__ = ["query_many"]


@njit_noref
def query_many(points, order, inv, tab, ck, ed, ei, bd, bi, meta, scratch, start, count, stats, acc):
    """Answer ``points[order[j]]`` ((K, 3) float64) for j = 0..K-1 into ``scratch`` (int64; as many ids as it
    holds), recording each view's ``start`` and ``count`` ((K,) int64); ``stats`` (4,) int64 is the single
    query's scratch, ``acc`` (4,) int64 receives the summed candidates, visible and cells. Returns the
    total (which may exceed scratch.size)."""
    cap = scratch.shape[0]
    pos = 0
    cand = 0
    nodes = 0
    for j in range(order.shape[0]):
        k = order[j]
        lo = min(pos, cap)
        n = query(points[k, 0], points[k, 1], points[k, 2], inv, tab, ck, ed, ei, bd, bi, meta, scratch[lo:], stats)
        start[k] = pos
        count[k] = n
        pos += n
        cand += stats[0]
        nodes += stats[2]
    acc[0] = cand
    acc[1] = pos
    acc[2] = nodes
    acc[3] = 0
    return pos
