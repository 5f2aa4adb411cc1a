"""``viewer soak``: a step too small for the path, a denormal --dt and a motion that moves no object are refused
naming the flag or field; Ctrl-C prints the summary of the frames done and exits 130; the machine is printed beside
the frame times."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import pytest

from tests.support.cli import SMALL, refused, run_cli, small, start_process  # noqa: F401 (small: a fixture)


def test_soak_with_a_step_too_small_for_its_path(tmp_path):
    p = tmp_path / "moving.toml"
    p.write_text(SMALL + "[motion]\nshare = 0.1\n")
    status, _, err = run_cli("soak", p, "--dt", "1e-300")
    refused(status, err, "--dt", "limit")


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def moving(tmp_path_factory) -> Path:
    text = (ROOT / "scenes" / "dynamic-100k.toml").read_text()
    text, k = re.subn(r"(?m)^n = .*$", "n = 2000", text)
    assert k == 1
    p = tmp_path_factory.mktemp("soak") / "tiny-dynamic.toml"
    p.write_text(text)
    return p


def test_a_ctrl_c_soak_prints_its_summary_then_exits_130(moving):
    """Ctrl-C mid-run: the summary of the frames done and checked is printed, exit status 130."""
    proc = start_process("soak", moving, "--frames", "5e6", "--report-every", "200", "--check-every", "50",
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        end = time.monotonic() + 120
        seen = ""
        while time.monotonic() < end:
            line = proc.stderr.readline()
            seen += line
            if re.match(r"frame [1-9]\d*: RSS", line):
                break
            assert line or proc.poll() is None, seen
        else:
            pytest.fail(f"no progress report: {seen}")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    m = re.search(r"index octree: (\d+) frames in .* checked (\d+) frames against brute force, 0 mismatches", out)
    assert m and int(m.group(1)) >= 200 and int(m.group(2)) >= 4, out
    assert "interrupted by Ctrl-C" in out and "memory: RSS" in out
    print(out.splitlines()[0])


def test_soak_with_a_denormal_dt_names_dt_not_frames(moving):
    """A --dt of 5e-324 with --frames given: refused, naming --dt and the limit, with no advice to 'give
    --frames N' (which was given, and does not change the path's sampling)."""
    status, _, err = run_cli("soak", moving, "--frames", "20", "--dt", "5e-324")
    line = refused(status, err, "--dt 4.94066e-324", "limit", "larger --dt")
    assert "give --frames" not in line
    print(line)


@pytest.mark.parametrize("share", ["0", "1e-300"])
def test_a_soak_whose_motion_moves_no_object_is_refused(tmp_path, share):
    """'A scene without [motion] is refused (nothing would move)'. Before: a [motion] table whose share
    rounds to no mover (0, or 1e-300 of 2,000 objects) soaked 'mv: 2000 objects, 0 moving' for all its
    frames (1e5 by default) and passed, checking a world that never moved."""
    recipe = tmp_path / "mv.toml"
    recipe.write_text(f'generator = "uniform"\nn = 2000\nworld = 1000.0\n[motion]\nshare = {share}\n')
    status, out, err = run_cli("soak", recipe, "--frames", "30", "-q")
    refused(status, err, str(recipe), "motion.share", "moves none of its 2,000 objects")
    assert out == ""


def test_soak_prints_the_machine_beside_its_frame_times(tmp_path):
    """Before: 'viewer soak' printed its median and p99 frame times with no word of the machine (bench, clients
    and map print their machine line). It now prints the same line under its figures."""
    from viewer.bench.report import machine_line
    from viewer.system.machine import machine

    scene = tmp_path / "mv.toml"
    scene.write_text('generator = "uniform"\nn = 2000\nworld = 1000.0\n[motion]\nshare = 0.1\n')
    status, out, err = run_cli("soak", scene, "--frames", "20", "-q")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("soak mv (2000 objects") and "median frame" in lines[0], out
    assert machine_line(machine()) in lines[:4], out
