"""The numeric domain (:mod:`viewer.domain`): inside it, at every magnitude from 1e-300 to the bound, every
answer equals brute force (build, query, insert, move, move_many; inputs of any real dtype); outside it,
``ValueError`` naming the value, nothing changed; no RuntimeWarning inside it. Each case runs in a forked child
under a time guard (:mod:`._guard`), so a hang fails instead of stalling."""

from __future__ import annotations

import math

import numpy as np

from ...domain import COORD_LIMIT, RADIUS_LIMIT
from ..brute import brute_query
from ._guard import beat, guarded
from ._kit import Subject, blamed, prop, together
from ._oracle import Model, raises

#: decades from subnormal to the bound, and the bound itself
MAGNITUDES = [1e-300, 1e-200, 1e-162, 1e-100, 1e-30, 1e-8, 1.0, 1e8, 1e18, 1e25, 1e30, COORD_LIMIT]

#: values outside the domain every entry point must refuse
OUTSIDE = [math.nan, math.inf, -math.inf, 2.0**100 * (1 + 2**-52), -(2.0**101), 1e300, 1.7976931348623157e308]

#: hypothesis examples of the fuzz, by default
FUZZ_EXAMPLES = 60


def probe_points(rng, c, r, m=24) -> np.ndarray:
    """(K, 3) points at centres, on sphere surfaces along each axis, just inside and outside, and anywhere
    (those inside the domain)."""
    pts = [c[0], np.zeros(3)]
    for k in rng.integers(0, len(c), m):
        ax = rng.integers(0, 3)
        for f in (1.0, 1.0 - 2**-40, 1.0 + 2**-40, 0.5):
            p = c[k].copy()
            p[ax] = p[ax] + f * r[k]
            pts.append(p)
    pts += list(rng.uniform(c.min(0) - r.max(), c.max(0) + r.max(), (m, 3)))
    pts = np.array(pts)
    return pts[(np.abs(pts) <= COORD_LIMIT).all(axis=1)]


def scene_at(rng, mag: float, n: int = 60):
    """(centres (n, 3), radii (n,)) of magnitude ``mag``; radii 0, ``mag`` and 4 ``mag`` among them."""
    c = rng.uniform(-1, 1, (n, 3)) * mag
    r = np.minimum(rng.uniform(0, 2, n) * mag, RADIUS_LIMIT)
    r[:3] = (0.0, mag, min(4 * mag, RADIUS_LIMIT))
    c[1] = 0.0
    return np.clip(c, -COORD_LIMIT, COORD_LIMIT), r


@prop("exact_at_magnitude", cases={("2**100" if m == COORD_LIMIT else f"{m:.0e}"): m for m in MAGNITUDES})
def exact_at_magnitude(s: Subject, mag: float) -> None:
    """Centres, radii and points all of one magnitude (1e-300 .. 2**100): build, query, insert, move and
    move_many answer as brute force; then moves across magnitudes (the largest to the smallest and back)."""
    rng = s.rng(int(np.log2(mag)) + 2000)

    def case():
        c, r = scene_at(rng, mag)
        ix = s.build(c, r)
        model = Model(c, r)
        model.check(ix, probe_points(rng, c, r), what=f"query at magnitude {mag:.0e}")
        for _ in range(5):
            p, q = rng.uniform(-1, 1, 3) * mag, float(rng.uniform(0, 1) * mag)
            model.c[ix.insert(p, q)], model.r[len(model.r)] = p, q
        ids = np.arange(10, 30)
        newc = np.clip(c[ids] + rng.normal(0, 0.1, (20, 3)) * mag, -COORD_LIMIT, COORD_LIMIT)
        ix.move_many(ids, newc)
        for k, i in enumerate(ids):
            model.c[i] = newc[k]
        for i, other in ((30, 1e-300), (31, COORD_LIMIT), (32, 1.0), (33, 1e25)):
            p, q = np.full(3, other * 0.5), min(other, RADIUS_LIMIT)
            ix.move(i, p, q)
            model.c[i], model.r[i] = p, q
        ix.remove(0)
        del model.c[0], model.r[0]
        _, cc, rr = model.arrays()
        model.check(ix, np.concatenate([probe_points(rng, cc, rr), [np.full(3, 1e-300 * 0.5), np.full(3, 0.5)]]),
                    what=f"query at magnitude {mag:.0e} after inserts, moves and a remove")

    guarded(case)


