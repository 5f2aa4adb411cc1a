"""numba kernels of the bucket tree, the "endless universe" (:class:`viewer.index.rivals.grids.buckettree.BucketTree`).

The root is a hash map of fixed-size cells (see :mod:`viewer.index.rivals.grids._hashgrid_kernels`; a cell record's
payload is its root node). Each cell is an octree whose leaves hold up to ``m`` objects in one
chain of contiguous blocks of ``bs`` rows and split into 8
children when they overflow (below ``MAXD`` levels only: deeper
leaves chain further blocks, so coincident centres terminate).

Arrays (G node groups of 8, B blocks of m rows, I ids):

- ``ni`` (8G, 5) int32: first child (-1: leaf), first block (leaves; -1: none), parent (-1: a root),
  depth, cell record (roots only). Nodes are allocated in groups of 8 (a cell's root takes a group of its own).
- ``ng`` (8G, 4) float64: the node's cube as mid x, y, z and half edge (insertion only).
- ``nb`` (8G, 6) float64: tight bounds: the box of every sphere below (lo x, y, z, hi x, y, z; empty:
  lo = +inf, hi = -inf). Kept exact: grown on insert, recomputed upwards on removal and moves.
- ``bd`` (B bs, 4) float64 rows x, y, z, r (bs = rows per block, read from the shapes); ``bid`` (B bs,) int64 row -> id; ``bl`` (B, 3) int32: rows
  used, next block of the leaf, owning leaf.
- ``loc`` (I,) int64: id -> row (block bs + position), -1 once removed.
- ``gfree`` (G,) int32 / ``bfree`` (B,) int32: stacks of free groups / blocks.
- ``meta`` (8,) int64: GRP_TOP, GRP_FREEN, BLK_TOP, BLK_FREEN, NLIVE; ``gm`` (1,) float64: the
  largest radius ever held (sets the query's window of cells).

Every kernel is compiled without reference counting (``njit_noref``): none allocates, the class passes
every buffer (``stack``, ``levels``).
"""

from __future__ import annotations

import numpy as np

from viewer.kernels.jit import njit_noref

from ..._contract_kernels import emit, holds

from ._hashgrid_kernels import CELL_TOP, CELLS_LIVE, cell_add, cell_drop, cell_find, cell_of, cell_room, margin

MAXD = 24
GRP_TOP, GRP_FREEN, BLK_TOP, BLK_FREEN, NLIVE = 0, 1, 2, 3, 4
GROUPS_PER_OP = MAXD + 2
BLOCKS_PER_OP = 10 * (MAXD + 2)
INF = np.inf


@njit_noref
def _grp_alloc(ni, nb, gfree, meta):
    if meta[GRP_FREEN] > 0:
        meta[GRP_FREEN] -= 1
        g = gfree[meta[GRP_FREEN]]
    else:
        g = meta[GRP_TOP]
        meta[GRP_TOP] += 1
    base = 8 * g
    for n in range(base, base + 8):
        ni[n, 0] = -1
        ni[n, 1] = -1
        ni[n, 4] = -1
        for a in range(3):
            nb[n, a] = INF
            nb[n, a + 3] = -INF
    return base


@njit_noref
def _grp_free(ni, gfree, meta, base):
    for n in range(base, base + 8):
        ni[n, 3] = -1
    gfree[meta[GRP_FREEN]] = base // 8
    meta[GRP_FREEN] += 1


@njit_noref
def _blk_alloc(bl, bfree, meta, leaf):
    if meta[BLK_FREEN] > 0:
        meta[BLK_FREEN] -= 1
        b = bfree[meta[BLK_FREEN]]
    else:
        b = meta[BLK_TOP]
        meta[BLK_TOP] += 1
    bl[b, 0] = 0
    bl[b, 1] = -1
    bl[b, 2] = leaf
    return b


@njit_noref
def _blk_free(bl, bfree, meta, b):
    bl[b, 2] = -1
    bfree[meta[BLK_FREEN]] = b
    meta[BLK_FREEN] += 1


