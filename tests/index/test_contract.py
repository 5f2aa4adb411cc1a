"""One contract suite, stamped out for every index in INDEXES: exact sets against brute force
(soundness: nothing returned outside; completeness: nothing inside missed), updates, bad input."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from viewer.index import INDEXES, QueryOverflow, brute_query, make_index

from tests.support.data import DISTRIBUTIONS, query_points

NAMES = sorted(INDEXES)


@pytest.fixture(params=NAMES)
def name(request):
    why = INDEXES[request.param].unavailable()
    if why:
        pytest.skip(f"{request.param}: {why}")
    return request.param


def assert_same(ix, centres, radii, points, ids=None):
    """Every point's result equals brute force over (centres, radii), mapped through ``ids``."""
    for p in points:
        got = np.sort(ix.query(p))
        want = brute_query(centres, radii, p)
        if ids is not None:
            want = ids[want]
        want = np.sort(want)
        assert np.array_equal(got, want), (p, np.setdiff1d(got, want), np.setdiff1d(want, got))
        assert ix.stats.visible == len(want)
        assert ix.stats.candidates >= len(want)


@pytest.mark.parametrize("dist", sorted(DISTRIBUTIONS))
def test_exact_against_brute(name, dist, rng):
    c, r = DISTRIBUTIONS[dist](rng, 3000)
    ix = make_index(name, c, r)
    assert len(ix) == 3000
    pts = query_points(rng, c, 300)
    assert_same(ix, c, r, pts)


def test_empty(name):
    ix = make_index(name, np.zeros((0, 3)), np.zeros(0))
    assert len(ix) == 0
    assert ix.query((0.0, 0.0, 0.0)).size == 0
    assert ix.query((1e9, -1e9, 3.0)).size == 0
    i = ix.insert((1.0, 2.0, 3.0), 2.0)
    assert i == 0
    assert list(ix.query((1.0, 2.0, 4.0))) == [0]
    ix.remove(0)
    assert len(ix) == 0 and ix.query((1.0, 2.0, 3.0)).size == 0


def test_one_object_and_zero_radius(name):
    ix = make_index(name, [[5.0, -3.0, 2.0]], [0.0])
    assert list(ix.query((5.0, -3.0, 2.0))) == [0]  # a point sphere holds exactly its centre
    assert ix.query((5.0, -3.0, 2.0 + 1e-9)).size == 0
    ix.insert((5.0, -3.0, 2.0), 0.0)
    assert sorted(ix.query((5.0, -3.0, 2.0))) == [0, 1]


