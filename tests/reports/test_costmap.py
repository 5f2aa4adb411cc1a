"""``viewer map``: exact visible counts on a plane of camera positions (a grid of equal spheres whose
answer is counted by hand; a random scene against brute force), the CSV's rows, the PNGs, the budget
search's promise, the recipe's ``radius_scale``. The command's hostile inputs are one table in
tests/cli/test_map.py."""

from __future__ import annotations

import csv
import itertools
import re

import numpy as np
import pytest

from tests.support.cli import refused
from tests.support.cli import run_cli
from viewer.index import brute_query
from viewer.reports.costmap import budget_scale, plane_grid, read_csv, sample_plane, slice_values

SPACING, RADIUS, SIDE = 10.0, 10.0, 5  # the grid scene: SIDE**3 spheres SPACING apart, each of view radius RADIUS


def _save(tmp_path, name, centres, radii, world, origin):
    from viewer.scenes import save_scene
    from viewer.scenes.construct import scene_from_arrays

    scene = scene_from_arrays(centres, radii, world=world, origin=origin, name=name)
    return save_scene(scene, tmp_path / f"{name}.npz")


@pytest.fixture
def grid_scene(tmp_path):
    """Spheres at (10 i + 5, 10 j + 5, 10 k + 5), i, j, k in 0..4, each of view radius 10, in the box 0..50."""
    ijk = np.array(list(itertools.product(range(SIDE), repeat=3)), dtype=np.float64)
    centres = ijk * SPACING + SPACING / 2
    return _save(tmp_path, "grid", centres, np.full(len(centres), RADIUS), SIDE * SPACING, [25.0, 25.0, 25.0])


@pytest.fixture
def random_scene(tmp_path):
    rng = np.random.default_rng(7)
    n = 1500
    centres = np.concatenate([rng.normal(300.0, 40.0, (n // 2, 3)), rng.uniform(0.0, 1000.0, (n - n // 2, 3))])
    centres = np.clip(centres, 0.0, 1000.0)
    radii = np.exp(rng.uniform(np.log(5.0), np.log(200.0), n))
    return _save(tmp_path, "blobs", centres, radii, 1000.0, [500.0, 500.0, 500.0])


def test_the_grid_of_equal_spheres_gives_the_counts_reckoned_by_hand(tmp_path, capsys, grid_scene):
    """On the plane y = 25 through the middle layer of centres, sampled at 5 x 5 cell centres (exactly on the
    centres), a sample sees its own sphere, the two above and below (distance 10 = the radius: the surface
    counts), and each in-plane neighbour that exists: 7 inside, 6 on an edge, 5 in a corner."""
    out = tmp_path / "map"
    code, stdout, err = run_cli("map", grid_scene, "--plane", "y=25", "--res", SIDE, "--index", "octree",
                                   "brute", "-o", out)
    assert code == 0, err
    with open(out / "costmap.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["x", "y", "z", "visible", "octree_us", "brute_us"]
    assert len(rows) == SIDE * SIDE
    seen = {}
    for row in rows:
        i, k = (int((float(row[a]) - SPACING / 2) / SPACING) for a in ("x", "z"))
        assert (float(row["x"]), float(row["z"])) == (SPACING * i + 5, SPACING * k + 5) and float(row["y"]) == 25.0
        assert float(row["octree_us"]) > 0 and float(row["brute_us"]) > 0
        seen[i, k] = int(row["visible"])
    by_hand = {(i, k): 3 + (i > 0) + (i < SIDE - 1) + (k > 0) + (k < SIDE - 1)
               for i in range(SIDE) for k in range(SIDE)}
    assert seen == by_hand
    assert re.search(r"visible\s+min 5\s+median 6\s+max 7", stdout), stdout
    assert "machine:" in stdout and "octree" in stdout and "brute" in stdout


def test_every_sample_is_brute_forces_answer_and_the_pngs_are_images(tmp_path, capsys, random_scene):
    from PIL import Image

    out = tmp_path / "map"
    code, stdout, err = run_cli("map", random_scene, "--slices", "2", "--axis", "z", "--res", "9",
                                   "--index", "octree", "brute", "-o", out)
    assert code == 0, err
    cols = read_csv(out / "costmap.csv")
    assert len(cols["x"]) == 2 * 9 * 9 and set(cols["z"].tolist()) == {250.0, 750.0}
    from viewer.scenes import load_scene

    scene = load_scene(random_scene)
    pts = np.stack([cols["x"], cols["y"], cols["z"]], axis=1)
    expected = [len(brute_query(scene.centres, scene.radii, p)) for p in pts]
    assert cols["visible"].tolist() == expected
    assert max(expected) > 0 and min(expected) == 0  # the map has something to show, and blanks
    for name in ("visible", "octree_us", "brute_us"):
        with Image.open(out / f"{name}.png") as im:
            im.verify()
        with Image.open(out / f"{name}.png") as im:
            assert im.format == "PNG" and im.size[0] > 500 and im.size[1] > 300
            assert len(im.convert("RGB").getcolors(maxcolors=1 << 20)) > 20  # a heatmap, not a blank page
    assert sorted(p.name for p in out.iterdir()) == ["brute_us.png", "costmap.csv", "costmap.json", "octree_us.png",
                                                      "visible.png"]


def test_sample_plane_shapes_and_orientation(grid_scene):
    from viewer.index import make_index
    from viewer.scenes import load_scene

    scene = load_scene(grid_scene)
    lo, hi = scene.bounds
    us, vs, counts, times = sample_plane(make_index("octree", scene.centres, scene.radii), lo, hi, 1, 25.0, SIDE)
    assert us.shape == vs.shape == (SIDE,) and counts.shape == times.shape == (SIDE, SIDE)
    assert counts.dtype == np.int64 and times.dtype == np.float64 and (times > 0).all()
    _, _, pts = plane_grid(lo, hi, 1, 25.0, SIDE)
    for j, i in itertools.product(range(SIDE), repeat=2):  # counts[j, i] is the sample at (us[i], vs[j])
        assert pts[j * SIDE + i].tolist() == [us[i], 25.0, vs[j]]
        assert counts[j, i] == len(brute_query(scene.centres, scene.radii, pts[j * SIDE + i]))
    assert slice_values(lo, hi, 1, 2).tolist() == [12.5, 37.5]


def _peak(scene, pts, scale) -> int:
    return max(len(brute_query(scene.centres, scene.radii * scale, p)) for p in pts)


def test_the_budget_scale_keeps_within_the_budget_and_the_next_step_does_not(tmp_path, capsys, random_scene):
    from viewer.scenes import load_scene

    out = tmp_path / "map"
    budget = 40
    code, stdout, err = run_cli("map", random_scene, "--budget", budget, "--res", "7", "--index", "octree",
                                   "-o", out)
    assert code == 0, err
    m = re.search(r"largest view-distance scale (\S+) \(most visible at a sample (\d+)\); the next step up, (\S+), "
                  r"sees (\d+)", stdout)
    assert m, stdout
    scale, peak, nxt, next_peak = float(m[1]), int(m[2]), float(m[3]), int(m[4])
    assert scale < nxt <= scale * 1.0011  # the bisection's step: 0.1%
    scene = load_scene(random_scene)
    cols = read_csv(out / "costmap.csv")
    pts = np.stack([cols["x"], cols["y"], cols["z"]], axis=1)
    # the printed scale is the one mapped, and brute force agrees with both figures
    assert cols["visible"].max() == peak == _peak(scene, pts, scale) <= budget
    assert next_peak == _peak(scene, pts, nxt) > budget
    # the exact threshold: the smallest scale at which some sample sees budget + 1 objects lies between them
    d = np.sqrt(((pts[:, None, :] - scene.centres[None, :, :]) ** 2).sum(axis=2)) / scene.radii[None, :]
    threshold = np.sort(d, axis=1)[:, budget].min()
    assert scale <= threshold * (1 + 1e-12) and threshold <= nxt * (1 + 1e-12)


def test_budget_scale_grows_past_one_and_reports_each_scale(random_scene):
    from viewer.scenes import load_scene

    scene = load_scene(random_scene)
    lo, hi = scene.bounds
    _, _, pts = plane_grid(lo, hi, 1, 500.0, 5)
    tried = []
    found = budget_scale(scene.centres, scene.radii, pts, 600, log=lambda s, p: tried.append((s, p)))
    assert found.scale > 1.0 and found.builds == len(tried)
    assert found.peak == _peak(scene, pts, found.scale) <= 600 < found.next_peak == _peak(scene, pts, found.next_scale)
    with pytest.raises(ValueError, match="every scale"):
        budget_scale(scene.centres, scene.radii, pts, scene.n)


# --------------------------------------------------------------------------- the recipe's radius_scale

SMALL = 'generator = "clustered"\nn = 2000\nseed = 3\nworld = 1000.0\n'


def test_radius_scale_scales_only_the_view_distances(tmp_path, capsys):
    from viewer.scenes import load_scene

    plain, scaled = tmp_path / "plain.toml", tmp_path / "scaled.toml"
    plain.write_text(SMALL)
    scaled.write_text(SMALL + "radius_scale = 0.5\n")
    a, b = load_scene(plain), load_scene(scaled)
    assert np.array_equal(b.radii, a.radii * 0.5)
    assert np.array_equal(a.centres, b.centres) and np.array_equal(a.sizes, b.sizes)
    assert np.array_equal(a.colours, b.colours)
    assert "radius_scale" not in a.recipe and b.recipe["radius_scale"] == 0.5
    # the command line writes it into the file's recipe, so a recording of the file uses it
    out = tmp_path / "s.npz"
    assert run_cli("scene", "generate", plain, "--radius-scale", "0.5", "-o", out).returncode == 0, capsys.readouterr()
    c = load_scene(out)
    assert np.array_equal(c.radii, b.radii) and c.recipe["radius_scale"] == 0.5
    assert run_cli("scene", "info", out).returncode == 0
    assert "radius_scale" in capsys.readouterr().out


@pytest.mark.parametrize("value, words", [("0", "> 0"), ("-1", "> 0"), ('"big"', "number"), ("1e7", "<= 1e+06")])
def test_a_bad_radius_scale_in_a_recipe_is_refused_naming_it(tmp_path, capsys, value, words):
    p = tmp_path / "bad.toml"
    p.write_text(SMALL + f"radius_scale = {value}\n")
    code = run_cli("scene", "info", p).returncode
    refused(code, capsys.readouterr().err, "radius_scale", words, "bad.toml")


def test_a_bad_radius_scale_flag_is_refused(tmp_path, capsys):
    p = tmp_path / "mine.toml"
    p.write_text(SMALL)
    for bad in ("0", "-2", "x"):
        code, _, err = run_cli("scene", "generate", p, "--radius-scale", bad, "-o", tmp_path / "o.npz")
        refused(code, err, "--radius-scale")
    assert sorted(q.name for q in tmp_path.iterdir()) == ["mine.toml"]


def test_sampling_pulls_in_no_plotting_library_and_no_gl():
    """The window can import the sampling for a minimap: matplotlib comes only with the figures."""
    import subprocess
    import sys

    code = ("import sys, viewer.reports.costmap; "
            "print(sorted(m for m in ('matplotlib', 'moderngl', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr
