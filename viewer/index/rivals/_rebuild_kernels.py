"""Numba kernels of the rebuilt-every-frame grid (:mod:`viewer.index.rivals.rebuild`).

**Levels.** A sphere of radius r in [2^(e-1), 2^e) (``frexp``'s exponent e; radii under 2^-531 and 0 share the
level of e = -531) lives on level e,
whose cells have an edge of 2^(e+1) >= 2r: a sphere holding p (its rounded predicate included) has its centre
in p's cell or a neighbour on each axis, so a query probes 27 cells a level. A cell coordinate is
``floor(x * (1 / edge))`` clamped to +-2^40: the product by a power of two is exact in the normal range and
monotone below it, so the map is monotone and two coordinates under an edge apart stay at most one cell apart,
past the clamp and for subnormal or huge coordinates too.

**Buckets.** Level e's cells hash into its own run of buckets (a power of two, about one bucket for every two
objects); a counting sort lays the objects out bucket by bucket as rows (x, y, z, r) beside their ids. Two
cells sharing a bucket only add candidates, which the predicate rejects; a query visits each distinct bucket
of its 27 once.

**Rows at their ids.** Object i's row (x, y, z, r) is row i of an (N, 4) table, as the update's scatter floor
keeps it (a removed id's radius is -1, skipped by the build): a batch of moves is that floor's write.

**The build, on every core.** Each thread takes a contiguous share of the rows: it computes their keys and
counts them per bucket in its own row of counts; one pass turns the counts into each thread's positions; each
thread then writes its objects' rows there. The objects keep their order within a bucket.
"""

from __future__ import annotations

import numpy as np
from numba import prange  # noqa: I001

import numba

from viewer.kernels.jit import CACHE, njit_noref, variant

from .._contract_kernels import emit, holds

#: the lowest level's exponent: every radius below 2**-531 (and 0) shares it. A sphere that small holds the
#: points whose squared distance underflows (within about 2**-537 of its centre: the contract's PAD_ABS), so
#: its cells must be wider than its radius says: 2**-530
MIN_EXP = -531
#: frexp exponents of radii are in [MIN_EXP, 102] (radii up to 2**100); level index = exponent - MIN_EXP
LEVEL_BIAS = -MIN_EXP
LEVELS = 102 - MIN_EXP + 1
#: cell coordinates are clamped to +-CLAMP
CLAMP = float(1 << 40)

_P1 = np.int64(73856093)
_P2 = np.int64(19349663)
_P3 = np.int64(83492791)


@njit_noref(inline="always")
def level_of(bits):
    """The level index of a radius >= 0 given by its float64 ``bits`` (int64): its frexp exponent, read from
    the exponent field (subnormals and 0 fall below MIN_EXP), at least MIN_EXP, + LEVEL_BIAS."""
    return max(((bits >> 52) & 0x7FF) - 1022, MIN_EXP) + LEVEL_BIAS


@njit_noref(inline="always")
def cell_of(v, inv):
    """``floor(v * inv)`` clamped to +-CLAMP (``inv`` 1 / the level's cell edge, a power of two <= 2**530: the
    product is exact in the normal range and rounds monotonically below it)."""
    c = np.floor(v * inv)
    if c > CLAMP:
        c = CLAMP
    elif c < -CLAMP:
        c = -CLAMP
    return np.int64(c)


@njit_noref(inline="always")
def bucket_of(cx, cy, cz, mask):
    return ((cx * _P1) ^ (cy * _P2) ^ (cz * _P3)) & mask