def test_boundaries(name):
    """Centres on dyadic grid lines and query points exactly on sphere surfaces and node boundaries."""
    g = np.arange(-64.0, 65.0, 16.0)
    xs, ys, zs = np.meshgrid(g, g, g, indexing="ij")
    c = np.stack([xs.ravel(), ys.ravel(), zs.ravel()], axis=1)
    r = np.tile(np.array([4.0, 8.0, 16.0, 2.0, 32.0]), len(c) // 5 + 1)[: len(c)]
    ix = make_index(name, c, r)
    pts = []
    for q in (-64.0, -48.0, -40.0, -32.0, -8.0, 0.0, 4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0, 96.0):
        pts += [(q, 0.0, 0.0), (q, q, 0.0), (q, q, q), (0.0, q, -q), (q, 16.0, 32.0)]
    assert_same(ix, c, r, np.array(pts))
    # exactly on a surface: visible (closed ball)
    got = ix.query((4.0, 0.0, 0.0))
    assert (np.linalg.norm(c[got] - [4.0, 0, 0], axis=1) <= r[got]).all()


def test_far_query_and_negative_coordinates(name, rng):
    c = rng.uniform(-5000, -4000, (500, 3))
    r = rng.uniform(1, 50, 500)
    ix = make_index(name, c, r)
    assert ix.query((1e8, 1e8, 1e8)).size == 0
    assert ix.query((-1e8, 0.0, 0.0)).size == 0
    assert_same(ix, c, r, query_points(rng, c, 100))


def test_large_coordinates(name, rng):
    c = 1e6 + rng.uniform(-100, 100, (1000, 3))
    r = rng.uniform(0.5, 20, 1000)
    ix = make_index(name, c, r)
    assert_same(ix, c, r, query_points(rng, c, 100))


def test_radii_six_orders_of_magnitude(name, rng):
    n = 2000
    c = rng.uniform(-100, 100, (n, 3))
    r = 10.0 ** rng.uniform(-3, 3, n)
    ix = make_index(name, c, r)
    pts = np.concatenate([query_points(rng, c, 100), c[:50] + rng.normal(0, 1e-3, (50, 3))])
    assert_same(ix, c, r, pts)


def test_query_into_and_overflow(name, rng):
    c = rng.uniform(-1, 1, (100, 3))
    r = np.full(100, 10.0)  # every sphere holds the origin
    ix = make_index(name, c, r)
    out = np.full(200, -1, dtype=np.int64)
    assert ix.query_into((0.0, 0.0, 0.0), out) == 100
    assert sorted(out[:100]) == list(range(100))
    small = np.full(30, -1, dtype=np.int64)
    with pytest.raises(QueryOverflow) as err:
        ix.query_into((0.0, 0.0, 0.0), small)
    assert err.value.needed == 100
    assert len(set(small.tolist())) == 30 and small.min() >= 0  # the first 30 ids were written
    with pytest.raises(ValueError):
        ix.query_into((0.0, 0.0, 0.0), np.zeros(10, dtype=np.int32))


def _morton_order(points):
    """Indices sorting ``points`` (K, 3) along a Z-order curve (a batch a view manager would send)."""
    lo, hi = points.min(0), points.max(0)
    q = ((points - lo) / np.maximum(hi - lo, 1e-300) * 1023).astype(np.int64)
    key = np.zeros(len(points), dtype=np.int64)
    for bit in range(10):
        for a in range(3):
            key |= ((q[:, a] >> bit) & 1) << (3 * bit + a)
    return np.argsort(key, kind="stable")


@pytest.mark.parametrize("batch", ["unsorted", "sorted", "duplicated", "one", "empty"])
def test_query_many_equals_single_queries(name, batch, rng):
    """query_many: each view's ids equal its own query_into's, in that order, and brute force's set. An index
    that keeps state between queries is held to the order of the same query_into calls from the same state
    (a twin built alike answering them one by one)."""
    c, r = DISTRIBUTIONS["clustered"](rng, 2000)
    ix = make_index(name, c, r)
    twin = make_index(name, c, r) if ix.keeps_state else ix
    pts = query_points(rng, c, 60)
    if batch == "sorted":
        pts = pts[_morton_order(pts)]
    elif batch == "duplicated":
        pts = np.concatenate([pts[:20], pts[:20], pts[5:6]])
    elif batch == "one":
        pts = pts[:1]
    elif batch == "empty":
        pts = np.zeros((0, 3))
    offsets, ids = ix.query_many(pts)
    assert offsets.shape == (len(pts) + 1,) and offsets.dtype == np.int64 and offsets[0] == 0
    assert ids.dtype == np.int64 and offsets[-1] == ids.size
    for k, p in enumerate(pts):
        got = ids[offsets[k]:offsets[k + 1]]
        assert np.array_equal(got, twin.query(p)), k
        assert np.array_equal(np.sort(got), np.sort(brute_query(c, r, p))), k
    ix.query_many(pts)
    assert ix.stats.visible == ids.size


def test_query_many_into_and_overflow(name, rng):
    c = rng.uniform(-1, 1, (100, 3))
    r = np.full(100, 10.0)  # every sphere holds the origin, none holds (1e6, 0, 0)
    ix = make_index(name, c, r)
    pts = np.array([[0.0, 0.0, 0.0], [1e6, 0.0, 0.0], [0.5, 0.5, 0.5]])
    offsets = np.full(4, -1, dtype=np.int64)
    out = np.full(250, -1, dtype=np.int64)
    assert ix.query_many_into(pts, offsets, out) == 200
    assert offsets.tolist() == [0, 100, 100, 200]
    assert sorted(out[:100]) == list(range(100)) and sorted(out[100:200]) == list(range(100))
    small = np.full(130, -1, dtype=np.int64)
    with pytest.raises(QueryOverflow) as err:
        ix.query_many_into(pts, offsets, small)
    assert err.value.needed == 200 and offsets.tolist() == [0, 100, 100, 200]
    assert sorted(small[:100]) == list(range(100)) and small.min() >= 0  # what fitted was written
    with pytest.raises(ValueError):
        ix.query_many_into(pts, np.zeros(3, dtype=np.int64), out)  # K + 1 offsets
    with pytest.raises(ValueError):
        ix.query_many([[0.0, 0.0]])
    with pytest.raises(ValueError):
        ix.query_many([[0.0, np.nan, 0.0]])


# points that are not real numbers, each refused by name: (case, the value as query's point, as query_many's
# points); numpy would read each as numbers (True as 1, "1.5" as 1.5, a complex as its real part)
NOT_REAL_POINTS = [
    ("bool array", np.array([True, False, True]), np.array([[True, False, True]] * 2)),
    ("numpy bools", (np.bool_(True), 0.0, 0.0), [[np.bool_(True), 0.0, 0.0]]),
    ("a bool among floats", (0.5, True, 0.0), [[0.5, 0.0, 0.0], [0.5, True, 0.0]]),
    ("numeric-string array", np.array(["1", "0", "0"]), np.array([["1", "0", "0"]])),
    ("numeric strings", ("1", "0.5", "0"), [["1", "0.5", "0"]]),
    ("bytes", np.array([b"1", b"0", b"0"]), np.array([[b"1", b"0", b"0"]])),
    ("object array", np.array([1.0, 0.0, 0.0], dtype=object), np.array([[1.0, 0.0, 0.0]], dtype=object)),
    ("complex", np.array([1.0, 0.0, 0.0], dtype=complex), np.array([[1.0, 0.0, 0.0]], dtype=complex)),
    ("dates", np.zeros(3, dtype="datetime64[s]"), np.zeros((1, 3), dtype="timedelta64[s]")),
]


def test_points_that_are_not_real_numbers_are_refused_by_every_query(name, rng):
    """query, query_into, query_many and query_many_into refuse points of any dtype but float and integer with a
    ValueError naming the argument, before anything is answered or changed; integer points are answered as their
    float values."""
    c = rng.uniform(-2, 2, (300, 3))
    r = rng.uniform(0.5, 3, 300)
    ix = make_index(name, c, r)
    pts = query_points(rng, c, 20)
    out = np.full(400, -1, dtype=np.int64)
    offsets = np.full(3, -1, dtype=np.int64)
    for case, point, points in NOT_REAL_POINTS:
        for call, arg in ((lambda: ix.query(point), "point"), (lambda: ix.query_into(point, out), "point"),
                          (lambda: ix.query_many(points), "points"),
                          (lambda: ix.query_many_into(points, np.empty(len(points) + 1, np.int64), out), "points")):
            with pytest.raises(ValueError, match=rf"^{arg} must be .*real numbers") as err:
                call()
            assert "\n" not in str(err.value), case
        assert ix.query_many_into(pts[:2], offsets, out) == offsets[-1]  # still answers, and exactly
    assert_same(ix, c, r, pts)
    whole = np.array([[0, 1, 1], [2, 0, 1]])
    for dtype in (np.int8, np.int64, np.uint16, np.float32):
        got, want = ix.query_many(whole.astype(dtype)), ix.query_many(whole.astype(float))
        assert all(np.array_equal(a, b) for a, b in zip(got, want)), dtype
    assert np.array_equal(np.sort(ix.query((0, 1, -1))), np.sort(brute_query(c, r, (0.0, 1.0, -1.0))))


NOT_REAL_BUILDS = [
    ("bool centres", np.zeros((2, 3), dtype=bool), [1.0, 1.0]),
    ("numeric-string radii", [[0.0, 0, 0], [1.0, 0, 0]], np.array(["1", "2"])),
    ("a bool radius among floats", [[0.0, 0, 0], [1.0, 0, 0]], [1.5, True]),
    ("object centres", np.zeros((2, 3), dtype=object), [1.0, 1.0]),
]


@pytest.mark.parametrize("case,c,r", NOT_REAL_BUILDS, ids=[b[0] for b in NOT_REAL_BUILDS])
def test_build_of_values_that_are_not_real_numbers_is_refused(name, case, c, r):
    with pytest.raises(ValueError, match="must be .*real numbers") as err:
        make_index(name, c, r)
    assert ("centres" if "centres" in case else "radii") in str(err.value)


def _options(kind: str) -> list[tuple[str, str]]:
    """Every (index, option) whose constructor parameter is annotated ``kind``: ``bool`` (or defaults to a bool),
    ``number`` (int or float, perhaps None) or ``str``."""
    found = []
    for n in NAMES:
        for p in list(inspect.signature(INDEXES[n].__init__).parameters.values())[3:]:
            note = str(getattr(p.annotation, "__name__", p.annotation))
            if kind == "bool" and (note == "bool" or isinstance(p.default, bool)):
                found.append((n, p.name))
            elif kind == "number" and ("int" in note or "float" in note):
                found.append((n, p.name))
            elif kind == "str" and note == "str":
                found.append((n, p.name))
    return found


BOOL_OPTIONS = _options("bool")
NUMBER_OPTIONS = _options("number")
TEXT_OPTIONS = _options("str")


def test_the_switches_of_the_indexes_are_found():
    assert ("coherent", "relative") in BOOL_OPTIONS  # the search below sees at least the one known


@pytest.mark.parametrize("index,option", BOOL_OPTIONS, ids=[f"{i}:{o}" for i, o in BOOL_OPTIONS])
def test_a_switch_takes_only_true_or_false(index, option):
    """An index's boolean option is True or False (numpy's too); text (which Python reads as true, 'off' and
    'false' too), a number or None is a ValueError naming the option."""
    if INDEXES[index].unavailable():
        pytest.skip(INDEXES[index].unavailable())
    c, r = np.zeros((2, 3)), np.ones(2)
    for value in ("off", "false", "maybe", "", 1, 0, 1.0, None):
        with pytest.raises(ValueError, match=rf"^{option} must be True or False, got {value!r}"):
            make_index(index, c, r, **{option: value})
    for value in (True, False, np.bool_(True), np.bool_(False)):
        assert getattr(make_index(index, c, r, **{option: value}), option) is bool(value)


@pytest.mark.parametrize("index,option", NUMBER_OPTIONS, ids=[f"{i}:{o}" for i, o in NUMBER_OPTIONS])
def test_a_number_option_takes_only_numbers(index, option):
    """An index's number option refuses a bool (an int to Python), text, a list and an int too large for a float
    (a float option's; an int option may have no upper bound) with a ValueError naming it."""
    if INDEXES[index].unavailable():
        pytest.skip(INDEXES[index].unavailable())
    c, r = np.random.default_rng(0).uniform(0.0, 100.0, (16, 3)), np.full(16, 5.0)
    huge = (10**400,) if "float" in str(inspect.signature(INDEXES[index].__init__).parameters[option].annotation) else ()
    for value in (True, np.bool_(False), "2", [2], -(10**400), *huge):
        with pytest.raises(ValueError, match=option):
            make_index(index, c, r, **{option: value})


@pytest.mark.parametrize("index,option", TEXT_OPTIONS, ids=[f"{i}:{o}" for i, o in TEXT_OPTIONS])
def test_a_text_option_takes_only_its_names(index, option):
    c, r = np.zeros((2, 3)), np.ones(2)
    for value in (True, 1, ["all"], "nonsense"):
        with pytest.raises(ValueError, match=option):
            make_index(index, c, r, **{option: value})


def test_insert_remove_move(name, rng):
    c, r = DISTRIBUTIONS["clustered"](rng, 1000)
    ix = make_index(name, c, r)
    ids = np.arange(1000)
    alive = np.ones(1000, dtype=bool)
    centres, radii = c.copy(), r.copy()
    for i in rng.choice(1000, 300, replace=False):
        ix.remove(int(i))
        alive[i] = False
    moved = rng.choice(np.flatnonzero(alive), 300, replace=False)
    for k, i in enumerate(moved):
        step = rng.normal(0, 1 if k % 2 else 200, 3)
        centres[i] = centres[i] + step
        if k % 3 == 0:
            radii[i] = radii[i] * rng.uniform(0.1, 10)
            ix.move(int(i), centres[i], radii[i])
        else:
            ix.move(int(i), centres[i])
    new_c, new_r = DISTRIBUTIONS["uniform"](rng, 200)
    new_ids = [ix.insert(p, q) for p, q in zip(new_c, new_r)]
    assert new_ids == list(range(1000, 1200))
    all_c = np.concatenate([centres[alive], new_c])
    all_r = np.concatenate([radii[alive], new_r])
    all_ids = np.concatenate([ids[alive], np.array(new_ids)])
    assert len(ix) == len(all_ids)
    assert_same(ix, all_c, all_r, query_points(rng, all_c, 200), ids=all_ids)


BAD_BUILDS = [
    ("nan centre", [[0.0, np.nan, 0.0]], [1.0]),
    ("inf centre", [[0.0, np.inf, 0.0]], [1.0]),
    ("negative radius", [[0.0, 0.0, 0.0]], [-1.0]),
    ("nan radius", [[0.0, 0.0, 0.0]], [np.nan]),
    ("inf radius", [[0.0, 0.0, 0.0]], [np.inf]),
    ("shape", [[0.0, 0.0]], [1.0]),
    ("length mismatch", [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]], [1.0]),
    ("radii 2-D", [[0.0, 0.0, 0.0]], [[1.0]]),
]


