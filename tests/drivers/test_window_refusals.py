"""The window against a hostile world: a screenshot that cannot be written, a
time step or speed that would fly the camera out of the numeric domain, the window destroyed by another X
client mid-take, a window resized to 20000x20000, two screenshots in one second, flags the chosen mode
would ignore, a --pose outside the numeric domain. Real commands in subprocesses; the window ones under
Xvfb driven by xdotool (:mod:`tests.support.xwindow`)."""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import run_cli
from tests.support.xwindow import open_window, reap, xdo

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    from viewer.scenes import generate_scene, save_scene

    d = tmp_path_factory.mktemp("scene")
    return save_scene(generate_scene("clustered", 3000, seed=11, clusters=5), d / "small.npz")


def _title(env, wid) -> str:
    return xdo(env, "getwindowname", wid).stdout.strip()


def _take_frames(env, wid, at_least: int, timeout: float = 60.0) -> int:
    """Wait until the title says the take has at least ``at_least`` frames; returns the count."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = re.search(r"REC take-\d+ +[\d.]+ s +(\d+) frames", _title(env, wid))
        if m and int(m.group(1)) >= at_least:
            return int(m.group(1))
        time.sleep(0.2)
    pytest.fail(f"the take never reached {at_least} frames: {_title(env, wid)!r}")


def _unwritable_dir(tmp_path) -> Path:
    """A directory no file can be created in, even by root (then a pseudo file system)."""
    cands = []
    if os.geteuid() != 0:
        d = tmp_path / "read-only"
        d.mkdir()
        d.chmod(0o555)
        cands.append(d)
    cands += [Path("/sys"), Path("/proc")]
    for d in cands:
        try:
            fd, name = tempfile.mkstemp(dir=d)
        except OSError:
            return d
        os.close(fd)
        os.unlink(name)
    pytest.skip("no directory here refuses a new file")


# ----------------------------------------------------------------------------- flags (no window needed)
FLAG_CASES = [
    (["--fixed-dt", "1e300"], ["argument --fixed-dt", "at most 60"]),
    (["--pose=1e300,0,0,0,0"], ["argument --pose", "2**100"]),
    (["--headless", "--pose=0,0,-1.3e30,0,0", "--frames", "2"], ["argument --pose", "2**100"]),
    (["--path", "{path}"], ["--path is for --headless", "the window would ignore it"]),
    (["--headless", "--fixed-dt", "0.01"], ["--fixed-dt is for the window", "--headless would ignore it"]),
    (["--headless", "--vsync"], ["--vsync is for the window"]),
    (["--headless", "--max-frames", "5"], ["--max-frames is for the window"]),
    (["--headless", "--max-fps", "30"], ["--max-fps is for the window"]),
]


@pytest.mark.parametrize("args,words", FLAG_CASES, ids=[" ".join(a) for a, _ in FLAG_CASES])
def test_a_flag_out_of_range_or_for_the_other_mode_is_one_message(scene_file, tmp_path, monkeypatch, args, words):
    path = tmp_path / "p.toml"
    path.write_text('[[keyframe]]\nt = 0\nposition = [0, 0, 0]\n[[keyframe]]\nt = 1\nposition = [1, 0, 0]\n')
    monkeypatch.delenv("DISPLAY", raising=False)  # refused before any display is asked for
    r = run_cli("view", scene_file, *(a.format(path=path) for a in args), cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("viewer view: error:")]
    assert len(lines) == 1 and all(w in lines[0] for w in words), r.stderr
    print(lines[0])


def test_the_camera_stays_inside_the_numeric_domain():
    from viewer.camera import CAMERA_LIMIT, FlyCamera, InputState
    from viewer.domain import COORD_LIMIT

    assert CAMERA_LIMIT <= COORD_LIMIT / 1.5  # room for a take's path curve (see viewer.camera)
    c = FlyCamera(speed=1e300, yaw=30.0, pitch=20.0)
    c.update(1e300, InputState(actions=frozenset({"forward", "right", "fast"})))
    assert all(np.isfinite(c.position)) and np.abs(c.position).max() == CAMERA_LIMIT
    c.update(1.0, InputState(actions=frozenset({"forward"})))
    assert np.abs(c.position).max() <= CAMERA_LIMIT
    far = FlyCamera(position=(COORD_LIMIT, 0.0, 0.0), speed=1e300)  # put beyond it (--pose): no jump back
    far.update(1.0, InputState(actions=frozenset({"back", "right"})))
    assert far.position[0] == COORD_LIMIT and far.position[2] == CAMERA_LIMIT
    slow = FlyCamera(speed=10.0)
    slow.update(0.1, InputState(actions=frozenset({"forward"})))
    assert slow.pose[:3] == (0.0, 0.0, -1.0)  # an ordinary step is untouched


def test_the_framebuffer_cap_keeps_the_aspect_and_the_budget():
    from viewer.render.context import MAX_FRAMEBUFFER_PIXELS, capped_size

    assert capped_size((1280, 720)) == (1280, 720) and capped_size((7680, 4320)) == (7680, 4320)
    assert capped_size((20000, 20000)) == (5792, 5792)
    for size in [(20000, 20000), (16384, 16), (100000, 3), (9000, 5000), (8193, 8193)]:
        w, h = capped_size(size)
        assert 1 <= w <= 8192 and 1 <= h <= 8192 and w * h <= MAX_FRAMEBUFFER_PIXELS, size
    for size in [(20000, 20000), (16384, 64), (9000, 5000), (8193, 8193), (40000, 30000)]:
        w, h = capped_size(size)
        assert abs(w / h - size[0] / size[1]) <= 1 / h + 0.001 * size[0] / size[1], size  # the aspect kept


def test_a_new_screenshot_never_overwrites(tmp_path):
    from viewer.render.context import save_png_new

    rgb = np.zeros((4, 6, 3), np.uint8)
    shot = tmp_path / "s.png"
    got = [save_png_new(shot, rgb + k) for k in range(3)]
    assert got == [str(shot), str(tmp_path / "s-2.png"), str(tmp_path / "s-3.png")]
    from PIL import Image

    assert [int(np.asarray(Image.open(p))[0, 0, 0]) for p in got] == [0, 1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s-2.png", "s-3.png", "s.png"]  # no temporary left


# ----------------------------------------------------------------------------- real windows
@pytest.mark.window
@pytest.mark.gl
def test_unwritable_screenshot_huge_steps_and_the_window_destroyed_mid_take(display, scene_file, tmp_path):
    """P in a directory that cannot be written: a message, the window goes on. --speed 1e300 with the
    longest --fixed-dt and W: the camera stops at the edge of the numeric domain. Then the window is
    destroyed by another X client: the take is closed, complete, and the viewer exits with a message."""
    from viewer.camera import CAMERA_LIMIT
    from viewer.paths import load_path
    from viewer.recording import read_run

    cwd = _unwritable_dir(tmp_path)
    takes = tmp_path / "takes"
    env = dict(os.environ, DISPLAY=display)
    proc, wid = open_window(env, scene_file, "--index", "brute", "--fixed-dt", "60", "--speed", "1e300",
                            "--record", str(takes), name="^viewer - clustered-3000", cwd=cwd, timeout=90)
    try:
        _take_frames(env, wid, 3)
        xdo(env, "key", "w")
        xdo(env, "key", "p")
        n = _take_frames(env, wid, 1)
        _take_frames(env, wid, n + 10)  # the window goes on after the failed screenshot
        xdo(env, "windowclose", wid)
        out, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode == 1 and "Traceback" not in err, err
    shot = re.search(r"viewer: screenshot not saved: cannot write screenshot-\d{8}-\d{6}\.png: .*", err)
    assert shot, err
    lost = [ln for ln in err.splitlines() if ln.startswith("viewer view: error:")]
    assert len(lost) == 1 and "window was destroyed" in lost[0], err
    run = read_run(takes / "take-1.csv")
    meta = run.meta
    assert meta["complete"] is True and meta["ended"] == "closed" and meta["frames"] == len(run) > 10
    cam = np.column_stack([run["cam_x"], run["cam_y"], run["cam_z"]])
    assert np.isfinite(cam).all() and np.abs(cam).max() == CAMERA_LIMIT  # W flew to the edge and stopped there
    path = load_path(takes / "take-1.path.toml")  # the flight as a path: inside the domain between keyframes too
    assert len(path.sample(frames=2000)) == 2000
    print(shot.group(0))
    print(lost[0])


@pytest.mark.window
@pytest.mark.gl
def test_screenshots_in_one_second_and_a_window_resized_past_the_cap(display, scene_file, tmp_path):
    """P, F12 and P at once: three files, none overwritten. Resized to 20000x20000: the window is put
    back to the capped size (said on stderr) and goes on."""
    env = dict(os.environ, DISPLAY=display)
    proc, wid = open_window(env, scene_file, "--index", "brute", "--fixed-dt", "0.01",
                            name="^viewer - clustered-3000", cwd=tmp_path, timeout=90)
    try:
        xdo(env, "key", "p", "F12", "p")
        end = time.monotonic() + 30
        while len(list(tmp_path.glob("screenshot-*.png"))) < 3 and time.monotonic() < end:
            time.sleep(0.1)
        xdo(env, "windowsize", wid, "20000", "20000")
        geometry = ""
        end = time.monotonic() + 60
        while time.monotonic() < end:
            geometry = xdo(env, "getwindowgeometry", wid).stdout
            if "Geometry: 5792x5792" in geometry:
                break
            time.sleep(0.1)
        xdo(env, "windowsize", wid, "320", "240")
        time.sleep(0.5)
        xdo(env, "key", "Escape")
        out, err = proc.communicate(timeout=90)
    finally:
        reap(proc)
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert "Geometry: 5792x5792" in geometry, geometry
    capped = [ln for ln in err.splitlines() if "more than this viewer renders" in ln]
    assert capped and "20000x20000" in capped[0] and "resized to 5792x5792" in capped[0], err
    shots = sorted(tmp_path.glob("screenshot-*.png"))
    said = re.findall(r"screenshot: (screenshot-\S+\.png)", err)
    assert len(shots) == 3 and sorted(said) == [p.name for p in shots], (shots, err)
    from PIL import Image

    assert all(Image.open(p).size == (320, 240) for p in shots)
    print(capped[0])
    print("screenshots:", " ".join(said))


def test_a_display_that_refuses_the_window_is_tried_again_then_named(monkeypatch, capsys):
    """A loaded Xvfb refused pyglet's connection once after its socket had answered (the window tests, under -n 2
    with two busy processes): the window is tried again, and only a display that keeps refusing is an error."""
    import viewer.drivers.window as W
    from viewer.system.display import WindowUnavailable
    from viewer.scenes import generate_scene

    calls = []

    def refuse(cls, args=None):
        calls.append(args)
        raise RuntimeError('Cannot connect to "None"')

    monkeypatch.setattr(W, "display_problem", lambda exc=None: None if exc is None else f"refused ({exc})")
    monkeypatch.setattr(W.mglw, "create_window_config_instance", refuse)
    monkeypatch.setattr(W.time, "sleep", lambda s: None)
    with pytest.raises(WindowUnavailable, match="refused"):
        W.run_window(W.WindowOptions(scene=generate_scene("uniform", 100, seed=1)), size=(160, 120))
    assert len(calls) == W.CONNECT_ATTEMPTS == 3
    err = capsys.readouterr().err
    assert err.count("trying again") == W.CONNECT_ATTEMPTS - 1, err
