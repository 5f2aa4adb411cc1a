"""numba kernels of the seed's radius-banded quadtree (:class:`viewer.index.rivals.quadtree.Quadtree`).

The tree lives on two of the three axes (``a0``, ``a1``, chosen by the class); ``u`` and ``v`` below are an
object's coordinates on them. A node of edge ``s`` and corner ``(u0, v0)`` holds the spheres whose centre is
in its half-open box ``[u0, u0 + s) x [v0, v0 + s)`` and that :func:`fits` it but not its children (radius
up to about ``s / 2``); its children have edge ``s / 2``. A child of corner ``a`` and edge ``s`` is entered
only if the point lies in its test box ``[a - s/2, a + 3s/2)`` on both axes: children's corners lie on a
grid of step ``s``, so exactly two test boxes per axis hold any point and at most 4 nodes are entered per
level, points on boundaries included.

Exactness: :func:`fits` admits a radius only when ``r (1 + 2^-45) + 2^-490 <= s / 2``, and whenever the
contract's float predicate holds, ``|p - c| <= r (1 + 2^-50) + 2^-498`` on each axis (the subtraction
errs by a relative 2^-53, the squares by as much, and squares below 2^-1000 are covered by the absolute
term): so a sphere that holds p has p inside its node's test box, compared exactly. Every corner is a
multiple of ``emin`` (the finest edge) with magnitude at most ``2^50 emin``, so every corner, child
corner and test-box bound is an exact float; a root growth that would break that returns
:data:`REBUILD` and the class rebuilds on a fitted root.

Arrays (C node rows, S object slots, I ids):

- ``nf`` (C, 3) float64: u0, v0, edge;
- ``ni`` (C, 5) int32: children (quadrant ``(u >= mid) + 2 (v >= mid)``, -1 none), parent (-1 for the
  root; the next free row of a freed node);
- ``bx`` (C, 30) float64: the subtree box (lo x, y, z, hi x, y, z), then the box of each quadrant list;
- ``head`` (4C,) int32 first object slot (-1 none), ``count`` (4C,) int32 objects: a node n's objects are in
  four lists ``4 n + q``, by the quadrant q of their centre in the node, each with its own box (the lists:
  :func:`link`, :func:`unlink`, :func:`scan_list`, :func:`fill_lists`; the loose octree's cells use them too);
- ``sd`` (S, 4) float64 x, y, z, r; ``sl`` (S, 3) int32 next, prev, node (free slots chain by next);
  ``sid`` (S,) int64 slot -> id; ``id2s`` (I,) int64 id -> slot, -1 once removed;
- ``meta`` (8,) int64: ROOT, NODE_TOP, NODE_FREE, SLOT_TOP, SLOT_FREE, NLIVE, A0, A1;
  ``fm`` (1,) float64: EMIN.

Every kernel is compiled without reference counting (``njit_noref``): none allocates.
"""

from __future__ import annotations

import numpy as np

from viewer.kernels.jit import njit_noref
from viewer.kernels.prefetch import prefetch

from .._contract_kernels import box_pad, emit, holds

PARENT = 4
ROOT, NODE_TOP, NODE_FREE, SLOT_TOP, SLOT_FREE, NLIVE, A0, A1 = range(8)
EMIN = 0

OK, NEED_ROOM, REBUILD = 1, 0, -1
#: node rows an operation may create at most (a descent and root growths), checked before it starts
NODE_ROOM = 256
#: corners stay within this many finest edges of the origin (exact with 3 bits to spare)
CORNER_LIMIT = 2.0**50
#: a leaf keeps smaller spheres while it holds fewer than this many objects (so a node holds at most this
#: many spheres below its band: they stay when it gains children, and only leave it)
BUCKET = 16
#: levels a query can meet (the root is at most CORNER_LIMIT finest edges wide)
DEPTHS = 64


@njit_noref(inline="always")
def fits(r, s):
    """May a node of edge ``s`` hold a sphere of radius ``r``? (Conservative: see the module docstring.)"""
    return r + r * 2.0**-45 + 2.0**-490 <= 0.5 * s


@njit_noref(inline="always")
def _inside(nf, n, u, v):
    u0 = nf[n, 0]
    v0 = nf[n, 1]
    s = nf[n, 2]
    return u0 <= u < u0 + s and v0 <= v < v0 + s