@pytest.mark.parametrize("case,c,r", BAD_BUILDS, ids=[b[0] for b in BAD_BUILDS])
def test_bad_build(name, case, c, r):
    with pytest.raises(ValueError):
        make_index(name, np.array(c, dtype=float), np.array(r, dtype=float))


def test_bad_updates_leave_index_unchanged(name, rng):
    c = rng.uniform(-50, 50, (200, 3))
    r = rng.uniform(1, 20, 200)
    ix = make_index(name, c, r)
    ix.remove(7)
    pts = query_points(rng, c, 40)
    before = [np.sort(ix.query(p)) for p in pts]
    bad_calls = [
        (ValueError, lambda: ix.insert((0.0, np.nan, 0.0), 1.0)),
        (ValueError, lambda: ix.insert((0.0, 0.0, 0.0), -1.0)),
        (ValueError, lambda: ix.insert((0.0, 0.0), 1.0)),
        (ValueError, lambda: ix.insert((0.0, 0.0, np.inf), 1.0)),
        (KeyError, lambda: ix.remove(7)),
        (KeyError, lambda: ix.remove(10_000)),
        (KeyError, lambda: ix.remove(-1)),
        (KeyError, lambda: ix.move(7, (0.0, 0.0, 0.0))),
        (KeyError, lambda: ix.move(999, (0.0, 0.0, 0.0))),
        (ValueError, lambda: ix.move(3, (np.nan, 0.0, 0.0))),
        (ValueError, lambda: ix.move(3, (0.0, 0.0, 0.0), -2.0)),
        (ValueError, lambda: ix.query((0.0, np.nan, 0.0))),
        (ValueError, lambda: ix.query((0.0, 0.0))),
        (ValueError, lambda: ix.insert((True, 0.0, 0.0), 1.0)),
        (ValueError, lambda: ix.insert((0.0, 0.0, 0.0), "1")),
        (ValueError, lambda: ix.insert((0.0, 0.0, 0.0), np.bool_(True))),
        (ValueError, lambda: ix.insert((0.0, 0.0, 10**400), 1.0)),
        (ValueError, lambda: ix.move(3, ("1", "0", "0"))),
        (ValueError, lambda: ix.move(3, (0.0, 0.0, 0.0), True)),
    ]
    for exc, call in bad_calls:
        with pytest.raises(exc) as err:
            call()
        assert str(err.value)  # the message names the problem
    assert len(ix) == 199
    after = [np.sort(ix.query(p)) for p in pts]
    assert all(np.array_equal(a, b) for a, b in zip(before, after))


