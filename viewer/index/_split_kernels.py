"""A kernel the two binary trees (``bvh``, ``kdtree``) share for splitting a full leaf."""

from __future__ import annotations

import numpy as np

from viewer._jit import njit


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
