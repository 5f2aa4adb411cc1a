"""numba kernels of the spatial hash grid (:class:`viewer.index.rivals.grids.hashgrid.HashGrid`), and the hash map from
integer cell coordinates to cell records that ``hgrid`` and ``buckettree`` share.

Hash map (open addressing, linear probing, load <= 1/2, deletion by backward shift, no tombstones):

- ``tab`` (T, 5) int32, T a power of two: key k0, k1, k2, k3 and the cell record (-1: empty slot).
- ``ck`` (C, 5) int32 cell records: key k0..k3 and a payload (the hash grid: first entry of the cell's
  list; hgrid: first object slot; buckettree: root node). Payload -2 marks a free record.
- ``cfree`` (C,) int32: stack of free records; ``cmeta`` (3,) int64: CELL_TOP (records ever used),
  CELL_FREEN (stack depth), CELLS_LIVE.

Hash grid arrays (E entry slots, B big-list slots, I ids):

- ``ed`` (E, 4) float64: x, y, z, r copied into every entry, so walking a cell reads one contiguous run
  (the build lays each cell's list out consecutively).
- ``ei`` (E, 2) int32: object id, next entry (-1 ends the list; free entries chain through it too).
  Only ``ed`` and ``ei`` are read by a query.
- ``el`` (E, 3) int32: previous entry in the cell's list (-1: the head), cell record, next entry of
  the same object (-1 ends): updates reach an object's entries, and unlink each, in O(1) per entry
  instead of walking cell lists (thousands long in dense clusters).
- Levels: level L has cells of edge ``cell_size * 2**L`` (keys (L, cx, cy, cz)), offset by ``phase(L)`` of a
  cell; a sphere is stored on the lowest level where its box spans at most ``max_span`` cells on every axis
  (so at most ``max_span**3`` entries), or up to ``CLIMB`` levels higher where it covers at most
  ``meta[MAXC]`` cells in total (``level_in``), at most ``LEVELS`` levels; a query reads one cell of every
  level in use.
- ``bd`` (B, 4) float64 / ``bi`` (B,) int64: the big list (spheres spanning more than ``max_span`` cells on
  an axis even on the last level), dense, swap-removed.
- ``obj`` (I, 4) float64: x, y, z, r by id; ``ow`` (I,) int64: -2 removed, -1 in cells, j >= 0 big slot;
  ``oe`` (I,) int32: first entry of the object's chain (-1: none).
- ``meta`` (META,) int64: ENT_TOP, ENT_FREE, ENT_FREEN, BIG_N, NLIVE, NLEV (levels in use: one above the
  highest that ever held a sphere), MAXC (the cap on a sphere's cells in total, see ``level_in``), then
  from LEV0 the spheres on each level.

Every kernel is compiled without reference counting (``njit_noref``): none allocates, the classes pass
every buffer.
"""

from __future__ import annotations

import numpy as np

from viewer.kernels.jit import njit_noref

from ..._contract_kernels import emit, holds

CELL_TOP, CELL_FREEN, CELLS_LIVE = 0, 1, 2
ENT_TOP, ENT_FREE, ENT_FREEN, BIG_N, NLIVE, NLEV, MAXC = 0, 1, 2, 3, 4, 5, 6
LEV0 = 8
#: how many levels above its ``max_span`` level a sphere may climb to stay within ``max_cells`` cells
CLIMB = 2
#: the most levels (cell edges cell_size * 2**L, L < LEVELS); larger spheres go to the big list
LEVELS = 24
META = LEV0 + LEVELS

_LIM = 1073741824.0  # cell coordinates are clamped to +-2^30 so they fit int32 (monotone, so still exact)
_P1 = -7046029254386353131
_P2 = -4417276706812531889
_P3 = 1609587929392839161
_P4 = 2870177450012600261
_P5 = -49064778989728563


# --------------------------------------------------------------------------- shared pieces