# --------------------------------------------------------------------------- move_many


def test_move_many_equals_single_moves(name, rng):
    """A batch gives the same answers as the same moves made one by one (kept and new radii, small and
    far moves, a batch large enough for the trees' bulk refit)."""
    c, r = DISTRIBUTIONS["clustered"](rng, 1200)
    a, b = make_index(name, c, r), make_index(name, c, r)
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
        pts = query_points(rng, c2[live], 60)
        for p in pts:
            assert np.array_equal(np.sort(a.query(p)), np.sort(b.query(p))), (m, p)
        assert_same(a, c2[live], r2[live], pts, ids=live)
    a.move_many(np.zeros(0, dtype=np.int64), np.zeros((0, 3)))  # an empty batch is fine
    a.move_many([], [])
    assert len(a) == 1199


# one bad batch each: (error type, ids, centres, radii); the index holds ids 0..199, 7 removed
BAD_BATCHES = [
    ("unknown id", KeyError, [1, 500], [[0.0, 0, 0]] * 2, None),
    ("negative id", KeyError, [1, -1], [[0.0, 0, 0]] * 2, None),
    ("removed id", KeyError, [1, 7], [[0.0, 0, 0]] * 2, None),
    ("repeated id", ValueError, [1, 2, 1], [[0.0, 0, 0]] * 3, None),
    ("float ids", ValueError, [1.7, 2.0], [[0.0, 0, 0]] * 2, None),
    ("bool ids", ValueError, [True, False], [[0.0, 0, 0]] * 2, None),
    ("2-D ids", ValueError, [[1], [2]], [[0.0, 0, 0]] * 2, None),
    ("string ids", ValueError, ["1", "2"], [[0.0, 0, 0]] * 2, None),
    ("nan centre", ValueError, [1, 2], [[0.0, 0, 0], [np.nan, 0, 0]], None),
    ("inf centre", ValueError, [1, 2], [[0.0, 0, 0], [0, -np.inf, 0]], None),
    ("centre out of domain", ValueError, [1, 2], [[0.0, 0, 0], [0, 0, 2.0**101]], None),
    ("centres shape", ValueError, [1, 2], [[0.0, 0], [0, 0]], None),
    ("centres rows", ValueError, [1, 2], [[0.0, 0, 0]], None),
    ("centres not numbers", ValueError, [1], [["a", "b", "c"]], None),
    ("bool centres", ValueError, [1, 2], np.ones((2, 3), dtype=bool), None),
    ("numeric-string centres", ValueError, [1], [["1", "2", "3"]], None),
    ("numeric-string radii", ValueError, [1, 2], [[0.0, 0, 0]] * 2, np.array(["1", "2"])),
    ("bool radii", ValueError, [1, 2], [[0.0, 0, 0]] * 2, [True, False]),
    ("negative radius", ValueError, [1, 2], [[0.0, 0, 0]] * 2, [1.0, -1.0]),
    ("nan radius", ValueError, [1, 2], [[0.0, 0, 0]] * 2, [1.0, np.nan]),
    ("radius out of domain", ValueError, [1, 2], [[0.0, 0, 0]] * 2, [1.0, 2.0**101]),
    ("radii length", ValueError, [1, 2], [[0.0, 0, 0]] * 2, [1.0]),
    ("radii 2-D", ValueError, [1, 2], [[0.0, 0, 0]] * 2, [[1.0], [2.0]]),
]


