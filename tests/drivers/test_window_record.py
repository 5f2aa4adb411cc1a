"""Recording from the real window under Xvfb, driven with xdotool: R starts and stops a take, I switches
the index mid-take, the take's path replays headless to the flown poses; SIGTERM mid-take leaves complete
files; a display that does not answer is one message."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.support.xwindow import open_window, reap, xdo

ROOT = Path(__file__).resolve().parents[2]
DT = 1.0 / 60.0


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    from viewer.scenes import generate_scene, save_scene

    d = tmp_path_factory.mktemp("scene")
    return save_scene(generate_scene("clustered", 3000, seed=11, clusters=5), d / "small.npz")


def _window(env, scene_file, *extra):
    proc, wid = open_window(env, scene_file, "--index", "brute", "--fixed-dt", repr(DT), *extra,
                            name="^viewer - clustered-3000", cwd=ROOT, timeout=90)
    time.sleep(0.5)
    return proc, wid


def _title(env, wid) -> str:
    return xdo(env, "getwindowname", wid).stdout.strip()


def _wait_frames(env, wid, frames: int = 20, timeout: float = 60.0) -> str:
    """Wait until the title says the take has at least ``frames`` frames (the window is flying)."""
    import re

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        title = _title(env, wid)
        m = re.search(r"REC take-\d+ +[\d.]+ s +(\d+) frames", title)
        if m and int(m.group(1)) >= frames:
            return title
        time.sleep(0.2)
    pytest.fail(f"the take never reached {frames} frames: {_title(env, wid)!r}")


def _frames(title: str) -> int:
    """The take's frame count in a window title (:func:`_wait_frames`)."""
    import re

    return int(re.search(r"REC take-\d+ +[\d.]+ s +(\d+) frames", title).group(1))