@njit_noref
def room(ni, bl, ck, tab, cmeta, meta):
    if meta[GRP_FREEN] + ni.shape[0] // 8 - meta[GRP_TOP] < GROUPS_PER_OP:
        return False
    if meta[BLK_FREEN] + bl.shape[0] - meta[BLK_TOP] < BLOCKS_PER_OP:
        return False
    return cell_room(tab, ck, cmeta, np.int64(1))


@njit_noref
def _octant(ng, n, x, y, z):
    o = 0
    if x >= ng[n, 0]:
        o |= 1
    if y >= ng[n, 1]:
        o |= 2
    if z >= ng[n, 2]:
        o |= 4
    return o


@njit_noref
def _grow_box(nb, n, x, y, z, r):
    e = r + margin(x, r)
    if x - e < nb[n, 0]:
        nb[n, 0] = x - e
    if x + e > nb[n, 3]:
        nb[n, 3] = x + e
    e = r + margin(y, r)
    if y - e < nb[n, 1]:
        nb[n, 1] = y - e
    if y + e > nb[n, 4]:
        nb[n, 4] = y + e
    e = r + margin(z, r)
    if z - e < nb[n, 2]:
        nb[n, 2] = z - e
    if z + e > nb[n, 5]:
        nb[n, 5] = z + e


@njit_noref
def _leaf_put(n, i, x, y, z, r, m, ni, bd, bid, bl, bfree, loc, meta):
    bs = bd.shape[0] // bl.shape[0]  # rows per block
    b = ni[n, 1]
    if b < 0:
        b = _blk_alloc(bl, bfree, meta, n)
        ni[n, 1] = b
    while bl[b, 0] >= bs:
        nxt = bl[b, 1]
        if nxt < 0:
            nxt = _blk_alloc(bl, bfree, meta, n)
            bl[b, 1] = nxt
        b = nxt
    row = b * bs + bl[b, 0]
    bl[b, 0] += 1
    bd[row, 0] = x
    bd[row, 1] = y
    bd[row, 2] = z
    bd[row, 3] = r
    bid[row] = i
    loc[i] = row


@njit_noref
def _leaf_count(n, ni, bl):
    t = 0
    b = ni[n, 1]
    while b >= 0:
        t += bl[b, 0]
        b = bl[b, 1]
    return t


@njit_noref
def _split(n0, m, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta, stack):
    """Split overfull leaf n0 into 8 children, and any child that is still overfull."""
    bs = bd.shape[0] // bl.shape[0]
    top = 0
    stack[top] = n0
    top += 1
    while top > 0:
        top -= 1
        n = stack[top]
        ch = _grp_alloc(ni, nb, gfree, meta)
        h = ng[n, 3] * 0.5
        for o in range(8):
            c = ch + o
            ni[c, 2] = n
            ni[c, 3] = ni[n, 3] + 1
            ng[c, 0] = ng[n, 0] + (h if o & 1 else -h)
            ng[c, 1] = ng[n, 1] + (h if o & 2 else -h)
            ng[c, 2] = ng[n, 2] + (h if o & 4 else -h)
            ng[c, 3] = h
        b = np.int64(ni[n, 1])  # int64, as _remove's block: _blk_free compiles once
        ni[n, 1] = -1
        ni[n, 0] = ch
        while b >= 0:
            for p in range(bl[b, 0]):
                row = b * bs + p
                x, y, z, r = bd[row, 0], bd[row, 1], bd[row, 2], bd[row, 3]
                c = ch + _octant(ng, n, x, y, z)
                _grow_box(nb, c, x, y, z, r)
                _leaf_put(c, bid[row], x, y, z, r, m, ni, bd, bid, bl, bfree, loc, meta)
            nxt = bl[b, 1]
            _blk_free(bl, bfree, meta, b)
            b = nxt
        if ni[n, 3] + 1 < MAXD:
            for o in range(8):
                if _leaf_count(ch + o, ni, bl) > m:
                    stack[top] = ch + o
                    top += 1


