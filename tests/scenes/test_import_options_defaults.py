"""The importer's defaults and what it prints: the default view distances of an
imported glTF come from the file's own scale and the import line says which rule and why; ranges print
with the same significant digits at both ends; ``scene generate --n`` renames a scene named for its N;
``scene info`` reports sizes as the README defines them (the largest box edge). Every case runs the real
command (in this process)."""

from __future__ import annotations

import json
import re

import numpy as np

from tests.cli.test_import_options import WIDTH, flat_level
from tests.support.cli import run_cli
from viewer.scenes import load_scene


def test_a_flat_580_wide_level_gets_radii_well_below_its_extent(tmp_path):
    """The default is no longer size:factor=200 (radii 1,200-24,000 in a level 580 wide: every object in
    view from everywhere): the median object is seen from an eighth of the extent, none from further than
    half of it, and the import line names the rule and why."""
    level = flat_level(tmp_path / "level.glb")
    proc = run_cli("scene", "import", "level.glb", "-o", "level.npz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip()
    assert "view distance: size x 2.6, at most 290 (default, from the file's 580-unit extent: the median object " \
           "seen from an eighth of it; --view-distance to change): radii " in line, line
    s = load_scene(tmp_path / "level.npz")
    assert s.radii.max() <= WIDTH / 2 and np.median(s.radii) <= WIDTH / 6
    assert s.recipe["import"]["view_distance"] == "size:factor=2.6,max=290"
    # the rule the line names is the one applied, and retyping it gives the same scene
    edges = 2.0 * load_scene(level, import_options={"view_distance": "size:factor=200"}).sizes.astype(np.float64)
    np.testing.assert_allclose(s.radii, np.minimum(2.6 * edges, 290.0))
    proc = run_cli("scene", "import", "level.glb", "-o", "again.npz", "--view-distance",
                  "size:factor=2.6,max=290", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "size x 2.6, at most 290 (--view-distance size:factor=2.6,max=290)" in proc.stdout
    np.testing.assert_array_equal(load_scene(tmp_path / "again.npz").radii, s.radii)
    # the former default, for the record: every radius beyond the level's width
    old = load_scene(level, import_options={"view_distance": "size:factor=200"})
    assert old.radii.min() >= 1200 - 1e-6


def test_the_forest_example_gets_a_default_that_culls(tmp_path):
    """``python -m viewer.scenes.forest``'s 2000-unit level: size x 34, radii about an eighth of it; a camera
    in the forest sees a few percent of the 22,600 objects (size:factor=200: 70-90%)."""
    from viewer.scenes.forest import main as write_forest

    write_forest([str(tmp_path / "forest.glb")])
    proc = run_cli("scene", "import", "forest.glb", "-o", "forest.npz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "view distance: size x 34 (default, from the file's 2000-unit extent: the median object seen from an " \
           "eighth of it; --view-distance to change)" in proc.stdout, proc.stdout
    s = load_scene(tmp_path / "forest.npz")
    d = np.linalg.norm(s.centres - np.array([500.0, 10.0, 500.0]), axis=1)
    assert (d <= s.radii).sum() < 0.1 * s.n


def test_ranges_print_the_same_digits_at_both_ends(tmp_path):
    """Was ``263..262.6 (median 263)`` and ``5e+03..5000``: equal radii print once, a range in plain
    notation with the same significant digits at both ends (``scene import`` and ``scene generate``)."""
    flat_level(tmp_path / "level.glb")
    proc = run_cli("scene", "import", "level.glb", "-o", "a.npz", "--view-distance", "constant:value=262.6",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "radii 262.6 (all);" in proc.stdout, proc.stdout
    proc = run_cli("scene", "import", "level.glb", "-o", "b.npz", "--view-distance",
                  "table:10=5000,1000=20000", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"radii 5000\.\.20000 \(median (5000|20000)\);", proc.stdout), proc.stdout
    assert "e+" not in proc.stdout
    (tmp_path / "c.toml").write_text('generator = "uniform"\nn = 500\nworld = 100.0\n'
                                     '[radius]\nmodel = "constant"\nvalue = 5000\n')
    proc = run_cli("scene", "generate", "c.toml", "-o", "c.npz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "radii 5000 (all)," in proc.stdout and "e+" not in proc.stdout, proc.stdout


def test_generate_with_another_n_names_the_scene_for_it(tmp_path):
    """``viewer scene generate uniform-100k --n 2e3`` makes uniform-2k and says it was renamed; without -o
    the file is named for the new N too; a name that does not spell N is kept."""
    proc = run_cli("scene", "generate", "uniform-100k", "--n", "2e3", "-o", "u.npz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wrote u.npz: uniform-2k (renamed from uniform-100k for --n 2,000), 2,000 objects")
    assert load_scene(tmp_path / "u.npz").name == "uniform-2k"
    (tmp_path / "tiny-1k.toml").write_text('generator = "uniform"\nn = 1000\nworld = 100.0\n')
    proc = run_cli("scene", "generate", "tiny-1k.toml", "--n", "3000", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wrote tiny-3k.npz: tiny-3k (renamed from tiny-1k for --n 3,000)"), proc.stdout
    assert not (tmp_path / "tiny-1k.npz").exists()
    (tmp_path / "mine.toml").write_text('generator = "uniform"\nn = 1000\nworld = 100.0\n')
    proc = run_cli("scene", "generate", "mine.toml", "--n", "3000", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("wrote mine.npz: mine, 3,000 objects"), proc.stdout


def test_scene_info_sizes_are_the_largest_box_edge(tmp_path):
    """The README: an object's size is its box's largest edge. ``scene info`` reported half of it (the drawn
    half-extent); it now reports the edge and says so: the level's cubes are 6..120 units wide."""
    level = flat_level(tmp_path / "level.glb")
    edges = 2.0 * load_scene(level).sizes.astype(np.float64)
    proc = run_cli("scene", "info", "level.glb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("size "))
    lo, hi = (float(x) for x in re.search(r"largest box edge (\S+) \.\. (\S+) ", line).groups())
    assert lo == float(f"{edges.min():.4g}") and hi == float(f"{edges.max():.4g}") and 6 <= lo < hi <= 120
    assert "twice the drawn half-extent" in line
    proc = run_cli("scene", "info", "level.glb", "--json", cwd=tmp_path)
    d = json.loads(proc.stdout)["sizes"]
    assert d["min"] == edges.min() and d["max"] == edges.max() and d["measure"].startswith("largest box edge")
