"""Numba kernel of :mod:`viewer.frame.events`: one frame of visibility events in O(visible + inside).

Every buffer comes from the caller (nothing is allocated), so it is compiled without reference counting.
"""

from __future__ import annotations

import numpy as np

from ..kernels.jit import njit_noref

__all__ = ["update_events", "warm"]


@njit_noref
def update_events(vis, k, flag, inside, n_in, centres, radii, px, py, pz, margin, relative, entered, left,
                  begin, parent, limit):
    """Turn this frame's visible ids into entered / left events and update the "in" set.

    vis[:k] : (k,) int64, distinct ids whose view sphere holds the point (the query's answer)
    flag : (C,) uint8 per id, 1 = in, 0 = out (2 is used transiently: "visible this frame")
    inside[:n_in] : int64, the ids that were in; rewritten in place to the ids in now
    centres (N, 3), radii (N,) float64 : the world now (distances of in-objects no longer visible)
    margin, relative : hysteresis: an in-object stays in while d <= r + margin (relative: r (1 + margin))
        and, at the near edges (issue 24's ranges), while d >= begin - margin (relative: begin (1 - margin))
        and, for an HLOD child, while its parent's distance dp < limit[p] + margin (relative: limit[p]
        (1 + margin))
    begin (N,) / (0,) float64, parent (N,) / (0,) int64, limit (N,) / (0,) float64: the ranges
        (:class:`viewer.frame.ranges.Ranges`); zero-length: none
    entered, left : out buffers (at least k and n_in long)

    Returns (entered count, left count, new n_in).
    """
    n_ent = 0
    for j in range(k):
        i = vis[j]
        if flag[i] == 0:
            entered[n_ent] = i
            n_ent += 1
        flag[i] = 2
    w = 0
    n_left = 0
    for j in range(n_in):
        i = inside[j]
        if flag[i] == 2:
            flag[i] = 1
            inside[w] = i
            w += 1
            continue
        keep = False
        if margin > 0.0:
            dx = px - centres[i, 0]
            dy = py - centres[i, 1]
            dz = pz - centres[i, 2]
            r = radii[i]
            big = r * (1.0 + margin) if relative else r + margin
            d2 = (dx * dx + dy * dy) + dz * dz
            keep = d2 <= big * big
            if keep and begin.shape[0] > 0:
                small = begin[i] * (1.0 - margin) if relative else begin[i] - margin
                if small > 0.0:
                    keep = d2 >= small * small
            if keep and parent.shape[0] > 0:
                p = parent[i]
                if p >= 0:
                    ex = px - centres[p, 0]
                    ey = py - centres[p, 1]
                    ez = pz - centres[p, 2]
                    lim = limit[p] * (1.0 + margin) if relative else limit[p] + margin
                    keep = (ex * ex + ey * ey) + ez * ez < lim * lim
        if keep:
            inside[w] = i
            w += 1
        else:
            flag[i] = 0
            left[n_left] = i
            n_left += 1
    for j in range(n_ent):
        i = entered[j]
        flag[i] = 1
        inside[w] = i
        w += 1
    return n_ent, n_left, w


def warm() -> None:
    """Compile the kernel."""
    ids = np.zeros(1, dtype=np.int64)
    update_events(ids, 1, np.zeros(1, dtype=np.uint8), np.zeros(2, dtype=np.int64), 0, np.zeros((1, 3)),
                  np.ones(1), 0.0, 0.0, 0.0, 0.5, False, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                  np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0))
