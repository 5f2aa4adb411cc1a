"""The numeric domain of the index contract (:mod:`viewer.domain`), for every index in INDEXES: inside it,
at every magnitude from 1e-300 to the bound, every answer equals brute force (build, query, insert,
move, move_many); outside it, ``ValueError`` naming the value and nothing changed. No RuntimeWarning
inside the domain. Each case runs in a forked child under a time guard, so a hang fails instead of
stalling the suite."""

from __future__ import annotations

import os
import select
import signal
import time
import traceback
import warnings
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from viewer.domain import COORD_LIMIT, RADIUS_LIMIT
from viewer.index import INDEXES, brute_query, make_index

NAMES = sorted(INDEXES)
GUARD_S = 20.0  # far above any case here (well under a second each): only a hang reaches it

# decades from subnormal to the bound, and the bound itself
MAGNITUDES = [1e-300, 1e-200, 1e-162, 1e-100, 1e-30, 1e-8, 1.0, 1e8, 1e18, 1e25, 1e30, COORD_LIMIT]


@pytest.fixture(params=NAMES)
def name(request):
    why = INDEXES[request.param].unavailable()
    if why:
        pytest.skip(f"{request.param}: {why}")
    INDEXES[request.param].warm_up()  # here, not in every forked case
    return request.param


def guarded(fn, seconds: float = GUARD_S):
    """Run ``fn()`` in a forked child (which inherits the compiled kernels) under strict numerics, with
    RuntimeWarnings as errors; kill it and fail if it runs longer than ``seconds`` (a hang: a kernel
    cannot be interrupted in-process), fail with its traceback if it raised."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report, and leave without running the parent's exit handlers
        os.close(rd)
        msg = b""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
                    fn()
        except BaseException:
            msg = traceback.format_exc().encode()
        try:
            os.write(wr, msg)  # the parent reads while waiting, so a long message cannot block
        finally:
            os._exit(0)
    os.close(wr)
    chunks = []
    deadline = time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([rd], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise AssertionError(f"hung: still running after {seconds:.0f} s")
            b = os.read(rd, 1 << 16)
            if not b:
                break
            chunks.append(b)
    finally:
        os.close(rd)
        _, status = os.waitpid(pid, 0)
    if chunks:
        raise AssertionError(b"".join(chunks).decode(errors="replace"))
    if status != 0:
        raise AssertionError(f"the case's process died (status {status})")


class Model:
    """Ids -> (centre, radius), the expected contents beside the index under test."""

    def __init__(self, c, r):
        self.c = {i: np.array(p, dtype=float) for i, p in enumerate(c)}
        self.r = {i: float(q) for i, q in enumerate(r)}

    def check(self, ix, points):
        ids = np.array(sorted(self.c), dtype=np.int64)
        c = np.array([self.c[i] for i in ids]).reshape(-1, 3)
        r = np.array([self.r[i] for i in ids])
        for p in points:
            got = np.sort(ix.query(p))
            want = ids[brute_query(c, r, p)] if ids.size else ids
            assert np.array_equal(got, np.sort(want)), (ix.name, tuple(p), np.setdiff1d(want, got), np.setdiff1d(got, want))


def probe_points(rng, c, r, m=24):
    """Points at centres, on sphere surfaces along each axis, just inside and outside, and anywhere."""
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
    c = rng.uniform(-1, 1, (n, 3)) * mag
    r = np.minimum(rng.uniform(0, 2, n) * mag, RADIUS_LIMIT)
    r[:3] = (0.0, mag, min(4 * mag, RADIUS_LIMIT))
    c[1] = 0.0
    return np.clip(c, -COORD_LIMIT, COORD_LIMIT), r


@pytest.mark.parametrize("mag", MAGNITUDES, ids=[f"{m:.0e}" for m in MAGNITUDES])
def test_exact_at_every_magnitude(name, mag):
    """Build, query, insert, move and move_many with centres, radii and points all of one magnitude,
    then moves across magnitudes (the largest to the smallest and back)."""
    rng = np.random.default_rng(int(np.log2(mag)) + 2000)

    def case():
        c, r = scene_at(rng, mag)
        ix = make_index(name, c, r)
        model = Model(c, r)
        model.check(ix, probe_points(rng, c, r))
        for k in range(5):
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
        cc = np.array(list(model.c.values()))
        rr = np.array(list(model.r.values()))
        model.check(ix, np.concatenate([probe_points(rng, cc, rr), [np.full(3, 1e-300 * 0.5), np.full(3, 0.5)]]))

    guarded(case)


def test_mixed_magnitudes_in_one_index(name):
    """Radii from 0 and 1e-300 to the bound in one index (one radius of 1e25 among normal ones hung the
    hierarchical grid), centres from subnormal to the bound."""
    rng = np.random.default_rng(5)

    def case():
        n = 200
        c = rng.uniform(-100, 100, (n, 3))
        r = rng.uniform(1, 20, n)
        r[:6] = (1e25, RADIUS_LIMIT, 0.0, 1e-300, 1e-162, 5e-324)
        c[6:10] = ((1e-300, 0, 0), (0, 0, COORD_LIMIT), (-COORD_LIMIT, COORD_LIMIT, 0), (1e20, -1e20, 1e20))
        ix = make_index(name, c, r)
        model = Model(c, r)
        pts = np.concatenate([probe_points(rng, c, r), c[:12], [[0.0, 0.0, 3.5006245051617076e-196]]])
        model.check(ix, pts)
        ix.insert((0.0, 0.0, 0.0), 1e28)
        model.c[n], model.r[n] = np.zeros(3), 1e28
        ix.move_many(np.arange(10, 20), np.full((10, 3), 1e29), np.full(10, 1e-300))
        for i in range(10, 20):
            model.c[i], model.r[i] = np.full(3, 1e29), 1e-300
        model.check(ix, np.concatenate([pts, [np.full(3, 1e29)]]))

    guarded(case)


def test_subnormal_point_sphere(name):
    """A sphere of radius 0 holds exactly the points whose squared distance underflows to 0 (the
    contract's predicate, as brute force evaluates it): an index may widen its boxes, never lose it."""

    def case():
        ix = make_index(name, np.zeros((1, 3)), np.zeros(1))
        for z, inside in ((3.5006245051617076e-196, True), (1e-170, True), (1e-150, False), (5e-324, True)):
            assert (ix.query((0.0, 0.0, z)).size == 1) is inside, z
            assert (brute_query(np.zeros((1, 3)), np.zeros(1), (0.0, 0.0, z)).size == 1) is inside

    guarded(case)


OUTSIDE = [np.nan, np.inf, -np.inf, 2.0**100 * (1 + 2**-52), -(2.0**101), 1e300, 1.7976931348623157e308]


@pytest.mark.parametrize("v", OUTSIDE, ids=[repr(float(v)) for v in OUTSIDE])
def test_outside_the_domain_is_refused_at_every_entry_point(name, v):
    rng = np.random.default_rng(3)
    c = rng.uniform(-50, 50, (40, 3))
    r = rng.uniform(1, 20, 40)

    def case():
        bad_c = c.copy()
        bad_c[5, 1] = v
        bad_r = r.copy()
        bad_r[5] = v
        for cc, rr in ((bad_c, r), (c, bad_r)):
            with pytest.raises(ValueError, match=r"\[5\]"):  # names the row
                make_index(name, cc, rr)
        ix = make_index(name, c, r)
        model = Model(c, r)
        pts = probe_points(rng, c, r)
        calls = [
            lambda: ix.insert((0.0, v, 0.0), 1.0),
            lambda: ix.insert((0.0, 0.0, 0.0), v),
            lambda: ix.move(3, (v, 0.0, 0.0)),
            lambda: ix.move(3, (0.0, 0.0, 0.0), v),
            lambda: ix.move_many([1, 2], [[0.0, 0.0, 0.0], [0.0, 0.0, v]]),
            lambda: ix.move_many([1, 2], np.zeros((2, 3)), [1.0, v]),
            lambda: ix.query((0.0, 0.0, v)),
            lambda: ix.query_into((v, 0.0, 0.0), np.empty(8, dtype=np.int64)),
        ]
        for call in calls:
            with pytest.raises(ValueError) as err:
                call()
            assert "domain" in str(err.value) or "finite" in str(err.value), str(err.value)
        assert len(ix) == 40
        model.check(ix, pts)

    guarded(case)


# --------------------------------------------------------------------------- fuzz

DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.uint8]


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


