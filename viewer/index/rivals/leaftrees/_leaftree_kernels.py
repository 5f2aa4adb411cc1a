"""Kernels the leaf-bucket binary trees (``bvh``, ``kdtree``, ``bsp``, ``spheretree``;
:mod:`viewer.index.rivals.leaftrees._leaftree`) share: the steps of their builds' loop (:func:`build_state`,
:func:`next_node`, :func:`make_leaf`, :func:`split_children`, :func:`end_steps`: each tree writes only how it
splits a node), the skeleton of their refits (:func:`refit_up`, :func:`refit_nodes`, :func:`place_in_room`:
each tree writes only how it bounds a node), quickselect, the gather that splits a full leaf, the moves of a
leaf's slot range, the allocation of a split leaf's children and the filling of them, the
slot -> leaf map, a leaf's scan. ``ni`` columns 0..5 are CHILD, START, CNT, CAP, PARENT, DEPTH in every
tree; ``st`` is [nnodes, nslots, garbage, maxdepth].

**A tree's own bounds.** The refit skeleton calls :func:`recompute`, which each tree's kernel module
implements for its own tree with numba's ``overload``, told apart by its extra array ``ex`` (its number of
dimensions: 1 the BVH's summed volume, 2 the kd-tree's node regions, 3 the sphere tree's summed radius cubes, 4
the BSP tree's summed volume), inlined: a compiled skeleton holds its tree's code alone, with no call a node.
"""

from __future__ import annotations

import numpy as np

from viewer.kernels.jit import njit

from ..._contract_kernels import emit, holds

# ----------------------------------------------------------------------------------------- each tree's steps


def recompute(node, obj, nf, ni, ex):  # pragma: no cover - overloaded per tree
    """Recompute ``node``'s bounds from its objects (a leaf) or its two children; True if they changed (the
    tree's cost in ``ex`` follows). Implemented by each tree's kernel module for its ``ex``."""
    raise NotImplementedError


# ----------------------------------------------------------------------------------------- build


@njit
def build_state(D, ni_cols):
    """The state of a build over the rows ``D`` (n >= 1, k) that a tree's ``build_steps`` advances a slice at a
    time, but for the tree's node floats (``nf``, 2n + 1 rows, which each tree allocates): ``perm`` (n,) int64
    (slot -> input row), ``ni`` (2n + 1, ni_cols) int32 with the root (node 0: every row, no parent), ``stack``
    (2n + 1,) int64 of nodes still to split (the root) and ``ctl`` (3,) int64 ``[stack size, nnodes,
    maxdepth]``."""
    n = D.shape[0]
    maxnodes = 2 * n + 1
    ni = np.zeros((maxnodes, ni_cols), dtype=np.int32)
    ni[0, 0] = -1
    ni[0, 2] = n
    ni[0, 4] = -1
    stack = np.empty(maxnodes, dtype=np.int64)
    stack[0] = 0
    ctl = np.array([1, 1, 0], dtype=np.int64)
    return np.arange(n), ni, stack, ctl


@njit(inline="always")
def next_node(stack, sp, ni, work, maxdepth):
    """Take the next node to split off a build's ``stack`` (``sp`` entries): ``(sp, node, start, count, depth,
    work, maxdepth)``, its objects added to ``work`` and its depth to ``maxdepth``."""
    sp -= 1
    node = stack[sp]
    c = ni[node, 2]
    d = ni[node, 5]
    return sp, node, ni[node, 1], c, d, work + c, max(maxdepth, d)


@njit(inline="always")
def make_leaf(node, c, ni):
    """Node ``node`` of a build stays a leaf of its ``c`` objects (``cap == cnt``)."""
    ni[node, 0] = -1
    ni[node, 3] = c


