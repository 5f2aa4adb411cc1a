"""Real windows in tests: a fresh Xvfb display (the ``display`` fixture in conftest) and xdotool to drive it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

MISSING = [t for t in ("Xvfb", "xdotool") if shutil.which(t) is None]


def xvfb_display() -> Iterator[str]:
    """Start Xvfb on a display number it picks itself (-displayfd), yield ``":N"``, stop it afterwards."""
    if MISSING:
        pytest.skip(f"not installed: {', '.join(MISSING)}")
    r, w = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    try:
        with os.fdopen(r) as f:
            num = f.readline().strip()
        if not num:
            pytest.skip("Xvfb did not start")
        yield f":{num}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def xdo(env, *args, timeout=20) -> subprocess.CompletedProcess:
    return subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True, timeout=timeout)


#: the frame rate of a window under test unless its arguments give one: Xvfb has no refresh to wait for, and a
#: window drawing flat out takes a whole core from the rest of the suite while a test waits on it (at 60 the
#: window tests took 42 CPU-s, at 20 they take 36, and a test that waits for frames waits a little longer)
TEST_FPS = "20"


def open_window(env, scene, *args, name: str, cwd=None, timeout: float = 60) -> tuple[subprocess.Popen, str]:
    """Start ``viewer view SCENE ARGS`` (``--size 320x240`` and ``--max-fps`` :data:`TEST_FPS` unless ARGS give
    them) on ``env``'s display; once a window whose title matches ``name`` is up, focus it and put the mouse on
    it (once the window is mapped). Returns the process (stdout and stderr piped, text) and the window id; fails the test with the viewer's
    stderr if no window comes (at once when the viewer has exited)."""
    size = () if "--size" in args else ("--size", "320x240")
    fps = () if "--max-fps" in args else ("--max-fps", TEST_FPS)
    cmd = [sys.executable, "-m", "viewer", "view", str(scene), *size, *fps, *args]
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + timeout
    while True:
        # mapped, not only created: pyglet maps a window after naming it, and selects no key events until the map is
        # done (a key sent in between goes to the root window: the first of three keys was lost so, under load)
        found = xdo(env, "search", "--onlyvisible", "--name", name)
        if found.returncode == 0 and found.stdout.split():
            break
        if proc.poll() is not None or time.monotonic() > end:
            proc.kill()
            pytest.fail(f"no window: {proc.communicate()[1]}")
        time.sleep(0.1)
    wid = found.stdout.split()[0]
    xdo(env, "windowfocus", "--sync", wid)
    xdo(env, "mousemove", "--window", wid, "160", "120")
    return proc, wid


def screenshot(env, shot, timeout: float = 5.0) -> None:
    """Press P (the viewer's screenshot key) and wait up to ``timeout`` seconds for the file ``shot``."""
    xdo(env, "key", "p")
    end = time.monotonic() + timeout
    while not shot.exists() and time.monotonic() < end:
        time.sleep(0.1)


def reap(proc: subprocess.Popen) -> None:
    """Kill the viewer if it still runs (a window test's ``finally``)."""
    if proc.poll() is None:
        proc.kill()
        proc.communicate()
