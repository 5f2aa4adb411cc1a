"""The contract's cases: exact sets against brute force (soundness: nothing returned outside; completeness:
nothing inside missed) on seeded worlds, sphere surfaces, empty worlds, coincident objects, radii 0, far and
large coordinates; ``query_into`` / ``query_many_into`` overflow; ``query_many`` against single queries; updates
by id; bad input refused with the right error type, changing nothing."""

from __future__ import annotations

import numpy as np

from .._contract import QueryOverflow, is_warm
from ..brute import brute_query
from ._kit import Subject, prop
from ._oracle import Mismatch, assert_same, raises
from .worlds import DISTRIBUTIONS, morton_order, query_points


@prop("exact_against_brute", cases={d: d for d in sorted(DISTRIBUTIONS)})
def exact_against_brute(s: Subject, dist: str) -> None:
    """3,000 objects of a seeded world (uniform, clustered, along a diagonal): 300 points' answers equal brute force's."""
    rng = s.rng()
    c, r = DISTRIBUTIONS[dist](rng, 3000)
    ix = s.build(c, r)
    assert len(ix) == 3000, f"len(ix) is {len(ix)} after building 3000 objects"
    assert_same(ix, c, r, query_points(rng, c, 300))


@prop("empty_world")
def empty_world(s: Subject, _) -> None:
    """Built from no objects: queries find nothing; an insert gets id 0 and is found; removed, nothing again."""
    ix = s.build(np.zeros((0, 3)), np.zeros(0))
    assert len(ix) == 0, f"len(ix) is {len(ix)} for an index built empty"
    for p in ((0.0, 0.0, 0.0), (1e9, -1e9, 3.0)):
        assert np.asarray(ix.query(p)).size == 0, f"an empty index returned ids at {p}"
    i = ix.insert((1.0, 2.0, 3.0), 2.0)
    assert i == 0, f"the first insert into an empty index got id {i}, not 0"
    assert_same(ix, [[1.0, 2.0, 3.0]], [2.0], [(1.0, 2.0, 4.0)], what="query after the first insert")
    ix.remove(0)
    assert len(ix) == 0 and np.asarray(ix.query((1.0, 2.0, 3.0))).size == 0, "its only object removed, still found"


@prop("radius_zero_and_coincident")
def radius_zero_and_coincident(s: Subject, _) -> None:
    """A sphere of radius 0 holds exactly its centre (a point 1e-9 off misses it); a second one inserted at the
    same centre: both found there."""
    c = np.array([[5.0, -3.0, 2.0]])
    ix = s.build(c, [0.0])
    assert_same(ix, c, [0.0], [(5.0, -3.0, 2.0), (5.0, -3.0, 2.0 + 1e-9)], what="radius-0 sphere, query")
    ix.insert((5.0, -3.0, 2.0), 0.0)
    assert_same(ix, np.repeat(c, 2, axis=0), [0.0, 0.0], [(5.0, -3.0, 2.0)], what="two coincident radius-0 spheres")