@njit(inline="always")
def split_children(node, s, c, d, mid, ni, stack, sp, nnodes):
    """Give node ``node`` of a build (rows ``[s, s + c)``, depth ``d``) its two children, rows ``[s, mid)``
    and ``[mid, s + c)``, as nodes ``nnodes`` and ``nnodes + 1``, both pushed on ``stack`` (the right one on
    top); returns ``(sp, nnodes)`` after them."""
    ni[node, 0] = nnodes
    ni[node, 3] = 0
    for j in range(2):
        ch = nnodes + j
        ni[ch, 0] = -1
        ni[ch, 1] = s if j == 0 else mid
        ni[ch, 2] = mid - s if j == 0 else s + c - mid
        ni[ch, 3] = 0
        ni[ch, 4] = node
        ni[ch, 5] = d + 1
        stack[sp] = ch
        sp += 1
    return sp, nnodes + 2


@njit(inline="always")
def end_steps(ctl, sp, nnodes, maxdepth):
    """Store a build's state (``ctl``: stack size, nnodes, maxdepth) after a slice; True when it is complete."""
    ctl[0] = sp
    ctl[1] = nnodes
    ctl[2] = maxdepth
    return sp == 0


# ----------------------------------------------------------------------------------------- refit


@njit
def refit_up(node, obj, nf, ni, ex):
    """Recompute ``node`` and its ancestors while their bounds change (the tree's :func:`recompute`)."""
    while node >= 0:
        if not recompute(node, obj, nf, ni, ex):
            return
        node = ni[node, 4]


@njit
def refit_nodes(obj, nf, ni, ex, st):
    """Recompute every node bottom-up (children have larger indices than parents)."""
    for i in range(st[0] - 1, -1, -1):
        recompute(i, obj, nf, ni, ex)


# ----------------------------------------------------------------------------------------- shared steps


@njit(inline="always")
def place_in_room(leaf, x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, st, ex, leaf_size):
    """Store object ``id`` (x, y, z, r) in the next free slot of ``leaf``, its range first moved to the end of
    storage with room for ``leaf_size`` when it is full, and refit the chain above (:func:`refit_up`);
    returns False, changing nothing, when the leaf holds ``leaf_size`` objects or more and must split."""
    cnt = ni[leaf, 2]
    cap = ni[leaf, 3]
    if not (cnt < cap or cnt < leaf_size):
        return False
    if cnt == cap:
        relocate(leaf, obj, oid, idslot, leafof, ni, st, leaf_size)
    set_slot(ni[leaf, 1] + cnt, x, y, z, r, id, obj, oid, idslot, leafof, leaf)
    ni[leaf, 2] = cnt + 1
    refit_up(leaf, obj, nf, ni, ex)
    return True


@njit
def swap_rows(D, perm, i, j):
    for q in range(D.shape[1]):
        t = D[i, q]
        D[i, q] = D[j, q]
        D[j, q] = t
    t2 = perm[i]
    perm[i] = perm[j]
    perm[j] = t2


@njit
def select_kth(D, perm, col, lo, hi, k):
    """Quickselect on rows ``lo..hi`` (inclusive) of ``D`` by column ``col`` (rows and ``perm`` swapped
    together): afterwards row k holds the k-th smallest, rows left of it are <=, right of it >=."""
    while hi > lo:
        mid = (lo + hi) >> 1
        a = D[lo, col]
        b = D[mid, col]
        c = D[hi, col]
        if a > b:
            a, b = b, a
        if b > c:
            b = c
        v = a if a > b else b  # median of three
        i = lo
        j = hi
        while i <= j:
            while D[i, col] < v:
                i += 1
            while D[j, col] > v:
                j -= 1
            if i <= j:
                swap_rows(D, perm, i, j)
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            break


