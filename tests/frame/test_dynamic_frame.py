"""The frame pipeline on a moving world: update stage (motion + move_many), exact visible sets, events,
the CSV's schema v2 columns, and ``viewer record`` / ``viewer soak`` on a dynamic recipe."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from viewer.scenes import generate_scene
from viewer.camera import FlyCamera
from viewer.frame.pipeline import FramePipeline
from viewer.index import brute_query
from viewer.recording import COLUMNS, SCHEMAS, Recorder, build_meta, read_run

from tests.support.cli import run_cli

DT = 1.0 / 60.0
MOTION = {"share": 0.3, "speed": 40.0, "radius_pulse": 0.2, "radius_period": 1.0}


def dynamic_scene(n=3000, **motion):
    return generate_scene("clustered", n, seed=5, world=600.0, clusters=3, spread_min=20.0, spread_max=40.0,
                          radius={"model": "log-uniform", "min": 5.0, "max": 60.0}, motion={**MOTION, **motion})


def poses(scene, frames=120):
    """A straight pass through the first cluster's centre, looking along +X."""
    c = scene.cluster_centres[0]
    xs = np.linspace(c[0] - 80.0, c[0] + 80.0, frames)
    return [(float(x), float(c[1]), float(c[2]), 90.0, 0.0) for x in xs]


@pytest.mark.parametrize("index", ["octree", "kdtree", "hashgrid"])
def test_every_frame_is_exact_and_the_events_replay_to_it(index):
    scene = dynamic_scene()
    p = FramePipeline(scene, index, indexes=[index])
    cam = FlyCamera(far=200.0)
    m = scene.motion.m
    replayed: set[int] = set()
    total = 0
    for k, pose in enumerate(poses(scene)):
        st = p.step(cam, DT, pose=pose)
        assert st.moved == m and st.update_ms > 0
        exact = brute_query(p.centres, p.radii, cam.position)  # the world as it is now
        vis = np.sort(p.ids[: st.visible])
        assert np.array_equal(vis, exact), k
        replayed = (replayed | set(p.events.entered.tolist())) - set(p.events.left.tolist())
        assert replayed == set(exact.tolist())
        assert (st.entered, st.left) == (p.events.n_entered, p.events.n_left)
        total += st.entered + st.left
    assert total > 0 and not np.array_equal(p.centres, scene.centres)
    assert np.array_equal(scene.centres, dynamic_scene().centres)  # the scene's own arrays are left alone


def test_the_worlds_step_is_its_own_stage_and_update_is_the_culling_modes():
    """``motion_ms`` times the movers' advance (every moving frame of the first view, 0 in a still frame and in
    a still world); ``update_ms`` the rest of the update stage; both inside ``frame_ms``."""
    from viewer.frame import stages

    assert [s.name for s in stages.STAGES][:2] == ["motion", "update"] and "motion_ms" in COLUMNS
    scene = dynamic_scene()
    p = FramePipeline(scene, "octree", indexes=["octree"])
    cam = FlyCamera(far=200.0)
    rows = [p.step(cam, DT, pose=pose) for pose in poses(scene, 20)]
    assert all(r.motion_ms > 0 and r.update_ms > 0 and r.motion_ms + r.update_ms <= r.frame_ms for r in rows)
    still = p.step(cam, 0.0, pose=poses(scene, 20)[-1])
    assert still.motion_ms == 0 and still.moved == 0
    q = FramePipeline(generate_scene("clustered", 2000, seed=5, world=600.0), "octree", indexes=["octree"])
    assert all(q.step(cam, DT, pose=pose).motion_ms == 0 for pose in poses(scene, 5))


def test_a_switched_to_index_catches_up_and_dt_zero_stands_still():
    scene = dynamic_scene()
    p = FramePipeline(scene, "octree", indexes=["octree", "brute"])
    cam = FlyCamera(far=200.0)
    ps = poses(scene, 60)
    for pose in ps[:20]:
        p.step(cam, DT, pose=pose)
    p.use_index("brute")  # built now, from the world as it is
    for pose in ps[20:40]:
        p.step(cam, DT, pose=pose)
    p.use_index("octree")  # 20 frames behind: one move_many brings it up to date
    st = p.step(cam, DT, pose=ps[40])
    assert np.array_equal(np.sort(p.ids[: st.visible]), brute_query(p.centres, p.radii, cam.position))
    before = p.centres.copy()
    st = p.step(cam, 0.0, pose=ps[41])
    assert st.moved == 0 and np.array_equal(p.centres, before)


def test_hysteresis_in_the_pipeline_cuts_churn_and_restart_starts_afresh():
    scene = dynamic_scene()
    cam = FlyCamera(far=200.0)
    churn = {}
    for h in (None, (0.25, True)):
        p = FramePipeline(scene, "octree", indexes=["octree"], hysteresis=h)
        rows = [p.step(cam, DT, pose=pose) for pose in poses(scene)]
        churn[h] = sum(r.entered + r.left for r in rows)
        assert all(len(p.events) >= 0 for _ in rows)
        if h is not None:
            assert p.hysteresis == "25%" and len(p.events) >= rows[-1].visible
    assert 0 < churn[(0.25, True)] < churn[None]
    p.restart()
    st = p.step(cam, DT, pose=poses(scene)[-1])
    assert st.frame == 0 and st.entered == len(p.events) and st.left == 0


