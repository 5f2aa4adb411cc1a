"""``viewer.results.load``: a bench run (version 2 and version 1), a recording, a sweep and a cost map each read back
into one kind of table, with its kind, format, version and provenance; anything else refused naming the path."""

from __future__ import annotations

import json

import pytest

from viewer.errors import UserError
from viewer.results import load

from tests.support.cli import run_cli
from tests.support.recordings import recording_with_meta


def validate(meta: dict, package: str, name: str) -> None:
    """``meta`` valid under the JSON Schema ``name`` the package ``package`` ships."""
    from importlib import resources

    import jsonschema

    schema = json.loads(resources.files(package).joinpath(name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(meta, schema)


def test_a_bench_run_and_its_version_1_file_read_back(tmp_path):
    out = tmp_path / "b"
    assert run_cli("bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--queries", "4", "--rounds", "1",
                   "--updates", "0", "--dynamic", "none", "--no-plots", "--no-first-build", "--out", out).returncode == 0
    r = load(out)
    assert (r.kind, r.format, r.version) == ("bench", "viewdist-bench", 2)
    assert r.provenance["commit"] and {row["index"] for row in r.rows} >= {"octree", "scan", "brute"}
    assert r.to_arrow().num_rows == len(r.rows)
    old = json.loads((out / "bench.json").read_text())
    for key in ("format", "format_version", "provenance"):
        del old[key]
    (tmp_path / "old.json").write_text(json.dumps(old))
    v1 = load(tmp_path / "old.json")
    assert (v1.kind, v1.version, v1.provenance) == ("bench", 1, {}) and v1.rows == r.rows


def test_a_recording_reads_back_frame_by_frame_and_its_metadata_validates(tmp_path):
    path = recording_with_meta(tmp_path)
    r = load(path)
    assert r.kind == "recording" and r.version >= 7 and len(r.rows) > 0 and "query_ms" in r.rows[0]
    assert r.provenance["commit"]
    validate(r.meta, "viewer.recording", "recording.schema.json")


def test_a_sweep_and_a_cost_map_read_back_as_their_rows(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "sweep.csv").write_text("task,index,query_median_us\nt1,octree,2.5\n")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "costmap.csv").write_text("x,y,z,visible\n0,0,0,3\n")
    s, m = load(tmp_path / "s"), load(tmp_path / "m" / "costmap.csv")
    assert (s.kind, s.rows) == ("sweep", [{"task": "t1", "index": "octree", "query_median_us": 2.5}])
    assert (m.kind, m.rows) == ("costmap", [{"x": 0, "y": 0, "z": 0, "visible": 3}])


@pytest.mark.parametrize("name", ["nothing-here", "notes.txt"])
def test_anything_else_is_refused_naming_the_path(tmp_path, name):
    if name.endswith(".txt"):
        (tmp_path / name).write_text("hello")
    with pytest.raises(UserError, match=name):
        load(tmp_path / name)


def test_a_cost_map_says_what_it_is_and_where_it_comes_from(tmp_path):
    scene = tmp_path / "small.toml"
    scene.write_text('generator = "uniform"\nn = 2000\nworld = 1000.0\n')
    assert run_cli("map", scene, "--res", "8", "-q", "-o", tmp_path / "map").returncode == 0
    r = load(tmp_path / "map")
    assert (r.kind, r.format, r.version) == ("costmap", "viewdist-costmap", 1)
    assert r.provenance["commit"] and r.meta["res"] == 8 and r.meta["indexes"] == ["octree", "scan"]
    assert len(r.rows) == 64 and {"visible", "octree_us"} <= set(r.rows[0])
    validate(r.meta, "viewer.reports", "costmap.schema.json")


def test_two_sweeps_compare_by_their_medians_and_say_they_are_untested(tmp_path):
    for name, us in (("a", 2.0), ("b", 3.0)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "sweep.csv").write_text(f"task,status,workload,index,query_median_us\nt1,ok,uniform-1k,octree,{us}\n")
    code, out, err = run_cli("compare", tmp_path / "a", tmp_path / "b", "--fail-if", "query:10%")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("t1"))
    assert line.split()[-1] == "1.500" and "untested" in out and "no significant slowdown can be found" in out
    code, out, err = run_cli("compare", tmp_path / "a", tmp_path / "b" / "sweep.csv", tmp_path / "a")
    assert code == 2 and "takes two" in err
