"""numba kernels of the adaptive view-distance octree. The arrays they walk are owned by
:class:`viewer.index.octree.Octree`; see its docstring for the layout. Kernels are free functions over
flat arrays with explicit dtypes; none allocates except the bulk build.

Array layout (M node slots, P object slots, I ids):

- ``nint`` (M, 6) int32: parent, first child, next sibling, block start, object count, block size.
  A free node slot has parent -2 and links the free list through "next sibling".
- ``nlev`` (M,) uint8: level; the node's edge is ``EDGE[level] = 2.0 ** (level - 128)``.
- ``ncorner`` (M, 3) float64: the node's minimum corner, world units. The node holds centres in the
  half-open box [corner, corner + edge).
- ``nq`` (M, 12) uint8: two boxes quantised on the node's grid: 0..5 the box of its own spheres, 6..11
  the box of every sphere in its subtree (lo x, y, z, hi x, y, z). The grid spans the paper's test box
  [corner - edge / 2, corner + 1.5 edge] in 256 steps of edge / 128; value q means
  ``base + q * step`` for lo and ``base + (q + 1) * step`` for hi. lo > hi is the empty box.
- ``obj`` (P, 4) float64: x, y, z, r of each object slot, each node's objects contiguous in a block.
- ``oid`` (P,) int32: slot -> id; in a free block, the first slot links to the next free block.
- ``ids`` (I, 2) int32: id -> (slot, node); slot -1 once removed.
- ``meta`` (16,) int64: scalars (ROOT, NODE_TOP, NODE_FREE, POOL_TOP, NOBJ, MIN_LEV, ...).
- ``bfree`` (64,) int32: head of the free list of blocks of size class k (size in [2^k, 2^(k+1))).
"""

from __future__ import annotations

import math

import numpy as np

from viewer._jit import njit

# nint columns
PARENT, CHILD, SIB, START, COUNT, SIZE = 0, 1, 2, 3, 4, 5
# meta slots
ROOT, NODE_TOP, NODE_FREE, POOL_TOP, NOBJ, MIN_LEV, NODE_CAP, POOL_CAP, LIVE_NODES, LOOSE = range(10)

EDGE = 2.0 ** (np.arange(256, dtype=np.float64) - 128.0)
INV_STEPS = 1.0 / 128.0  # quantisation step as a fraction of the edge
STACK = 8 * 256 + 16

EMPTY_Q = np.array([255, 255, 255, 0, 0, 0], dtype=np.uint8)


@njit
def _margin(c, r):
    # the float predicate may accept points a few ulps outside the real ball: widen boxes by more
    return (abs(c) + r) * 8.9e-16 + 1e-300


@njit
def quantise(ncorner, nlev, n, lo0, lo1, lo2, hi0, hi1, hi2, q6):
    """Quantise the float box [lo, hi] outward on node n's grid into q6 (6,) int64."""
    e = EDGE[nlev[n]]
    step = e * INV_STEPS
    for a in range(3):
        base = ncorner[n, a] - 0.5 * e
        lo = lo0 if a == 0 else (lo1 if a == 1 else lo2)
        hi = hi0 if a == 0 else (hi1 if a == 1 else hi2)
        x = (lo - base) / step
        if x <= 0.0:
            ql = 0
        elif x >= 255.0:
            ql = 255
        else:
            ql = int(math.floor(x))
            while ql > 0 and base + ql * step > lo:
                ql -= 1
        y = (hi - base) / step
        if y >= 256.0:
            qh = 255
        elif y <= 1.0:
            qh = 0
        else:
            qh = int(math.ceil(y)) - 1
            while qh < 255 and base + (qh + 1) * step < hi:
                qh += 1
        q6[a] = ql
        q6[3 + a] = qh


@njit
def decode(ncorner, nlev, nq, n, off, lo3, hi3):
    """Decode node n's quantised box at column offset ``off`` (0 own, 6 subtree) into floats."""
    e = EDGE[nlev[n]]
    step = e * INV_STEPS
    for a in range(3):
        base = ncorner[n, a] - 0.5 * e
        lo3[a] = base + nq[n, off + a] * step
        hi3[a] = base + (nq[n, off + 3 + a] + 1) * step