@njit_noref
def new_node(nf, ni, bx, head, count, meta, parent, u0, v0, s):
    n = meta[NODE_FREE]
    if n >= 0:
        meta[NODE_FREE] = ni[n, PARENT]
    else:
        n = meta[NODE_TOP]
        meta[NODE_TOP] = n + 1
    nf[n, 0] = u0
    nf[n, 1] = v0
    nf[n, 2] = s
    for q in range(4):
        ni[n, q] = -1
    ni[n, PARENT] = parent
    for q in range(4):
        head[4 * n + q] = -1
        count[4 * n + q] = 0
    for b in range(0, 30, 6):
        for j in range(3):
            bx[n, b + j] = np.inf
            bx[n, b + 3 + j] = -np.inf
    return n


@njit_noref(inline="always")
def total(count, n):
    """Objects in node n (its four quadrant lists)."""
    return count[4 * n] + count[4 * n + 1] + count[4 * n + 2] + count[4 * n + 3]


@njit_noref(inline="always")
def quadrant(nf, n, u, v):
    """The quadrant of (u, v) in node n: (u >= mid) + 2 (v >= mid), compared exactly."""
    h = 0.5 * nf[n, 2]
    return (1 if u >= nf[n, 0] + h else 0) + (2 if v >= nf[n, 1] + h else 0)


@njit_noref
def room(nf, sd, meta):
    """Room for one more object and NODE_ROOM more nodes?"""
    if meta[SLOT_FREE] < 0 and meta[SLOT_TOP] >= sd.shape[0]:
        return False
    return meta[NODE_TOP] + NODE_ROOM <= nf.shape[0]


@njit_noref
def descend(nf, ni, bx, head, count, meta, fm, n, u, v, r):
    """The node at or below ``n`` (whose box holds (u, v) and which fits r) where the sphere belongs:
    down while a child of half the edge still fits it, creating children lazily; a leaf (no children) holding
    fewer than BUCKET objects keeps a smaller sphere instead (a bucket leaf)."""
    emin = fm[EMIN]
    while True:
        h = 0.5 * nf[n, 2]
        if h < emin or not fits(r, h):
            return n
        q = 0
        if u >= nf[n, 0] + h:
            q += 1
        if v >= nf[n, 1] + h:
            q += 2
        c = ni[n, q]
        if c < 0:
            if total(count, n) < BUCKET and ni[n, 0] < 0 and ni[n, 1] < 0 and ni[n, 2] < 0 and ni[n, 3] < 0:
                return n
            c = new_node(nf, ni, bx, head, count, meta, n, nf[n, 0] + h * (q & 1), nf[n, 1] + h * (q >> 1), h)
            ni[n, q] = c
        n = c


@njit_noref
def grow_root(nf, ni, bx, head, count, meta, fm, u, v, r):
    """Wrap the root in parents until its box holds (u, v) and it fits r; False (nothing changed) when a
    corner would leave the exact range (the class rebuilds on a fitted root)."""
    root = meta[ROOT]
    u0 = nf[root, 0]
    v0 = nf[root, 1]
    s = nf[root, 2]
    steps = 0
    while not (u0 <= u < u0 + s and v0 <= v < v0 + s and fits(r, s)):
        if u < u0:
            u0 -= s
        if v < v0:
            v0 -= s
        s *= 2.0
        steps += 1
        if max(abs(u0), abs(v0)) + s > CORNER_LIMIT * fm[EMIN] or steps > NODE_ROOM // 2:
            return False
    u0 = nf[root, 0]
    v0 = nf[root, 1]
    s = nf[root, 2]
    for _ in range(steps):
        pu = u0 - s if u < u0 else u0
        pv = v0 - s if v < v0 else v0
        # no parent: int64, as every other caller passes a parent, so new_node compiles once
        p = new_node(nf, ni, bx, head, count, meta, np.int64(-1), pu, pv, 2.0 * s)
        q = (1 if u0 > pu else 0) + (2 if v0 > pv else 0)
        ni[p, q] = root
        ni[root, PARENT] = p
        for j in range(6):
            bx[p, j] = bx[root, j]
        root = p
        u0 = pu
        v0 = pv
        s *= 2.0
    meta[ROOT] = root
    return True