@prop("surfaces_and_boundaries")
def surfaces_and_boundaries(s: Subject, _) -> None:
    """Centres on dyadic grid lines (where trees and grids split), query points exactly on sphere surfaces and
    node boundaries: a point on a surface is inside (a closed ball)."""
    g = np.arange(-64.0, 65.0, 16.0)
    xs, ys, zs = np.meshgrid(g, g, g, indexing="ij")
    c = np.stack([xs.ravel(), ys.ravel(), zs.ravel()], axis=1)
    r = np.tile(np.array([4.0, 8.0, 16.0, 2.0, 32.0]), len(c) // 5 + 1)[: len(c)]
    ix = s.build(c, r)
    pts = []
    for q in (-64.0, -48.0, -40.0, -32.0, -8.0, 0.0, 4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0, 96.0):
        pts += [(q, 0.0, 0.0), (q, q, 0.0), (q, q, q), (0.0, q, -q), (q, 16.0, 32.0)]
    assert_same(ix, c, r, np.array(pts))
    got = np.asarray(ix.query((4.0, 0.0, 0.0)))
    assert (np.linalg.norm(c[got] - [4.0, 0, 0], axis=1) <= r[got]).all(), "an id returned outside its sphere"


@prop("surface_one_ulp")
def surface_one_ulp(s: Subject, _) -> None:
    """Points exactly on a sphere's surface (along each axis, both sides) are inside; one ulp further out,
    outside; one ulp in, inside: as the exact predicate says, for radii from 1e-3 to 1e6."""
    rng = s.rng(1)
    n = 60
    c = rng.uniform(-500, 500, (n, 3))
    r = 10.0 ** rng.uniform(-3, 6, n)
    ix = s.build(c, r)
    pts = []
    for k in range(n):
        for ax in range(3):
            for sign in (1.0, -1.0):
                on = c[k].copy()
                on[ax] = c[k][ax] + sign * r[k]
                pts.append(on)
                for toward in (np.inf, -np.inf):
                    q = on.copy()
                    q[ax] = np.nextafter(on[ax], toward)
                    pts.append(q)
    assert_same(ix, c, r, np.array(pts), what="a point on or one ulp off a sphere's surface")


@prop("far_points_and_negative_coordinates")
def far_points_and_negative_coordinates(s: Subject, _) -> None:
    """Objects at negative coordinates: points 1e8 away find nothing; points near them, brute force's answers."""
    rng = s.rng()
    c = rng.uniform(-5000, -4000, (500, 3))
    r = rng.uniform(1, 50, 500)
    ix = s.build(c, r)
    assert_same(ix, c, r, [(1e8, 1e8, 1e8), (-1e8, 0.0, 0.0)], what="a far query")
    assert_same(ix, c, r, query_points(rng, c, 100))


@prop("large_coordinates")
def large_coordinates(s: Subject, _) -> None:
    """Objects around 1e6 (few bits left below the unit): brute force's answers."""
    rng = s.rng()
    c = 1e6 + rng.uniform(-100, 100, (1000, 3))
    r = rng.uniform(0.5, 20, 1000)
    assert_same(s.build(c, r), c, r, query_points(rng, c, 100))


@prop("radii_six_orders_of_magnitude")
def radii_six_orders_of_magnitude(s: Subject, _) -> None:
    """Radii from 1e-3 to 1e3 in one index, points at and near tiny spheres' centres: brute force's answers."""
    rng = s.rng()
    n = 2000
    c = rng.uniform(-100, 100, (n, 3))
    r = 10.0 ** rng.uniform(-3, 3, n)
    ix = s.build(c, r)
    pts = np.concatenate([query_points(rng, c, 100), c[:50] + rng.normal(0, 1e-3, (50, 3))])
    assert_same(ix, c, r, pts)


@prop("query_into_overflow")
def query_into_overflow(s: Subject, _) -> None:
    """``query_into`` writes the ids and returns their count; with ``out`` too small it raises ``QueryOverflow``
    with ``needed`` set, the first ``out.size`` ids written; an ``out`` not int64 is a ``ValueError``."""
    rng = s.rng()
    c = rng.uniform(-1, 1, (100, 3))
    ix = s.build(c, np.full(100, 10.0))  # every sphere holds the origin
    out = np.full(200, -1, dtype=np.int64)
    n = ix.query_into((0.0, 0.0, 0.0), out)
    assert n == 100, f"query_into returned {n}; 100 spheres hold the point"
    assert sorted(out[:100]) == list(range(100)), "query_into did not write ids 0..99"
    small = np.full(30, -1, dtype=np.int64)
    with raises(QueryOverflow, call="query_into with room for 30 of 100 ids") as err:
        ix.query_into((0.0, 0.0, 0.0), small)
    assert err.value.needed == 100, f"QueryOverflow.needed is {err.value.needed}, not 100"
    assert len(set(small.tolist())) == 30 and small.min() >= 0, "the first 30 ids were not written before the overflow"
    with raises(ValueError, call="query_into with an int32 out"):
        ix.query_into((0.0, 0.0, 0.0), np.zeros(10, dtype=np.int32))


@prop("query_many_equals_single_queries", cases={b: b for b in ("unsorted", "sorted", "duplicated", "one", "empty")})
def query_many_equals_single_queries(s: Subject, batch: str) -> None:
    """``query_many``: CSR offsets (K + 1,) int64 from 0, each view's ids equal its own ``query_into``'s, in that
    order, and brute force's set (an index that ``keeps_state`` held to a twin answering the same queries one by
    one); batches unsorted, in curve order, with repeats, of one point and empty."""
    rng = s.rng()
    c, r = DISTRIBUTIONS["clustered"](rng, 2000)
    ix = s.build(c, r)
    twin = s.build(c, r) if getattr(ix, "keeps_state", False) else ix
    pts = query_points(rng, c, 60)
    if batch == "sorted":
        pts = pts[morton_order(pts)]
    elif batch == "duplicated":
        pts = np.concatenate([pts[:20], pts[:20], pts[5:6]])
    elif batch == "one":
        pts = pts[:1]
    elif batch == "empty":
        pts = np.zeros((0, 3))
    offsets, ids = ix.query_many(pts)
    assert offsets.shape == (len(pts) + 1,) and offsets.dtype == np.int64 and offsets[0] == 0, \
        f"query_many's offsets: shape {offsets.shape}, dtype {offsets.dtype}, first {offsets[:1]}; want ({len(pts) + 1},) int64 from 0"
    assert ids.dtype == np.int64 and offsets[-1] == ids.size, \
        f"query_many's ids: dtype {ids.dtype}, {ids.size} of them, offsets[-1] {offsets[-1]}"
    for k, p in enumerate(pts):
        got = ids[offsets[k]:offsets[k + 1]]
        single = np.asarray(twin.query(p))
        if not np.array_equal(got, single):
            raise Mismatch.of(f"query_many's view {k} against query (same order)", p, got, single)
        want = brute_query(c, r, p)
        if not np.array_equal(np.sort(got), want):
            raise Mismatch.of(f"query_many's view {k}", p, got, want, c, r)
    ix.query_many(pts)
    assert ix.stats.visible == ids.size, f"after query_many, stats.visible {ix.stats.visible}, {ids.size} answers"


@prop("query_many_into_overflow")
def query_many_into_overflow(s: Subject, _) -> None:
    """``query_many_into`` fills offsets and ids and returns the count; with ``out`` too small it raises
    ``QueryOverflow`` with ``needed``, offsets complete and what fitted written; wrong offsets' length, points not
    (K, 3), a NaN point: ``ValueError``."""
    rng = s.rng()
    c = rng.uniform(-1, 1, (100, 3))
    ix = s.build(c, np.full(100, 10.0))  # every sphere holds the origin, none holds (1e6, 0, 0)
    pts = np.array([[0.0, 0.0, 0.0], [1e6, 0.0, 0.0], [0.5, 0.5, 0.5]])
    offsets = np.full(4, -1, dtype=np.int64)
    out = np.full(250, -1, dtype=np.int64)
    n = ix.query_many_into(pts, offsets, out)
    assert n == 200 and offsets.tolist() == [0, 100, 100, 200], f"query_many_into: {n}, offsets {offsets.tolist()}"
    assert sorted(out[:100]) == list(range(100)) and sorted(out[100:200]) == list(range(100)), "ids written wrong"
    small = np.full(130, -1, dtype=np.int64)
    with raises(QueryOverflow, call="query_many_into with room for 130 of 200 ids") as err:
        ix.query_many_into(pts, offsets, small)
    assert err.value.needed == 200 and offsets.tolist() == [0, 100, 100, 200], \
        f"after the overflow: needed {err.value.needed}, offsets {offsets.tolist()}"
    assert sorted(small[:100]) == list(range(100)) and small.min() >= 0, "what fitted was not written"
    with raises(ValueError, call="query_many_into with 3 offsets for 3 points"):
        ix.query_many_into(pts, np.zeros(3, dtype=np.int64), out)
    with raises(ValueError, call="query_many([[0.0, 0.0]])"):
        ix.query_many([[0.0, 0.0]])
    with raises(ValueError, call="query_many with a NaN point"):
        ix.query_many([[0.0, np.nan, 0.0]])


@prop("insert_remove_move")
def insert_remove_move(s: Subject, _) -> None:
    """300 of 1,000 objects removed, 300 moved (small and far steps, a third with a new radius), 200 inserted
    (ids 1000..1199): 200 points' answers equal brute force's over what is left."""
    rng = s.rng()
    c, r = DISTRIBUTIONS["clustered"](rng, 1000)
    ix = s.build(c, r)
    ids = np.arange(1000)
    alive = np.ones(1000, dtype=bool)
    centres, radii = c.copy(), r.copy()
    for i in rng.choice(1000, 300, replace=False):
        ix.remove(int(i))
        alive[i] = False
    moved = rng.choice(np.flatnonzero(alive), 300, replace=False)
    for k, i in enumerate(moved):
        centres[i] = centres[i] + rng.normal(0, 1 if k % 2 else 200, 3)
        if k % 3 == 0:
            radii[i] = radii[i] * rng.uniform(0.1, 10)
            ix.move(int(i), centres[i], radii[i])
        else:
            ix.move(int(i), centres[i])
    new_c, new_r = DISTRIBUTIONS["uniform"](rng, 200)
    new_ids = [ix.insert(p, q) for p, q in zip(new_c, new_r)]
    assert new_ids == list(range(1000, 1200)), f"inserts after 1000 objects got ids {new_ids[:3]}..., not 1000.."
    all_c = np.concatenate([centres[alive], new_c])
    all_r = np.concatenate([radii[alive], new_r])
    all_ids = np.concatenate([ids[alive], np.array(new_ids)])
    assert len(ix) == len(all_ids), f"len(ix) is {len(ix)}, {len(all_ids)} objects held"
    assert_same(ix, all_c, all_r, query_points(rng, all_c, 200), ids=all_ids, what="query after updates")


BAD_BUILDS = {
    "nan-centre": ([[0.0, np.nan, 0.0]], [1.0]),
    "inf-centre": ([[0.0, np.inf, 0.0]], [1.0]),
    "negative-radius": ([[0.0, 0.0, 0.0]], [-1.0]),
    "nan-radius": ([[0.0, 0.0, 0.0]], [np.nan]),
    "inf-radius": ([[0.0, 0.0, 0.0]], [np.inf]),
    "shape": ([[0.0, 0.0]], [1.0]),
    "length-mismatch": ([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]], [1.0]),
    "radii-2-D": ([[0.0, 0.0, 0.0]], [[1.0]]),
}


