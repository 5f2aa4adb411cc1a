"""Numba kernel of :mod:`viewer.render.delta_cull`: the CPU's mirror of the GPU's persistent visible list,
updated from one frame's visibility events in O(entered + left) (GL-free; no pass over the list).

:func:`apply_events` takes every buffer from the caller (nothing is allocated), so it is compiled without
reference counting; :func:`slot_runs` sorts (numba allocates its scratch).
"""

from __future__ import annotations

import numpy as np

from ..kernels.jit import njit, njit_noref

__all__ = ["apply_events", "slot_runs", "warm"]


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


@njit
def slot_runs(pairs, m, slots, ids, starts):
    """The changed slots of ``pairs[:m]`` ((slot, id) uint32 rows) in slot order into ``slots[:m]`` (int64),
    their ids into ``ids[:m]`` (uint32), and where each run of consecutive slots begins into ``starts`` (its
    first ``runs`` entries, then ``m``); returns ``runs``. One call where the list's upload made six numpy calls,
    whose fixed costs outweighed the work on a few slots."""
    order = np.argsort(pairs[:m, 0])
    runs = 0
    for t in range(m):
        j = order[t]
        slots[t] = pairs[j, 0]
        ids[t] = pairs[j, 1]
        if t == 0 or slots[t] != slots[t - 1] + 1:
            starts[runs] = t
            runs += 1
    starts[runs] = m
    return runs


def warm() -> None:
    """Compile the kernel (before anything timed)."""
    pos = np.full(4, -1, dtype=np.int64)
    slots = np.zeros(4, dtype=np.int64)
    mark = np.zeros(4, dtype=np.uint8)
    pairs = np.zeros((4, 2), dtype=np.uint32)
    ids = np.array([1, 2], dtype=np.int64)
    c, _ = apply_events(ids[:0], 0, ids, 2, pos, slots, 0, mark, pairs)
    apply_events(ids[:1], 1, ids[:0], 0, pos, slots, c, mark, pairs)
    slot_runs(pairs, 2, np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.uint32), np.zeros(5, dtype=np.int64))
