"""Numba kernel of the index contract (:mod:`viewer.index._contract`): the id pass of a batch check."""

from __future__ import annotations

from viewer._jit import njit_noref

__all__ = ["first_bad_id"]

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
