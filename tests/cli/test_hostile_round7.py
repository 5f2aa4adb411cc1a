"""Hostile input, seventh round, through the real command line (in process): every case exits 2 with one error
line naming the file, field or flag, no traceback, nothing half-written (or, where the input is valid, works
as the README promises)."""

from __future__ import annotations

import os

import pytest

from tests.support.cli import refused, small, viewer  # noqa: F401  (small: a fixture)



def keyframes(*ts, x=(0.0, 100.0)) -> str:
    return "".join(f"[[keyframe]]\nt = {t!r}\nposition = [{xi!r}, 10.0, 50.0]\nyaw = 0.0\npitch = 0.0\n\n"
                   for t, xi in zip(ts, x))


# --------------------------------------------------------------------------- a path lasting 1e293 s


@pytest.mark.parametrize("how", ["path", "speed"])
def test_a_path_longer_than_the_domain_is_refused_before_recording(tmp_path, small, how):
    """A recording's t column holds seconds from the path's start, and its reader refuses a value past
    2**100. Before: a path file with keyframes at t = 1e300 and 1.0000001e300 (or a generated path at
    --speed 1e-300) was recorded, then 'record' exited 2 naming its own output ("out/scan.csv:3: column
    't': 5e+292 is outside the numeric domain"), leaving runs that compare and plot refuse."""
    out = tmp_path / "out"
    if how == "path":
        flight = tmp_path / "far.toml"
        flight.write_text(keyframes(1e300, 1.0000001e300))
        argv, words = ["--path", flight], [str(flight), "keyframe times span", "2**100 s"]
    else:
        argv, words = ["--speed", "1e-300"], ["--speed 1e-300", "2**100 s"]
    status, _, err = viewer("record", small, *argv, "--frames", "3", "--size", "64x64", "-o", out)
    refused(status, err, *words)
    assert not out.exists()


# --------------------------------------------------------------------------- a city whose downtown is a point


@pytest.mark.parametrize("downtown", ["1e-300", "0.01"])
def test_a_city_downtown_too_small_for_its_blocks_is_refused(tmp_path, downtown):
    """Every block's weight is exp(-distance / downtown). Before: downtown = 0.01 (block 120) made them all
    underflow to 0 and the generator wrote a scene anyway, two RuntimeWarnings on stderr ("invalid value
    encountered in divide") and NaN block weights; 1e-300 also overflowed an int32 cast."""
    recipe = tmp_path / "city.toml"
    recipe.write_text(f'generator = "city"\nn = 1000\n[params]\ndowntown = {downtown}\n')
    status, _, err = viewer("scene", "generate", recipe, "-o", tmp_path / "city.npz")
    line = refused(status, err, str(recipe), "params.downtown", "must be >= block / 100 (1.2)")
    assert "Warning" not in err, line
    assert sorted(os.listdir(tmp_path)) == ["city.toml"]


# --------------------------------------------------------------------------- grids of 1e40 cells


@pytest.mark.parametrize("generator, params, field", [
    ("city", "block = 1e-20\nstreet = 0", "params.block"),
    ("terrain", "hill_size = 1e-300", "params.hill_size"),
], ids=["city-block", "terrain-hill"])
def test_a_grid_too_fine_to_build_is_refused_naming_its_field(tmp_path, generator, params, field):
    """The city's block grid and the terrain's noise lattices are built whole. Before: a block of 1e-20 died
    with 'ValueError: Maximum allowed size exceeded' (a traceback), a hill_size of 1e-300 with 'Maximum
    allowed dimension exceeded', and a hill_size of 1e-3 said only 'not enough memory to hold this scene'."""
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'generator = "{generator}"\nn = 1000\n[params]\n{params}\n')
    status, _, err = viewer("scene", "generate", recipe, "-o", tmp_path / "r.npz")
    refused(status, err, str(recipe), field, "must be >= world / 1000 (10)")
    assert sorted(os.listdir(tmp_path)) == ["r.toml"]


# --------------------------------------------------------------------------- a screenshot onto a full disk


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
    status, _, err = viewer("view", small, "--headless", "--frames", "2", "--size", "64x64", "--screenshot", shot)
    refused(status, err, f"{shot}: cannot write: No space left on device")
    assert sorted(os.listdir(tmp_path)) == ["small.toml"]  # neither the file nor its temporary file


# --------------------------------------------------------------------------- a sweep's lock onto a full disk


def test_a_sweep_whose_lock_file_cannot_take_its_pid_is_one_message(tmp_path, monkeypatch):
    """The lock file is created empty, then the sweep's pid is written into it. Before: on a full file system
    that write died with 'OSError: [Errno 28] No space left on device' (a traceback, exit 1)."""
    import errno

    from viewer.sweep import lock

    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(lock.os, "pwrite", full)
    out = tmp_path / "sw"
    status, _, err = viewer("sweep", "tiny-sweep", "-o", out, "--no-plots", "-q")
    refused(status, err, f"--out {out}", "No space left on device")
    assert sorted(os.listdir(out)) == ["sweep.lock"]  # the lock file stays, as always (viewer/sweep/lock.py)


