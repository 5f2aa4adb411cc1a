"""Many views per frame: :class:`viewer.frame.ViewSet` (GL-free), ``viewer record --views K`` and the split
screen. Every view's visible set is brute force's; a view's row equals a separate single-view frame's."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from viewer.frame import FramePipeline, ViewSet, camera_for_scene
from viewer.index import brute_query

from tests.support.cli import refused
from tests.support.cli import run_cli


def moving_scene(n=3000, seed=5):
    from viewer.scenes import generate_scene

    return generate_scene("clustered", n, seed=seed, world=600.0, clusters=3, spread_min=20.0, spread_max=40.0,
                          radius={"model": "log-uniform", "min": 10.0, "max": 120.0},
                          motion={"share": 0.3, "speed": 40.0, "radius_pulse": 0.2, "radius_period": 1.0})


def poses_at(scene, rng, k):
    """k poses near random objects, looking anywhere."""
    at = scene.centres[rng.integers(0, len(scene.radii), k)] + rng.normal(0, 5, (k, 3))
    return [(*p.tolist(), float(rng.uniform(-180, 180)), float(rng.uniform(-40, 40))) for p in at]


@pytest.mark.parametrize("name", ["octree", "scan", "hashgrid", "kdtree"])
def test_every_view_sees_what_brute_force_sees_in_a_moving_world(name, rng):
    scene = moving_scene()
    frame = FramePipeline(scene, name, hysteresis=(5.0, False))
    vs = ViewSet(frame, [camera_for_scene(scene) for _ in range(4)])
    for step in range(12):
        if step == 6:  # fewer views mid-flight, then more again
            vs.set_views(vs.cameras[:2])
        if step == 9:
            vs.set_views([*vs.cameras, camera_for_scene(scene), camera_for_scene(scene)])
        poses = poses_at(scene, rng, len(vs))
        rows = vs.step(1 / 30, poses=poses)
        assert [r.view for r in rows] == list(range(len(vs)))
        assert rows[0].moved > 0 and all(r.moved == 0 for r in rows[1:])  # the world moved once a frame
        for j, (r, v) in enumerate(zip(rows, vs.frames)):
            want = brute_query(frame.centres, frame.radii, np.array(poses[j][:3]))
            assert r.visible == want.size, (step, j)
            assert np.array_equal(np.sort(v.ids[: r.visible]), np.sort(want)), (step, j)
            assert (r.cam_x, r.cam_y, r.cam_z) == poses[j][:3]


def test_a_views_row_equals_a_single_view_frame_at_its_pose(rng):
    """The K rows of a frame equal K separate pipelines' rows at the same poses: visible, drawn, entered."""
    from viewer.scenes import generate_scene

    scene = generate_scene("clustered", 5000, seed=2, world=1000.0)
    cams = [camera_for_scene(scene) for _ in range(3)]
    vs = ViewSet(FramePipeline(scene, "octree"), cams)
    singles = [(FramePipeline(scene, "octree"), camera_for_scene(scene)) for _ in range(3)]
    for _ in range(5):
        poses = poses_at(scene, rng, 3)
        rows = vs.step(1 / 60, poses=poses)
        for j, (p, cam) in enumerate(singles):
            one = p.step(cam, 1 / 60, pose=poses[j])
            assert (rows[j].visible, rows[j].drawn, rows[j].entered, rows[j].left) == \
                (one.visible, one.drawn, one.entered, one.left), j


def test_record_views_writes_k_rows_a_frame_that_separate_frames_reproduce(tmp_path):
    out = tmp_path / "rec"
    assert run_cli("record", "clustered-100k", "--frames", "12", "--views", "4", "--size", "320x180", "--index",
                   "octree", "scan", "-o", out, "-q").returncode == 0
    from viewer.recording import read_run, read_runs
    from viewer.scenes import load_scene

    run = read_run(out / "octree.csv")
    assert run.version >= 5 and len(run) == 12 * 4
    assert sorted(set(run["view"].tolist())) == [0, 1, 2, 3]
    split = read_runs([out / "octree.csv"])
    assert [r.label.rsplit("view ", 1)[1] for r in split] == ["0", "1", "2", "3"]  # what plot and compare group by
    scene = load_scene("clustered-100k")
    rows = list(csv.DictReader(open(out / "scan.csv")))
    # each row again, alone: a pipeline of its own, the camera of one tile (160x90: the 2x2 grid of 320x180)
    frame = FramePipeline(scene, "scan")
    cam = camera_for_scene(scene, 160 / 90)
    for row in rows:
        pose = tuple(float(row[c]) for c in ("cam_x", "cam_y", "cam_z", "yaw", "pitch"))
        one = frame.step(cam, 0.0, pose=pose)
        assert (int(row["visible"]), int(row["drawn"])) == (one.visible, one.drawn), row["view"]
    assert len({(r["cam_x"], r["cam_z"]) for r in rows if r["frame"] == "5"}) == 4  # four different places


def test_record_refuses_a_bad_view_count(tmp_path, capsys):
    code, _, err = run_cli("record", "clustered-100k", "--views", "0", "-o", tmp_path / "o")
    refused(code, err, "--views", "1..16")


