"""The window's start, in a real window (Xvfb, xdotool): the window opens on a busy view and two seconds of
W keep drawing (the take's rows say so), J jumps to the next busy spot and O comes back to the start (the
rows' poses), the process has exactly one X window (no hidden pyglet shadow window), and the startup line
gives the index's build time."""

from __future__ import annotations

import os
import re
import time

import numpy as np
import pytest

from tests.support.xwindow import open_window, reap, xdo

pytestmark = [pytest.mark.window, pytest.mark.gl]


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    from viewer.scenes import generate_scene, save_scene

    d = tmp_path_factory.mktemp("scene")
    return save_scene(generate_scene("clustered", 3000, seed=11, clusters=5), d / "small.npz")


def test_the_first_seconds_stay_busy_and_jump_keys_move(display, scene_file, tmp_path):
    from viewer.camera import busy_spots
    from viewer.recording import read_run
    from viewer.scenes import load_scene

    takes = tmp_path / "takes"
    env = dict(os.environ, DISPLAY=display)
    proc, wid = open_window(env, scene_file, "--index", "octree", "--record", str(takes),
                            name="^viewer - clustered-3000", timeout=90)
    try:
        windows = xdo(env, "search", "--sync", "--pid", str(proc.pid)).stdout.split()
        top = xdo(env, "search", "--maxdepth", "1", "--name", ".").stdout.split()  # a shadow window has a name
        time.sleep(0.5)
        xdo(env, "keydown", "w")
        time.sleep(2.0)
        xdo(env, "keyup", "w")
        time.sleep(0.5)
        xdo(env, "key", "j")
        time.sleep(0.5)
        xdo(env, "key", "o")
        time.sleep(0.5)
        xdo(env, "key", "Escape")
        out, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode == 0, err
    assert len(windows) == 1 and windows == top, f"xdotool search --pid found {windows}, top-level {top}"
    start_line = next(ln for ln in err.splitlines() if "objects; index octree built in" in ln)
    print(start_line)
    run = read_run(takes / "take-1.csv")
    pose = np.column_stack([run["cam_x"], run["cam_y"], run["cam_z"], run["yaw"], run["pitch"]])
    drawn = np.asarray(run["drawn"])
    scene = load_scene(scene_file)
    spots = [np.array(s.pose) for s in busy_spots(scene.centres, scene.radii, 8)]
    assert np.allclose(pose[0], spots[0])  # the window starts at the densest spot
    at_jump = np.flatnonzero(np.all(np.isclose(pose, spots[1]), axis=1))
    assert len(at_jump), "J never put the camera at the next busy spot"
    first = slice(0, int(at_jump[0]))  # the start, 2 s of W and the pause after it
    moved = float(np.linalg.norm(pose[first, :3] - pose[0, :3], axis=1).max())
    print(f"{len(run)} rows; before J: {at_jump[0]} frames, drawn {drawn[first].min()} .. {drawn[first].max()}, "
          f"W flew {moved:.1f} units; J at frame {at_jump[0]}")
    assert moved > 0 and drawn[first].min() > 0
    back = np.flatnonzero(np.all(np.isclose(pose, pose[0]), axis=1))
    assert back[-1] > at_jump[-1], "O never brought the camera back to the start"
    assert re.search(r"viewer: busy spot 2 of \d+: pos", err) and "viewer: back to the start" in err
