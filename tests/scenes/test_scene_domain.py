"""Scenes at the edges: fitted world boxes that never lose a point, and values outside the numeric domain
(:mod:`viewer.domain`) refused at load, naming the field, for data files, recipes and importers alike."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

from viewer.domain import COORD_LIMIT, RADIUS_LIMIT
from viewer.scenes import (
    Motion, SceneError, generate_scene, load_scene, save_scene, scene_from_arrays,
)
from viewer.scenes.format import fit_box


def _save(tmp_path, name="s", **arrays):
    p = tmp_path / f"{name}.npz"
    np.savez(p, **arrays)
    return p


def _inside(scene) -> bool:
    lo, hi = scene.bounds
    return bool(((scene.centres >= lo) & (scene.centres <= hi)).all())


# --------------------------------------------------------------------------- fitted boxes


def test_a_fitted_box_holds_every_random_cloud(rng):
    """The README: an .npz with only centres, radii and format_version loads with a box fitted to the
    centres. About a quarter of such clouds lost an edge point to rounding before."""
    for k in range(3000):
        n = int(rng.integers(1, 40))
        scale = 10.0 ** rng.uniform(-300, 29)
        shift = rng.uniform(-1, 1, 3) * 10.0 ** rng.uniform(-5, 29) * (k % 2)
        c = rng.uniform(-1, 1, (n, 3)) * scale + shift
        s = scene_from_arrays(c, np.ones(n))
        assert _inside(s), (k, c)
        origin, world = fit_box(c, np.ones(n))
        assert world > 0 and np.array_equal(origin, s.origin) and world == s.world


def test_a_minimal_data_file_loads_with_its_edge_points(tmp_path, rng):
    for k in range(40):
        c = rng.uniform(0.1, 0.9, (int(rng.integers(2, 30)), 3))
        p = _save(tmp_path, f"m{k}", format_version=np.array(2), centres=c, radii=np.full(len(c), 1.0))
        s = load_scene(p)
        assert _inside(s) and s.n == len(c)


def test_coincident_centres_get_a_box_from_their_radii():
    s = scene_from_arrays(np.full((3, 3), 7.0), np.array([1.0, 4.0, 2.0]))
    assert s.world == 8.0 and s.origin.tolist() == [7.0, 7.0, 7.0]


def test_centres_at_the_domain_bound_are_valid(tmp_path):
    c = np.array([[COORD_LIMIT, -COORD_LIMIT, 0.0], [-COORD_LIMIT, COORD_LIMIT, 1.0]])
    p = _save(tmp_path, format_version=np.array(2), centres=c, radii=np.array([RADIUS_LIMIT, 0.0]))
    s = load_scene(p)
    assert _inside(s) and s.radii[0] == RADIUS_LIMIT


# --------------------------------------------------------------------------- data files outside the domain


def _base(n=4):
    rng = np.random.default_rng(3)
    return {"format_version": np.array(2), "centres": rng.uniform(-5, 5, (n, 3)), "radii": rng.uniform(1, 2, n)}


def _motion_entries(m=2, **params):
    p = {"radius_pulse": 0.0, "radius_period": 5.0, "seed": 1}
    p.update(params)
    return {
        "motion_ids": np.arange(m), "motion_kind": np.zeros(m, dtype=np.int8), "motion_speed": np.ones(m),
        "motion_direction": np.tile([1.0, 0.0, 0.0], (m, 1)), "motion_axis": np.tile([0.0, 1.0, 0.0], (m, 1)),
        "motion_orbit": np.zeros(m), "motion_phase": np.zeros(m), "motion_params": np.array(json.dumps(p)),
    }


def _big_seed():
    return '{"radius_pulse": 0.0, "radius_period": 5.0, "seed": 1180591620717411303424}'  # 2**70


HOSTILE_NPZ = [
    ("radii-float-max", {"radii": np.array([1.0, 1.79e308, 1.0, 1.0])}, "radii", "radii[1]"),
    ("radii-past-domain", {"radii": np.array([1.0, 2.0**101, 1.0, 1.0])}, "radii", "numeric domain"),
    ("centres-float-max", {"centres": np.array([[0.0, 0, 0], [np.finfo(float).max, 0, 0], [1, 1, 1], [2, 2, 2]])},
     "centres", "centres[1, 0]"),
    ("centres-1e308", {"centres": np.array([[1e308] * 3, [-1e308] * 3, [0.0] * 3, [1.0] * 3])}, "centres",
     "numeric domain"),
    ("world-inf", {"world": np.array(np.inf)}, "world", "finite"),
    ("world-past-domain", {"world": np.array(2.0**102)}, "world", "numeric domain"),
    ("origin-far", {"origin": np.array([1e300, 0, 0]), "world": np.array(10.0)}, "origin", "numeric domain"),
    ("sizes-huge", {"sizes": np.array([1.0, 1e300, 1.0, 1.0])}, "sizes", "sizes[1]"),
    ("cluster-centres-far", {"cluster_centres": np.array([[1e308, 0, 0]])}, "cluster_centres", "numeric domain"),
    ("extras-far", {"extras": np.array('{"diagonal": {"start": [0, 0, 0], "end": [1e308, 0, 0]}}')},
     "extras.diagonal.end[0]", "numeric domain"),
    ("extras-nan", {"extras": np.array('{"remote": {"keep_out": NaN}}')}, "extras.remote.keep_out", "nan"),
    ("extras-deep", {"extras": np.array("{\"a\": " + "[" * 100_000 + "]" * 100_000 + "}")}, "extras", "deep"),
    ("seed-negative", {"seed": np.array(-1)}, "seed", "0..2**64-1"),
    ("recipe-bad-radius", {"recipe": np.array(json.dumps({"generator": "uniform", "n": 4, "radius": {
        "model": "constant", "value": 1e300}}))}, "recipe.radius.value", "numeric domain"),
    ("motion-seed-1e30", _motion_entries(seed=1e30), "motion_params.seed", "whole number"),
    ("motion-seed-2**70", {**_motion_entries(), "motion_params": np.array(_big_seed())}, "motion_params.seed",
     "0..2**63-1"),
    ("motion-seed-bool", _motion_entries(seed=True), "motion_params.seed", "whole number"),
    ("motion-period-huge-int", _motion_entries(radius_period=10**400), "motion_params.radius_period",
     "float64 range"),
    ("motion-speed", {**_motion_entries(), "motion_speed": np.array([1.0, 1e300])}, "motion_speed", "limit"),
    ("motion-orbit-tiny", {**_motion_entries(), "motion_orbit": np.array([0.0, 1e-300])}, "motion_orbit",
     "at least"),
    ("motion-direction-long", {**_motion_entries(), "motion_direction": np.array([[1.0, 0, 0], [3.0, 0, 0]])},
     "motion_direction", "unit vectors"),
    ("motion-params-unknown", _motion_entries(sped=3), "motion_params", "unknown key"),
]


@pytest.mark.parametrize("name, change, field, words", HOSTILE_NPZ, ids=[c[0] for c in HOSTILE_NPZ])
def test_values_outside_the_domain_are_refused_at_load(tmp_path, name, change, field, words):
    arrays = {**_base(), **change}
    p = _save(tmp_path, name, **arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning on the way to the message either
        with pytest.raises(SceneError) as err:
            load_scene(p)
    e = err.value
    assert e.source == str(p) and e.field == field, str(e)
    assert words in str(e) and "\n" not in str(e)
    assert len(str(e)) < 400  # a 100,000-deep value or a 400-digit number is not echoed back


def test_a_moving_scene_at_the_edges_round_trips(tmp_path):
    s = generate_scene("clustered", 500, seed=2, world=1e6, motion={"share": 0.5, "speed": 1e12,
                                                                    "orbit_min": 1e-6, "orbit_max": 1e-6})
    t = load_scene(save_scene(s, tmp_path / "m.npz"))
    assert np.array_equal(s.motion.speed, t.motion.speed) and t.motion.seed == s.motion.seed


# --------------------------------------------------------------------------- recipes


def _recipe(tmp_path, text, name="r"):
    p = tmp_path / f"{name}.toml"
    p.write_text('generator = "uniform"\nn = 100\n' + text)
    return p


HOSTILE_RECIPES = [
    ("origin-1e308", "origin = [1e308, 1e308, 1e308]\n", "origin[0]", "numeric domain"),
    ("origin-past-box", "origin = [1.2676506002282294e30, 0, 0]\nworld = 1e15\n", "origin", "numeric domain"),
    ("radius-1e300", '[radius]\nmodel = "constant"\nvalue = 1e300\n', "radius.value", "numeric domain"),
    ("radius-max-1e300", '[radius]\nmodel = "log-uniform"\nmin = 1\nmax = 1e300\n', "radius.max", "numeric domain"),
    ("world-1e-300", "world = 1e-300\n", "world", ">="),
    ("world-huge", "world = 1e300\n", "world", "numeric domain"),
    ("world-past-recipe-limit", "world = 1e20\n", "world", "<= 1e+15"),
    ("seed-2**70", "seed = 1180591620717411303424\n", "seed", "<="),
    ("seed-400-digits", "seed = " + "9" * 400 + "\n", "seed", "(400 digits)"),
    ("seed-1e30", "seed = 1e30\n", "seed", "<="),
    ("orbit-tiny", "[motion]\norbit_min = 1e-300\n", "motion.orbit_min", ">="),
    ("speed-huge", "[motion]\nspeed = 1e300\n", "motion.speed", "numeric domain"),
    ("speed-past-limit", "[motion]\nspeed = 1e13\n", "motion.speed", "<="),
]


@pytest.mark.parametrize("name, text, field, words", HOSTILE_RECIPES, ids=[c[0] for c in HOSTILE_RECIPES])
def test_recipe_values_that_would_fail_later_are_refused(tmp_path, name, text, field, words):
    p = _recipe(tmp_path, text, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SceneError) as err:
            load_scene(p)
    e = err.value
    assert e.source == str(p) and e.field == field, str(e)
    assert words in str(e) and len(str(e)) < 300


@pytest.mark.parametrize("world", [1e-6, 1.0, 1e4, 1e15])
def test_recipes_at_the_world_bounds_generate_inside_the_domain(world):
    kinds = ("uniform", "octaves", "coincident") + (("clustered", "remote-cluster", "diagonal") if world >= 1e4 else ())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for kind in kinds:
            s = generate_scene(kind, 300, seed=1, world=world, origin=(1e29, -1e29, 0.0),
                               radius={"model": "log-uniform", "min": 1e-300, "max": 2.0**100})
            assert _inside(s) and np.abs(s.centres).max() <= COORD_LIMIT and s.radii.max() <= RADIUS_LIMIT


# --------------------------------------------------------------------------- importers build scenes the same way


def test_importers_build_checked_scenes_with_scene_from_arrays():
    c = np.array([[0.0, 0.0, 0.0], [0.1, 0.2, 0.30000000000000004]])
    s = scene_from_arrays(c, [1.0, 2.0], colours=np.array([[1, 2, 3], [4, 5, 6]]), name="level")
    assert _inside(s) and s.colours[:, 3].tolist() == [255, 255] and s.name == "level"
    with pytest.raises(SceneError, match="radii") as err:
        scene_from_arrays(c, [1.0, np.inf])
    assert err.value.field == "radii"
    with pytest.raises(SceneError) as err:
        scene_from_arrays(c, [1.0, 1.0], motion=Motion(ids=np.array([0]), kind=np.array([1], dtype=np.int8),
                                                         speed=np.ones(1), direction=np.array([[1.0, 0, 0]]),
                                                         axis=np.array([[0.0, 1, 0]]), orbit_radius=np.ones(1),
                                                         phase=np.zeros(1), seed=2**70))
    assert err.value.field == "motion_params.seed"


# --------------------------------------------------------------------------- files written


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_saved_scene_respects_the_umask(tmp_path, umask, mode):
    s = generate_scene("uniform", 10, seed=1, world=10.0)
    old = os.umask(umask)
    try:
        p = save_scene(s, tmp_path / "u.npz")
    finally:
        os.umask(old)
    assert os.stat(p).st_mode & 0o777 == mode


# --------------------------------------------------------------------------- a small fuzz


_HOSTILE = [0.0, -0.0, 5e-324, 1e-300, 1.0, -1.0, 2.0**100, -(2.0**100), 2.0**101, 1e300, 1.79e308, np.inf, -np.inf,
            np.nan, 3.5]
_HOSTILE_INTS = [0, -1, 1, 2**62, 2**63 - 1, -(2**63), 255, 256]


def test_hostile_data_files_load_or_are_refused_never_anything_else(tmp_path):
    """Random files mixing the values above in every entry: each loads (into the domain) or is refused
    with a SceneError; no other exception, no warning."""
    rng = np.random.default_rng(7)

    def real(shape):
        return np.array(rng.choice(np.array(_HOSTILE, dtype=object), size=shape).tolist(), dtype=np.float64)

    def whole(shape):
        return np.array(rng.choice(np.array(_HOSTILE_INTS, dtype=object), size=shape).tolist(), dtype=np.int64)

    p = tmp_path / "f.npz"
    loaded = 0
    for _ in range(400):
        n, k = int(rng.integers(1, 5)), int(rng.integers(0, 3))
        m = int(rng.integers(0, n + 1))
        a = {"format_version": np.array(int(rng.choice([1, 2, 2, 3]))),
             "centres": real((n, 3)) if rng.random() < 0.5 else rng.uniform(-5, 5, (n, 3)),
             "radii": real(n) if rng.random() < 0.5 else rng.uniform(0, 3, n)}
        extra = {
            "sizes": lambda: real(n), "world": lambda: np.array(rng.choice(_HOSTILE)), "origin": lambda: real(3),
            "seed": lambda: np.array(int(rng.choice(_HOSTILE_INTS))), "cluster_centres": lambda: real((k, 3)),
            "cluster_spread": lambda: real(k), "category": lambda: whole(n), "colours": lambda: whole((n, 4)),
            "extras": lambda: np.array(json.dumps({"remote": {"keep_out": float(rng.choice(_HOSTILE))}})),
        }
        for key, make in extra.items():
            if rng.random() < 0.3:
                a[key] = make()
        if rng.random() < 0.3:
            a.update(motion_ids=np.arange(m), motion_kind=rng.integers(0, 3, m).astype(np.int8),
                     motion_speed=real(m), motion_direction=real((m, 3)), motion_axis=real((m, 3)),
                     motion_orbit=real(m), motion_phase=real(m),
                     motion_params=np.array(json.dumps({"radius_pulse": float(rng.choice(_HOSTILE)),
                                                        "radius_period": float(rng.choice(_HOSTILE)),
                                                        "seed": int(rng.choice(_HOSTILE_INTS))})))
        np.savez(p, **a)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                s = load_scene(p)
            except SceneError:
                continue
        loaded += 1
        assert _inside(s) and np.abs(s.centres).max() <= COORD_LIMIT and s.radii.max() <= RADIUS_LIMIT
    assert 5 <= loaded < 400  # both outcomes were exercised