@njit_noref
def link(sl, head, count, s, n):
    """Put slot s at the head of list n (a node's or a cell's objects)."""
    h = head[n]
    sl[s, 0] = h
    sl[s, 1] = -1
    sl[s, 2] = n
    if h >= 0:
        sl[h, 1] = s
    head[n] = s
    count[n] += 1


@njit_noref
def unlink(sl, head, count, s):
    """Take slot s out of its list; returns the list's number."""
    n = sl[s, 2]
    p = sl[s, 1]
    x = sl[s, 0]
    if p >= 0:
        sl[p, 0] = x
    else:
        head[n] = x
    if x >= 0:
        sl[x, 1] = p
    count[n] -= 1
    return n


@njit_noref
def new_object(sl, sd, sid, id2s, meta, free, top, i, x, y, z, r):
    """Store object i's row in a slot from the free chain (``meta[free]``) or the top (``meta[top]``) and
    return the slot (not linked yet); the caller checked room."""
    s = meta[free]
    if s >= 0:
        meta[free] = sl[s, 0]
    else:
        s = meta[top]
        meta[top] = s + 1
    sd[s, 0] = x
    sd[s, 1] = y
    sd[s, 2] = z
    sd[s, 3] = r
    sid[s] = i
    id2s[i] = s
    return s


@njit_noref
def free_slot(sl, sid, id2s, meta, free, i):
    """Unlinked object i's slot onto the free chain ``meta[free]``."""
    s = id2s[i]
    id2s[i] = -1
    sid[s] = -1
    sl[s, 0] = meta[free]
    sl[s, 2] = -1
    meta[free] = s


@njit_noref
def cleanup(nf, ni, bx, head, count, meta, n):
    """Free ``n`` and its ancestors while they hold nothing and have no children (never the root)."""
    while n != meta[ROOT] and total(count, n) == 0 and ni[n, 0] < 0 and ni[n, 1] < 0 and ni[n, 2] < 0 and ni[n, 3] < 0:
        p = ni[n, PARENT]
        for q in range(4):
            if ni[p, q] == n:
                ni[p, q] = -1
        ni[n, PARENT] = meta[NODE_FREE]
        nf[n, 2] = 0.0
        meta[NODE_FREE] = n
        n = p


@njit_noref
def grow_boxes(bx, ni, n, q, x, y, z, r):
    """Widen the box of node n's quadrant list q to hold the box of the sphere (x, y, z, r) (padded so that
    the float predicate never accepts a point outside it), and the subtree boxes from n up as far as they
    must to hold that list's box. Boxes only grow (a removal or a move away leaves them loose: still
    correct)."""
    o = 6 + 6 * q
    for j in range(3):
        c = x if j == 0 else (y if j == 1 else z)
        p = box_pad(c, r)
        bx[n, o + j] = min(bx[n, o + j], (c - r) - p)
        bx[n, o + 3 + j] = max(bx[n, o + 3 + j], (c + r) + p)
    m = n
    while m >= 0:
        grew = False
        for j in range(3):
            if bx[n, o + j] < bx[m, j]:
                bx[m, j] = bx[n, o + j]
                grew = True
            if bx[n, o + 3 + j] > bx[m, 3 + j]:
                bx[m, 3 + j] = bx[n, o + 3 + j]
                grew = True
        if not grew:
            return  # an ancestor's subtree box holds its children's
        m = ni[m, PARENT]


@njit_noref
def build_boxes(ni, bx, head, meta, sd, sl):
    """Every quadrant list's box and every subtree box from the objects in the lists (boxes reset by
    :func:`new_node`)."""
    for lst in range(4 * meta[NODE_TOP]):
        s = head[lst]
        while s >= 0:
            grow_boxes(bx, ni, lst >> 2, lst & 3, sd[s, 0], sd[s, 1], sd[s, 2], sd[s, 3])
            s = sl[s, 0]


@njit_noref
def place(nf, ni, bx, head, count, meta, fm, n, u, v, r):
    """Where a sphere now at (u, v) of radius r belongs, searching from node ``n`` (up while n's box does
    not hold it or n cannot fit it, then down): the paper's in-place mutation. -1: the root cannot grow."""
    root = meta[ROOT]
    while n != root and not (_inside(nf, n, u, v) and fits(r, nf[n, 2])):
        n = ni[n, PARENT]
    if n == root and not (_inside(nf, n, u, v) and fits(r, nf[n, 2])):
        if not grow_root(nf, ni, bx, head, count, meta, fm, u, v, r):
            return -1
        n = meta[ROOT]
    return descend(nf, ni, bx, head, count, meta, fm, n, u, v, r)


