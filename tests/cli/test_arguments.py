"""What every command does with its arguments: sizes that cannot be honoured, a single-valued option
given twice, a flag the flight would ignore, a workload listed twice, empty or over-long output names, links that
lead nowhere, devices and pipes as targets, outputs never written over without --force nor through a link planted
at their temporary name, a stop during a write probe, --help free of control characters. Each refused with one
error line naming the flag or file, exit status 2, nothing half-written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import ROOT, refused, run_cli, small  # noqa: F401 (small: a fixture)


SCENE, OUT, PATH, LONG_PATH = "{scene}", "{out}", "{path}", "{long_path}"
BENCH_QUICK = ["--index", "octree", "--no-first-build", "--no-plots", "--dynamic", "none", "--updates", "0",
               "--queries", "10", "--rounds", "1", "--out", OUT]
CLIENTS_QUICK = ["--index", "octree", "--k", "1", "--layout", "spread", "--ticks", "3", "--out", OUT]
FLIGHT = ["--frames", "3", "--size", "64x64"]


def _row(id: str, argv: list, words: list, status: int = 2):
    return pytest.param(argv, words, status, id=id)


#: every hostile argument the commands share, one row each: (argv, words the one error line holds, exit status).
#: In argv, {scene} is a 2,000-object recipe (small.toml, also the working directory's), {out} an output that must
#: not appear, {path} a 1 s camera path, {long_path} one of 2e6 s. Each is refused before any work: nothing is
#: written anywhere (an empty --out used to write into the working directory: Path('') is '.'), no kernel warmed.
REFUSED = [
    # sizes that cannot be honoured
    _row("record-frames-1e10", ["record", SCENE, "--frames", "1e10", "-o", OUT], ["--frames", "at most"]),
    _row("record-frames-1e99", ["record", SCENE, "--frames", "1e99", "-o", OUT], ["--frames", "at most"]),
    _row("view-frames-1e99", ["view", SCENE, "--headless", "--frames", "1e99"], ["--frames", "at most"]),
    _row("record-dt-1e-300", ["record", SCENE, "--dt", "1e-300", "-o", OUT], ["--dt", "limit", "--frames N"]),
    _row("record-speed-1e-3", ["record", SCENE, "--speed", "1e-3", "-o", OUT], ["--speed 0.001", "limit"]),
    _row("view-dt-1e-300", ["view", SCENE, "--headless", "--dt", "1e-300"], ["--dt", "limit"]),
    _row("record-path-2e6-s", ["record", SCENE, "--path", LONG_PATH, "-o", OUT], ["long.toml", "2e+06 s", "limit"]),
    # a single-valued option given twice would silently replace the first (--k 1 --k 8 measuring 8 alone)
    _row("clients-k-twice", ["clients", SCENE, "--k", "1", "--k", "8"], ["--k", "given twice", "give it once"]),
    _row("bench-n-twice", ["bench", "--n", "1e3", "--n", "1e4", "--out", OUT], ["--n", "given twice"]),
    _row("record-frames-twice", ["record", SCENE, "--frames", "5", "--frames", "9", "-o", OUT],
         ["--frames", "given twice"]),
    _row("view-hud-and-no-hud", ["view", SCENE, "--headless", "--hud", "--no-hud"], ["--hud and --no-hud"]),
    _row("scene-generate-n-twice", ["scene", "generate", "uniform", "--n", "10", "--n", "20", "-o", OUT],
         ["--n", "given twice"]),
    # a flag the flight would ignore (--pose won over --path; --speed did nothing with --pose or --path)
    _row("view-pose-with-path", ["view", SCENE, "--headless", "--path", PATH, "--pose", "0,0,0,0,0", *FLIGHT],
         ["--pose", "--path", "ignored"]),
    _row("view-speed-with-pose", ["view", SCENE, "--headless", "--pose", "0,0,0,0,0", "--speed", "5", *FLIGHT],
         ["--speed", "--pose", "ignore"]),
    _row("view-speed-with-path", ["view", SCENE, "--headless", "--path", PATH, "--speed", "5", *FLIGHT],
         ["--speed", "--path", "ignore"]),
    _row("record-speed-with-path", ["record", SCENE, "--path", PATH, "--speed", "5", "-o", OUT, *FLIGHT],
         ["--speed", "--path", "ignored"]),
    # a workload listed twice would be measured twice under one label
    _row("bench-n-listed-twice", ["bench", "--n", "1e3,1000", *BENCH_QUICK], ["--n", "lists 1,000 twice"]),
    _row("bench-scene-listed-twice", ["bench", "--n", "1e3", "--scene", "uniform,uniform", *BENCH_QUICK],
         ["--scene", "lists uniform twice"]),
    _row("bench-scene-file-listed-twice", ["bench", "--scene", "small.toml,./small.toml", *BENCH_QUICK],
         ["--scene", "small.toml (again as ./small.toml) twice"]),
    _row("bench-radius-listed-twice", ["bench", "--n", "1e3", "--scene", "uniform", "--radius", "default;default",
                                       *BENCH_QUICK], ["--radius", "default twice"]),
    _row("bench-radius-written-twice", ["bench", "--n", "1e3", "--scene", "uniform", "--radius",
                                        "constant:value=20;constant:value=20.0", *BENCH_QUICK],
         ["--radius", "constant:value=20 (again as constant:value=20.0) twice"]),
    _row("clients-scene-listed-twice", ["clients", "--scene", "small.toml,small.toml", *CLIENTS_QUICK],
         ["--scene", "lists small.toml twice"]),
    _row("clients-n-listed-twice", ["clients", "--scene", "uniform", "--n", "1e3,1e3", *CLIENTS_QUICK],
         ["--n", "lists 1,000 twice"]),
    _row("clients-scene-missing", ["clients", "--scene", "nowhere.toml", *CLIENTS_QUICK],
         ["--scene", "nowhere.toml", "neither"]),
    # an empty file or directory name (an empty --path flew the generated path, --save-path saved nothing)
    _row("record-path-empty", ["record", SCENE, "-o", OUT, "--frames", "3", "--path", ""],
         ["--path", "the name is empty"]),
    _row("record-save-path-blank", ["record", SCENE, "-o", OUT, "--frames", "3", "--save-path", " "],
         ["--save-path", "the name is empty"]),
    _row("view-path-empty", ["view", SCENE, "--headless", "--frames", "2", "--path", ""],
         ["--path", "the name is empty"]),
    _row("bench-out-empty", ["bench", "--scene", SCENE, "--index", "scan", "--queries", "10", "--rounds", "1",
                             "--updates", "0", "--dynamic", "none", "--no-first-build", "--no-plots", "--out", ""],
         ["--out", "the name is empty"]),
    _row("clients-out-empty", ["clients", "--scene", SCENE, "--index", "scan", "--k", "1", "--ticks", "3",
                               "--out", ""], ["--out", "the name is empty"]),
    _row("sweep-out-empty", ["sweep", "tiny-sweep", "--dry-run", "-o", ""], ["-o/--out", "the name is empty"]),
]


def _camera_path(p: Path, seconds: float) -> Path:
    p.write_text('format = "viewer-camera-path"\nversion = 1\nname = "x"\n'
                 '[[keyframe]]\nt = 0.0\nposition = [0.0, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n'
                 f'[[keyframe]]\nt = {seconds!r}\nposition = [100.0, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n')
    return p


def _listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


@pytest.mark.parametrize("argv, words, status", REFUSED)
def test_a_hostile_argument_is_refused_with_one_line_and_nothing_written(tmp_path, small, argv, words, status):
    fill = {SCENE: str(small), OUT: str(tmp_path / "out"), PATH: str(_camera_path(tmp_path / "flight.toml", 1.0)),
            LONG_PATH: str(_camera_path(tmp_path / "long.toml", 2e6))}
    before = _listing(tmp_path)
    code, _, err = run_cli(*(fill.get(a, a) for a in argv), cwd=tmp_path)
    assert code == status, err
    refused(code, err, *words)
    assert "warming" not in err, err
    assert _listing(tmp_path) == before


@pytest.mark.parametrize("argv, first", [
    (["map", "{scene}", "--res", "3", "-o", "{out}", "-q"], "costmap.csv"),
    (["bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--queries", "5", "--updates", "0",
      "--dynamic", "none", "--no-first-build", "--no-plots", "--out", "{out}"], "bench.csv"),
])
def test_a_map_or_a_bench_is_not_written_over_without_force(tmp_path, small, argv, first):
    out = tmp_path / "out"
    args = [a.format(scene=small, out=out) for a in argv]
    status, _, err = run_cli(*args)
    assert status == 0, err
    written = {p.name: p.read_bytes() for p in out.iterdir()}
    assert first in written
    status, _, err = run_cli(*args)
    refused(status, err, first, "exists already", "--force")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == written  # untouched
    status, _, err = run_cli(*args, "--force")
    assert status == 0, err


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


@pytest.mark.parametrize("suffix, args", [(".npz", ["scene", "info", "{link}"]),
                                          (".csv", ["scene", "import", "{link}", "-o", "{out}"])],
                         ids=["scene", "import"])
@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_a_link_that_leads_nowhere_is_said_so(tmp_path, suffix, args, kind):
    """A symbolic link into a loop of links, or to a missing file: before, 'no such file' (with the bundled
    recipes' names), though the user can see the file in a listing. (A recording's link: compare's table.)"""
    link = tmp_path / f"link{suffix}"
    if kind == "loop":
        (tmp_path / f"other{suffix}").symlink_to(link)
        link.symlink_to(tmp_path / f"other{suffix}")
    else:
        link.symlink_to(tmp_path / f"gone{suffix}")
    out = tmp_path / "out.npz"
    argv = [a.format(link=link, out=out) for a in args]
    status, _, err = run_cli(*argv)
    refused(status, err, str(link), "symbolic link that leads nowhere")
    assert "bundled recipes" not in err and not out.exists()


@pytest.mark.parametrize("argv", [
    ["bench", "--scene", "{bad}", "--index", "scan", "--dynamic", "none", "--updates", "0", "--no-plots",
     "--no-first-build"],
], ids=["bench"])
def test_a_bench_refused_after_making_out_leaves_no_directory(tmp_path, argv):
    """A scene file is read when its workload comes up, after --out is made. Before: a recipe refused then
    (or any error, Ctrl-C, SIGTERM before the results were written) left the empty out/deep directories
    behind (as 'viewer map' once did). clients' case is in its table (tests/cli/test_clients.py)."""
    bad = tmp_path / "bad.toml"
    bad.write_text('generator = "uniform"\nn = 100\n[radius]\nmodel = "log-uniform"\nmin = 0\nmax = 1\n')
    out = tmp_path / "out" / "deep"
    status, _, err = run_cli(*(str(bad) if a == "{bad}" else a for a in argv), "--out", out)
    refused(status, err, str(bad), "radius.min")
    assert sorted(os.listdir(tmp_path)) == ["bad.toml"]


def test_plot_and_bench_never_write_through_a_link_planted_at_their_temporary_name(tmp_path):
    """README: 'Outputs are never written through a symbolic link.' plot wrote its image to
    .NAME.PID.tmp and bench its table to bench.csv.tmp, fixed names, opened without O_EXCL, and bench and
    clients probed --out by writing an empty OUT/.write-test. Before: a link planted there had the image (or
    the table) written into the file it pointed at (the probe truncated it to 0 bytes), and plot's rename
    left -o a symbolic link to it. Now they write through atomic_file, and the probe is a new file."""
    from tests.support.recordings import record

    run = record(tmp_path / "a.csv", index="scan")
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (tmp_path / f".p.png.{os.getpid()}.tmp").symlink_to(victim)
    status, _, err = run_cli("plot", run, "-o", tmp_path / "p.png")
    assert status == 0 and "Traceback" not in err, err
    assert not (tmp_path / "p.png").is_symlink() and (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    out = tmp_path / "bench"
    out.mkdir()
    (out / "bench.csv.tmp").symlink_to(victim)
    (out / ".write-test").symlink_to(victim)
    status, _, err = run_cli("bench", "--n", "1e3", "--scene", "uniform", "--index", "scan", "--dynamic", "none",
                            "--updates", "0", "--queries", "20", "--no-plots", "--no-first-build", "--out", out)
    assert status == 0 and "Traceback" not in err, err
    assert (out / "bench.csv").read_text().startswith("workload,")
    assert victim.read_text() == "mine"


def test_a_stop_during_a_write_probe_leaves_no_directory_behind(tmp_path):
    """Before: SIGTERM arriving between a probe file's creation and its removal (check_output_file's, --out's)
    left it in the directory, so a 'map' stopped just after making its -o kept the directory as filled (round
    5's test failed now and then under load). Now filled_dir removes such a leftover from the directories it
    made."""
    from viewer.files.output import PROBE_SUFFIX, filled_dir

    out = tmp_path / "made" / "deep"

    def make(d):
        d.mkdir(parents=True)
        (d / f".map.csv.x1y2z3{PROBE_SUFFIX}").write_text("")  # the probe the stop interrupted
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        with filled_dir(out, make):
            pass
    assert os.listdir(tmp_path) == []


@pytest.mark.gl
@pytest.mark.parametrize("command", ["scene generate", "record", "view --screenshot"])
def test_an_output_name_over_255_bytes_is_one_message(world, tmp_path, command):
    """A name component longer than the file system allows (PC_NAME_MAX) is refused up front with
    one message naming the flag, exit status 2, nothing written. (plot's -o: plot's table.)"""
    long = "n" * 300
    if command == "scene generate":
        args = ("scene", "generate", world["clustered"], "-o", tmp_path / f"{long}.npz")
        flag = "-o/--output"
    elif command == "record":
        args = ("record", world["clustered"], "--frames", "10", "-o", tmp_path / long / "run")
        flag = "-o"
    else:
        args = ("view", world["clustered"], "--headless", "--frames", "2", "--size", "64x48",
                "--screenshot", tmp_path / f"{long}.png")
        flag = "--screenshot"
    status, _, err = run_cli(*args)
    print(refused(status, err, flag, "bytes long", "at most"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.gl
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


def test_no_help_text_sends_control_characters_to_the_terminal():
    """Before: 'viewer compare --help' printed its description's '(\\x1b, \\n, \\x00, ...)' as the raw bytes ESC,
    a line break and NUL (the description was no raw string): an escape sequence and a NUL to the terminal."""
    for command in ("view", "record", "bench", "scene", "plot", "compare", "clients", "map", "soak", "sweep"):
        status, out, err = run_cli(command, "--help")
        assert status == 0, (command, err)
        bad = sorted({hex(ord(ch)) for ch in out if ord(ch) < 32 and ch != "\n" or ord(ch) == 127})
        assert not bad, (command, bad)
    _, out, _ = run_cli("compare", "--help")
    assert r"escaped (\x1b, \n, \x00, ...)" in " ".join(out.split()), out


def test_building_every_parser_loads_no_numba():
    """``viewer --help``, and a flag refused by its parser, answer without loading numba: an argparse type or
    default that reaches for the indexes or the frame kernels would add a quarter of a second to every command's
    first line (a fresh process, since this one has numba loaded)."""
    code = "import sys; from viewer.cli import build_parser; build_parser(); print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr
