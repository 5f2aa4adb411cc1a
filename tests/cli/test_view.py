"""``viewer view`` on odd input: a scene far from the origin, a headless screenshot that never overwrites and
is checked before rendering (a directory, a read-only or full disk, a device), --speed pacing the generated flight, a
path one frame past the limit, data files with values outside the numeric domain. Every refusal exits 2 with one
line naming the file, field or flag."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import refused, run_cli, run_process, small  # noqa: F401 (small: a fixture)
from tests.support.hostile_index import spec as plugin_spec


def _far_scene(tmp_path: Path, offset: float, spread: float = 100.0, name: str = "far") -> Path:
    """50 objects in a box of side 2 * ``spread`` around (offset, offset, offset)."""
    c = np.random.default_rng(0).uniform(-spread, spread, (50, 3)) + offset
    p = tmp_path / f"{name}.npz"
    np.savez(p, format_version=np.array(2), centres=c, radii=np.full(50, 10.0))
    return p


def test_a_scene_far_from_the_origin_gets_a_generated_path(tmp_path):
    """1e16 from 0 float64 steps by 2 units: the fly-through's waypoints rounded onto each other and the
    path's times stopped increasing (a ValueError traceback)."""
    status, _, err = run_cli("view", _far_scene(tmp_path, 1e16), "--headless", "--frames", "3", "--size", "64x64")
    assert status == 0 and "Traceback" not in err, err


@pytest.mark.gl
def test_a_headless_screenshot_never_overwrites_a_file(tmp_path, small):
    """README: 'A take or a screenshot is never overwritten'. Before: 'view --headless --screenshot
    shot.png' replaced an existing shot.png (the window's key wrote beside it, as shot-2.png)."""
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"mine")
    for n in (2, 3):
        status, out, err = run_cli("view", small, "--headless", "--frames", "3", "--size", "64x64",
                                  "--screenshot", shot)
        assert status == 0 and "Traceback" not in err, err
        beside = tmp_path / f"shot-{n}.png"
        assert f"wrote {beside}" in out and "taken" in out, out
        assert beside.read_bytes().startswith(b"\x89PNG")
    assert shot.read_bytes() == b"mine"
    status, out, _ = run_cli("view", small, "--headless", "--frames", "3", "--size", "64x64",
                            "--screenshot", tmp_path / "new.png")
    assert status == 0 and f"wrote {tmp_path / 'new.png'}\n" in out, out


def _camera_path(tmp_path: Path) -> Path:
    p = tmp_path / "flight.toml"
    p.write_text('format = "viewer-camera-path"\nversion = 1\nname = "x"\n'
                 '[[keyframe]]\nt = 0.0\nposition = [0.0, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n'
                 '[[keyframe]]\nt = 1.0\nposition = [10.0, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n')
    return p


@pytest.mark.gl
def test_headless_speed_paces_the_generated_flight(small):
    """--speed headless flies the generated path at that speed, as 'viewer record --speed' does (before:
    the same path and dt whatever the speed)."""
    dts = []
    for speed in ([], ["--speed", "1"], ["--speed", "1e6"]):
        status, _, err = run_cli("view", small, "--headless", "--frames", "3", "--size", "64x64", *speed)
        assert status == 0, err
        line = next(ln for ln in err.splitlines() if "frames of" in ln)
        dts.append(line.split("(dt ")[1].split(" s)")[0])
    assert len(set(dts)) == 3, dts


#: the data files of the table below: two objects each, one value outside the numeric domain
_MOTION = dict(motion_ids=np.array([0]), motion_kind=np.array([0], dtype=np.int8), motion_speed=np.ones(1),
               motion_direction=np.array([[1.0, 0, 0]]), motion_axis=np.zeros((1, 3)), motion_orbit=np.zeros(1),
               motion_phase=np.zeros(1))
HOSTILE_FILES = {
    "{huge-radius.npz}": {"radii": np.array([1.0, 1.79e308])},
    "{max-centre.npz}": {"centres": np.array([[np.finfo(float).max, 0, 0], [0.0, 0, 0]])},
    "{wide-centres.npz}": {"centres": np.array([[1e308, 1e308, 1e308], [-1e308, -1e308, -1e308]])},
    "{huge-seed.npz}": {**_MOTION, "motion_params": np.array('{"radius_pulse": 0.0, "radius_period": 5.0, '
                                                             '"seed": 1e30}')},
}
SCENE, PATH, DIRECTORY = "{scene}", "{path}", "{directory}"
TWO_FRAMES = ["--headless", "--frames", "2", "--size", "64x64"]


def _row(id: str, argv: list, words: list, status: int = 2):
    return pytest.param(argv, words, status, id=id)