def test_split_screen_tiles_draw_every_view(tmp_path):
    """Four views in a 2x2 split: each tile is drawn by its own camera (the tiles differ), and a view count
    change between frames keeps the world and the index."""
    render = pytest.importorskip("viewer.render")
    from viewer.render.session import view_tiles

    assert view_tiles(2, 800, 400) == [(0, 0, 400, 400), (400, 0, 400, 400)]
    assert view_tiles(4, 800, 400) == [(0, 200, 400, 200), (400, 200, 400, 200), (0, 0, 400, 200), (400, 0, 400, 200)]
    from viewer.drivers.headless import HeadlessViewer
    from viewer.scenes import generate_scene

    scene = generate_scene("clustered", 4000, seed=2, world=600.0)
    try:
        # no fade: its dither pattern is laid on screen pixels, so it shifts with a tile's place
        hv = HeadlessViewer(scene, size=(320, 180), index="octree", hud=False, fade=0.0)
    except RuntimeError as exc:
        pytest.skip(str(exc))
    s = hv.session
    s.view_labels = False  # each tile bare, as a window of its size shows it
    # a separate session of one 160x90 view, on the same context
    one = render.ViewerSession(hv.ctx, render.offscreen_target(hv.ctx, (160, 90)), scene, index="octree", hud=False,
                               fade=0.0)
    s.set_views(4)
    x, y, z, yaw, pitch = camera_for_scene(scene).pose
    poses = [(x, y, z, yaw + 90.0 * j, pitch) for j in range(4)]  # the busiest spot, turning round
    rows = s.frame_views(0.0, poses=poses)
    img = s.image()
    tiles = [img[:90, :160], img[:90, 160:], img[90:, :160], img[90:, 160:]]
    assert [r.view for r in rows] == [0, 1, 2, 3] and sum(r.drawn > 0 for r in rows) >= 2
    for j, tile in enumerate(tiles):  # each tile is what a 160x90 window at that pose shows
        alone = one.frame(0.0, pose=poses[j])
        assert (alone.visible, alone.drawn) == (rows[j].visible, rows[j].drawn), j
        assert np.array_equal(tile, one.image()), j
    s.set_views(2)
    rows = s.frame_views(0.0, poses=poses[:2])
    assert [r.visible for r in rows] == [brute_query(scene.centres, scene.radii, np.array(p[:3])).size for p in poses[:2]]
    s.set_views(1)
    assert len(s.frame_views(0.0, poses=poses[:1])) == 1
    hv.close()


@pytest.mark.window
@pytest.mark.gl
def test_the_window_splits_and_changes_its_view_count_mid_flight(display, tmp_path):
    """`viewer view --views 2` records two rows a frame; N mid-take makes it four (then one): every row's
    visible count is brute force's at its camera, and view 0's poses are the take's path."""
    import os
    import time
    from pathlib import Path

    from viewer.recording import read_run
    from viewer.scenes import generate_scene, save_scene

    from tests.support.xwindow import open_window, reap, xdo

    scene = generate_scene("clustered", 3000, seed=11, clusters=5)
    scene_file = save_scene(scene, tmp_path / "small.npz")
    takes = tmp_path / "takes"
    env = dict(os.environ, DISPLAY=display)
    root = Path(__file__).resolve().parents[2]
    proc, wid = open_window(env, scene_file, "--index", "octree", "--fixed-dt", repr(1 / 60), "--views", "2",
                            "--record", str(takes), name="^viewer - clustered-3000", cwd=root, timeout=90)
    csv_path = takes / "take-1.csv"

    def views_per_frame_so_far() -> list[int]:
        """Rows per frame in the take's whole rows written so far (the recorder writes them every second)."""
        try:
            text = csv_path.read_text()
        except OSError:
            return []
        lines = text.split("\n")[:-1]  # the part after the last line end may be a row being written
        if len(lines) < 2:
            return []
        col = lines[0].split(",").index("frame")
        frames = [int(line.split(",")[col]) for line in lines[1:]]
        return np.bincount(frames).tolist()

    def wait_for(what, ok, timeout=60.0) -> None:
        """Poll the take until ``ok(views per frame)``: a loaded machine draws the first frames late."""
        end = time.monotonic() + timeout
        while not ok(views_per_frame_so_far()):
            assert proc.poll() is None and time.monotonic() < end, f"{what}: {views_per_frame_so_far()}"
            time.sleep(0.1)

    try:
        wait_for("a frame of 2 views", lambda v: len(v) >= 2 and v[0] == 2)
        xdo(env, "key", "n")  # 2 -> 4 views
        wait_for("a frame of 4 views", lambda v: 4 in v)
        xdo(env, "key", "n")  # 4 -> 1
        wait_for("a frame of 1 view", lambda v: len(v) > 1 and v[-2] == 1)
        xdo(env, "key", "Escape")
        out, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode == 0, err
    assert "views: 4" in err and "views: 1" in err
    run = read_run(takes / "take-1.csv")
    views_per_frame = np.bincount(run["frame"])
    assert views_per_frame[0] == 2 and 4 in views_per_frame and views_per_frame[-1] == 1
    assert list(np.flatnonzero(np.diff(views_per_frame))) != []  # the count changed mid-flight
    for k in range(len(run)):
        p = np.array([run["cam_x"][k], run["cam_y"][k], run["cam_z"][k]])
        assert run["visible"][k] == brute_query(scene.centres, scene.radii, p).size, k
