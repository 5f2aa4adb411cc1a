"""Numba kernels of the linear scan (:mod:`viewer.index.scan`): a 16-bit prefilter over flat arrays that
LLVM vectorises, an exact float64 recheck of the lanes it passes in the blocks it flags, split over every
core.

Slots are laid out in blocks of :data:`BLOCK`; a query scans chunks of :data:`CHUNK` slots, one chunk per
``prange`` iteration. Slots past the live count are padding that no float64 test accepts (``rr`` -1).

**The prefilter.** Each block has a frame: an origin ``bo[b, :3]`` (float64) and a scale s (a power of two,
at least ``2**-500``; kept as its inverse ``bs[b] = bo[b, 4]``, so a query multiplies) such that its live
centres lie within ``SPAN / 2`` scale units of the origin and its radii are at most ``RADIUS_UNITS`` units. A lane keeps its centre in the frame's units rounded to
the nearest int16 (``qx, qy, qz``) and ``rq = ceil(r / s) + 1`` (uint16); ``bo[b, 3]`` is the block's
largest ``rq``. A frame is refitted to its block's live objects whenever a lane would not fit it (a move,
an insert, a removal's swap), so every lane always fits (``bo[b, 3]`` only grows between refits).

**A query, per block.** Pass 1 (every block) tests each lane's centre against the block's largest radius:
6 bytes an object read, three conversions a lane, one OR of the lanes' compares, no branch and no store.
Only a block it flags gets pass 2, each lane against its own radius into a byte mask, and the float64
operands are read for the lanes the mask passed alone: the slot is written and the count advanced by the
exact predicate (no branch on it). The build stores a block's objects in one octave of radius
(:func:`viewer.index.scan.slot_order`), so the block's largest radius is at most twice each lane's
(except where two octaves meet) and pass 1 flags few blocks that hold no hit.

**Why it is conservative** (it never drops an object the exact float64 predicate accepts). In units of s,
with P = (p - o) / s and C = (c - o) / s exact: the float64 test implies |P - C| <= r/s (1 + 2**-50) +
2**-535 / s <= r/s + 2**-33 (s >= 2**-500, r/s <= 65000). The stored centre Q is within 0.5 + 2**-37 of C
per axis (|C| < 2**15; the float64 quotient rounds once, relatively), so within 0.867 in distance. The
query's A = float32(P) is within 2**-23 |P|_2 of P. So |A - Q| <= rq - 0.13 + 2**-23 |P|_1. The float32
evaluation of (dx*dx + dy*dy) + dz*dz and of t*t, with t = float32(rq + sl), adds at most 8 roundings of
2**-24 each: the test passes if |A - Q| <= (rq + sl)(1 - 2**-21), which holds with ``sl = |P|_1 * 2**-22``
(rounded to float32) since 2**-21 * 65535 < 0.13. Pass 1 uses ``tb = float32(bo[b, 3] + sl) >= t`` for
every lane (rounding is monotone, and so is float32's ``tb*tb``), so it flags every block pass 2 would
find a lane in. A block whose |P|_1 reaches :data:`FAR` (float32 squares could overflow) skips both
passes: all its lanes get the exact test. No ``fastmath`` in the prefilter: the proof relies on IEEE
rounding (the floor kernel, whose sum is thrown away, may use it).
"""

from __future__ import annotations

import math
import os

# OpenMP's default keeps a worker spinning after each parallel region; on a machine with as many busy
# threads as cores that spin takes the core from the thread that runs the frame (a one-thread scan of a
# small world ran hundreds of times slower right after a parallel call). Sleeping workers cost a wake-up
# per parallel query instead, small beside a query large enough to run on every core. Set before numba
# loads its OpenMP pool; the user's value wins.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import prange  # noqa: E402

from viewer.kernels.jit import CACHE, njit, njit_noref, variant  # noqa: E402
from viewer.kernels.prefetch import prefetch  # noqa: E402

BLOCK = 256  # slots per frame: one any-hit test (pass 1), then pass 2 and the recheck if it is set
CHUNK = 1 << 14  # slots per parallel work item (16384 x 8 B = 128 KiB of prefilter: stays in L2)
SPAN = 16000.0  # a frame's centres span at most this many units an axis (int16 holds +-32767: room to drift)
RADIUS_UNITS = 65000.0  # the largest radius a frame holds, in its units (rq is a uint16)
MIN_SCALE = 2.0**-500  # frames finer than this would let the float64 test's 2**-535 slack exceed a unit
FAR = 2.0**40  # |P|_1 in frame units from here on: the block skips the prefilter

