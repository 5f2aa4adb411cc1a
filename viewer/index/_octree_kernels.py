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

import numba
from numba import prange

from viewer.kernels.jit import CACHE, njit, njit_noref
from viewer.kernels.prefetch import prefetch
from ._morton import compact3, spread3

# nint columns
PARENT, CHILD, SIB, START, COUNT, SIZE = 0, 1, 2, 3, 4, 5
# meta slots
ROOT, NODE_TOP, NODE_FREE, POOL_TOP, NOBJ, MIN_LEV, NODE_CAP, POOL_CAP, LIVE_NODES, LOOSE, AUX_TOP, SNAP_LEV, REFIT_AT = range(13)
# One 64-byte cache line a node: corner (3 float64) | parent, child, sibling, block start, count,
# block size (6 int32 from int32 index NINT_I32) | own and subtree boxes (12 uint8) and the octant-run
# record + 1 (3 bytes) from byte NQ_BYTE | level (uint8) at LEV_BYTE. Strided views of one row array,
# so a node costs one cache miss instead of four.
NODE_BYTES, NINT_I32, NQ_BYTE, LEV_BYTE = 64, 6, 48, 63
# An octant-run row: 8 run ends (int32, relative to the block) | 8 quantised boxes (6 uint8) from AUX_Q_BYTE
AUX_BYTES, AUX_Q_BYTE = 80, 32
# a node holding at least this many objects gets its block sorted into 8 octant runs, each with a box
AUX_MIN = 24
# A leaf (a node without children) also keeps spheres smaller than its band while it holds fewer than
# BUCKET objects, instead of sending each down a chain of nodes of its own: on a uniform million the
# plain rule makes 2.2 nodes an object (146 MB of nodes), buckets 0.07. A node's spheres below its
# band never number more than BUCKET, so a visit costs at most BUCKET extra candidates.
BUCKET = 32

EDGE = 2.0 ** (np.arange(256, dtype=np.float64) - 128.0)
# Exactness of the node grid. Every node satisfies max|corner| <= 2^40 edge, and a node with
# max|corner| > PREC * edge is a finest node (holds every smaller sphere): so corners, their sums
# and every decoded box bound are multiples of edge/256 below 2^53 of them, i.e. exact. The root's
# corner is a multiple of g = EDGE[meta[SNAP_LEV]]; corners stay exact while below 2^51 g, and a root
# growth that would pass that asks the caller to rebuild instead.
PREC = 2.0**39
EXACT = 2.0**51
# node slots a single insert or move may need at most (root growth + descent, levels 1..254)
NODE_RESERVE = 520
# a level above every node's (levels run to 254): no limit for expand_up and place
NO_TOP = 256
# Pass 2 of a large batch runs on every core, each thread in cells of its own: at least PART_CELLS of them across
# what the world fills, at most 2^PART_BITS across the root (see part_level; a move leaving its cell is the
# serial pass's)
PART_CELLS = 8
PART_BITS = 20
INV_STEPS = 1.0 / 128.0  # quantisation step as a fraction of the edge
STACK = 8 * 256 + 16
# the query's work array: visits per depth below the root, then its stack
DEPTHS = 256
WORK = DEPTHS + STACK
# An in-place move that leaves its node's own box grows it (and the subtree boxes up the path, as far as
# they must) by SLACK times the radius, and by LEAD times the move's own displacement ahead of it: an
# object drifting on then stays inside its boxes for several moves, and most moves store their row and
# nothing else (uniform 1e6, 10% drifting: growth climbs 18k -> 7k a frame with LEAD 8). The boxes never
# pass the paper's test box; the looseness is counted and refit removes it.
SLACK = 0.5
LEAD = 8.0
# The refit that removes that looseness is spread over the frames (refit_some): every counted growth
# buys REFIT_PACE objects (and nodes) refitted, in slot order round the tree, so a whole pass follows
# every N / REFIT_PACE growths and no frame pays for more than its own moves did (a full refit of a large
# world in one frame would be a stutter). Single moves (Octree.move) take a step every REFIT_CHUNK
# growths, batches one a batch.
REFIT_PACE = 1
REFIT_CHUNK = 1024

EMPTY_Q = np.array([255, 255, 255, 0, 0, 0], dtype=np.uint8)


@njit_noref
def _margin(c, r):
    # The float predicate may accept points a few ulps outside the real ball, and quantising and
    # decoding a box each round once more: widen every sphere's box by ~16 ulps of its extent.
    return (abs(c) + r) * 3.6e-15 + 1e-300


@njit_noref
def _q1(base, inv, lo, hi):
    # (lo - base) rounds relative to itself, which may dwarf the sphere's own margin (an object near
    # the origin in a node 2^60 wide: 1.5 * 2^66 - 1.2 rounds to 1.5 * 2^66, exactly a cell bound).
    # The product with inv (a power of two) is exact, so the value in cells is off by at most
    # 2^-53 of itself: shrinking (growing) it by 2^-50 before truncating can only step a bound out.
    x = (lo - base) * inv * (1.0 - 2.0**-50)
    ql = 0 if x <= 0.0 else (255 if x >= 255.0 else int(x))
    y = (hi - base) * inv * (1.0 + 2.0**-50)
    qh = 255 if y >= 255.0 else (0 if y <= 0.0 else int(y))
    return ql, qh


@njit_noref
def quantise(ncorner, nlev, n, lo0, lo1, lo2, hi0, hi1, hi2, q6):
    """Quantise the float box [lo, hi] outward on node n's grid into q6 (6,) int64."""
    e = EDGE[nlev[n]]
    inv = 128.0 / e  # a power of two: the products are exact but for the subtraction's rounding
    h = 0.5 * e
    a, b = _q1(ncorner[n, 0] - h, inv, lo0, hi0)
    q6[0] = a
    q6[3] = b
    a, b = _q1(ncorner[n, 1] - h, inv, lo1, hi1)
    q6[1] = a
    q6[4] = b
    a, b = _q1(ncorner[n, 2] - h, inv, lo2, hi2)
    q6[2] = a
    q6[5] = b


@njit_noref
def decode(ncorner, nlev, nq, n, off, lo3, hi3):
    """Decode node n's quantised box at column offset ``off`` (0 own, 6 subtree) into floats."""
    e = EDGE[nlev[n]]
    step = e * INV_STEPS
    for a in range(3):
        base = ncorner[n, a] - 0.5 * e
        lo3[a] = base + nq[n, off + a] * step
        hi3[a] = base + (nq[n, off + 3 + a] + 1) * step


@njit_noref
def _contains_q(nq, n, off, q6):
    for a in range(3):
        if q6[a] < nq[n, off + a] or q6[3 + a] > nq[n, off + 3 + a]:
            return False
    return True


@njit_noref
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


@njit_noref
def _obj_box(obj, s, lo3, hi3):
    r = obj[s, 3]
    for a in range(3):
        c = obj[s, a]
        m = _margin(c, r)
        lo3[a] = (c - r) - m
        hi3[a] = (c + r) + m