@njit_noref
def margin(c, r):
    """How far the float predicate may accept a point beyond |p - c| <= r on one axis (rounding of
    p - c and of the squares, and squares that underflow to 0), plus the rounding of c +- r itself."""
    return (abs(c) + r) * 4e-15 + 1e-150


@njit_noref
def cell_of(v, inv):
    """Cell coordinate floor(v * inv), clamped to +-2^30. Monotone in v, which is all exactness needs."""
    f = np.floor(v * inv)
    if f < -_LIM:
        f = -_LIM
    elif f > _LIM:
        f = _LIM
    return np.int64(f)


@njit_noref
def phase(lev):
    """Level ``lev``'s grid offset, in its cells: frac(lev * golden ratio), 0 on level 0. Shifting each
    level's cells by a different fraction keeps a small sphere that straddles a cell corner on one level
    (a cluster at the origin: on every level when the grids are aligned) from straddling it on the next."""
    return (lev * 0.6180339887498949) % 1.0


@njit_noref
def cell_at(v, li, ph):
    """Cell coordinate floor(v * li + ph) on a level with cells of 1 / li and offset ``ph`` (:func:`phase`),
    clamped like :func:`cell_of`; monotone in v, so exact, and ``cell_of`` itself when ``ph`` is 0."""
    f = np.floor(v * li + ph)
    if f < -_LIM:
        f = -_LIM
    elif f > _LIM:
        f = _LIM
    return np.int64(f)


@njit_noref
def hash4(k0, k1, k2, k3):
    h = np.int64(k0) * _P1 + np.int64(k1) * _P2 + np.int64(k2) * _P3 + np.int64(k3) * _P4
    h ^= h >> 31
    h *= _P5
    h ^= h >> 29
    return h


@njit_noref
def cell_find(tab, k0, k1, k2, k3):
    """The record of cell (k0, k1, k2, k3), or -1."""
    mask = tab.shape[0] - 1
    i = hash4(k0, k1, k2, k3) & mask
    while True:
        v = tab[i, 4]
        if v < 0:
            return -1
        if tab[i, 1] == k1 and tab[i, 2] == k2 and tab[i, 3] == k3 and tab[i, 0] == k0:
            return v
        i = (i + 1) & mask


@njit_noref
def _tab_put(tab, k0, k1, k2, k3, c):
    mask = tab.shape[0] - 1
    i = hash4(k0, k1, k2, k3) & mask
    while tab[i, 4] >= 0:
        i = (i + 1) & mask
    tab[i, 0] = k0
    tab[i, 1] = k1
    tab[i, 2] = k2
    tab[i, 3] = k3
    tab[i, 4] = c


@njit_noref
def cell_add(tab, ck, cfree, cmeta, k0, k1, k2, k3, payload):
    """A new record for a cell not in the map (the caller checked ``cell_room``)."""
    if cmeta[CELL_FREEN] > 0:
        cmeta[CELL_FREEN] -= 1
        c = cfree[cmeta[CELL_FREEN]]
    else:
        c = cmeta[CELL_TOP]
        cmeta[CELL_TOP] += 1
    ck[c, 0] = k0
    ck[c, 1] = k1
    ck[c, 2] = k2
    ck[c, 3] = k3
    ck[c, 4] = payload
    _tab_put(tab, k0, k1, k2, k3, c)
    cmeta[CELLS_LIVE] += 1
    return c