@njit
def _contains_q(nq, n, off, q6):
    for a in range(3):
        if q6[a] < nq[n, off + a] or q6[3 + a] > nq[n, off + 3 + a]:
            return False
    return True


@njit
def _union_q(nq, n, off, q6):
    changed = False
    for a in range(3):
        if q6[a] < nq[n, off + a]:
            nq[n, off + a] = q6[a]
            changed = True
        if q6[3 + a] > nq[n, off + 3 + a]:
            nq[n, off + 3 + a] = q6[3 + a]
            changed = True
    return changed


@njit
def _obj_box(obj, s, lo3, hi3):
    r = obj[s, 3]
    for a in range(3):
        c = obj[s, a]
        m = _margin(c, r)
        lo3[a] = (c - r) - m
        hi3[a] = (c + r) + m


@njit
def expand_up(nint, nlev, ncorner, nq, n, lo3, hi3, q6, own):
    """Grow node n's own box (if ``own``) and the subtree boxes of n and its ancestors by [lo, hi]."""
    if own:
        quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
        _union_q(nq, n, 0, q6)
    a = n
    while a >= 0:
        quantise(ncorner, nlev, a, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
        if not _union_q(nq, a, 6, q6):
            break
        a = nint[a, PARENT]


@njit
def recompute_own(nint, nlev, ncorner, nq, obj, n, lo3, hi3, q6):
    for a in range(6):
        nq[n, a] = 255 if a < 3 else 0
    s0 = nint[n, START]
    for s in range(s0, s0 + nint[n, COUNT]):
        _obj_box(obj, s, lo3, hi3)
        quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
        _union_q(nq, n, 0, q6)


@njit
def _sub_from_parts(nint, nlev, ncorner, nq, n, lo3, hi3, q6, out6):
    """Node n's subtree box recomputed from its own box and its children's subtree boxes."""
    for a in range(6):
        out6[a] = nq[n, a]
    c = nint[n, CHILD]
    while c >= 0:
        if nq[c, 6] <= nq[c, 9]:
            decode(ncorner, nlev, nq, c, 6, lo3, hi3)
            quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
            for a in range(3):
                if q6[a] < out6[a]:
                    out6[a] = q6[a]
                if q6[3 + a] > out6[3 + a]:
                    out6[3 + a] = q6[3 + a]
        c = nint[c, SIB]


@njit
def tighten_up(nint, nlev, ncorner, nq, n, lo3, hi3, q6, out6):
    """Recompute subtree boxes from n upward while they change (after a removal)."""
    a = n
    while a >= 0:
        _sub_from_parts(nint, nlev, ncorner, nq, a, lo3, hi3, q6, out6)
        same = True
        for k in range(6):
            if nq[a, 6 + k] != out6[k]:
                same = False
                nq[a, 6 + k] = out6[k]
        if same:
            break
        a = nint[a, PARENT]


# ----------------------------------------------------------------------------- node pool


@njit
def new_node(nint, nlev, ncorner, nq, meta, parent, lev, x, y, z):
    n = meta[NODE_FREE]
    if n >= 0:
        meta[NODE_FREE] = nint[n, SIB]
    else:
        n = meta[NODE_TOP]
        meta[NODE_TOP] = n + 1
    nint[n, PARENT] = parent
    nint[n, CHILD] = -1
    nint[n, SIB] = -1
    nint[n, START] = 0
    nint[n, COUNT] = 0
    nint[n, SIZE] = 0
    nlev[n] = lev
    ncorner[n, 0] = x
    ncorner[n, 1] = y
    ncorner[n, 2] = z
    for a in range(12):
        nq[n, a] = EMPTY_Q[a % 6]
    meta[LIVE_NODES] += 1
    if parent >= 0:
        nint[n, SIB] = nint[parent, CHILD]
        nint[parent, CHILD] = n
    return n


@njit
def free_node(nint, meta, n):
    p = nint[n, PARENT]
    if p >= 0:  # unlink from the parent's child list (at most 8 siblings)
        c = nint[p, CHILD]
        if c == n:
            nint[p, CHILD] = nint[n, SIB]
        else:
            while nint[c, SIB] != n:
                c = nint[c, SIB]
            nint[c, SIB] = nint[n, SIB]
    nint[n, PARENT] = -2
    nint[n, SIB] = meta[NODE_FREE]
    meta[NODE_FREE] = n
    meta[LIVE_NODES] -= 1


@njit
def cleanup(nint, nlev, ncorner, nq, meta, n, lo3, hi3, q6, out6):
    """Free n and its ancestors while they hold nothing and have no children; tighten the rest."""
    while n != meta[ROOT] and nint[n, COUNT] == 0 and nint[n, CHILD] < 0:
        p = nint[n, PARENT]
        free_node(nint, meta, n)
        n = p
    tighten_up(nint, nlev, ncorner, nq, n, lo3, hi3, q6, out6)


# ----------------------------------------------------------------------------- object blocks


@njit
def _size_class(size):
    k = 0
    while (2 << k) <= size:
        k += 1
    return k


@njit
def alloc_block(oid, meta, bfree, k):
    """A block of at least 2^k slots: (start, size), or (-1, 0) when the pool is full."""
    s = bfree[k]
    if s >= 0:
        bfree[k] = oid[s]
        size = 1 << k
        # a block in class k may be larger than 2^k: its true size was stored in slot s + 1
        if size > 1:
            size = oid[s + 1]
        return s, size
    need = 1 << k
    top = meta[POOL_TOP]
    if top + need > meta[POOL_CAP]:
        return -1, 0
    meta[POOL_TOP] = top + need
    return top, need


@njit
def free_block(oid, bfree, start, size):
    k = _size_class(size)
    oid[start] = bfree[k]
    if size > 1:
        oid[start + 1] = size
    bfree[k] = start


@njit
def append_obj(nint, obj, oid, ids, meta, bfree, n, i, x, y, z, r):
    """Append object id i to node n's block (moving the block to a larger one when full).
    Returns False, changing nothing, when the pool has no room."""
    cnt = nint[n, COUNT]
    if cnt == nint[n, SIZE]:
        k = _size_class(cnt) + 1 if cnt > 0 else 0
        s, size = alloc_block(oid, meta, bfree, k)
        if s < 0:
            return False
        s0 = nint[n, START]
        for j in range(cnt):
            obj[s + j, 0] = obj[s0 + j, 0]
            obj[s + j, 1] = obj[s0 + j, 1]
            obj[s + j, 2] = obj[s0 + j, 2]
            obj[s + j, 3] = obj[s0 + j, 3]
            oid[s + j] = oid[s0 + j]
            ids[oid[s + j], 0] = s + j
        if nint[n, SIZE] > 0:
            free_block(oid, bfree, s0, nint[n, SIZE])
        nint[n, START] = s
        nint[n, SIZE] = size
    s = nint[n, START] + cnt
    obj[s, 0] = x
    obj[s, 1] = y
    obj[s, 2] = z
    obj[s, 3] = r
    oid[s] = i
    ids[i, 0] = s
    ids[i, 1] = n
    nint[n, COUNT] = cnt + 1
    return True


@njit
def unlink_obj(nint, obj, oid, ids, bfree, n, s):
    """Swap-remove slot s from node n's block; free the block when it empties."""
    last = nint[n, START] + nint[n, COUNT] - 1
    if s != last:
        for a in range(4):
            obj[s, a] = obj[last, a]
        oid[s] = oid[last]
        ids[oid[s], 0] = s
    nint[n, COUNT] -= 1
    if nint[n, COUNT] == 0:
        free_block(oid, bfree, nint[n, START], nint[n, SIZE])
        nint[n, SIZE] = 0
        nint[n, START] = 0


# ----------------------------------------------------------------------------- placement


@njit
def fits(nint, nlev, ncorner, meta, n, x, y, z, r):
    """Does a sphere (x, y, z, r) belong in node n itself (position in box, radius in band)?"""
    e = EDGE[nlev[n]]
    c = ncorner[n]
    if not (c[0] <= x < c[0] + e and c[1] <= y < c[1] + e and c[2] <= z < c[2] + e):
        return False
    if r > 0.5 * e:
        return False
    return r >= 0.25 * e or nlev[n] <= meta[MIN_LEV]


@njit
def place(nint, nlev, ncorner, nq, meta, n, x, y, z, r):
    """The node a sphere belongs in, searched from node n: up while it does not fit, then down,
    creating children lazily. Returns -1 when even the root cannot hold it (grow the root)."""
    while True:
        e = EDGE[nlev[n]]
        c = ncorner[n]
        inside = c[0] <= x < c[0] + e and c[1] <= y < c[1] + e and c[2] <= z < c[2] + e
        if not inside or r > 0.5 * e:
            n = nint[n, PARENT]
            if n < 0:
                return -1
            continue
        if r >= 0.25 * e or nlev[n] <= meta[MIN_LEV]:
            return n
        h = 0.5 * e
        ox = c[0] + h if x >= c[0] + h else c[0]
        oy = c[1] + h if y >= c[1] + h else c[1]
        oz = c[2] + h if z >= c[2] + h else c[2]
        ch = nint[n, CHILD]
        while ch >= 0:
            if ncorner[ch, 0] == ox and ncorner[ch, 1] == oy and ncorner[ch, 2] == oz:
                break
            ch = nint[ch, SIB]
        if ch < 0:
            ch = new_node(nint, nlev, ncorner, nq, meta, n, nlev[n] - 1, ox, oy, oz)
        n = ch


@njit
def grow_root(nint, nlev, ncorner, nq, meta, x, y, z, r, lo3, hi3, q6):
    """Wrap the root in new parents until it holds centre (x, y, z) and radius r."""
    while True:
        root = meta[ROOT]
        e = EDGE[nlev[root]]
        c = ncorner[root]
        inside = c[0] <= x < c[0] + e and c[1] <= y < c[1] + e and c[2] <= z < c[2] + e
        if inside and r <= 0.5 * e:
            return
        if nlev[root] >= 254:
            return
        nx = c[0] - e if x < c[0] else c[0]
        ny = c[1] - e if y < c[1] else c[1]
        nz = c[2] - e if z < c[2] else c[2]
        top = new_node(nint, nlev, ncorner, nq, meta, -1, nlev[root] + 1, nx, ny, nz)
        nint[root, PARENT] = top
        nint[top, CHILD] = root
        nint[root, SIB] = -1
        meta[ROOT] = top
        if nq[root, 6] <= nq[root, 9]:
            decode(ncorner, nlev, nq, root, 6, lo3, hi3)
            quantise(ncorner, nlev, top, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
            _union_q(nq, top, 6, q6)


# ----------------------------------------------------------------------------- updates


@njit
def insert_one(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, x, y, z, r, scratch, iscratch):
    """Insert object id i. Returns 0, or 1 when the object pool is full (nothing was stored)."""
    lo3 = scratch[0:3]
    hi3 = scratch[3:6]
    q6 = iscratch[0:6]
    n = place(nint, nlev, ncorner, nq, meta, meta[ROOT], x, y, z, r)
    if n < 0:
        grow_root(nint, nlev, ncorner, nq, meta, x, y, z, r, lo3, hi3, q6)
        n = place(nint, nlev, ncorner, nq, meta, meta[ROOT], x, y, z, r)
    if not append_obj(nint, obj, oid, ids, meta, bfree, n, i, x, y, z, r):
        out6 = iscratch[6:12]
        cleanup(nint, nlev, ncorner, nq, meta, n, lo3, hi3, q6, out6)
        return 1
    meta[NOBJ] += 1
    _obj_box(obj, ids[i, 0], lo3, hi3)
    expand_up(nint, nlev, ncorner, nq, n, lo3, hi3, q6, True)
    return 0


@njit
def _touches(q6, nq, n):
    for a in range(3):
        if q6[a] <= nq[n, a] or q6[3 + a] >= nq[n, 3 + a]:
            return True
    return False


@njit
def remove_one(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, scratch, iscratch):
    lo3 = scratch[0:3]
    hi3 = scratch[3:6]
    q6 = iscratch[0:6]
    out6 = iscratch[6:12]
    s = ids[i, 0]
    n = ids[i, 1]
    _obj_box(obj, s, lo3, hi3)
    quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
    unlink_obj(nint, obj, oid, ids, bfree, n, s)
    ids[i, 0] = -1
    ids[i, 1] = -1
    meta[NOBJ] -= 1
    if _touches(q6, nq, n):
        recompute_own(nint, nlev, ncorner, nq, obj, n, lo3, hi3, q6)
    cleanup(nint, nlev, ncorner, nq, meta, n, lo3, hi3, q6, out6)


@njit
def move_one(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, x, y, z, r, scratch, iscratch):
    """Move object i in place: O(1) while it stays in its node. Returns 0, or 1 when the pool is
    full (the object is then left where it was, unchanged)."""
    lo3 = scratch[0:3]
    hi3 = scratch[3:6]
    q6 = iscratch[0:6]
    out6 = iscratch[6:12]
    s = ids[i, 0]
    n = ids[i, 1]
    _obj_box(obj, s, lo3, hi3)
    quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
    old_touch = _touches(q6, nq, n)
    if fits(nint, nlev, ncorner, meta, n, x, y, z, r):
        obj[s, 0] = x
        obj[s, 1] = y
        obj[s, 2] = z
        obj[s, 3] = r
        _obj_box(obj, s, lo3, hi3)
        if old_touch and nint[n, COUNT] <= 4:
            # a small block: its own box is exact again at the cost of a few objects
            recompute_own(nint, nlev, ncorner, nq, obj, n, lo3, hi3, q6)
            _obj_box(obj, s, lo3, hi3)
        # boxes only grow here (O(1) while the ancestors already hold the sphere); the looseness a
        # move leaves behind is counted and removed by refit() once it adds up
        expand_up(nint, nlev, ncorner, nq, n, lo3, hi3, q6, True)
        if old_touch:
            meta[LOOSE] += 1
        return 0
    # unlink without cleanup, re-place starting from the same node, clean up last
    ox, oy, oz, orr = obj[s, 0], obj[s, 1], obj[s, 2], obj[s, 3]
    t = place(nint, nlev, ncorner, nq, meta, n, x, y, z, r)
    if t < 0:
        grow_root(nint, nlev, ncorner, nq, meta, x, y, z, r, lo3, hi3, q6)
        t = place(nint, nlev, ncorner, nq, meta, meta[ROOT], x, y, z, r)
    unlink_obj(nint, obj, oid, ids, bfree, n, s)
    if not append_obj(nint, obj, oid, ids, meta, bfree, t, i, x, y, z, r):
        # no room: put it back (its old slot was just freed, so this cannot fail) and report
        append_obj(nint, obj, oid, ids, meta, bfree, n, i, ox, oy, oz, orr)
        cleanup(nint, nlev, ncorner, nq, meta, t, lo3, hi3, q6, out6)
        return 1
    _obj_box(obj, ids[i, 0], lo3, hi3)
    expand_up(nint, nlev, ncorner, nq, t, lo3, hi3, q6, True)
    if old_touch:
        recompute_own(nint, nlev, ncorner, nq, obj, n, lo3, hi3, q6)
    cleanup(nint, nlev, ncorner, nq, meta, n, lo3, hi3, q6, out6)
    return 0


@njit
def move_many(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, mids, xyz, rad, scratch, iscratch):
    """Move objects mids[k] to xyz[k] with radius rad[k] (NaN: keep). Returns how many were done
    before the node or object pool ran short (the caller grows the pools and continues)."""
    for k in range(mids.shape[0]):
        if meta[NODE_TOP] + 300 > meta[NODE_CAP] and meta[NODE_FREE] < 0:
            return k
        i = mids[k]
        r = rad[k]
        if r != r:
            r = obj[ids[i, 0], 3]
        if move_one(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, xyz[k, 0], xyz[k, 1], xyz[k, 2], r, scratch, iscratch):
            return k
    return mids.shape[0]


# ----------------------------------------------------------------------------- query


@njit
def query(px, py, pz, nint, nlev, ncorner, nq, obj, oid, meta, out, stack, levcount, stats):
    """Ids of the spheres holding (px, py, pz) into ``out``; returns the count (which may exceed
    out.size: only the first out.size are written). stats (4,) int64 receives candidates,
    visible, nodes visited, max nodes on one level."""
    cap = out.shape[0]
    k = 0
    cand = 0
    visited = 0
    lmin = 255
    lmax = 0
    root = meta[ROOT]
    top = 0
    if _holds(nlev, ncorner, nq, root, 6, px, py, pz):
        stack[0] = root
        top = 1
    while top > 0:
        top -= 1
        n = stack[top]
        visited += 1
        lv = nlev[n]
        levcount[lv] += 1
        if lv < lmin:
            lmin = lv
        if lv > lmax:
            lmax = lv
        cnt = nint[n, COUNT]
        if cnt > 0 and _holds(nlev, ncorner, nq, n, 0, px, py, pz):
            s0 = nint[n, START]
            cand += cnt
            for s in range(s0, s0 + cnt):
                dx = px - obj[s, 0]
                dy = py - obj[s, 1]
                dz = pz - obj[s, 2]
                r = obj[s, 3]
                if (dx * dx + dy * dy) + dz * dz <= r * r:
                    if k < cap:
                        out[k] = oid[s]
                    k += 1
        c = nint[n, CHILD]
        while c >= 0:
            if _holds(nlev, ncorner, nq, c, 6, px, py, pz):
                stack[top] = c
                top += 1
            c = nint[c, SIB]
    most = 0
    for lv in range(lmin, lmax + 1):
        if levcount[lv] > most:
            most = levcount[lv]
        levcount[lv] = 0
    stats[0] = cand
    stats[1] = k
    stats[2] = visited
    stats[3] = most
    return k


@njit
def _holds(nlev, ncorner, nq, n, off, px, py, pz):
    e = EDGE[nlev[n]]
    step = e * INV_STEPS
    slack = e * 1e-12
    b = ncorner[n, 0] - 0.5 * e
    if px < b + nq[n, off] * step - slack or px > b + (nq[n, off + 3] + 1) * step + slack:
        return False
    b = ncorner[n, 1] - 0.5 * e
    if py < b + nq[n, off + 1] * step - slack or py > b + (nq[n, off + 4] + 1) * step + slack:
        return False
    b = ncorner[n, 2] - 0.5 * e
    if pz < b + nq[n, off + 2] * step - slack or pz > b + (nq[n, off + 5] + 1) * step + slack:
        return False
    return nq[n, off] <= nq[n, off + 3]


# ----------------------------------------------------------------------------- bulk build


@njit
def build(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, centres, radii, scratch):
    """Bulk build into an empty tree (a root only). Pass 1 places every object, creating nodes;
    pass 2 lays the blocks out in depth-first order, exactly sized; pass 3 scatters the objects;
    then :func:`refit` computes the boxes. Returns 0, or 1 when the node arrays ran out (the caller
    grows them and starts again)."""
    n_obj = centres.shape[0]
    node_of = np.empty(n_obj, dtype=np.int32)
    root = meta[ROOT]
    for i in range(n_obj):
        if meta[NODE_TOP] + 300 > meta[NODE_CAP]:
            return 1
        t = place(nint, nlev, ncorner, nq, meta, root, centres[i, 0], centres[i, 1], centres[i, 2], radii[i])
        node_of[i] = t
        nint[t, COUNT] += 1
    # depth-first block layout
    m = meta[NODE_TOP]
    order = np.empty(m, dtype=np.int32)
    stack = np.empty(m + 1, dtype=np.int32)
    stack[0] = root
    top = 1
    cnt = 0
    pos = 0
    while top > 0:
        top -= 1
        n = stack[top]
        order[cnt] = n
        cnt += 1
        size = nint[n, COUNT]
        nint[n, START] = pos
        nint[n, SIZE] = size
        pos += size
        c = nint[n, CHILD]
        while c >= 0:
            stack[top] = c
            top += 1
            c = nint[c, SIB]
    meta[POOL_TOP] = pos
    fill = np.zeros(m, dtype=np.int32)
    for i in range(n_obj):
        n = node_of[i]
        s = nint[n, START] + fill[n]
        fill[n] += 1
        obj[s, 0] = centres[i, 0]
        obj[s, 1] = centres[i, 1]
        obj[s, 2] = centres[i, 2]
        obj[s, 3] = radii[i]
        oid[s] = i
        ids[i, 0] = s
        ids[i, 1] = n
    meta[NOBJ] = n_obj
    refit(nint, nlev, ncorner, nq, obj, meta, scratch)
    return 0


@njit
def refit(nint, nlev, ncorner, nq, obj, meta, scratch):
    """Recompute every node's own and subtree box exactly (children before parents)."""
    root = meta[ROOT]
    m = meta[NODE_TOP]
    order = np.empty(m, dtype=np.int32)
    stack = np.empty(m + 1, dtype=np.int32)
    stack[0] = root
    top = 1
    cnt = 0
    while top > 0:
        top -= 1
        n = stack[top]
        order[cnt] = n
        cnt += 1
        c = nint[n, CHILD]
        while c >= 0:
            stack[top] = c
            top += 1
            c = nint[c, SIB]
    lo3 = scratch[0:3]
    hi3 = scratch[3:6]
    q6 = np.empty(6, dtype=np.int64)
    out6 = np.empty(6, dtype=np.int64)
    for j in range(cnt - 1, -1, -1):
        n = order[j]
        recompute_own(nint, nlev, ncorner, nq, obj, n, lo3, hi3, q6)
        _sub_from_parts(nint, nlev, ncorner, nq, n, lo3, hi3, q6, out6)
        for a in range(6):
            nq[n, 6 + a] = out6[a]
    meta[LOOSE] = 0


# ----------------------------------------------------------------------------- inspection


@njit
def check_invariants(nint, nlev, ncorner, nq, obj, oid, ids, meta):
    """Walk the whole tree; returns an error code (0: all invariants hold) and a node/slot."""
    root = meta[ROOT]
    stack = np.empty(meta[NODE_TOP] + 1, dtype=np.int32)
    stack[0] = root
    top = 1
    seen_obj = 0
    seen_nodes = 0
    lo3 = np.empty(3)
    hi3 = np.empty(3)
    q6 = np.empty(6, dtype=np.int64)
    while top > 0:
        top -= 1
        n = stack[top]
        seen_nodes += 1
        e = EDGE[nlev[n]]
        if n != root and nint[n, COUNT] == 0 and nint[n, CHILD] < 0:
            return 1, n  # an empty leaf that cleanup should have freed
        s0 = nint[n, START]
        for s in range(s0, s0 + nint[n, COUNT]):
            x, y, z, r = obj[s, 0], obj[s, 1], obj[s, 2], obj[s, 3]
            c = ncorner[n]
            if not (c[0] <= x < c[0] + e and c[1] <= y < c[1] + e and c[2] <= z < c[2] + e):
                return 2, s  # centre outside its node
            if r > 0.5 * e or (r < 0.25 * e and nlev[n] > meta[MIN_LEV]):
                return 3, s  # radius outside the node's band
            if ids[oid[s], 0] != s or ids[oid[s], 1] != n:
                return 4, s  # id table out of step
            _obj_box(obj, s, lo3, hi3)
            quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
            if not _contains_q(nq, n, 0, q6):
                return 5, s  # the own box does not hold its sphere
            a = n
            while a >= 0:
                quantise(ncorner, nlev, a, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
                if not _contains_q(nq, a, 6, q6):
                    return 6, s  # a subtree box on the way up misses the sphere
                a = nint[a, PARENT]
            seen_obj += 1
        c = nint[n, CHILD]
        while c >= 0:
            if nint[c, PARENT] != n or nlev[c] != nlev[n] - 1:
                return 7, c
            stack[top] = c
            top += 1
            c = nint[c, SIB]
    if seen_obj != meta[NOBJ]:
        return 8, seen_obj
    if seen_nodes != meta[LIVE_NODES]:
        return 9, seen_nodes
    return 0, 0


@njit
def visited_nodes(px, py, pz, nint, nlev, ncorner, nq, meta, flags):
    """Mark in ``flags`` (M,) bool the nodes a query at (px, py, pz) enters (for drawing)."""
    stack = np.empty(STACK, dtype=np.int32)
    root = meta[ROOT]
    top = 0
    if _holds(nlev, ncorner, nq, root, 6, px, py, pz):
        stack[0] = root
        top = 1
    while top > 0:
        top -= 1
        n = stack[top]
        flags[n] = True
        c = nint[n, CHILD]
        while c >= 0:
            if _holds(nlev, ncorner, nq, c, 6, px, py, pz):
                stack[top] = c
                top += 1
            c = nint[c, SIB]