def _count_levels(rbits, n, nthreads, lcount):
    """Live objects per level, per thread: ``rbits`` (N, 4) the rows' float64 bits viewed as int64 (column 3,
    the radius: negative for a removed id's row), ``lcount`` (nthreads, LEVELS) int64, zeroed here."""
    for t in prange(nthreads):
        row = lcount[t]
        for j in range(LEVELS):
            row[j] = 0
        for i in range(n * t // nthreads, n * (t + 1) // nthreads):
            b = rbits[i, 3]
            if b >= 0:
                row[level_of(b)] += 1


def _count_buckets(rows, rbits, n, nthreads, loff, lmask, linv, keys, counts):
    """Each live row's bucket into ``keys`` (N,) int64 (-1 for a removed id's), counted per thread into
    ``counts`` (nthreads, T) int32 (zeroed here). ``loff``, ``lmask``, ``linv`` per level index: its first
    bucket, its bucket mask, 1 / its cell edge."""
    nb = counts.shape[1]
    for t in prange(nthreads):
        row = counts[t]
        for b in range(nb):
            row[b] = 0
        for i in range(n * t // nthreads, n * (t + 1) // nthreads):
            b = rbits[i, 3]
            if b < 0:
                keys[i] = -1
                continue
            lv = level_of(b)
            e = linv[lv]
            k = loff[lv] + bucket_of(cell_of(rows[i, 0], e), cell_of(rows[i, 1], e), cell_of(rows[i, 2], e), lmask[lv])
            keys[i] = k
            row[k] += 1


@njit_noref
def place_buckets(counts, start):
    """Turn the per-thread ``counts`` (nthreads, T) into each thread's first position in each bucket (in
    place), and ``start`` (T + 1,) into each bucket's first row."""
    nthreads, nb = counts.shape
    pos = 0
    for b in range(nb):
        start[b] = pos
        for t in range(nthreads):
            c = counts[t, b]
            counts[t, b] = pos
            pos += c
    start[nb] = pos


def _scatter_rows(rows, n, nthreads, keys, counts, grid, gid):
    """Each live row (x, y, z, r) and its id (its place in ``rows``) at its thread's next position in its
    bucket: ``grid`` (live, 4) float64, ``gid`` (live,) int64."""
    for t in prange(nthreads):
        pos = counts[t]
        for i in range(n * t // nthreads, n * (t + 1) // nthreads):
            k = keys[i]
            if k < 0:
                continue
            d = pos[k]
            pos[k] = d + 1
            grid[d, 0] = rows[i, 0]
            grid[d, 1] = rows[i, 1]
            grid[d, 2] = rows[i, 2]
            grid[d, 3] = rows[i, 3]
            gid[d] = i


@njit_noref
def query(px, py, pz, levels, loff, lmask, linv, start, rows, rid, probe, out, stats):
    """Ids of the spheres holding (px, py, pz) into ``out`` (as many as it holds); returns their number.
    ``levels`` the non-empty level indexes; ``probe`` (27,) int64 scratch. ``stats``: candidates, visible,
    buckets visited, the most buckets on one level."""
    size = out.shape[0]
    k = 0
    cand = 0
    visited = 0
    most = 0
    for li in range(levels.shape[0]):
        lv = levels[li]
        e = linv[lv]
        mask = lmask[lv]
        off = loff[lv]
        cx = cell_of(px, e)
        cy = cell_of(py, e)
        cz = cell_of(pz, e)
        m = 0
        for dx in range(-1, 2):
            ax = min(max(cx + dx, -np.int64(CLAMP)), np.int64(CLAMP))
            for dy in range(-1, 2):
                ay = min(max(cy + dy, -np.int64(CLAMP)), np.int64(CLAMP))
                for dz in range(-1, 2):
                    az = min(max(cz + dz, -np.int64(CLAMP)), np.int64(CLAMP))
                    b = off + bucket_of(ax, ay, az, mask)
                    # keep the probes sorted and distinct: two cells in one bucket are scanned once
                    j = m
                    while j > 0 and probe[j - 1] > b:
                        j -= 1
                    if j > 0 and probe[j - 1] == b:
                        continue
                    for q in range(m, j, -1):
                        probe[q] = probe[q - 1]
                    probe[j] = b
                    m += 1
        visited += m
        most = max(most, m)
        for j in range(m):
            b = probe[j]
            s0 = start[b]
            s1 = start[b + 1]
            cand += s1 - s0
            for s in range(s0, s1):
                if holds(px, py, pz, rows[s, 0], rows[s, 1], rows[s, 2], rows[s, 3]):
                    k = emit(out, size, k, rid[s])
    stats[0] = cand
    stats[1] = k
    stats[2] = visited
    stats[3] = most
    return k


def _write_rows(ids, centres, radii, rows, nthreads):
    """A batch's moves: mover k's new centre (``centres`` (M, 3)) and radius (``radii`` (M,), NaN: keep) into
    its row ``rows[ids[k]]`` ((N, 4) float64), as the scatter floor writes them. Ids are distinct: threads
    write distinct rows."""
    m = ids.shape[0]
    for t in prange(nthreads):
        for k in range(m * t // nthreads, m * (t + 1) // nthreads):
            i = ids[k]
            rows[i, 0] = centres[k, 0]
            rows[i, 1] = centres[k, 1]
            rows[i, 2] = centres[k, 2]
            if radii[k] == radii[k]:
                rows[i, 3] = radii[k]


#: below this many objects a build runs on one thread (waking the others costs more; and a forked child of a
#: process whose OpenMP threads have started must not start them)
PARALLEL_FROM = 1 << 16

count_levels = numba.njit(cache=CACHE, nogil=True, parallel=True)(_count_levels)
count_buckets = numba.njit(cache=CACHE, nogil=True, parallel=True)(_count_buckets)
scatter_rows = numba.njit(cache=CACHE, nogil=True, parallel=True)(_scatter_rows)
count_levels_serial = njit_noref(variant(_count_levels, "serial"))
count_buckets_serial = njit_noref(variant(_count_buckets, "serial"))
scatter_rows_serial = njit_noref(variant(_scatter_rows, "serial"))
write_rows = numba.njit(cache=CACHE, nogil=True, parallel=True)(_write_rows)
write_rows_serial = njit_noref(variant(_write_rows, "serial"))
