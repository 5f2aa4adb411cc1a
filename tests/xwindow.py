"""Real windows in tests: a fresh Xvfb display (the ``display`` fixture in conftest) and xdotool to drive it."""

from __future__ import annotations

import os
import shutil
import subprocess
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
