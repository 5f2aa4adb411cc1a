"""Scene generators and radius models: determinism, the statistical shape of each, portable maths."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

import viewer.scenes.build
from viewer.scenes import GENERATORS, RADIUS_MODELS, Scene, SceneError, generate_scene
from viewer.scenes import _portable as P
from viewer.index import brute_query

WORLD = 1000.0


def digest(s: Scene) -> str:
    h = hashlib.sha256()
    for a in (s.centres, s.radii, s.sizes, s.colours, s.category, s.cluster_centres, s.cluster_spread):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def inside(s: Scene) -> bool:
    lo, hi = s.bounds
    return bool(((s.centres >= lo) & (s.centres <= hi)).all())


def binomial_ok(count: int, n: int, p: float, sigmas: float = 5.0) -> bool:
    return abs(count - n * p) <= sigmas * np.sqrt(n * p * (1 - p)) + 1


# --------------------------------------------------------------------------- every generator


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_arrays_have_the_promised_shapes_and_dtypes(kind):
    s = generate_scene(kind, 3000, seed=2, world=WORLD)
    n = 3000
    assert s.n == n
    assert s.centres.shape == (n, 3) and s.centres.dtype == np.float64
    assert s.radii.shape == (n,) and s.radii.dtype == np.float64
    assert s.sizes.shape == (n,) and s.sizes.dtype == np.float32
    assert s.colours.shape == (n, 4) and s.colours.dtype == np.uint8
    assert s.category.shape == (n,) and s.category.dtype == np.int32
    k = s.cluster_centres.shape[0]
    assert s.cluster_centres.shape == (k, 3) and s.cluster_spread.shape == (k,)
    assert s.category.min() >= -1 and s.category.max() < max(k, 1)
    assert np.isfinite(s.centres).all() and np.isfinite(s.radii).all() and (s.radii >= 0).all()
    assert (s.sizes > 0).all()
    assert inside(s)
    assert s.world == WORLD and s.seed == 2 and s.recipe["generator"] == kind
    assert s.source is None and s.sha256 is None


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_same_seed_same_bytes_different_seed_different_data(kind):
    a = generate_scene(kind, 2000, seed=7, world=WORLD)
    b = generate_scene(kind, 2000, seed=7, world=WORLD)
    c = generate_scene(kind, 2000, seed=8, world=WORLD)
    assert digest(a) == digest(b)
    assert a.extras == b.extras
    assert not np.array_equal(a.centres, c.centres)
    assert not np.array_equal(a.radii, c.radii)


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_every_generator_documents_itself_and_its_params(kind):
    g = GENERATORS[kind]
    assert len(g.doc) > 20
    assert all(p.doc for p in g.params.values())


# Pinned digests: the same seed gives these bytes on any machine and any thread count (all
# randomness is PCG64's raw doubles and integers, all maths IEEE-exact; see scenes/_portable.py).
# A numpy release that changed Generator.random / integers streams would change them: that is
# worth knowing, since saved recipes would then give other scenes.
GOLDEN = {
    "clustered": "3fc2108d9574dfd5",
    "coincident": "495a31e3fdaf1b17",
    "diagonal": "1303780cf4d9bb74",
    "octaves": "b1d30d2387632d4a",
    "remote-cluster": "df5b30baa034022a",
    "uniform": "be95e70245ba6b6e",
}


@pytest.mark.parametrize("kind", sorted(GOLDEN))
def test_golden_digest(kind):
    s = generate_scene(kind, 1000, seed=3, world=WORLD)
    assert digest(s)[:16] == GOLDEN[kind]


def test_streams_are_independent():
    """Changing the radius model leaves positions alone; changing N leaves the cluster layout alone."""
    a = generate_scene("clustered", 2000, seed=1, world=WORLD, clusters=5)
    b = generate_scene("clustered", 2000, seed=1, world=WORLD, clusters=5, radius={"model": "constant", "value": 3})
    c = generate_scene("clustered", 5000, seed=1, world=WORLD, clusters=5)
    assert np.array_equal(a.centres, b.centres) and np.array_equal(a.category, b.category)
    assert (b.radii == 3.0).all()
    assert np.array_equal(a.cluster_centres, c.cluster_centres)
    assert np.array_equal(a.cluster_spread, c.cluster_spread)


def test_generation_in_chunks_reports_progress_and_stays_in_the_box(monkeypatch):
    monkeypatch.setattr(viewer.scenes.build, "CHUNK", 1000)
    seen = []
    s = generate_scene("diagonal", 3500, seed=1, world=WORLD, progress=lambda d, n: seen.append((d, n)))
    assert seen == [(1000, 3500), (2000, 3500), (3000, 3500), (3500, 3500)]
    assert inside(s)


def test_origin_moves_the_world_box():
    s = generate_scene("uniform", 2000, seed=1, world=100.0, origin=(1000.0, -50.0, 3.0))
    lo, hi = s.bounds
    assert lo.tolist() == [950.0, -100.0, -47.0] and hi.tolist() == [1050.0, 0.0, 53.0]
    assert inside(s)


# --------------------------------------------------------------------------- shapes


def test_uniform_fills_the_box_evenly():
    n = 40_000
    s = generate_scene("uniform", n, seed=4, world=WORLD)
    octant = (s.centres > 0).astype(int) @ np.array([1, 2, 4])
    counts = np.bincount(octant, minlength=8)
    assert all(binomial_ok(int(c), n, 1 / 8) for c in counts), counts
    assert (s.category == -1).all() and s.cluster_centres.shape == (0, 3)


def test_clustered_clusters_hold_their_share_and_spread():
    n = 50_000
    s = generate_scene("clustered", n, seed=5, world=WORLD, clusters=6, background=0.2, spread_min=5.0, spread_max=20.0)
    assert binomial_ok(int(np.count_nonzero(s.category == -1)), n, 0.2)
    counts = np.bincount(s.category[s.category >= 0], minlength=6)
    assert counts.size == 6 and counts.min() > 0
    # weights differ (log-uniform over weight_ratio): not all clusters equal
    assert counts.max() > 1.5 * counts.min()
    for k in range(6):
        pts = s.centres[s.category == k]
        assert np.allclose(pts.mean(axis=0), s.cluster_centres[k], atol=5 * s.cluster_spread[k] / np.sqrt(len(pts)) + 1e-9)
        assert np.allclose(pts.std(axis=0), s.cluster_spread[k], rtol=0.15)
        assert 5.0 <= s.cluster_spread[k] <= 20.0


def test_clustered_a_query_in_a_cluster_meets_hundreds():
    s = generate_scene("clustered", 100_000, seed=1, world=10_000.0, clusters=16, spread_min=10.0, spread_max=60.0)
    k = int(np.argmax(np.bincount(s.category[s.category >= 0])))
    assert len(brute_query(s.centres, s.radii, s.cluster_centres[k])) >= 200
    # ... while away from the clusters a query meets next to nothing
    far = np.array([s.bounds[0] + 1.0])[0]
    assert len(brute_query(s.centres, s.radii, far)) < 10


def test_diagonal_stays_close_to_the_diagonal_and_covers_it():
    n, jitter = 20_000, 4.0
    s = generate_scene("diagonal", n, seed=6, world=WORLD, jitter=jitter)
    lo, hi = (np.asarray(v) for v in (s.extras["diagonal"]["start"], s.extras["diagonal"]["end"]))
    assert lo.tolist() == s.bounds[0].tolist() and hi.tolist() == s.bounds[1].tolist()
    u = (hi - lo) / np.linalg.norm(hi - lo)
    rel = s.centres - lo
    t = rel @ u
    perp = np.linalg.norm(rel - t[:, None] * u, axis=1)
    # two perpendicular Gaussian axes: RMS distance jitter * sqrt(2)
    assert np.sqrt(np.mean(perp**2)) == pytest.approx(jitter * np.sqrt(2), rel=0.05)
    assert perp.max() < 8 * jitter
    hist = np.histogram(t / np.linalg.norm(hi - lo), bins=10, range=(0, 1))[0]
    assert hist.min() > 0.8 * n / 10


def test_remote_cluster_is_dense_remote_and_its_keep_out_is_safe():
    n = 40_000
    s = generate_scene("remote-cluster", n, seed=7, world=WORLD, share=0.3, spread=10.0)
    r = s.extras["remote"]
    centre = np.asarray(r["centre"])
    assert centre.tolist() == [400.0, 400.0, 400.0]  # 90% of the way to the hi corner
    assert np.array_equal(s.cluster_centres, centre[None, :]) and s.cluster_spread.tolist() == [10.0]
    members = s.category == 0
    assert binomial_ok(int(members.sum()), n, 0.3)
    d = np.linalg.norm(s.centres[members] - centre, axis=1)
    assert d.max() <= 4 * 10.0
    # no sphere of the cluster reaches a camera outside keep_out
    assert (d + s.radii[members]).max() <= r["keep_out"]
    assert r["keep_out"] == 4 * 10.0 + 1000.0
    # a camera just outside keep_out sees none of the cluster
    cam = centre - (r["keep_out"] + 1e-6) * np.ones(3) / np.sqrt(3)
    assert np.linalg.norm(cam - centre) > r["keep_out"]
    assert not (s.category[brute_query(s.centres, s.radii, cam)] == 0).any()


def test_octaves_radii_span_the_octaves_around_the_focus():
    n = 20_000
    s = generate_scene("octaves", n, seed=8, world=WORLD)
    assert s.recipe["radius"] == {"model": "log-uniform", "min": WORLD * 1e-6, "max": WORLD / 4}
    d = np.linalg.norm(s.centres, axis=1)
    assert (d <= 2.0 * s.radii * (1 + 1e-9)).all()
    octave = np.floor(np.log2(s.radii / s.radii.min())).astype(int)
    counts = np.bincount(octave)
    assert len(counts) >= 17 and counts[:-1].min() > 0.7 * n / np.log2(WORLD / 4 / (WORLD * 1e-6))
    # a query at the focus meets objects of every size
    hit = brute_query(s.centres, s.radii, (0.0, 0.0, 0.0))
    assert s.radii[hit].min() < 1e-2 and s.radii[hit].max() > 100


def test_octaves_shell_just_misses_the_focus():
    s = generate_scene("octaves", 5000, seed=9, world=WORLD, reach=1.01, profile="shell")
    d = np.linalg.norm(s.centres, axis=1)
    assert np.allclose(d, 1.01 * s.radii, rtol=1e-9)
    assert len(brute_query(s.centres, s.radii, (0.0, 0.0, 0.0))) == 0


def test_coincident_objects_share_exact_sites():
    s = generate_scene("coincident", 5000, seed=10, world=WORLD, sites=7)
    assert np.array_equal(s.centres, s.cluster_centres[s.category])
    assert len(np.unique(s.centres, axis=0)) == 7


def test_sites_beyond_a_million_are_refused_before_any_array_is_made():
    """Every site's centre is kept in the scene: 1e8 sites asked for a 3.2 GB file of a 1,000-object world."""
    with pytest.raises(SceneError, match=r"params\.sites.*<= 1e\+06"):
        generate_scene("coincident", 1000, seed=1, world=WORLD, sites=10**8)


