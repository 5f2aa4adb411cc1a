"""Numba kernels of the linear scan (:mod:`viewer.index.scan`): a float32 prefilter over flat arrays
that LLVM vectorises, an exact float64 recheck of the lanes it passes in the blocks it flags, split over
every core.

Slots are laid out in blocks of :data:`BLOCK`; a query scans chunks of :data:`CHUNK` slots, one chunk per
``prange`` iteration. Slots past the live count are padding that no test accepts (``rho`` NaN, ``rr`` -1).

Why the prefilter is conservative (it never drops an object the exact float64 predicate accepts):
every slot keeps ``x32, y32, z32`` (its centre rounded to nearest float32) and ``rho``, a float32 upper
bound of ``(r + e_c) * (1 + 2**-19)`` where ``e_c = 2**-24 * (|x| + |y| + |z|) + 2**-140`` bounds the distance
the rounding moved the centre; the query passes ``dp``, the same bound for the point plus a floor of
``2**-60``. The float32 test ``(dx*dx + dy*dy) + dz*dz <= (rho + dp)**2`` then accepts every object whose
float64 test passes: the float64 test implies a true distance of at most ``r (1 + 2**-50) + 2**-535``; the
float32 distance of the rounded points is larger by at most ``e_c + e_p``; the float32 evaluation adds at
most 5 roundings (``(1 + 2**-24)**5``) and ``2**-148`` of underflow; and the ``(1 + 2**-19)**2`` margin and the
``2**-60`` floor cover all of that with room to spare. Objects with ``|x| + |y| + |z| + r >= 2**60`` (and points
with ``|p|_1 >= 2**60``) are outside what float32 squares can hold: such an object gets ``rho = inf`` (always
rechecked), such a point is answered by the exact float64 scan alone. No ``fastmath`` here: the prefilter
relies on IEEE rounding and on NaN comparing false (the floor kernel, whose sum is thrown away, may use it).
"""

from __future__ import annotations

import os

# OpenMP's default keeps a worker spinning after each parallel region; on a machine with as many busy
# threads as cores that spin takes the core from the thread that runs the frame (measured here: a
# one-thread 10k scan went from 10 us to 5 ms after a parallel call). Sleeping workers cost a wake-up
# (~10 us) per parallel query instead. Set before numba loads its OpenMP pool; the user's value wins.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import prange  # noqa: E402

from viewer._jit import CACHE, njit  # noqa: E402

BLOCK = 64  # slots per prefilter block: one any-hit test, then an exact recheck of the block if set
CHUNK = 1 << 14  # slots per parallel work item (16384 x 16 B = 256 KiB of float32: stays in L2)
WILD = 2.0**60  # |x| + |y| + |z| + r from here on: no float32 prefilter for that object / point
_MARGIN = 1.0 + 2.0**-19

__all__ = ["BLOCK", "CHUNK", "WILD", "bound_rho", "move_rows", "point_slack", "read_floor", "read_floor_serial",
           "remove_slot", "scan", "scan_exact", "scan_serial"]


@njit
def bound_rho(x, y, z, r, x32, y32, z32, rho, lo, hi):
    """Fill the float32 copy of slots ``lo..hi-1`` from the float64 ``x, y, z, r`` (world units)."""
    for i in range(lo, hi):
        _bound_one(x, y, z, r, x32, y32, z32, rho, i)


@njit(inline="always")
def _bound_one(x, y, z, r, x32, y32, z32, rho, i):
    a = abs(x[i]) + abs(y[i]) + abs(z[i])
    if a + r[i] >= WILD:
        x32[i] = np.float32(0.0)
        y32[i] = np.float32(0.0)
        z32[i] = np.float32(0.0)
        rho[i] = np.float32(np.inf)
    else:
        x32[i] = np.float32(x[i])
        y32[i] = np.float32(y[i])
        z32[i] = np.float32(z[i])
        rho[i] = _up32((r[i] + (a * 2.0**-24 + 2.0**-140)) * _MARGIN)


@njit
def point_slack(px, py, pz) -> float:
    """``dp`` of a query point (float64 holding a float32 value), or inf when the point is too far out
    for the float32 prefilter."""
    a = abs(px) + abs(py) + abs(pz)
    if not a < WILD:
        return np.inf
    return float(_up32((a * 2.0**-24 + 2.0**-60) * _MARGIN))


@njit(inline="always")
def _up32(v):
    """The smallest float32 >= ``v`` (a non-negative float64 below float32's range)."""
    f = np.float32(v)
    if np.float64(f) < v:
        f = np.nextafter(f, np.float32(np.inf))
    return f


