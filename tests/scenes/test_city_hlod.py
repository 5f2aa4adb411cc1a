"""The city generator (three LOD meshes per building, LOD switch distances) and automatic HLOD proxies
(scenes/hlod.py): no hole and no double outside the cross-fade window, by brute force on random cameras."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.frame.ranges import brute_in_range
from viewer.scenes import SceneError, check_recipe, generate_recipe, load_scene, save_scene
from viewer.scenes.hlod import DEFAULT_WINDOW, PAD, add_hlod, group_by_cell

from tests.support.cli import run_cli

#: the first 16 hex digits of test_city_golden_digest's scene (city, n 2000, seed 1, [hlod] axes xz)
GOLDEN_CITY = "75b8e56d67a61b0f"


def _city(n=4000, seed=3, hlod=True, **params):
    r = {"generator": "city", "n": n, "seed": seed, "world": 1200.0, "params": {"downtown": 300.0, **params}}
    if hlod:
        r["hlod"] = {"cell": 120.0, "axes": "xz"}
    return generate_recipe(r)


def _groups(scene):
    """{proxy row: children rows}."""
    par = scene.parent
    kids = np.flatnonzero(par >= 0)
    out: dict[int, np.ndarray] = {}
    for p in np.unique(par[kids]):
        out[int(p)] = kids[par[kids] == p]
    return out


def _d(a, q):
    d = np.asarray(a, dtype=np.float64) - q
    return np.sqrt((d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1]) + d[..., 2] * d[..., 2])


@pytest.mark.parametrize("fade", [0.0, 0.05, DEFAULT_WINDOW])
def test_exactly_one_of_proxy_and_children_outside_the_window(fade):
    """On random cameras (and cameras placed near each proxy's switch distance), for every group: nearer
    than the switch every child is shown and the proxy is not; beyond the window (up to the proxy's end)
    the proxy is shown and no child; beyond the proxy's end nothing, and no child was in range before the
    proxies were made either (the scene without [hlod], same seed). Inside the window both are drawn
    (cross-fading) when fade > 0. The runtime rule is viewer.frame.ranges.brute_in_range."""
    s = _city()
    plain = _city(hlod=False)
    n0 = plain.n
    assert np.array_equal(s.centres[:n0], plain.centres) and (s.radii[:n0] >= plain.radii).all()
    groups = _groups(s)
    assert len(groups) == s.n - n0 and all(p >= n0 for p in groups)
    rng = np.random.default_rng(7)
    lo, hi = s.bounds
    cams = [lo + rng.random(3) * (hi - lo) for _ in range(60)]
    # and, per sampled proxy, cameras just inside and outside its switch distance and its window
    for p in rng.choice(sorted(groups), 40, replace=False):
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        for f in (0.5, 0.999, 1.0 + fade / 2, 1.0 + fade + 1e-6, 1.5, 4.0):
            cams.append(s.centres[p] + u * s.begin[p] * f)
    seen = {"near": 0, "far": 0, "window": 0, "beyond": 0}
    for q in cams:
        shown = brute_in_range(s.centres, s.radii, s.begin, s.parent, q, fade=fade)
        was = brute_in_range(plain.centres, plain.radii, None, None, q)
        for p, kids in groups.items():
            d = s.centres[p] - q  # squares, as the runtime compares them
            d2 = (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2]
            S, lim, E = s.begin[p], s.begin[p] * (1 + fade), s.radii[p]
            if d2 < S * S:
                assert shown[kids].all() and not shown[p], (p, d2, S)
                seen["near"] += 1
            elif d2 >= lim * lim and d2 <= E * E:
                assert shown[p] and not shown[kids].any(), (p, d2, S)
                seen["far"] += 1
            elif d2 > E * E:
                assert not shown[p] and not shown[kids].any() and not was[kids].any()
                seen["beyond"] += 1
            else:  # the window, fade > 0: both drawn, the children fading out
                assert shown[p] and shown[kids].all()
                seen["window"] += 1
    assert seen["near"] and seen["far"] and seen["beyond"] and (seen["window"] or fade == 0), seen


def test_the_stated_rule_holds_for_every_child():
    """Each child's end >= (S + W + |c - p|)(1 + PAD); each proxy's end >= S + W and >= every child's
    former end + |c - p|; each proxy's begin = switch x the covering radius."""
    s = _city()
    plain = _city(hlod=False)
    W = DEFAULT_WINDOW
    for p, kids in _groups(s).items():
        S = s.begin[p]
        off = _d(s.centres[kids], s.centres[p])
        assert (s.radii[kids] >= (S * (1 + W) + off) * (1 + PAD) * (1 - 1e-15)).all()
        assert s.radii[p] >= S * (1 + W) and s.radii[p] >= (plain.radii[kids] + off).max() * (1 - 1e-15)
        cover = (off + np.sqrt(3.0) * s.sizes[kids].astype(np.float64)).max()
        assert S == pytest.approx(4.0 * cover, rel=1e-12)
        # the proxy covers its group: its centre is the middle of the children's centres
        c = s.centres[kids]
        assert np.allclose(s.centres[p], (c.min(0) + c.max(0)) / 2)


def test_groups_by_cell_and_column():
    c = np.array([[1.0, 1, 1], [2, 2, 2], [1, 50, 1], [30, 1, 1], [31, 1, 1], [90, 1, 1]])
    g, k = group_by_cell(c, np.zeros(3), 10.0, min_children=2)
    assert k == 2 and g.tolist() == [0, 0, -1, 1, 1, -1]
    g, k = group_by_cell(c, np.zeros(3), 10.0, min_children=2, axes="xz")
    assert k == 2 and g.tolist() == [0, 0, 0, 1, 1, -1]
    g, k = group_by_cell(c, np.zeros(3), 10.0, eligible=np.array([1, 0, 1, 1, 1, 1], bool), min_children=1,
                         axes="xz")
    assert k == 3 and g.tolist() == [0, -1, 0, 1, 1, 2]


def test_objects_with_a_begin_or_a_parent_are_not_grouped():
    c = np.array([[1.0, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4]])
    r = np.full(4, 100.0)
    out, px = add_hlod({"cell": 10.0, "switch": 4.0, "window": 0.15, "min_children": 2}, np.zeros(3), c, r,
                       np.ones(4, np.float32), np.full((4, 4), 200, np.uint8), np.full(4, -1, np.int32),
                       begin=np.array([0.0, 0, 5, 0]), parent=np.array([-1, -1, -1, 1]))
    assert px.g == 1 and out["parent"].tolist() == [4, 4, -1, 1, -1]
    assert out["begin"][:4].tolist() == [0, 0, 5, 0] and out["begin"][4] == px.begin[0] > 0


def test_city_arrays_lods_and_meshes():
    s = _city(hlod=False, n=3000)
    m = s.meshes
    assert s.lod.shape == (3000, 2) and s.begin is None and s.parent is None
    assert np.array_equal(s.lod[:, 0], s.radii * 0.25) and np.array_equal(s.lod[:, 1], s.radii * 0.5)
    assert m.k == 9 and m.lods.shape == (9, 3)
    base = np.unique(m.ids)
    assert set(base.tolist()) <= {0, 3, 6}
    tris = np.diff(m.face_start)
    for b in (0, 3, 6):  # three meshes of decreasing detail per kind, band by band
        chain = [m.band_mesh(b, band) for band in range(3)]
        assert chain == [b, b + 1, b + 2] and tris[chain[0]] > tris[chain[1]] > tris[chain[2]]
    # each building's drawn half-extent is half its box's largest edge (the mesh box under its transform)
    scale = np.abs(m.transforms[:, :, :3]).sum(axis=2)
    assert np.allclose(scale.max(axis=1) / 2, s.sizes, rtol=1e-6)
    assert np.allclose(m.transforms[:, :, 3], s.centres)


def test_city_is_deterministic_and_round_trips(tmp_path):
    a, b = _city(seed=5), _city(seed=5)
    c = _city(seed=6)
    for key in ("centres", "radii", "sizes", "colours", "category", "begin", "lod", "parent"):
        assert np.array_equal(getattr(a, key), getattr(b, key)), key
    for key in ("vertices", "faces", "ids", "transforms", "lods"):
        assert np.array_equal(getattr(a.meshes, key), getattr(b.meshes, key)), key
    assert not np.array_equal(a.centres[:100], c.centres[:100])
    save_scene(a, tmp_path / "c.npz")
    r = load_scene(tmp_path / "c.npz")
    for key in ("centres", "radii", "sizes", "colours", "category", "begin", "lod", "parent"):
        assert np.array_equal(getattr(a, key), getattr(r, key)), key
        assert getattr(a, key).dtype == getattr(r, key).dtype, key
    for key in ("vertices", "faces", "vertex_start", "face_start", "ids", "transforms", "lods"):
        assert np.array_equal(getattr(a.meshes, key), getattr(r.meshes, key)), key
    assert r.recipe == a.recipe and r.n == a.n


def test_the_default_window_is_the_viewers_default_fade():
    from viewer.frame.options import SessionOptions

    assert DEFAULT_WINDOW == SessionOptions().fade


def test_recipe_checks_name_the_hlod_field():
    base = {"generator": "uniform", "n": 10}
    with pytest.raises(SceneError, match="hlod.cell"):
        check_recipe({**base, "hlod": {"cell": -1}})
    with pytest.raises(SceneError, match="hlod.bogus"):
        check_recipe({**base, "hlod": {"bogus": 1}})
    with pytest.raises(SceneError) as e:
        check_recipe({**base, "hlod": {}, "motion": {"share": 0.1}})
    assert e.value.field == "hlod"
    with pytest.raises(SceneError) as e:
        check_recipe({"generator": "city", "n": 10, "params": {"lod1": 0.6, "lod2": 0.5}})
    assert e.value.field == "params.lod2"
    assert "hlod" not in check_recipe(base)  # a recipe without it checks to what it did before


def test_hlod_on_any_generator_and_old_recipes_unchanged():
    r = {"generator": "clustered", "n": 2000, "seed": 2, "params": {"clusters": 4}}
    plain = generate_recipe(r)
    assert plain.begin is None and plain.lod is None and plain.parent is None and not plain.has_ranges
    h = generate_recipe({**r, "hlod": {"cell": 500.0}})
    n = plain.n
    assert h.n > n and np.array_equal(h.centres[:n], plain.centres) and np.array_equal(h.sizes[:n], plain.sizes)
    assert (h.parent[n:] == -1).all() and (h.begin[:n] == 0).all() and (h.begin[n:] > 0).all()


def test_the_new_stream_changes_no_other_stream():
    """build.py spawns six streams where it spawned five: the first five are the same."""
    a = np.random.SeedSequence(11).spawn(5)
    b = np.random.SeedSequence(11).spawn(6)
    assert all(np.array_equal(x.generate_state(4), y.generate_state(4)) for x, y in zip(a, b))


def test_city_golden_digest():
    """The city is built from portable arithmetic only: a seed gives these bytes on any machine."""
    import hashlib

    s = generate_recipe({"generator": "city", "n": 2000, "seed": 1, "world": 1000.0, "hlod": {"axes": "xz"}})
    h = hashlib.sha256()
    for a in (s.centres, s.radii, s.sizes, s.colours, s.category, s.begin, s.lod, s.parent, s.meshes.transforms,
              s.meshes.ids, s.meshes.lods):
        h.update(np.ascontiguousarray(a).tobytes())
    assert h.hexdigest()[:16] == GOLDEN_CITY


def test_scene_generate_with_hlod_from_the_command_line(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "t.npz"
    r = run_cli("scene", "generate", "terrain-100k", "--n", "3000", "--hlod", "400", "-o", out, "-q", cwd=root)
    assert r.returncode == 0, r.stderr
    s = load_scene(out)
    assert s.recipe["hlod"]["cell"] == 400.0 and s.n > 3000 and (s.parent[:3000] >= 3000).any()
    r = run_cli("scene", "generate", out, "--hlod", "400", "-o", tmp_path / "u.npz", cwd=root)
    assert r.returncode == 2 and "apply only to a .toml recipe" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("scene", "generate", "terrain-100k", "--hlod", "-5", cwd=root)
    assert r.returncode == 2 and "--hlod" in r.stderr