# --------------------------------------------------------------------------- a sweep's results onto a full disk


def test_a_sweep_csv_that_fills_the_disk_keeps_its_whole_rows_and_says_so(tmp_path, monkeypatch):
    """Before: a task's rows that did not fit died with 'OSError: [Errno 28] No space left on device' in the
    middle of the sweep (a traceback, exit 1, raised again by close() flushing the same buffer), leaving a
    torn row in sweep.csv. Now the file is cut back to the rows before and the error is one message."""
    from viewer.errors import UserError
    from viewer.sweep import load_sweep
    from viewer.sweep import results as res_mod
    from viewer.sweep.results import failure_rows, open_results

    task = load_sweep("tiny-sweep").tasks()[0]
    path = tmp_path / "sweep.csv"
    results = open_results(path)
    results.write(failure_rows(task, "skipped", "kept"))
    before = path.read_bytes()
    real = os.write

    def full(fd, data):
        real(fd, bytes(data[:40]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(res_mod.os, "write", full)
    with pytest.raises(UserError, match="cannot write the sweep's results: No space left on device; the 2 rows"):
        results.write(failure_rows(task, "failed", "lost"))
    monkeypatch.undo()
    results.close()
    results.close()
    assert path.read_bytes() == before


# --------------------------------------------------------------------------- a soak where nothing moves


@pytest.mark.parametrize("share", ["0", "1e-300"])
def test_a_soak_whose_motion_moves_no_object_is_refused(tmp_path, share):
    """'A scene without [motion] is refused (nothing would move)'. Before: a [motion] table whose share
    rounds to no mover (0, or 1e-300 of 2,000 objects) soaked 'mv: 2000 objects, 0 moving' for all its
    frames (1e5 by default) and passed, checking a world that never moved."""
    recipe = tmp_path / "mv.toml"
    recipe.write_text(f'generator = "uniform"\nn = 2000\nworld = 1000.0\n[motion]\nshare = {share}\n')
    status, out, err = viewer("soak", recipe, "--frames", "30", "-q")
    refused(status, err, str(recipe), "motion.share", "moves none of its 2,000 objects")
    assert out == ""


# --------------------------------------------------------------------------- plot -o FILE.pgf without TeX


def test_plot_to_pgf_without_tex_is_refused_before_drawing(tmp_path, monkeypatch):
    """matplotlib lists .pgf among the formats it writes, but lays PGF's text out with xelatex. Before: without
    it, 'plot RUN.csv -o a.pgf' drew the whole figure, then died with "RuntimeError: 'xelatex' not found;
    install it or change rcParams['pgf.texsystem']..." (a traceback, exit 1)."""
    import shutil

    from tests.cli.test_hostile_record_reports import record

    run = record(tmp_path / "a.csv", index="scan")
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    status, _, err = viewer("plot", run, "-o", tmp_path / "p.pgf")
    line = refused(status, err, f"{tmp_path / 'p.pgf'}: cannot write .pgf images (PGF needs xelatex, not installed")
    assert "pgf," not in line and "png" in line
    assert not [p for p in os.listdir(tmp_path) if "p.pgf" in p]


# --------------------------------------------------------------------------- temporary files at fixed names


def test_plot_and_bench_never_write_through_a_link_planted_at_their_temporary_name(tmp_path):
    """README: 'Outputs are never written through a symbolic link.' plot wrote its image to
    .NAME.PID.tmp and bench its table to bench.csv.tmp, fixed names, opened without O_EXCL, and bench and
    clients probed --out by writing an empty OUT/.write-test. Before: a link planted there had the image (or
    the table) written into the file it pointed at (the probe truncated it to 0 bytes), and plot's rename
    left -o a symbolic link to it. Now they write through atomic_file, and the probe is a new file."""
    from tests.cli.test_hostile_record_reports import record

    run = record(tmp_path / "a.csv", index="scan")
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (tmp_path / f".p.png.{os.getpid()}.tmp").symlink_to(victim)
    status, _, err = viewer("plot", run, "-o", tmp_path / "p.png")
    assert status == 0 and "Traceback" not in err, err
    assert not (tmp_path / "p.png").is_symlink() and (tmp_path / "p.png").read_bytes().startswith(b"\x89PNG")
    out = tmp_path / "bench"
    out.mkdir()
    (out / "bench.csv.tmp").symlink_to(victim)
    (out / ".write-test").symlink_to(victim)
    status, _, err = viewer("bench", "--n", "1e3", "--scene", "uniform", "--index", "scan", "--dynamic", "none",
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
