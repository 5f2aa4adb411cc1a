"""numba kernels of the hierarchical hash grid (:class:`viewer.index.rivals.grids.hgrid.HGrid`).

Level k holds the spheres of radius in (base 2^(k-1), base 2^k] (level 0: r <= base; the top level
everything larger), each stored once, in the cell of its centre, on a grid of edge
``cell_factor * 2 * base * 2^k``. All levels share one hash map keyed (level, x, y, z); see
:mod:`viewer.index.rivals.grids._hashgrid_kernels`, whose cell records carry the head slot of the cell's list.

Arrays (S object slots, C cell records, I ids):

- ``sd`` (S, 4) float64: x, y, z, r. The bulk build lays each cell's objects out consecutively.
- ``sl`` (S, 3) int32: next, prev (doubly linked: O(1) unlink), cell record. Free slots chain by next.
- ``sid`` (S,) int64 slot -> id; ``id2s`` (I,) int64 id -> slot, -1 once removed.
- ``crm`` (C,) float64: the largest radius ever linked into a live cell (a bound, never shrunk).
- ``lc`` (64,) int64 objects per level; ``lr`` (64,) float64 largest radius per level (reset when the
  level empties); ``linv`` (64,) float64 1 / cell edge.
- ``meta`` (4,) int64: SLOT_TOP, SLOT_FREE, SLOT_FREEN, NLIVE.

Every kernel is compiled without reference counting (``njit_noref``): none allocates, the class passes
every buffer.
"""

from __future__ import annotations

import numpy as np

from viewer.kernels.jit import njit_noref

from ..._contract_kernels import emit, holds

from ._hashgrid_kernels import CELL_TOP, CELLS_LIVE, cell_add, cell_drop, cell_find, cell_of, cell_room, margin

MAXL = 64
SLOT_TOP, SLOT_FREE, SLOT_FREEN, NLIVE = 0, 1, 2, 3


@njit_noref
def level_of(r, base):
    """The smallest k with r <= base 2^k (at most MAXL - 1)."""
    if r <= base:
        return 0
    k = 1
    t = base * 2.0
    while t < r and k < MAXL - 1:
        t *= 2.0
        k += 1
    return k


@njit_noref
def _link(s, r, lvl, x, y, z, linv, tab, ck, cfree, cmeta, crm, sl, lc, lr):
    inv = linv[lvl]
    cx = cell_of(x, inv)
    cy = cell_of(y, inv)
    cz = cell_of(z, inv)
    c = cell_find(tab, lvl, cx, cy, cz)
    if c < 0:
        c = cell_add(tab, ck, cfree, cmeta, lvl, cx, cy, cz, np.int64(-1))
        crm[c] = 0.0
    h = ck[c, 4]
    sl[s, 0] = h
    sl[s, 1] = -1
    sl[s, 2] = c
    if h >= 0:
        sl[h, 1] = s
    ck[c, 4] = s
    if r > crm[c]:
        crm[c] = r
    lc[lvl] += 1
    if r > lr[lvl]:
        lr[lvl] = r


@njit_noref
def _unlink(s, tab, ck, cfree, cmeta, sl, lc, lr):
    c = sl[s, 2]
    p = sl[s, 1]
    n = sl[s, 0]
    if p >= 0:
        sl[p, 0] = n
    else:
        ck[c, 4] = n
    if n >= 0:
        sl[n, 1] = p
    lvl = ck[c, 0]
    if ck[c, 4] < 0:
        cell_drop(tab, ck, cfree, cmeta, c)
    lc[lvl] -= 1
    if lc[lvl] == 0:
        lr[lvl] = 0.0


@njit_noref
def room(tab, ck, cmeta, sd, meta):
    if meta[SLOT_FREEN] == 0 and meta[SLOT_TOP] >= sd.shape[0]:
        return False
    return cell_room(tab, ck, cmeta, np.int64(1))


@njit_noref
def insert_one(i, x, y, z, r, base, linv, tab, ck, cfree, cmeta, crm, sd, sl, sid, id2s, lc, lr, meta):
    """Add object i; False (nothing changed) when the arrays must grow first."""
    if not room(tab, ck, cmeta, sd, meta):
        return False
    if meta[SLOT_FREEN] > 0:
        s = meta[SLOT_FREE]
        meta[SLOT_FREE] = sl[s, 0]
        meta[SLOT_FREEN] -= 1
    else:
        s = meta[SLOT_TOP]
        meta[SLOT_TOP] += 1
    sd[s, 0] = x
    sd[s, 1] = y
    sd[s, 2] = z
    sd[s, 3] = r
    sid[s] = i
    id2s[i] = s
    _link(s, r, level_of(r, base), x, y, z, linv, tab, ck, cfree, cmeta, crm, sl, lc, lr)
    meta[NLIVE] += 1
    return True