@njit_noref
def cell_drop(tab, ck, cfree, cmeta, c):
    """Remove record ``c`` from the map (backward-shift deletion) and free it."""
    mask = tab.shape[0] - 1
    # the keys as int64, as every other caller passes them: hash4 compiles once
    i = hash4(np.int64(ck[c, 0]), np.int64(ck[c, 1]), np.int64(ck[c, 2]), np.int64(ck[c, 3])) & mask
    while tab[i, 4] != c:
        i = (i + 1) & mask
    j = i
    while True:
        j = (j + 1) & mask
        if tab[j, 4] < 0:
            break
        home = hash4(np.int64(tab[j, 0]), np.int64(tab[j, 1]), np.int64(tab[j, 2]), np.int64(tab[j, 3])) & mask
        # move j back into the hole at i unless its home lies cyclically in (i, j]
        if (j > i and (home <= i or home > j)) or (j < i and (home <= i and home > j)):
            for a in range(5):
                tab[i, a] = tab[j, a]
            i = j
    tab[i, 4] = -1
    ck[c, 4] = -2
    cfree[cmeta[CELL_FREEN]] = c
    cmeta[CELL_FREEN] += 1
    cmeta[CELLS_LIVE] -= 1


@njit_noref
def cell_room(tab, ck, cmeta, k):
    """Can ``k`` more cells be added without growing the map or the records?"""
    if 2 * (cmeta[CELLS_LIVE] + k) > tab.shape[0]:
        return False
    return cmeta[CELL_FREEN] + ck.shape[0] - cmeta[CELL_TOP] >= k


@njit_noref
def rehash(tab, ck, cmeta):
    """Fill an empty (all -1) ``tab`` with every live record."""
    for c in range(cmeta[CELL_TOP]):
        if ck[c, 4] != -2:
            # the keys as int64, as cell_add passes them: _tab_put (and hash4) compile once
            _tab_put(tab, np.int64(ck[c, 0]), np.int64(ck[c, 1]), np.int64(ck[c, 2]), np.int64(ck[c, 3]), c)


# --------------------------------------------------------------------------- hash grid


@njit_noref
def _span(x, r, inv, ph):
    m = r + margin(x, r)
    return cell_at(x - m, inv, ph), cell_at(x + m, inv, ph)


@njit_noref
def _is_big(x, y, z, r, inv, max_span, ph):
    x0, x1 = _span(x, r, inv, ph)
    y0, y1 = _span(y, r, inv, ph)
    z0, z1 = _span(z, r, inv, ph)
    return x1 - x0 >= max_span or y1 - y0 >= max_span or z1 - z0 >= max_span


@njit_noref
def level_of(x, y, z, r, inv, max_span):
    """The level a sphere is stored on: the lowest L whose cells (edge 1 / (inv * 2**-L)) its box spans at
    most ``max_span`` of on every axis; -1 past ``LEVELS`` (the big list). ``inv * 2**-L`` is exact (a power
    of two times inv), so every kernel finds the same level and cells for the same sphere."""
    lim = inv
    for lev in range(LEVELS):
        if not _is_big(x, y, z, r, lim, max_span, phase(lev)):
            return lev
        lim *= 0.5
    return -1


@njit_noref
def _cells_on(x, y, z, r, li, ph):
    x0, x1 = _span(x, r, li, ph)
    y0, y1 = _span(y, r, li, ph)
    z0, z1 = _span(z, r, li, ph)
    return (x1 - x0 + 1) * (y1 - y0 + 1) * (z1 - z0 + 1)


@njit_noref
def level_in(x, y, z, r, inv, max_span, max_cells):
    """The level a sphere is filed on: its ``level_of`` level L0 (-1: the big list), unless its box covers
    more than ``max_cells`` cells there; then the first of the next ``CLIMB`` levels where it covers at most
    ``max_cells`` (coarser cells, fewer entries), else L0 (a sphere straddling a corner of every coarser
    level too stays at L0's at most ``max_span**3``). ``max_cells >= max_span**3`` is ``level_of``."""
    lev = level_of(x, y, z, r, inv, max_span)
    if lev < 0 or max_cells >= max_span * max_span * max_span:
        return lev
    li = inv * 0.5**lev
    if _cells_on(x, y, z, r, li, phase(lev)) <= max_cells:
        return lev
    for up in range(1, CLIMB + 1):
        if lev + up >= LEVELS:
            break
        li *= 0.5
        if _cells_on(x, y, z, r, li, phase(lev + up)) <= max_cells:
            return lev + up
    return lev


