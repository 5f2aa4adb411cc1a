"""Numba kernels of the reference loop (:mod:`viewer.index.loop32`): a float32 structure-of-arrays test of
every object, the lanes it passes rechecked with the exact float64 predicate.

Per block of :data:`BLOCK` slots: one pass writes a byte mask (the float32 test) and counts the lanes it
passes, with no branch (LLVM vectorises it); when any passed, a second pass rechecks those lanes with the
contract's float64 predicate and writes their ids (:func:`viewer.index._scan_kernels.recheck`). Queries
over many objects split the slots in chunks of :data:`CHUNK`, one ``prange`` iteration each.

**The float32 lanes** hold each object in the world scaled by ``S = 2**-40`` (exact, a power of two):
``xs = float32(x S)`` (and y, z), and ``rs`` a float32 at least ``r S (1 + 2**-18) + 2**-23 |X|_1 +
2**-69`` (``X = c S``), rounded up. The query point gives ``P = float32(p S)`` and ``sl >= 2**-22 |P|_1``.
A lane passes if ``(dx*dx + dy*dy) + dz*dz <= t*t`` in float32 with ``d = P - xs`` and ``t = rs + sl``.

**Why it is conservative** (u = 2**-24; |.|_1 over the three axes). Scaled, every |coordinate| is at most
2**60 and every radius 2**60, so the squares stay below 2**124 (float32 holds 2**128): nothing overflows.
The float64 predicate implies |D|_2 <= R (1 + 2**-50) + 2**-575 for D = (p - c) S and R = r S (the scan's
bound, scaled). Each float32 rounding of a coordinate errs by at most u |.| + 2**-150 (subnormal
steps), each subtraction by a factor (1 + u) (differences in the subnormal range are exact), so the
computed d has |d|_2 <= (1 + u)(1 + 2**-50) A with A = R + u (|P|_1 + |X|_1) + 2**-146. The float32 sum of
squares is at most (1 + u)**3 |d|_2**2 + 2**-147 (three roundings, products that underflow err by at most
2**-150 each). ``t = fl(rs + sl) >= (1 - u)(rs + sl) >= (1 + 2**-20) A + 2**-70`` by the choice of ``rs``
and ``sl``, so ``fl(t*t) >= (1 - u) t**2 - 2**-150 >= (1 + 2**-19 - 2**-23) A**2 + 2**-141``, which is
above the sum's bound ((1 + u)**5 (1 + 2**-49) A**2 + 2**-147): every object the float64 predicate accepts
passes. (The 2**-70 keeps ``t*t`` out of float32's underflow, so subnormal worlds stay exact: there every
lane passes and the float64 predicate alone decides.) No ``fastmath``: the proof relies on IEEE rounding.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from viewer.kernels.jit import CACHE, njit, njit_noref, variant

# slots per parallel work item, as the scan's; importing the scan's kernels first also sets its OpenMP wait
# policy before numba's thread pool loads (an index warmed before the scan would otherwise leave workers
# spinning on the cores every single-threaded query needs)
from ._scan_kernels import CHUNK, gather, recheck, swap_remove, write_row

BLOCK = 1024  # slots per mask pass: the mask stays in L1
SCALE = 2.0**-40  # world -> lane units: |coordinate| <= 2**60, squares of differences below float32's max

__all__ = ["BLOCK", "CHUNK", "SCALE", "lane_radius", "loop", "loop_serial", "move_rows", "remove_slot", "set_lanes"]


@njit_noref(inline="always")
def lane_radius(x, y, z, r):
    """The float32 lane radius of a sphere (world units in, lane units out), rounded up: see the module's proof."""
    v = r * SCALE * (1.0 + 2.0**-18) + (abs(x) + abs(y) + abs(z)) * SCALE * 2.0**-23 + 2.0**-69
    f = np.float32(v)
    if f < v:
        f = np.nextafter(f, np.float32(np.inf))
    return f