#: every hostile input of ``viewer view``: (argv, words its one error line holds, exit status). {scene} is a
#: 2,000-object recipe, {path} a 1 s camera path, {directory} a directory, {NAME.npz} a file of HOSTILE_FILES.
#: A screenshot target is checked before the scene is read; a path one frame past the limit prints both counts
#: in full (they used to print alike, 1e+07).
REFUSED = [
    _row("path-one-frame-past-the-limit", ["view", SCENE, "--headless", "--path", PATH, "--dt", "1e-7"],
         ["--path", "10,000,001 frames, more than the limit 10,000,000", "--frames N", "--dt"]),
    _row("radius-past-the-domain", ["view", "{huge-radius.npz}", *TWO_FRAMES], ["{huge-radius.npz}", "field 'radii'"]),
    _row("centre-at-float-max", ["view", "{max-centre.npz}", *TWO_FRAMES], ["{max-centre.npz}", "field 'centres'"]),
    _row("centres-spanning-past-the-domain", ["view", "{wide-centres.npz}", *TWO_FRAMES],
         ["{wide-centres.npz}", "field 'centres'"]),
    _row("motion-seed-1e30", ["view", "{huge-seed.npz}", *TWO_FRAMES],
         ["{huge-seed.npz}", "field 'motion_params.seed'"]),
    _row("index-module-does-not-import", ["view", SCENE, "--index", "no_such_pkg_x.mod:Cls", *TWO_FRAMES],
         ["--index", "does not import", "No module named 'no_such_pkg_x'"]),
    _row("index-plugin-missing-a-hook", ["view", SCENE, "--index", f"octree;{plugin_spec('NoMove')}", *TWO_FRAMES],
         ["--index", "does not implement the hook _move"]),
    _row("screenshot-into-a-directory", ["view", SCENE, "--headless", "--screenshot", DIRECTORY],
         ["--screenshot", "is a directory"]),
    _row("max-fps-0", ["view", SCENE, "--max-fps", "0"], ["argument --max-fps", "must be a positive number"]),
    _row("max-fps-nan", ["view", SCENE, "--max-fps", "nan"], ["argument --max-fps", "must be a positive number"]),
    _row("max-fps-past-the-cap", ["view", SCENE, "--max-fps", "1e9"], ["argument --max-fps", "at most 1000"]),
    _row("screenshot-onto-a-device", ["view", SCENE, "--headless", "--screenshot", "/dev/null"],
         ["--screenshot", "not a regular file"]),
]


@pytest.mark.parametrize("argv, words, status", REFUSED)
def test_a_hostile_input_is_refused_with_one_line(tmp_path, small, argv, words, status):
    fill = {SCENE: str(small), PATH: str(_camera_path(tmp_path)), DIRECTORY: str(tmp_path)}
    for name, change in HOSTILE_FILES.items():
        fill[name] = str(tmp_path / name.strip("{}"))
        np.savez(fill[name], **{"format_version": np.array(2), "centres": np.array([[0.0, 0, 0], [1.0, 1, 1]]),
                                "radii": np.array([1.0, 2.0]), **change})
    code, _, err = run_cli(*(fill.get(a, a) for a in argv))
    assert code == status, err
    refused(code, err, *(fill.get(w, w) for w in words))
    if "--screenshot" in argv:
        assert "loading" not in err  # refused before the scene was even read


def _read_only(d: Path) -> tuple[str, ...]:
    """A command prefix that runs the command with a read-only file system mounted at ``d`` (a private
    mount namespace: nothing outside the command sees it)."""
    if not shutil.which("unshare"):
        pytest.fail("unshare (util-linux) is needed for the read-only file system cases")
    d.mkdir(exist_ok=True)
    return ("unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o ro none "{d}" && exec "$0" "$@"')


def test_a_screenshot_onto_a_read_only_disk_is_refused_before_rendering(tmp_path, small):
    """A real read-only file system (a private mount namespace, so a process of its own): refused before the
    scene is even read."""
    ro = tmp_path / "ro"
    status, _, err = run_process("view", small, "--headless", "--screenshot", ro / "shot.png", prefix=_read_only(ro))
    refused(status, err, "--screenshot", "Read-only file system")
    assert "loading" not in err


@pytest.mark.gl
def test_a_headless_screenshot_on_a_full_disk_is_one_message(tmp_path, small, monkeypatch):
    """Before: 'view --headless --screenshot /full/shot.png' on a full file system died with an OSError
    traceback from PIL's PNG writer (exit 1); map and plot already said 'PATH: cannot write: REASON'."""
    import errno

    from PIL import Image

    def full(self, fp, *args, **kwargs):
        fp.write(b"\x89PNG half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Image.Image, "save", full)
    shot = tmp_path / "shot.png"
    status, _, err = run_cli("view", small, "--headless", "--frames", "2", "--size", "64x64", "--screenshot", shot)
    refused(status, err, f"{shot}: cannot write: No space left on device")
    assert sorted(os.listdir(tmp_path)) == ["small.toml"]  # neither the file nor its temporary file
