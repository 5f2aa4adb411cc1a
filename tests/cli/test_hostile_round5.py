"""Hostile input, fifth round, through the real command line: every case exits 2 with one error line
naming the file, field or flag, no traceback, nothing half-written (or, where the input is valid, works
as the README promises)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import refused, sigterm_when, viewer

ROOT = Path(__file__).resolve().parents[2]
SMALL = 'generator = "uniform"\nn = 2000\nworld = 1000.0\n'


def _env() -> dict:
    """The environment a ``viewer`` process of this tree runs in."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


# --------------------------------------------------------------------------- a screenshot is never overwritten


@pytest.mark.gl
def test_a_headless_screenshot_never_overwrites_a_file(tmp_path, small):
    """README: 'A take or a screenshot is never overwritten'. Before: 'view --headless --screenshot
    shot.png' replaced an existing shot.png (the window's key wrote beside it, as shot-2.png)."""
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"mine")
    for n in (2, 3):
        status, out, err = viewer("view", small, "--headless", "--frames", "3", "--size", "64x64",
                                  "--screenshot", shot)
        assert status == 0 and "Traceback" not in err, err
        beside = tmp_path / f"shot-{n}.png"
        assert f"wrote {beside}" in out and "taken" in out, out
        assert beside.read_bytes().startswith(b"\x89PNG")
    assert shot.read_bytes() == b"mine"
    status, out, _ = viewer("view", small, "--headless", "--frames", "3", "--size", "64x64",
                            "--screenshot", tmp_path / "new.png")
    assert status == 0 and f"wrote {tmp_path / 'new.png'}\n" in out, out


# --------------------------------------------------------------------------- an HLOD cell too small for its grid


@pytest.mark.parametrize("cell", ["1e-300", "1e-5"])
def test_an_hlod_cell_too_small_to_number_its_grid_is_refused(tmp_path, small, cell):
    """Before: --hlod 1e-300 cast every cell index to the same int64 (a RuntimeWarning), so all 2,000 objects
    became the children of one proxy, their view distances raised to ~4000; 1e-5 (1e8 cells a side)
    overflowed the cells' keys silently. Now refused, naming the file and the field, and no file is written."""
    out = tmp_path / "out.npz"
    status, _, err = viewer("scene", "generate", small, "--hlod", cell, "-o", out, "-q")
    refused(status, err, str(small), "hlod.cell", "2**62 cells", "larger cell")
    assert "Warning" not in err and not out.exists() and sorted(os.listdir(tmp_path)) == ["small.toml"]
    recipe = tmp_path / "r.toml"
    recipe.write_text(SMALL + f"[hlod]\ncell = {cell}\n")
    status, _, err = viewer("scene", "info", recipe)
    refused(status, err, str(recipe), "hlod.cell")


# --------------------------------------------------------------------------- bench: index options checked first


@pytest.mark.parametrize("spec, words", [
    ("octree:max_depth=0", ["max_depth", "1..100"]),
    ("hashgrid:cell_size=0", ["cell_size", "(0, 2**100]"]),
])
def test_bench_refuses_a_bad_index_option_before_generating_anything(tmp_path, spec, words):
    """Before: the memory estimate ran, the first workload was generated and the indexes before it built
    (at 1e7 objects, 12 s; on a full run, minutes) before the option was refused."""
    out = tmp_path / "bench"
    status, _, err = viewer("bench", "--n", "1e6", "--scene", "uniform", "--index", spec, "--no-first-build",
                            "--no-plots", "--dynamic", "none", "--updates", "0", "--out", out, timeout=120)
    refused(status, err, f"--index {spec}", *words)
    assert "generated" not in err and "estimated" not in err and "built" not in err, err
    assert not out.exists()


# --------------------------------------------------------------------------- flags a headless flight would ignore


def _camera_path(tmp_path: Path) -> Path:
    p = tmp_path / "flight.toml"
    p.write_text('format = "viewer-camera-path"\nversion = 1\nname = "x"\n'
                 '[[keyframe]]\nt = 0.0\nposition = [0.0, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n'
                 '[[keyframe]]\nt = 1.0\nposition = [10.0, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n')
    return p