__all__ = ["BLOCK", "CHUNK", "fit_slot", "frame_all", "frame_block", "gather", "move_rows", "read_floor",
           "read_floor_serial", "recheck", "remove_slot", "scan", "scan_serial", "swap_remove", "write_row"]


@njit_noref(inline="always")
def _pow2_at_least(v):
    """The smallest power of two >= v (v > 0, finite)."""
    m, e = math.frexp(v)
    return math.ldexp(1.0, e - 1 if m == 0.5 else e)


@njit_noref
def frame_block(x, y, z, r, qx, qy, qz, rq, bo, bs, b, n):
    """Fit block b's frame to its live slots (those below ``n``) and quantise all its lanes; padding lanes
    get ``rq`` 0 (their float64 ``rr`` of -1 rejects them anyway)."""
    lo0 = lo1 = lo2 = np.inf
    hi0 = hi1 = hi2 = -np.inf
    rmax = 0.0
    s0 = b * BLOCK
    s1 = min(n, s0 + BLOCK)
    for j in range(s0, s1):
        lo0 = min(lo0, x[j])
        hi0 = max(hi0, x[j])
        lo1 = min(lo1, y[j])
        hi1 = max(hi1, y[j])
        lo2 = min(lo2, z[j])
        hi2 = max(hi2, z[j])
        rmax = max(rmax, r[j])
    if s1 <= s0:
        lo0 = hi0 = lo1 = hi1 = lo2 = hi2 = 0.0
    bo[b, 0] = 0.5 * lo0 + 0.5 * hi0  # (halves first: no overflow near the domain's bound)
    bo[b, 1] = 0.5 * lo1 + 0.5 * hi1
    bo[b, 2] = 0.5 * lo2 + 0.5 * hi2
    ext = max(hi0 - lo0, hi1 - lo1, hi2 - lo2)
    bs[b] = 1.0 / _pow2_at_least(max(ext / SPAN, rmax / RADIUS_UNITS, MIN_SCALE))  # exact: a power of two
    bo[b, 3] = 0.0  # the block's largest rq, raised by each lane's _quantise
    for j in range(s0, s0 + BLOCK):
        if j < s1:
            _quantise(x, y, z, r, qx, qy, qz, rq, bo, bs, b, j)
        else:
            qx[j] = 0
            qy[j] = 0
            qz[j] = 0
            rq[j] = 0