@njit_noref
def remove_one(i, tab, ck, cfree, cmeta, sl, sid, id2s, lc, lr, meta):
    s = id2s[i]
    _unlink(s, tab, ck, cfree, cmeta, sl, lc, lr)
    id2s[i] = -1
    sid[s] = -1
    sl[s, 0] = meta[SLOT_FREE]
    sl[s, 2] = -1
    meta[SLOT_FREE] = s
    meta[SLOT_FREEN] += 1
    meta[NLIVE] -= 1


@njit_noref(inline="always")
def _move(s, x, y, z, r, base, linv, tab, ck, cfree, cmeta, crm, sd, sl, lc, lr):
    """Move slot s (radius kept when ``r`` is NaN): in place when it stays in its cell and band, else
    unlink + link, O(1) either way."""
    if r != r:
        r = sd[s, 3]
    sd[s, 0] = x
    sd[s, 1] = y
    sd[s, 2] = z
    sd[s, 3] = r
    lvl = level_of(r, base)
    c = sl[s, 2]
    inv = linv[lvl]
    if (ck[c, 0] == lvl and ck[c, 1] == cell_of(x, inv) and ck[c, 2] == cell_of(y, inv)
            and ck[c, 3] == cell_of(z, inv)):
        if r > crm[c]:
            crm[c] = r
        if r > lr[lvl]:
            lr[lvl] = r
        return
    _unlink(s, tab, ck, cfree, cmeta, sl, lc, lr)
    _link(s, r, lvl, x, y, z, linv, tab, ck, cfree, cmeta, crm, sl, lc, lr)


@njit_noref
def move_one(i, x, y, z, r, base, linv, tab, ck, cfree, cmeta, crm, sd, sl, id2s, lc, lr):
    """Move object i (radius kept when ``r`` is NaN); False (nothing changed) when the cell arrays
    must grow first."""
    if not cell_room(tab, ck, cmeta, np.int64(1)):
        return False
    _move(id2s[i], x, y, z, r, base, linv, tab, ck, cfree, cmeta, crm, sd, sl, lc, lr)
    return True


@njit_noref
def move_many(start, ids, cen, rad, base, linv, tab, ck, cfree, cmeta, crm, sd, sl, id2s, lc, lr):
    """Move objects ``ids[k]`` (radius kept where ``rad[k]`` is NaN) from ``start``. Returns where it
    stopped (the cell arrays must grow) or len(ids)."""
    for k in range(start, ids.shape[0]):
        if not cell_room(tab, ck, cmeta, np.int64(1)):
            return k
        _move(id2s[ids[k]], cen[k, 0], cen[k, 1], cen[k, 2], rad[k], base, linv, tab, ck, cfree, cmeta, crm, sd,
              sl, lc, lr)
    return ids.shape[0]


@njit_noref
def build_count(start, cen, rad, base, linv, tab, ck, cfree, cmeta, crm, cnt, cobj, lc, lr):
    """Bulk build, pass 1: each object's cell record in ``cobj``, objects per cell in ``cnt``, cell and
    level radius bounds. Returns where it stopped (cell arrays must grow) or N."""
    for i in range(start, cen.shape[0]):
        if not cell_room(tab, ck, cmeta, np.int64(1)):
            return i
        r = rad[i]
        lvl = level_of(r, base)
        inv = linv[lvl]
        cx = cell_of(cen[i, 0], inv)
        cy = cell_of(cen[i, 1], inv)
        cz = cell_of(cen[i, 2], inv)
        c = cell_find(tab, lvl, cx, cy, cz)
        if c < 0:
            c = cell_add(tab, ck, cfree, cmeta, lvl, cx, cy, cz, np.int64(-1))
            crm[c] = 0.0
        cobj[i] = c
        cnt[c] += 1
        if r > crm[c]:
            crm[c] = r
        lc[lvl] += 1
        if r > lr[lvl]:
            lr[lvl] = r
    return cen.shape[0]


