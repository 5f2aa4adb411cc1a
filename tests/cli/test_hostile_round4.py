"""Hostile input, fourth round, through the real command line: every case exits 2 with one error line
naming the file, field or flag, no traceback, nothing half-written (or, where the input is valid, works)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import refused, with_flags

ROOT = Path(__file__).resolve().parents[2]


def viewer(*args, timeout=300, cwd=None):
    """Run ``viewer ARGS`` (this tree's) in a fresh process, in ``cwd``; returns (status, stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "viewer", *map(str, args)], capture_output=True, text=True,
                       timeout=timeout, cwd=cwd, env=env)
    return p.returncode, p.stdout, p.stderr


def _far_scene(tmp_path: Path, offset: float, spread: float = 100.0, name: str = "far") -> Path:
    """50 objects in a box of side 2 * ``spread`` around (offset, offset, offset)."""
    c = np.random.default_rng(0).uniform(-spread, spread, (50, 3)) + offset
    p = tmp_path / f"{name}.npz"
    np.savez(p, format_version=np.array(2), centres=c, radii=np.full(50, 10.0))
    return p


# --------------------------------------------------------------------------- scenes far from the origin


def test_a_scene_far_from_the_origin_gets_a_generated_path(tmp_path):
    """1e16 from 0 float64 steps by 2 units: the fly-through's waypoints rounded onto each other and the
    path's times stopped increasing (a ValueError traceback)."""
    status, _, err = viewer("view", _far_scene(tmp_path, 1e16), "--headless", "--frames", "3", "--size", "64x64")
    assert status == 0 and "Traceback" not in err, err


@pytest.mark.parametrize("extra", [[], ["--speed", "5"]])
def test_a_scene_too_far_out_for_any_path_names_its_file(tmp_path, extra):
    """All centres at 2**63: the box collapses to a point in float64. Before: 'path speed must be a
    positive number, got None' (no file), or an IndexError traceback with --speed."""
    p = _far_scene(tmp_path, 2.0**63, spread=0.0)
    out = tmp_path / "out"
    status, _, err = viewer("record", p, "--frames", "3", "-o", out, "-q", "--index", "scan", *extra)
    refused(status, err, str(p), "no camera path", "--path")
    assert not out.exists()


# --------------------------------------------------------------------------- control characters in messages


@pytest.mark.parametrize("make, shown", [
    (lambda d: (d / "esc.csv", "x,y,z,r\n1,2,3,4\n\x1b]0;owned\x07\x1b[2J\n"), "\\x1b]0;owned\\x07\\x1b[2J"),
    (lambda d: (d / "nul.csv", "x,y,z,r\n1,2,3,4\n\x00\x00\x00\n"), "\\x00\\x00\\x00"),
    (lambda d: (d / "a\x1b[31mred.csv", None), "a\\x1b[31mred.csv"),
], ids=["esc-row", "nul-row", "esc-name"])
def test_control_characters_from_a_file_or_its_name_are_shown_escaped(tmp_path, make, shown):
    """The CSV parser quotes the bad row in its message, a missing file is named: before, the terminal got
    the raw ESC sequences (a title set, the screen cleared) and NUL bytes."""
    src, text = make(tmp_path)
    if text is not None:
        src.write_text(text)
    out = tmp_path / "out.npz"
    status, _, err = viewer("scene", "import", src, "-o", out)
    line = refused(status, err, shown)
    assert not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in line), repr(line)
    assert not out.exists()


# --------------------------------------------------------------------------- a full disk


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


def test_atomic_file_names_the_file_it_could_not_write_and_stays_an_os_error(tmp_path):
    from viewer.errors import UserError
    from viewer.files.output import atomic_file

    target = tmp_path / "out.png"
    with pytest.raises(OSError) as info:
        with atomic_file(target) as fh:
            fh.write(b"half")
            raise OSError(28, "No space left on device")
    assert isinstance(info.value, UserError) and info.value.errno == 28
    assert str(info.value) == f"{target}: cannot write: No space left on device"
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- camera path targets


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text('generator = "uniform"\nn = 2000\nworld = 1000.0\n')
    return p


