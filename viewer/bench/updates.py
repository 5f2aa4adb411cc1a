"""Update throughput of an index on real work: remove, insert, move (one call per object) and move_many
(batches), each figure the calls the index actually received over the seconds they took.

The plan for ``updates`` = U on an index of N live objects (:func:`plan`):

- **removes**: R = min(U, max(1, N // 2)) distinct objects removed one call at a time: at most half the index
  (one object when N = 1), so a large U never empties it and leaves the later phases nothing to do;
- **inserts**: the same R objects inserted back (new ids), one call each, so the moves run on N objects again;
- **moves**: U ``move()`` calls over M = min(U, N, :data:`MAX_DISTINCT`) distinct objects, cycling over
  them when U > M;
- **batch moves**: 10 U objects moved by ``move_many()`` calls of up to :data:`BATCH_CALL` distinct objects,
  cycling over S = min(10 U, N, :data:`MAX_DISTINCT`) of them.

Every move is real: an object goes to its start position plus a small offset d ~ N(0, 0.5) world units a
coordinate, then on its next turn to the start minus d, then plus d again, so no call moves an object to
where it already is. Each phase stops after ``budget_s`` seconds (a slow index is then measured on fewer
calls); the counts say how many were made.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from viewer.index import SphereIndex

    from .result import IndexResult
    from .workloads import Workload

__all__ = ["BATCH_CALL", "MAX_DISTINCT", "measure_updates", "plan"]

#: the most objects one ``move_many`` call of the batch phase moves
BATCH_CALL = 10_000
#: the most distinct objects a move phase cycles over (its targets take 48 bytes an object)
MAX_DISTINCT = 1_000_000


def plan(updates: int, n: int) -> tuple[int, int, int]:
    """(removes, moves, batch moves) for ``updates`` on an index of ``n`` live objects: removes (and as
    many inserts) min(updates, max(1, n // 2)), moves ``updates``, batch moves ``10 * updates``; all 0 when
    ``updates`` or ``n`` is 0."""
    if updates <= 0 or n <= 0:
        return 0, 0, 0
    return min(updates, max(1, n // 2)), updates, 10 * updates


def _timed(step: Callable[[int], None], calls: int, budget_s: float, every: int = 64,
           groups: list | None = None) -> tuple[int, float]:
    """Run ``step(k)`` for k in 0..calls-1, stopping once ``budget_s`` seconds have gone (looked at every
    ``every`` calls); returns (calls made, seconds they took). ``groups`` (a list) receives the raw samples: the
    microseconds a call took on average over each group of ``every`` calls (the last group may be shorter), from
    the clock read the budget check makes anyway: no extra clock read in the timed loop."""
    t0 = time.perf_counter()
    last, mark = t0, 0
    done = 0
    for k in range(calls):
        step(k)
        done += 1
        if done % every == 0:
            now = time.perf_counter()
            if groups is not None:
                groups.append((now - last) * 1e6 / (done - mark))
                last, mark = now, done
            if now - t0 > budget_s:
                break
    end = time.perf_counter()
    if groups is not None and done > mark:
        groups.append((end - last) * 1e6 / (done - mark))
    return done, end - t0


def _mirrored(pos: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two sets of targets for objects at ``pos`` ((M, 3) float64, world units): pos + d and pos - d, d ~
    N(0, 0.5) a coordinate; alternating between them, every move changes where an object is."""
    d = rng.normal(0.0, 0.5, pos.shape)
    return pos + d, pos - d


def measure_updates(
    ix: SphereIndex, wl: Workload, res: IndexResult, count: int, seed: int, budget_s: float = 10.0,
    centres: np.ndarray | None = None,
) -> None:
    """Measure the update phases of :func:`plan` (``count`` = U) on ``ix``, whose live ids are ``0..N-1``
    at ``centres`` ((N, 3) float64 world units, default the workload's), radii ``wl.radii`` (N,); writes the
    calls made and their seconds into ``res`` (``removes``/``remove_s``, ``inserts``/``insert_s``,
    ``moves``/``move_s``, ``batch_moves``/``move_many_s``: objects for the batch phase). The index ends with
    N live objects (the removed ones inserted back under new ids), each moved by under a few world units."""
    centres = wl.centres if centres is None else centres
    rng = np.random.default_rng(seed)
    n = len(ix)
    n_remove, n_move, n_batch = plan(count, n)
    if n_remove == 0:
        return
    ids = np.arange(n, dtype=np.int64)
    pos = np.asarray(centres, dtype=np.float64)[:n]
    radii = np.asarray(wl.radii, dtype=np.float64)[:n]

    # removes, then the same objects inserted back under new ids
    victims = rng.choice(n, n_remove, replace=False)

    def remove(k: int) -> None:
        ix.remove(int(victims[k]))

    res.removes, res.remove_s = _timed(remove, n_remove, budget_s, groups=res.update_us.setdefault("remove", []))
    gone = victims[: res.removes]
    c, r = pos[gone], radii[gone]
    new_ids = np.empty(gone.size, dtype=np.int64)

    def insert(k: int) -> None:
        new_ids[k] = ix.insert(c[k], r[k])

    res.inserts, res.insert_s = _timed(insert, gone.size, budget_s, groups=res.update_us.setdefault("insert", []))
    keep = np.ones(n, dtype=bool)
    keep[gone] = False
    live = np.concatenate([ids[keep], new_ids[: res.inserts]])
    where = np.concatenate([pos[keep], c[: res.inserts]])
    if live.size == 0:
        return

    # single moves over M distinct objects, alternating targets from pass to pass
    m = min(n_move, live.size, MAX_DISTINCT)
    pick = rng.choice(live.size, m, replace=False)
    mids = live[pick]
    plus, minus = _mirrored(where[pick], rng)

    def move(k: int) -> None:
        j = k % m
        ix.move(int(mids[j]), (minus if (k // m) & 1 else plus)[j])

    res.moves, res.move_s = _timed(move, n_move, budget_s, groups=res.update_us.setdefault("move", []))

    # batch moves: S distinct objects in W windows of C, every call's ids distinct
    s = min(n_batch, live.size, MAX_DISTINCT)
    size = min(BATCH_CALL, s)
    windows = s // size
    pick = rng.choice(live.size, windows * size, replace=False)
    bids = live[pick].reshape(windows, size)
    bplus, bminus = (t.reshape(windows, size, 3) for t in _mirrored(where[pick], rng))
    calls = -(-n_batch // size)
    moved = [0]

    def move_many(k: int) -> None:
        w = k % windows
        k0 = min(size, n_batch - k * size)
        ix.move_many(bids[w, :k0], (bminus if (k // windows) & 1 else bplus)[w, :k0])
        moved[0] += k0

    _, res.move_many_s = _timed(move_many, calls, budget_s, every=1, groups=res.update_us.setdefault("move_many", []))
    res.batch_moves = moved[0]
