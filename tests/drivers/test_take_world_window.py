"""A take of a moving world, recorded from the real window under Xvfb well after launch (the
world has run for seconds, at the window's real frame times), replays what was flown: ``viewer record
--path DIR/take-1.path.toml`` starts the world at the take's clock and runs its frames at their own dt, so
every replayed row's visible, entered, left and moved counts are the take's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.recording.test_take_world_files import COUNTS, moving_recipe
from tests.support.xwindow import open_window, reap, xdo

ROOT = Path(__file__).resolve().parents[2]


def _wait_for(path: Path, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end and not path.exists():
        time.sleep(0.1)
    return path.exists()


def _wait_take_frames(env, wid, frames: int, timeout: float = 60.0) -> None:
    """Wait until the window's title says the take has at least ``frames`` frames."""
    import re

    end = time.monotonic() + timeout
    title = ""
    while time.monotonic() < end:
        title = xdo(env, "getwindowname", wid).stdout
        m = re.search(r"REC take-\d+ +[\d.]+ s +(\d+) frames", title)
        if m and int(m.group(1)) >= frames:
            return
        time.sleep(0.2)
    pytest.fail(f"the take never reached {frames} frames: {title!r}")


@pytest.mark.window
@pytest.mark.gl
def test_a_take_started_seconds_after_launch_replays_the_moving_world_as_flown(display, tmp_path):
    from viewer.recording import read_run

    recipe = moving_recipe(tmp_path)
    takes = tmp_path / "takes"
    env = dict(os.environ, DISPLAY=display)
    # real frame times (no --fixed-dt): each frame's dt is what the window measured
    proc, wid = open_window(env, recipe, "--index", "brute", "--record", str(takes), name="^viewer - moving-small",
                            cwd=ROOT, timeout=90)
    try:
        _wait_take_frames(env, wid, 5)
        xdo(env, "key", "r")  # take-1, started at launch, stops
        assert _wait_for(takes / "take-1.csv")
        time.sleep(4.0)  # the world runs for seconds, nothing recorded
        xdo(env, "keydown", "w")  # fly straight on through the take
        time.sleep(0.3)
        xdo(env, "key", "r")  # take-2, well after launch
        _wait_take_frames(env, wid, 30)
        xdo(env, "key", "r")
        xdo(env, "keyup", "w")
        assert _wait_for(takes / "take-2.path.toml")
        xdo(env, "key", "Escape")
        out, err = proc.communicate(timeout=60)
    finally:
        reap(proc)
    assert proc.returncode == 0, err
    assert "world clock" in err and "take-2.world.npz" in err, err

    take = read_run(takes / "take-2.csv")
    world = take.meta["world"]
    assert world["t"] > 1.0 and world["step"] > 10 and world["file"] == "take-2.world.npz"
    assert len(take) >= 30 and len(set(take["dt"])) > 1  # the window's own, uneven frame times
    assert take["moved"].max() > 0 and take["entered"][0] == take["visible"][0] and take["left"][0] == 0

    r = subprocess.run([sys.executable, "-m", "viewer", "record", str(recipe), "--path",
                        str(takes / "take-2.path.toml"), "--index", "brute", "--size", "160x90",
                        "-o", str(tmp_path / "replay"), "-q"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"world clock {world['t']:.1f} s (step {world['step']}) from take-2.meta.json" in r.stderr, r.stderr
    rep = read_run(tmp_path / "replay" / "brute.csv")
    assert len(rep) == len(take)
    for c in ("t", "dt", *COUNTS):
        assert np.array_equal(rep[c], take[c]), (c, np.flatnonzero(rep[c] != take[c])[:5])