@njit_noref
def _insert(i, x, y, z, r, m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc,
            meta, gm, stack):
    cx = cell_of(x, inv)
    cy = cell_of(y, inv)
    cz = cell_of(z, inv)
    c = cell_find(tab, np.int64(0), cx, cy, cz)
    if c < 0:
        n = _grp_alloc(ni, nb, gfree, meta)
        ni[n, 2] = -1
        ni[n, 3] = 0
        ng[n, 0] = (cx + 0.5) * edge
        ng[n, 1] = (cy + 0.5) * edge
        ng[n, 2] = (cz + 0.5) * edge
        ng[n, 3] = 0.5 * edge
        c = cell_add(tab, ck, cfree, cmeta, np.int64(0), cx, cy, cz, n)
        ni[n, 4] = c
    n = np.int64(ck[c, 4])  # int64, as the descent's next node: its callees compile once
    while True:
        _grow_box(nb, n, x, y, z, r)
        if ni[n, 0] < 0:
            break
        n = ni[n, 0] + _octant(ng, n, x, y, z)
    _leaf_put(n, i, x, y, z, r, m, ni, bd, bid, bl, bfree, loc, meta)
    if ni[n, 3] < MAXD and _leaf_count(n, ni, bl) > m:
        _split(n, m, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta, stack)
    if r > gm[0]:
        gm[0] = r
    meta[NLIVE] += 1


@njit_noref
def _refit(n, m, ni, nb, bd, bl):
    """Recompute leaf n's box from its rows, then each ancestor's from its children, while they change."""
    bs = bd.shape[0] // bl.shape[0]
    lo0 = lo1 = lo2 = INF
    hi0 = hi1 = hi2 = -INF
    b = ni[n, 1]
    while b >= 0:
        for row in range(b * bs, b * bs + bl[b, 0]):
            x, y, z, r = bd[row, 0], bd[row, 1], bd[row, 2], bd[row, 3]
            e = r + margin(x, r)
            lo0 = min(lo0, x - e)
            hi0 = max(hi0, x + e)
            e = r + margin(y, r)
            lo1 = min(lo1, y - e)
            hi1 = max(hi1, y + e)
            e = r + margin(z, r)
            lo2 = min(lo2, z - e)
            hi2 = max(hi2, z + e)
        b = bl[b, 1]
    while True:
        if (nb[n, 0] == lo0 and nb[n, 1] == lo1 and nb[n, 2] == lo2 and nb[n, 3] == hi0 and nb[n, 4] == hi1
                and nb[n, 5] == hi2):
            return
        nb[n, 0] = lo0
        nb[n, 1] = lo1
        nb[n, 2] = lo2
        nb[n, 3] = hi0
        nb[n, 4] = hi1
        nb[n, 5] = hi2
        n = ni[n, 2]
        if n < 0:
            return
        ch = ni[n, 0]
        lo0 = lo1 = lo2 = INF
        hi0 = hi1 = hi2 = -INF
        for c in range(ch, ch + 8):
            lo0 = min(lo0, nb[c, 0])
            lo1 = min(lo1, nb[c, 1])
            lo2 = min(lo2, nb[c, 2])
            hi0 = max(hi0, nb[c, 3])
            hi1 = max(hi1, nb[c, 4])
            hi2 = max(hi2, nb[c, 5])