@njit_noref
def build_fill(cen, rad, cobj, off, pos, ck, sd, sl, sid, id2s):
    """Bulk build, pass 2: slots of cell c are off[c]..off[c+1]-1, linked in that order. ``pos``
    (C,) int64 scratch, filled with ``off[:-1]`` here."""
    ncell = off.shape[0] - 1
    for c in range(ncell):
        pos[c] = off[c]
    for i in range(cen.shape[0]):
        c = cobj[i]
        s = pos[c]
        pos[c] = s + 1
        sd[s, 0] = cen[i, 0]
        sd[s, 1] = cen[i, 1]
        sd[s, 2] = cen[i, 2]
        sd[s, 3] = rad[i]
        sid[s] = i
        id2s[i] = s
        sl[s, 2] = c
    for c in range(ncell):
        a = off[c]
        b = off[c + 1]
        ck[c, 4] = a
        for s in range(a, b):
            sl[s, 0] = s + 1 if s + 1 < b else -1
            sl[s, 1] = s - 1 if s > a else -1


@njit_noref(inline="always")
def _scan_cell(c, cx, cy, cz, px, py, pz, mx, my, mz, big, inv, ck, crm, sd, sl, sid, out, k, cand):
    """Test the objects of cell record ``c`` (at cell coordinates cx, cy, cz) against p; returns the
    new (k, cand)."""
    size = out.shape[0]
    rm = crm[c]
    if rm < big:  # the window test again, with this cell's own largest radius
        e = rm + rm * 8e-15
        if (cx < cell_of(px - e - mx, inv) or cx > cell_of(px + e + mx, inv)
                or cy < cell_of(py - e - my, inv) or cy > cell_of(py + e + my, inv)
                or cz < cell_of(pz - e - mz, inv) or cz > cell_of(pz + e + mz, inv)):
            return k, cand
    s = ck[c, 4]
    while s >= 0:
        # runs of consecutive slots (the build's layout) are walked by s + 1, so the next address
        # does not wait on the link's load
        while True:
            cand += 1
            if holds(px, py, pz, sd[s, 0], sd[s, 1], sd[s, 2], sd[s, 3]):
                k = emit(out, size, k, sid[s])
            nxt = sl[s, 0]
            if nxt != s + 1:
                break
            s += 1
        s = nxt
    return k, cand


@njit_noref
def query(px, py, pz, tab, ck, cmeta, crm, sd, sl, sid, lc, lr, linv, out, stats):
    """Ids of the spheres holding p into ``out`` (the first len(out)); returns how many. ``stats`` (4,)
    int64 gets candidates, visible, cells probed, most cells probed on one level.

    A level whose window holds more cells than the map holds live (a huge radius on a fine level, or
    a window of tiny cells) is answered by a pass over the live cell records instead of probing
    every cell of the window, so the work is bounded by min(window, live cells)."""
    k = 0
    cand = 0
    probes = 0
    maxp = 0
    mx = margin(px, 0.0)
    my = margin(py, 0.0)
    mz = margin(pz, 0.0)
    top = cmeta[CELL_TOP]
    live = float(cmeta[CELLS_LIVE])
    for lvl in range(MAXL):
        if lc[lvl] == 0:
            continue
        big = lr[lvl]
        inv = linv[lvl]
        # a centre c with p in its sphere has |p - c| <= r (+ rounding) on each axis, so its cell lies
        # in the cells of [p - R, p + R]: cell_of is monotone
        ex = big + mx + big * 8e-15
        ey = big + my + big * 8e-15
        ez = big + mz + big * 8e-15
        x0 = cell_of(px - ex, inv)
        x1 = cell_of(px + ex, inv)
        y0 = cell_of(py - ey, inv)
        y1 = cell_of(py + ey, inv)
        z0 = cell_of(pz - ez, inv)
        z1 = cell_of(pz + ez, inv)
        pl = 0
        if float(x1 - x0 + 1) * float(y1 - y0 + 1) * float(z1 - z0 + 1) > live:
            for c in range(top):
                if ck[c, 4] == -2 or ck[c, 0] != lvl:
                    continue
                cx = ck[c, 1]
                cy = ck[c, 2]
                cz = ck[c, 3]
                pl += 1
                if x0 <= cx <= x1 and y0 <= cy <= y1 and z0 <= cz <= z1:
                    k, cand = _scan_cell(c, cx, cy, cz, px, py, pz, mx, my, mz, big, inv, ck, crm, sd, sl, sid,
                                         out, k, cand)
        else:
            for cx in range(x0, x1 + 1):
                for cy in range(y0, y1 + 1):
                    for cz in range(z0, z1 + 1):
                        pl += 1
                        c = cell_find(tab, lvl, cx, cy, cz)
                        if c >= 0:
                            k, cand = _scan_cell(c, cx, cy, cz, px, py, pz, mx, my, mz, big, inv, ck, crm, sd, sl,
                                                 sid, out, k, cand)
        probes += pl
        if pl > maxp:
            maxp = pl
    stats[0] = cand
    stats[1] = k
    stats[2] = probes
    stats[3] = maxp
    return k
