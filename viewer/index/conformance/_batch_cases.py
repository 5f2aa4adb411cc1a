"""``move_many``'s cases: a batch equals the same moves made one by one; a bad batch is refused whole,
changing nothing; a repeated batch is checked again after an insert or remove; ``last_move_repeated``; ids of
any integer dtype."""

from __future__ import annotations

import numpy as np

from ._kit import Subject, prop
from ._oracle import Mismatch, assert_same, raises
from .worlds import DISTRIBUTIONS, query_points


@prop("move_many_equals_single_moves")
def move_many_equals_single_moves(s: Subject, _) -> None:
    """Batches of 5, 40, 700 and 900 movers (kept and new radii, small and far moves) give the answers of the
    same moves made one by one, and brute force's, at random points and at every mover's new centre (where it
    must be found); an empty batch is fine."""
    rng = s.rng()
    c, r = DISTRIBUTIONS["clustered"](rng, 1200)
    a, b = s.build(c, r), s.build(c, r)
    for ix in (a, b):
        ix.remove(3)
    c2, r2 = c.copy(), r.copy()
    live = np.setdiff1d(np.arange(1200), [3])
    for m, sigma, new_r in ((5, 1.0, False), (40, 300.0, True), (700, 2.0, False), (900, 50.0, True)):
        ids = rng.choice(live, m, replace=False)
        newc = c2[ids] + rng.normal(0, sigma, (m, 3))
        newr = r2[ids] * rng.uniform(0.1, 10, m) if new_r else None
        a.move_many(ids, newc, newr)
        for k, i in enumerate(ids):
            b.move(int(i), newc[k], None if newr is None else newr[k])
        c2[ids] = newc
        if new_r:
            r2[ids] = newr
        what = f"after a batch of {m} moves{' with new radii' if new_r else ''}"
        pts = np.concatenate([query_points(rng, c2[live], 60), newc])
        for p in pts:
            ga, gb = np.sort(np.asarray(a.query(p))), np.sort(np.asarray(b.query(p)))
            if not np.array_equal(ga, gb):
                raise Mismatch.of(f"{what}, the batch against the same moves one by one", p, ga, gb,
                                  c2[live], r2[live], live)
        assert_same(a, c2[live], r2[live], pts, ids=live, what=f"query {what}")
    a.move_many(np.zeros(0, dtype=np.int64), np.zeros((0, 3)))
    a.move_many([], [])
    assert len(a) == 1199, f"after empty batches, len(ix) is {len(a)}, not 1199"


# one bad batch each: (error type, ids, centres, radii); the index holds ids 0..199, 7 removed
BAD_BATCHES = {
    "unknown-id": (KeyError, [1, 500], [[0.0, 0, 0]] * 2, None),
    "negative-id": (KeyError, [1, -1], [[0.0, 0, 0]] * 2, None),
    "removed-id": (KeyError, [1, 7], [[0.0, 0, 0]] * 2, None),
    "repeated-id": (ValueError, [1, 2, 1], [[0.0, 0, 0]] * 3, None),
    "float-ids": (ValueError, [1.7, 2.0], [[0.0, 0, 0]] * 2, None),
    "bool-ids": (ValueError, [True, False], [[0.0, 0, 0]] * 2, None),
    "2-D-ids": (ValueError, [[1], [2]], [[0.0, 0, 0]] * 2, None),
    "string-ids": (ValueError, ["1", "2"], [[0.0, 0, 0]] * 2, None),
    "nan-centre": (ValueError, [1, 2], [[0.0, 0, 0], [np.nan, 0, 0]], None),
    "inf-centre": (ValueError, [1, 2], [[0.0, 0, 0], [0, -np.inf, 0]], None),
    "centre-out-of-domain": (ValueError, [1, 2], [[0.0, 0, 0], [0, 0, 2.0**101]], None),
    "centres-shape": (ValueError, [1, 2], [[0.0, 0], [0, 0]], None),
    "centres-rows": (ValueError, [1, 2], [[0.0, 0, 0]], None),
    "centres-not-numbers": (ValueError, [1], [["a", "b", "c"]], None),
    "negative-radius": (ValueError, [1, 2], [[0.0, 0, 0]] * 2, [1.0, -1.0]),
    "nan-radius": (ValueError, [1, 2], [[0.0, 0, 0]] * 2, [1.0, np.nan]),
    "radius-out-of-domain": (ValueError, [1, 2], [[0.0, 0, 0]] * 2, [1.0, 2.0**101]),
    "radii-length": (ValueError, [1, 2], [[0.0, 0, 0]] * 2, [1.0]),
    "radii-2-D": (ValueError, [1, 2], [[0.0, 0, 0]] * 2, [[1.0], [2.0]]),
}


@prop("bad_batch_changes_nothing", cases=BAD_BATCHES)
def bad_batch_changes_nothing(s: Subject, case) -> None:
    """A bad batch (unknown, negative, removed or repeated ids; ids not integers; a NaN, infinite or
    out-of-domain centre or radius; arrays of the wrong shape) raises ``KeyError`` / ``ValueError`` with a
    message, moves nothing, and a good batch still works after it."""
    exc, ids, c, r = case
    rng = s.rng()
    c0 = rng.uniform(-50, 50, (200, 3))
    r0 = rng.uniform(1, 20, 200)
    ix = s.build(c0, r0)
    ix.remove(7)
    live = np.setdiff1d(np.arange(200), [7])
    pts = np.concatenate([query_points(rng, c0, 30), [[0.0, 0.0, 0.0]]])
    with raises(exc, call=f"ix.move_many({ids}, {c}, {r})"):
        ix.move_many(ids, c, r)
    assert len(ix) == 199, f"after a refused batch, len(ix) is {len(ix)}, not 199"
    assert_same(ix, c0[live], r0[live], pts, ids=live, what="query after a refused batch")
    ix.move_many([1, 2], [[0.0, 0.0, 0.0]] * 2)
    c0[[1, 2]] = 0.0
    assert_same(ix, c0[live], r0[live], pts, ids=live, what="query after a good batch following a refused one")


