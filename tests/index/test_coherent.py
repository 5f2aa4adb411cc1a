"""The coherent index frame after frame: flights over generated scenes of small and mixed step
sizes, moving worlds, a teleport, surface points, events against VisibilityTracker, and a hypothesis state
machine mixing camera steps of every size with moves, inserts and removes, always against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from viewer.frame.events import VisibilityTracker
from viewer.index import brute_query
from viewer.index.rivals import _coherent_kernels as K
from viewer.index.rivals.coherent import CoherentIndex


def small_scene(name: str, n: int = 4000):
    from viewer.scenes import bundled_recipes, generate_recipe, read_recipe

    recipe = dict(read_recipe(bundled_recipes()[name]))
    recipe["n"] = n
    return generate_recipe(recipe)


def flight(scene, frames: int = 400) -> np.ndarray:
    from viewer.paths.generate import generated_path

    return generated_path(scene).sample(frames=frames).positions


class Checked:
    """A coherent index beside the world it indexes, each query checked against brute force and the events
    against a VisibilityTracker without margin."""

    def __init__(self, centres, radii, margin: float = 0.0, relative: bool = False):
        self.c = np.array(centres, dtype=float)
        self.r = np.array(radii, dtype=float)
        self.ix = CoherentIndex(self.c, self.r, margin=margin, relative=relative)
        self.tracker = VisibilityTracker(self.c.shape[0], margin, relative)
        self.out = np.empty(max(16, self.c.shape[0]), dtype=np.int64)
        self.rebuilds = 0
        self.tested = []

    def query(self, p):
        k = self.ix.query_into(p, self.out)
        got = np.sort(self.out[:k])
        want = np.sort(brute_query(self.c, self.r, p))
        assert np.array_equal(got, want), (p, np.setdiff1d(got, want), np.setdiff1d(want, got))
        ent, left = self.tracker.update(self.out, k, p, self.c, self.r)
        assert np.array_equal(self.ix.last_entered(), ent)
        assert np.array_equal(self.ix.last_left(), left)
        assert self.ix.stats.visible == k and self.ix.stats.candidates >= k
        self.rebuilds += self.ix.last_rebuilt
        self.tested.append(self.ix.last_tested)
        return got


@pytest.mark.parametrize("scene", ["clustered-100k", "octaves-100k", "starfield-100k", "diagonal-100k",
                                   "remote-cluster-100k", "uniform-100k", "coincident-100k", "server-100k",
                                   "terrain-100k", "city-100k", "dynamic-100k"])
def test_generated_flight_equals_brute_force(scene):
    s = small_scene(scene)
    w = Checked(s.centres, s.radii)
    for p in flight(s):  # 400 frames over the whole flight: long steps
        w.query(p)
    assert w.rebuilds >= 1  # the first query walks from the root
    from viewer.paths.generate import generated_path

    w.tested.clear()
    for p in generated_path(s).sample(dt=1.0 / 60.0).positions[:600]:  # 60 frames a second: short steps
        w.query(p)
    # coherence: most frames look at a small share of the objects
    assert np.median(w.tested) < 0.25 * s.n, np.median(w.tested)


def test_mixed_step_sizes_and_a_teleport(rng):
    c = rng.uniform(-500, 500, (5000, 3))
    r = rng.lognormal(3, 1, 5000)
    w = Checked(c, r)
    p = np.zeros(3)
    for k in range(600):
        scale = [0.01, 0.5, 3.0, 70.0, 400.0][k % 5] if k % 37 else 3000.0
        p = np.clip(p + rng.normal(0, scale, 3), -2000, 2000)
        w.query(p)
    assert w.query(np.array([1e6, -1e6, 0.0])).size == 0  # a teleport far away: nothing in reach
    w.query(np.zeros(3))  # and back
    assert w.rebuilds >= 1


def test_jumps_walk_and_flights_keep_the_frontier(rng):
    """A step longer than the leaves' median reach (box diagonal + largest diameter) that makes more than JUMP_DUE entries due walks the
    tree from the root; after it a long step walks again and a short one builds a new frontier; short steps
    never walk, however many entries are due (a burst of them at a flight's speed). Exact throughout."""
    from viewer.index.rivals import coherent

    c = rng.uniform(-5000, 5000, (60000, 3))
    r = rng.uniform(5, 200, 60000)
    w = Checked(c, r)
    scale = w.ix._f64[6]  # the leaves' median reach
    assert 10.0 < scale < 4000.0
    for p in np.linspace([0.0, 0.0, 0.0], [30.0, 0.0, 0.0], 20):
        w.query(p)
    assert not w.ix.last_rebuilt and not w.ix.last_walked
    w.query((4000.0, -4000.0, 4000.0))  # a jump: a plain walk
    assert w.ix.last_walked
    w.query((-4000.0, 4000.0, 0.0))  # another: still walking
    assert w.ix.last_walked
    w.query((-4001.0, 4000.0, 0.0))  # a short step: a new frontier
    assert w.ix.last_rebuilt
    w.query((-4002.0, 4000.0, 0.0))  # coherent again
    assert not w.ix.last_rebuilt and not w.ix.last_walked
    # a flight at just under the jump scale a step: entries fall due in bursts, and none of these steps walks
    p = np.array([-4002.0, 4000.0, 0.0])
    due = []
    for _ in range(12):
        p = p + np.array([0.9 * scale / coherent.JUMP_SCALE, 0.0, 0.0]) * (1 if p[0] < 4000 else -1)
        w.query(p)
        assert not w.ix.last_walked
        due.append(int(w.ix._cnt[K.C_DUE]))
    assert max(due) > coherent.JUMP_DUE
    rng2 = np.random.default_rng(5)
    walked = 0
    for p in rng2.uniform(-5000, 5000, (30, 3)):  # random points: walks, all exact
        w.query(p)
        walked += w.ix.last_walked
    assert walked >= 25


def test_churn_walks_and_coherent_flights_keep_the_frontier(rng):
    """Where the events of a step outnumber a CHURN_DIV-th of the visible set (at least CHURN_MIN objects),
    the next step walks the tree, short as it is; once the churn falls, a short step builds a new frontier.
    Exact throughout."""
    # a line of small spheres: a camera flying along it at 3 units a step sees about half its visible set
    # change every step
    n = 20000
    t = np.sort(rng.uniform(0, 1000, n))
    c = np.stack([t, rng.normal(0, 2, n), rng.normal(0, 2, n)], axis=1)
    r = rng.uniform(1, 8, n)
    w = Checked(c, r)
    walked = churned = 0
    for x in np.arange(300.0, 600.0, 3.0):
        w.query((x, 0.0, 0.0))
        churned += int(w.ix._cnt[K.C_CHURN])
        walked += w.ix.last_walked
    assert churned > 80 and walked > 80
    # the same spheres, a still camera: no events, the next short step builds a frontier and keeps it
    for _ in range(3):
        w.query((600.0, 0.0, 0.0))
    assert not w.ix._cnt[K.C_CHURN]
    assert w.ix.last_rebuilt or not w.ix.last_walked
    w.query((600.001, 0.0, 0.0))
    assert not w.ix.last_walked and not w.ix.last_rebuilt
    assert w.ix.query((600.0, 0.0, 0.0)).size >= K.CHURN_MIN  # the rule applied: enough visible


def test_a_walk_leaves_the_movers_budgets_alone(rng, monkeypatch):
    """Movers carry budgets of their own: a walk or a new frontier tests only the due ones, not every mover
    again, and a visible mover leaving during a walk is a left event beside the attached ones (exact answers
    and events every step, against brute force and the tracker)."""
    from viewer.index.rivals import coherent

    n = 20000
    c = rng.uniform(-1000, 1000, (n, 3))
    r = rng.uniform(20, 150, n)
    w = Checked(c, r)
    movers = rng.choice(n, 8000, replace=False)  # below half the objects: no new layout
    p = np.zeros(3)
    w.query(p)
    monkeypatch.setattr(coherent, "JUMP_SCALE", 0.0)  # every step is long: a walk whenever an entry is due
    monkeypatch.setattr(coherent, "JUMP_DUE", 0)
    walked_tested = []
    left_in_walks = 0
    for f in range(60):
        p = p + rng.normal(0, 1.0, 3)
        new_c = w.c[movers] + rng.normal(0, 0.3, (movers.size, 3))
        gone = np.zeros(0, dtype=np.int64)
        if f % 10 == 5:  # the visible movers jump away as the camera jumps: left in the walk's detached pass
            gone = np.intersect1d(movers, brute_query(w.c, w.r, p))
            new_c[np.isin(movers, gone)] += 5000.0
            p = rng.uniform(-800, 800, 3)
        w.ix.move_many(movers, new_c)
        w.c[movers] = new_c
        w.query(p)
        if w.ix.last_walked or w.ix.last_rebuilt:
            walked_tested.append(w.ix.last_tested)
            left_in_walks += np.intersect1d(gone, w.ix.last_left()).size
    assert w.ix.detached == movers.size
    assert walked_tested and np.median(walked_tested) < movers.size / 4, walked_tested
    assert left_in_walks > 0


def test_stationary_camera_tests_nothing(rng):
    c = rng.uniform(-100, 100, (3000, 3))
    r = rng.uniform(1, 30, 3000)
    w = Checked(c, r)
    w.query((1.0, 2.0, 3.0))
    w.query((1.0, 2.0, 3.0))
    w.query((1.0, 2.0, 3.0))
    assert w.ix.last_tested == 0


def test_surface_points_are_exact():
    """Objects exactly on the camera's path at distance r (d == r in float64): slack 0, looked at every
    query, never missed, never reported wrongly, while the camera passes through the surface."""
    c = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 5.0], [-6.0, 8.0, 0.0], [0.0, 0.0, 0.0]] * 10)
    c[4:] += np.repeat(np.arange(1, 10), 4)[:, None] * 1000.0
    r = np.array([5.0, 5.0, 10.0, 0.0] * 10)
    w = Checked(c, r)
    for x in np.linspace(-1.0, 1.0, 41):
        w.query((x, 0.0, 0.0))
    w.query((0.0, 0.0, 0.0))
    assert {0, 1, 2, 3} <= set(w.query((0.0, 0.0, 0.0)).tolist())
    w.query((6.0, 8.0, 0.0))  # exactly on object 0's and 2's spheres? (3,4,0)->(6,8,0): d = 5
    w.query((6.0, 8.0, 0.0) + np.array([2.0**-40, 0.0, 0.0]))


