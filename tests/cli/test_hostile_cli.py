"""Hostile input through the real command line: sizes that cannot be honoured, values that would fail
later, output targets that cannot be written, signals, odd files. Every case: exit status 2 (or the
signal's status), one error line naming the flag, file or field, no traceback, nothing half-written."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import refused, sigterm_when

ROOT = Path(__file__).resolve().parents[2]
SMALL = 'generator = "uniform"\nn = 2000\nworld = 1000.0\n'


def viewer(*args, timeout=300, prefix=(), cwd=None):
    """Run ``viewer ARGS`` in a fresh process; returns (status, stdout, stderr)."""
    cmd = [*prefix, sys.executable, "-m", "viewer", *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout, p.stderr




@pytest.fixture
def small(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def _listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


# --------------------------------------------------------------------------- sizes that cannot be honoured


@pytest.mark.parametrize("argv, words", [
    (["record", "{scene}", "--frames", "1e10", "-o", "{out}"], ["--frames", "at most"]),
    (["record", "{scene}", "--frames", "1e99", "-o", "{out}"], ["--frames", "at most"]),
    (["view", "{scene}", "--headless", "--frames", "1e99"], ["--frames", "at most"]),
    (["soak", "{scene}", "--frames", "1e99"], ["--frames", "at most"]),
    (["record", "{scene}", "--dt", "1e-300", "-o", "{out}"], ["--dt", "limit", "--frames N"]),
    (["record", "{scene}", "--speed", "1e-3", "-o", "{out}"], ["--speed 0.001", "limit"]),
    (["view", "{scene}", "--headless", "--dt", "1e-300"], ["--dt", "limit"]),
    (["record", "{scene}", "--path", "{long_path}", "-o", "{out}"], ["long.toml", "2e+06 s", "limit"]),
])
def test_sizes_that_cannot_be_honoured_are_refused(tmp_path, small, argv, words):
    long_path = tmp_path / "long.toml"
    long_path.write_text('format = "viewer-camera-path"\nversion = 1\n'
                         '[[keyframe]]\nt = 0.0\nposition = [0.0, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n'
                         '[[keyframe]]\nt = 2e6\nposition = [100.0, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n')
    out = tmp_path / "out"
    args = [a.format(scene=small, out=out, long_path=long_path) for a in argv]
    status, _, err = viewer(*args)
    refused(status, err, *words)
    assert not out.exists()


def test_soak_with_a_step_too_small_for_its_path(tmp_path):
    p = tmp_path / "moving.toml"
    p.write_text(SMALL + "[motion]\nshare = 0.1\n")
    status, _, err = viewer("soak", p, "--dt", "1e-300")
    refused(status, err, "--dt", "limit")


# --------------------------------------------------------------------------- values that would fail later


@pytest.mark.parametrize("text, field", [
    ("origin = [1e308, 1e308, 1e308]\n", "origin[0]"),
    ('[radius]\nmodel = "constant"\nvalue = 1e300\n', "radius.value"),
    ("world = 1e-300\n", "world"),
])
def test_recipe_values_are_refused_at_load(tmp_path, text, field):
    p = tmp_path / "r.toml"
    p.write_text('generator = "uniform"\nn = 100\n' + text)
    out = tmp_path / "r.npz"
    status, _, err = viewer("scene", "generate", p, "-o", out)
    refused(status, err, str(p), f"field '{field}'")
    assert _listing(tmp_path) == ["r.toml"]


@pytest.mark.parametrize("change, field", [
    ({"radii": np.array([1.0, 1.79e308])}, "radii"),
    ({"centres": np.array([[np.finfo(float).max, 0, 0], [0.0, 0, 0]])}, "centres"),
    ({"centres": np.array([[1e308, 1e308, 1e308], [-1e308, -1e308, -1e308]])}, "centres"),
    ({"motion_params": np.array('{"radius_pulse": 0.0, "radius_period": 5.0, "seed": 1e30}')}, "motion_params.seed"),
])
def test_data_file_values_are_refused_at_load(tmp_path, change, field):
    arrays = {"format_version": np.array(2), "centres": np.array([[0.0, 0, 0], [1.0, 1, 1]]),
              "radii": np.array([1.0, 2.0])}
    if "motion_params" in change:
        arrays.update(motion_ids=np.array([0]), motion_kind=np.array([0], dtype=np.int8), motion_speed=np.ones(1),
                      motion_direction=np.array([[1.0, 0, 0]]), motion_axis=np.zeros((1, 3)),
                      motion_orbit=np.zeros(1), motion_phase=np.zeros(1))
    arrays.update(change)
    p = tmp_path / "hostile.npz"
    np.savez(p, **arrays)
    status, _, err = viewer("view", p, "--headless", "--frames", "2", "--size", "64x64")
    refused(status, err, str(p), f"field '{field}'")


# --------------------------------------------------------------------------- odd scene arguments


def test_an_empty_scene_argument(tmp_path):
    status, _, err = viewer("scene", "info", "")
    refused(status, err, "SCENE", "empty")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_scene_that_is_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    p = tmp_path / "scene.npz"
    if kind == "fifo":
        os.mkfifo(p)
    else:
        p.symlink_to("/dev/zero")
    status, _, err = viewer("scene", "info", p, timeout=60)  # a hang fails here
    refused(status, err, str(p), "not a regular file")


# --------------------------------------------------------------------------- output targets


def _read_only(d: Path) -> tuple[str, ...]:
    """A command prefix that runs the command with a read-only file system mounted at ``d`` (a private
    mount namespace: nothing outside the command sees it)."""
    if not shutil.which("unshare"):
        pytest.fail("unshare (util-linux) is needed for the read-only file system cases")
    d.mkdir(exist_ok=True)
    return ("unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o ro none "{d}" && exec "$0" "$@"')


def test_screenshot_targets_are_checked_before_rendering(tmp_path, small):
    status, _, err = viewer("view", small, "--headless", "--screenshot", tmp_path)
    refused(status, err, "--screenshot", "is a directory")
    assert "loading" not in err  # refused before the scene was even read
    ro = tmp_path / "ro"
    status, _, err = viewer("view", small, "--headless", "--screenshot", ro / "shot.png", prefix=_read_only(ro))
    refused(status, err, "--screenshot", "Read-only file system")
    assert "loading" not in err
    status, _, err = viewer("view", small, "--headless", "--screenshot", "/dev/null")
    refused(status, err, "--screenshot", "not a regular file")


def test_scene_generate_targets_are_checked_before_generating(tmp_path, small):
    (tmp_path / "x.npz").mkdir()
    status, _, err = viewer("scene", "generate", small, "-o", tmp_path / "x.npz")
    refused(status, err, "-o/--output", "is a directory")
    assert _listing(tmp_path) == ["small.toml", "x.npz"]
    ro = tmp_path / "ro"
    status, _, err = viewer("scene", "generate", small, "-o", ro / "s.npz", prefix=_read_only(ro))
    refused(status, err, "-o/--output", "Read-only file system")


def test_a_disk_that_fills_during_record_keeps_whole_rows(tmp_path, small):
    """A real full disk: a 64 KiB tmpfs in a private mount namespace; the results are copied out
    before the namespace ends."""
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    kept.mkdir()
    script = (f'mount -t tmpfs -o size=64k none "{disk}" && "$0" "$@"; s=$?; '
              f'cp -a "{disk}/run" "{kept}/" 2>/dev/null; exit $s')
    status, _, err = viewer("record", small, "--index", "brute", "--frames", "2000", "--size", "64x64", "-q",
                            "-o", disk / "run", prefix=("unshare", "-rm", "sh", "-c", script))
    line = refused(status, err, "brute.csv", "No space left on device", "whole rows")
    from viewer.recording import read_meta, read_run

    csv = kept / "run" / "brute.csv"
    run = read_run(csv)
    assert 0 < len(run) < 2000 and np.array_equal(run["frame"], np.arange(len(run)))
    assert csv.read_bytes().endswith(b"\n")
    meta = read_meta(csv)
    assert meta["frames"] == len(run) and meta["ended"] == "write error" and meta["complete"] is False
    assert f"after {len(run)} frames" in line


def test_two_records_into_one_directory_do_not_interleave(tmp_path, small):
    out = tmp_path / "runs"
    first = subprocess.Popen([sys.executable, "-m", "viewer", "record", str(small), "--index", "brute",
                              "--frames", "1000000", "--size", "64x64", "-q", "-o", str(out)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        csv = out / "brute.csv"
        end = time.monotonic() + 120
        while not (csv.exists() and csv.read_bytes().count(b"\n") > 300):
            assert first.poll() is None and time.monotonic() < end, first.stderr.read().decode()
            time.sleep(0.05)
        status, _, err = viewer("record", small, "--index", "brute", "--frames", "10", "--size", "64x64",
                                "-o", out, timeout=120)
        refused(status, err, str(csv), "another recording is writing this file")
        assert first.poll() is None  # the first run goes on
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
    from viewer.recording import read_meta, read_run

    run = read_run(csv)
    assert np.array_equal(run["frame"], np.arange(len(run))) and len(run) > 300
    assert read_meta(csv)["frames"] == len(run) and read_meta(csv)["ended"] == "SIGTERM"


# --------------------------------------------------------------------------- signals


def test_sigterm_during_scene_generate_leaves_no_temporary_file(tmp_path, small):
    """SIGTERM unwinds like Ctrl-C: the half-written temporary file is removed, nothing else is left."""
    code = textwrap.dedent(f"""
        import sys, time
        import numpy as np
        real = np.savez
        def slow(fh, **arrays):
            fh.write(b"part of a scene file")
            fh.flush()
            time.sleep(60)  # SIGTERM arrives here
            real(fh, **arrays)
        np.savez = slow
        from viewer.cli import main
        sys.exit(main(["scene", "generate", {str(small)!r}, "-o", {str(tmp_path / "s.npz")!r}]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = sigterm_when(proc, lambda: any(p.name.endswith(".tmp") for p in tmp_path.iterdir()))
    assert proc.returncode == 128 + signal.SIGTERM
    assert "Traceback" not in err.decode() and "terminated" in err.decode()
    assert _listing(tmp_path) == ["small.toml"]


# --------------------------------------------------------------------------- plot and compare


def _recording(tmp_path, name="a", scene_name="s", **meta_changes):
    from viewer.recording import Recorder, build_meta
    from tests.recording.test_recording import fake_row

    p = tmp_path / f"{name}.csv"
    meta = build_meta(index="brute", headless=True)
    meta["scene"] = {"name": scene_name, "n": 10}
    with Recorder(p, meta) as rec:
        for k in range(20):
            rec.append(fake_row(k))
    if meta_changes:
        m = json.loads((tmp_path / f"{name}.meta.json").read_text())
        m.update(meta_changes)
        (tmp_path / f"{name}.meta.json").write_text(json.dumps(m))
    return p


@pytest.mark.parametrize("command", ["compare", "plot"])
def test_a_400_digit_integer_in_a_recording(tmp_path, command):
    p = _recording(tmp_path)
    lines = p.read_text().splitlines()
    cells = lines[5].split(",")
    cells[11] = "9" * 400  # visible
    lines[5] = ",".join(cells)
    p.write_text("\n".join(lines) + "\n")
    extra = ["-o", tmp_path / "f.png"] if command == "plot" else []
    status, _, err = viewer(command, p, *extra)
    line = refused(status, err, f"{p}:6", "'visible'", "64-bit integer")
    assert len(line) < 300
    assert not (tmp_path / "f.png").exists()


@pytest.mark.parametrize("command", ["compare", "plot"])
def test_metadata_whose_index_is_a_number(tmp_path, command):
    p = _recording(tmp_path, index=7)
    extra = ["-o", tmp_path / "f.png"] if command == "plot" else []
    status, _, err = viewer(command, p, *extra)
    refused(status, err, "a.meta.json", "field 'index'")


def test_plot_draws_mathtext_in_titles_and_names_as_written(tmp_path):
    hostile = r"$\frac{1}{0$"
    p = _recording(tmp_path, scene_name=hostile)
    out = tmp_path / "f.png"
    status, _, err = viewer("plot", p, "-o", out, "--title", hostile, "--width", "400", "--height", "400")
    assert status == 0 and "Traceback" not in err, err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    status, outp, err = viewer("compare", p)
    assert status == 0 and hostile in outp


# --------------------------------------------------------------------------- an option given twice


@pytest.mark.parametrize("argv, words", [
    (["clients", "{scene}", "--k", "1", "--k", "8"], ["--k", "given twice", "give it once"]),
    (["bench", "--n", "1e3", "--n", "1e4", "--out", "{out}"], ["--n", "given twice"]),
    (["record", "{scene}", "--frames", "5", "--frames", "9", "-o", "{out}"], ["--frames", "given twice"]),
    (["view", "{scene}", "--headless", "--hud", "--no-hud"], ["--hud and --no-hud"]),
    (["scene", "generate", "uniform", "--n", "10", "--n", "20", "-o", "{out}"], ["--n", "given twice"]),
])
def test_a_single_valued_option_given_twice_is_refused(tmp_path, small, argv, words):
    """The second occurrence would silently replace the first (``--k 1 --k 8`` measuring 8 alone)."""
    out = tmp_path / "out"
    status, _, err = viewer(*[a.format(scene=small, out=out) for a in argv])
    refused(status, err, *words)
    assert not out.exists()


def test_a_repeatable_option_still_accumulates():
    from viewer.cli import build_parser

    args = build_parser().parse_args(["record", "x.toml", "--index", "octree", "--index", "scan", "brute", "-o", "out"])
    assert args.indexes == ["octree", "scan", "brute"]


# --------------------------------------------------------------------------- a measurement is replaced only when asked


@pytest.mark.parametrize("argv, first", [
    (["map", "{scene}", "--res", "3", "-o", "{out}", "-q"], "costmap.csv"),
    (["bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--queries", "5", "--updates", "0",
      "--dynamic", "none", "--no-first-build", "--no-plots", "--out", "{out}"], "bench.csv"),
])
def test_a_map_or_a_bench_is_not_written_over_without_force(tmp_path, small, argv, first):
    out = tmp_path / "out"
    args = [a.format(scene=small, out=out) for a in argv]
    status, _, err = viewer(*args)
    assert status == 0, err
    written = {p.name: p.read_bytes() for p in out.iterdir()}
    assert first in written
    status, _, err = viewer(*args)
    refused(status, err, first, "exists already", "--force")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == written  # untouched
    status, _, err = viewer(*args, "--force")
    assert status == 0, err
