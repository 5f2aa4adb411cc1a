"""numba kernels of the loose octree (:class:`viewer.index.rivals.looseoctree.LooseOctree`): one full grid per
level, no pointers, no search.

Level L's cells have edge ``e = edge[L]`` (``edge[0] / 2^L``) on a grid from the origin ``org`` with
``dim[L]`` cells per axis; the outermost cells of each axis reach to infinity (a coordinate outside the grid
is clamped onto it: monotone, so still exact). Each cell's *loose* bounds are its box widened by
``h = loose[L] = (k - 1) e / 2`` on every side (k the looseness). A sphere lives on the deepest level whose
``h`` holds its reach, ``r (1 + 2^-45) + 2^-490`` (the bound of the contract's float predicate, see
:func:`viewer.index.rivals._quadtree_kernels.fits`), in the cell of its centre; one too large for level 0 goes to
the *big list* (list number ``off[nl]``), tested by every query.

A query tests, on each level holding objects, the cells whose bounds widened by ``t`` hold the point: ``t``
the level's loose margin ``h``, or less when the level's largest radius allows (a power of two times
``e / 512``, at least that). The cells of an axis holding p are an interval of at most ``1 + 2t/e <= k``
cells, so with k <= 2 at most 2 per axis, 8 per level. Exactness: the origin is a multiple of the finest edge
``ef`` and every grid bound ``org + i e +- t`` is a multiple of ``ef / 512`` below ``2^43 ef`` in magnitude,
an exact float, so every comparison with a centre or the point is exact.

Arrays (NL levels, C cells, S slots, I ids):

- ``edge``, ``inv`` (1 / edge), ``loose`` (NL,) float64; ``dim`` (NL, 3) int64; ``off`` (NL + 1,) int64: first
  cell of each level, ``off[NL]`` the big list; ``org`` (3,) float64;
- ``head``, ``count`` (C + 1,) int32: each cell's object list (the list kernels of
  :mod:`viewer.index.rivals._quadtree_kernels`);
- ``lc`` (NL + 1,) int64 objects per level (last: the big list), ``lr`` (NL + 1,) float64 the largest radius
  linked into a level since it was last empty;
- ``sd`` (S, 4) float64 x, y, z, r; ``sl`` (S, 3) int32 next, prev, cell; ``sid`` (S,) int64; ``id2s`` (I,) int64;
- ``meta`` (3,) int64: SLOT_TOP, SLOT_FREE, NLIVE.

Every kernel is compiled without reference counting (``njit_noref``): none allocates.
"""

from __future__ import annotations

import numpy as np

from viewer.kernels.jit import njit_noref

from ._quadtree_kernels import fill_lists, fits, free_slot, link, new_object, prefetch_slots, report, scan_list, unlink

__all__ = ["fill_lists"]

SLOT_TOP, SLOT_FREE, NLIVE = 0, 1, 2


@njit_noref
def level_of(r, loose):
    """The deepest level whose loose margin holds a sphere of radius r; len(loose) (the big list) if none.
    O(1): an estimate from the exponents, corrected by at most a step or two."""
    nl = loose.shape[0]
    if not fits(r, 2.0 * loose[0]):
        return nl
    if r <= 0.0:
        lv = nl - 1
    else:
        lv = min(nl - 1, max(0, int(np.floor(np.log2(loose[0] / r)))))
    while lv > 0 and not fits(r, 2.0 * loose[lv]):
        lv -= 1
    while lv + 1 < nl and fits(r, 2.0 * loose[lv + 1]):
        lv += 1
    return lv


@njit_noref(inline="always")
def _axis_cell(c, o, e, inv, n):
    """The cell of coordinate c on a grid axis (origin o, edge e, n cells, the end cells unbounded)."""
    f = np.floor((c - o) * inv)
    i = 0 if f < 0.0 else (n - 1 if f > n - 1 else np.int64(f))
    while i > 0 and c < o + i * e:  # exact comparisons fix the rounding of the estimate
        i -= 1
    while i < n - 1 and c >= o + (i + 1) * e:
        i += 1
    return i