@pytest.mark.parametrize("case,exc,ids,c,r", BAD_BATCHES, ids=[b[0] for b in BAD_BATCHES])
def test_bad_batch_changes_nothing(name, rng, case, exc, ids, c, r):
    c0 = rng.uniform(-50, 50, (200, 3))
    r0 = rng.uniform(1, 20, 200)
    ix = make_index(name, c0, r0)
    ix.remove(7)
    live = np.setdiff1d(np.arange(200), [7])
    pts = np.concatenate([query_points(rng, c0, 30), [[0.0, 0.0, 0.0]]])
    with pytest.raises(exc) as err:
        ix.move_many(ids, c, r)
    assert str(err.value)
    assert len(ix) == 199
    assert_same(ix, c0[live], r0[live], pts, ids=live)
    ix.move_many([1, 2], [[0.0, 0.0, 0.0]] * 2)  # and it still takes a good batch
    c0[[1, 2]] = 0.0
    assert_same(ix, c0[live], r0[live], pts, ids=live)


def test_a_repeated_batch_is_checked_again_after_a_remove_or_insert(name, rng):
    """The same batch of ids again (a moving world's frame) skips the id checks only while no insert or remove
    came between: a removed id in it is then refused, the batch itself changing nothing; bad values are refused
    in the repeated batch as in any."""
    c0 = rng.uniform(-50, 50, (300, 3))
    r0 = rng.uniform(1, 20, 300)
    ix = make_index(name, c0, r0)
    ids = np.arange(0, 300, 3, dtype=np.int64)  # 100 ids: a batch remembered
    c1 = c0.copy()
    for k in range(3):
        c1[ids] = c0[ids] + k
        ix.move_many(ids, c1[ids])
    with pytest.raises(ValueError):
        ix.move_many(ids, np.full((ids.size, 3), np.nan))
    ix.remove(int(ids[5]))
    live = np.setdiff1d(np.arange(300), [ids[5]])
    with pytest.raises(KeyError, match=str(ids[5])):
        ix.move_many(ids, c1[ids] + 1.0)
    pts = np.concatenate([query_points(rng, c1, 30), [[0.0, 0.0, 0.0]]])
    assert_same(ix, c1[live], r0[live], pts, ids=live)
    keep = np.delete(ids, 5)
    ix.move_many(keep, c1[keep] + 2.0)
    ix.move_many(keep, c1[keep] + 3.0)  # remembered again
    c1[keep] += 3.0
    new = ix.insert((0.0, 0.0, 0.0), 1.0)
    ix.remove(new)
    ix.move_many(keep, c1[keep])
    assert_same(ix, c1[live], r0[live], pts, ids=live)


