"""Moving objects: the [motion] recipe table, Motion arrays in .npz, and viewer.frame.motion's models."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.scenes import MOTION_KINDS, SceneError, check_recipe, generate_scene, load_scene, save_scene
from viewer.frame.motion import MotionState, advance

DT = 1.0 / 60.0


def moving(n=2000, seed=3, **motion):
    spec = {"share": 0.25, **motion}
    return generate_scene("clustered", n, seed=seed, world=1000.0, clusters=4, motion=spec)


def run(state, frames, dt=DT):
    for _ in range(frames):
        advance(state, dt)
    return state


# ----------------------------------------------------------------------------- recipe and scene


def test_motion_is_deterministic_per_seed_and_changes_nothing_else():
    a, b, c = moving(seed=3), moving(seed=3), moving(seed=4)
    for f in ("ids", "kind", "speed", "direction", "axis", "orbit_radius", "phase"):
        assert np.array_equal(getattr(a.motion, f), getattr(b.motion, f)), f
    assert a.motion.seed == b.motion.seed
    assert not np.array_equal(a.motion.ids, c.motion.ids)
    static = generate_scene("clustered", 2000, seed=3, world=1000.0, clusters=4)
    assert static.motion is None and "motion" not in static.recipe
    for f in ("centres", "radii", "sizes", "colours", "category"):
        assert np.array_equal(getattr(a, f), getattr(static, f)), f  # the motion stream is a stream of its own


def test_share_and_models():
    s = moving(n=1000, share=0.1)
    m = s.motion
    assert m.m == 100 and np.array_equal(m.ids, np.unique(m.ids)) and m.ids.max() < 1000
    assert set(np.unique(m.kind)) <= {0, 1, 2}
    for name in MOTION_KINDS:
        only = moving(n=500, model=name).motion
        assert (only.kind == MOTION_KINDS.index(name)).all()
    n = m.direction[m.kind != 2]
    assert np.allclose(np.linalg.norm(n, axis=1), 1.0)
    orb = m.kind == 1
    assert np.allclose(np.einsum("ij,ij->i", m.direction[orb], m.axis[orb]), 0.0, atol=1e-12)
    assert ((m.orbit_radius[orb] >= 5.0) & (m.orbit_radius[orb] <= 50.0)).all()
    assert ((m.speed >= 10.0) & (m.speed <= 30.0)).all()


def test_checked_motion_recipe_checks_to_itself(tmp_path):
    s = moving(radius_pulse=0.2)
    assert check_recipe(s.recipe) == s.recipe
    assert s.recipe["motion"]["radius_pulse"] == 0.2 and s.recipe["motion"]["model"] == "mixed"


@pytest.mark.parametrize("table, field, words", [
    ({"share": -0.1}, "motion.share", ">= 0"),
    ({"model": "teleport"}, "motion.model", "one of"),
    ({"speed": 0}, "motion.speed", "> 0"),
    ({"orbit_min": 60.0, "orbit_max": 50.0}, "motion.orbit_min", "<= orbit_max"),
    ({"radius_pulse": 1.0}, "motion.radius_pulse", "<= 0.95"),
    ({"spin": 1.0}, "motion.spin", "unknown"),
])
def test_bad_motion_tables_name_the_field(table, field, words):
    with pytest.raises(SceneError) as err:
        check_recipe({"generator": "uniform", "n": 10, "motion": table})
    assert err.value.field == field and words in str(err.value)


def test_motion_survives_the_npz_round_trip(tmp_path):
    s = moving(radius_pulse=0.3)
    t = load_scene(save_scene(s, tmp_path / "m.npz"))
    for f in ("ids", "kind", "speed", "direction", "axis", "orbit_radius", "phase"):
        assert np.array_equal(getattr(s.motion, f), getattr(t.motion, f)), f
    assert (t.motion.radius_pulse, t.motion.radius_period, t.motion.seed) == (0.3, 5.0, s.motion.seed)
    a, b = run(MotionState.from_scene(s), 50), run(MotionState.from_scene(t), 50)
    assert np.array_equal(a.centres, b.centres) and np.array_equal(a.radii, b.radii)


def test_npz_motion_entries_are_checked(tmp_path):
    s = moving(n=50)
    p = save_scene(s, tmp_path / "m.npz")
    with np.load(p) as z:
        arrays = dict(z)
    bad = dict(arrays, motion_ids=arrays["motion_ids"][::-1].copy())
    np.savez(tmp_path / "unsorted.npz", **bad)
    with pytest.raises(SceneError, match="sorted"):
        load_scene(tmp_path / "unsorted.npz")
    partial = {k: v for k, v in arrays.items() if k != "motion_axis"}
    np.savez(tmp_path / "partial.npz", **partial)
    with pytest.raises(SceneError, match="motion_axis"):
        load_scene(tmp_path / "partial.npz")
    v1 = dict(arrays, format_version=np.array(1))
    np.savez(tmp_path / "v1.npz", **v1)
    with pytest.raises(SceneError, match="format version 2"):
        load_scene(tmp_path / "v1.npz")
    static_v1 = {k: v for k, v in v1.items() if not k.startswith("motion_")}
    np.savez(tmp_path / "static-v1.npz", **static_v1)
    assert load_scene(tmp_path / "static-v1.npz").motion is None


# ----------------------------------------------------------------------------- the models


def test_two_replays_are_identical():
    s = moving(radius_pulse=0.2)
    a, b = MotionState.from_scene(s), MotionState.from_scene(s)
    for _ in range(200):
        ia, ca, ra = advance(a, DT)
        ib, cb, rb = advance(b, DT)
        assert np.array_equal(ia, ib) and np.array_equal(ca, cb) and np.array_equal(ra, rb)
    assert np.array_equal(a.centres, b.centres) and a.step == b.step == 200
    # the scene itself is untouched: the state works on its own copy
    assert np.array_equal(s.centres, generate_scene("clustered", 2000, seed=3, world=1000.0, clusters=4).centres)


def test_only_movers_move_and_returned_arrays_match_the_world():
    s = moving()
    st = MotionState.from_scene(s)
    ids, c, r = advance(st, DT)
    assert r is None  # no radius pulse: radii stay, move_many keeps them
    still = np.setdiff1d(np.arange(s.n), ids)
    assert np.array_equal(st.centres[still], s.centres[still])
    assert np.array_equal(st.centres[ids], c) and np.array_equal(st.radii, s.radii)
    assert (np.linalg.norm(c - s.centres[ids], axis=1) > 0).all()


def test_drift_is_a_straight_line_at_its_speed_reflected_by_the_walls():
    s = moving(model="drift", speed=5.0)
    st = MotionState.from_scene(s)
    m = s.motion
    ids, c, _ = advance(st, 0.5)
    lo, hi = s.bounds
    inside = ((s.centres[ids] + 0.5 * m.speed[:, None] * m.direction > lo) &
              (s.centres[ids] + 0.5 * m.speed[:, None] * m.direction < hi)).all(axis=1)
    step = c[inside] - s.centres[ids][inside]
    assert np.allclose(step, 0.5 * m.speed[inside, None] * m.direction[inside])
    fast = MotionState.from_scene(moving(model="drift", speed=2000.0))  # crosses the 1000-wide box often
    run(fast, 300)
    assert (fast.centres >= lo).all() and (fast.centres <= hi).all()


def test_orbit_keeps_its_radius_and_speed():
    s = moving(model="orbit", speed=10.0, orbit_min=20.0, orbit_max=40.0)
    st = MotionState.from_scene(s)
    lo, hi = s.bounds
    m = s.motion
    free = ((st.orbit_centre - m.orbit_radius[:, None] > lo) & (st.orbit_centre + m.orbit_radius[:, None] < hi)).all(1)
    prev = st.centres[m.ids].copy()
    for _ in range(120):
        ids, c, _ = advance(st, DT)
    d = np.linalg.norm(c - st.orbit_centre, axis=1)
    assert np.allclose(d[free], m.orbit_radius[free])
    # arc length after 2 s at speed v: angle v t / R, chord 2 R sin(angle / 2)
    ang = m.speed * 2.0 / m.orbit_radius
    chord = 2 * m.orbit_radius * np.abs(np.sin(ang / 2))
    assert np.allclose(np.linalg.norm(c - prev, axis=1)[free], chord[free])


def test_random_walk_steps_are_bounded_and_counter_based():
    s = moving(model="random-walk", speed=30.0)
    a = MotionState.from_scene(s)
    before = a.centres[a.ids].copy()
    ids, c, _ = advance(a, DT)
    assert (np.abs(c - before) <= 30.0 * 1.5 * DT + 1e-12).all()
    # a step's draw depends only on (seed, step, id, axis): a state jumped to step 7 takes the same 8th step
    b = run(MotionState.from_scene(s), 7)
    c7 = b.centres[b.ids].copy()
    run(a, 6)
    assert np.array_equal(a.centres, b.centres)
    fresh = MotionState.from_scene(s)
    fresh.centres[fresh.ids] = c7
    fresh.step = 7
    assert np.array_equal(advance(fresh, DT)[1], advance(b, DT)[1])


def test_view_radius_pulse():
    s = moving(radius_pulse=0.25, radius_period=2.0)
    st = MotionState.from_scene(s)
    r0 = s.radii[s.motion.ids]
    seen_lo, seen_hi = r0.copy(), r0.copy()
    for _ in range(120):
        ids, _, r = advance(st, DT)
        assert r is not None and np.array_equal(st.radii[ids], r)
        seen_lo, seen_hi = np.minimum(seen_lo, r), np.maximum(seen_hi, r)
    assert (seen_lo >= 0.75 * r0 - 1e-9).all() and (seen_hi <= 1.25 * r0 + 1e-9).all()
    assert (seen_hi - seen_lo > 0.4 * r0).all()  # a whole period swings nearly the full range
    assert MotionState.from_scene(generate_scene("uniform", 10, seed=1)) is None


# ----------------------------------------------------------------------------- snapshots


def _edited(snap: dict, field: str, at, value) -> dict:
    out = {k: np.array(v, copy=True) for k, v in snap.items()}
    if at is None:
        out[field] = np.asarray(value)
    else:
        out[field][at] = value
    return out


@pytest.mark.parametrize("field, at, value", [
    ("centres", (0, 0), 1e31), ("centres", (1, 2), np.nan), ("radii", 0, -5.0), ("radii", 2, 1e31),
    ("vel", (0, 1), np.inf), ("t", None, 1e308), ("t", None, -1.0), ("t", None, np.zeros(2)),
    ("step", None, 2**63 - 1), ("step", None, 3.0), ("step", None, True), ("ids", None, np.arange(3.0)),
])
def test_restore_refuses_a_snapshot_outside_its_rule_naming_the_field_and_changes_nothing(field, at, value):
    from viewer.frame.motion import SnapshotError

    state = run(MotionState.from_scene(moving(n=500, model="mixed")), 3)
    snap = state.snapshot()
    with pytest.raises(SnapshotError) as caught:
        state.restore(_edited(snap, field, at, value))
    assert caught.value.field == field and str(caught.value).startswith(f"{field}: ")
    after = state.snapshot()
    assert all(np.array_equal(after[k], snap[k]) for k in snap)


def test_a_snapshot_at_the_clock_and_step_limits_advances_to_finite_places():
    """The limits are where advancing is still sound: an orbit's angle and the random walk's step key fit."""
    from viewer.frame.motion import CLOCK_LIMIT, STEP_LIMIT, check_snapshot

    state = MotionState.from_scene(moving(n=500, model="mixed", radius_pulse=0.2))
    snap = {**state.snapshot(), "t": np.array(CLOCK_LIMIT), "step": np.array(STEP_LIMIT)}
    assert check_snapshot(snap)["step"] == STEP_LIMIT
    state.restore(snap)
    run(state, 3, dt=1e30)
    assert np.isfinite(state.centres).all() and np.isfinite(state.radii).all() and state.step == STEP_LIMIT + 3