# --------------------------------------------------------------------------- radius models


def test_radius_models_are_the_documented_set():
    assert set(RADIUS_MODELS) == {"constant", "uniform", "log-uniform", "heavy-tailed", "log-power", "classes"}
    root = Path(__file__).resolve().parents[2]
    row = next(ln for ln in (root / "scenes" / "README.md").read_text().splitlines() if ln.startswith("| `radius` |"))
    for name in RADIUS_MODELS:
        assert f"`{name}`" in row, name


def test_classes_radius_model_draws_its_three_distances_in_their_shares():
    r = _radii({"model": "classes", "small": 15, "medium": 150, "large": 500, "medium_share": 0.3,
                "large_share": 0.05})
    values, counts = np.unique(r, return_counts=True)
    assert values.tolist() == [15.0, 150.0, 500.0]
    assert np.allclose(counts / r.size, [0.65, 0.3, 0.05], atol=0.01)


def test_log_power_radius_model_has_the_heavy_tail_it_says():
    r = _radii({"model": "log-power", "min": 5, "max": 1000, "power": 4})
    assert r.min() >= 5 and r.max() <= 1000
    # r = 5 * 200**(u**4): P(r > 150) = 1 - (log(30) / log(200))**(1/4), about a tenth
    assert abs((r > 150).mean() - (1 - (np.log(30) / np.log(200)) ** 0.25)) < 0.01


