"""Numba kernels of the index contract (:mod:`viewer.index._contract`): the contract's predicate itself
(every index's kernels test a candidate with :func:`holds` and report it with :func:`emit`), the
padding an index adds to a sphere's box so that the predicate never accepts a point outside it, the
domain check of an array and the id pass of a batch check; for a batch of points walked in groups (the
octree's and the hash grid's shared walks), a group's points loaded and each point's answer filed."""

from __future__ import annotations

from viewer.kernels.jit import njit_noref

__all__ = ["PAD_ABS", "PAD_REL", "all_within", "box_pad", "emit", "file_group", "first_bad_id", "holds", "load_group",
           "pack_segments", "scatter_views"]

# The predicate (dx*dx + dy*dy) + dz*dz <= r*r is evaluated in float64: its roundings accept points a
# few ulps of |c| + r outside the exact sphere (PAD_REL covers them), and its squares underflow to 0
# below about 1.5e-162 (2**-537.5), so a sphere of radius 0 holds every point that close (PAD_ABS).
PAD_REL = 2.0**-50
PAD_ABS = 2.0**-500


@njit_noref(inline="always")
def holds(px, py, pz, x, y, z, r):
    """The contract's predicate: does the sphere (x, y, z, r) hold the point? Evaluated in this order
    by every index, so all agree with brute force bit for bit."""
    dx = px - x
    dy = py - y
    dz = pz - z
    return (dx * dx + dy * dy) + dz * dz <= r * r


@njit_noref(inline="always")
def emit(out, size, k, id):
    """Report the k-th visible id: written while ``out`` has room (``size``: ``out.shape[0]``, read
    once by the caller: read per call, it is one more load in a tree query's hottest loop), counted always;
    returns k + 1."""
    if k < size:
        out[k] = id
    return k + 1


@njit_noref
def box_pad(c, r):
    """How far outward to widen the interval ``[c - r, c + r]`` of a sphere's box on one axis."""
    return (abs(c) + r) * PAD_REL + PAD_ABS

@njit_noref
def all_within(flat, lo, hi):
    """Whether every value of ``flat`` (K,) float64 lies in ``[lo, hi]`` (False for NaN): one pass with no
    branch, where numpy's ``max`` and ``min`` take two (a moving world validates every batch of moves, so
    this runs in every moving frame)."""
    bad = 0
    for j in range(flat.shape[0]):
        v = flat[j]
        bad += not ((v >= lo) and (v <= hi))
    return bad == 0


UNKNOWN = 1
REMOVED = 2
REPEATED = 3


@njit_noref
def first_bad_id(ids, next_id, state, live_from, seen):
    """The first position k of ``ids`` (M,) int64 naming an unknown id (outside ``0..next_id-1``), a
    removed one (``state[id] < live_from``; ``state`` is the index's per-id array) or one already named
    earlier in the batch, as ``(k, UNKNOWN | REMOVED | REPEATED)``; ``(-1, 0)`` when every id is good.

    ``seen`` (>= next_id,) uint8 is all zero on entry and on return (only the ids passed are touched:
    O(M) whatever the index's size)."""
    m = ids.shape[0]
    bad = -1
    why = 0
    for k in range(m):
        i = ids[k]
        if i < 0 or i >= next_id:
            bad, why = k, UNKNOWN
            break
        if state[i] < live_from:
            bad, why = k, REMOVED
            break
        if seen[i]:
            bad, why = k, REPEATED
            break
        seen[i] = 1
    stop = m if bad < 0 else bad
    for k in range(stop):
        seen[ids[k]] = 0
    return bad, why


@njit_noref
def scatter_views(scratch, start, count, offsets, out):
    """The CSR answer of a batch answered out of order: view ``k``'s ids are ``scratch[start[k]:start[k] +
    count[k]]`` (``start``, ``count`` (K,) int64); they are copied into ``out`` in view order (as many as
    it holds) and ``offsets`` (K + 1,) int64 is written. Returns the total."""
    size = out.shape[0]
    pos = 0
    offsets[0] = 0
    for k in range(start.shape[0]):
        s = start[k]
        n = count[k]
        stop = min(n, size - pos)
        for i in range(stop):
            out[pos + i] = scratch[s + i]
        pos += n
        offsets[k + 1] = pos
    return pos


@njit_noref
def pack_segments(seg, order, start, count, packed, pos):
    """Copy the answers of a chunk of a batch out of its segments: view ``order[j]``'s ``count`` ids at
    ``seg[start[q]:]`` go to ``packed[pos:]`` one view after another, and its ``start`` is moved there.
    Returns the new end of ``packed`` (which must hold them all)."""
    for j in range(order.shape[0]):
        q = order[j]
        s = start[q]
        n = count[q]
        for i in range(n):
            packed[pos + i] = seg[s + i]
        start[q] = pos
        pos += n
    return pos


@njit_noref(inline="always")
def load_group(points, order, g0, g, gx, gy, gz, cur):
    """Load a group of a batch walked together: point ``i`` (< ``g``) of the group is ``points[order[g0 +
    i]]`` (points (K, 3) float64, order (K,) int64), its coordinates go to ``gx[i]``, ``gy[i]``, ``gz[i]`` and
    its count of ids found, ``cur[i]``, starts at 0."""
    for i in range(g):
        q = order[g0 + i]
        gx[i] = points[q, 0]
        gy[i] = points[q, 1]
        gz[i] = points[q, 2]
        cur[i] = 0


@njit_noref(inline="always")
def file_group(order, g0, g, base, span, cur, start, count, total, need):
    """File the answers of a group loaded by :func:`load_group`: point ``i``'s ``cur[i]`` ids start at
    ``base + i * span`` of the scratch (``start``, ``count`` (K,) int64, by the point's place in the batch,
    as :func:`scatter_views` reads them); returns ``(total, need)`` grown by the group's ids and its
    largest count."""
    for i in range(g):
        q = order[g0 + i]
        start[q] = base + i * span
        count[q] = cur[i]
        total += cur[i]
        need = max(need, cur[i])
    return total, need