@njit_noref
def _ent_alloc(ei, meta):
    if meta[ENT_FREEN] > 0:
        e = meta[ENT_FREE]
        meta[ENT_FREE] = ei[e, 1]
        meta[ENT_FREEN] -= 1
        return e
    e = meta[ENT_TOP]
    meta[ENT_TOP] += 1
    return e


@njit_noref
def room(tab, ck, cmeta, ed, bd, meta, need):
    """Room for one more object: ``need`` entries and cells, and one big-list slot."""
    if meta[ENT_FREEN] + ed.shape[0] - meta[ENT_TOP] < need:
        return False
    if meta[BIG_N] >= bd.shape[0]:
        return False
    return cell_room(tab, ck, cmeta, need)


@njit_noref
def _link(i, x, y, z, r, lev, cx, cy, cz, tab, ck, cfree, cmeta, ed, ei, el, oe, meta):
    """A new entry for object i at the head of cell (lev, cx, cy, cz)'s list and of i's own chain."""
    c = cell_find(tab, lev, cx, cy, cz)
    if c < 0:
        c = cell_add(tab, ck, cfree, cmeta, lev, cx, cy, cz, np.int64(-1))
    e = _ent_alloc(ei, meta)
    ed[e, 0] = x
    ed[e, 1] = y
    ed[e, 2] = z
    ed[e, 3] = r
    h = ck[c, 4]
    ei[e, 0] = i
    ei[e, 1] = h
    if h >= 0:
        el[h, 0] = e
    el[e, 0] = -1
    el[e, 1] = c
    el[e, 2] = oe[i]
    oe[i] = e
    ck[c, 4] = e


@njit_noref
def _unlink(e, tab, ck, cfree, cmeta, ei, el, meta):
    """Take entry e out of its cell's list (O(1): the list is doubly linked) and free it; drop the
    cell when it empties. The caller unchains e from its object."""
    c = el[e, 1]
    p = el[e, 0]
    n = ei[e, 1]
    if p >= 0:
        ei[p, 1] = n
    else:
        ck[c, 4] = n
    if n >= 0:
        el[n, 0] = p
    ei[e, 0] = -1
    ei[e, 1] = meta[ENT_FREE]
    el[e, 1] = -1
    meta[ENT_FREE] = e
    meta[ENT_FREEN] += 1
    if n < 0 and p < 0:
        cell_drop(tab, ck, cfree, cmeta, c)


@njit_noref
def _add(i, x, y, z, r, inv, max_span, tab, ck, cfree, cmeta, ed, ei, el, bd, bi, obj, ow, oe, meta):
    obj[i, 0] = x
    obj[i, 1] = y
    obj[i, 2] = z
    obj[i, 3] = r
    meta[NLIVE] += 1
    oe[i] = -1
    lev = level_in(x, y, z, r, inv, max_span, meta[MAXC])
    if lev < 0:
        j = meta[BIG_N]
        bd[j, 0] = x
        bd[j, 1] = y
        bd[j, 2] = z
        bd[j, 3] = r
        bi[j] = i
        ow[i] = j
        meta[BIG_N] = j + 1
        return
    ow[i] = -1
    meta[LEV0 + lev] += 1
    meta[NLEV] = max(meta[NLEV], lev + 1)
    inv = inv * 0.5**lev
    ph = phase(lev)
    x0, x1 = _span(x, r, inv, ph)
    y0, y1 = _span(y, r, inv, ph)
    z0, z1 = _span(z, r, inv, ph)
    for cx in range(x0, x1 + 1):
        for cy in range(y0, y1 + 1):
            for cz in range(z0, z1 + 1):
                _link(i, x, y, z, r, lev, cx, cy, cz, tab, ck, cfree, cmeta, ed, ei, el, oe, meta)