@njit_noref
def cell_of(x, y, z, lv, edge, inv, dim, off, org):
    """The list number of a centre on level lv (the big list for lv == len(edge))."""
    if lv == edge.shape[0]:
        return off[lv]
    e = edge[lv]
    iv = inv[lv]
    i = _axis_cell(x, org[0], e, iv, dim[lv, 0])
    j = _axis_cell(y, org[1], e, iv, dim[lv, 1])
    k = _axis_cell(z, org[2], e, iv, dim[lv, 2])
    return off[lv] + (i * dim[lv, 1] + j) * dim[lv, 2] + k


@njit_noref(inline="always")
def _axis_window(p, o, e, inv, t, n):
    """The cells (lo, hi) of an axis whose bounds widened by t hold p: o + i e - t <= p < o + (i + 1) e + t,
    the end cells unbounded outward."""
    f = np.floor((p - o + t) * inv)
    hi = -1 if f < -1.0 else (n - 1 if f > n - 1 else np.int64(f))
    while hi >= 0 and o + hi * e - t > p:
        hi -= 1
    while hi < n - 1 and o + (hi + 1) * e - t <= p:
        hi += 1
    f = np.floor((p - o - t) * inv)
    lo = 0 if f < 0.0 else (n if f > n else np.int64(f))
    while lo < n and not p < o + (lo + 1) * e + t:
        lo += 1
    while lo > 0 and p < o + lo * e + t:
        lo -= 1
    return min(lo, n - 1), max(hi, 0)


@njit_noref
def _margin(lv, edge, loose, lr):
    """How far beyond its cell a sphere of level lv reaches at most: the level's loose margin, or the
    smallest ``edge / 512 * 2^j`` below it that holds its largest radius (exact grid bounds either way)."""
    h = loose[lv]
    t = edge[lv] * (1.0 / 512.0)
    while t < h and not fits(lr[lv], 2.0 * t):
        t *= 2.0
    return min(t, h)


@njit_noref
def build_cells(cen, rad, edge, inv, loose, dim, off, org, obj_cell, count, lc, lr):
    """Bulk build, pass 1: each object's cell into ``obj_cell``, objects per cell, level counts and radii."""
    for i in range(cen.shape[0]):
        r = rad[i]
        lv = level_of(r, loose)
        obj_cell[i] = cell_of(cen[i, 0], cen[i, 1], cen[i, 2], lv, edge, inv, dim, off, org)
        count[obj_cell[i]] += 1
        lc[lv] += 1
        if r > lr[lv]:
            lr[lv] = r


@njit_noref
def insert_one(i, x, y, z, r, edge, inv, loose, dim, off, org, head, count, lc, lr, sd, sl, sid, id2s, meta):
    """Add object i; False (nothing changed) when the slot arrays must grow first. O(1)."""
    if meta[SLOT_FREE] < 0 and meta[SLOT_TOP] >= sd.shape[0]:
        return False
    # the meta columns as int64, not each tree's literals: new_object and free_slot compile once for both trees
    s = new_object(sl, sd, sid, id2s, meta, np.int64(SLOT_FREE), np.int64(SLOT_TOP), i, x, y, z, r)
    lv = level_of(r, loose)
    link(sl, head, count, s, cell_of(x, y, z, lv, edge, inv, dim, off, org))
    lc[lv] += 1
    if r > lr[lv]:
        lr[lv] = r
    meta[NLIVE] += 1
    return True


@njit_noref(inline="always")
def _leave(lv, lc, lr):
    lc[lv] -= 1
    if lc[lv] == 0:
        lr[lv] = 0.0


@njit_noref
def remove_one(i, loose, head, count, lc, lr, sd, sl, sid, id2s, meta):
    """Remove object i. O(1)."""
    s = id2s[i]
    unlink(sl, head, count, s)
    _leave(level_of(sd[s, 3], loose), lc, lr)
    free_slot(sl, sid, id2s, meta, np.int64(SLOT_FREE), i)  # as in insert_one: compiled once
    meta[NLIVE] -= 1


