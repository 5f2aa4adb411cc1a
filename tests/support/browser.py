"""Headless Chromium in tests (Debian's ``chromium``, installed by .ci/run): a page's DOM after its scripts ran,
its screenshot, and the console messages it logged, with every host name unresolvable (no network)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: every name resolves to nothing: a page that needed the network would fail to draw
NO_NETWORK = "--host-resolver-rules=MAP * ~NOTFOUND"


def _chromium(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    if CHROMIUM is None:
        pytest.skip("not installed: chromium")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", NO_NETWORK,
           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def console_lines(stderr: str) -> list[str]:
    """The page's console messages (``console.log``, ``console.error``, uncaught errors) among Chromium's log."""
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln]


def dump_dom(url: str) -> tuple[str, list[str]]:
    """The page's DOM once its scripts ran, and its console messages."""
    done = _chromium("--dump-dom", url)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, console_lines(done.stderr)


def screenshot(url: str, png: Path, size: str = "1280,2400") -> list[str]:
    """Write ``url``'s screenshot to ``png`` (``size``: width,height); returns its console messages."""
    done = _chromium(f"--screenshot={png}", f"--window-size={size}", url)
    assert png.is_file(), done.stderr[-2000:]
    return console_lines(done.stderr)