@njit(inline="always")
def _chunk(x32, y32, z32, rho, px32, py32, pz32, dp32, x, y, z, rr, px, py, pz, lo, hi, hits):
    """Scan slots ``lo..hi-1`` (whole blocks); write the slots the exact test accepts to ``hits[lo:]``.
    Returns their count."""
    k = 0
    for b in range(lo, hi, BLOCK):
        any_hit = False
        # unsigned indices: numba then emits no negative-index wraparound, and LLVM sees contiguous
        # loads (with signed ones it vectorises with gathers)
        for j in range(np.uint64(b), np.uint64(b + BLOCK)):  # no branch: an OR of the lanes' compares
            dx = px32 - x32[j]
            dy = py32 - y32[j]
            dz = pz32 - z32[j]
            t = rho[j] + dp32
            any_hit |= (dx * dx + dy * dy) + dz * dz <= t * t
        if any_hit:  # rare: the lanes again, and the float64 operands read only for the lanes that pass
            for j in range(np.uint64(b), np.uint64(b + BLOCK)):
                dx = px32 - x32[j]
                dy = py32 - y32[j]
                dz = pz32 - z32[j]
                t = rho[j] + dp32
                if (dx * dx + dy * dy) + dz * dz <= t * t:
                    ex = px - x[j]
                    ey = py - y[j]
                    ez = pz - z[j]
                    if (ex * ex + ey * ey) + ez * ez <= rr[j]:
                        hits[lo + k] = j
                        k += 1
    return k


@njit
def scan_exact(x, y, z, rr, ids, n, px, py, pz, out):
    """The float64 test alone over slots ``0..n-1`` (for points beyond the prefilter's range)."""
    k = 0
    size = out.size
    for j in range(n):
        ex = px - x[j]
        ey = py - y[j]
        ez = pz - z[j]
        if (ex * ex + ey * ey) + ez * ez <= rr[j]:
            if k < size:
                out[k] = ids[j]
            k += 1
    return k


def _scan(x32, y32, z32, rho, x, y, z, rr, ids, n, px, py, pz, counts, hits, out):
    """Ids of the slots ``0..n-1`` whose sphere holds ``(px, py, pz)`` into ``out`` (counting past its
    size without writing); returns the count. ``counts`` (chunks,) int64 and ``hits`` (capacity,)
    int32 are scratch."""
    dp = point_slack(px, py, pz)
    if dp == np.inf:
        return scan_exact(x, y, z, rr, ids, n, px, py, pz, out)
    nb = (n + BLOCK - 1) // BLOCK * BLOCK
    nc = (nb + CHUNK - 1) // CHUNK
    px32 = np.float32(px)
    py32 = np.float32(py)
    pz32 = np.float32(pz)
    dp32 = np.float32(dp)
    for c in prange(nc):
        lo = c * CHUNK
        hi = min(nb, lo + CHUNK)
        counts[c] = _chunk(x32, y32, z32, rho, px32, py32, pz32, dp32, x, y, z, rr, px, py, pz, lo, hi, hits)
    k = 0
    size = out.size
    for c in range(nc):
        lo = c * CHUNK
        for j in range(counts[c]):
            if k < size:
                out[k] = ids[hits[lo + j]]
            k += 1
    return k


#: every core (``numba.get_num_threads()`` threads)
scan = numba.njit(cache=CACHE, nogil=True, parallel=True)(_scan)
#: one thread: for small N, where waking the other threads costs more than the scan
scan_serial = njit(_scan)


def _read_floor(x32, y32, z32, rho, n, partial):
    """Read the float32 arrays of slots ``0..n-1`` once, chunked and threaded as :func:`scan` is: the
    scan's physical floor. ``partial`` (chunks,) float32 scratch; returns a sum nobody needs."""
    nb = (n + BLOCK - 1) // BLOCK * BLOCK
    nc = (nb + CHUNK - 1) // CHUNK
    for c in prange(nc):
        lo = c * CHUNK
        hi = min(n, lo + CHUNK)
        s = np.float32(0.0)
        for j in range(np.uint64(lo), np.uint64(hi)):
            s += (x32[j] + y32[j]) + (z32[j] + rho[j])
        partial[c] = s
    t = np.float32(0.0)
    for c in range(nc):
        t += partial[c]
    return t


#: the floor of :func:`scan` (every core) and of :func:`scan_serial` (one thread)
read_floor = numba.njit(cache=CACHE, nogil=True, parallel=True, fastmath=True)(_read_floor)
read_floor_serial = njit(fastmath=True)(_read_floor)


@njit
def move_rows(x, y, z, r, rr, x32, y32, z32, rho, slots, centres, radii):
    """Write ``centres`` (M, 3) and ``radii`` (M,) (NaN: keep the slot's radius) into ``slots`` (M,), float64
    and float32 copies both."""
    for k in range(slots.size):
        s = slots[k]
        x[s] = centres[k, 0]
        y[s] = centres[k, 1]
        z[s] = centres[k, 2]
        if radii[k] == radii[k]:
            r[s] = radii[k]
            rr[s] = radii[k] * radii[k]
        _bound_one(x, y, z, r, x32, y32, z32, rho, s)


@njit
def remove_slot(x, y, z, r, rr, x32, y32, z32, rho, ids, slots, i, n):
    """Remove the live id ``i`` from the ``n`` live slots: the last slot moves into its hole, the freed slot
    becomes padding; ``slots`` (id -> slot) follows. Returns the new count."""
    s = slots[i]
    last = n - 1
    if s != last:
        x[s] = x[last]
        y[s] = y[last]
        z[s] = z[last]
        r[s] = r[last]
        rr[s] = rr[last]
        x32[s] = x32[last]
        y32[s] = y32[last]
        z32[s] = z32[last]
        rho[s] = rho[last]
        ids[s] = ids[last]
        slots[ids[s]] = s
    rho[last] = np.float32(np.nan)
    rr[last] = -1.0
    ids[last] = -1
    slots[i] = -1
    return last