@pytest.mark.parametrize("argv, words", [
    (["view", "{scene}", "--headless", "--path", "{path}", "--pose", "0,0,0,0,0"], ["--pose", "--path", "ignored"]),
    (["view", "{scene}", "--headless", "--pose", "0,0,0,0,0", "--speed", "5"], ["--speed", "--pose", "ignore"]),
    (["view", "{scene}", "--headless", "--path", "{path}", "--speed", "5"], ["--speed", "--path", "ignore"]),
    (["record", "{scene}", "--path", "{path}", "--speed", "5", "-o", "{out}"], ["--speed", "--path", "ignored"]),
])
def test_a_flag_the_flight_would_ignore_is_refused(tmp_path, small, argv, words):
    """Before: --pose silently won over --path, and --speed did nothing with --pose or --path (nor, headless,
    at all: it set the speed of a camera the path then placed frame by frame); exit 0 as if obeyed."""
    out = tmp_path / "out"
    fill = {"{scene}": small, "{path}": _camera_path(tmp_path), "{out}": out}
    status, _, err = viewer(*(fill.get(a, a) for a in argv), "--frames", "3", "--size", "64x64", timeout=120)
    refused(status, err, *words)
    assert not out.exists()


@pytest.mark.gl
def test_headless_speed_paces_the_generated_flight(small):
    """--speed headless flies the generated path at that speed, as 'viewer record --speed' does (before:
    the same path and dt whatever the speed)."""
    dts = []
    for speed in ([], ["--speed", "1"], ["--speed", "1e6"]):
        status, _, err = viewer("view", small, "--headless", "--frames", "3", "--size", "64x64", *speed)
        assert status == 0, err
        line = next(ln for ln in err.splitlines() if "frames of" in ln)
        dts.append(line.split("(dt ")[1].split(" s)")[0])
    assert len(set(dts)) == 3, dts


# --------------------------------------------------------------------------- file names from another system


def _odd_names(tmp_path: Path, suffix: str) -> list[Path]:
    """A file name holding a byte that is not UTF-8 (Latin-1 'e acute') and one holding an ESC sequence."""
    d = os.fsencode(tmp_path)
    return [Path(os.fsdecode(d + b"/caf\xe9" + suffix.encode())),
            Path(os.fsdecode(d + b"/esc\x1b[2J" + suffix.encode()))]


@pytest.mark.parametrize("suffix", [".toml", ".npz"])
def test_a_scene_file_named_with_odd_bytes_is_read_under_a_printable_name(tmp_path, suffix):
    """A scene's default name is its file's stem. Before: a recipe or a .npz named with a byte that is not
    UTF-8, or with a control character, was refused ('field name: must hold no control characters') for a
    name the user never wrote. Now the name has U+FFFD in their place."""
    import numpy as np

    for p in _odd_names(tmp_path, suffix):
        if suffix == ".toml":
            p.write_text(SMALL)
        else:
            with open(p, "wb") as f:
                np.savez(f, format_version=np.array(2), centres=np.array([[0.0, 0, 0], [1, 1, 1]]), radii=np.ones(2))
        status, out, err = viewer("scene", "info", p)
        assert status == 0 and "Traceback" not in err, err
        first = out.splitlines()[0]
        assert "\ufffd" in first and "\x1b" not in first.split("(")[0], repr(first)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_a_table_named_with_a_byte_that_is_not_utf8_is_imported(tmp_path, suffix):
    """pyarrow takes a path as UTF-8 text. Before: 'not a readable CSV file (truncated, or another format?):
    'utf-8' codec can't encode character '\\udce9'', exit 2, for a sound file named caf\\xe9.csv."""
    src = _odd_names(tmp_path, suffix)[0]
    if suffix == ".parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        with open(src, "wb") as f:
            pq.write_table(pa.table({"x": [0.0, 10.0], "y": [0.0, 0.0], "z": [0.0, 5.0], "r": [50.0, 60.0]}), f)
    else:
        sep = "\t" if suffix == ".tsv" else ","
        src.write_text("".join(sep.join(row.split()) + "\n" for row in ("x y z r", "0 0 0 50", "10 0 5 60")))
    out = tmp_path / "out.npz"
    status, stdout, err = viewer("scene", "import", src, "-o", out)
    assert status == 0 and "Traceback" not in err, err
    assert out.is_file() and "2 objects" in stdout + err, stdout + err