@njit_noref
def _remove(i, tab, ck, cfree, cmeta, ei, el, bd, bi, ow, oe, meta):
    w = ow[i]
    meta[NLIVE] -= 1
    ow[i] = -2
    if w >= 0:
        last = meta[BIG_N] - 1
        if w != last:
            for a in range(4):
                bd[w, a] = bd[last, a]
            bi[w] = bi[last]
            ow[bi[w]] = w
        meta[BIG_N] = last
        return
    e = oe[i]
    if e >= 0:
        meta[LEV0 + ck[el[e, 1], 0]] -= 1  # every entry's cell is on the object's level
    while e >= 0:
        nxt = el[e, 2]
        _unlink(e, tab, ck, cfree, cmeta, ei, el, meta)
        e = nxt
    oe[i] = -1


@njit_noref(inline="always")
def _move(i, x, y, z, r, inv, max_span, tab, ck, cfree, cmeta, ed, ei, el, bd, bi, obj, ow, oe, meta):
    w = ow[i]
    lev = level_in(x, y, z, r, inv, max_span, meta[MAXC])
    big = lev < 0
    if w >= 0 and big:  # stays in the big list: in place
        bd[w, 0] = x
        bd[w, 1] = y
        bd[w, 2] = z
        bd[w, 3] = r
        obj[i, 0] = x
        obj[i, 1] = y
        obj[i, 2] = z
        obj[i, 3] = r
        return
    if w >= 0 or big or oe[i] < 0 or ck[el[oe[i], 1], 0] != lev:  # to or from the big list, or another level
        _remove(i, tab, ck, cfree, cmeta, ei, el, bd, bi, ow, oe, meta)
        _add(i, x, y, z, r, inv, max_span, tab, ck, cfree, cmeta, ed, ei, el, bd, bi, obj, ow, oe, meta)
        return
    # cells -> cells on one level: walk i's own entries (each knows its cell), rewrite those whose cell is
    # still in the new box, unlink the rest; then link the cells of the new box that the old one lacked
    inv = inv * 0.5**lev
    ph = phase(lev)
    x0, x1 = _span(x, r, inv, ph)
    y0, y1 = _span(y, r, inv, ph)
    z0, z1 = _span(z, r, inv, ph)
    ox, oy, oz, orad = obj[i, 0], obj[i, 1], obj[i, 2], obj[i, 3]
    a0, a1 = _span(ox, orad, inv, ph)
    b0, b1 = _span(oy, orad, inv, ph)
    c0, c1 = _span(oz, orad, inv, ph)
    same = a0 == x0 and a1 == x1 and b0 == y0 and b1 == y1 and c0 == z0 and c1 == z1
    prev = -1
    e = oe[i]
    while e >= 0:
        nxt = el[e, 2]
        c = el[e, 1]
        if same or (x0 <= ck[c, 1] <= x1 and y0 <= ck[c, 2] <= y1 and z0 <= ck[c, 3] <= z1):
            ed[e, 0] = x
            ed[e, 1] = y
            ed[e, 2] = z
            ed[e, 3] = r
            prev = e
        else:
            if prev < 0:
                oe[i] = nxt
            else:
                el[prev, 2] = nxt
            _unlink(e, tab, ck, cfree, cmeta, ei, el, meta)
        e = nxt
    if not same:
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                for cz in range(z0, z1 + 1):
                    if not (a0 <= cx <= a1 and b0 <= cy <= b1 and c0 <= cz <= c1):
                        _link(i, x, y, z, r, lev, cx, cy, cz, tab, ck, cfree, cmeta, ed, ei, el, oe, meta)
    obj[i, 0] = x
    obj[i, 1] = y
    obj[i, 2] = z
    obj[i, 3] = r


@njit_noref
def insert_one(i, x, y, z, r, inv, max_span, tab, ck, cfree, cmeta, ed, ei, el, bd, bi, obj, ow, oe, meta):
    """Add object i; False (nothing changed) when the arrays must grow first."""
    if not room(tab, ck, cmeta, ed, bd, meta, max_span**3):
        return False
    _add(i, x, y, z, r, inv, max_span, tab, ck, cfree, cmeta, ed, ei, el, bd, bi, obj, ow, oe, meta)
    return True


