"""One real window: the viewer under Xvfb, driven by xdotool key presses, in a subprocess (a GLX window
must not share a process with the EGL contexts of the headless tests)."""

from __future__ import annotations

import ast
import os
import re
import time

import numpy as np
import pytest

from tests.support.xwindow import open_window, reap, screenshot, xdo

pytestmark = pytest.mark.window

def test_window_flies_takes_a_screenshot_and_quits(display, tmp_path):
    scenes = pytest.importorskip("viewer.scenes")
    from tests.render.test_render import TINY

    sc = scenes.Scene(name="tiny", centres=TINY.centres, radii=TINY.radii, sizes=TINY.sizes, colours=TINY.colours,
                      category=TINY.category, world=100.0)
    path = scenes.save_scene(sc, tmp_path / "tiny.npz")
    shot = tmp_path / "shot.png"
    env = dict(os.environ, DISPLAY=display)
    t0 = time.monotonic()
    proc, wid = open_window(env, path, "--index", "brute", "--fixed-dt", "0.001", "--speed", "5", "--pose", "0,0,0,0,0",
                            "--screenshot", str(shot), "--max-fps", "20", name="viewer - tiny")
    try:
        time.sleep(0.5)
        xdo(env, "keydown", "w")
        time.sleep(1.0)
        xdo(env, "keyup", "w")
        xdo(env, "key", "h")  # hide the HUD before the screenshot
        time.sleep(0.3)
        screenshot(env, shot)
        xdo(env, "key", "Escape")
        out, err = proc.communicate(timeout=30)
        open_s = time.monotonic() - t0  # longer than the window was open
    finally:
        reap(proc)
    assert proc.returncode == 0, err
    frames = int(re.search(r"quit after (\d+) frames", err).group(1))
    assert 0 < frames <= 20 * open_s + 1, (frames, open_s)  # --max-fps 20: at most 20 frames a second
    m = re.search(r"camera from (\(.*?\)) to (\(.*?\))", err)
    assert m, err
    start, end = ast.literal_eval(m.group(1)), ast.literal_eval(m.group(2))
    assert start == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert end[2] < 0.0 and end[:2] == (0.0, 0.0) and end[3:] == (0.0, 0.0)  # W flew down -Z
    assert f"screenshot: {shot}" in err
    from PIL import Image

    img = np.asarray(Image.open(shot).convert("RGB"))
    assert img.shape == (240, 320, 3)
    # the window's picture is the headless renderer's at the same pose (this process only uses EGL)
    from viewer.drivers.headless import HeadlessViewer

    with HeadlessViewer(sc, size=(320, 240), index="brute") as hv:
        hv.render(end)
        want = hv.image()
    close = np.abs(img.astype(int) - want.astype(int)).max(axis=2) <= 2
    assert close.mean() > 0.999
    mid = img[110:130, 150:170].astype(int)
    assert ((mid[..., 0] > 80) & (mid[..., 0] > 3 * mid[..., 1])).all()  # the red sphere straight ahead
