"""``viewer map`` when its disk fills (the figure named, the files already written kept) or it is stopped
before writing (no directory left behind)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import refused, run_process, sigterm_when, small, start_process  # noqa: F401 (small: a fixture)


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
    code, _, err = run_process(*[str(a).replace("DISK", str(disk)) for a in args], prefix=prefix)
    return code, err, kept


def test_a_map_whose_disk_fills_names_the_figure_and_keeps_the_files_written(tmp_path):
    """Before: an OSError traceback from PIL's PNG writer (ENOSPC inside atomic_file)."""
    scene = tmp_path / "small.toml"
    scene.write_text('generator = "uniform"\nn = 2000\nworld = 1000.0\n')
    status, err, kept = _run_full(tmp_path, "map", scene, "--res", "8", "-q", "-o", "DISK/map")
    refused(status, err, "/map/", ".png: cannot write: No space left on device")
    left = sorted(p.name for p in (kept / "map").iterdir())
    assert "costmap.csv" in left and not [n for n in left if n.startswith(".")]  # no temporary file
    assert all(n in ("costmap.csv", "visible.png", "octree_us.png", "scan_us.png") for n in left)


def test_a_map_stopped_before_writing_leaves_no_directory_behind(tmp_path, small):
    """Before: 'viewer map SCENE -o msig/deep --res 512' stopped with SIGTERM mid-run printed 'terminated'
    and left the empty msig/deep it had created. Now the directories it made and did not fill are removed."""
    out = tmp_path / "msig" / "deep"
    proc = start_process("map", small, "-o", out, "--res", "512")
    err = sigterm_when(proc, out.exists)
    assert proc.returncode == 128 + signal.SIGTERM and "terminated" in err and "Traceback" not in err, err
    assert sorted(os.listdir(tmp_path)) == ["small.toml"]
