"""Hostile input, round three (issues 31 and 23): what ``viewer record`` and the output checks do with a
directory that already holds a run, a link where a CSV goes, names too long for the file system, a take's
path replayed on another scene, and ``plot -o -``. Every case runs the real command in a fresh process."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import refused

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gl


def viewer(*args, timeout: float = 240, cwd=None) -> tuple[int, str, str]:
    """Run ``viewer ARGS`` in a fresh process; returns (status, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "viewer.cli", *map(str, args)], capture_output=True, text=True,
                       timeout=timeout, cwd=cwd or ROOT)
    return p.returncode, p.stdout, p.stderr




def tiny_recipe(directory: Path, bundled: str, name: str) -> Path:
    """A bundled recipe (scenes/BUNDLED.toml) with n = 2000, written as DIRECTORY/NAME.toml."""
    text = (ROOT / "scenes" / f"{bundled}.toml").read_text()
    text, k = re.subn(r"(?m)^n = .*$", "n = 2000", text)
    assert k == 1
    p = directory / f"{name}.toml"
    p.write_text(text)
    return p


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Two tiny scenes, a window take flown in the first (written through the take API, as the R key does),
    and a run recorded by replaying that take on its own scene (``viewer record --path``)."""
    from viewer.frame.pipeline import FrameStats
    from viewer.recording import build_meta
    from viewer.recording.takes import TakeDir
    from viewer.scenes import load_scene

    d = tmp_path_factory.mktemp("world")
    clustered = tiny_recipe(d, "clustered-100k", "tiny-clustered")
    uniform = tiny_recipe(d, "uniform-100k", "tiny-uniform")
    take = TakeDir(d / "flight").start(build_meta(scene=load_scene(clustered), index="brute", headless=False))
    for k in range(30):
        take.append(FrameStats(frame=k, t=0.0, dt=1 / 60, cam_x=10.0 * k, cam_y=50.0, cam_z=-5.0 * k, yaw=0.5 * k,
                               pitch=-5.0, index="brute", objects=2000, visible=3, drawn=2, query_ms=0.01,
                               frame_ms=1.0))
    take.close()
    path_file = d / "flight" / "take-1.path.toml"
    assert path_file.is_file()
    runs = d / "runs"
    status, out, err = viewer("record", clustered, "--path", path_file, "--index", "brute", "--frames", "10",
                              "--size", "64x48", "-q", "-o", runs)
    assert status == 0, err
    return {"dir": d, "clustered": clustered, "uniform": uniform, "take_path": path_file, "runs": runs,
            "replay_err": err}


# --------------------------------------------------------------------------- 31.3: no silent overwrite


def test_record_into_a_directory_holding_a_run_is_refused_and_leaves_it_whole(world):
    """31.3: a second run of another scene into the same -o stops before the scene loads, naming the file
    and --force; the first run's files are untouched."""
    runs = world["runs"]
    before = {p.name: digest(p) for p in runs.iterdir()}
    status, _, err = viewer("record", world["uniform"], "--index", "brute", "--frames", "10", "--size", "64x48",
                            "-q", "-o", runs)
    line = refused(status, err, "-o", str(runs / "brute.csv"), "exists already", "tiny-clustered", "--force")
    print(line)
    assert {p.name: digest(p) for p in runs.iterdir()} == before
    status, out, _ = viewer("record", "--help")
    assert status == 0 and "--force" in out and "never written through" in " ".join(out.split())


def test_replaying_a_take_on_its_own_scene_does_not_warn(world):
    """31.3: the take's path replayed on the take's scene (the fixture's run) says nothing about scenes."""
    assert "warning" not in world["replay_err"], world["replay_err"]


def test_force_replaces_a_link_and_never_writes_through_it(world, tmp_path):
    """23.3 and 31.3: OUT/brute.csv and OUT/brute.meta.json are links to files outside OUT. Without --force
    the run is refused; with it, the links are replaced by the new run's files and their targets keep
    their bytes. The replay is of another scene than the take's path: a warning says so."""
    out = tmp_path / "out"
    out.mkdir()
    outside_csv, outside_meta = tmp_path / "precious.csv", tmp_path / "precious.json"
    outside_csv.write_text("someone else's data\n")
    outside_meta.write_text("{}\n")
    (out / "brute.csv").symlink_to(outside_csv)
    (out / "brute.meta.json").symlink_to(outside_meta)
    args = ("record", world["uniform"], "--path", world["take_path"], "--index", "brute", "--frames", "10",
            "--size", "64x48", "-q", "-o", out)
    status, _, err = viewer(*args)
    print(refused(status, err, str(out / "brute.csv"), "symbolic link", "--force"))
    status, _, err = viewer(*args, "--force")
    assert status == 0, err
    warning = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warning) == 1 and "tiny-clustered" in warning[0] and "tiny-uniform" in warning[0], err
    print(warning[0])
    assert outside_csv.read_text() == "someone else's data\n" and outside_meta.read_text() == "{}\n"
    assert not (out / "brute.csv").is_symlink() and not (out / "brute.meta.json").is_symlink()
    from viewer.recording import read_run

    run = read_run(out / "brute.csv")
    assert len(run) == 10 and run.meta["scene"]["name"] == "tiny-uniform"