@njit
def gather_split(obj, oid, s, cnt, x, y, z, r, id):
    """A full leaf's ``cnt`` objects (slots ``s .. s + cnt``, which are marked free) plus the new one
    (x, y, z, r, id): ``tmp`` (cnt + 1, 4) float64 rows, ``tid`` (cnt + 1,) int64 ids, and the axis
    (0, 1, 2) along which their centres spread most."""
    m = cnt + 1
    tmp = np.empty((m, 4))
    tid = np.empty(m, dtype=np.int64)
    for t in range(cnt):
        for q in range(4):
            tmp[t, q] = obj[s + t, q]
        tid[t] = oid[s + t]
        oid[s + t] = -1
    tmp[cnt, 0] = x
    tmp[cnt, 1] = y
    tmp[cnt, 2] = z
    tmp[cnt, 3] = r
    tid[cnt] = id
    a = 0
    span = -1.0
    for q in range(3):
        lo = np.inf
        hi = -np.inf
        for t in range(m):
            lo = min(lo, tmp[t, q])
            hi = max(hi, tmp[t, q])
        if hi - lo > span:
            span = hi - lo
            a = q
    return tmp, tid, a


@njit
def assign_leaves(ni, nnodes, leafof):
    """``leafof[slot] = leaf`` for every slot of every leaf (``ni`` columns CHILD, START, CNT first)."""
    for i in range(nnodes):
        if ni[i, 0] < 0:
            s = ni[i, 1]
            for t in range(s, s + ni[i, 2]):
                leafof[t] = i


@njit
def relocate(leaf, obj, oid, idslot, leafof, ni, st, leaf_size):
    """Move the full slot range of ``leaf`` to the end of storage with room for ``leaf_size`` objects
    (the old range becomes garbage)."""
    cnt = ni[leaf, 2]
    s = ni[leaf, 1]
    ns = st[1]
    for t in range(cnt):
        for q in range(4):
            obj[ns + t, q] = obj[s + t, q]
        oid[ns + t] = oid[s + t]
        idslot[oid[ns + t]] = ns + t
        leafof[ns + t] = leaf
        oid[s + t] = -1
    for t in range(cnt, leaf_size):
        oid[ns + t] = -1
    st[2] += ni[leaf, 3]
    st[1] = ns + leaf_size
    ni[leaf, 1] = ns
    ni[leaf, 3] = leaf_size


@njit
def split_leaf(leaf, m, oid, ni, st, leaf_size):
    """Turn ``leaf`` into an inner node with two new leaf children holding ``m // 2`` and
    ``m - m // 2`` objects (their ranges allocated empty at the end of storage, further ``ni`` columns
    zeroed); returns the first child. The caller fills the children's slots."""
    st[2] += ni[leaf, 3]
    left = st[0]
    st[0] = left + 2
    d = ni[leaf, 5] + 1
    st[3] = max(st[3], d)
    half = m // 2
    for j in range(2):
        c = left + j
        ns = st[1]
        st[1] = ns + leaf_size
        ni[c, 0] = -1
        ni[c, 1] = ns
        ni[c, 2] = half if j == 0 else m - half
        ni[c, 3] = leaf_size
        ni[c, 4] = leaf
        ni[c, 5] = d
        for q in range(6, ni.shape[1]):
            ni[c, q] = 0
        for t in range(leaf_size):
            oid[ns + t] = -1
    ni[leaf, 0] = left
    ni[leaf, 1] = 0
    ni[leaf, 2] = 0
    ni[leaf, 3] = 0
    return left


EMPTY_BOX = (np.inf, np.inf, np.inf, -np.inf, -np.inf, -np.inf)  # lo x, y, z, hi x, y, z of nothing


@njit(inline="always")
def children_box(nf, ch):
    """The union of the boxes (``nf`` columns 0..5) of the sibling nodes ``ch`` and ``ch + 1``."""
    return (min(nf[ch, 0], nf[ch + 1, 0]), min(nf[ch, 1], nf[ch + 1, 1]), min(nf[ch, 2], nf[ch + 1, 2]),
            max(nf[ch, 3], nf[ch + 1, 3]), max(nf[ch, 4], nf[ch + 1, 4]), max(nf[ch, 5], nf[ch + 1, 5]))


@njit(inline="always")
def store_box(nf, node, b0, b1, b2, b3, b4, b5):
    """Write the box into ``nf[node, 0:6]``; returns whether it changed."""
    same = (b0 == nf[node, 0] and b1 == nf[node, 1] and b2 == nf[node, 2]
            and b3 == nf[node, 3] and b4 == nf[node, 4] and b5 == nf[node, 5])
    nf[node, 0] = b0
    nf[node, 1] = b1
    nf[node, 2] = b2
    nf[node, 3] = b3
    nf[node, 4] = b4
    nf[node, 5] = b5
    return not same