@prop("mixed_magnitudes")
def mixed_magnitudes(s: Subject, _) -> None:
    """Radii from 0 and 5e-324 to the bound in one index, centres from subnormal to the bound; then a sphere of
    radius 1e28 inserted and a batch moved to 1e29 with radius 1e-300: brute force's answers."""
    rng = s.rng(5)

    def case():
        n = 200
        c = rng.uniform(-100, 100, (n, 3))
        r = rng.uniform(1, 20, n)
        r[:6] = (1e25, RADIUS_LIMIT, 0.0, 1e-300, 1e-162, 5e-324)
        c[6:10] = ((1e-300, 0, 0), (0, 0, COORD_LIMIT), (-COORD_LIMIT, COORD_LIMIT, 0), (1e20, -1e20, 1e20))
        ix = s.build(c, r)
        model = Model(c, r)
        pts = np.concatenate([probe_points(rng, c, r), c[:12], [[0.0, 0.0, 3.5006245051617076e-196]]])
        model.check(ix, pts, what="query over mixed magnitudes")
        ix.insert((0.0, 0.0, 0.0), 1e28)
        model.c[n], model.r[n] = np.zeros(3), 1e28
        ix.move_many(np.arange(10, 20), np.full((10, 3), 1e29), np.full(10, 1e-300))
        for i in range(10, 20):
            model.c[i], model.r[i] = np.full(3, 1e29), 1e-300
        model.check(ix, np.concatenate([pts, [np.full(3, 1e29)]]), what="query over mixed magnitudes after updates")

    guarded(case)


@prop("subnormal_point_sphere")
def subnormal_point_sphere(s: Subject, _) -> None:
    """A sphere of radius 0 holds exactly the points whose squared distance underflows to 0 (the exact
    predicate, as brute force evaluates it): an index may widen its bounds, never lose it."""

    def case():
        ix = s.build(np.zeros((1, 3)), np.zeros(1))
        for z, inside in ((3.5006245051617076e-196, True), (1e-170, True), (1e-150, False), (5e-324, True)):
            assert (brute_query(np.zeros((1, 3)), np.zeros(1), (0.0, 0.0, z)).size == 1) is inside, z
            Model(np.zeros((1, 3)), np.zeros(1)).check(ix, [(0.0, 0.0, z)], what="a radius-0 sphere at the origin")

    guarded(case)