def _wait_for(path: Path, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end and not path.exists():
        time.sleep(0.1)
    return path.exists()


@pytest.mark.window
@pytest.mark.gl
def test_record_a_take_in_the_window_switch_index_and_replay_it(display, scene_file, tmp_path):  # noqa: F811
    from viewer.paths import ANGLE_TOLERANCE, POSITION_TOLERANCE, load_path
    from viewer.recording import COLUMNS, read_run

    takes = tmp_path / "takes"
    env = dict(os.environ, DISPLAY=display)
    proc, wid = _window(env, scene_file, "--record", str(takes))  # take-1 starts at launch
    try:
        title = _wait_frames(env, wid)
        assert f"-> {takes}" in title
        xdo(env, "key", "r")  # stop take-1: the next R makes take-2
        assert _wait_for(takes / "take-1.path.toml"), sorted(p.name for p in takes.iterdir())
        xdo(env, "key", "r")  # take-2
        _wait_frames(env, wid, 1)
        xdo(env, "keydown", "w")
        time.sleep(1.0)
        xdo(env, "key", "i")  # switch index mid-take
        time.sleep(1.0)
        # frames flown after the switch (its kernels compile first: on a loaded machine every key sent
        # meanwhile would otherwise be handled before the next frame)
        _wait_frames(env, wid, _frames(_wait_frames(env, wid, 1)) + 5)
        xdo(env, "keyup", "w")
        xdo(env, "keydown", "d")
        time.sleep(0.5)
        xdo(env, "keyup", "d")
        xdo(env, "key", "r")
        assert _wait_for(takes / "take-2.path.toml")
        xdo(env, "key", "Escape")
        out, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode == 0, err
    assert "recording take-2 into" in err and "take-2: " in err
    assert sorted(p.name for p in takes.iterdir()) == sorted(
        f"take-{n}.{ext}" for n in (1, 2) for ext in ("csv", "meta.json", "path.toml"))

    run = read_run(takes / "take-2.csv")
    assert list(run.columns) == list(COLUMNS)
    n = len(run)
    assert n > 30 and list(run["frame"]) == list(range(n))
    assert (run["dt"] == DT).all()
    np.testing.assert_allclose(run["t"], np.arange(n) * DT, rtol=0, atol=1e-9)
    idx = list(run["index"])
    switch = next(k for k in range(n) if idx[k] != "brute")
    assert 0 < switch < n - 1 and set(idx[switch:]) == {idx[-1]} and idx[-1] != "brute"
    z = run["cam_z"]
    assert (np.diff(z[:switch]) <= 0).all() and z[switch] < z[0]  # W flies down -Z (yaw 0) while held
    meta = run.meta
    assert meta["window"]["headless"] is False and meta["window"]["vsync"] is False and meta["complete"]
    assert meta["indexes"] == ["brute", idx[-1]] and meta["gl"]["renderer"]

    # the path file reproduces the flown poses at their times
    path = load_path(takes / "take-2.path.toml")
    flown = np.column_stack([run["cam_x"], run["cam_y"], run["cam_z"]])
    p, yaw, pitch = path.evaluate(run["t"])
    assert np.linalg.norm(p - flown, axis=1).max() <= POSITION_TOLERANCE
    assert np.abs((yaw - run["yaw"] + 180) % 360 - 180).max() <= ANGLE_TOLERANCE

    # replayed headless for two indexes, twice: the take's poses within the tolerance, the runs equal
    replays = []
    for k in range(2):
        out_dir = tmp_path / f"replay{k}"
        r = subprocess.run([sys.executable, "-m", "viewer", "record", str(scene_file), "--path",
                            str(takes / "take-2.path.toml"), "--index", "brute", "octree", "--size", "320x240",
                            "-o", str(out_dir), "-q"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        replays.append({name: read_run(out_dir / f"{name}.csv") for name in ("brute", "octree")})
    for name in ("brute", "octree"):
        a, b = replays[0][name], replays[1][name]
        for c in ("t", "cam_x", "cam_y", "cam_z", "yaw", "pitch", "visible", "drawn"):
            assert np.array_equal(a[c], b[c]), (name, c)
        m = min(len(a), n)
        assert m >= n - 1
        got = np.column_stack([a["cam_x"], a["cam_y"], a["cam_z"]])[:m]
        assert np.linalg.norm(got - flown[:m], axis=1).max() <= POSITION_TOLERANCE
        assert np.abs((a["yaw"][:m] - run["yaw"][:m] + 180) % 360 - 180).max() <= ANGLE_TOLERANCE
        assert np.abs(a["pitch"][:m] - run["pitch"][:m]).max() <= ANGLE_TOLERANCE
    assert np.array_equal(replays[0]["brute"]["visible"], replays[0]["octree"]["visible"])


@pytest.mark.window
@pytest.mark.gl
def test_sigterm_during_a_take_leaves_complete_files(display, scene_file, tmp_path):  # noqa: F811
    from viewer.paths import load_path
    from viewer.recording import read_run

    takes = tmp_path / "takes"
    env = dict(os.environ, DISPLAY=display)
    proc, wid = _window(env, scene_file, "--record", str(takes))
    try:
        _wait_frames(env, wid)
        xdo(env, "keydown", "a")
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode != 0 and "Traceback" not in err, err
    run = read_run(takes / "take-1.csv")
    assert len(run) > 5 and run.meta["ended"] == "SIGTERM" and run.meta["frames"] == len(run)
    path = load_path(takes / "take-1.path.toml")
    assert path.duration == pytest.approx(run["t"][-1])
    assert json.loads((takes / "take-1.meta.json").read_text())["path"]["file"] == "take-1.path.toml"


def test_a_display_that_does_not_answer_is_one_message(scene_file, tmp_path):
    sock = Path("/tmp/.X11-unix")
    num = next(n for n in range(4000, 5000) if not (sock / f"X{n}").exists())
    for value in (f":{num}", "127.0.0.1:3999", "not a display"):
        env = dict(os.environ, DISPLAY=value)
        r = subprocess.run([sys.executable, "-m", "viewer", "view", str(scene_file)], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2, (value, r.stderr)
        assert "Traceback" not in r.stderr
        lines = [ln for ln in r.stderr.splitlines() if ln.startswith("viewer view: error:")]
        assert len(lines) == 1 and value in lines[0] and "--headless" in r.stderr, r.stderr