@njit_noref
def set_lanes(x, y, z, r, xs, ys, zs, rs, lo, hi):
    """The float32 lanes of slots ``lo..hi-1`` from their float64 rows."""
    for j in range(lo, hi):
        xs[j] = np.float32(x[j] * SCALE)
        ys[j] = np.float32(y[j] * SCALE)
        zs[j] = np.float32(z[j] * SCALE)
        rs[j] = lane_radius(x[j], y[j], z[j], r[j])


@njit(inline="always")
def _chunk(xs, ys, zs, rs, x, y, z, rr, px, py, pz, lo, hi, hits, mask):
    """Slots ``lo..hi-1`` whose sphere holds the point, into ``hits[lo:]``; returns their count. ``mask``
    (BLOCK,) uint8 scratch, the caller's (one per chunk: an allocation here would be hoisted out of the
    ``prange`` loop and shared by the threads)."""
    a0 = np.float32(px * SCALE)
    a1 = np.float32(py * SCALE)
    a2 = np.float32(pz * SCALE)
    v = (abs(px) + abs(py) + abs(pz)) * SCALE * 2.0**-22
    sl = np.float32(v)
    if sl < v:
        sl = np.nextafter(sl, np.float32(np.inf))
    k = 0
    for b in range(lo, hi, BLOCK):
        m = min(BLOCK, hi - b)
        # views of the block: indices from 0, so numba emits no negative-index wraparound and LLVM vectorises
        bx, by, bz, br = xs[b : b + m], ys[b : b + m], zs[b : b + m], rs[b : b + m]
        c = 0
        for j in range(m):  # the float32 test into a mask, and the lanes passed counted: no branch
            dx = a0 - bx[j]
            dy = a1 - by[j]
            dz = a2 - bz[j]
            t = br[j] + sl
            h = (dx * dx + dy * dy) + dz * dz <= t * t
            mask[j] = h
            c += h
        if c:  # the exact float64 predicate decides, on the lanes that passed
            k = recheck(mask, m, b, x, y, z, rr, px, py, pz, hits, lo, k)
    return k


def _loop(xs, ys, zs, rs, x, y, z, rr, ids, n, px, py, pz, counts, hits, masks, out):
    """Ids of the slots ``0..n-1`` whose sphere holds ``(px, py, pz)`` into ``out`` (counting past its size
    without writing); returns the count. ``counts`` (chunks,) int64, ``hits`` (>= n,) int32 and ``masks``
    (chunks, BLOCK) uint8 are scratch."""
    nc = (n + CHUNK - 1) // CHUNK
    for c in prange(nc):
        lo = c * CHUNK
        counts[c] = _chunk(xs, ys, zs, rs, x, y, z, rr, px, py, pz, lo, min(n, lo + CHUNK), hits, masks[c])
    return gather(ids, hits, counts, nc, out)


#: every core (``numba.get_num_threads()`` threads)
loop = numba.njit(cache=CACHE, nogil=True, parallel=True)(_loop)
#: one thread
loop_serial = njit(variant(_loop, "serial"))


@njit_noref
def move_rows(x, y, z, r, rr, xs, ys, zs, rs, slots, centres, radii):
    """Write ``centres`` (M, 3) and ``radii`` (M,) (NaN: keep the slot's radius) into ``slots`` (M,), float64
    rows and float32 lanes both."""
    for k in range(slots.size):
        s = slots[k]
        write_row(x, y, z, r, rr, s, centres, radii, k)
        set_lanes(x, y, z, r, xs, ys, zs, rs, s, s + 1)


@njit_noref
def remove_slot(x, y, z, r, rr, xs, ys, zs, rs, ids, slots, i, n):
    """Remove the live id ``i`` from the ``n`` live slots: the last slot moves into its hole; ``slots``
    (id -> slot) follows. Returns the new count."""
    s, last = swap_remove(x, y, z, r, rr, ids, slots, i, n)
    xs[s] = xs[last]
    ys[s] = ys[last]
    zs[s] = zs[last]
    rs[s] = rs[last]
    return last