@njit_noref
def insert_one(i, x, y, z, r, nf, ni, bx, head, count, meta, fm, sd, sl, sid, id2s):
    """Add object i: OK, NEED_ROOM (grow the arrays) or REBUILD; nothing changed unless OK."""
    if not room(nf, sd, meta):
        return NEED_ROOM
    u = x if meta[A0] == 0 else (y if meta[A0] == 1 else z)
    v = x if meta[A1] == 0 else (y if meta[A1] == 1 else z)
    n = place(nf, ni, bx, head, count, meta, fm, meta[ROOT], u, v, r)
    if n < 0:
        return REBUILD
    # the meta columns as int64, not each tree's literals: new_object and free_slot compile once for both trees
    s = new_object(sl, sd, sid, id2s, meta, np.int64(SLOT_FREE), np.int64(SLOT_TOP), i, x, y, z, r)
    q = quadrant(nf, n, u, v)
    link(sl, head, count, s, 4 * n + q)
    grow_boxes(bx, ni, n, q, x, y, z, r)
    meta[NLIVE] += 1
    return OK


@njit_noref
def remove_one(i, nf, ni, bx, head, count, meta, sl, sid, id2s):
    n = unlink(sl, head, count, id2s[i]) >> 2
    free_slot(sl, sid, id2s, meta, np.int64(SLOT_FREE), i)  # as in insert_one: compiled once
    meta[NLIVE] -= 1
    cleanup(nf, ni, bx, head, count, meta, n)


@njit_noref
def move_one(i, x, y, z, r, nf, ni, bx, head, count, meta, fm, sd, sl, id2s):
    """Move object i (radius kept when ``r`` is NaN): OK, NEED_ROOM or REBUILD (nothing changed unless
    OK). In place when it stays in its node (O(1)); else unlinked without cleanup, placed from its old
    node (up, then down) and its old node cleaned up last."""
    if meta[NODE_TOP] + NODE_ROOM > nf.shape[0]:
        return NEED_ROOM
    s = id2s[i]
    if r != r:
        r = sd[s, 3]
    u = x if meta[A0] == 0 else (y if meta[A0] == 1 else z)
    v = x if meta[A1] == 0 else (y if meta[A1] == 1 else z)
    was = sl[s, 2]
    old = was >> 2
    n = place(nf, ni, bx, head, count, meta, fm, old, u, v, r)
    if n < 0:
        return REBUILD  # place changed nothing
    sd[s, 0] = x
    sd[s, 1] = y
    sd[s, 2] = z
    sd[s, 3] = r
    q = quadrant(nf, n, u, v)
    if 4 * n + q != was:
        unlink(sl, head, count, s)
        link(sl, head, count, s, 4 * n + q)
        if n != old:
            cleanup(nf, ni, bx, head, count, meta, old)
    grow_boxes(bx, ni, n, q, x, y, z, r)
    return OK


@njit_noref(inline="always")
def prefetch_slots(ids, id2s, sd, sl, k, m):
    """For move k of a batch of m: prefetch the slot number of move k + 16, and (that now cached) the row
    and links of move k + 8."""
    if k + 16 < m:
        prefetch(id2s, ids[k + 16], 0)
    if k + 8 < m:
        s8 = id2s[ids[k + 8]]
        prefetch(sd, s8, 0)
        prefetch(sl, s8, 0)


@njit_noref
def move_many(start, ids, cen, rad, nf, ni, bx, head, count, meta, fm, sd, sl, id2s):
    """Move ``ids[k]`` from ``start`` on; returns (where it stopped or len(ids), the status there).
    Prefetches in stages, each using what the one before brought in: the id's slot 16 moves ahead, its
    row and links 8 ahead, its node's rows 4 ahead, so the misses of the moves ahead overlap."""
    m = ids.shape[0]
    for k in range(start, m):
        prefetch_slots(ids, id2s, sd, sl, k, m)
        if k + 4 < m:
            n4 = sl[id2s[ids[k + 4]], 2] >> 2
            prefetch(nf, n4, 0)
            prefetch(bx, n4, 0)
            prefetch(ni, n4, 0)
        st = move_one(ids[k], cen[k, 0], cen[k, 1], cen[k, 2], rad[k], nf, ni, bx, head, count, meta, fm, sd, sl, id2s)
        if st != OK:
            return k, st
    return ids.shape[0], OK


