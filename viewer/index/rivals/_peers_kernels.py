"""Numba kernels of the peer-library wrappers (:mod:`viewer.index.rivals.peers`): the exact filter applied to
the candidates a library returns."""

from __future__ import annotations

from viewer.kernels.jit import njit

from .._contract_kernels import box_pad, emit, holds

MIN_EXTENT = 2.0**-48


@njit
def filter_ids(px, py, pz, cand, obj, out, k):
    """Append to ``out`` (from position ``k``) the ids in ``cand`` (C,) int64 whose sphere in ``obj``
    (rows by id: x, y, z, r) holds the point, with the contract's predicate. Counts past ``out.size``
    without writing; returns the new count."""
    size = out.shape[0]
    for j in range(cand.size):
        i = cand[j]
        if holds(px, py, pz, obj[i, 0], obj[i, 1], obj[i, 2], obj[i, 3]):
            k = emit(out, size, k, i)
    return k


@njit
def boxes(obj, ids, lo, hi):
    """The padded AABBs of the spheres ``obj[ids]`` into ``lo``, ``hi`` (C, 3) (:func:`box_pad`: no point
    the exact predicate accepts falls outside through rounding or underflow)."""
    for j in range(ids.size):
        i = ids[j]
        r = obj[i, 3]
        for a in range(3):
            c = obj[i, a]
            p = box_pad(c, r)
            lo[j, a] = (c - r) - p
            hi[j, a] = (c + r) + p
        # libspatialindex stores a box narrower than its epsilon (2**-52) on every axis as a point at
        # its low corner: keep one axis wider (a wider box costs a candidate, never an answer)
        if hi[j, 0] - lo[j, 0] <= MIN_EXTENT:
            hi[j, 0] = lo[j, 0] + 2.0 * MIN_EXTENT