@prop("repeated_batch_checked_again")
def repeated_batch_checked_again(s: Subject, _) -> None:
    """The same batch of ids again (a moving world's frame) may skip the id checks only while no insert or
    remove came between: a removed id in it is then refused, the batch changing nothing; bad values are refused
    in a repeated batch as in any."""
    rng = s.rng()
    c0 = rng.uniform(-50, 50, (300, 3))
    r0 = rng.uniform(1, 20, 300)
    ix = s.build(c0, r0)
    ids = np.arange(0, 300, 3, dtype=np.int64)
    c1 = c0.copy()
    for k in range(3):
        c1[ids] = c0[ids] + k
        ix.move_many(ids, c1[ids])
    with raises(ValueError, call="a repeated batch with NaN centres"):
        ix.move_many(ids, np.full((ids.size, 3), np.nan))
    ix.remove(int(ids[5]))
    live = np.setdiff1d(np.arange(300), [ids[5]])
    with raises(KeyError, call=f"the repeated batch after id {ids[5]} was removed", match=str(ids[5])):
        ix.move_many(ids, c1[ids] + 1.0)
    pts = np.concatenate([query_points(rng, c1, 30), [[0.0, 0.0, 0.0]]])
    assert_same(ix, c1[live], r0[live], pts, ids=live, what="query after a refused repeated batch")
    keep = np.delete(ids, 5)
    ix.move_many(keep, c1[keep] + 2.0)
    ix.move_many(keep, c1[keep] + 3.0)
    c1[keep] += 3.0
    new = ix.insert((0.0, 0.0, 0.0), 1.0)
    ix.remove(new)
    ix.move_many(keep, c1[keep])
    assert_same(ix, c1[live], r0[live], pts, ids=live, what="query after a repeated batch across an insert and remove")


@prop("last_move_repeated")
def last_move_repeated(s: Subject, _) -> None:
    """``last_move_repeated`` is True only when a batch moves the ids the call before moved; another batch, a
    single move, an insert or a remove between makes it False; answers stay exact on either path."""
    rng = s.rng()
    c0 = rng.uniform(-50, 50, (400, 3))
    r0 = rng.uniform(1, 20, 400)
    ix = s.build(c0, r0)
    a = np.arange(0, 400, 4, dtype=np.int64)
    b = np.arange(2, 400, 4, dtype=np.int64)
    c = c0.copy()
    pts = query_points(rng, c0, 12)
    steps = [("a", False), ("a", True), ("a", True), ("b", False), ("a", False), ("a", True), ("one", False),
             ("a", False), ("a", True), ("small", False), ("a", False), ("insert", None), ("a", False),
             ("a", True), ("remove", None), ("a2", False), ("a2", True)]
    live = np.ones(400, dtype=bool)
    a2 = a
    for k, (what, want) in enumerate(steps):
        if what == "one":
            c[7] += 0.5
            ix.move(7, c[7])
        elif what == "small":
            c[[3, 9]] -= 0.5
            ix.move_many(np.array([3, 9]), c[[3, 9]])
        elif what == "insert":
            ix.remove(ix.insert((0.0, 0.0, 0.0), 1.0))
            continue
        elif what == "remove":
            ix.remove(int(a[10]))
            live[a[10]] = False
            a2 = np.delete(a, 10)
            continue
        else:
            ids = {"a": a, "b": b, "a2": a2}[what]
            c[ids] += rng.normal(0, 2, (ids.size, 3))
            ix.move_many(ids.copy(), c[ids])
        assert ix.last_move_repeated is want, \
            f"step {k} ({what}): last_move_repeated is {ix.last_move_repeated}, want {want}"
        ids_live = np.flatnonzero(live)
        assert_same(ix, c[ids_live], r0[ids_live], pts, ids=ids_live, what=f"query after step {k} ({what})")


@prop("move_many_integer_dtypes")
def move_many_integer_dtypes(s: Subject, _) -> None:
    """``move_many`` takes ids of any integer dtype, float32 centres, integer radii, and plain sequences."""
    rng = s.rng()
    c0 = rng.uniform(-50, 50, (20, 3))
    ix = s.build(c0, np.full(20, 5.0))
    for dt in (np.int8, np.uint16, np.int32, np.uint64, np.int64):
        ix.move_many(np.array([3, 4], dtype=dt), np.zeros((2, 3), dtype=np.float32), np.array([1, 2], dtype=np.int32))
    ix.move_many((5, 6), ((1, 1, 1), (2, 2, 2)), (0, 0))
    c1, r1 = c0.copy(), np.full(20, 5.0)
    c1[[3, 4]], r1[[3, 4]] = 0.0, (1.0, 2.0)
    c1[[5, 6]], r1[[5, 6]] = ((1, 1, 1), (2, 2, 2)), 0.0
    assert_same(ix, c1, r1, [(0.0, 0.0, 0.0), (1.0, 1.0, 1.0)], what="query after batches of other dtypes")