@njit_noref
def build_place(cen, rad, nf, ni, bx, head, count, meta, fm, obj_node, start):
    """Bulk build, pass 1: each object's node into ``obj_node`` (nodes created, counts kept), from
    ``start``; returns where it stopped (NEED_ROOM) or N. The root holds every object already."""
    a0 = meta[A0]
    a1 = meta[A1]
    for i in range(start, cen.shape[0]):
        if meta[NODE_TOP] + NODE_ROOM > nf.shape[0]:
            return i
        u = cen[i, a0]
        v = cen[i, a1]
        n = descend(nf, ni, bx, head, count, meta, fm, meta[ROOT], u, v, rad[i])
        obj_node[i] = 4 * n + quadrant(nf, n, u, v)
        count[obj_node[i]] += 1
    return cen.shape[0]


@njit_noref
def fill_lists(cen, rad, ids, obj_list, off, head, count, sd, sl, sid, id2s):
    """Bulk build, pass 2: list n's objects (``obj_list[i]``: object i's list) take slots off[n] ..
    off[n + 1] - 1, linked in that order, so a query walks each list as one run; object i has id
    ``ids[i]``."""
    nn = off.shape[0] - 1
    for n in range(nn):
        head[n] = off[n] if off[n + 1] > off[n] else -1
        count[n] = 0
    for i in range(cen.shape[0]):
        n = obj_list[i]
        s = off[n] + count[n]
        count[n] += 1
        sd[s, 0] = cen[i, 0]
        sd[s, 1] = cen[i, 1]
        sd[s, 2] = cen[i, 2]
        sd[s, 3] = rad[i]
        sid[s] = ids[i]
        id2s[ids[i]] = s
        sl[s, 2] = n
    for n in range(nn):
        a = off[n]
        b = off[n + 1]
        for s in range(a, b):
            sl[s, 0] = s + 1 if s + 1 < b else -1
            sl[s, 1] = s - 1 if s > a else -1


@njit_noref
def scan_list(px, py, pz, sd, sl, sid, s, cnt, out, k):
    """Test the ``cnt`` objects of one list from slot ``s``; returns the new k. The list is walked as runs
    of consecutive slots (the build lays each list out as one), each tested by a plain loop over a range:
    with room in ``out`` for every candidate, each id is written and k advances when the predicate holds,
    no branch on the predicate (the octree's candidate loop)."""
    size = out.shape[0]
    room = k + cnt <= size
    while s >= 0:
        e = s
        while sl[e, 0] == e + 1:  # the next address does not wait on the load: the walk pipelines
            e += 1
        nxt = sl[e, 0]
        if room:
            for t in range(s, e + 1):
                dx = px - sd[t, 0]
                dy = py - sd[t, 1]
                dz = pz - sd[t, 2]
                r = sd[t, 3]
                out[k] = sid[t]
                k += (dx * dx + dy * dy) + dz * dz <= r * r
        else:
            for t in range(s, e + 1):
                if holds(px, py, pz, sd[t, 0], sd[t, 1], sd[t, 2], sd[t, 3]):
                    k = emit(out, size, k, sid[t])
        s = nxt
    return k


@njit_noref(inline="always")
def in_box(bx, n, off, px, py, pz):
    """Is the point in the box at ``bx[n, off:off + 6]`` (the subtree box at 0, quadrant list q's at 6 + 6q)?"""
    return (bx[n, off] <= px <= bx[n, off + 3] and bx[n, off + 1] <= py <= bx[n, off + 4]
            and bx[n, off + 2] <= pz <= bx[n, off + 5])


@njit_noref(inline="always")
def report(stats, cand, k, visited, most):
    """Write a query's counters into ``stats`` (4,) int64 (candidates, visible, nodes or cells entered, most
    on one level) and return k, the visible count."""
    stats[0] = cand
    stats[1] = k
    stats[2] = visited
    stats[3] = most
    return k