@njit_noref
def _remove(i, m, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta):
    bs = bd.shape[0] // bl.shape[0]
    row = loc[i]
    b = row // bs
    leaf = bl[b, 2]
    last = b * bs + bl[b, 0] - 1
    if row != last:
        for a in range(4):
            bd[row, a] = bd[last, a]
        bid[row] = bid[last]
        loc[bid[row]] = row
    bl[b, 0] -= 1
    loc[i] = -1
    meta[NLIVE] -= 1
    if bl[b, 0] == 0:  # unlink the empty block from its leaf's chain
        if ni[leaf, 1] == b:
            ni[leaf, 1] = bl[b, 1]
        else:
            p = ni[leaf, 1]
            while bl[p, 1] != b:
                p = bl[p, 1]
            bl[p, 1] = bl[b, 1]
        _blk_free(bl, bfree, meta, b)
    _refit(leaf, m, ni, nb, bd, bl)
    # merge children back into their parent while they are all leaves holding <= m / 2 together
    n = np.int64(ni[leaf, 2])  # node and block indices int64, as _insert and _split pass them: compiled once
    while n >= 0:
        ch = np.int64(ni[n, 0])
        tot = 0
        for c in range(ch, ch + 8):
            if ni[c, 0] >= 0:
                tot = m + 1
                break
            tot += _leaf_count(c, ni, bl)
        if tot > m // 2:
            break
        ni[n, 0] = -1
        for c in range(ch, ch + 8):
            b = np.int64(ni[c, 1])
            while b >= 0:
                for rw in range(b * bs, b * bs + bl[b, 0]):
                    _leaf_put(n, bid[rw], bd[rw, 0], bd[rw, 1], bd[rw, 2], bd[rw, 3], m, ni, bd, bid, bl, bfree,
                              loc, meta)
                nxt = bl[b, 1]
                _blk_free(bl, bfree, meta, b)
                b = nxt
        _grp_free(ni, gfree, meta, ch)
        leaf = n
        n = ni[n, 2]
    # a root left empty: drop its cell
    root = leaf
    while ni[root, 2] >= 0:
        root = ni[root, 2]
    if ni[root, 0] < 0 and ni[root, 1] < 0:
        cell_drop(tab, ck, cfree, cmeta, ni[root, 4])
        _grp_free(ni, gfree, meta, root)


@njit_noref
def _leaf_of(x, y, z, inv, tab, ni, ng, ck):
    """The leaf a centre descends to, or -1 when its cell does not exist."""
    c = cell_find(tab, np.int64(0), cell_of(x, inv), cell_of(y, inv), cell_of(z, inv))
    if c < 0:
        return -1
    n = np.int64(ck[c, 4])  # int64, as the descent's next node: _octant compiles once
    while ni[n, 0] >= 0:
        n = ni[n, 0] + _octant(ng, n, x, y, z)
    return n


@njit_noref
def insert_many(start, ids, cen, rad, m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree,
                loc, meta, gm, stack):
    """Insert objects ``ids[k]`` from ``start``; returns where it stopped (arrays must grow) or len(ids)."""
    for k in range(start, ids.shape[0]):
        if not room(ni, bl, ck, tab, cmeta, meta):
            return k
        _insert(ids[k], cen[k, 0], cen[k, 1], cen[k, 2], rad[k], m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb,
                bd, bid, bl, gfree, bfree, loc, meta, gm, stack)
    return ids.shape[0]


@njit_noref
def insert_one(i, x, y, z, r, m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta,
               gm, stack):
    """Insert object i; False (nothing changed) when the arrays must grow first."""
    if not room(ni, bl, ck, tab, cmeta, meta):
        return False
    _insert(i, x, y, z, r, m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta, gm,
            stack)
    return True


@njit_noref
def remove_one(i, m, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta):
    _remove(i, m, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta)


@njit_noref
def move_many(start, ids, cen, rad, m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree,
              loc, meta, gm, stack):
    """Move objects ``ids[k]`` (radius kept where ``rad[k]`` is NaN) from ``start``. A centre that stays
    in its leaf is rewritten in place and the boxes refitted; otherwise remove + insert. Returns where
    it stopped (arrays must grow) or len(ids)."""
    for k in range(start, ids.shape[0]):
        if not room(ni, bl, ck, tab, cmeta, meta):
            return k
        _move(ids[k], cen[k, 0], cen[k, 1], cen[k, 2], rad[k], m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd,
              bid, bl, gfree, bfree, loc, meta, gm, stack)
    return ids.shape[0]


@njit_noref
def move_one(i, x, y, z, r, m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta, gm,
             stack):
    """Move object i (radius kept when ``r`` is NaN); False (nothing changed) when the arrays must grow
    first."""
    if not room(ni, bl, ck, tab, cmeta, meta):
        return False
    _move(i, x, y, z, r, m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta, gm,
          stack)
    return True