# --------------------------------------------------------------------------- a workload listed twice

QUICK = {"bench": ["--index", "octree", "--no-first-build", "--no-plots", "--dynamic", "none", "--updates", "0",
                   "--queries", "10", "--rounds", "1"],
         "clients": ["--index", "octree", "--k", "1", "--layout", "spread", "--ticks", "3"]}


@pytest.mark.parametrize("argv, words", [
    (["bench", "--n", "1e3,1000"], ["--n", "lists 1,000 twice"]),
    (["bench", "--n", "1e3", "--scene", "uniform,uniform"], ["--scene", "lists uniform twice"]),
    (["bench", "--scene", "small.toml,./small.toml"], ["--scene", "small.toml (again as ./small.toml) twice"]),
    (["bench", "--n", "1e3", "--scene", "uniform", "--radius", "default;default"], ["--radius", "default twice"]),
    (["bench", "--n", "1e3", "--scene", "uniform", "--radius", "constant:value=20;constant:value=20.0"],
     ["--radius", "constant:value=20 (again as constant:value=20.0) twice"]),
    (["clients", "--scene", "small.toml,small.toml"], ["--scene", "lists small.toml twice"]),
    (["clients", "--scene", "uniform", "--n", "1e3,1e3"], ["--n", "lists 1,000 twice"]),
    (["clients", "--scene", "nowhere.toml"], ["--scene", "nowhere.toml", "neither"]),
])
def test_a_workload_listed_twice_is_refused_before_any_work(tmp_path, small, argv, words):
    """'viewer sweep' refuses a value listed twice and bench a repeated --index. Before: a repeated --n,
    --scene (however the file was written) or --radius model ran the same workload twice under the same
    label (bench: every index built and timed again, the table holding two identical uniform-1k rows per
    index; clients: two octree rows for a-1k), exit 0. And clients made its --out before checking --scene,
    leaving an empty directory behind when it was refused."""
    out = tmp_path / "out"
    status, _, err = viewer(*argv, *QUICK[argv[0]], "--out", out, cwd=tmp_path, timeout=180)
    refused(status, err, *words)
    assert "warming" not in err and not out.exists(), err


# --------------------------------------------------------------------------- one column, one role


@pytest.mark.parametrize("columns, words", [
    ("x=y", ["--columns", "column 'y' would play x and y"]),
    ("x=z,y=z", ["--columns", "column 'z' would play x, y and z"]),
    ("r=x", ["--columns", "column 'x' would play x and r"]),
    ("x=a,x=y", ["--columns", "role x is given twice ('a' and 'y')"]),
])
def test_a_column_given_two_roles_is_refused(tmp_path, columns, words):
    """Before: 'scene import pts.csv --columns x=y' (columns x, y, z) read column y as both x and y and wrote
    a scene on the diagonal x = y, exit 0; 'x=a,x=y' silently kept the last. Now refused, naming the file
    and --columns, and nothing is written."""
    src = tmp_path / "pts.csv"
    src.write_text("x,y,z\n1,2,3\n4,5,6\n")
    out = tmp_path / "pts.npz"
    status, _, err = viewer("scene", "import", src, "--columns", columns, "-o", out)
    refused(status, err, str(src), *words)
    assert sorted(os.listdir(tmp_path)) == ["pts.csv"]


def test_columns_swapped_are_read_as_mapped(tmp_path):
    """Two roles trading columns is no column playing two roles: x=y,y=x swaps the axes."""
    src = tmp_path / "pts.csv"
    src.write_text("x,y,z\n1,2,3\n4,5,6\n")
    status, out, err = viewer("scene", "info", src, "--columns", "x=y,y=x")
    assert status == 0, err
    assert "box [2, 1, 3] .. [5, 4, 6]" in out, out