@njit(inline="always")
def set_slot(t, x, y, z, r, id, obj, oid, idslot, leafof, leaf):
    """Store object ``id`` in slot ``t`` of ``leaf``."""
    obj[t, 0] = x
    obj[t, 1] = y
    obj[t, 2] = z
    obj[t, 3] = r
    oid[t] = id
    idslot[id] = t
    leafof[t] = leaf


@njit(inline="always")
def child_range(left, j, m):
    """Child ``j`` (0, 1) of a leaf split by :func:`split_leaf` over ``m`` ordered objects: the node and
    the range ``[lo, hi)`` of the order it takes."""
    half = m // 2
    return left + j, (0 if j == 0 else half), (half if j == 0 else m)


@njit(inline="always")
def pop_node(stack, sp, ni, levels, visited, deepest):
    """Take the next node of a query's descent off ``stack`` and count it (``ni`` column 5: depth);
    returns ``(sp, node, visited, deepest)``."""
    sp -= 1
    node = stack[sp]
    return sp, node, visited + 1, count_level(levels, ni[node, 5], deepest)


@njit(inline="always")
def count_level(levels, d, deepest):
    """A query entered a node on level ``d``: count it in ``levels`` (levels deeper than any seen so far
    start at 0); returns the new deepest level."""
    if d > deepest:
        for q in range(deepest + 1, d + 1):
            levels[q] = 0
        deepest = d
    levels[d] += 1
    return deepest


@njit(inline="always")
def finish_query(stats, k, cand, visited, levels, deepest):
    """Store a query's counters in ``stats`` (candidates, visible, nodes visited, the most nodes entered
    on one level); returns ``k``."""
    most = 0
    if visited:
        for q in range(deepest + 1):
            most = max(most, levels[q])
    stats[0] = cand
    stats[1] = k
    stats[2] = visited
    stats[3] = most
    return k


@njit(inline="always")
def in_box(b, i, x, y, z):
    """Is the point inside box ``b[i]`` (lo x, y, z, hi x, y, z; closed)?"""
    return b[i, 0] <= x <= b[i, 3] and b[i, 1] <= y <= b[i, 4] and b[i, 2] <= z <= b[i, 5]


@njit(inline="always")
def scan_leaf(node, px, py, pz, obj, oid, ni, out, size, k, cand):
    """Test every object of leaf ``node`` (``ni`` columns START, CNT) with the contract's predicate and
    emit the hits; returns the new ``(k, cand)``."""
    s = ni[node, 1]
    e = s + ni[node, 2]
    for t in range(s, e):
        if holds(px, py, pz, obj[t, 0], obj[t, 1], obj[t, 2], obj[t, 3]):
            k = emit(out, size, k, oid[t])
    return k, cand + e - s


@njit
def fill_split(left, m, order, tmp, tid, obj, oid, idslot, leafof, ni):
    """Store the ``m`` objects of a leaf split by :func:`split_leaf` (rows ``tmp``, ids ``tid``, taken
    in ``order``) into its two new children ``left`` and ``left + 1``, half each."""
    for j in range(2):
        c, lo_t, hi_t = child_range(left, j, m)
        s = ni[c, 1]
        for t in range(lo_t, hi_t):
            o = order[t]
            set_slot(s + t - lo_t, tmp[o, 0], tmp[o, 1], tmp[o, 2], tmp[o, 3], tid[o], obj, oid, idslot, leafof, c)


@njit(inline="always")
def start_query(stack, levels, enter_root):
    """The counters of a query's descent ``(k, cand, visited, deepest, sp)``, the root (node 0) pushed on
    ``stack`` when ``enter_root``."""
    levels[0] = 0
    if enter_root:
        stack[0] = 0
        return 0, 0, 0, 0, 1
    return 0, 0, 0, 0, 0