@njit_noref
def remove_one(i, tab, ck, cfree, cmeta, ei, el, bd, bi, ow, oe, meta):
    _remove(i, tab, ck, cfree, cmeta, ei, el, bd, bi, ow, oe, meta)


@njit_noref
def move_one(i, x, y, z, r, inv, max_span, tab, ck, cfree, cmeta, ed, ei, el, bd, bi, obj, ow, oe, meta):
    """Move object i (radius kept when ``r`` is NaN); False (nothing changed) when the arrays must grow
    first."""
    if not room(tab, ck, cmeta, ed, bd, meta, max_span**3):
        return False
    if r != r:
        r = obj[i, 3]
    _move(i, x, y, z, r, inv, max_span, tab, ck, cfree, cmeta, ed, ei, el, bd, bi, obj, ow, oe, meta)
    return True


@njit_noref
def move_many(start, ids, cen, rad, inv, max_span, tab, ck, cfree, cmeta, ed, ei, el, bd, bi, obj, ow, oe, meta):
    """Move objects ``ids[k]`` (radius kept where ``rad[k]`` is NaN) from ``start``; returns where it
    stopped (len(ids) when done, less when the arrays need to grow)."""
    need = max_span**3
    for k in range(start, ids.shape[0]):
        if not room(tab, ck, cmeta, ed, bd, meta, need):
            return k
        i = ids[k]
        r = rad[k]
        if r != r:
            r = obj[i, 3]
        _move(i, cen[k, 0], cen[k, 1], cen[k, 2], r, inv, max_span,
              tab, ck, cfree, cmeta, ed, ei, el, bd, bi, obj, ow, oe, meta)
    return ids.shape[0]


@njit_noref
def mean_entries(cen, rad, inv, max_span, step, max_cells):
    """The entries an object would have (the cells of its box on its level) under ``max_span`` and
    ``max_cells``, on average over every ``step``-th sphere (NaN for none)."""
    total = 0.0
    k = 0
    for i in range(0, cen.shape[0], step):
        x, y, z, r = cen[i, 0], cen[i, 1], cen[i, 2], rad[i]
        lev = level_in(x, y, z, r, inv, max_span, max_cells)
        k += 1
        if lev < 0:
            continue  # the big list: no entry
        li = inv * 0.5**lev
        ph = phase(lev)
        x0, x1 = _span(x, r, li, ph)
        y0, y1 = _span(y, r, li, ph)
        z0, z1 = _span(z, r, li, ph)
        total += float((x1 - x0 + 1) * (y1 - y0 + 1) * (z1 - z0 + 1))
    return total / k if k else np.nan


@njit_noref
def levels(cen, rad, inv, max_span, out, meta):
    """``out[i]`` (N,) int8: the level sphere i is stored on (-1: the big list; ``meta[MAXC]`` set
    beforehand); the per-level counts and NLEV into ``meta``."""
    for i in range(cen.shape[0]):
        lev = level_in(cen[i, 0], cen[i, 1], cen[i, 2], rad[i], inv, max_span, meta[MAXC])
        out[i] = lev
        if lev >= 0:
            meta[LEV0 + lev] += 1
            meta[NLEV] = max(meta[NLEV], lev + 1)


