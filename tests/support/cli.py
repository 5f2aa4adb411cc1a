"""What the command-line tests share: the two runners of ``viewer`` (:func:`run_cli` in this process,
:func:`run_process` in a fresh one) and how a refusal must look."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

#: the checkout's root
ROOT = Path(__file__).resolve().parents[2]


def refused(status: int, err: str, *words: str) -> str:
    """Exit status 2, exactly one error line naming every one of ``words``, no traceback; returns the line."""
    assert status == 2, err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def files_under(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative path -> its bytes), and each directory (-> b""): what a refused
    command must leave exactly as it was."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"") for p in sorted(Path(root).rglob("*"))}


def listing(root: Path) -> list[str]:
    """Every path under ``root``, relative, sorted: what a refused command must leave as it was."""
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*"))


def refused_before_anything(tmp_path: Path, files: dict, args, words, status: int, check=None) -> str:
    """Run ``viewer ARGS`` in ``tmp_path`` (each argument and word ``str.format``-ed with ``files``) and check a
    hostile input's refusal: exit ``status``, one error line holding ``words`` (and passing ``check(line, err)``
    when given), nothing on stdout, nothing written or removed under ``tmp_path``. Returns the line."""
    before = listing(tmp_path)
    code, out, err = run_cli(*(str(a).format(**files) for a in args), cwd=tmp_path)
    assert code == status, err
    line = refused(code, err, *(str(w).format(**files) for w in words))
    print(line)
    assert out == "", out
    assert check is None or check(line, err), line
    assert listing(tmp_path) == before
    return line


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


class Ran(NamedTuple):
    """What a run of ``viewer`` gave: its exit status and everything it wrote (unpacks as a 3-tuple)."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(*args, cwd=None) -> Ran:
    """Run ``viewer ARGS`` in this process, as the console script would, in ``cwd`` (default: the current
    directory); returns (exit status, stdout, stderr) as a :class:`Ran`. The one in-process runner: a fresh
    process costs a second of imports and the kernels' cache loads, so a test takes this one unless a process is
    what it checks. What the command wrote is also written on to this process's stdout and stderr afterwards (pytest
    shows it beside a failure; ``capsys`` reads it)."""
    from viewer.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd or os.getcwd()), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in args])
        except SystemExit as exc:  # argparse's refusals
            status = exc.code if isinstance(exc.code, int) else 2
    sys.stdout.write(out.getvalue())
    sys.stderr.write(err.getvalue())
    return Ran(status, out.getvalue(), err.getvalue())


def process_command(*args, prefix=(), module: str = "viewer") -> list[str]:
    """The argv that runs ``viewer ARGS`` in a fresh Python process (this checkout's package), after the
    command ``prefix`` (e.g. ``unshare ...``)."""
    return [*map(str, prefix), sys.executable, "-m", module, *map(str, args)]


def process_env(**extra) -> dict:
    """This process's environment with this checkout first on ``PYTHONPATH`` (a fresh process imports the
    package under test whatever its working directory), plus ``extra``."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **{k: str(v) for k, v in extra.items()}}


def run_process(*args, cwd=None, timeout: float = 300, prefix=(), env=None, **popen) -> Ran:
    """Run ``viewer ARGS`` in a fresh process (after the command ``prefix``), in ``cwd`` (default: the checkout),
    with ``env`` (default :func:`process_env`); returns (exit status, stdout, stderr) as a :class:`Ran`. The one
    subprocess runner, for what only a process shows: a signal, a full or read-only disk, an address-space limit,
    an empty kernel cache, an import without GL, a window. ``popen`` goes to :func:`subprocess.run` (e.g.
    ``preexec_fn``)."""
    p = subprocess.run(process_command(*args, prefix=prefix), capture_output=True, text=True, timeout=timeout,
                       cwd=cwd or ROOT, env=env or process_env(), **popen)
    return Ran(p.returncode, p.stdout, p.stderr)


def start_process(*args, cwd=None, prefix=(), env=None, **popen) -> subprocess.Popen:
    """``viewer ARGS`` started in a fresh process as :func:`run_process` runs it, stdout and stderr piped as
    text, for a test that signals it while it runs (see :func:`sigterm_when`)."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen(process_command(*args, prefix=prefix), text=True, cwd=cwd or ROOT,
                            env=env or process_env(), **popen)


#: a 2,000-object recipe: the scene the hostile-input tests hand to a command that needs a valid one
SMALL = 'generator = "uniform"\nn = 2000\nworld = 1000.0\n'


@pytest.fixture
def small(tmp_path):
    """:data:`SMALL` written as ``small.toml`` in the test's directory (a fixture: import it by name)."""
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p
