"""The import options (``--view-distance``, ``--columns``) are taken by every command that
imports a file on the fly (``view``, ``record``, ``soak``, ``scene info``; declared once,
:func:`viewer.commands._args.add_import_options`), change what the command does (the counts printed or
recorded, the radii reported), and are refused, naming the flag, for a recipe or a ``.npz``. Every case runs
the real command (in this process)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import run_cli
from tests.support.gltf_writer import build, write_glb

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 580.0  # the level of the issue: 580 units wide, flat


def flat_level(path: Path, n: int = 300, width: float = WIDTH, seed: int = 1) -> Path:
    """A flat glTF level ``width`` wide: ``n`` cube nodes standing on the ground, edges 6..120 (log-uniform),
    four of them on the corners so that the centres span exactly ``width`` in x and z."""
    doc, blob = build()
    rng = np.random.default_rng(seed)
    half = width / 2
    xz = rng.uniform(-half, half, (n, 2))
    xz[:4] = [[-half, -half], [half, half], [-half, half], [half, -half]]
    scale = np.exp(rng.uniform(np.log(3.0), np.log(60.0), n))  # the cube is 2 wide: edges 6..120
    doc["nodes"] = [{"mesh": 0, "translation": [float(x), 0.0, float(z)], "scale": [float(k)] * 3}
                    for (x, z), k in zip(xz, scale)]
    doc["scenes"] = [{"nodes": list(range(n))}]
    doc.pop("extensionsUsed", None)
    return write_glb(path, doc, blob)


def visible_counts(centres: np.ndarray, radius: float, cams: np.ndarray) -> list[int]:
    """Brute force: how many objects lie within ``radius`` of each camera position."""
    d = np.linalg.norm(centres[None, :, :] - cams[:, None, :], axis=2)
    return (d <= radius).sum(axis=1).tolist()


@pytest.fixture(scope="module")
def level(tmp_path_factory) -> Path:
    return flat_level(tmp_path_factory.mktemp("level") / "level.glb")


def _centres(level: Path) -> np.ndarray:
    from viewer.scenes import load_scene

    return load_scene(level).centres


def test_view_takes_the_rule_and_counts_by_it(level):
    """``viewer view level.glb --headless --frames 3 --view-distance constant:value=500`` (was: unrecognized
    arguments): the import line names the rule, and the visible count it prints is brute force's with
    radius 500 from the pose."""
    proc = run_cli("view", level.name, "--headless", "--frames", "3", "--view-distance", "constant:value=500",
                  "--index", "brute", "--size", "64x64", "--pose", "0,10,600,0,0", cwd=level.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "imported level.glb: 300 objects, 1 mesh (gltf), view distance: constant 500 (--view-distance " \
           "constant:value=500): radii 500 (all)" in proc.stderr
    want = visible_counts(_centres(level), 500.0, np.array([[0.0, 10.0, 600.0]]))[0]
    assert 0 < want < 300  # the rule decides it: the default's radii (at most 290) would see fewer
    assert f" visible {want} " in proc.stdout, proc.stdout


def test_record_records_counts_by_the_rule_and_keeps_it_in_the_metadata(level, tmp_path):
    """``viewer record level.glb --view-distance constant:value=500``: every recorded frame's visible count is
    brute force's with radius 500 from that frame's camera, and the metadata keeps the rule."""
    out = tmp_path / "rec"
    proc = run_cli("record", level, "-o", out, "--index", "brute", "--frames", "3", "--size", "64x64",
                  "--view-distance", "constant:value=500", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "view distance: constant 500 (--view-distance constant:value=500)" in proc.stderr
    with open(out / "brute.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3
    cams = np.array([[float(r["cam_x"]), float(r["cam_y"]), float(r["cam_z"])] for r in rows])
    assert [int(r["visible"]) for r in rows] == visible_counts(_centres(level), 500.0, cams)
    meta = json.loads((out / "brute.meta.json").read_text())
    assert meta["scene"]["recipe"]["import"]["view_distance"] == "constant:value=500"


def test_scene_info_reports_the_rules_radii(level, tmp_path):
    """``viewer scene info level.glb --view-distance constant:value=500``: every radius 500; ``--columns`` maps
    a table's columns there too."""
    proc = run_cli("scene", "info", level, "--view-distance", "constant:value=500", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["radii"]["min"] == d["radii"]["max"] == 500.0
    assert "view_distance" not in proc.stderr  # info prints its own description, not the import line
    src = tmp_path / "p.csv"
    src.write_text("px,py,pz\n0,0,0\n10,0,0\n0,40,0\n")
    proc = run_cli("scene", "info", src, "--columns", "x=px,y=py,z=pz", "--view-distance",
                  "constant:value=7", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "radii      min 7  p1 7" in proc.stdout and "columns {'x': 'px'" in proc.stdout, proc.stdout


def test_soak_takes_the_rule(level, tmp_path):
    """``viewer soak level.glb --view-distance constant:value=500``: the flag is taken and the import uses it
    (the import line); an imported file has nothing moving, which soak says in one message (exit 2)."""
    proc = run_cli("soak", level, "--frames", "3", "--view-distance", "constant:value=500", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith(f"imported {level}: 300 objects") and "constant 500" in lines[0]
    assert len(lines) == 2 and "an imported file has no moving objects" in lines[1] and "Traceback" not in proc.stderr


@pytest.mark.parametrize("argv, flag, kind", [
    (["view", "clustered-100k", "--headless", "--frames", "3", "--view-distance", "constant:value=500"],
     "--view-distance", "a recipe (.toml)"),
    (["record", "uniform-100k", "-o", "rec", "--columns", "x=a"], "--columns", "a recipe (.toml)"),
    (["scene", "info", "NPZ", "--view-distance", "constant:value=500"], "--view-distance", "scene data (.npz)"),
])
def test_refused_for_a_recipe_or_npz_naming_the_flag(level, tmp_path, argv, flag, kind):
    """The options with a recipe or a ``.npz``: exit 2, one line naming the scene and the flag, nothing
    written (before a recipe is generated)."""
    npz = tmp_path / "level.npz"
    assert run_cli("scene", "import", level, "-o", npz, cwd=tmp_path).returncode == 0
    proc = run_cli(*[str(npz) if a == "NPZ" else a for a in argv], cwd=tmp_path)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("loading ")]
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{flag} applies only to a file imported on the fly" in lines[0] and kind in lines[0], lines[0]
    assert sorted(os.listdir(tmp_path)) == ["level.npz"]


def test_a_bad_rule_on_view_is_one_message(level, tmp_path):
    """``viewer view level.glb --view-distance constant``: exit 2, one message naming the flag."""
    proc = run_cli("view", level, "--headless", "--frames", "3", "--view-distance", "constant", cwd=tmp_path)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("loading ")]
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "field '--view-distance'" in lines[0] and "write constant:value=DISTANCE" in lines[0], lines[0]


def test_bench_takes_the_rule_for_a_scene_file_and_refuses_it_for_generators(level, tmp_path):
    """bench runs an imported file with the given view distance (a larger one: more visible per query), and
    refuses the option where it would be ignored: a generator's radii come from --radius."""
    visible = {}
    for value in (5, 500):
        out = tmp_path / f"b{value}"
        r = run_cli("bench", "--scene", level, "--index", "octree", "--queries", 20, "--rounds", 1,
                   "--dynamic", "none", "--updates", 0, "--no-first-build", "--no-plots",
                   "--view-distance", f"constant:value={value}", "--out", out, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
        rows = [row for row in csv.DictReader((out / "bench.csv").open()) if row["index"] == "octree"]
        visible[value] = float(rows[0]["mean_visible"])
    assert visible[500] > visible[5] >= 0
    r = run_cli("bench", "--scene", "uniform", "--n", "1e3", "--view-distance", "constant:value=5", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--view-distance" in r.stderr, r.stderr
