"""An index from outside the package, the whole route: the example plugin (examples/my_index) installed into a
folder of its own and found by its entry point, and loaded by a file spec; ``check-index`` passes it and fails each
of its two wrong variants naming the property; ``record``, ``bench`` and ``view --headless`` run it beside the
octree with the same visible counts."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.support.cli import ROOT, run_cli

EXAMPLE = ROOT / "examples" / "my_index"
#: the example's index by file spec: loaded by its path, nothing installed
FILE_SPEC = f"{EXAMPLE / 'my_index' / 'grid.py'}:UniformGrid"


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory):
    """The example installed as a user would (``pip install``), into a folder of its own: built from a copy, so
    the checkout gets no build folder, with this environment's setuptools (offline)."""
    tmp = tmp_path_factory.mktemp("plugin")
    src = shutil.copytree(EXAMPLE, tmp / "src", ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = tmp / "site"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                        "--no-index", "--target", str(target), str(src)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return target


@pytest.fixture
def installed(plugin_dir, monkeypatch):
    """The plugin on this process's path and on its children's (the bench's first builds)."""
    monkeypatch.syspath_prepend(str(plugin_dir))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(plugin_dir), str(ROOT)]))
    return plugin_dir


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    from viewer.scenes import generate_scene, save_scene

    return save_scene(generate_scene("clustered", 3000, seed=11, clusters=5),
                      tmp_path_factory.mktemp("scene") / "tiny.npz")


def test_the_plugin_is_found_by_its_entry_point_and_the_file_by_its_path(installed):
    from viewer.index import installed_plugins, parse_index_spec

    assert installed_plugins()["mygrid"] == "my_index.grid:UniformGrid"
    by_name, by_file = parse_index_spec("mygrid"), parse_index_spec(FILE_SPEC + ":cell_size=50")
    assert (by_name.name, by_name.cls.__module__, by_name.cls.__name__) == ("mygrid", "my_index.grid", "UniformGrid")
    assert by_file.cls.__name__ == "UniformGrid" and by_file.options == {"cell_size": 50.0}


def test_check_index_passes_the_example(installed):
    status, out, err = run_cli("check-index", "mygrid", "--examples", "10")  # every property, fewer random draws
    assert status == 0, out + err
    assert not re.search(r"^\s*FAIL\b", out, re.MULTILINE), out
    assert re.search(r"all \d+ properties hold", out), out


@pytest.mark.parametrize("variant, prop", [("SurfaceMissGrid", "surfaces_and_boundaries"),
                                           ("LostMoverGrid", "move_many_equals_single_moves")])
def test_check_index_fails_each_wrong_variant_naming_the_property(installed, variant, prop):
    """A camera exactly on a sphere's surface that misses it; a batch move that loses its last mover. Only the
    property each bug breaks first runs here (a whole run fails 27 and 33 of them, shrinking each: ~12 s)."""
    status, out, err = run_cli("check-index", f"my_index.wrong:{variant}", "--only", prop)
    assert status == 1, out + err
    failed = re.findall(r"^\s*FAIL\s+(\S+)", out, re.MULTILINE)
    assert prop in failed, out
    assert "missed ids" in out and f"--only '{prop}'" in out, out  # what went wrong, and how to replay it


@pytest.mark.gl
def test_record_runs_it_beside_the_octree_with_the_same_visible_counts(installed, scene_file, tmp_path):
    from viewer.recording import read_run

    out = tmp_path / "rec"
    status, _, err = run_cli("record", scene_file, "--index", "mygrid", "octree", "--frames", "20", "--size", "64x64",
                             "-o", out, "-q")
    assert status == 0, err
    mine, octree = read_run(out / "mygrid.csv"), read_run(out / "octree.csv")
    assert len(mine) == len(octree) == 20
    assert (mine.columns["visible"] == octree.columns["visible"]).all()
    assert mine.columns["visible"].sum() > 0  # the flight sees something: the equality says something


def test_bench_runs_it_by_file_spec_beside_the_octree_with_the_same_visible_counts(installed, scene_file, tmp_path):
    out = tmp_path / "bench"
    status, _, err = run_cli("bench", "--scene", scene_file, "--index", f"octree;{FILE_SPEC}", "--queries", "40",
                             "--rounds", "1", "--updates", "0", "--dynamic", "none", "--no-plots", "--out", out)
    assert status == 0, err
    with open(out / "bench.csv", newline="") as f:
        rows = {r["index"]: r for r in csv.DictReader(f)}
    assert {"octree", FILE_SPEC} <= set(rows)  # (beside the baselines, scan and brute), labelled by its spec
    assert float(rows[FILE_SPEC]["mean_visible"]) == float(rows["octree"]["mean_visible"]) > 0
    assert float(rows[FILE_SPEC]["build_first_s"]) > 0  # its first build in a fresh process found it too


@pytest.mark.gl
def test_view_headless_runs_it_with_the_octrees_counts(installed, scene_file):
    def counts(index: str) -> str:
        status, out, err = run_cli("view", scene_file, "--index", index, "--headless", "--frames", "5",
                                   "--size", "64x64")
        assert status == 0, err
        line = re.search(r"median counts: objects (\d+) .*visible (\d+)\s+drawn (\d+).*max drawn (\d+)", out)
        assert line, out
        return line.groups()

    assert counts("mygrid") == counts("octree")