@pytest.mark.parametrize("model", ["drift", "orbit", "random-walk", "radius"])
def test_moving_world(model, rng):
    n = 6000
    c = rng.uniform(-300, 300, (n, 3))
    r = rng.uniform(2, 40, n)
    w = Checked(c, r)
    movers = rng.choice(n, n // 10, replace=False)
    vel = rng.normal(0, 1.5, (movers.size, 3))
    centre0 = c[movers].copy()
    r0 = r[movers].copy()
    p = np.zeros(3)
    for f in range(150):
        p = p + rng.normal(0, 2.0, 3)
        if model == "drift":
            new_c, new_r = w.c[movers] + vel, None
        elif model == "orbit":
            a = 0.1 * f
            new_c, new_r = centre0 + 20.0 * np.stack([np.cos(a), np.sin(a), 0.0 * a]) - [20.0, 0, 0], None
        elif model == "random-walk":
            new_c, new_r = w.c[movers] + rng.uniform(-2, 2, (movers.size, 3)), None
        else:
            new_c, new_r = w.c[movers], r0 * (1.0 + 0.5 * np.sin(0.2 * f + movers))
        w.ix.move_many(movers, new_c, new_r)
        w.c[movers] = new_c
        if new_r is not None:
            w.r[movers] = new_r
        w.query(p)
    assert w.ix.detached == movers.size


def test_dynamic_scene_frames(rng):
    """A bundled moving recipe (clustered, 10% moving, pulsing radii) at small n, its own motion model."""
    from viewer.frame.motion import MotionState, advance

    s = small_scene("dynamic-100k", 4000)
    state = MotionState.from_scene(s)
    w = Checked(state.centres, state.radii)
    for p in flight(s, 200):
        ids, cen, rad = advance(state, 1.0 / 60.0)
        w.ix.move_many(ids, cen, rad)
        w.c[:], w.r[:] = state.centres, state.radii
        w.query(p)


def test_dynamic_1m_as_bundled():
    """dynamic-1m itself: 1e6 objects, 100,000 of them moving (drift, orbit, random walk) with pulsing radii,
    60 frames of its fly-through at 60 frames a second, every frame brute force's answer and the tracker's events."""
    from viewer.frame.motion import MotionState, advance
    from viewer.paths.generate import generated_path

    s = small_scene("dynamic-1m", 1_000_000)
    state = MotionState.from_scene(s)
    w = Checked(state.centres, state.radii)
    seen = 0
    for p in generated_path(s).sample(dt=1.0 / 60.0).positions[:60]:
        ids, cen, rad = advance(state, 1.0 / 60.0)
        w.ix.move_many(ids, cen, rad)
        w.c[:], w.r[:] = state.centres, state.radii
        seen += w.query(p).size
    assert w.ix.detached == s.motion.m
    # each mover carries its own budget: a frame tests the due ones, not the 100,000 (32 at the median here)
    assert np.median(w.tested[2:]) < s.motion.m / 20, np.median(w.tested[2:])
    assert seen > 0  # the flight starts among objects: the frames are not trivially empty


def test_movers_crossing_a_still_camera_s_surface_are_exact():
    """Movers stepping onto the still camera's distance r exactly (d == r in float64), then an ulp-sized step
    in and out, and radii growing onto it: their budgets reach 0 and every query decides them exactly."""
    n = 40
    c = np.zeros((n, 3))
    c[:, 0] = 20.0 + np.arange(n)
    r = np.full(n, 5.0)
    w = Checked(c, r)
    p = (0.0, 0.0, 0.0)
    w.query(p)
    ids = np.arange(n)
    for x in [*np.linspace(20.0, 5.0, 16), 5.0, np.nextafter(5.0, 0.0), 5.0, np.nextafter(5.0, 9.0), 5.0]:
        new_c = w.c.copy()
        new_c[:, 0] = x
        w.ix.move_many(ids, new_c)
        w.c[:] = new_c
        assert w.query(p).size == (n if x <= 5.0 else 0), x
    new_c = w.c.copy()
    new_c[:, 0] = 8.0
    w.ix.move_many(ids, new_c)
    w.c[:] = new_c
    for rr in [*np.linspace(5.0, 8.0, 7), np.nextafter(8.0, 0.0), 8.0]:
        w.ix.move_many(ids, w.c, np.full(n, rr))
        w.r[:] = rr
        assert w.query(p).size == (n if rr >= 8.0 else 0), rr


def test_inserts_removes_and_relayout(rng):
    c = rng.uniform(-100, 100, (200, 3))
    r = rng.uniform(1, 30, 200)
    ix = CoherentIndex(c, r)
    model = {i: (c[i], r[i]) for i in range(200)}
    tracker = VisibilityTracker(16)
    out = np.empty(8192, dtype=np.int64)
    p = np.zeros(3)
    for step in range(60):
        for _ in range(60):  # many inserts: a relayout of the tree along the way
            cc, rr = rng.uniform(-100, 100, 3), float(rng.uniform(0, 30))
            model[ix.insert(cc, rr)] = (cc, rr)
        for i in rng.choice(sorted(model), 20, replace=False):
            ix.remove(int(i))
            del model[int(i)]
        p = p + rng.normal(0, 3, 3)
        k = ix.query_into(p, out)
        ids = np.array(sorted(model), dtype=np.int64)
        cs = np.array([model[i][0] for i in ids])
        rs = np.array([model[i][1] for i in ids])
        want = ids[brute_query(cs, rs, p)]
        assert np.array_equal(np.sort(out[:k]), np.sort(want))
        allc = np.zeros((ix._idt.next_id, 3))
        allr = np.zeros(ix._idt.next_id)
        allc[ids], allr[ids] = cs, rs
        ent, left = tracker.update(out, k, p, allc, allr)
        assert np.array_equal(ix.last_entered(), ent)
        assert np.array_equal(ix.last_left(), left)


def test_overflow_retry_keeps_events(rng):
    c = rng.uniform(-10, 10, (500, 3))
    r = np.full(500, 100.0)
    ix = CoherentIndex(c, r)
    small = np.empty(4, dtype=np.int64)
    from viewer.index import QueryOverflow

    with pytest.raises(QueryOverflow):
        ix.query_into((0.0, 0.0, 0.0), small)
    ids = ix.query((0.0, 0.0, 0.0))  # the base class retries at the same point
    assert ids.size == 500
    assert ix.last_entered().size == 500
    # the same on a later query, which takes the fast path (nothing pending, no margin): all 500 leave, then
    # a short step back brings them in again past a small ``out``
    assert ix.query((0.0, 0.0, 250.0)).size == 0
    assert ix.last_left().size == 500
    with pytest.raises(QueryOverflow):
        ix.query_into((0.0, 0.0, 0.0), small)
    assert ix.query((0.0, 0.0, 0.0)).size == 500
    assert ix.last_entered().size == 500 and ix.last_left().size == 0


def test_memory_per_object(rng):
    n = 200_000
    ix = CoherentIndex(rng.uniform(-1e4, 1e4, (n, 3)), rng.uniform(5, 30, n))
    ix.query((0.0, 0.0, 0.0))
    assert ix.nbytes() / n <= 64.0


coord = st.floats(-300, 300, allow_nan=False, width=64)
step_scale = st.sampled_from([0.0, 1e-9, 0.01, 0.3, 2.0, 10.0, 50.0, 300.0, 1e5])


class CoherentMachine(RuleBasedStateMachine):
    """Camera steps of every size mixed with moves, batch moves, inserts and removes."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(11)
        n = 300
        self.c = rng.uniform(-100, 100, (n, 3))
        self.r = rng.uniform(0, 40, n)
        self.r[:5] = [0.0, 8.0, 16.0, 1000.0, 4.0]
        self.ix = CoherentIndex(self.c, self.r, leaf=8)
        self.live = np.ones(n, dtype=bool)
        self.p = np.zeros(3)
        self.tracker = VisibilityTracker(n)
        self.out = np.empty(4096, dtype=np.int64)
        self.rng = rng

    def _grow(self):
        self.c = np.vstack([self.c, np.zeros((1, 3))])
        self.r = np.append(self.r, 0.0)
        self.live = np.append(self.live, True)

    @rule(scale=step_scale, dx=st.floats(-1, 1), dy=st.floats(-1, 1), dz=st.floats(-1, 1))
    def step(self, scale, dx, dy, dz):
        self.p = np.clip(self.p + scale * np.array([dx, dy, dz]), -1e6, 1e6)
        self.check()

    @rule(x=coord, y=coord, z=coord, r=st.floats(0, 80))
    def insert(self, x, y, z, r):
        i = self.ix.insert((x, y, z), r)
        assert i == self.c.shape[0]
        self._grow()
        self.c[i], self.r[i] = (x, y, z), r

    @precondition(lambda self: self.live.any())
    @rule(k=st.integers(0, 10**6))
    def remove(self, k):
        alive = np.flatnonzero(self.live)
        i = int(alive[k % alive.size])
        self.ix.remove(i)
        self.live[i] = False

    @precondition(lambda self: self.live.any())
    @rule(share=st.floats(0.01, 0.5), d=st.floats(0, 30), radius=st.booleans())
    def move_many(self, share, d, radius):
        alive = np.flatnonzero(self.live)
        ids = self.rng.choice(alive, max(1, int(share * alive.size)), replace=False)
        c = self.c[ids] + self.rng.normal(0, d + 1e-9, (ids.size, 3))
        r = self.rng.uniform(0, 60, ids.size) if radius else None
        self.ix.move_many(ids, c, r)
        self.c[ids] = c
        if r is not None:
            self.r[ids] = r

    @precondition(lambda self: self.live.any())
    @rule(k=st.integers(0, 10**6), onto=st.booleans())
    def onto_surface(self, k, onto):
        """Move an object so that the camera lies exactly on its sphere (d == r in float64)."""
        alive = np.flatnonzero(self.live)
        i = int(alive[k % alive.size])
        c = self.p + np.array([3.0, 4.0, 0.0])
        self.ix.move(i, c, 5.0 if onto else None)
        self.c[i] = c
        if onto:
            self.r[i] = 5.0

    def check(self):
        k = self.ix.query_into(self.p, self.out)
        ids = np.flatnonzero(self.live)
        want = ids[brute_query(self.c[ids], self.r[ids], self.p)]
        assert np.array_equal(np.sort(self.out[:k]), np.sort(want))
        r = np.where(self.live, self.r, -1.0)  # removed: out of reach for the tracker
        ent, left = self.tracker.update(self.out, k, self.p, self.c, np.maximum(r, 0.0))
        assert np.array_equal(self.ix.last_entered(), ent)
        assert np.array_equal(self.ix.last_left(), left)

    @invariant()
    def size(self):
        assert len(self.ix) == int(self.live.sum())


TestCoherentMachine = CoherentMachine.TestCase
TestCoherentMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)


class CoherentMarginMachine(CoherentMachine):
    """The same with hysteresis margins switched among none, absolute and relative (index and tracker at the
    same step); a removed object leaves the in-set at once (for the tracker: moved out of every reach)."""

    def __init__(self):
        super().__init__()
        self.ix.set_margin(6.0)
        self.tracker.set_margin(6.0)

    @rule(which=st.sampled_from([(0.0, False), (6.0, False), (0.3, True), (40.0, False)]))
    def set_margin(self, which):
        self.ix.set_margin(*which)
        self.tracker.set_margin(*which)

    def check(self):
        k = self.ix.query_into(self.p, self.out)
        ids = np.flatnonzero(self.live)
        want = ids[brute_query(self.c[ids], self.r[ids], self.p)]
        assert np.array_equal(np.sort(self.out[:k]), np.sort(want))
        c = np.where(self.live[:, None], self.c, 1e300)
        ent, left = self.tracker.update(self.out, k, self.p, c, np.where(self.live, self.r, 0.0))
        assert np.array_equal(self.ix.last_entered(), ent)
        assert np.array_equal(self.ix.last_left(), left)
        assert self.ix.held == len(self.tracker) - k


TestCoherentMarginMachine = CoherentMarginMachine.TestCase
TestCoherentMarginMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)


def test_repeated_mover_batches_after_removes_stay_exact(rng):
    """The same batch of movers frame after frame takes a cached path (their rows known); removing a detached
    object moves rows (the next query drops it): the cache must follow."""
    n = 3000
    c = rng.uniform(-200, 200, (n, 3))
    r = rng.uniform(2, 40, n)
    w = Checked(c, r)
    y = np.arange(0, 50)  # detached first: rows 0..49
    movers = np.arange(100, 400)
    w.ix.move_many(y, w.c[y] + 1.0)
    w.c[y] += 1.0
    p = np.zeros(3)
    for f in range(40):
        if f in (10, 25):
            gone = int(y[f // 10])
            w.ix.remove(gone)
            w.r[gone] = -1.0  # out of reach for brute force from now on
        if f == 26:  # a batch between a remove and the query that drops its row
            w.ix.move_many(movers, w.c[movers])
        new = w.c[movers] + rng.normal(0, 2, (movers.size, 3))
        w.ix.move_many(movers, new, w.r[movers] * 1.01)
        w.c[movers] = new
        w.r[movers] *= 1.01
        p = p + rng.normal(0, 3, 3)
        got = np.sort(w.ix.query(p))
        live = w.r >= 0
        ids = np.flatnonzero(live)
        want = np.sort(ids[brute_query(w.c[ids], w.r[ids], p)])
        assert np.array_equal(got, want), f
    assert w.ix._movers is not None  # the cached path ran


def test_charging_a_run_of_rows_in_blocks_equals_row_by_row(rng):
    """charge_rows on a run of rows (two passes a block: the moves, then the budgets in SIMD lanes) writes the
    same rows and the same budgets, bit for bit, as the row-by-row charge of listed rows; over several blocks
    and a partial one, radii kept (NaN) and changed."""
    m = 2 * K.CHARGE_BLOCK + 37
    start = 5
    dobj = rng.uniform(-1e4, 1e4, (m + start + 3, 4))
    dobj[:, 3] = np.abs(dobj[:, 3])
    dkey = rng.uniform(-50, 50, m + start + 3)
    centres = dobj[start:start + m, :3] + rng.normal(0, 3, (m, 3))
    radii = np.where(rng.random(m) < 0.5, np.nan, dobj[start:start + m, 3] * 1.1)
    a_obj, a_key = dobj.copy(), dkey.copy()
    b_obj, b_key = dobj.copy(), dkey.copy()
    K.charge_rows(np.zeros(0, dtype=np.int64), start, centres, radii, a_obj, a_key, np.empty((2, K.CHARGE_BLOCK)))
    K.charge_rows(np.arange(start, start + m), 0, centres, radii, b_obj, b_key, np.empty((2, K.CHARGE_BLOCK)))
    assert np.array_equal(a_obj, b_obj) and np.array_equal(a_key, b_key)
    assert np.array_equal(a_obj[:start], dobj[:start]) and np.array_equal(a_key[start + m:], dkey[start + m:])
    assert np.all(a_key[start:start + m] < dkey[start:start + m])  # every budget spent something


# ----------------------------------------------------------------------------- hysteresis margins
@pytest.mark.parametrize("margin, relative", [(4.0, False), (0.25, True), (60.0, False)])
@pytest.mark.parametrize("model", ["still", "drift", "radius"])
def test_margin_events_equal_the_tracker(margin, relative, model, rng):
    """With a margin the events are the in-set's, equal to VisibilityTracker's with the same margin on every
    frame (camera steps of every size, movers, pulsing radii); the query stays the exact visible set."""
    n = 5000
    c = rng.uniform(-300, 300, (n, 3))
    r = rng.lognormal(3.3, 0.6, n)
    w = Checked(c, r, margin, relative)
    movers = rng.choice(n, n // 10, replace=False)
    vel = rng.normal(0, 1.5, (movers.size, 3))
    r0 = r[movers].copy()
    p = np.zeros(3)
    held = []
    for f in range(300):
        scale = [0.3, 2.0, 6.0, 40.0][f % 4] if f % 53 else 900.0
        p = np.clip(p + rng.normal(0, scale, 3), -250, 250)
        if model == "drift":
            w.ix.move_many(movers, w.c[movers] + vel)
            w.c[movers] += vel
        elif model == "radius":
            new_r = r0 * (1.0 + 0.5 * np.sin(0.2 * f + movers))
            w.ix.move_many(movers, w.c[movers], new_r)
            w.r[movers] = new_r
        w.query(p)
        assert w.ix.held == len(w.tracker) - w.ix.stats.visible
        held.append(w.ix.held)
    assert max(held) > 0  # the margin held objects that had left the visible set


def test_margin_changes_and_flights(rng):
    """A margin set, widened, made relative and turned off mid-flight (the tracker's set_margin at the same
    frames), over a bundled scene's 60 fps fly-through: events equal the tracker's on every frame."""
    s = small_scene("clustered-100k")
    w = Checked(s.centres, s.radii, 5.0)
    from viewer.paths.generate import generated_path

    pts = generated_path(s).sample(dt=1.0 / 60.0).positions[:800]
    for f, p in enumerate(pts):
        if f in (200, 400, 600):
            m, rel = {200: (30.0, False), 400: (0.2, True), 600: (0.0, False)}[f]
            w.ix.set_margin(m, rel)
            w.tracker.set_margin(m, rel)
        w.query(p)
    assert w.ix.held == 0


def test_margin_relayout_and_removed_held_object(rng):
    """Held objects survive a relayout (ids, not slots); a removed one leaves at the next query."""
    c = rng.uniform(-50, 50, (3000, 3))
    r = rng.uniform(1, 10, 3000)
    w = Checked(c, r, 8.0)
    for x in np.linspace(0, 30, 40):
        w.query((x, 0.0, 0.0))
    everyone = np.arange(3000)
    new_c = w.c + 0.01
    w.ix.move_many(everyone, new_c)  # more than half detached: the next query lays the tree out again
    w.c[:] = new_c
    w.query((30.5, 0.0, 0.0))
    assert w.ix.held > 0
    gone = int(w.ix._held[0])
    w.ix.remove(gone)
    out = np.empty(3000, dtype=np.int64)
    k = w.ix.query_into((30.5, 0.0, 0.0), out)
    assert gone in w.ix.last_left().tolist() and gone not in out[:k].tolist()
    with pytest.raises(ValueError):
        w.ix.set_margin(-1.0)


def test_jumps_among_flights_stay_exact(rng):
    """Random jumps mixed with short flights, a few large radii among small ones (the radius bands of the
    layout): exact, events equal to the tracker's, and the jumps walk."""
    c = rng.uniform(-5000, 5000, (40000, 3))
    r = np.where(rng.random(40000) < 0.01, rng.uniform(100, 1000, 40000), rng.uniform(5, 30, 40000))
    w = Checked(c, r, 3.0)
    walked = 0
    p = np.zeros(3)
    for f in range(240):
        if f % 40 < 20:
            p = rng.uniform(-5000, 5000, 3)  # jumps
        else:
            p = p + rng.normal(0, 3.0, 3)  # a short flight
        w.query(p)
        walked += w.ix.last_walked
    assert walked > 5