@njit_noref
def build_count(start, cen, rad, lev, inv, tab, ck, cfree, cmeta, cnt, need):
    """Bulk build, pass 1: a record for every cell of its level a sphere's box touches (those of level
    ``lev[i]`` >= 0), and in ``cnt`` how many. Returns where it stopped (the cell arrays need to grow) or N."""
    n = cen.shape[0]
    for i in range(start, n):
        if lev[i] < 0:
            continue
        if not cell_room(tab, ck, cmeta, need):
            return i
        x, y, z, r = cen[i, 0], cen[i, 1], cen[i, 2], rad[i]
        li = inv * 0.5 ** lev[i]
        lv = np.int64(lev[i])  # the level as int64, as every other caller passes it: the cell helpers compile once
        ph = phase(lv)
        x0, x1 = _span(x, r, li, ph)
        y0, y1 = _span(y, r, li, ph)
        z0, z1 = _span(z, r, li, ph)
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                for cz in range(z0, z1 + 1):
                    c = cell_find(tab, lv, cx, cy, cz)
                    if c < 0:
                        c = cell_add(tab, ck, cfree, cmeta, lv, cx, cy, cz, np.int64(-1))
                    cnt[c] += 1
    return n


@njit_noref
def build_fill(cen, rad, lev, inv, tab, ck, off, ed, ei, el, oe):
    """Bulk build, pass 2: entries of each cell laid out consecutively from ``off[c]`` (the exclusive
    prefix sum of the counts), lists linked in that order; each object's entries chained from
    ``oe[i]`` (set to -1 beforehand)."""
    ncell = off.shape[0] - 1
    for c in range(ncell):
        ck[c, 4] = off[c]
    for i in range(cen.shape[0]):
        if lev[i] < 0:
            continue
        x, y, z, r = cen[i, 0], cen[i, 1], cen[i, 2], rad[i]
        li = inv * 0.5 ** lev[i]
        lv = np.int64(lev[i])  # as in build_count
        ph = phase(lv)
        x0, x1 = _span(x, r, li, ph)
        y0, y1 = _span(y, r, li, ph)
        z0, z1 = _span(z, r, li, ph)
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                for cz in range(z0, z1 + 1):
                    c = cell_find(tab, lv, cx, cy, cz)
                    e = off[c]
                    off[c] = e + 1
                    ed[e, 0] = x
                    ed[e, 1] = y
                    ed[e, 2] = z
                    ed[e, 3] = r
                    ei[e, 0] = i
                    ei[e, 1] = e + 1
                    el[e, 0] = e - 1 if e > ck[c, 4] else -1
                    el[e, 1] = c
                    el[e, 2] = oe[i]
                    oe[i] = e
    for c in range(ncell):
        ei[off[c] - 1, 1] = -1  # off[c] is now the end of cell c's run


@njit_noref
def query(px, py, pz, inv, tab, ck, ed, ei, bd, bi, meta, out, stats):
    """Ids of the spheres holding p into ``out`` (the first len(out)); returns how many there are: one
    cell of every level that holds spheres, then the big list. ``stats`` (4,) int64 gets candidates,
    visible, cells entered, 0."""
    size = out.shape[0]
    k = 0
    cand = 0
    nodes = 0
    li = inv
    for lev in range(meta[NLEV]):
        if meta[LEV0 + lev] == 0:
            li *= 0.5
            continue
        ph = phase(lev)
        c = cell_find(tab, lev, cell_at(px, li, ph), cell_at(py, li, ph), cell_at(pz, li, ph))
        li *= 0.5
        if c < 0:
            continue
        nodes += 1
        e = ck[c, 4]
        while e >= 0:
            # the build lays a cell's list out consecutively: walk such a run by e + 1 and only check
            # the link, so the next address does not wait on a load (a predicted branch does; faster
            # in dense cells, whose runs are long)
            while True:
                cand += 1
                if holds(px, py, pz, ed[e, 0], ed[e, 1], ed[e, 2], ed[e, 3]):
                    k = emit(out, size, k, ei[e, 0])
                nxt = ei[e, 1]
                if nxt != e + 1:
                    break
                e += 1
            e = nxt
    nb = meta[BIG_N]
    if nb > 0:
        nodes += 1
        cand += nb
        for j in range(nb):
            if holds(px, py, pz, bd[j, 0], bd[j, 1], bd[j, 2], bd[j, 3]):
                k = emit(out, size, k, bi[j])
    stats[0] = cand
    stats[1] = k
    stats[2] = nodes
    stats[3] = 0
    return k
