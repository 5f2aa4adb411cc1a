"""Numba kernels of :mod:`viewer.frame.ranges`: visibility ranges (begin), HLOD children, LOD bands and
band-change events, each a pass over a frame's answer (O(visible) or O(drawn)), never over all N.

Every distance is compared on squares in float64 with the index contract's association,
``(dx*dx + dy*dy) + dz*dz``, so a point exactly on a begin surface answers as brute force does.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels.jit import njit_noref
from .instances import INSTANCE_WORDS, WORD

__all__ = ["band_events", "filter_ranges", "lod_bands", "range_fades", "warm"]

_FADE = WORD["fade"]


@njit_noref
def filter_ranges(ids, k, centres, begin, parent, limit, px, py, pz):
    """Keep, in place and in order, the ids of ``ids[:k]`` (the index's answer: ``d <= end``) that are in
    range: ``begin[j]**2 <= d2`` (``begin`` (N,) float64, or (0,): no begin) and, for an object with a
    visibility parent p (``parent`` (N,) int64, -1 none, or (0,)), ``dp2 < limit[p]**2`` (``limit`` (N,)
    float64: the parent's begin times 1 + the cross-fade fraction). Returns the count kept."""
    has_begin = begin.shape[0] > 0
    has_parent = parent.shape[0] > 0
    w = 0
    for i in range(k):
        j = ids[i]
        if has_begin:
            b = begin[j]
            if b > 0.0:
                dx = centres[j, 0] - px
                dy = centres[j, 1] - py
                dz = centres[j, 2] - pz
                if (dx * dx + dy * dy) + dz * dz < b * b:
                    continue
        if has_parent:
            p = parent[j]
            if p >= 0:
                dx = centres[p, 0] - px
                dy = centres[p, 1] - py
                dz = centres[p, 2] - pz
                t = limit[p]
                if not (dx * dx + dy * dy) + dz * dz < t * t:
                    continue
        ids[w] = j
        w += 1
    return w


@njit_noref
def range_fades(ids, m, centres, begin, parent, limit, fade_frac, px, py, pz, inst_f):
    """Lower the fade word of records ``0..m-1`` (objects ``ids[:m]``) at the near edges: an object with a
    begin b fades in over ``[b, b (1 + fade_frac))`` (``(d - b) / (fade_frac b)``); an HLOD child fades
    out over its parent's cross-fade window ``[bp, limit[p])`` (``(limit[p] - dp) / (limit[p] - bp)``).
    The record keeps the smallest of its far-edge fade (the gather's) and these. ``fade_frac`` 0: none."""
    if fade_frac <= 0.0:
        return
    has_begin = begin.shape[0] > 0
    has_parent = parent.shape[0] > 0
    for i in range(m):
        j = ids[i]
        a = inst_f[i, _FADE]
        if has_begin:
            b = begin[j]
            if b > 0.0:
                dx = centres[j, 0] - px
                dy = centres[j, 1] - py
                dz = centres[j, 2] - pz
                t = (math.sqrt((dx * dx + dy * dy) + dz * dz) - b) / (fade_frac * b)
                if t < a:
                    a = max(t, 0.0)
        if has_parent:
            p = parent[j]
            if p >= 0:
                bp = begin[p] if has_begin else 0.0
                w = limit[p] - bp
                if w > 0.0:
                    dx = centres[p, 0] - px
                    dy = centres[p, 1] - py
                    dz = centres[p, 2] - pz
                    t = (limit[p] - math.sqrt((dx * dx + dy * dy) + dz * dz)) / w
                    if t < a:
                        a = max(t, 0.0)
        inst_f[i, _FADE] = a


@njit_noref
def lod_bands(ids, m, centres, lod, px, py, pz, bands, counts):
    """The LOD band of each of ``ids[:m]`` into ``bands[:m]`` (int8): ``#{l : lod[j, l]**2 <= d2}``
    (``lod`` (N, L) float64 ascending, +inf padding; 0 the finest), and the drawn objects per band into
    ``counts`` ((L + 1,) int64, zeroed here)."""
    for b in range(counts.shape[0]):
        counts[b] = 0
    nl = lod.shape[1]
    for i in range(m):
        j = ids[i]
        dx = centres[j, 0] - px
        dy = centres[j, 1] - py
        dz = centres[j, 2] - pz
        d2 = (dx * dx + dy * dy) + dz * dz
        b = 0
        for l in range(nl):
            s = lod[j, l]
            if s * s <= d2:
                b += 1
            else:
                break
        bands[i] = b
        counts[b] += 1


@njit_noref
def band_events(ids, m, bands, state, prev, n_prev, ev_ids, ev_prev, ev_cur):
    """Band changes since the last frame, as Unity's CullingGroup state changes: an object drawn now whose
    band differs from its last (``state`` (N,) int8, -1: not drawn), and an object drawn last frame
    (``prev[:n_prev]``) and not now (current band -1). Writes (id, previous, current) into ``ev_*``
    (room for m + n_prev) and ``ids[:m]`` into ``prev``; updates ``state``. Returns (events, m)."""
    ne = 0
    for i in range(m):  # mark the drawn: 2 + band, so "drawn this frame" is known in O(1)
        j = ids[i]
        b = bands[i]
        old = state[j]
        if old != b:
            ev_ids[ne] = j
            ev_prev[ne] = old
            ev_cur[ne] = b
            ne += 1
        state[j] = 100 + b
    for i in range(n_prev):
        j = prev[i]
        if state[j] < 100:  # drawn last frame, not now
            ev_ids[ne] = j
            ev_prev[ne] = state[j]
            ev_cur[ne] = -1
            ne += 1
            state[j] = -1
    for i in range(m):
        j = ids[i]
        state[j] -= 100
        prev[i] = j
    return ne, m


def warm() -> None:
    """Compile the kernels (before anything timed)."""
    ids = np.zeros(1, dtype=np.int64)
    c = np.zeros((1, 3))
    f0 = np.zeros(0)
    p0 = np.zeros(0, dtype=np.int64)
    filter_ranges(ids, 1, c, np.zeros(1), np.full(1, -1, dtype=np.int64), np.zeros(1), 0.0, 0.0, 0.0)
    filter_ranges(ids, 1, c, f0, p0, f0, 0.0, 0.0, 0.0)
    inst = np.zeros((1, INSTANCE_WORDS), dtype=np.float32)
    range_fades(ids, 1, c, np.zeros(1), np.full(1, -1, dtype=np.int64), np.zeros(1), 0.1, 0.0, 0.0, 0.0, inst)
    range_fades(ids, 1, c, f0, p0, f0, 0.1, 0.0, 0.0, 0.0, inst)
    bands = np.zeros(1, dtype=np.int8)
    lod_bands(ids, 1, c, np.ones((1, 2)), 0.0, 0.0, 0.0, bands, np.zeros(3, dtype=np.int64))
    e = np.zeros(2, dtype=np.int64)
    e8 = np.zeros(2, dtype=np.int8)
    band_events(ids, 1, bands, np.full(1, -1, dtype=np.int8), np.zeros(1, dtype=np.int64), 0, e, e8, e8.copy())
