"""Morton (Z-order) codes: interleaved bits of three cell coordinates, so that sorting by code puts
objects that are near in space near in memory. The octree's bulk build and the scan's slot order use it."""

from __future__ import annotations

import numpy as np

from viewer.kernels.jit import njit, njit_noref

__all__ = ["compact3", "morton_order", "spread3"]


@njit_noref
def spread3(v):
    """The low 21 bits of ``v`` (int64) spread so that two zero bits follow each."""
    v &= 0x1FFFFF
    v = (v | (v << 32)) & 0x1F00000000FFFF
    v = (v | (v << 16)) & 0x1F0000FF0000FF
    v = (v | (v << 8)) & 0x100F00F00F00F00F
    v = (v | (v << 4)) & 0x10C30C30C30C30C3
    v = (v | (v << 2)) & 0x1249249249249249
    return v


@njit_noref
def compact3(v):
    """The inverse of :func:`spread3`: every third bit of ``v`` gathered into the low 21 bits."""
    v &= 0x1249249249249249
    v = (v | (v >> 2)) & 0x10C30C30C30C30C3
    v = (v | (v >> 4)) & 0x100F00F00F00F00F
    v = (v | (v >> 8)) & 0x1F0000FF0000FF
    v = (v | (v >> 16)) & 0x1F00000000FFFF
    v = (v | (v >> 32)) & 0x1FFFFF
    return v


@njit
def _codes(centres, x0, y0, z0, scale, top, keys):
    for j in range(centres.shape[0]):
        q0 = min(max((centres[j, 0] - x0) * scale, 0.0), top)  # NaN-free: centres are finite
        q1 = min(max((centres[j, 1] - y0) * scale, 0.0), top)
        q2 = min(max((centres[j, 2] - z0) * scale, 0.0), top)
        keys[j] = spread3(np.int64(q0)) | (spread3(np.int64(q1)) << 1) | (spread3(np.int64(q2)) << 2)


def morton_order(centres: np.ndarray, bits: int = 10) -> np.ndarray:
    """Row indices (N,) int64 of ``centres`` (N, 3) float64 in Morton order on a grid of ``2**bits`` cells an
    axis over their bounding cube. Only a locality order: ties and cell edges may fall either way."""
    n = centres.shape[0]
    if n == 0:
        return np.empty(0, dtype=np.int64)
    lo = centres.min(axis=0)
    span = float((centres.max(axis=0) - lo).max())
    top = float((1 << bits) - 1)
    scale = (1 << bits) / span if span > 0 and np.isfinite((1 << bits) / span) else 0.0
    keys = np.empty(n, dtype=np.int64)
    _codes(centres, float(lo[0]), float(lo[1]), float(lo[2]), scale, top, keys)
    return np.argsort(keys, kind="stable").astype(np.int64, copy=False)
