"""The hash grid's batch query (:meth:`viewer.index.HashGrid.query_many`): many points answered in one call,
in the order given (the caller's Morton order, which puts the points of one cell next to each other).
:func:`query_many` answers them one after another (a cell's entries read from memory once, then found in
cache); :func:`query_cells` looks each cell up once for a run of consecutive points in it and walks its
entries once, testing each entry against all of them."""

from __future__ import annotations

from viewer.kernels.jit import njit_noref

from ..._contract_kernels import file_group, holds, load_group
from ._hashgrid_kernels import BIG_N, LEV0, NLEV, cell_at, cell_find, phase, query

__all__ = ["query_cells", "query_many"]


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


@njit_noref
def query_cells(points, order, group, inv, tab, ck, ed, ei, bd, bi, meta, seg, span, gxyz, keys, cur, start, count,
                acc):
    """Answer ``points[order[j]]`` ((K, 3) float64) for j = 0..K-1 as :func:`query_many` does, ``group``
    consecutive points at a time: on each level, each run of consecutive points in one cell looks the
    cell up once and walks its entries once, each entry tested against every point of the run (the
    single query's predicate); then the big list once, each sphere against every point of the group.
    Each point's ids come in its single query's order (levels in order, a cell's list in order, then
    the big list).

    Point j's ids go to its segment ``seg[j * span:(j + 1) * span]`` (``seg`` int32 or int64, ``span`` >= 1),
    and ``start``, ``count`` (K,) int64 say where (indexed by view, ``order[j]``). ``gxyz`` (3, group)
    float64, ``keys`` (3, group) int64, ``cur`` (group,) int64 scratch. ``acc`` (4,) int64 receives the
    summed candidates, visible and cells. Returns the total; or, when a point found ``span`` ids or more,
    -(1 + the most one point found): call again with a span at least that.
    """
    gx = gxyz[0]
    gy = gxyz[1]
    gz = gxyz[2]
    kx = keys[0]
    ky = keys[1]
    kz = keys[2]
    kk = order.shape[0]
    nb = meta[BIG_N]
    last = span - 1
    total = 0
    cand = 0
    nodes = 0
    need = 0
    for g0 in range(0, kk, group):
        g = min(group, kk - g0)
        base = g0 * span
        load_group(points, order, g0, g, gx, gy, gz, cur)
        li = inv
        for lev in range(meta[NLEV]):
            if meta[LEV0 + lev] == 0:
                li *= 0.5
                continue
            ph = phase(lev)
            for i in range(g):
                kx[i] = cell_at(gx[i], li, ph)
                ky[i] = cell_at(gy[i], li, ph)
                kz[i] = cell_at(gz[i], li, ph)
            li *= 0.5
            i0 = 0
            while i0 < g:
                i1 = i0 + 1
                while i1 < g and kx[i1] == kx[i0] and ky[i1] == ky[i0] and kz[i1] == kz[i0]:
                    i1 += 1
                c = cell_find(tab, lev, kx[i0], ky[i0], kz[i0])
                if c >= 0:
                    m = i1 - i0
                    nodes += m
                    e = ck[c, 4]
                    if m == 1:
                        # one point: its cursor in a register. Writes branch-free (a hit advances the
                        # cursor; a point past its segment rewrites its last slot and the batch is run
                        # again): the predicate is ~50/50 in dense cells, a branch on it mispredicts
                        t = cur[i0]
                        b = base + i0 * span
                        px = gx[i0]
                        py = gy[i0]
                        pz = gz[i0]
                        while e >= 0:
                            while True:
                                cand += 1
                                seg[b + min(t, last)] = ei[e, 0]
                                t += holds(px, py, pz, ed[e, 0], ed[e, 1], ed[e, 2], ed[e, 3])
                                nxt = ei[e, 1]
                                if nxt != e + 1:
                                    break
                                e += 1
                            e = nxt
                        cur[i0] = t
                    while m > 1 and e >= 0:
                        while True:  # a run of consecutive entries, as the single query walks it
                            cand += m
                            x = ed[e, 0]
                            y = ed[e, 1]
                            z = ed[e, 2]
                            r = ed[e, 3]
                            ident = ei[e, 0]
                            for p in range(i0, i1):
                                t = cur[p]
                                seg[base + p * span + min(t, last)] = ident
                                cur[p] = t + holds(gx[p], gy[p], gz[p], x, y, z, r)
                            nxt = ei[e, 1]
                            if nxt != e + 1:
                                break
                            e += 1
                        e = nxt
                i0 = i1
        if nb > 0:
            nodes += g
            cand += g * nb
            for j in range(nb):
                x = bd[j, 0]
                y = bd[j, 1]
                z = bd[j, 2]
                r = bd[j, 3]
                ident = bi[j]
                for p in range(g):
                    t = cur[p]
                    seg[base + p * span + min(t, last)] = ident
                    cur[p] = t + holds(gx[p], gy[p], gz[p], x, y, z, r)
        total, need = file_group(order, g0, g, base, span, cur, start, count, total, need)
    acc[0] = cand
    acc[1] = total
    acc[2] = nodes
    acc[3] = 0
    if need >= span:  # a point that filled its segment may have rewritten its last slot
        return -(need + 1)
    return total