def _radii(spec, n=40_000, seed=11):
    return generate_scene("uniform", n, seed=seed, world=WORLD, radius=spec).radii


def test_constant_radius():
    assert (_radii({"model": "constant", "value": 20}) == 20.0).all()


def test_uniform_radius():
    r = _radii({"model": "uniform", "min": 2, "max": 4})
    assert r.min() >= 2 and r.max() <= 4 and r.mean() == pytest.approx(3.0, abs=0.02)


def test_log_uniform_radius_has_as_many_per_octave():
    r = _radii({"model": "log-uniform", "min": 1, "max": 64})
    assert r.min() >= 1 and r.max() <= 64
    counts = np.bincount(np.minimum(np.floor(np.log2(r)).astype(int), 5), minlength=6)
    assert all(binomial_ok(int(c), r.size, 1 / 6) for c in counts), counts


def test_heavy_tailed_default_most_near_a_few_far():
    n = 100_000
    r = _radii({"model": "heavy-tailed"}, n=n)
    assert r.min() >= 5.0 and r.max() <= 1000.0
    far = r > 30.0
    assert binomial_ok(int(far.sum()), n, 0.02)
    assert np.median(r) == pytest.approx(np.sqrt(5 * 30), rel=0.03)
    # the tail is Pareto(1) truncated at 1000: P(r > 300 | tail) = (30/300 - 30/1000) / (1 - 30/1000)
    p300 = (30 / 300 - 30 / 1000) / (1 - 30 / 1000)
    assert binomial_ok(int((r > 300).sum()), int(far.sum()), p300)
    # heavy-tailed is the default
    assert np.array_equal(_radii(None, n=1000), _radii({"model": "heavy-tailed"}, n=1000))


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(kind="spiral"), "generator"),
        (dict(n=0), "n"),
        (dict(n=-3), "n"),
        (dict(n=10**9), "n"),
        (dict(n=2.5), "n"),
        (dict(seed=-1), "seed"),
        (dict(world=float("nan")), "world"),
        (dict(world=0.0), "world"),
        (dict(radius={"model": "constant", "value": -1.0}), "radius.value"),
        (dict(radius={"model": "log-uniform", "min": 9.0, "max": 3.0}), "radius.min"),
        (dict(radius={"model": "gamma"}), "radius.model"),
        (dict(radius={"value": 3}), "radius.model"),
        (dict(clusters=0), "params.clusters"),
        (dict(clustrs=4), "params.clustrs"),
        (dict(background=1.5), "params.background"),
        (dict(spread_min=50.0, spread_max=10.0), "params.spread_min"),
        (dict(look={"colour_by": "rainbow"}), "look.colour_by"),
    ],
)
def test_bad_arguments_raise_scene_error_naming_the_field(kwargs, field):
    args = dict(kind="clustered", n=100, seed=0, world=WORLD)
    args.update(kwargs)
    with pytest.raises(SceneError) as err:
        generate_scene(args.pop("kind"), args.pop("n"), **args)
    assert err.value.field == field
    assert f"'{field}'" in str(err.value)