@njit_noref(inline="always")
def _move(i, x, y, z, r, edge, inv, loose, dim, off, org, head, count, lc, lr, sd, sl, id2s):
    """Move object i (radius kept when r is NaN): its row rewritten, relinked only when its cell changes. O(1)."""
    s = id2s[i]
    old = sd[s, 3]
    if r != r:
        r = old
    lv = level_of(r, loose)
    c = cell_of(x, y, z, lv, edge, inv, dim, off, org)
    sd[s, 0] = x
    sd[s, 1] = y
    sd[s, 2] = z
    sd[s, 3] = r
    if c != sl[s, 2]:
        unlink(sl, head, count, s)
        link(sl, head, count, s, c)
    was = level_of(old, loose) if r != old else lv
    if was != lv:
        _leave(was, lc, lr)
        lc[lv] += 1
    if r > lr[lv]:
        lr[lv] = r


@njit_noref
def move_one(i, x, y, z, r, edge, inv, loose, dim, off, org, head, count, lc, lr, sd, sl, id2s):
    _move(i, x, y, z, r, edge, inv, loose, dim, off, org, head, count, lc, lr, sd, sl, id2s)


@njit_noref
def move_many(ids, cen, rad, edge, inv, loose, dim, off, org, head, count, lc, lr, sd, sl, id2s):
    """Move ``ids[k]`` to ``cen[k]`` (radius ``rad[k]``, NaN: kept), prefetching the slot of the move 16
    ahead, then its row and links 8 ahead, so the misses of the moves ahead overlap."""
    m = ids.shape[0]
    for k in range(m):
        prefetch_slots(ids, id2s, sd, sl, k, m)
        _move(ids[k], cen[k, 0], cen[k, 1], cen[k, 2], rad[k], edge, inv, loose, dim, off, org, head, count, lc,
              lr, sd, sl, id2s)


@njit_noref
def query(px, py, pz, edge, inv, loose, dim, off, org, head, count, lc, lr, sd, sl, sid, out, stats):
    """Ids of the spheres holding p into ``out`` (the first out.size); returns how many. ``stats`` (4,)
    int64: candidates, visible, cells entered (the big list counts as one), most cells on one level."""
    k = np.int64(0)  # not a literal 0: scan_list compiles once
    cand = 0
    cells = 0
    most = 0
    nl = edge.shape[0]
    for lv in range(nl):
        if lc[lv] == 0:
            continue
        e = edge[lv]
        iv = inv[lv]
        t = _margin(lv, edge, loose, lr)
        i0, i1 = _axis_window(px, org[0], e, iv, t, dim[lv, 0])
        j0, j1 = _axis_window(py, org[1], e, iv, t, dim[lv, 1])
        k0, k1 = _axis_window(pz, org[2], e, iv, t, dim[lv, 2])
        here = (i1 - i0 + 1) * (j1 - j0 + 1) * (k1 - k0 + 1)
        cells += here
        if here > most:
            most = here
        n1 = dim[lv, 1]
        n2 = dim[lv, 2]
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                base = off[lv] + (i * n1 + j) * n2
                for c in range(base + k0, base + k1 + 1):
                    if head[c] >= 0:
                        cand += count[c]
                        k = scan_list(px, py, pz, sd, sl, sid, head[c], count[c], out, k)
    if lc[nl] > 0:
        cells += 1
        cand += count[off[nl]]
        k = scan_list(px, py, pz, sd, sl, sid, head[off[nl]], count[off[nl]], out, k)
    return report(stats, cand, k, cells, most)


@njit_noref
def check(edge, inv, loose, dim, off, org, head, count, lc, lr, sd, sl, seen):
    """Invariants, for the tests: the number of violations (0 when sound). Every live slot sits in the cell
    of its centre on its radius's level, every level's count and largest radius bound its objects.
    ``seen`` (NL + 1,) int64 zeros: scratch."""
    bad = 0
    nl = edge.shape[0]
    for c in range(off[nl] + 1):
        s = head[c]
        m = 0
        while s >= 0:
            m += 1
            lv = level_of(sd[s, 3], loose)
            if cell_of(sd[s, 0], sd[s, 1], sd[s, 2], lv, edge, inv, dim, off, org) != c or sl[s, 2] != c:
                bad += 1
            if sd[s, 3] > lr[lv]:
                bad += 1
            seen[lv] += 1
            s = sl[s, 0]
        if m != count[c]:
            bad += 1
    for lv in range(nl + 1):
        if seen[lv] != lc[lv]:
            bad += 1
    return bad