def test_last_move_repeated_says_the_same_movers_as_the_call_before(name, rng):
    """``last_move_repeated``: True only when a batch moves the ids the call before moved (a moving world's
    frame); another batch, a single move, an insert or a remove between makes it False; the answers stay
    exact whichever path a batch took (the coherent index keeps its movers' rows by it)."""
    c0 = rng.uniform(-50, 50, (400, 3))
    r0 = rng.uniform(1, 20, 400)
    ix = make_index(name, c0, r0)
    a = np.arange(0, 400, 4, dtype=np.int64)  # 100 ids: remembered
    b = np.arange(2, 400, 4, dtype=np.int64)  # 100 other ids: remembered too
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
            ix.move_many(ids.copy(), c[ids])  # a new array each call: equal contents, not identity
        assert ix.last_move_repeated is want, (k, what)
        ids_live = np.flatnonzero(live)
        assert_same(ix, c[ids_live], r0[ids_live], pts, ids=ids_live)


def test_move_many_accepts_integer_dtypes(name, rng):
    c0 = rng.uniform(-50, 50, (20, 3))
    ix = make_index(name, c0, np.full(20, 5.0))
    for dt in (np.int8, np.uint16, np.int32, np.uint64, np.int64):
        ix.move_many(np.array([3, 4], dtype=dt), np.zeros((2, 3), dtype=np.float32), np.array([1, 2], dtype=np.int32))
    ix.move_many((5, 6), ((1, 1, 1), (2, 2, 2)), (0, 0))  # sequences too
    assert sorted(ix.query((0.0, 0.0, 0.0))) == [3, 4]
    assert sorted(ix.query((1.0, 1.0, 1.0))) == [4, 5]


def test_ids_are_integers(name):
    """One error type per kind of mistake: a non-integer id is a bad value, an unknown id a KeyError."""
    ix = make_index(name, np.zeros((3, 3)), np.ones(3))
    for bad in (1.0, 1.7, True, np.bool_(True), "1", None, (1,)):
        for call in (lambda: ix.remove(bad), lambda: ix.move(bad, (0.0, 0.0, 0.0))):
            with pytest.raises(ValueError):
                call()
    ix.move(np.int32(1), (1.0, 1.0, 1.0), np.float32(0.5))
    ix.remove(np.uint8(2))
    assert len(ix) == 2


def test_unknown_option_is_a_type_error(name):
    with pytest.raises(TypeError, match="bogus"):
        make_index(name, np.zeros((2, 3)), np.ones(2), bogus=3)


def test_warm_up_entry_point(name):
    """Every index has the one warm-up entry point; it is idempotent and leaves the class usable."""
    from viewer.index import warm_up

    cls = INDEXES[name]
    cls.warm_up()
    cls.warm_up()
    warm_up([name])
    assert cls.__dict__.get("_warmed_up") is True
    ix = cls(np.zeros((1, 3)), [1.0])
    assert list(ix.query((0.5, 0.0, 0.0))) == [0]
