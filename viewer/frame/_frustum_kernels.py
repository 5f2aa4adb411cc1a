"""Numba kernels of :mod:`viewer.frame.frustum`: a sphere-against-six-planes test over candidate ids."""

from __future__ import annotations

import numpy as np

from ..kernels.jit import njit


@njit
def cull_spheres_kernel(planes, centres, bounds, ids, k, out):
    """Write into ``out`` the ids among ``ids[:k]`` whose bounding sphere touches the frustum.

    planes : (6, 4) float64, unit normals pointing inwards, ``n . p + d >= 0`` inside
    centres : (N, 3) float64; bounds : (N,) float64 bounding radii; ids : (K,) int64; out : (>= k,) int64
    Returns the count written (order of ``ids`` kept).
    """
    m = 0
    for i in range(k):
        j = ids[i]
        x = centres[j, 0]
        y = centres[j, 1]
        z = centres[j, 2]
        r = bounds[j]
        inside = True
        for p in range(6):
            if planes[p, 0] * x + planes[p, 1] * y + planes[p, 2] * z + planes[p, 3] < -r:
                inside = False
                break
        if inside:
            out[m] = j
            m += 1
    return m


@njit
def planes_kernel(m, planes):
    """Gribb-Hartmann: rows r3 +- r0, r3 +- r1, r3 +- r2 of ``m`` (4, 4) into ``planes`` (6, 4),
    normalised; returns False when a normal is zero."""
    for i in range(3):
        for s in range(2):
            sign = 1.0 if s == 0 else -1.0
            p = 2 * i + s
            for c in range(4):
                planes[p, c] = m[3, c] + sign * m[i, c]
            n = (planes[p, 0] * planes[p, 0] + planes[p, 1] * planes[p, 1] + planes[p, 2] * planes[p, 2]) ** 0.5
            if not n > 0.0:
                return False
            for c in range(4):
                planes[p, c] /= n
    return True


def warm() -> None:
    """Compile the kernels (call before anything timed)."""
    planes = np.zeros((6, 4))
    c = np.zeros((1, 3))
    b = np.zeros(1)
    ids = np.zeros(1, dtype=np.int64)
    cull_spheres_kernel(planes, c, b, ids, 1, np.empty(1, dtype=np.int64))
    planes_kernel(np.eye(4), planes)