@prop("outside_domain_refused", cases={repr(float(v)): v for v in OUTSIDE})
def outside_domain_refused(s: Subject, v: float) -> None:
    """A value outside the domain (NaN, infinite, past 2**100) is refused with ``ValueError`` at every entry point
    (build naming the row, insert, move, move_many, query, query_into), the index unchanged."""
    rng = s.rng(3)
    c = rng.uniform(-50, 50, (40, 3))
    r = rng.uniform(1, 20, 40)

    def case():
        bad_c = c.copy()
        bad_c[5, 1] = v
        bad_r = r.copy()
        bad_r[5] = v
        for what, cc, rr in (("centre", bad_c, r), ("radius", c, bad_r)):
            with raises(ValueError, call=f"a build with {v!r} as row 5's {what}", match=r"\[5\]"):
                s.build(cc, rr)
        ix = s.build(c, r)
        model = Model(c, r)
        pts = probe_points(rng, c, r)
        calls = [
            ("ix.insert((0.0, v, 0.0), 1.0)", lambda: ix.insert((0.0, v, 0.0), 1.0)),
            ("ix.insert((0.0, 0.0, 0.0), v)", lambda: ix.insert((0.0, 0.0, 0.0), v)),
            ("ix.move(3, (v, 0.0, 0.0))", lambda: ix.move(3, (v, 0.0, 0.0))),
            ("ix.move(3, (0.0, 0.0, 0.0), v)", lambda: ix.move(3, (0.0, 0.0, 0.0), v)),
            ("ix.move_many([1, 2], [[0, 0, 0], [0, 0, v]])", lambda: ix.move_many([1, 2], [[0.0, 0.0, 0.0], [0.0, 0.0, v]])),
            ("ix.move_many([1, 2], zeros, [1.0, v])", lambda: ix.move_many([1, 2], np.zeros((2, 3)), [1.0, v])),
            ("ix.query((0.0, 0.0, v))", lambda: ix.query((0.0, 0.0, v))),
            ("ix.query_into((v, 0.0, 0.0), out)", lambda: ix.query_into((v, 0.0, 0.0), np.empty(8, dtype=np.int64))),
        ]
        for text, call in calls:
            with raises(ValueError, call=f"{text} with v = {v!r}", match="domain|finite"):
                call()
        assert len(ix) == 40, f"after refused calls, len(ix) is {len(ix)}, not 40"
        model.check(ix, pts, what="query after calls refused outside the domain")

    guarded(case)


DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.uint8]