@prop("bad_build_refused", cases=BAD_BUILDS)
def bad_build_refused(s: Subject, case) -> None:
    """A build from bad arrays (NaN or infinite centre or radius, a negative radius, centres not (N, 3), radii
    not (N,) or of another length) raises ``ValueError``."""
    c, r = case
    with raises(ValueError, call=f"building from centres {c}, radii {r}"):
        s.build(np.array(c, dtype=float), np.array(r, dtype=float))


@prop("bad_updates_change_nothing")
def bad_updates_change_nothing(s: Subject, _) -> None:
    """Bad single calls (NaN, infinite or 2-D points, negative radii: ``ValueError``; removed, unknown or
    negative ids: ``KeyError``) raise with a message and leave every answer as it was."""
    rng = s.rng()
    c = rng.uniform(-50, 50, (200, 3))
    r = rng.uniform(1, 20, 200)
    ix = s.build(c, r)
    ix.remove(7)
    pts = query_points(rng, c, 40)
    live = np.setdiff1d(np.arange(200), [7])
    bad_calls = [
        (ValueError, "ix.insert((0.0, nan, 0.0), 1.0)", lambda: ix.insert((0.0, np.nan, 0.0), 1.0)),
        (ValueError, "ix.insert((0.0, 0.0, 0.0), -1.0)", lambda: ix.insert((0.0, 0.0, 0.0), -1.0)),
        (ValueError, "ix.insert((0.0, 0.0), 1.0)", lambda: ix.insert((0.0, 0.0), 1.0)),
        (ValueError, "ix.insert((0.0, 0.0, inf), 1.0)", lambda: ix.insert((0.0, 0.0, np.inf), 1.0)),
        (KeyError, "ix.remove(7), a removed id", lambda: ix.remove(7)),
        (KeyError, "ix.remove(10_000), an unknown id", lambda: ix.remove(10_000)),
        (KeyError, "ix.remove(-1)", lambda: ix.remove(-1)),
        (KeyError, "ix.move(7, ...), a removed id", lambda: ix.move(7, (0.0, 0.0, 0.0))),
        (KeyError, "ix.move(999, ...), an unknown id", lambda: ix.move(999, (0.0, 0.0, 0.0))),
        (ValueError, "ix.move(3, (nan, 0.0, 0.0))", lambda: ix.move(3, (np.nan, 0.0, 0.0))),
        (ValueError, "ix.move(3, (0.0, 0.0, 0.0), -2.0)", lambda: ix.move(3, (0.0, 0.0, 0.0), -2.0)),
        (ValueError, "ix.query((0.0, nan, 0.0))", lambda: ix.query((0.0, np.nan, 0.0))),
        (ValueError, "ix.query((0.0, 0.0))", lambda: ix.query((0.0, 0.0))),
    ]
    for exc, text, call in bad_calls:
        with raises(exc, call=text):
            call()
        assert len(ix) == 199, f"after {text}: len(ix) is {len(ix)}, not 199"
    assert_same(ix, c[live], r[live], pts, ids=live, what="query after refused calls")


