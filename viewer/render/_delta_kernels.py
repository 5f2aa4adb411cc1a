"""Numba kernel of :mod:`viewer.render.delta_cull`: the CPU's mirror of the GPU's persistent visible list,
updated from one frame's visibility events in O(entered + left) (GL-free; no pass over the list).

Every buffer comes from the caller (nothing is allocated), so it is compiled without reference counting.
"""

from __future__ import annotations

import numpy as np

from ..host.jit import njit_noref

__all__ = ["apply_events", "warm"]


@njit_noref
def apply_events(left, n_left, entered, n_entered, pos, slots, count, mark, pairs):
    """Swap-remove ``left[:n_left]`` from the list, then append ``entered[:n_entered]``.

    left, entered : int64 ids (distinct; each left id in the list, each entered id not in it)
    pos : (N,) int64, the slot of each id in the list, -1 when not in it (updated in place)
    slots[:count] : int64, the list (the id in each slot; updated in place)
    mark : (N,) uint8 scratch, all 0 on entry and on return
    pairs : (>= n_left + n_entered, 2) uint32 out: the changed slots below the new count, ``(slot, id)``,
        each slot once with its final id (what the GPU's scatter writes)

    Returns ``(new count, pairs written)``, or ``(-1, 0)`` when an id breaks the preconditions (the list
    and the events disagree: the caller rebuilds the list; ``pos`` / ``slots`` are then to be reset).
    """
    touched = 0
    for j in range(n_left):
        i = left[j]
        s = pos[i]
        if s < 0 or s >= count:
            return -1, 0
        pos[i] = -1
        last = count - 1
        if s != last:
            mv = slots[last]
            slots[s] = mv
            pos[mv] = s
            pairs[touched, 0] = s  # the slot, its id filled in below
            touched += 1
        count = last
    for j in range(n_entered):
        i = entered[j]
        if pos[i] >= 0:
            return -1, 0
        slots[count] = i
        pos[i] = count
        pairs[touched, 0] = count
        touched += 1
        count += 1
    m = 0
    for t in range(touched):  # keep each slot below the new count once, with its final id
        s = pairs[t, 0]
        if s < count and mark[s] == 0:
            mark[s] = 1
            pairs[m, 0] = s
            m += 1
    for t in range(m):
        s = pairs[t, 0]
        mark[s] = 0
        pairs[t, 1] = slots[s]
    return count, m


def warm() -> None:
    """Compile the kernel (before anything timed)."""
    pos = np.full(4, -1, dtype=np.int64)
    slots = np.zeros(4, dtype=np.int64)
    mark = np.zeros(4, dtype=np.uint8)
    pairs = np.zeros((4, 2), dtype=np.uint32)
    ids = np.array([1, 2], dtype=np.int64)
    c, _ = apply_events(ids[:0], 0, ids, 2, pos, slots, 0, mark, pairs)
    apply_events(ids[:1], 1, ids[:0], 0, pos, slots, c, mark, pairs)