@njit_noref(inline="always")
def _move(i, x, y, z, r, m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta, gm,
          stack):
    """A centre that stays in its leaf is rewritten in place and the boxes refitted; otherwise remove +
    insert."""
    row = loc[i]
    if r != r:
        r = bd[row, 3]
    leaf = bl[row // (bd.shape[0] // bl.shape[0]), 2]
    if _leaf_of(x, y, z, inv, tab, ni, ng, ck) == leaf:
        bd[row, 0] = x
        bd[row, 1] = y
        bd[row, 2] = z
        bd[row, 3] = r
        if r > gm[0]:
            gm[0] = r
        _refit(leaf, m, ni, nb, bd, bl)
        return
    _remove(i, m, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta)
    _insert(i, x, y, z, r, m, inv, edge, tab, ck, cfree, cmeta, ni, ng, nb, bd, bid, bl, gfree, bfree, loc, meta, gm,
            stack)


@njit_noref
def query(px, py, pz, m, inv, tab, ck, cmeta, ni, nb, bd, bid, bl, gm, out, stack, levels, stats):
    """Ids of the spheres holding p into ``out`` (the first len(out)); returns how many. ``stats`` (4,)
    int64 gets candidates, visible, nodes entered (cell roots included), most nodes entered on one
    depth. ``stack`` (>= 8 MAXD + 8,) int64 and ``levels`` (MAXD + 1,) int64 are scratch."""
    size = out.shape[0]
    bs = bd.shape[0] // bl.shape[0]
    k = 0
    cand = 0
    visited = 0
    for d in range(levels.shape[0]):
        levels[d] = 0
    e = gm[0]
    e = e + e * 8e-15 + margin(px, 0.0)
    x0 = cell_of(px - e, inv)
    x1 = cell_of(px + e, inv)
    y0 = cell_of(py - e, inv)
    y1 = cell_of(py + e, inv)
    z0 = cell_of(pz - e, inv)
    z1 = cell_of(pz + e, inv)
    window = float(x1 - x0 + 1) * float(y1 - y0 + 1) * float(z1 - z0 + 1)
    # the window of cells a sphere holding p can have its centre in; when it has more cells than
    # there are live cells, test every live cell's root instead
    scan = window > cmeta[CELLS_LIVE]
    ncell = cmeta[CELL_TOP] if scan else np.int64(window)
    for t in range(ncell):
        if scan:
            root = ck[t, 4]
            if root < 0:
                continue
        else:
            cz = z0 + t % (z1 - z0 + 1)
            q = t // (z1 - z0 + 1)
            cy = y0 + q % (y1 - y0 + 1)
            cx = x0 + q // (y1 - y0 + 1)
            c = cell_find(tab, np.int64(0), cx, cy, cz)
            if c < 0:
                continue
            root = ck[c, 4]
        top = 0
        stack[top] = root
        top += 1
        while top > 0:
            top -= 1
            n = stack[top]
            if not (nb[n, 0] <= px <= nb[n, 3] and nb[n, 1] <= py <= nb[n, 4] and nb[n, 2] <= pz <= nb[n, 5]):
                continue
            visited += 1
            levels[ni[n, 3]] += 1
            ch = ni[n, 0]
            if ch >= 0:
                for c in range(ch, ch + 8):
                    stack[top] = c
                    top += 1
                continue
            b = ni[n, 1]
            while b >= 0:
                for row in range(b * bs, b * bs + bl[b, 0]):
                    cand += 1
                    if holds(px, py, pz, bd[row, 0], bd[row, 1], bd[row, 2], bd[row, 3]):
                        k = emit(out, size, k, bid[row])
                b = bl[b, 1]
    mx = 0
    for d in range(levels.shape[0]):
        if levels[d] > mx:
            mx = levels[d]
    stats[0] = cand
    stats[1] = k
    stats[2] = visited
    stats[3] = mx
    return k