@njit_noref
def frame_all(x, y, z, r, qx, qy, qz, rq, bo, bs, n):
    """Fit the frames of every block that holds slots ``0..n-1``."""
    for b in range((n + BLOCK - 1) // BLOCK):
        frame_block(x, y, z, r, qx, qy, qz, rq, bo, bs, b, n)


@njit_noref(inline="always")
def _quantise(x, y, z, r, qx, qy, qz, rq, bo, bs, b, j):
    """Quantise slot j in block b's frame; False (nothing written) if it does not fit the frame."""
    inv = bs[b]  # 1 / s
    u0 = (x[j] - bo[b, 0]) * inv
    u1 = (y[j] - bo[b, 1]) * inv
    u2 = (z[j] - bo[b, 2]) * inv
    ur = r[j] * inv
    if not (abs(u0) <= 32767.0 and abs(u1) <= 32767.0 and abs(u2) <= 32767.0 and ur <= RADIUS_UNITS):
        return False
    qx[j] = np.int16(np.rint(u0))
    qy[j] = np.int16(np.rint(u1))
    qz[j] = np.int16(np.rint(u2))
    q = math.ceil(ur) + 1.0
    rq[j] = np.uint16(q)
    bo[b, 3] = max(bo[b, 3], q)
    return True


@njit_noref
def fit_slot(x, y, z, r, qx, qy, qz, rq, bo, bs, j, n):
    """Quantise slot j after its float64 row changed; refit its block's frame if it does not fit."""
    b = j // BLOCK
    if not _quantise(x, y, z, r, qx, qy, qz, rq, bo, bs, b, j):
        frame_block(x, y, z, r, qx, qy, qz, rq, bo, bs, b, n)


@njit(inline="always")
def _chunk(qx, qy, qz, rq, bo, x, y, z, rr, px, py, pz, lo, hi, hits, mask):
    """Scan blocks ``lo // BLOCK .. hi // BLOCK - 1``; write the slots the exact test accepts to
    ``hits[lo:]``. Returns their count. ``mask`` (BLOCK,) uint8 scratch: the lanes of one block the
    prefilter passes (the caller's, one per chunk: numba would hoist an allocation here out of the
    ``prange`` loop, and the threads would share it)."""
    k = 0
    for b in range(lo // BLOCK, hi // BLOCK):
        inv = bo[b, 4]  # 1 / s
        p0 = (px - bo[b, 0]) * inv
        p1 = (py - bo[b, 1]) * inv
        p2 = (pz - bo[b, 2]) * inv
        m = abs(p0) + abs(p1) + abs(p2)
        j0 = b * BLOCK
        if m < FAR:
            a0 = np.float32(p0)
            a1 = np.float32(p1)
            a2 = np.float32(p2)
            sl = np.float32(m * 2.0**-22)
            # views of the block: indices from 0, so numba emits no negative-index wraparound and LLVM
            # vectorises with contiguous loads
            bx, by, bz, br = qx[j0 : j0 + BLOCK], qy[j0 : j0 + BLOCK], qz[j0 : j0 + BLOCK], rq[j0 : j0 + BLOCK]
            tb = np.float32(bo[b, 3]) + sl
            tb = tb * tb
            any_hit = False
            for j in range(BLOCK):  # pass 1, every block: each lane against the block's largest radius
                dx = a0 - np.float32(bx[j])
                dy = a1 - np.float32(by[j])
                dz = a2 - np.float32(bz[j])
                any_hit |= (dx * dx + dy * dy) + dz * dz <= tb
            if any_hit:  # pass 2, a block that may hold a hit: each lane against its own radius
                for j in range(BLOCK):
                    dx = a0 - np.float32(bx[j])
                    dy = a1 - np.float32(by[j])
                    dz = a2 - np.float32(bz[j])
                    t = np.float32(br[j]) + sl
                    mask[j] = (dx * dx + dy * dy) + dz * dz <= t * t
        else:  # too far for float32 squares: every lane gets the exact test
            mask[:] = 1
            any_hit = True
        if any_hit:
            k = recheck(mask, BLOCK, j0, x, y, z, rr, px, py, pz, hits, lo, k)
    return k


@njit(inline="always")
def recheck(mask, m, j0, x, y, z, rr, px, py, pz, hits, lo, k):
    """The exact float64 predicate on the lanes ``mask[:m]`` passed (slots ``j0 + j``), their operands read
    for those alone: each slot is written to ``hits[lo + k]`` and ``k`` advanced by the predicate (no branch
    on it). Returns the new ``k``."""
    for j in range(m):
        if mask[j]:
            s = j0 + j
            ex = px - x[s]
            ey = py - y[s]
            ez = pz - z[s]
            hits[lo + k] = s
            k += (ex * ex + ey * ey) + ez * ez <= rr[s]
    return k


def _scan(q, rq, bo, f64, ids, n, px, py, pz, counts, hits, masks, out):
    """Ids of the slots ``0..n-1`` whose sphere holds ``(px, py, pz)`` into ``out`` (counting past its
    size without writing); returns the count. ``q`` (3, capacity) int16 rows ``qx, qy, qz``; ``rq``
    (capacity,) uint16; ``bo`` (blocks, 5) the frames (origin, largest rq, scale); ``f64`` (5, capacity)
    rows ``x, y, z, r, rr``. ``counts`` (chunks,) int64, ``hits`` (capacity,) int32 and ``masks`` (chunks,
    BLOCK) uint8 are scratch."""
    qx, qy, qz = q[0], q[1], q[2]
    x, y, z, rr = f64[0], f64[1], f64[2], f64[4]
    nb = (n + BLOCK - 1) // BLOCK * BLOCK
    nc = (nb + CHUNK - 1) // CHUNK
    for c in prange(nc):
        lo = c * CHUNK
        hi = min(nb, lo + CHUNK)
        counts[c] = _chunk(qx, qy, qz, rq, bo, x, y, z, rr, px, py, pz, lo, hi, hits, masks[c])
    return gather(ids, hits, counts, nc, out)


@njit(inline="always")
def gather(ids, hits, counts, nc, out):
    """The ids (``ids[slot]``) of the ``nc`` chunks' hits (chunk c's ``counts[c]`` slots at ``hits[c * CHUNK:]``),
    in chunk order, into ``out`` (counting past its size without writing); returns the count."""
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
scan_serial = njit_noref(variant(_scan, "serial"))  # no reference counts: its row views and helper calls cost none


def _read_floor(wx, wy, wz, n, partial):
    """Read the arrays every query reads whole, the int16 centres of slots ``0..n-1`` (``wx..wz``: viewed as
    uint64 words, 4 slots a word), once, chunked and threaded as :func:`scan` is: the scan's physical
    floor (the radii are read only in the blocks pass 1 flags). ``partial`` (chunks,) uint64 scratch;
    returns a sum nobody needs."""
    nb = (n + BLOCK - 1) // BLOCK * BLOCK
    nc = (nb + CHUNK - 1) // CHUNK
    for c in prange(nc):
        lo = c * CHUNK // 4
        hi = min(nb, c * CHUNK + CHUNK) // 4
        s = np.uint64(0)
        for j in range(np.uint64(lo), np.uint64(hi)):
            s += (wx[j] ^ wy[j]) + wz[j]
        partial[c] = s
    t = np.uint64(0)
    for c in range(nc):
        t += partial[c]
    return t


#: the floor of :func:`scan` (every core) and of :func:`scan_serial` (one thread)
read_floor = numba.njit(cache=CACHE, nogil=True, parallel=True, fastmath=True)(_read_floor)
read_floor_serial = njit(fastmath=True)(variant(_read_floor, "serial"))


@njit_noref
def move_rows(x, y, z, r, rr, qx, qy, qz, rq, bo, bs, slots, centres, radii, n):
    """Write ``centres`` (M, 3) and ``radii`` (M,) (NaN: keep the slot's radius) into ``slots`` (M,), float64
    rows and prefilter lanes both."""
    m = slots.size
    for k in range(m):
        if k + 8 < m:  # the rows of the move 8 ahead: their cache misses overlap this move's work
            t = slots[k + 8]
            for a in (x, y, z, r, rr):
                prefetch(a, t, 0)
            for a in (qx, qy, qz):
                prefetch(a, t, 0)
            prefetch(rq, t, 0)
            prefetch(bo, t // BLOCK, 0)
        s = slots[k]
        write_row(x, y, z, r, rr, s, centres, radii, k)
        fit_slot(x, y, z, r, qx, qy, qz, rq, bo, bs, s, n)


@njit_noref(inline="always")
def write_row(x, y, z, r, rr, s, centres, radii, k):
    """Slot ``s``'s float64 row from move ``k``: ``centres[k]`` (3,), ``radii[k]`` (NaN: keep the radius)."""
    x[s] = centres[k, 0]
    y[s] = centres[k, 1]
    z[s] = centres[k, 2]
    if radii[k] == radii[k]:
        r[s] = radii[k]
        rr[s] = radii[k] * radii[k]


@njit_noref(inline="always")
def swap_remove(x, y, z, r, rr, ids, slots, i, n):
    """Remove the live id ``i`` from the float64 rows and ids of the ``n`` live slots: the last slot's row
    moves into its hole (``slots``, id -> slot, follows), the freed slot becomes padding (``rr`` -1, id -1).
    Returns ``(hole, freed)``, the two slots (equal when ``i`` held the last)."""
    s = slots[i]
    last = n - 1
    if s != last:
        for a in (x, y, z, r, rr):
            a[s] = a[last]
        ids[s] = ids[last]
        slots[ids[s]] = s
    rr[last] = -1.0
    ids[last] = -1
    slots[i] = -1
    return s, last


@njit_noref
def remove_slot(x, y, z, r, rr, qx, qy, qz, rq, bo, bs, ids, slots, i, n):
    """Remove the live id ``i`` from the ``n`` live slots: the last slot moves into its hole, the freed slot
    becomes padding; ``slots`` (id -> slot) follows. Returns the new count."""
    s, last = swap_remove(x, y, z, r, rr, ids, slots, i, n)
    qx[last] = 0
    qy[last] = 0
    qz[last] = 0
    rq[last] = 0
    if s != last:
        fit_slot(x, y, z, r, qx, qy, qz, rq, bo, bs, s, last)
    return last