def test_numpy_scalars_are_accepted():
    s = generate_scene("uniform", np.int64(50), seed=np.uint32(3), world=np.float32(10.0), origin=np.zeros(3))
    assert s.n == 50 and s.seed == 3


# --------------------------------------------------------------------------- portable maths


def test_portable_exp2_and_log2_match_numpy_to_an_ulp_or_two():
    rng = np.random.default_rng(0)
    x = rng.uniform(-60, 60, 100_000)
    assert np.max(np.abs(P.exp2(x) / np.exp2(x) - 1)) < 4e-16
    y = np.concatenate([rng.uniform(0.5, 2.0, 50_000), np.exp(rng.uniform(-700, 700, 50_000))])
    assert np.max(np.abs(P.log2(y) - np.log2(y)) / np.maximum(1.0, np.abs(np.log2(y)))) < 4e-16
    assert P.exp2(np.array([0.0, 1.0, -1.0, 10.0])).tolist() == [1.0, 2.0, 0.5, 1024.0]
    assert P.log2(np.array([1.0, 2.0, 0.5, 1024.0])).tolist() == [0.0, 1.0, -1.0, 10.0]


def test_portable_normals_are_standard_normal():
    z = P.standard_normal(np.random.default_rng(1), 200_001)
    assert z.size == 200_001
    assert abs(z.mean()) < 0.01 and z.std() == pytest.approx(1.0, abs=0.01)
    assert np.mean(np.abs(z) < 1.0) == pytest.approx(0.6827, abs=0.005)
    v = P.unit_vectors(np.random.default_rng(2), 1000)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)


def test_scenes_import_no_gl():
    import subprocess
    import sys

    code = (
        "import sys, viewer.scenes as scenes, viewer.commands.scene, viewer.drivers.scene_files, "
        "viewer.reports.scene_info; scenes.generate_scene('clustered', 100, clusters=3); "
        "print(','.join(m for m in ('moderngl', 'moderngl_window', 'pyglet', 'glcontext') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