def test_compare_warns_when_runs_are_of_different_scenes(world, tmp_path):
    """31.3: compare still prints its table, and warns on stderr naming both scenes and the files (the
    second run: the fixture's, its metadata saying another scene, as a run of it would)."""
    import json
    import shutil

    a, b = world["runs"] / "brute.csv", tmp_path / "other" / "brute.csv"
    b.parent.mkdir()
    shutil.copy(a, b)
    meta = json.loads(a.with_suffix(".meta.json").read_text())
    meta["scene"]["name"] = "tiny-uniform"
    b.with_suffix(".meta.json").write_text(json.dumps(meta))
    status, out, err = viewer("compare", a, b)
    assert status == 0, err
    warnings = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warnings) == 1, err
    for word in ("different scenes", "tiny-clustered", "tiny-uniform", str(a), str(b)):
        assert word in warnings[0], warnings[0]
    print(warnings[0])
    assert "query_ms" in out
    status, _, err = viewer("compare", a, a)  # the same scene and path: no warning
    assert status == 0 and "warning" not in err, err


# --------------------------------------------------------------------------- 31.6: names too long


@pytest.mark.parametrize("command", ["scene generate", "plot", "record", "view --screenshot"])
def test_an_output_name_over_255_bytes_is_one_message(world, tmp_path, command):
    """31.6: a name component longer than the file system allows (PC_NAME_MAX) is refused up front with
    one message naming the flag, exit status 2, nothing written."""
    long = "n" * 300
    if command == "scene generate":
        args = ("scene", "generate", world["clustered"], "-o", tmp_path / f"{long}.npz")
        flag = "-o/--output"
    elif command == "plot":
        args = ("plot", world["runs"] / "brute.csv", "-o", tmp_path / f"{long}.png")
        flag = "-o"
    elif command == "record":
        args = ("record", world["clustered"], "--frames", "10", "-o", tmp_path / long / "run")
        flag = "-o"
    else:
        args = ("view", world["clustered"], "--headless", "--frames", "2", "--size", "64x48",
                "--screenshot", tmp_path / f"{long}.png")
        flag = "--screenshot"
    status, _, err = viewer(*args)
    print(refused(status, err, flag, "bytes long", "at most"))
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- 31.7: plot -o -


def test_plot_to_a_dash_is_refused_and_writes_no_file(world, tmp_path):
    """31.7: '-o -' does not write a file named '-': refused, naming the flag; --help says so."""
    status, out, err = viewer("plot", world["runs"] / "brute.csv", "-o", "-", cwd=tmp_path)
    print(refused(status, err, "-o -", "standard output"))
    assert out == "" and list(tmp_path.iterdir()) == []
    status, out, _ = viewer("plot", "--help")
    assert status == 0 and "not '-'" in out


def test_check_output_file_allows_names_up_to_the_limit(tmp_path):
    """The limit is the file system's, less the room of the temporary name: one byte under it is written."""
    from viewer.errors import UserError
    from viewer.files.output import TEMP_NAME_ROOM, check_output_file, name_max, prepare_out_dir

    most = name_max(tmp_path) - TEMP_NAME_ROOM
    ok = tmp_path / ("a" * (most - 4) + ".png")
    assert check_output_file(ok, "-o") == ok
    with pytest.raises(UserError, match="at most"):
        check_output_file(tmp_path / ("a" * (most - 3) + ".png"), "-o")
    assert prepare_out_dir(tmp_path / ("d" * name_max(tmp_path)), create=False)
    with pytest.raises(UserError, match="directory name"):
        prepare_out_dir(tmp_path / ("d" * (name_max(tmp_path) + 1)) / "x", create=False)
    assert os.listdir(tmp_path) == []