def test_fuzz_contract_over_magnitudes_and_dtypes(name):
    name_ = name

    # no shrinking: a hang costs GUARD_S per attempt; the example that failed is reported as drawn
    @settings(max_examples=60, deadline=timedelta(seconds=10), phases=(Phase.explicit, Phase.reuse, Phase.generate),
              suppress_health_check=[HealthCheck.too_slow])
    @given(batches())
    def run(case):
        dt, scale, c, r, ids, moves, pts = case

        def body():
            cc = (c * scale).astype(dt)
            rr = (r * scale).astype(dt)
            ix = make_index(name_, cc, rr)
            model = Model(cc.astype(float), rr.astype(float))
            mv = (moves * scale).astype(dt)
            ix.move_many(np.array(ids, dtype=np.int64), mv, None)
            for k, i in enumerate(ids):
                model.c[i] = mv[k].astype(float)
            q = np.concatenate([(pts * scale).astype(dt).astype(float), cc[:3].astype(float)])
            model.check(ix, q)
            surf = np.array([p + np.array([model.r[i], 0.0, 0.0]) for i, p in model.c.items()][:4])
            model.check(ix, surf[(np.abs(surf) <= COORD_LIMIT).all(axis=1)])

        guarded(body)

    run()


def test_complex_values_are_refused_at_every_entry_point(name):
    """A complex array is not silently cut to its real part: build, move_many (centres and radii), move,
    insert and query all refuse it, and the index is unchanged."""
    c = np.array([[0.0, 0.0, 0.0], [5.0, 0.0, 0.0], [0.0, 5.0, 0.0]])
    r = np.array([1.0, 2.0, 3.0])
    for args in ((c.astype(np.complex128), r), (c, r.astype(np.complex128)), (c + 1e-3j, r)):
        with pytest.raises(ValueError, match="real numbers"):
            make_index(name, *args)
    ix = make_index(name, c, r)
    ids = np.array([0, 1])
    with pytest.raises(ValueError, match="real numbers"):
        ix.move_many(ids, c[:2] + 1j)
    with pytest.raises(ValueError, match="real numbers"):
        ix.move_many(ids, c[:2], r[:2] + 0j)
    for call in (lambda: ix.move(0, (1j, 0.0, 0.0)), lambda: ix.insert((0.0, 1j, 0.0), 1.0),
                 lambda: ix.query((0.0, 0.0, 1j))):
        with pytest.raises((ValueError, TypeError)):
            call()
    assert np.array_equal(np.sort(ix.query((0.0, 0.0, 0.0))), brute_query(c, r, (0.0, 0.0, 0.0)))