@njit_noref(inline="always")
def _enters(nf, c, pu, pv):
    """Is the point in child c's test box [a - s/2, a + 3s/2) on both axes? (Exact: module docstring.)"""
    s = nf[c, 2]
    h = 0.5 * s
    a = nf[c, 0]
    if pu < a - h or pu >= a + s + h:
        return False
    a = nf[c, 1]
    return pv >= a - h and pv < a + s + h


@njit_noref
def query(px, py, pz, nf, ni, bx, head, count, meta, sd, sl, sid, out, work, stats):
    """Ids of the spheres holding (px, py, pz) into ``out`` (the first out.size); returns how many.
    ``stats`` (4,) int64 gets candidates, visible, nodes entered, most nodes entered on one level.
    ``work`` (DEPTHS + 4 DEPTHS,) int64: per-depth counts (all zero between calls), then the stack."""
    a0 = meta[A0]
    a1 = meta[A1]
    pu = px if a0 == 0 else (py if a0 == 1 else pz)
    pv = px if a1 == 0 else (py if a1 == 1 else pz)
    k = np.int64(0)  # not a literal 0: scan_list compiles once
    cand = 0
    visited = 0
    deep = 0
    top = DEPTHS
    if in_box(bx, meta[ROOT], 0, px, py, pz):
        work[top] = meta[ROOT]
        top += 1
    while top > DEPTHS:
        top -= 1
        e = work[top]  # node | depth << 32
        n = e & 0xFFFFFFFF
        d = e >> 32
        visited += 1
        work[d] += 1
        if d > deep:
            deep = d
        for q in range(4):
            lst = 4 * n + q
            if head[lst] >= 0 and in_box(bx, n, 6 + 6 * q, px, py, pz):
                cand += count[lst]
                k = scan_list(px, py, pz, sd, sl, sid, head[lst], count[lst], out, k)
        for q in range(4):
            c = ni[n, q]
            # the subtree box first: it rejects most children without reading their corner row
            if c >= 0 and in_box(bx, c, 0, px, py, pz) and _enters(nf, c, pu, pv):
                work[top] = c | ((d + 1) << 32)
                top += 1
    most = 0
    for d in range(deep + 1):
        if work[d] > most:
            most = work[d]
        work[d] = 0
    return report(stats, cand, k, visited, most)


@njit_noref
def check(nf, ni, bx, head, count, meta, fm, sd, sl):
    """The tree's invariants, for the tests: returns the number of violations (0 when sound). Each live
    node's box holds its objects' centres (each in the list of its quadrant) and fits their radii, at most
    BUCKET of them would fit a child (unless the node is finest), its children have half its edge at their
    quadrant's corner, counts match lists, each list's box holds its spheres and the subtree box holds the
    lists' boxes and the children's subtree boxes."""
    bad = 0
    emin = fm[EMIN]
    a0 = meta[A0]
    a1 = meta[A1]
    for n in range(meta[NODE_TOP]):
        if nf[n, 2] == 0.0:
            continue  # freed
        s = nf[n, 2]
        h = 0.5 * s
        below = 0
        for q in range(4):
            o = 6 + 6 * q
            cnt = 0
            x = head[4 * n + q]
            while x >= 0:
                cnt += 1
                u = sd[x, a0]
                v = sd[x, a1]
                r = sd[x, 3]
                if not _inside(nf, n, u, v) or not fits(r, s) or sl[x, 2] != 4 * n + q or quadrant(nf, n, u, v) != q:
                    bad += 1
                if h >= emin and fits(r, h):
                    below += 1
                for j in range(3):
                    if not (bx[n, o + j] <= sd[x, j] - r and sd[x, j] + r <= bx[n, o + 3 + j]):
                        bad += 1
                x = sl[x, 0]
            if cnt != count[4 * n + q]:
                bad += 1
            for j in range(3):
                if not (bx[n, j] <= bx[n, o + j] and bx[n, o + 3 + j] <= bx[n, 3 + j]):
                    bad += 1
        if below > BUCKET:
            bad += 1
        for q in range(4):
            c = ni[n, q]
            if c >= 0:
                if (nf[c, 2] != h or nf[c, 0] != nf[n, 0] + h * (q & 1) or nf[c, 1] != nf[n, 1] + h * (q >> 1)
                        or ni[c, PARENT] != n):
                    bad += 1
                for j in range(3):
                    if not (bx[n, j] <= bx[c, j] and bx[c, 3 + j] <= bx[n, 3 + j]):
                        bad += 1
    return bad
