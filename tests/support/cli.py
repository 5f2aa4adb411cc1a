"""What the command-line tests share: how a refusal must look."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import time

import pytest


def refused(status: int, err: str, *words: str) -> str:
    """Exit status 2, exactly one error line naming every one of ``words``, no traceback; returns the line."""
    assert status == 2, err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def with_flags(base: list, extra: list) -> list:
    """``base`` arguments with ``extra`` appended, each option of ``extra`` (``--name``) first dropped from ``base``
    with its values (a single-valued option may be given once)."""
    given = {str(a) for a in extra if str(a).startswith("--")}
    kept, skipping = [], False
    for a in base:
        if str(a).startswith("--"):
            skipping = str(a) in given
        if not skipping:
            kept.append(a)
    return [*kept, *extra]


def sigterm_when(proc, ready, timeout: float = 120.0):
    """Send SIGTERM to ``proc`` (a ``subprocess.Popen``) once ``ready()`` holds, polled every 10 ms (failing
    if the process ends first or ``timeout`` seconds pass), and wait for it; returns its stderr. The process
    is killed if anything fails on the way."""
    try:
        end = time.monotonic() + timeout
        while not ready():
            assert proc.poll() is None and time.monotonic() < end, proc.communicate()[1]
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        return proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def viewer(*args, timeout=300, cwd=None):
    """Run ``viewer ARGS`` in this process, as the console script would (a fresh process each costs a second
    of imports), in ``cwd``; returns (status, stdout, stderr). ``timeout`` is for the reader: none is set."""
    from viewer.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd or os.getcwd()), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in args])
        except SystemExit as exc:  # argparse's refusals
            status = exc.code if isinstance(exc.code, int) else 2
    return status, out.getvalue(), err.getvalue()


#: a 2,000-object recipe: the scene the hostile-input rounds hand to a command that needs a valid one
SMALL = 'generator = "uniform"\nn = 2000\nworld = 1000.0\n'


@pytest.fixture
def small(tmp_path):
    """:data:`SMALL` written as ``small.toml`` in the test's directory (a fixture: import it by name)."""
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p