# --------------------------------------------------------------------------- an index option's own range


@pytest.mark.parametrize("spec, words", [
    ("hashgrid:cell_size=-1", ["hashgrid: cell_size must be a number in (0, 2**100], got -1"]),
    ("buckettree:cell_size=1e300", ["buckettree: cell_size must be a number in (0, 2**100], got 1e+300"]),
    ("hgrid:base=-1", ["hgrid: base must be a number in (0, 2**100], got -1"]),
    ("hgrid:cell_factor=-1", ["cell_factor", "must be a number in [1, 2**100], got -1"]),
])
def test_an_index_option_out_of_range_is_refused_with_its_own_range(tmp_path, spec, words):
    """Before: 'bench --index hashgrid:cell_size=-1' said 'cell_size -1.0 is outside the domain: finite,
    0 <= radius <= 2**100 (1.268e+30)': a radius's range for an option that is no radius (and 0, inside it,
    was then refused by a second check saying '> 0'). Now the option and its own range."""
    status, _, err = viewer("bench", "--n", "1e3", "--index", spec, "--out", tmp_path / "bench")
    line = refused(status, err, f"--index {spec}", *words)
    assert "radius" not in line and not (tmp_path / "bench").exists()


# --------------------------------------------------------------------------- one frame past the limit


def test_a_path_one_frame_past_the_limit_says_so_in_full(tmp_path, small):
    """A 1 s path at --dt 1e-7 is 10,000,001 frames. Before: 'is 1e+07 frames, more than the limit 1e+07'
    (the two counts printed alike). Now both are written out in full."""
    status, _, err = viewer("view", small, "--headless", "--path", _camera_path(tmp_path), "--dt", "1e-7")
    refused(status, err, "--path", "10,000,001 frames, more than the limit 10,000,000", "--frames N", "--dt")


# --------------------------------------------------------------------------- a map stopped before it wrote


def test_a_map_stopped_before_writing_leaves_no_directory_behind(tmp_path, small):
    """Before: 'viewer map SCENE -o msig/deep --res 512' stopped with SIGTERM mid-run printed 'terminated'
    and left the empty msig/deep it had created. Now the directories it made and did not fill are removed."""
    out = tmp_path / "msig" / "deep"
    proc = subprocess.Popen([sys.executable, "-m", "viewer", "map", str(small), "-o", str(out), "--res", "512"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    err = sigterm_when(proc, out.exists)
    assert proc.returncode == 128 + signal.SIGTERM and "terminated" in err and "Traceback" not in err, err
    assert sorted(os.listdir(tmp_path)) == ["small.toml"]


# --------------------------------------------------------------------------- a message cut at a word


def test_a_message_cut_short_ends_at_a_word_with_an_ellipsis(tmp_path):
    """Metadata nested 100,000 levels deep. Before: '...: not a metadata file this viewer can read: maximum
    recursion depth exceeded while decoding a JSON array from a unicode stri' (cut at 80 characters, mid-word,
    with no sign of the cut). Now cut after a whole word, with '...'."""
    csv = tmp_path / "run.csv"
    csv.write_text("frame,t\n0,0\n")
    (tmp_path / "run.meta.json").write_text("[" * 100_000 + "]" * 100_000)
    status, _, err = viewer("plot", csv, "-o", tmp_path / "p.png")
    line = refused(status, err, "run.meta.json", "not a metadata file this viewer can read")
    assert line.endswith(" a unicode..."), line
    assert not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("text, most, want", [
    ("short enough", 20, "short enough"),
    ("maximum recursion depth exceeded while decoding", 30, "maximum recursion depth..."),
    ("one two three", 10, "one two..."),
    ("x" * 50, 20, "x" * 17 + "..."),  # one long word: cut, it cannot be kept whole
    ("a " + "x" * 30, 20, "a " + "x" * 15 + "..."),  # not 'a...': a word filling over half of it is cut
])
def test_clip_cuts_after_a_whole_word(text, most, want):
    from viewer.terminal.text import clip

    got = clip(text, most)
    assert got == want and len(got) <= most
