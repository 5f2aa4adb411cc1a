"""Numba kernels of :mod:`viewer.frame.motion`: advance every mover by one time step, in place.

All arrays come from the caller (nothing is allocated), so the kernel is compiled without reference
counting. The random walk draws from a counter-based stream (splitmix64 of the key, the step number,
the id and the axis), so a step's draw depends only on those four numbers: replays are exact, whatever
happened before.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels.jit import njit_noref
from ..kernels.prefetch import prefetch

__all__ = ["advance_kernel", "counter_uniform", "warm"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_FOUR = np.uint64(4)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53
AHEAD = 16  # movers between a prefetch and its use (8, 16, 32 measured alike)


@njit_noref
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit_noref
def counter_uniform(key, step, i, axis):
    """A uniform float64 in [0, 1) that depends only on (key, step, i, axis), all integers >= 0."""
    z = _mix(np.uint64(key) + np.uint64(step) * _GOLDEN)
    z = _mix(z ^ (np.uint64(i) * _FOUR + np.uint64(axis)))
    return np.float64(z >> _S11) * _INV53


@njit_noref
def _reflect(p, v, lo, hi):
    """Fold ``p`` back into [lo, hi] off the walls; returns (p, sign of v afterwards)."""
    s = 1.0
    if p > hi:
        p = hi - (p - hi)
        s = -1.0
    elif p < lo:
        p = lo + (lo - p)
        s = -1.0
    if p > hi:  # a step longer than the box: stop at the wall
        p = hi
    elif p < lo:
        p = lo
    return p, s * v


@njit_noref
def advance_kernel(ids, kind, speed, direction, axis, orbit_radius, phase_cs, start, orbit_centre, vel, base_r,
                   centres, radii, out_c, out_r, lo, hi, dt, t_new, step, key, pulse, period):
    """Advance the M movers to time ``t_new`` (= previous t + dt) and write their new centres into
    ``centres[ids]`` and ``out_c`` ((M, 3) float64), radii into ``radii[ids]`` and ``out_r`` when
    ``pulse > 0``. ``vel`` ((M, 3)) is the drifters' current velocity (flipped at walls); ``phase_cs`` ((M, 2))
    the sine and cosine of each mover's pulse phase. The rows of ``centres`` and ``radii`` are prefetched
    ``AHEAD`` movers ahead: at 1e6 objects each mover's row is a cache miss, and without the hint the misses
    of its stores queued one after another, and the step waited on them."""
    m = ids.shape[0]
    w = 2.0 * math.pi * t_new / period if pulse > 0.0 else 0.0
    sw = math.sin(w)
    cw = math.cos(w)
    for j in range(m):
        if j + AHEAD < m:
            f = ids[j + AHEAD]
            prefetch(centres, f, 0)
            prefetch(radii, f, 0)
        i = ids[j]
        k = kind[j]
        if k == 0:  # drift
            for a in range(3):
                p, v = _reflect(centres[i, a] + vel[j, a] * dt, vel[j, a], lo[a], hi[a])
                vel[j, a] = v
                out_c[j, a] = p
        elif k == 1:  # orbit: a function of t, so no error builds up
            rr = orbit_radius[j]
            th = speed[j] / rr * t_new if rr > 0.0 else 0.0
            c = math.cos(th)
            s = math.sin(th)
            for a in range(3):
                p = orbit_centre[j, a] + rr * (c * direction[j, a] + s * axis[j, a])
                if p > hi[a]:
                    p = hi[a]
                elif p < lo[a]:
                    p = lo[a]
                out_c[j, a] = p
        else:  # random walk
            h = speed[j] * dt
            for a in range(3):
                u = counter_uniform(key, step, i, a)
                p, v = _reflect(centres[i, a] + (2.0 * u - 1.0) * h, 1.0, lo[a], hi[a])
                out_c[j, a] = p
        for a in range(3):
            centres[i, a] = out_c[j, a]
        if pulse > 0.0:
            # sin(w + phase) = sin w cos phase + cos w sin phase: one sine a step, not one a mover
            r = base_r[j] * (1.0 + pulse * (sw * phase_cs[j, 1] + cw * phase_cs[j, 0]))
            radii[i] = r
            out_r[j] = r


def warm() -> None:
    """Compile the kernels (before anything timed)."""
    z3 = np.zeros((1, 3))
    ids = np.zeros(1, dtype=np.int64)
    for k in (0, 1, 2):
        kind = np.full(1, k, dtype=np.int8)
        advance_kernel(ids, kind, np.ones(1), z3.copy(), z3.copy(), np.ones(1), np.zeros((1, 2)), z3.copy(), z3.copy(),
                       z3.copy(), np.ones(1), z3.copy(), np.ones(1), z3.copy(), np.ones(1), np.full(3, -1.0),
                       np.full(3, 1.0), 0.1, 0.1, 0, 1, 0.1, 1.0)
