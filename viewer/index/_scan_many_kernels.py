"""The scan's batch query (:meth:`viewer.index.LinearScan.query_many`): a group of up to :data:`GROUP` points
tested against every slot in one pass over the scan's arrays. Each chunk's prefilter (128 KiB) is read from
memory once for the group and tested against every point of it from cache, with the single query's own
per-chunk test (:func:`viewer.index._scan_kernels._chunk`), so the answers are the same, slot for slot."""

from __future__ import annotations

import numba
from numba import prange

from viewer.kernels.jit import CACHE, njit, variant

from ._scan_kernels import BLOCK, CHUNK, _chunk

__all__ = ["GROUP", "gather_group", "scan_group", "scan_group_serial"]

#: points a pass over the arrays answers (the hits of each are kept: GROUP x capacity int32 of scratch)
GROUP = 8


def _scan_group(q, rq, bo, f64, n, pts, g0, g1, counts, hits, masks):
    """Points ``pts[g0:g1]`` ((K, 3) float64; at most GROUP of them) against slots ``0..n-1``: for each chunk,
    each point in turn. ``counts`` (GROUP, chunks) int64 receives each point's hits per chunk, ``hits``
    (GROUP, capacity) int32 their slots (chunk c's at ``c * CHUNK``), ``masks`` (chunks, BLOCK) uint8 is the
    per-chunk lane scratch. Returns the number of chunks."""
    qx, qy, qz = q[0], q[1], q[2]
    x, y, z, rr = f64[0], f64[1], f64[2], f64[4]
    nb = (n + BLOCK - 1) // BLOCK * BLOCK
    nc = (nb + CHUNK - 1) // CHUNK
    for c in prange(nc):
        lo = c * CHUNK
        hi = min(nb, lo + CHUNK)
        for g in range(g1 - g0):
            p = g0 + g
            counts[g, c] = _chunk(qx, qy, qz, rq, bo, x, y, z, rr, pts[p, 0], pts[p, 1], pts[p, 2], lo, hi,
                                  hits[g], masks[c])
    return nc


#: every core
scan_group = numba.njit(cache=CACHE, nogil=True, parallel=True)(_scan_group)
#: one thread (small N)
scan_group_serial = njit(variant(_scan_group, "serial"))


@njit
def gather_group(ids, hits, counts, nc, ng, g0, out, pos, offsets):
    """The ids of the group's ``ng`` points in point order (each point's hits in chunk order, as a single
    query gives them) into ``out`` from ``pos`` (counting past its size without writing); writes
    ``offsets[g0 + g + 1]``. Returns the new position."""
    size = out.size
    for g in range(ng):
        for c in range(nc):
            lo = c * CHUNK
            for j in range(counts[g, c]):
                if pos < size:
                    out[pos] = ids[hits[g, lo + j]]
                pos += 1
        offsets[g0 + g + 1] = pos
    return pos