@njit_noref
def expand_up(nint, nlev, ncorner, nq, n, lo3, hi3, q6, own, top):
    """Grow node n's own box (if ``own``) and the subtree boxes of n and its ancestors by [lo, hi], up to the
    first that holds it already, or up to the ancestor on level ``top`` (``NO_TOP``: none). Returns that
    ancestor when its box grew (the boxes above it are then the caller's to grow), else -1."""
    if own:
        quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
        _union_q(nq, n, np.int64(0), q6)
    a = n
    while a >= 0:
        quantise(ncorner, nlev, a, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
        if not _union_q(nq, a, np.int64(6), q6):
            return np.int64(-1)
        if nlev[a] >= top:
            return a
        a = np.int64(nint[a, PARENT])
    return np.int64(-1)


@njit_noref
def recompute_own(nint, nlev, ncorner, nq, obj, n, lo3, hi3, q6):
    for a in range(6):
        nq[n, a] = 255 if a < 3 else 0
    s0 = nint[n, START]
    for s in range(s0, s0 + nint[n, COUNT]):
        _obj_box(obj, s, lo3, hi3)
        quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
        _union_q(nq, n, np.int64(0), q6)


@njit_noref
def _sub_from_parts(nint, nlev, ncorner, nq, n, lo3, hi3, q6, out6):
    """Node n's subtree box recomputed from its own box and its children's subtree boxes."""
    for a in range(6):
        out6[a] = nq[n, a]
    c = nint[n, CHILD]
    while c >= 0:
        if nq[c, 6] <= nq[c, 9]:
            decode(ncorner, nlev, nq, np.int64(c), np.int64(6), lo3, hi3)
            quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
            for a in range(3):
                if q6[a] < out6[a]:
                    out6[a] = q6[a]
                if q6[3 + a] > out6[3 + a]:
                    out6[3 + a] = q6[3 + a]
        c = nint[c, SIB]


@njit_noref
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


@njit_noref
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
    for a in range(12, 15):
        nq[n, a] = 0  # no octant runs
    meta[LIVE_NODES] += 1
    if parent >= 0:
        nint[n, SIB] = nint[parent, CHILD]
        nint[parent, CHILD] = n
    return n


@njit_noref
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


@njit_noref
def cleanup(nint, nlev, ncorner, nq, meta, n, lo3, hi3, q6, out6, tighten):
    """Free n and its ancestors while they hold nothing and have no children; then, if ``tighten``,
    recompute the subtree boxes of the rest while they change (else count the looseness left)."""
    while n != meta[ROOT] and nint[n, COUNT] == 0 and nint[n, CHILD] < 0:
        p = nint[n, PARENT]
        free_node(nint, meta, n)
        n = p
    if tighten:
        tighten_up(nint, nlev, ncorner, nq, n, lo3, hi3, q6, out6)
    else:
        meta[LOOSE] += 1


# ----------------------------------------------------------------------------- object blocks


@njit_noref
def _size_class(size):
    k = 0
    while (2 << k) <= size:
        k += 1
    return k


@njit_noref
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


@njit_noref
def free_block(oid, bfree, start, size):
    k = _size_class(size)
    oid[start] = bfree[k]
    if size > 1:
        oid[start + 1] = size
    bfree[k] = start


@njit_noref
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


@njit_noref
def _room(cnt):
    """Slots a repacked block of ``cnt`` objects gets: a quarter more, at least one spare."""
    return cnt + (cnt >> 2) + 1


@njit_noref
def build_room(cnt):
    """Slots the bulk build gives a block of ``cnt`` objects: an eighth more and one spare (none for an
    empty node). Exactly sized blocks made the first moving frame after a build move a block for 3,400
    of 57,000 nodes at 1e6 (dynamic-1m), against 600 a frame later: that frame took 2.5-4 times the
    next ones, most of it writing fresh pages. About 4 bytes an object."""
    return cnt + (cnt >> 3) + 1 if cnt > 0 else 0


@njit
def build_pool(t_count, m):
    """Slots of the bulk build's blocks: :func:`build_room` of each of the ``m`` kept nodes' counts in
    ``t_count`` (a bucket leaf's stored as -1 - count: see :func:`trie_walk`)."""
    total = 0
    for t in range(m):
        c = t_count[t]
        total += build_room(c if c >= 0 else -1 - c)
    return total


@njit
def repack_need(nint, meta):
    """Slots :func:`repack` will lay out: ``_room`` of every live node's count."""
    need = 0
    for n in range(meta[NODE_TOP]):
        if nint[n, PARENT] != -2 and nint[n, COUNT] > 0:
            need += _room(nint[n, COUNT])
    return need


@njit
def repack(nint, obj, oid, ids, meta, bfree, new_obj, new_oid):
    """Copy every live node's block, in node order, into ``new_obj`` (P', 4) / ``new_oid`` (P',)
    (all -1; P' >= :func:`repack_need`), each block ``_room(count)`` slots; update the nodes' block
    records, the ids' slots and the pool's top and capacity; empty the free-block lists. Octant runs
    are relative to their block, so they stay valid."""
    pos = 0
    for n in range(meta[NODE_TOP]):
        if nint[n, PARENT] == -2:
            continue
        cnt = nint[n, COUNT]
        if cnt == 0:
            nint[n, START] = 0
            nint[n, SIZE] = 0
            continue
        s0 = nint[n, START]
        for j in range(cnt):
            for a in range(4):
                new_obj[pos + j, a] = obj[s0 + j, a]
            new_oid[pos + j] = oid[s0 + j]
            ids[oid[s0 + j], 0] = pos + j
        nint[n, START] = pos
        nint[n, SIZE] = _room(cnt)
        pos += _room(cnt)
    for k in range(bfree.shape[0]):
        bfree[k] = -1
    meta[POOL_TOP] = pos
    meta[POOL_CAP] = new_obj.shape[0]


@njit_noref
def aux_of(nq, n):
    """The node's octant-run record + 1 (0: none), kept in bytes 12..14 of its nq row."""
    return np.int64(nq[n, 12]) | (np.int64(nq[n, 13]) << 8) | (np.int64(nq[n, 14]) << 16)


@njit_noref
def drop_aux(nq, n):
    # a removal or an in-place move reorders or changes a sorted block: scan it whole until the
    # refit (its next step at this node) sorts it again (always correct, only slower)
    nq[n, 12] = 0
    nq[n, 13] = 0
    nq[n, 14] = 0


@njit_noref
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


@njit_noref
def _inside(ncorner, n, e, x, y, z):
    # no row slice here: a view of a row costs reference counting on every call
    x0 = ncorner[n, 0]
    y0 = ncorner[n, 1]
    z0 = ncorner[n, 2]
    return x0 <= x and x < x0 + e and y0 <= y and y < y0 + e and z0 <= z and z < z0 + e


@njit_noref
def finest(nlev, ncorner, meta, n):
    """Does node n hold every smaller sphere (no children): ``max_depth`` levels down, or so far from
    the origin relative to its edge that children's corners would lose exactness?"""
    if nlev[n] <= meta[MIN_LEV]:
        return True
    m = max(abs(ncorner[n, 0]), abs(ncorner[n, 1]), abs(ncorner[n, 2]))
    return m > PREC * EDGE[nlev[n]]


@njit_noref
def fits(nint, nlev, ncorner, meta, n, x, y, z, r):
    """May a sphere (x, y, z, r) of node n stay there (position in box, radius in band, or below it in
    a leaf of at most ``BUCKET`` objects)?"""
    e = EDGE[nlev[n]]
    if r > 0.5 * e or not _inside(ncorner, n, e, x, y, z):
        return False
    return r >= 0.25 * e or _bucket(nint, n, np.int64(BUCKET)) or finest(nlev, ncorner, meta, n)


@njit_noref
def _bucket(nint, n, most):
    """Is node n a leaf with at most ``most`` objects (so it may keep spheres below its band)?"""
    return nint[n, CHILD] < 0 and nint[n, COUNT] <= most


@njit_noref
def _prefetch_siblings(ncorner, meta, c):
    """Start loading the 7 node rows after the first child ``c`` (none if -1): siblings usually sit in
    consecutive rows (the build lays nodes out breadth-first), so a walk of the list then waits for one
    miss, not eight."""
    if c >= 0:
        for j in range(1, 8):
            if c + j < meta[NODE_TOP]:
                prefetch(ncorner, c + j, 0)


@njit_noref
def place(nint, nlev, ncorner, nq, meta, n, x, y, z, r, top, create):
    """The node a sphere belongs in, searched from node n: up while it does not fit, then down to its
    band or to a leaf with room (fewer than ``BUCKET`` objects), creating children lazily if ``create``.
    Returns -1 when even the root cannot hold it (grow the root), or when the search would climb past
    level ``top`` (``NO_TOP``: never) or, without ``create``, need a new node."""
    while True:
        e = EDGE[nlev[n]]
        if r > 0.5 * e or not _inside(ncorner, n, e, x, y, z):
            if nlev[n] >= top:
                return -1
            n = nint[n, PARENT]
            if n < 0:
                return -1
            continue
        if r >= 0.25 * e or _bucket(nint, n, BUCKET - 1) or finest(nlev, ncorner, meta, n):
            return n
        h = 0.5 * e
        x0 = ncorner[n, 0]
        y0 = ncorner[n, 1]
        z0 = ncorner[n, 2]
        ox = x0 + h if x >= x0 + h else x0
        oy = y0 + h if y >= y0 + h else y0
        oz = z0 + h if z >= z0 + h else z0
        ch = nint[n, CHILD]
        _prefetch_siblings(ncorner, meta, ch)  # a move to a neighbouring node walks them: one miss, not four
        while ch >= 0:
            if ncorner[ch, 0] == ox and ncorner[ch, 1] == oy and ncorner[ch, 2] == oz:
                break
            ch = nint[ch, SIB]
        if ch < 0:
            if not create:
                return -1
            ch = new_node(nint, nlev, ncorner, nq, meta, np.int64(n), nlev[n] - 1, ox, oy, oz)
        n = ch


@njit_noref
def grow_root(nint, nlev, ncorner, nq, meta, x, y, z, r, lo3, hi3, q6):
    """Wrap the root in new parents until it holds centre (x, y, z) and radius r. Returns False,
    changing nothing, when the grown root's corners would no longer be exact (or its level would
    pass 254): the caller then rebuilds the tree on a root fitted to everything."""
    root = meta[ROOT]
    lev = nlev[root]
    e = EDGE[lev]
    x0 = ncorner[root, 0]
    y0 = ncorner[root, 1]
    z0 = ncorner[root, 2]
    steps = 0
    limit = EXACT * EDGE[meta[SNAP_LEV]]
    # first check that the whole growth is possible (at most 254 doublings)
    while not (r <= 0.5 * e and x0 <= x and x < x0 + e and y0 <= y and y < y0 + e and z0 <= z and z < z0 + e):
        if lev >= 254:
            return False
        x0 = x0 - e if x < x0 else x0
        y0 = y0 - e if y < y0 else y0
        z0 = z0 - e if z < z0 else z0
        e *= 2.0
        lev += 1
        steps += 1
        if max(abs(x0), abs(y0), abs(z0)) + e > limit:
            return False
    for _ in range(steps):
        root = meta[ROOT]
        e = EDGE[nlev[root]]
        x0 = ncorner[root, 0]
        y0 = ncorner[root, 1]
        z0 = ncorner[root, 2]
        nx = x0 - e if x < x0 else x0
        ny = y0 - e if y < y0 else y0
        nz = z0 - e if z < z0 else z0
        top = new_node(nint, nlev, ncorner, nq, meta, np.int64(-1), nlev[root] + 1, nx, ny, nz)
        nint[root, PARENT] = top
        nint[top, CHILD] = root
        nint[root, SIB] = -1
        meta[ROOT] = top
        if nq[root, 6] <= nq[root, 9]:
            decode(ncorner, nlev, nq, root, np.int64(6), lo3, hi3)
            quantise(ncorner, nlev, top, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
            _union_q(nq, top, np.int64(6), q6)
    return True


# ----------------------------------------------------------------------------- updates


@njit_noref
def insert_one(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, x, y, z, r, scratch, iscratch):
    """Insert object id i. Returns 0; 1 when the object pool is full, 2 when the root cannot grow
    to hold it exactly (nothing was stored: grow the pool, or rebuild, and call again)."""
    lo3 = scratch[0:3]
    hi3 = scratch[3:6]
    q6 = iscratch[0:6]
    n = place(nint, nlev, ncorner, nq, meta, meta[ROOT], x, y, z, r, np.int64(NO_TOP), np.bool_(True))
    if n < 0:
        if not grow_root(nint, nlev, ncorner, nq, meta, x, y, z, r, lo3, hi3, q6):
            return 2
        n = place(nint, nlev, ncorner, nq, meta, meta[ROOT], x, y, z, r, np.int64(NO_TOP), np.bool_(True))
    if not append_obj(nint, obj, oid, ids, meta, bfree, n, i, x, y, z, r):
        out6 = iscratch[6:12]
        cleanup(nint, nlev, ncorner, nq, meta, n, lo3, hi3, q6, out6, np.bool_(False))
        return 1
    meta[NOBJ] += 1
    _obj_box(obj, np.int64(ids[i, 0]), lo3, hi3)
    expand_up(nint, nlev, ncorner, nq, n, lo3, hi3, q6, np.bool_(True), np.int64(NO_TOP))
    return 0


@njit_noref
def _touches(q6, nq, n):
    for a in range(3):
        if q6[a] <= nq[n, a] or q6[3 + a] >= nq[n, 3 + a]:
            return True
    return False


@njit_noref
def remove_one(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, scratch, iscratch):
    lo3 = scratch[0:3]
    hi3 = scratch[3:6]
    q6 = iscratch[0:6]
    out6 = iscratch[6:12]
    s = np.int64(ids[i, 0])  # int64 node ids and slots: each helper compiles once
    n = np.int64(ids[i, 1])
    _obj_box(obj, s, lo3, hi3)
    quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
    unlink_obj(nint, obj, oid, ids, bfree, n, s)
    drop_aux(nq, n)
    ids[i, 0] = -1
    ids[i, 1] = -1
    meta[NOBJ] -= 1
    if _touches(q6, nq, n):
        recompute_own(nint, nlev, ncorner, nq, obj, n, lo3, hi3, q6)
    cleanup(nint, nlev, ncorner, nq, meta, n, lo3, hi3, q6, out6, np.bool_(True))


@njit_noref(inline="always")
def _grow_ahead(lo3, hi3, r, dx, dy, dz):
    """Widen a moved sphere's box [lo3, hi3] by SLACK radii, and by LEAD times its displacement
    (dx, dy, dz) on the side it moves to."""
    slack = SLACK * r
    lo3[0] -= slack + LEAD * max(0.0, -dx)
    hi3[0] += slack + LEAD * max(0.0, dx)
    lo3[1] -= slack + LEAD * max(0.0, -dy)
    hi3[1] += slack + LEAD * max(0.0, dy)
    lo3[2] -= slack + LEAD * max(0.0, -dz)
    hi3[2] += slack + LEAD * max(0.0, dz)


@njit_noref(inline="always")
def _in_node(nint, nlev, ncorner, nq, obj, n, s, x, y, z, r, lo3, hi3, q6, top):
    """Move slot s to (x, y, z, r) within its node n (it :func:`fits` there): O(1). Store the row; when the
    sphere leaves n's own box, grow that box ahead of it (SLACK, LEAD: it never shrinks here) and the subtree
    boxes up the path as far as they must, up to level ``top`` (see :func:`expand_up`). Returns -2 when no
    box grew, else :func:`expand_up`'s answer (a growth, which the caller counts for refit)."""
    cnt = nint[n, COUNT]
    dx = x - obj[s, 0]
    dy = y - obj[s, 1]
    dz = z - obj[s, 2]
    obj[s, 0] = x
    obj[s, 1] = y
    obj[s, 2] = z
    obj[s, 3] = r
    if cnt >= AUX_MIN:
        drop_aux(nq, n)
    _obj_box(obj, s, lo3, hi3)
    quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
    if _contains_q(nq, n, np.int64(0), q6):
        return np.int64(-2)
    _grow_ahead(lo3, hi3, r, dx, dy, dz)
    return expand_up(nint, nlev, ncorner, nq, n, lo3, hi3, q6, np.bool_(True), top)


@njit_noref(inline="always")
def _leave(nint, nlev, ncorner, nq, obj, oid, ids, bfree, i, n, s, t, ox, oy, oz, old_touch, lo3, hi3, q6, top):
    """The rest of a move of object i from slot s of node n to node t, once appended there (the sphere
    was at (ox, oy, oz); ``old_touch``: its box touched n's own box): unlink it from n, recompute n's own
    box if few objects are left to make it, and grow t's boxes ahead of it up to level ``top``. Returns
    :func:`expand_up`'s answer."""
    unlink_obj(nint, obj, oid, ids, bfree, n, s)
    drop_aux(nq, n)
    if old_touch and nint[n, COUNT] <= 4:
        recompute_own(nint, nlev, ncorner, nq, obj, n, lo3, hi3, q6)
    s = np.int64(ids[i, 0])
    _obj_box(obj, s, lo3, hi3)
    _grow_ahead(lo3, hi3, obj[s, 3], obj[s, 0] - ox, obj[s, 1] - oy, obj[s, 2] - oz)
    return expand_up(nint, nlev, ncorner, nq, t, lo3, hi3, q6, np.bool_(True), top)


@njit_noref(inline="always")
def _old_box(nlev, ncorner, nq, obj, n, s, lo3, hi3, q6):
    """Does the sphere in slot s, about to leave node n, touch n's own box (which must then be recomputed)?"""
    _obj_box(obj, s, lo3, hi3)
    quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
    return _touches(q6, nq, n)


@njit_noref(inline="always")  # into move_many: a call passing 15 arrays costs more than a move in place
def move_one(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, x, y, z, r, scratch, iscratch):
    """Move object i in place: O(1) while it stays in its node. Returns 0; 1 when the pool is full,
    2 when the root cannot grow to hold the target exactly (the object is then left where it was,
    unchanged)."""
    lo3 = scratch[0:3]
    hi3 = scratch[3:6]
    q6 = iscratch[0:6]
    out6 = iscratch[6:12]
    s = np.int64(ids[i, 0])  # int64 node ids and slots: each helper compiles once
    n = np.int64(ids[i, 1])
    if fits(nint, nlev, ncorner, meta, n, x, y, z, r):
        if _in_node(nint, nlev, ncorner, nq, obj, n, s, x, y, z, r, lo3, hi3, q6, np.int64(NO_TOP)) != -2:
            meta[LOOSE] += 1
        return 0
    old_touch = _old_box(nlev, ncorner, nq, obj, n, s, lo3, hi3, q6)
    # re-place starting from the same node, append there, then unlink from the old block, clean up last
    ox, oy, oz = obj[s, 0], obj[s, 1], obj[s, 2]
    t = place(nint, nlev, ncorner, nq, meta, n, x, y, z, r, np.int64(NO_TOP), np.bool_(True))
    if t < 0:
        if not grow_root(nint, nlev, ncorner, nq, meta, x, y, z, r, lo3, hi3, q6):
            return 2
        t = place(nint, nlev, ncorner, nq, meta, meta[ROOT], x, y, z, r, np.int64(NO_TOP), np.bool_(True))
    # appended before it is unlinked: when the pool has no room the object is still where it was, whole (an
    # unlink first freed its block when it was the last in it, and putting it back asked the pool for a block
    # of the smallest size, which a full pool may not have: the object was lost and its id's row left stale)
    if not append_obj(nint, obj, oid, ids, meta, bfree, t, i, x, y, z, r):
        cleanup(nint, nlev, ncorner, nq, meta, t, lo3, hi3, q6, out6, np.bool_(False))
        return 1
    _leave(nint, nlev, ncorner, nq, obj, oid, ids, bfree, i, n, s, t, ox, oy, oz, old_touch, lo3, hi3, q6,
           np.int64(NO_TOP))
    cleanup(nint, nlev, ncorner, nq, meta, n, lo3, hi3, q6, out6, np.bool_(False))
    return 0


@njit_noref(inline="always")
def _move_within(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, x, y, z, r, lo3, hi3, q6, top):
    """:func:`move_one` for the shared part of pass 2 (:func:`_local_run`), when the move changes nothing
    outside the subtree of its node's ancestor on level ``top``: it creates or frees no node, takes or
    frees no block, and grows no box above that ancestor. Returns -3, changing nothing, when it would do
    any of those (the serial pass makes it); -2 when it grew no box; else :func:`expand_up`'s answer (a
    growth: -1, or that ancestor when its box grew, the boxes above it then the caller's to grow)."""
    s = np.int64(ids[i, 0])
    n = np.int64(ids[i, 1])
    if fits(nint, nlev, ncorner, meta, n, x, y, z, r):
        return _in_node(nint, nlev, ncorner, nq, obj, n, s, x, y, z, r, lo3, hi3, q6, top)
    if nint[n, COUNT] == 1:  # its node would empty: freeing nodes and blocks is the serial pass's
        return np.int64(-3)
    t = np.int64(place(nint, nlev, ncorner, nq, meta, n, x, y, z, r, top, np.bool_(False)))
    if t < 0 or nint[t, COUNT] == nint[t, SIZE]:  # above ``top``, a new node, or a new block
        return np.int64(-3)
    old_touch = _old_box(nlev, ncorner, nq, obj, n, s, lo3, hi3, q6)
    ox, oy, oz = obj[s, 0], obj[s, 1], obj[s, 2]
    append_obj(nint, obj, oid, ids, meta, bfree, t, i, x, y, z, r)
    p = _leave(nint, nlev, ncorner, nq, obj, oid, ids, bfree, i, n, s, t, ox, oy, oz, old_touch, lo3, hi3, q6, top)
    return p if p >= 0 else np.int64(-1)  # (the node it left keeps objects: cleanup would only count a growth)


@njit_noref(inline="always")
def _stays(nint, nlev, ncorner, nq, aux_end, aux_q, meta, n, s, x, y, z, r):
    """Does the sphere in slot s moving to (x, y, z, r) stay in node n (as :func:`fits` says: centre
    in its box, radius in its band or n a bucket leaf) and inside the box that holds it: its octant
    run's when s lies in one of n's runs, else n's own box? Storing its row is then the whole move:
    the run's box lies in the own box (both quantised outward on n's grid, the own box never
    shrinking while the runs last), and so in every box above (each holds its children's).
    False may be wrong (then the general move decides): :func:`_box_holds` compares unrounded cells."""
    e = EDGE[nlev[n]]
    c0 = ncorner[n, 0]
    c1 = ncorner[n, 1]
    c2 = ncorner[n, 2]
    if not (c0 <= x and x < c0 + e and c1 <= y and y < c1 + e and c2 <= z and z < c2 + e and r <= 0.5 * e):
        return False
    if r < 0.25 * e and not _bucket(nint, n, np.int64(BUCKET)) and not finest(nlev, ncorner, meta, n):
        return False
    a = aux_of(nq, n) - 1
    if a >= 0:
        rel = s - nint[n, START]
        if rel < aux_end[a, 7]:
            j = 0
            while aux_end[a, j] <= rel:
                j += 1
            return _box_holds(aux_q, a, 6 * j, c0, c1, c2, e, x, y, z, r)
    return _box_holds(nq, n, 0, c0, c1, c2, e, x, y, z, r)


@njit_noref(inline="always")
def _box_holds(q, row, off, c0, c1, c2, e, x, y, z, r):
    """Does the box quantised on the grid of the node at corner (c0, c1, c2), edge e, at
    ``q[row, off:off + 6]``, hold the sphere's box as :func:`quantise` would make it? True is sure:
    the cells are compared before ``quantise`` truncates them, with its margins."""
    h = 0.5 * e
    inv = 128.0 / e
    dn = 1.0 - 2.0**-50
    up = 1.0 + 2.0**-50
    m = _margin(x, r)
    if ((x - r) - m - (c0 - h)) * inv * dn < q[row, off] or ((x + r) + m - (c0 - h)) * inv * up >= q[row, off + 3] + 1.0:
        return False
    m = _margin(y, r)
    if ((y - r) - m - (c1 - h)) * inv * dn < q[row, off + 1] or ((y + r) + m - (c1 - h)) * inv * up >= q[row, off + 4] + 1.0:
        return False
    m = _margin(z, r)
    if ((z - r) - m - (c2 - h)) * inv * dn < q[row, off + 2] or ((z + r) + m - (c2 - h)) * inv * up >= q[row, off + 5] + 1.0:
        return False
    return True


@njit_noref
def move_single(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, x, y, z, r, scratch, iscratch):
    """One move from Python (``Octree.move``): :func:`move_one` (radius kept when ``r`` is NaN)
    behind the node-room check, then the refit test, in one call instead of three. Returns
    :func:`move_one`'s code (0 done, 1 pool full, 2 rebuild), 3 when the node pool needs room
    first (nothing done), 4 when done and a step of the refit is due (``REFIT_CHUNK`` growths counted)."""
    if meta[NODE_TOP] + NODE_RESERVE > meta[NODE_CAP]:
        return 3
    if r != r:
        r = obj[ids[i, 0], 3]
    code = move_one(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, x, y, z, r, scratch, iscratch)
    if code == 0 and meta[LOOSE] >= REFIT_CHUNK:
        return 4
    return code


@njit_noref
def stay_run(nint, nlev, ncorner, nq, aux, obj, ids, meta, mids, xyz, rad, top, rest, own, lid, val, c, chunks):
    """Pass 1 of a batch, run c of ``chunks`` (consecutive moves, each a thread's in :func:`on_threads`:
    the moves write distinct rows and only read the nodes): make every move that stays in its node and
    inside its own box, or its octant run's (store the row, nothing else: see :func:`_stays`), and write
    the positions k of the others into ``rest`` (M,) int64 from the run's first position on, in order;
    returns their number. Beside each position, for pass 2 (:func:`_local_run`): in ``own`` (M,) int64 the
    thread that may make the move there (:func:`part_owner` on level ``top``), in ``lid`` (M,) int64 its id
    and in ``val`` (M, 4) float64 its centre and radius (NaN resolved). Never fails (nothing is allocated).
    ``aux``: the raw octant-run rows (see :func:`aux_views`)."""
    aux_end, aux_q = aux_views(aux)
    m = mids.shape[0]
    root = np.int64(meta[ROOT])
    lo = m * c // chunks
    hi = m * (c + 1) // chunks
    d = lo
    for k in range(lo, hi):
        # prefetch in stages: the id row of the move 16 ahead, then (its row now cached) the
        # object and node of the move 8 ahead, so their misses overlap with this move's work
        if k + 16 < hi:
            prefetch(ids, mids[k + 16], 0)
        if k + 8 < hi:
            i8 = mids[k + 8]
            prefetch(obj, ids[i8, 0], 0)
            prefetch(ncorner, ids[i8, 1], 0)
        i = mids[k]
        s = np.int64(ids[i, 0])  # (int64 as the other callers' node ids: one compile of each helper)
        n = np.int64(ids[i, 1])
        r = rad[k]
        if r != r:
            r = obj[s, 3]
        x = xyz[k, 0]
        y = xyz[k, 1]
        z = xyz[k, 2]
        if _stays(nint, nlev, ncorner, nq, aux_end, aux_q, meta, n, s, x, y, z, r):
            obj[s, 0] = x
            obj[s, 1] = y
            obj[s, 2] = z
            obj[s, 3] = r
        else:
            rest[d] = k
            own[d] = part_owner(nlev, ncorner, n, top, root, chunks)
            lid[d] = i
            val[d, 0] = x
            val[d, 1] = y
            val[d, 2] = z
            val[d, 3] = r
            d += 1
    return d - lo


@numba.njit(cache=CACHE, nogil=True, parallel=True)
def on_threads(local, nint, nlev, ncorner, nq, aux, obj, oid, ids, meta, bfree, mids, xyz, rad, top, rest, own, lid,
               val, starts, left, done, ups, upbox, grew, scratch, iscratch, mine):
    """A large batch's two parallel steps, thread c of ``left.shape[0]`` each (one parallel kernel for both:
    each costs seconds to compile). Pass 1 (``local`` False): :func:`stay_run` of run c, its count into
    ``left[c]``. Pass 2's shared part (``local`` True): :func:`_local_run`, thread c's growths into
    ``grew[c]``, with ``scratch[c]`` (16 float64), ``iscratch[c]`` (16 int64: rows of whole cache lines) and
    ``mine[c]`` (as many int64 as pass 1 left) its own. The arguments one step does not read may be empty
    arrays."""
    chunks = left.shape[0]
    for c in prange(chunks):
        if local:
            grew[c] = _local_run(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, top, starts, left, own, lid, val,
                                 done, ups, upbox, scratch[c], iscratch[c], mine[c], np.int64(c))
        else:
            left[c] = stay_run(nint, nlev, ncorner, nq, aux, obj, ids, meta, mids, xyz, rad, top, rest, own, lid, val,
                               np.int64(c), np.int64(chunks))


@njit_noref(inline="always")
def _prefetch_moves(nint, ncorner, obj, ids, meta, mids, order, j, m):
    """Prefetch for a pass-2 move order[j] (of order[:m]) in stages, each using what the previous one
    brought in: the id row of the move 16 ahead; the object and node of the move 8 ahead; the parent of
    the move 4 ahead (a move leaving its node climbs to it); the parent's children of the move 2 ahead (it
    walks them down to the target node) and the last row of its block (the swap-remove reads it)."""
    if j + 16 < m:
        prefetch(ids, mids[order[j + 16]], 0)
    if j + 8 < m:
        i8 = mids[order[j + 8]]
        prefetch(obj, ids[i8, 0], 0)
        prefetch(ncorner, ids[i8, 1], 0)
    if j + 4 < m:
        p = nint[ids[mids[order[j + 4]], 1], PARENT]
        if p >= 0:
            prefetch(ncorner, p, 0)
    if j + 2 < m:
        n2 = ids[mids[order[j + 2]], 1]
        prefetch(obj, nint[n2, START] + nint[n2, COUNT] - 1, 0)
        p = nint[n2, PARENT]
        if p >= 0:
            c = nint[p, CHILD]
            if c >= 0:
                for t in range(8):
                    if c + t < meta[NODE_TOP]:
                        prefetch(ncorner, c + t, 0)


@njit_noref
def move_many(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, mids, xyz, rad, order, start, scratch, iscratch):
    """Move objects mids[k] to xyz[k] with radius rad[k] (NaN: keep) for k = order[j], j from
    ``start`` on (pass 2 of a batch: the moves :func:`stay_run` left). Returns the j it stopped at:
    the end, or the first move it could not make because the node or object pool ran short or the
    root could not grow exactly (the caller grows the pools or rebuilds, and continues from there)."""
    m = order.shape[0]
    for j in range(start, m):
        if meta[NODE_TOP] + NODE_RESERVE > meta[NODE_CAP]:
            return j
        _prefetch_moves(nint, ncorner, obj, ids, meta, mids, order, j, m)
        k = order[j]
        i = mids[k]
        r = rad[k]
        if r != r:
            r = obj[ids[i, 0], 3]
        x, y, z = xyz[k, 0], xyz[k, 1], xyz[k, 2]
        if move_one(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, i, x, y, z, r, scratch, iscratch):
            return j
    return m


@njit_noref
def part_level(nlev, nq, meta):
    """The level of the cells pass 2 shares among the threads (:func:`part_owner`): about ``PART_CELLS`` of
    them across the widest side of the root's subtree box (what the world fills, not the root's edge, which
    growth doubles), and at most ``2^PART_BITS`` a side of the root. A move whose node lies above that
    level, or which leaves its cell, is the serial pass's."""
    root = meta[ROOT]
    side = np.int64(1)  # the box's widest side in steps of the root's grid (edge / 128)
    for a in range(3):
        side = max(side, np.int64(nq[root, 9 + a]) - np.int64(nq[root, 6 + a]) + 1)
    b = 0  # levels below the root
    while (side << b) < PART_CELLS * 128 and b < PART_BITS:
        b += 1
    return np.int64(nlev[root]) - b


@njit_noref(inline="always")
def part_owner(nlev, ncorner, n, top, root, chunks):
    """Which of ``chunks`` threads may make pass 2's moves from node n (:func:`_local_run`): by the cell on
    level ``top`` (:func:`part_level`) that holds n, (x + y + z) mod chunks in cells from the root's corner,
    so neighbouring cells alternate; -1 when n lies above level ``top``. Exact: a corner less the root's
    is a whole number of n's edges, and ``EDGE[top]`` a power of two."""
    if nlev[n] > top:
        return np.int64(-1)
    e = EDGE[top]
    kx = np.int64((ncorner[n, 0] - ncorner[root, 0]) / e)
    ky = np.int64((ncorner[n, 1] - ncorner[root, 1]) / e)
    kz = np.int64((ncorner[n, 2] - ncorner[root, 2]) / e)
    return (kx + ky + kz) % chunks


@njit_noref
def _local_run(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, top, starts, left, own, lid, val, done, ups,
               upbox, scratch, iscratch, mine, c):
    """Thread c's part of pass 2's shared step (:func:`on_threads`): the moves pass 1 left (:func:`stay_run`:
    at j in [starts[q], starts[q] + left[q]) for each of its runs q) that stay in the cell on level ``top`` of
    their node's ancestor, within its subtree. Thread c makes those with ``own[j] == c``
    (:func:`part_owner`), so no two threads touch one node, block or object (:func:`_move_within`).
    ``done[j]`` (uint8) says whether a thread made move j (the serial pass makes the rest:
    :func:`local_rest`); for one made, ``ups[j]`` (int64) is :func:`_move_within`'s answer and, when that is
    a cell's node whose box grew, ``upbox[j]`` (6 float64) the sphere's box to grow the boxes above it by.
    ``scratch`` (6+,) float64 and ``iscratch`` (6+,) int64: the thread's own; ``mine`` (L+,) int64 receives
    its records' positions first, so that its prefetches (:func:`_prefetch_moves`) reach its own moves ahead.
    Returns its growths; nothing is allocated."""
    lo3 = scratch[0:3]
    hi3 = scratch[3:6]
    q6 = iscratch[0:6]
    m = 0
    for q in range(starts.shape[0]):
        for j in range(starts[q], starts[q] + left[q]):
            if own[j] == c:
                mine[m] = j
                m += 1
            elif own[j] < 0 and c == 0:
                done[j] = 0
    g = 0
    for t in range(m):
        _prefetch_moves(nint, ncorner, obj, ids, meta, lid, mine, t, m)
        j = mine[t]
        p = _move_within(nint, nlev, ncorner, nq, obj, oid, ids, meta, bfree, lid[j], val[j, 0], val[j, 1], val[j, 2],
                         val[j, 3], lo3, hi3, q6, top)
        done[j] = p != -3
        ups[j] = p
        if p >= 0:
            for a in range(3):
                upbox[j, a] = lo3[a]
                upbox[j, 3 + a] = hi3[a]
        if p != -2 and p != -3:
            g += 1
    return g


@njit_noref
def local_rest(nint, nlev, ncorner, nq, meta, starts, left, rest, done, ups, upbox, grew, scratch, iscratch, out):
    """After pass 2's shared step (:func:`_local_run`): grow the subtree boxes above each cell whose box grew,
    as far as they must, count the threads' growths in ``meta[LOOSE]``, and write the positions ``rest[j]`` of
    the moves it left into ``out``, in order. Returns their number."""
    lo3 = scratch[0, 0:3]
    hi3 = scratch[0, 3:6]
    q6 = iscratch[0, 0:6]
    for c in range(grew.shape[0]):
        meta[LOOSE] += grew[c]
    d = 0
    for q in range(starts.shape[0]):
        for j in range(starts[q], starts[q] + left[q]):
            if not done[j]:
                out[d] = rest[j]
                d += 1
            elif ups[j] >= 0:
                p = np.int64(nint[ups[j], PARENT])
                if p >= 0:
                    for a in range(3):
                        lo3[a] = upbox[j, a]
                        hi3[a] = upbox[j, 3 + a]
                    expand_up(nint, nlev, ncorner, nq, p, lo3, hi3, q6, np.bool_(False), np.int64(NO_TOP))
    return d


# ----------------------------------------------------------------------------- query


@njit_noref(inline="always")
def node_views(node):
    """The views ``nint, nlev, ncorner, nq`` of the (cap, NODE_BYTES) uint8 node rows (see the layout
    constants at the top)."""
    return (node.view(np.int32)[:, NINT_I32:NINT_I32 + 6], node[:, LEV_BYTE], node.view(np.float64)[:, 0:3],
            node[:, NQ_BYTE:NQ_BYTE + 15])


@njit_noref(inline="always")
def aux_views(aux):
    """The views ``aux_end, aux_q`` of the (cap, AUX_BYTES) uint8 octant-run rows."""
    return aux.view(np.int32)[:, 0:8], aux[:, AUX_Q_BYTE:AUX_Q_BYTE + 48]


@njit_noref
def query(px, py, pz, node, obj, oid, aux, meta, out, work, stats):
    """Ids of the spheres holding (px, py, pz) into ``out``; returns the count (which may exceed
    out.size: only the first out.size are written). stats (4,) int64 receives candidates,
    visible, nodes visited, max nodes on one level. ``node`` (cap, 64) and ``aux`` (cap, 80) uint8 are
    the raw node and octant-run rows: their views are made here (the layout of ``Octree._set_nodes``
    and ``_set_aux``), because numba's dispatch checks each strided view passed from Python, on every call
    of a query short enough to feel it.
    ``work`` (WORK,) int32: nodes visited per depth below the root in [0, DEPTHS), all zero between
    calls, then the depth-first stack (one array: its first lines are the ones a query touches)."""
    nint, nlev, ncorner, nq = node_views(node)
    aux_end, aux_q = aux_views(aux)
    k = np.int64(0)
    cand = 0
    visited = 0
    deep = 0
    root = meta[ROOT]
    rlev = nlev[root]
    top = DEPTHS
    if _holds(nlev, ncorner, nq, root, np.int64(6), px, py, pz):
        work[top] = root
        top += 1
    while top > DEPTHS:
        top -= 1
        n = np.int64(work[top])
        visited += 1
        d = rlev - nlev[n]
        work[d] += 1
        if d > deep:
            deep = d
        cnt = nint[n, COUNT]
        if cnt > 0 and _holds(nlev, ncorner, nq, n, np.int64(0), px, py, pz):
            s0 = np.int64(nint[n, START])
            a = aux_of(nq, n) - 1
            if a < 0:
                cand += cnt
                k = _scan(px, py, pz, obj, oid, s0, s0 + cnt, out, k)
            else:
                # octant runs, each tested against its own box, then the unsorted tail
                prev = s0
                for j in range(8):
                    e = s0 + aux_end[a, j]
                    if e > prev and _holds_run(nlev, ncorner, aux_q, a, j, n, px, py, pz):
                        cand += e - prev
                        k = _scan(px, py, pz, obj, oid, prev, e, out, k)
                    prev = e
                if prev < s0 + cnt:
                    cand += s0 + cnt - prev
                    k = _scan(px, py, pz, obj, oid, prev, s0 + cnt, out, k)
        c = nint[n, CHILD]
        _prefetch_siblings(ncorner, meta, c)
        while c >= 0:
            if _holds(nlev, ncorner, nq, np.int64(c), np.int64(6), px, py, pz):
                _prefetch_entry(nint, ncorner, obj, oid, meta, c)
                work[top] = c
                top += 1
            c = nint[c, SIB]
    most = 0
    for d in range(deep + 1):
        most = max(most, work[d])
        work[d] = 0
    stats[0] = cand
    stats[1] = k
    stats[2] = visited
    stats[3] = most
    return k


@njit_noref
def _prefetch_entry(nint, ncorner, obj, oid, meta, c):
    """Start loading what a visit of node ``c`` reads first, when ``c`` is pushed: its children's rows
    (the first 4 of them: siblings usually sit in consecutive rows) and the head of its
    object block (16 rows and their ids). A query's misses then overlap across the nodes it will
    visit instead of waiting one after another (a query with cold caches spends most of its time on those
    misses)."""
    g = nint[c, CHILD]
    if g >= 0:
        for j in range(4):
            if g + j < meta[NODE_TOP]:
                prefetch(ncorner, g + j, 0)
    cnt = nint[c, COUNT]
    if cnt > 0:
        s = nint[c, START]
        prefetch(oid, s, 0)
        if cnt > 16:
            prefetch(oid, s + 16, 0)
        for j in range(0, min(cnt, 16), 2):
            prefetch(obj, s + j, 0)


@njit_noref
def _scan(px, py, pz, obj, oid, s0, s1, out, k):
    """Test slots s0..s1 exactly; write hits into out from position k (while it has room)."""
    cap = out.shape[0]
    if k + (s1 - s0) <= cap:
        # room for every slot: write each id and advance on a hit, with no branch on the predicate.
        # (Chunks of 16 tested into a bit mask, compaction skipped for an empty one, were several
        # times slower than this at the hit rates of real queries, their branches mispredicted, and
        # only a little faster where almost nothing hits.)
        for s in range(s0, s1):
            dx = px - obj[s, 0]
            dy = py - obj[s, 1]
            dz = pz - obj[s, 2]
            r = obj[s, 3]
            out[k] = oid[s]
            k += (dx * dx + dy * dy) + dz * dz <= r * r
        return k
    for s in range(s0, s1):
        dx = px - obj[s, 0]
        dy = py - obj[s, 1]
        dz = pz - obj[s, 2]
        r = obj[s, 3]
        if (dx * dx + dy * dy) + dz * dz <= r * r:
            if k < cap:
                out[k] = oid[s]
            k += 1
    return k


@njit_noref
def _holds_run(nlev, ncorner, aux_q, a, j, n, px, py, pz):
    """Is the point in the box of octant run j of node n (aux row a)?"""
    return _in_qbox(aux_q, a, 6 * j, nlev, ncorner, n, px, py, pz)


@njit_noref
def _holds(nlev, ncorner, nq, n, off, px, py, pz):
    """Is the point in node n's own (``off`` 0) or subtree (6) box, and is that box not empty?"""
    return _in_qbox(nq, n, off, nlev, ncorner, n, px, py, pz) and nq[n, off] <= nq[n, off + 3]


@njit_noref
def _in_qbox(q, row, off, nlev, ncorner, n, px, py, pz):
    """Is the point in the box quantised on node n's grid at ``q[row, off:off + 6]`` (widened by a
    trillionth of the edge)?"""
    e = EDGE[nlev[n]]
    step = e * INV_STEPS
    slack = e * 1e-12
    b = ncorner[n, 0] - 0.5 * e
    if px < b + q[row, off] * step - slack or px > b + (q[row, off + 3] + 1) * step + slack:
        return False
    b = ncorner[n, 1] - 0.5 * e
    if py < b + q[row, off + 1] * step - slack or py > b + (q[row, off + 4] + 1) * step + slack:
        return False
    b = ncorner[n, 2] - 0.5 * e
    if pz < b + q[row, off + 2] * step - slack or pz > b + (q[row, off + 5] + 1) * step + slack:
        return False
    return True


# ----------------------------------------------------------------------------- bulk build


@njit_noref
def _cell(c, x0, cell, scale, top):
    """The cell of coordinate c on the grid x0 + q * cell, q in 0..top: the float product may be off
    by one near a cell boundary; the corrections compare with exact bounds (see PREC and the
    caller's choice of ``cell``)."""
    q = int((c - x0) * scale)
    q = min(max(q, 0), top)
    while q > 0 and x0 + q * cell > c:
        q -= 1
    while q < top and x0 + (q + 1) * cell <= c:
        q += 1
    return q


@njit_noref
def bounds(centres, radii, live, out6):
    """The box of the centres live[j] into out6 (lo x, y, z, hi x, y, z) and, returned, their largest
    radius: one pass (numpy's axis reductions on (N, 3) take three strided passes)."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    rmax = 0.0
    for j in range(live.shape[0]):
        i = live[j]
        x = centres[i, 0]
        y = centres[i, 1]
        z = centres[i, 2]
        lo0 = min(lo0, x)
        hi0 = max(hi0, x)
        lo1 = min(lo1, y)
        hi1 = max(hi1, y)
        lo2 = min(lo2, z)
        hi2 = max(hi2, z)
        rmax = max(rmax, radii[i])
    out6[0] = lo0
    out6[1] = lo1
    out6[2] = lo2
    out6[3] = hi0
    out6[4] = hi1
    out6[5] = hi2
    return rmax


@njit_noref
def morton_keys(centres, radii, live, x0, y0, z0, root_lev, dmax, bits, keys, dep):
    """keys[j] = the 63-bit Morton code (21 bits an axis, x lowest in each 3-bit group) of centre
    live[j] on a grid of 2^bits cells an axis over the root box, shifted up to 21 bits; dep[j] the
    depth below the root of its radius band (the first depth whose quarter edge is at most the
    radius), at most ``dmax``. ``bits`` is small enough that every cell bound is an exact float, so a
    key's cell at each depth is exactly the node that holds the centre."""
    edge = EDGE[root_lev]
    cell = edge / (1 << bits)
    scale = (1 << bits) / edge
    top = (1 << bits) - 1
    sh = 21 - bits
    lv = root_lev - 128  # edge = 2^lv, a quarter of the edge at depth d is 2^(lv - 2 - d)
    for j in range(live.shape[0]):
        i = live[j]
        qx = np.int64(_cell(centres[i, 0], x0, cell, scale, top)) << sh
        qy = np.int64(_cell(centres[i, 1], y0, cell, scale, top)) << sh
        qz = np.int64(_cell(centres[i, 2], z0, cell, scale, top)) << sh
        keys[j] = spread3(qx) | (spread3(qy) << 1) | (spread3(qz) << 2)
        r = radii[i]
        if r > 0.0:
            ex = math.frexp(r)[1]  # 2^(ex - 1) <= r < 2^ex: r >= 2^(lv - 2 - d) iff d >= lv - 1 - ex
            dep[j] = min(max(lv - 1 - ex, 0), dmax)
        else:
            dep[j] = dmax


@njit
def trie_walk(place, srt, keys, dep, order, root_lev, min_lev, x0, y0, z0, bits, t_count, per_depth, late,
              centres, radii, nint, nlev, ncorner, nq, obj, oid, ids, meta):
    """The bulk build's two walks over the objects in Morton order: the j-th has key
    ``keys[srt[j]]``, band depth ``dep[srt[j]]`` and id ``order[j]`` (read through ``srt``, with
    prefetches, rather than gathered into sorted copies: fewer passes and fresh pages). Each object goes to the node of its radius band on its key's
    path, and the nodes of the path that do not exist yet are created. The current path is a stack,
    so an object costs a few integer comparisons (no float containment tests, no child searches).
    Nodes are created depth-first, in Morton order within each depth; t numbers them.

    Bucket leaves: a node whose subtree holds at most ``BUCKET`` objects keeps them all and its
    descendants are dropped. A node's subtree is complete when the walk leaves it, and subtree counts
    only grow upwards, so a node is kept iff it is the root or its parent's subtree holds more; the
    count walk forgets a bucket's descendants when it leaves the bucket (they were numbered last), so
    t numbers only the kept nodes (and, for a while, a few below an open node).

    ``place`` False (count): ``t_count[t]`` (cap,) int32 gets kept node t's block size: its own
    objects, or -1 - (its subtree's) if that is at most ``BUCKET`` (a bucket leaf); ``per_depth``
    (25,) the kept nodes of each depth. Returns (kept nodes, objects deeper than the key grid, 0), or
    (-1, 0, 0) when ``t_count`` is full. The node and object arrays are not touched.

    ``place`` True (the same walk again): writes each kept node at its breadth-first row
    (``per_depth``'s prefix sums: a depth's nodes in creation order, so siblings are neighbours),
    links parents, children and siblings, gives it the block after the previous kept node's, of
    :func:`build_room` slots (the pool must hold :func:`build_pool`), and scatters the objects into their blocks (a bucket leaf takes its subtree's); each block
    is thus in Morton order, i.e. sorted by octant. The ids of objects deeper than the key grid go
    to ``late``, for one-by-one insertion. Returns (kept nodes, late objects, kept nodes of at least
    ``AUX_MIN`` objects). Boxes and octant runs are left to :func:`refit` (boxes empty, no runs)."""
    n = srt.shape[0]
    cap = t_count.shape[0]
    E = EDGE[root_lev]
    stack = np.zeros(24, dtype=np.int32)  # the path: node numbers t (count) or rows (place)
    sub = np.zeros(24, dtype=np.int64)  # count: objects so far in the subtree of each path node
    kids = np.zeros(24, dtype=np.int64)  # count: children so far of each path node
    row = np.zeros(25, dtype=np.int64)  # place: the next row of each depth
    if place:
        for d in range(1, 25):
            row[d] = row[d - 1] + per_depth[d - 1]
    else:
        per_depth[:] = 0
        per_depth[0] = 1
    big = max(abs(x0), abs(y0), abs(z0))
    fin = 0 if (root_lev <= min_lev or big > PREC * E) else 99  # depth of a finest node on the path
    bk = 99  # place: depth of a bucket leaf on the path (the nodes below it are dropped)
    pos = 0  # place: the next block start
    aux = 0
    if place:  # the root: node 0, row 0
        size = t_count[0] if t_count[0] >= 0 else -1 - t_count[0]
        bk = 99 if t_count[0] >= 0 else 0
        _trie_node(nint, nlev, ncorner, nq, 0, -1, root_lev, x0, y0, z0, pos, build_room(size))
        pos += build_room(size)
        aux += size >= AUX_MIN
        row[0] = 1
    else:
        t_count[0] = 0
    m = 1
    s = 0  # depth of the current path
    pk = np.int64(0)
    later = 0
    for j in range(n + 1):
        if j == n:
            if not place:
                m = _trie_close(stack, sub, kids, t_count, per_depth, s, 0, m)
            break
        if j + 32 < n:  # keys and objects are in id order: start loading them early
            u = srt[j + 32]
            prefetch(keys, u, 0)
            prefetch(dep, u, 0)
            if place:
                i = order[j + 32]
                prefetch(centres, i, 0)
                prefetch(radii, i, 0)
                prefetch(ids, i, 0)
        u = srt[j]
        k = keys[u]
        d = np.int64(dep[u])
        c = 0
        while c < s and (k >> (60 - 3 * c)) == (pk >> (60 - 3 * c)):
            c += 1
        if not place:
            m = _trie_close(stack, sub, kids, t_count, per_depth, s, c + 1, m)
        if fin > c:
            fin = 99  # the path below c is not this object's
        if bk > c:
            bk = 99
        if fin < d:
            d = fin
        pk = k
        if d <= c:
            s = c
        elif d > bits:
            s = c
            if place:
                late[later] = order[j]
            later += 1
            continue
        else:
            qx = compact3(k)
            qy = compact3(k >> 1)
            qz = compact3(k >> 2)
            for dd in range(c + 1, d + 1):
                ed = EDGE[root_lev - dd]
                sh = 21 - dd
                cx = x0 + (qx >> sh) * ed
                cy = y0 + (qy >> sh) * ed
                cz = z0 + (qz >> sh) * ed
                if not place:
                    if m >= cap:
                        return -1, 0, 0
                    t_count[m] = 0
                    sub[dd] = 0
                    kids[dd] = 0
                    kids[dd - 1] += 1
                    stack[dd] = m
                    m += 1
                elif dd <= bk:  # a kept node
                    b = row[dd]
                    row[dd] = b + 1
                    p = stack[dd - 1]
                    size = t_count[m] if t_count[m] >= 0 else -1 - t_count[m]
                    _trie_node(nint, nlev, ncorner, nq, b, p, root_lev - dd, cx, cy, cz, pos, build_room(size))
                    pos += build_room(size)
                    aux += size >= AUX_MIN
                    if nint[p, CHILD] < 0:
                        nint[p, CHILD] = b
                    else:  # the parent's children are consecutive rows of this depth
                        nint[b - 1, SIB] = b
                    stack[dd] = b
                    if t_count[m] < 0:
                        bk = dd
                    m += 1
                if root_lev - dd <= min_lev or max(abs(cx), abs(cy), abs(cz)) > PREC * ed:
                    fin = dd
                    d = dd
                    break
            s = d
        if place:
            t = stack[min(d, bk)]
            i = order[j]
            sl = nint[t, START] + nint[t, COUNT]
            nint[t, COUNT] += 1
            obj[sl, 0] = centres[i, 0]
            obj[sl, 1] = centres[i, 1]
            obj[sl, 2] = centres[i, 2]
            obj[sl, 3] = radii[i]
            oid[sl] = i
            ids[i, 0] = sl
            ids[i, 1] = t
        else:
            t_count[stack[d]] += 1
            sub[d] += 1
    if place:
        kept = 0
        for d in range(25):
            kept += per_depth[d]
        meta[ROOT] = 0
        meta[NODE_TOP] = kept
        meta[NODE_FREE] = -1
        meta[LIVE_NODES] = kept
        meta[POOL_TOP] = pos
        meta[NOBJ] = n - later
        return kept, later, aux
    return m, later, 0


@njit_noref(inline="always")
def _trie_close(stack, sub, kids, t_count, per_depth, s, c, m):
    """The count walk leaves the path's nodes at depths s down to c: their subtree counts are final.
    A node holding more than ``BUCKET`` keeps its children (all kept, like itself); one holding at
    most becomes a bucket leaf (if kept) and its descendants, numbered after it, are forgotten.
    Returns the next node number."""
    for dd in range(s, c - 1, -1):
        t = stack[dd]
        if sub[dd] > BUCKET:
            per_depth[dd + 1] += kids[dd]
        else:
            t_count[t] = -1 - sub[dd]
            m = t + 1
        if dd > 0:
            sub[dd - 1] += sub[dd]
    return m


@njit_noref(inline="always")  # a call passing 4 arrays from trie_walk costs more than the node's writes
def _trie_node(nint, nlev, ncorner, nq, b, parent, lev, x, y, z, start, size):
    nint[b, PARENT] = parent
    nint[b, CHILD] = -1
    nint[b, SIB] = -1
    nint[b, START] = start
    nint[b, COUNT] = 0
    nint[b, SIZE] = size
    nlev[b] = lev
    ncorner[b, 0] = x
    ncorner[b, 1] = y
    ncorner[b, 2] = z
    for a in range(12):
        nq[b, a] = EMPTY_Q[a % 6]
    for a in range(12, 15):
        nq[b, a] = 0


@njit_noref
def _slots_box(obj, s0, s1):
    """The float64 box (lo x, y, z, hi x, y, z) of the spheres in slots s0..s1, with margins."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for s in range(s0, s1):
        r = obj[s, 3]
        c = obj[s, 0]
        m0 = _margin(c, r)
        lo0 = min(lo0, (c - r) - m0)
        hi0 = max(hi0, (c + r) + m0)
        c = obj[s, 1]
        m0 = _margin(c, r)
        lo1 = min(lo1, (c - r) - m0)
        hi1 = max(hi1, (c + r) + m0)
        c = obj[s, 2]
        m0 = _margin(c, r)
        lo2 = min(lo2, (c - r) - m0)
        hi2 = max(hi2, (c + r) + m0)
    return lo0, lo1, lo2, hi0, hi1, hi2


@njit_noref
def _put_box(dst, row, off, ncorner, nlev, n, lo0, lo1, lo2, hi0, hi1, hi2, q6):
    """Store the float box quantised on node n's grid at dst[row, off:off + 6] (empty if lo > hi)."""
    if lo0 <= hi0:
        quantise(ncorner, nlev, n, lo0, lo1, lo2, hi0, hi1, hi2, q6)
        for c in range(6):
            dst[row, off + c] = q6[c]
    else:
        for c in range(6):
            dst[row, off + c] = EMPTY_Q[c]


@njit_noref
def _sort_runs(nint, nlev, ncorner, nq, obj, oid, ids, aux_end, aux_q, n, a, tmp, tmp_id, octant, q6):
    """Counting-sort node n's block by the octant of each centre (unless it is in octant order
    already, as a bulk build leaves it); record the 8 run ends and the quantised box of each run in
    aux row ``a`` and point the node at it. The float64 box of the whole block goes to tmp[0, 0:3]
    (lo) and tmp[1, 0:3] (hi)."""
    s0 = nint[n, START]
    cnt = nint[n, COUNT]
    e = EDGE[nlev[n]]
    hx = ncorner[n, 0] + 0.5 * e
    hy = ncorner[n, 1] + 0.5 * e
    hz = ncorner[n, 2] + 0.5 * e
    for j in range(8):
        aux_end[a, j] = 0
    sorted_ = True
    prev = 0
    for t in range(cnt):
        s = s0 + t
        o = (1 if obj[s, 0] >= hx else 0) | (2 if obj[s, 1] >= hy else 0) | (4 if obj[s, 2] >= hz else 0)
        octant[t] = o
        aux_end[a, o] += 1
        if o < prev:
            sorted_ = False
        prev = o
    total = 0
    for j in range(8):  # counts -> run starts
        c = aux_end[a, j]
        aux_end[a, j] = total
        total += c
    if sorted_:
        for j in range(7):  # run starts -> run ends
            aux_end[a, j] = aux_end[a, j + 1]
        aux_end[a, 7] = cnt
    else:
        for t in range(cnt):
            s = s0 + t
            for c in range(4):
                tmp[t, c] = obj[s, c]
            tmp_id[t] = oid[s]
        for t in range(cnt):
            s = s0 + aux_end[a, octant[t]]
            aux_end[a, octant[t]] += 1  # start -> end as the run fills
            for c in range(4):
                obj[s, c] = tmp[t, c]
            oid[s] = tmp_id[t]
            ids[tmp_id[t], 0] = s
    prev = 0
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    for j in range(8):
        l0, l1, l2, h0, h1, h2 = _slots_box(obj, s0 + prev, s0 + aux_end[a, j])
        _put_box(aux_q, a, 6 * j, ncorner, nlev, n, l0, l1, l2, h0, h1, h2, q6)
        lo0, lo1, lo2 = min(lo0, l0), min(lo1, l1), min(lo2, l2)
        hi0, hi1, hi2 = max(hi0, h0), max(hi1, h1), max(hi2, h2)
        prev = aux_end[a, j]
    tmp[0, 0], tmp[0, 1], tmp[0, 2] = lo0, lo1, lo2
    tmp[1, 0], tmp[1, 1], tmp[1, 2] = hi0, hi1, hi2
    a1 = a + 1
    nq[n, 12] = a1 & 0xFF
    nq[n, 13] = (a1 >> 8) & 0xFF
    nq[n, 14] = (a1 >> 16) & 0xFF


@njit
def refit(nint, nlev, ncorner, nq, obj, oid, ids, aux_end, aux_q, meta):
    """Recompute every node's own and subtree box exactly, and sort every block of at least
    ``AUX_MIN`` objects into 8 octant runs with a box each (``aux_end``/``aux_q`` need a row per
    such node). Nodes are visited in reverse depth-first order, so a node comes after its subtree
    and its children's float64 subtree boxes are the top entries of a small stack (no per-node
    temporaries); each box is quantised once. Returns False (boxes half done) when ``aux_end`` has
    too few rows: grow it and call again."""
    root = meta[ROOT]
    m = meta[NODE_TOP]
    order = np.empty(m, dtype=np.int32)
    stack = np.empty(STACK, dtype=np.int32)  # the walk holds at most 7 siblings a level
    stack[0] = root
    top = 1
    cnt = 0
    biggest = 2
    while top > 0:
        top -= 1
        n = stack[top]
        order[cnt] = n
        cnt += 1
        if nint[n, COUNT] >= AUX_MIN:
            biggest = max(biggest, nint[n, COUNT])
        c = nint[n, CHILD]
        while c >= 0:
            stack[top] = c
            top += 1
            c = nint[c, SIB]
    q6 = np.empty(6, dtype=np.int64)
    tmp = np.empty((biggest, 4))
    tmp_id = np.empty(biggest, dtype=np.int32)
    octant = np.empty(biggest, dtype=np.int64)
    box = np.empty((STACK, 6))  # subtree boxes of visited nodes whose parent is not visited yet
    top = 0
    meta[AUX_TOP] = 0
    for j in range(cnt - 1, -1, -1):
        n = np.int64(order[j])
        nq[n, 12] = 0
        nq[n, 13] = 0
        nq[n, 14] = 0
        s0 = np.int64(nint[n, START])
        if nint[n, COUNT] >= AUX_MIN:
            a = meta[AUX_TOP]
            if a >= aux_end.shape[0]:
                return False
            meta[AUX_TOP] = a + 1
            _sort_runs(nint, nlev, ncorner, nq, obj, oid, ids, aux_end, aux_q, n, a, tmp, tmp_id, octant, q6)
            lo0, lo1, lo2 = tmp[0, 0], tmp[0, 1], tmp[0, 2]
            hi0, hi1, hi2 = tmp[1, 0], tmp[1, 1], tmp[1, 2]
        else:
            lo0, lo1, lo2, hi0, hi1, hi2 = _slots_box(obj, s0, s0 + nint[n, COUNT])
        _put_box(nq, n, np.int64(0), ncorner, nlev, n, lo0, lo1, lo2, hi0, hi1, hi2, q6)
        # the subtree box: own spheres plus the children's subtrees (the stack's top entries)
        c = nint[n, CHILD]
        while c >= 0:
            top -= 1
            lo0 = min(lo0, box[top, 0])
            lo1 = min(lo1, box[top, 1])
            lo2 = min(lo2, box[top, 2])
            hi0 = max(hi0, box[top, 3])
            hi1 = max(hi1, box[top, 4])
            hi2 = max(hi2, box[top, 5])
            c = nint[c, SIB]
        _put_box(nq, n, np.int64(6), ncorner, nlev, n, lo0, lo1, lo2, hi0, hi1, hi2, q6)
        box[top, 0] = lo0
        box[top, 1] = lo1
        box[top, 2] = lo2
        box[top, 3] = hi0
        box[top, 4] = hi1
        box[top, 5] = hi2
        top += 1
    meta[LOOSE] = 0
    return True


@njit
def refit_some(nint, nlev, ncorner, nq, obj, oid, ids, aux_end, aux_q, meta, budget):
    """The refit spread over frames: recompute the boxes of the nodes below the cursor
    ``meta[REFIT_AT]`` (node slots, downwards, wrapping around from ``NODE_TOP``) until ``budget``
    objects and nodes are done, and move the cursor past them. Each node gets its exact own box (its
    block sorted into octant runs again when it holds ``AUX_MIN`` or more, in its own aux row or a new
    one), and a subtree box made of that and its children's subtree boxes as they are now. Those are
    conservative at every moment (moves only grow them), so the result is too, whatever the order; the
    slot order is what makes it tight: the bulk build numbers nodes breadth-first, so going down the
    slots a node comes after its children. A recomputed subtree box is clipped to the one it replaces:
    a child's box decoded and quantised again outward on this node's grid grows a cell where its edge
    falls on a cell boundary, and a box grown here would no longer lie in its parent's (which a move
    trusts: :func:`expand_up` stops at the first box that holds the sphere already). The old box held
    everything the new one holds, so their intersection does too. Returns 0, or -1 (the cursor at the node it stopped before)
    when ``aux_end`` has no row left: make room and call again. Nothing allocated but one node's
    sorting buffers."""
    top = meta[NODE_TOP]
    if top == 0:
        return 0
    q6 = np.empty(6, dtype=np.int64)
    lo3 = np.empty(3)
    hi3 = np.empty(3)
    cap = AUX_MIN
    tmp = np.empty((cap, 4))
    tmp_id = np.empty(cap, dtype=np.int32)
    octant = np.empty(cap, dtype=np.int64)
    j = min(meta[REFIT_AT], top)
    while budget > 0:
        if j <= 0:
            j = top
        n = j - 1
        if nint[n, PARENT] == -2:  # a free slot
            j = n
            budget -= 1
            continue
        cnt = nint[n, COUNT]
        s0 = np.int64(nint[n, START])
        if cnt >= AUX_MIN:
            a = aux_of(nq, n) - 1
            if a < 0:
                a = meta[AUX_TOP]
                if a >= aux_end.shape[0]:
                    meta[REFIT_AT] = j
                    return -1
                meta[AUX_TOP] = a + 1
            if cnt > cap:
                cap = 2 * cnt
                tmp = np.empty((cap, 4))
                tmp_id = np.empty(cap, dtype=np.int32)
                octant = np.empty(cap, dtype=np.int64)
            _sort_runs(nint, nlev, ncorner, nq, obj, oid, ids, aux_end, aux_q, n, a, tmp, tmp_id, octant, q6)
            lo0, lo1, lo2 = tmp[0, 0], tmp[0, 1], tmp[0, 2]
            hi0, hi1, hi2 = tmp[1, 0], tmp[1, 1], tmp[1, 2]
        else:
            drop_aux(nq, n)  # (its row, if it had one, waits for the next compaction: Octree._aux_room)
            lo0, lo1, lo2, hi0, hi1, hi2 = _slots_box(obj, s0, s0 + cnt)
        _put_box(nq, n, np.int64(0), ncorner, nlev, n, lo0, lo1, lo2, hi0, hi1, hi2, q6)
        c = nint[n, CHILD]
        while c >= 0:
            if nq[c, 6] <= nq[c, 9]:
                decode(ncorner, nlev, nq, np.int64(c), np.int64(6), lo3, hi3)
                lo0, lo1, lo2 = min(lo0, lo3[0]), min(lo1, lo3[1]), min(lo2, lo3[2])
                hi0, hi1, hi2 = max(hi0, hi3[0]), max(hi1, hi3[1]), max(hi2, hi3[2])
            c = nint[c, SIB]
        if nq[n, 6] <= nq[n, 9] and lo0 <= hi0:  # both boxes hold something: never grow (see above)
            quantise(ncorner, nlev, n, lo0, lo1, lo2, hi0, hi1, hi2, q6)
            for a in range(3):
                nq[n, 6 + a] = max(nq[n, 6 + a], q6[a])
                nq[n, 9 + a] = min(nq[n, 9 + a], q6[3 + a])
        else:
            _put_box(nq, n, np.int64(6), ncorner, nlev, n, lo0, lo1, lo2, hi0, hi1, hi2, q6)
        budget -= cnt + 1
        j = n
    meta[REFIT_AT] = j
    return 0


# ----------------------------------------------------------------------------- inspection


@njit
def check_invariants(nint, nlev, ncorner, nq, obj, oid, ids, aux_end, aux_q, meta):
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
        n = np.int64(stack[top])
        seen_nodes += 1
        e = EDGE[nlev[n]]
        if n != root and nint[n, COUNT] == 0 and nint[n, CHILD] < 0:
            return 1, n  # an empty leaf that cleanup should have freed
        s0 = nint[n, START]
        below = 0
        for s in range(s0, s0 + nint[n, COUNT]):
            x, y, z, r = obj[s, 0], obj[s, 1], obj[s, 2], obj[s, 3]
            if not _inside(ncorner, n, e, x, y, z):
                return 2, s  # centre outside its node
            if r < 0.25 * e and not finest(nlev, ncorner, meta, n):
                below += 1
            if r > 0.5 * e or below > BUCKET:
                return 3, s  # radius above the node's band, or more than BUCKET below it
            if ids[oid[s], 0] != s or ids[oid[s], 1] != n:
                return 4, s  # id table out of step
            _obj_box(obj, s, lo3, hi3)
            quantise(ncorner, nlev, n, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
            if not _contains_q(nq, n, np.int64(0), q6):
                return 5, s  # the own box does not hold its sphere
            a = aux_of(nq, n) - 1
            if a >= 0:
                if nint[n, COUNT] < aux_end[a, 7]:
                    return 10, n  # runs reach past the block
                t = s - s0
                for j in range(8):
                    if t < aux_end[a, j]:
                        for c in range(3):
                            if q6[c] < aux_q[a, 6 * j + c] or q6[3 + c] > aux_q[a, 6 * j + 3 + c]:
                                return 11, s  # an octant run's box does not hold its sphere
                        break
            a = n
            while a >= 0:
                quantise(ncorner, nlev, a, lo3[0], lo3[1], lo3[2], hi3[0], hi3[1], hi3[2], q6)
                if not _contains_q(nq, a, np.int64(6), q6):
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
    if _holds(nlev, ncorner, nq, root, np.int64(6), px, py, pz):
        stack[0] = root
        top = 1
    while top > 0:
        top -= 1
        n = stack[top]
        flags[n] = True
        c = nint[n, CHILD]
        while c >= 0:
            if _holds(nlev, ncorner, nq, np.int64(c), np.int64(6), px, py, pz):
                stack[top] = c
                top += 1
            c = nint[c, SIB]