def test_the_csv_has_schema_2_columns_and_version_1_still_reads(tmp_path):
    assert tuple(c.name for c in SCHEMAS[2][: len(SCHEMAS[1])]) == tuple(c.name for c in SCHEMAS[1])
    assert tuple(c.name for c in SCHEMAS[2][-2:]) == ("entered", "left") and {"moved", "update_ms"} <= set(COLUMNS)
    assert tuple(c.name for c in SCHEMAS[3][: len(SCHEMAS[2])]) == tuple(c.name for c in SCHEMAS[2])
    scene = dynamic_scene()
    p = FramePipeline(scene, "octree", indexes=["octree"])
    cam = FlyCamera(far=200.0)
    with Recorder(tmp_path / "d.csv", build_meta(scene=scene, index="octree", headless=True)) as rec:
        rows = [p.step(cam, DT, pose=pose) for pose in poses(scene, 40)]
        for st in rows:
            rec.append(st)
    run = read_run(tmp_path / "d.csv")
    assert run.version == max(SCHEMAS)
    for c in ("entered", "left", "moved"):
        assert run[c].tolist() == [getattr(r, c) for r in rows], c
    assert (run["moved"] == scene.motion.m).all() and (run["update_ms"] > 0).all()
    assert run["entered"].sum() - run["left"].sum() == rows[-1].visible
    # a version 1 recording (no entered / left) is still read
    v1 = [c.name for c in SCHEMAS[1]]
    with open(tmp_path / "old.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(v1)
        w.writerow([0 if c != "index" else "brute" for c in v1])
    meta = json.loads((tmp_path / "d.meta.json").read_text())
    meta["schema"] = {"name": meta["schema"]["name"], "version": 1, "columns": v1}
    (tmp_path / "old.meta.json").write_text(json.dumps(meta))
    old = read_run(tmp_path / "old.csv")
    assert old.version == 1 and len(old) == 1 and "entered" not in old.columns


def test_soak_checks_frames_and_reports_memory(tmp_path, capsys):
    from viewer.scenes import save_scene

    path = save_scene(dynamic_scene(), tmp_path / "dyn.npz")
    assert run_cli("soak", path, "--frames", "300", "--check-every", "10", "--report-every", "100", "--hysteresis",
                   "10%").returncode == 0
    out = capsys.readouterr()
    assert "300 frames" in out.out and "checked 30 frames" in out.out and "0 mismatches" in out.out
    assert "RSS" in out.out and "frame 300: RSS" in out.err


DYNAMIC_RECIPE = """\
generator = "clustered"
n = 3000
seed = 5
world = 600.0
[params]
clusters = 3
spread_min = 20.0
spread_max = 40.0
[radius]
model = "log-uniform"
min = 5.0
max = 60.0
[motion]
share = 0.3
speed = 40.0
radius_pulse = 0.2
radius_period = 1.0
"""

COUNTS = ("frame", "t", "cam_x", "cam_y", "cam_z", "objects", "candidates", "visible", "drawn", "moved", "entered",
          "left")


@pytest.mark.gl
def test_viewer_record_on_a_dynamic_recipe_gives_identical_counts_twice(tmp_path):
    recipe = tmp_path / "dyn.toml"
    recipe.write_text(DYNAMIC_RECIPE)
    runs = {}
    for name, extra in (("a", []), ("b", []), ("h", ["--hysteresis", "25%"])):
        assert run_cli("record", recipe, "--generated", "clusters", "--frames", "90", "--size", "64x48", "--index",
                       "octree", "brute", "-q", "-o", tmp_path / name, *extra).returncode == 0
        runs[name] = {i: read_run(tmp_path / name / f"{i}.csv") for i in ("octree", "brute")}
    a, b, h = runs["a"], runs["b"], runs["h"]
    for i in ("octree", "brute"):
        assert a[i].version == max(SCHEMAS) and (a[i]["moved"] == 900).all()
        for c in COUNTS:
            assert np.array_equal(a[i][c], b[i][c]), (i, c)
        assert a[i].meta["hysteresis"] == "off" and h[i].meta["hysteresis"] == "25%" and a[i].meta["moving"] == 900
    for c in ("visible", "drawn", "entered", "left"):  # each index has its own copy of the same world
        assert np.array_equal(a["octree"][c], a["brute"][c]), c
    churn = lambda r: int(r["entered"].sum() + r["left"].sum())  # noqa: E731
    assert churn(a["octree"]) > 0 and churn(h["octree"]) < churn(a["octree"])
    assert np.array_equal(h["octree"]["visible"], a["octree"]["visible"])  # hysteresis changes events, not queries


@pytest.mark.parametrize("index", ["octree", "coherent", "scan"])
def test_the_warm_up_moves_the_movers_a_step_and_back_leaving_the_world_and_answers_as_they_were(index):
    """The warm-up tells the mode of a real step of the movers, then moves them back: the world (centres, radii,
    the motion's clock) is bit for bit as before, and every frame after it is exact and the same as a pipeline's
    that only moves forward; the octree grew its boxes ahead of the movers then, not in the first timed frame."""
    scene = dynamic_scene()
    p = FramePipeline(scene, index, indexes=[index])
    before = (p.centres.copy(), p.radii.copy(), p.motion.t, p.motion.step)
    boxes = p.index._nq.copy() if index == "octree" else None  # each node's quantised boxes
    p.warm_up()
    assert np.array_equal(p.centres, before[0]) and np.array_equal(p.radii, before[1])
    assert (p.motion.t, p.motion.step) == before[2:]
    if index == "octree":  # the bulk build's tight boxes grown ahead of the movers
        assert not np.array_equal(p.index._nq, boxes)
    cam = FlyCamera(far=200.0)
    ref = FramePipeline(scene, "brute", indexes=["brute"])
    for k, pose in enumerate(poses(scene, 30)):
        p.step(cam, DT, pose=pose)
        ref.step(FlyCamera(far=200.0), DT, pose=pose)
        assert np.array_equal(p.centres, ref.centres), k
        exact = brute_query(p.centres, p.radii, cam.position)
        assert np.array_equal(np.sort(p.ids[: p.n_visible]), exact), k