def test_save_path_onto_a_device_or_pipe_is_refused_and_leaves_it_alone(tmp_path, small):
    """Before: 'viewer record SCENE --save-path /dev/null' exited 0 having renamed a regular file over
    /dev/null (as root: the device gone for every process). A FIFO stands in for the device here."""
    import stat

    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    status, _, err = viewer("record", small, "--frames", "3", "-q", "--index", "scan", "-o", out,
                            "--save-path", fifo)
    refused(status, err, "--save-path", str(fifo), "not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and not out.exists()


def test_save_path_in_process_refuses_a_pipe_too(tmp_path):
    import stat

    from viewer.errors import UserError
    from viewer.paths import save_path
    from viewer.paths.spline import CameraPath

    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    path = CameraPath(np.array([0.0, 1.0]), np.zeros((2, 3)) + [[0, 0, 0], [1, 0, 0]], np.zeros(2), np.zeros(2))
    with pytest.raises(UserError, match="not a regular file"):
        save_path(path, fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# --------------------------------------------------------------------------- empty names


@pytest.mark.parametrize("argv, flag", [
    (["record", "{scene}", "-o", "{out}", "--frames", "3", "--path", ""], "--path"),
    (["record", "{scene}", "-o", "{out}", "--frames", "3", "--save-path", " "], "--save-path"),
    (["view", "{scene}", "--headless", "--frames", "2", "--path", ""], "--path"),
    (["bench", "--scene", "{scene}", "--index", "scan", "--queries", "10", "--rounds", "1", "--updates", "0",
      "--dynamic", "none", "--no-first-build", "--no-plots", "--out", ""], "--out"),
    (["clients", "--scene", "{scene}", "--index", "scan", "--k", "1", "--ticks", "3", "--out", ""], "--out"),
    (["sweep", "tiny-sweep", "--dry-run", "-o", ""], "-o/--out"),
], ids=["record-path", "record-save-path", "view-path", "bench-out", "clients-out", "sweep-out"])
def test_an_empty_file_or_directory_name_is_refused(tmp_path, small, argv, flag):
    """Before: an empty --path silently flew the generated path, an empty --save-path saved nothing, an
    empty --out wrote bench.csv / clients.csv into the working directory (Path('') is '.')."""
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "out"
    args = [a.format(scene=small, out=out) for a in argv]
    status, _, err = viewer(*args, cwd=work)
    refused(status, err, flag, "the name is empty")
    assert list(work.iterdir()) == [] and not out.exists()


# --------------------------------------------------------------------------- clients


@pytest.mark.parametrize("flags, words", [
    (["--step", "1e300"], ["--step 1e+300", "numeric domain", "at most"]),
    (["--layout", "hotspots", "--ticks", "100000", "--step", "1e26"], ["--step 1e+26", "numeric domain"]),
    (["--budget", "0"], ["--budget", "positive"]),
    (["--budget", "nan"], ["--budget", "positive"]),
], ids=["step-1e300", "step-walks-out", "budget-0", "budget-nan"])
def test_clients_steps_out_of_the_domain_and_empty_budgets_are_refused(tmp_path, small, flags, words):
    """Before: --step 1e300 died with a ValueError traceback from the index contract (points outside the
    domain); --budget 0 and --budget nan were taken (every tick skipped, or none)."""
    out = tmp_path / "out"
    status, _, err = viewer(*with_flags(["clients", "--scene", small, "--index", "scan", "--k", "1", "--ticks", "3",
                                         "--out", out], flags))
    refused(status, err, *words)
    assert not out.exists()


# --------------------------------------------------------------------------- sweep files


@pytest.mark.parametrize("name, shown", [
    ("../../elsewhere/x", "'../../elsewhere/x'"),
    ("a\\u001b[2Jb", "'a\\x1b[2Jb'"),
], ids=["slash", "escape"])
def test_a_sweep_name_that_is_not_a_plain_name_is_refused(tmp_path, name, shown):
    """Before: a sweep file's name chose its default results directory runs/sweep-NAME, so a name with '/'
    sent the results outside runs/, and an ESC sequence in it reached the terminal raw ('sweep NAME: ...')."""
    work = tmp_path / "work"
    work.mkdir()
    f = work / "s.toml"
    f.write_text(f'format = "viewer-sweep"\nversion = 1\nname = "{name}"\nindexes = ["octree"]\n'
                 '[axes]\nscene = ["uniform"]\nn = [1000]\n')
    status, out, err = viewer("sweep", f, "--dry-run", cwd=work)
    refused(status, err, str(f), "name", "plain name", shown)
    assert out == "" and [p.name for p in work.iterdir()] == ["s.toml"]


# --------------------------------------------------------------------------- scene names


@pytest.mark.parametrize("kind", ["recipe", "npz"])
def test_a_scene_name_with_control_characters_is_refused_naming_the_field(tmp_path, kind):
    """Before: a name holding an ESC sequence (an OSC title, a screen clear) or a NUL loaded, and 'scene info',
    'view', 'record' printed it raw to the terminal."""
    if kind == "recipe":
        p = tmp_path / "r.toml"
        p.write_text('generator = "uniform"\nn = 100\nname = "a\\u001b]0;owned\\u0007b"\n')
    else:
        p = tmp_path / "s.npz"
        np.savez(p, format_version=np.array(2), centres=np.zeros((2, 3)) + [[0, 0, 0], [1, 1, 1]],
                 radii=np.ones(2), name=np.array("a\x1b]0;owned\x07b"))
    status, out, err = viewer("scene", "info", p)
    refused(status, err, str(p), "field 'name'", "control characters", "\\x1b]0;owned\\x07")
    assert "\x1b" not in out + err


# --------------------------------------------------------------------------- a byte-order mark


def test_files_saved_with_a_byte_order_mark_are_read(tmp_path):
    """A UTF-8 byte-order mark (some editors and spreadsheets write one) before a recipe, a camera path or a
    recording: before, 'not valid TOML: Invalid statement (at line 1, column 1)' and 'header does not match
    the schema'; now each reads as without it."""
    from viewer.paths import load_path
    from viewer.recording import read_run
    from viewer.scenes import load_scene

    bom = b"\xef\xbb\xbf"
    recipe = tmp_path / "bom.toml"
    recipe.write_bytes(bom + b'generator = "clustered"\nn = 500\n')
    assert load_scene(recipe).n == 500
    path = tmp_path / "path.toml"
    path.write_bytes(bom + b"[[keyframe]]\nt = 0\nposition = [0, 0, 0]\nyaw = 0\npitch = 0\n"
                     b"[[keyframe]]\nt = 1\nposition = [1, 0, 0]\nyaw = 0\npitch = 0\n")
    assert len(load_path(path)) == 2
    out = tmp_path / "rec"
    status, _, err = viewer("record", recipe, "--frames", "3", "--size", "64x64", "-o", out, "-q", "--index", "octree")
    assert status == 0, err
    csv = out / "octree.csv"
    rows = len(read_run(csv))
    csv.write_bytes(bom + csv.read_bytes())
    assert len(read_run(csv)) == rows == 3


# --------------------------------------------------------------------------- links that lead nowhere


@pytest.mark.parametrize("suffix, args", [(".npz", ["scene", "info", "{link}"]), (".csv", ["compare", "{link}"]),
                                          (".csv", ["scene", "import", "{link}", "-o", "{out}"])],
                         ids=["scene", "recording", "import"])
@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_a_link_that_leads_nowhere_is_said_so(tmp_path, suffix, args, kind):
    """A symbolic link into a loop of links, or to a missing file: before, 'no such file' (with the bundled
    recipes' names), though the user can see the file in a listing."""
    link = tmp_path / f"link{suffix}"
    if kind == "loop":
        (tmp_path / f"other{suffix}").symlink_to(link)
        link.symlink_to(tmp_path / f"other{suffix}")
    else:
        link.symlink_to(tmp_path / f"gone{suffix}")
    out = tmp_path / "out.npz"
    argv = [a.format(link=link, out=out) for a in args]
    status, _, err = viewer(*argv)
    refused(status, err, str(link), "symbolic link that leads nowhere")
    assert "bundled recipes" not in err and not out.exists()