@prop("ids_are_integers")
def ids_are_integers(s: Subject, _) -> None:
    """A non-integer id (1.0, 1.7, True, "1", None, (1,)) given to remove or move is a ``ValueError``; numpy
    integers are ids."""
    ix = s.build(np.zeros((3, 3)), np.ones(3))
    for bad in (1.0, 1.7, True, np.bool_(True), "1", None, (1,)):
        with raises(ValueError, call=f"ix.remove({bad!r})"):
            ix.remove(bad)
        with raises(ValueError, call=f"ix.move({bad!r}, (0.0, 0.0, 0.0))"):
            ix.move(bad, (0.0, 0.0, 0.0))
    ix.move(np.int32(1), (1.0, 1.0, 1.0), np.float32(0.5))
    ix.remove(np.uint8(2))
    assert len(ix) == 2, f"after removing np.uint8(2) of 3 objects, len(ix) is {len(ix)}"


@prop("unknown_option_is_a_type_error")
def unknown_option_is_a_type_error(s: Subject, _) -> None:
    """A build given an option the class does not take (``bogus=3``) raises ``TypeError`` naming it."""
    with raises(TypeError, call="building with bogus=3", match="bogus"):
        s.build(np.zeros((2, 3)), np.ones(2), bogus=3)


@prop("warm_up")
def warm_up(s: Subject, _) -> None:
    """``Cls.warm_up()`` is idempotent, leaves the class warm (``is_warm``) and usable."""
    cls = s.cls
    cls.warm_up()
    cls.warm_up()
    from .. import INDEXES, warm_up as warm_named

    name = getattr(cls, "name", None)
    if name in INDEXES and INDEXES[name] is cls:
        warm_named([name])
    assert is_warm(cls), f"{cls.__qualname__}.warm_up() left the class not warm"
    assert_same(s.build(np.zeros((1, 3)), [1.0]), np.zeros((1, 3)), [1.0], [(0.5, 0.0, 0.0)],
                what="an index built after warm_up")
