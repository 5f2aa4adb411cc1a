"""Numba kernel of :mod:`viewer.frame`: gather the drawn objects' instance records."""

from __future__ import annotations

import math

import numpy as np

from ..kernels.jit import njit
from .instances import INSTANCE_WORDS, WORD

# first 32-bit word of each field of an instance record (compile-time constants of the kernel)
_POSITION = WORD["position"]
_SIZE = WORD["size"]
_COLOUR = WORD["colour"]
_FADE = WORD["fade"]


@njit
def gather_instances(ids, n, centres, sizes, radii, colours, eye, qp, fade_frac, inst_f, inst_u):
    """Fill rows ``0..n-1`` of the instance array for the objects ``ids[:n]``.

    centres : (N, 3) float64; sizes : (N,) float32 half-extents; radii : (N,) float64 view distances
    colours : (N,) uint32, RGBA bytes packed in memory order
    eye : (3,) float64, the render camera (positions are written relative to it, so float32 keeps
          full precision near the camera however far the world extends)
    qp : (3,) float64, the query camera (the fade is its distance over the object's view distance)
    fade_frac : fraction of the view distance, at its far end, over which an object fades in
    inst_f, inst_u : (cap, INSTANCE_WORDS) float32 and uint32 views of the same records
          (:data:`viewer.frame.instances.INSTANCE_DTYPE`): position (relative), size, colour (uint32 bits), fade
    """
    for i in range(n):
        j = ids[i]
        cx = centres[j, 0]
        cy = centres[j, 1]
        cz = centres[j, 2]
        inst_f[i, _POSITION] = cx - eye[0]
        inst_f[i, _POSITION + 1] = cy - eye[1]
        inst_f[i, _POSITION + 2] = cz - eye[2]
        inst_f[i, _SIZE] = sizes[j]
        inst_u[i, _COLOUR] = colours[j]
        r = radii[j]
        band = fade_frac * r
        a = 1.0
        if band > 0.0:
            dx = cx - qp[0]
            dy = cy - qp[1]
            dz = cz - qp[2]
            a = (r - math.sqrt(dx * dx + dy * dy + dz * dz)) / band
            if a > 1.0:
                a = 1.0
            elif a < 0.0:
                a = 0.0
        inst_f[i, _FADE] = a
    return n


@njit
def sort_front_to_back(ids, n, centres, eye, keys, scratch):
    """Reorder ``ids[:n]`` nearest first (squared distance from ``eye``), ties by id, so the order
    is the same whatever order an index returned them in (identical images for every index), and
    the depth test rejects hidden fragments before they are shaded.

    keys : (>= n,) float64 scratch; scratch : (>= n,) int64 scratch
    """
    if n < 2:
        return
    ids[:n].sort()
    for i in range(n):
        j = ids[i]
        dx = centres[j, 0] - eye[0]
        dy = centres[j, 1] - eye[1]
        dz = centres[j, 2] - eye[2]
        keys[i] = dx * dx + dy * dy + dz * dz
    order = np.argsort(keys[:n], kind="mergesort")  # stable: equal distances keep id order
    for i in range(n):
        scratch[i] = ids[order[i]]
    ids[:n] = scratch[:n]


def warm() -> None:
    """Compile the kernel (call before anything timed)."""
    ids = np.zeros(1, dtype=np.int64)
    inst = np.zeros((1, INSTANCE_WORDS), dtype=np.float32)
    sort_front_to_back(np.zeros(2, dtype=np.int64), 2, np.zeros((1, 3)), np.zeros(3), np.zeros(2),
                       np.zeros(2, dtype=np.int64))
    gather_instances(ids, 1, np.zeros((1, 3)), np.ones(1, dtype=np.float32), np.ones(1),
                     np.zeros(1, dtype=np.uint32), np.zeros(3), np.zeros(3), 0.15, inst, inst.view(np.uint32))