def _batches():
    from hypothesis import strategies as st

    @st.composite
    def batches(draw):
        """A scene, a move and points at one random binary magnitude, in a random input dtype."""
        exp = draw(st.integers(-1000, 100))
        dt = draw(st.sampled_from(DTYPES))
        n = draw(st.integers(1, 24))
        unit = st.floats(-1, 1, allow_nan=False, width=32)
        c = np.array(draw(st.lists(st.tuples(unit, unit, unit), min_size=n, max_size=n)))
        r = np.abs(np.array(draw(st.lists(unit, min_size=n, max_size=n))))
        scale = 2.0**exp
        if np.dtype(dt).kind in "iu":
            scale = float(min(max(1, 2 ** max(exp, 0)), np.iinfo(dt).max // 2))
        elif dt is not np.float64:
            scale = min(scale, float(np.finfo(dt).max) / 4)
        m = draw(st.integers(0, n))
        ids = draw(st.lists(st.integers(0, n - 1), unique=True, min_size=m, max_size=m))
        moves = np.array(draw(st.lists(st.tuples(unit, unit, unit), min_size=m, max_size=m))).reshape(m, 3)
        pts = np.array(draw(st.lists(st.tuples(unit, unit, unit), min_size=1, max_size=6)))
        return dt, scale, c, r, ids, moves, pts

    return batches()


@prop("fuzz_magnitudes_and_dtypes")
def fuzz_magnitudes_and_dtypes(s: Subject, _) -> None:
    """Hypothesis draws (60 by default; ``--examples``) a world, a batch move and points at one binary magnitude
    (2**-1000 .. 2**100) in one input dtype (float64 .. uint8): brute force's answers, surfaces included. Not
    shrunk (a hang costs the guard's time per attempt): the example is reported as drawn."""
    run_fuzz([s])


@together("fuzz_magnitudes_and_dtypes")
def run_fuzz(subjects: list[Subject]) -> None:
    """The fuzz over every index of ``subjects`` at once, with the first's seed and examples: each example is
    drawn once and done to every index, in one guarded child."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as with_seed
    from hypothesis.reporting import with_reporter

    first = subjects[0]

    @with_seed(first.seed)
    @settings(max_examples=first.n_examples(FUZZ_EXAMPLES), deadline=None, database=None,
              phases=(Phase.explicit, Phase.reuse, Phase.generate), suppress_health_check=[HealthCheck.too_slow])
    @given(_batches())
    def run(case):
        dt, scale, c, r, ids, moves, pts = case
        cc = (c * scale).astype(dt)
        rr = (r * scale).astype(dt)
        mv = (moves * scale).astype(dt)
        q = np.concatenate([(pts * scale).astype(dt).astype(float), cc[:3].astype(float)])
        for s in subjects:
            beat(f"an example of {len(c)} objects in {np.dtype(dt).name}, scale {scale:g}"
                 + (f", on {s.label}" if len(subjects) > 1 else ""))  # each under the guard
            with blamed(s):
                ix = s.build(cc, rr)
                model = Model(cc.astype(float), rr.astype(float))
                ix.move_many(np.array(ids, dtype=np.int64), mv, None)
                for k, i in enumerate(ids):
                    model.c[i] = mv[k].astype(float)
                model.check(ix, q, what=f"query ({np.dtype(dt).name} inputs, scale {scale:g})")
                surf = np.array([p + np.array([model.r[i], 0.0, 0.0]) for i, p in model.c.items()][:4])
                model.check(ix, surf[(np.abs(surf) <= COORD_LIMIT).all(axis=1)],
                            what=f"query on a surface ({np.dtype(dt).name} inputs, scale {scale:g})")

    def every_example():
        # one forked child runs them all (a fork per example cost more than the examples); what hypothesis says
        # of a failing example goes back with the failure, as notes
        said: list[str] = []
        try:
            with with_reporter(lambda text: said.append(str(text))):
                run()
        except Exception as exc:
            for line in said:
                exc.add_note(line)
            raise

    guarded(every_example)


@prop("complex_values_refused")
def complex_values_refused(s: Subject, _) -> None:
    """A complex array is not silently cut to its real part: build, move_many (centres and radii), move, insert
    and query refuse it, and the index is unchanged."""
    c = np.array([[0.0, 0.0, 0.0], [5.0, 0.0, 0.0], [0.0, 5.0, 0.0]])
    r = np.array([1.0, 2.0, 3.0])
    for what, args in (("complex centres", (c.astype(np.complex128), r)), ("complex radii", (c, r.astype(np.complex128))),
                       ("centres + 1e-3j", (c + 1e-3j, r))):
        with raises(ValueError, call=f"a build with {what}", match="real numbers"):
            s.build(*args)
    ix = s.build(c, r)
    ids = np.array([0, 1])
    with raises(ValueError, call="move_many with complex centres", match="real numbers"):
        ix.move_many(ids, c[:2] + 1j)
    with raises(ValueError, call="move_many with complex radii", match="real numbers"):
        ix.move_many(ids, c[:2], r[:2] + 0j)
    for text, call in (("ix.move(0, (1j, 0.0, 0.0))", lambda: ix.move(0, (1j, 0.0, 0.0))),
                       ("ix.insert((0.0, 1j, 0.0), 1.0)", lambda: ix.insert((0.0, 1j, 0.0), 1.0)),
                       ("ix.query((0.0, 0.0, 1j))", lambda: ix.query((0.0, 0.0, 1j)))):
        with raises(ValueError, TypeError, call=text):
            call()
    Model(c, r).check(ix, [(0.0, 0.0, 0.0)], what="query after refused complex values")


# points that are not real numbers: (the value as query's point, as query_many's points); numpy would read each
# as numbers (True as 1, "1.5" as 1.5, a complex as its real part)
NOT_REAL_POINTS = {
    "bool array": (np.array([True, False, True]), np.array([[True, False, True]] * 2)),
    "numpy bools": ((np.bool_(True), 0.0, 0.0), [[np.bool_(True), 0.0, 0.0]]),
    "a bool among floats": ((0.5, True, 0.0), [[0.5, 0.0, 0.0], [0.5, True, 0.0]]),
    "numeric-string array": (np.array(["1", "0", "0"]), np.array([["1", "0", "0"]])),
    "numeric strings": (("1", "0.5", "0"), [["1", "0.5", "0"]]),
    "bytes": (np.array([b"1", b"0", b"0"]), np.array([[b"1", b"0", b"0"]])),
    "object array": (np.array([1.0, 0.0, 0.0], dtype=object), np.array([[1.0, 0.0, 0.0]], dtype=object)),
    "complex": (np.array([1.0, 0.0, 0.0], dtype=complex), np.array([[1.0, 0.0, 0.0]], dtype=complex)),
    "dates": (np.zeros(3, dtype="datetime64[s]"), np.zeros((1, 3), dtype="timedelta64[s]")),
}


@prop("not_real_points_refused")
def not_real_points_refused(s: Subject, _) -> None:
    """query, query_into, query_many and query_many_into refuse points of any dtype but float and integer (bools,
    numeric text, bytes, objects, complex, dates) with a one-line ``ValueError`` naming the argument, before
    anything is answered or changed; integer points are answered as their float values."""
    from .worlds import query_points

    rng = s.rng()
    c = rng.uniform(-2, 2, (300, 3))
    r = rng.uniform(0.5, 3, 300)
    ix = s.build(c, r)
    pts = query_points(rng, c, 20)
    out = np.full(400, -1, dtype=np.int64)
    offsets = np.full(3, -1, dtype=np.int64)
    for case, (point, points) in NOT_REAL_POINTS.items():
        for text, call, arg in (("query", lambda: ix.query(point), "point"),
                                ("query_into", lambda: ix.query_into(point, out), "point"),
                                ("query_many", lambda: ix.query_many(points), "points"),
                                ("query_many_into",
                                 lambda: ix.query_many_into(points, np.empty(len(points) + 1, np.int64), out), "points")):
            with raises(ValueError, call=f"{text} with a point of {case}", match=rf"^{arg} must be .*real numbers") as err:
                call()
            assert "\n" not in str(err.value), f"{text} with {case}: the message runs over lines: {err.value}"
        n = ix.query_many_into(pts[:2], offsets, out)
        assert n == offsets[-1], f"after {case} refused, query_many_into returned {n}, offsets end at {offsets[-1]}"
    Model(c, r).check(ix, pts, what="query after points that are not real numbers were refused")
    whole = np.array([[0, 1, 1], [2, 0, 1]])
    for dtype in (np.int8, np.int64, np.uint16, np.float32):
        got, want = ix.query_many(whole.astype(dtype)), ix.query_many(whole.astype(float))
        assert all(np.array_equal(a, b) for a, b in zip(got, want)), \
            f"query_many of {np.dtype(dtype).name} points answers otherwise than of the same points as float64"
    Model(c, r).check(ix, [(0, 1, -1)], what="query of a point of Python ints")


NOT_REAL_BUILDS = {
    "bool-centres": (np.zeros((2, 3), dtype=bool), [1.0, 1.0]),
    "numeric-string-radii": ([[0.0, 0, 0], [1.0, 0, 0]], np.array(["1", "2"])),
    "a-bool-radius-among-floats": ([[0.0, 0, 0], [1.0, 0, 0]], [1.5, True]),
    "object-centres": (np.zeros((2, 3), dtype=object), [1.0, 1.0]),
}


@prop("not_real_build_refused", cases=NOT_REAL_BUILDS)
def not_real_build_refused(s: Subject, case) -> None:
    """A build from centres or radii that are not real numbers (bools, numeric text, objects) raises ``ValueError``
    naming the argument."""
    c, r = case
    arg = "centres" if np.asarray(c).dtype.kind in "bO" else "radii"
    with raises(ValueError, call=f"a build with {arg} that are not real numbers", match="must be .*real numbers") as err:
        s.build(c, r)
    assert arg in str(err.value), f"the build's error does not name {arg}: {err.value}"
