"""``viewer record``: headless replay (EGL), determinism, one CSV per index, clean failures, SIGTERM."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from viewer.cli import main
from viewer.recording import COLUMNS, meta_path_for, read_run

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gl

POSE_AND_COUNTS = ("frame", "t", "dt", "cam_x", "cam_y", "cam_z", "yaw", "pitch", "objects", "candidates", "visible",
                   "drawn", "nodes_visited", "max_nodes_per_level")


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    from viewer.scenes import generate_scene, save_scene

    d = tmp_path_factory.mktemp("scene")
    return save_scene(generate_scene("clustered", 3000, seed=11, clusters=5), d / "tiny.npz")


def _indexes():
    from viewer.index import INDEXES

    return [n for n in ("brute", "octree") if n in INDEXES]


def _replay_once(scene, out):
    """Replay 60 frames of the generated path; returns {index: [(visible ids digest, drawn ids digest)]}."""
    from viewer.paths import generated_path
    from viewer.drivers.replay import replay

    seen: dict[str, list] = {}

    def on_frame(name, k, session, st):
        vis = np.sort(session.visible_ids())
        drawn = np.sort(session.drawn_ids())
        seen.setdefault(name, []).append((hashlib.sha1(vis.tobytes()).hexdigest(),
                                          hashlib.sha1(drawn.tobytes()).hexdigest(), len(vis)))

    samples = generated_path(scene, "clusters").sample(frames=60)
    paths = replay(scene, samples, _indexes(), out, size=(160, 90), progress=False, on_frame=on_frame)
    return seen, paths


def test_two_replays_see_the_same_poses_and_visible_sets(scene_file, tmp_path):
    from viewer.scenes import load_scene

    scene = load_scene(scene_file)
    a, pa = _replay_once(scene, tmp_path / "a")
    b, pb = _replay_once(scene, tmp_path / "b")
    assert a == b
    names = _indexes()
    assert sorted(pa) == sorted(names)
    # something is actually seen along the way, and every index sees the same sets
    assert any(n > 0 for _, _, n in a[names[0]])
    for name in names[1:]:
        assert [x[:2] for x in a[name]] == [x[:2] for x in a[names[0]]]
    for name in names:
        ra, rb = read_run(pa[name]), read_run(pb[name])
        assert len(ra) == len(rb) == 60
        for c in POSE_AND_COUNTS:
            assert np.array_equal(ra[c], rb[c]), c
        assert (ra["index"] == name).all()


def test_interleaved_indexes_follow_each_other_equally_often(scene_file, tmp_path):
    """Three indexes take their turns in balanced orders: each renders right after each other one
    equally often (a rotation would keep each behind the same predecessor)."""
    from collections import Counter

    from viewer.paths import generated_path
    from viewer.drivers.replay import replay
    from viewer.scenes import load_scene

    turns: list[str] = []
    samples = generated_path(load_scene(scene_file), "clusters").sample(frames=6)
    replay(load_scene(scene_file), samples, ["brute", "octree", "scan"], tmp_path / "r", size=(32, 18),
           progress=False, on_frame=lambda name, k, s, st: turns.append(name))
    frames = [turns[i : i + 3] for i in range(0, 18, 3)]
    assert all(sorted(f) == ["brute", "octree", "scan"] for f in frames)
    after = Counter((f[i], f[i + 1]) for f in frames for i in range(2))
    assert len(after) == 6 and set(after.values()) == {2}


def test_record_cli_writes_one_csv_and_metadata_per_index(scene_file, tmp_path, capsys):
    out = tmp_path / "runs"
    names = _indexes()
    rc = main(["record", str(scene_file), "--frames", "25", "--size", "128x72", "-o", str(out),
               "--save-path", str(tmp_path / "path.toml"), *sum((["--index", n] for n in names), [])])
    assert rc == 0
    cap = capsys.readouterr()
    assert "100.0%" in cap.err and "ETA" in cap.err
    assert "frames that draw something: " in cap.out and "every index" in cap.out
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{n}.csv" for n in names] + [f"{n}.meta.json" for n in names])
    for n in names:
        run = read_run(out / f"{n}.csv")
        assert len(run) == 25 and list(run.columns) == list(COLUMNS)
        meta = json.loads(meta_path_for(out / f"{n}.csv").read_text())
        assert meta["complete"] is True and meta["frames"] == 25
        assert meta["index"]["name"] == n and meta["window"] == {"size": [128, 72], "headless": True, "vsync": False}
        assert meta["scene"]["sha256"] == hashlib.sha256(Path(scene_file).read_bytes()).hexdigest()
        assert meta["scene"]["n"] == 3000 and meta["scene"]["seed"] == 11
        assert meta["gl"]["renderer"] and meta["gl"]["version"]
        assert meta["path"]["generated"] == "flythrough" and meta["path"]["frames"] == 25
        assert meta["interleaved"] == names
    # the saved path replays to the same poses
    rc = main(["record", str(scene_file), "--path", str(tmp_path / "path.toml"), "--frames", "25", "--size", "128x72",
               "-o", str(tmp_path / "again"), "--index", names[0], "-q"])
    assert rc == 0
    a, b = read_run(out / f"{names[0]}.csv"), read_run(tmp_path / "again" / f"{names[0]}.csv")
    for c in ("cam_x", "cam_y", "cam_z", "yaw", "pitch", "visible"):
        assert np.array_equal(a[c], b[c]), c
    meta = json.loads(meta_path_for(tmp_path / "again" / f"{names[0]}.csv").read_text())
    assert meta["path"]["sha256"] == hashlib.sha256((tmp_path / "path.toml").read_bytes()).hexdigest()


def test_save_path_into_the_new_recording_directory(scene_file, tmp_path):
    """``-o NEW --save-path NEW/path.toml``: the path is saved beside the recording, the directory made for
    both; a deeper directory that -o does not make is still refused, before anything is written."""
    from viewer.paths import load_path

    out = tmp_path / "new"
    assert main(["record", str(scene_file), "--frames", "4", "--size", "64x64", "-o", str(out), "-q",
                 "--save-path", str(out / "path.toml"), "--index", "octree"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["octree.csv", "octree.meta.json", "path.toml"]
    assert len(load_path(out / "path.toml")) >= 2
    other = tmp_path / "other"
    assert main(["record", str(scene_file), "--frames", "4", "-o", str(other), "-q",
                 "--save-path", str(other / "sub" / "path.toml"), "--index", "octree"]) == 2
    assert not other.exists()


@pytest.mark.parametrize(
    "case, path_text, message",
    [
        ("missing", None, "no such camera path file"),
        ("empty", "", "empty file"),
        ("malformed", "[[keyframe]\n", "not valid TOML"),
        ("one keyframe", "[[keyframe]]\nt = 0\nposition = [0, 0, 0]\nyaw = 0\npitch = 0\n", "at least 2 keyframes"),
    ],
)
def test_bad_path_files_exit_2_and_write_nothing(scene_file, tmp_path, capsys, case, path_text, message):
    p = tmp_path / "p.toml"
    if path_text is not None:
        p.write_text(path_text)
    out = tmp_path / "out"
    assert main(["record", str(scene_file), "--path", str(p), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(p) in err and "Traceback" not in err
    assert err.count("\n") == 1  # one clear message
    assert not out.exists()


def test_unwritable_output_and_unknown_index_exit_2(scene_file, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["record", str(scene_file), "-o", str(blocker / "runs")]) == 2
    assert "cannot create the output directory" in capsys.readouterr().err
    assert main(["record", str(scene_file), "-o", str(blocker)]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert main(["record", str(scene_file), "--index", "nosuch", "-o", str(tmp_path / "o")]) == 2
    assert "unknown index 'nosuch'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    bad_scene = tmp_path / "bad.npz"
    bad_scene.write_bytes(b"not a zip")
    assert main(["record", str(bad_scene), "-o", str(tmp_path / "o")]) == 2
    assert "bad.npz" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    bad_scene.unlink()
    with pytest.raises(SystemExit) as exc:
        main(["record", str(scene_file), "--size", "big", "-o", str(tmp_path / "o")])
    assert exc.value.code == 2
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_sigterm_mid_recording_leaves_complete_rows(scene_file, tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "viewer", "record", str(scene_file), "--frames", "200000", "--size", "64x64",
           "--index", _indexes()[0], "-o", str(out), "-q"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    csv_path = out / f"{_indexes()[0]}.csv"
    end = time.monotonic() + 120
    while time.monotonic() < end:
        if csv_path.exists() and csv_path.read_bytes().count(b"\n") > 300:
            break
        if proc.poll() is not None:
            pytest.fail(f"record ended early: {proc.stderr.read().decode()}")
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("no rows were recorded")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    raw = csv_path.read_bytes()
    assert raw.endswith(b"\n")
    run = read_run(csv_path)
    assert len(run) >= 300 and np.array_equal(run["frame"], np.arange(len(run)))
    assert all(line.count(b",") == len(COLUMNS) - 1 for line in raw.splitlines())
    meta = json.loads(meta_path_for(csv_path).read_text())
    assert meta["ended"] == "SIGTERM" and meta["complete"] is False and meta["frames"] == len(run)


def test_no_collection_falls_inside_a_recorded_frame(scene_file, tmp_path, monkeypatch):
    """The cyclic collector stays out of timed frames (viewer.timing.heap.FrameCollector): in a record, every
    collection starts between two frames, the young generations are collected there every COLLECT_EVERY frames,
    and the automatic collector is on again afterwards."""
    import gc

    from viewer.drivers.replay import replay
    from viewer.timing import heap
    from viewer.paths import generated_path
    from viewer.render.session import ViewerSession
    from viewer.scenes import load_scene

    monkeypatch.setattr(heap, "COLLECT_EVERY", 16)
    inside = [False]  # in a recorded frame (the warm-up's frames come before, with the collector on)
    during, between = [], []
    frame = ViewerSession.frame
    enter, leave = heap.FrameCollector.__enter__, heap.FrameCollector.__exit__
    recording = [False]

    def entered(self):
        recording[0] = True
        return enter(self)

    def left(self, *exc):
        recording[0] = False
        return leave(self, *exc)

    monkeypatch.setattr(heap.FrameCollector, "__enter__", entered)
    monkeypatch.setattr(heap.FrameCollector, "__exit__", left)

    def timed_frame(self, *a, **k):
        inside[0] = recording[0]
        try:
            return frame(self, *a, **k)
        finally:
            inside[0] = False

    def watch(phase, info):
        if phase == "start" and recording[0]:
            (during if inside[0] else between).append(info["generation"])

    monkeypatch.setattr(ViewerSession, "frame", timed_frame)
    samples = generated_path(load_scene(scene_file), "clusters").sample(frames=60)
    threshold = gc.get_threshold()
    gc.set_threshold(20)  # an automatic collection every 20 allocations: it would fall in every frame
    gc.callbacks.append(watch)
    try:
        replay(load_scene(scene_file), samples, ["brute", "octree"], tmp_path / "r", size=(32, 18), progress=False)
    finally:
        gc.callbacks.remove(watch)
        gc.set_threshold(*threshold)
    assert during == [], during
    assert between.count(1) >= 120 // 16, between  # 60 frames x 2 indexes, one young collection every 16
    assert gc.isenabled()
