"""Kernels the two leaf-bucket binary trees (``bvh``, ``kdtree``; :mod:`viewer.index._leaftree`) share:
quickselect for their builds, the gather that splits a full leaf, the moves of a leaf's slot range and
the allocation of a split leaf's children, the slot -> leaf map. ``ni`` columns 0..5 are CHILD, START,
CNT, CAP, PARENT, DEPTH in both trees; ``st`` is [nnodes, nslots, garbage, maxdepth]."""

from __future__ import annotations

import numpy as np

from viewer._jit import njit


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
