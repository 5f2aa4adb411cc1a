"""``viewer map`` when its disk fills (the figure named, the files already written kept) or it is stopped
before writing (no directory left behind)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import refused, sigterm_when, small  # noqa: F401 (small: a fixture)


def _full_disk(disk: Path, kept: Path, size: str = "40k") -> tuple[str, ...]:
    """A command prefix running the command with a ``size`` tmpfs at ``disk`` (a private mount namespace);
    what the command left in ``disk`` is copied to ``kept`` before the namespace ends."""
    disk.mkdir()
    kept.mkdir()
    script = (f'mount -t tmpfs -o size={size} none "{disk}" && "$0" "$@"; s=$?; '
              f'cp -a "{disk}/." "{kept}/" 2>/dev/null; exit $s')
    return ("unshare", "-rm", "sh", "-c", script)


def _run_full(tmp_path, *args):
    p = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if p.returncode:
        pytest.skip("no private mount namespaces here (unshare -rm)")
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    prefix = _full_disk(disk, kept)
    cmd = [*prefix, sys.executable, "-m", "viewer", *[str(a).replace("DISK", str(disk)) for a in args]]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stderr, kept


def test_a_map_whose_disk_fills_names_the_figure_and_keeps_the_files_written(tmp_path):
    """Before: an OSError traceback from PIL's PNG writer (ENOSPC inside atomic_file)."""
    scene = tmp_path / "small.toml"
    scene.write_text('generator = "uniform"\nn = 2000\nworld = 1000.0\n')
    status, err, kept = _run_full(tmp_path, "map", scene, "--res", "8", "-q", "-o", "DISK/map")
    refused(status, err, "/map/", ".png: cannot write: No space left on device")
    left = sorted(p.name for p in (kept / "map").iterdir())
    assert "costmap.csv" in left and not [n for n in left if n.startswith(".")]  # no temporary file
    assert all(n in ("costmap.csv", "visible.png", "octree_us.png", "scan_us.png") for n in left)


ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict:
    """The environment a ``viewer`` process of this tree runs in."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def test_a_map_stopped_before_writing_leaves_no_directory_behind(tmp_path, small):
    """Before: 'viewer map SCENE -o msig/deep --res 512' stopped with SIGTERM mid-run printed 'terminated'
    and left the empty msig/deep it had created. Now the directories it made and did not fill are removed."""
    out = tmp_path / "msig" / "deep"
    proc = subprocess.Popen([sys.executable, "-m", "viewer", "map", str(small), "-o", str(out), "--res", "512"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    err = sigterm_when(proc, out.exists)
    assert proc.returncode == 128 + signal.SIGTERM and "terminated" in err and "Traceback" not in err, err
    assert sorted(os.listdir(tmp_path)) == ["small.toml"]
