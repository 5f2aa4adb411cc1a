"""Hostile input, sixth round, through the real command line (in process): every case exits 2 with one error
line naming the file, field or flag, no traceback, nothing half-written (or, where the input is valid, works
as the README promises)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.support.cli import refused, small, viewer  # noqa: F401  (small: a fixture)

POINTS = "x,y,z\n0,0,0\n10,0,5\n"


@pytest.fixture
def points(tmp_path):
    p = tmp_path / "pts.csv"
    p.write_text(POINTS)
    return p


# --------------------------------------------------------------------------- scene import's output


@pytest.mark.parametrize("out, words", [
    ("", ["-o/--output", "the file name is empty"]),
    ("fifo.npz", ["-o/--output fifo.npz", "not a regular file"]),
    ("n" * 300 + ".npz", ["-o/--output", "304 bytes long"]),
    ("pts.csv/x.npz", ["-o/--output pts.csv/x.npz", "pts.csv is not a directory"]),
], ids=["empty", "fifo", "long", "file-as-dir"])
def test_scene_import_checks_its_output_as_generate_does(tmp_path, points, out, words):
    """Before: 'scene import pts.csv -o ""' wrote pts.npz (an empty name taken as the default), '-o fifo.npz'
    replaced the FIFO with the scene, a name of 304 bytes died with an OSError traceback after the import,
    and '-o pts.csv/x.npz' said 'directory pts.csv does not exist' (it does: it is a file)."""
    if out == "fifo.npz":
        os.mkfifo(tmp_path / out)
    before = sorted(os.listdir(tmp_path))
    status, _, err = viewer("scene", "import", points, "-o", out, cwd=tmp_path)
    refused(status, err, *words)
    assert sorted(os.listdir(tmp_path)) == before
    if out == "fifo.npz":
        assert not (tmp_path / out).is_file()


# --------------------------------------------------------------------------- a .npz's JSON entries


@pytest.mark.parametrize("entry", ["extras", "recipe", "look"])
def test_a_5000_digit_integer_in_a_scene_files_json_is_one_message(tmp_path, entry):
    """Python's JSON reader refuses an integer of more than 4,300 digits with a ValueError that is no
    JSONDecodeError. Before: a traceback from 'scene info' (the metadata and the camera paths already said so
    in one line)."""
    p = tmp_path / "big.npz"
    np.savez(p, format_version=np.array(2), centres=np.array([[0.0, 0, 0], [1, 1, 1]]), radii=np.ones(2),
             **{entry: np.array('{"a": ' + "1" * 5000 + "}")})
    status, _, err = viewer("scene", "info", p)
    refused(status, err, str(p), f"field '{entry}'", "4300 digits")


# --------------------------------------------------------------------------- tables: empty cells, no rows


@pytest.mark.parametrize("text, words", [
    ("x,y,z,r\n", ["holds no data rows, only its column names"]),
    ("x,y,z\n1,,3\n", ["field 'y'", "row 1: empty value"]),
    ("x,y,z,parent\n1,2,3,\n", ["field 'parent'", "row 1: empty value"]),
    ("x,y,z,parent\n1,2,3,-1\n4,5,6,0.5\n", ["field 'parent'", "row 2: parent 0.5 is not a whole number"]),
], ids=["header-only", "empty-y", "empty-parent", "half-parent"])
def test_a_table_with_no_rows_or_an_empty_cell_says_so(tmp_path, text, words):
    """Before: a CSV of column names only said "field 'x': must hold numbers, not null"; a column whose only
    cells are empty said "must hold numbers, found None in row 1" (a Python word for an empty cell); a parent
    of 0.5 was shown as 'np.float64(0.5)'."""
    src = tmp_path / "t.csv"
    src.write_text(text)
    status, _, err = viewer("scene", "import", src, "-o", tmp_path / "t.npz")
    line = refused(status, err, str(src), *words)
    assert "None" not in line and "null" not in line and "np." not in line
    assert sorted(os.listdir(tmp_path)) == ["t.csv"]


# --------------------------------------------------------------------------- tables in other encodings


def test_a_table_in_utf16_is_read_and_one_in_latin1_is_one_message(tmp_path):
    """Spreadsheets save 'Unicode text' as UTF-16 with a byte-order mark, and older ones CSV in a Windows
    code page. Before: a UTF-16 TSV was 'CSV parse error: Expected 3 columns, got 1: \\x00'; a header
    holding 'caf\\xe9' (Latin-1) died with a UnicodeDecodeError traceback from pyarrow."""
    rows = "x\ty\tz\n0\t0\t0\n10\t0\t5\n"
    for enc in ("utf-16", "utf-16-be"):
        src = tmp_path / f"{enc}.tsv"
        src.write_bytes(("\ufeff" if enc.endswith("be") else "").encode(enc) + rows.encode(enc))
        status, out, err = viewer("scene", "info", src)
        assert status == 0 and "bounds     [0, 0, 0] .. [10, 0, 5]" in out, err + out
    src = tmp_path / "latin1.csv"
    src.write_bytes("x,y,z,café\n1,2,3,4\n".encode("latin-1"))
    status, _, err = viewer("scene", "import", src, "-o", tmp_path / "l.npz")
    refused(status, err, str(src), "header is not UTF-8 text (byte 0xe9", "save it as UTF-8")
    assert not (tmp_path / "l.npz").exists()


# --------------------------------------------------------------------------- a radius parameter given twice


def test_a_radius_parameter_given_twice_is_refused_in_bench_and_sweep(tmp_path):
    """'--index octree:max_depth=5,max_depth=6' and '--view-distance constant:value=1,value=2' are refused.
    Before: '--radius constant:value=1,value=2' silently measured value=2 (the workload labelled
    uniform-1k-constant2), and a sweep file's radius axis took it the same way."""
    out = tmp_path / "bench"
    status, _, err = viewer("bench", "--n", "1e3", "--scene", "uniform", "--index", "scan", "--radius",
                            "constant:value=1,value=2", "--no-plots", "--out", out)
    refused(status, err, "--radius 'constant:value=1,value=2'", "parameter 'value' is given twice")
    assert not out.exists()
    sweep = tmp_path / "s.toml"
    sweep.write_text('format = "viewer-sweep"\nversion = 1\nname = "t"\nindexes = ["octree"]\n[axes]\n'
                     'scene = ["uniform"]\nn = [1000]\nradius = ["log-uniform:min=1,max=5,min=2"]\n')
    status, out_text, err = viewer("sweep", sweep, "--dry-run", "-o", tmp_path / "sw")
    refused(status, err, str(sweep), "axes.radius", "parameter 'min' is given twice")
    assert out_text == "" and not (tmp_path / "sw").exists()


# --------------------------------------------------------------------------- more objects than a scene holds


@pytest.mark.parametrize("argv", [
    ["bench", "--n", "6e8", "--index", "scan", "--dynamic", "none", "--updates", "0", "--no-plots"],
    ["clients", "--n", "6e8", "--scene", "uniform", "--index", "scan", "--k", "1", "--ticks", "3"],
], ids=["bench", "clients"])
def test_n_past_the_largest_scene_is_refused_as_a_flag(tmp_path, argv):
    """A scene holds at most 500,000,000 objects (viewer.scenes.MAX_N); --n took up to 1e9. Before: clients
    warmed its kernels, then died generating the workload with "field 'n': must be <= 5e+08" (naming no flag)
    and left its --out directory behind; bench skipped the workload here, and on a machine with the memory
    would have died the same way; a sweep's n axis took 1e9 too."""
    out = tmp_path / "out"
    status, _, err = viewer(*argv, "--out", out)
    refused(status, err, "--n", "1..500,000,000", "'6e8'")
    assert not out.exists()
    sweep = tmp_path / "s.toml"
    sweep.write_text('format = "viewer-sweep"\nversion = 1\nname = "t"\nindexes = ["octree"]\n[axes]\n'
                     'scene = ["uniform"]\nn = [6e8]\n')
    status, _, err = viewer("sweep", sweep, "--dry-run", "-o", out)
    refused(status, err, str(sweep), "axes.n", "1..5e+08")


# --------------------------------------------------------------------------- bench and clients refused midway


@pytest.mark.parametrize("argv", [
    ["bench", "--scene", "{bad}", "--index", "scan", "--dynamic", "none", "--updates", "0", "--no-plots",
     "--no-first-build"],
    ["clients", "--scene", "{bad}", "--index", "scan", "--k", "1", "--ticks", "3"],
], ids=["bench", "clients"])
def test_bench_and_clients_refused_after_making_out_leave_no_directory(tmp_path, argv):
    """A scene file is read when its workload comes up, after --out is made. Before: a recipe refused then
    (or any error, Ctrl-C, SIGTERM before the results were written) left the empty out/deep directories
    behind, as 'viewer map' did before round 5."""
    bad = tmp_path / "bad.toml"
    bad.write_text('generator = "uniform"\nn = 100\n[radius]\nmodel = "log-uniform"\nmin = 0\nmax = 1\n')
    out = tmp_path / "out" / "deep"
    status, _, err = viewer(*(str(bad) if a == "{bad}" else a for a in argv), "--out", out)
    refused(status, err, str(bad), "radius.min")
    assert sorted(os.listdir(tmp_path)) == ["bad.toml"]


# --------------------------------------------------------------------------- figures of 1e29 and 1e308


def test_compare_writes_a_huge_figure_short_and_refuses_one_past_the_domain(tmp_path):
    """Hand-edited recordings. Before: query times of 1e29 ms were printed digit by digit (34 characters
    each, a speed-up of 5e31 as 32 digits; 1e308: 309), and 1e308 in every row made the medians overflow to
    inf with a numpy RuntimeWarning on stderr. Now a figure past 1e15 is written as 1e+29, and a value
    outside the numeric domain (|value| <= 2**100, as for a scene) is refused, naming file, line and column."""
    from tests.cli.test_hostile_record_reports import edit, record

    a, b = record(tmp_path / "a.csv", index="scan"), record(tmp_path / "b.csv", index="octree")
    for row in range(12):
        edit(b, "query_ms", row, "1e29")
        edit(a, "cull_ms", row, "1e29")
    for fmt in ("text", "markdown", "csv"):
        status, out, err = viewer("compare", a, b, "--format", fmt)
        assert status == 0 and "Traceback" not in err and "Warning" not in err, err
        assert "1e+29" in out and "5e+31" in out and "0000000000000000" not in out + err, out + err
    edit(b, "query_ms", 3, "1e308")
    for argv in (["compare", a, b], ["plot", a, b, "-o", tmp_path / "p.png"]):
        status, _, err = viewer(*argv)
        refused(status, err, f"{b}:5", "column 'query_ms'", "1e308 is outside the numeric domain")
    assert not (tmp_path / "p.png").exists()


# --------------------------------------------------------------------------- --save-path onto a path file


def test_record_save_path_never_overwrites_a_file_without_force(tmp_path, small):
    """'--save-path FILE ... e.g. to edit a generated path by hand'. Before: running the same command line
    again (with a new -o) silently replaced the file, hand edits and all. Now refused before anything is
    written, as a recorded run is; --force replaces it."""
    mine = tmp_path / "flight.toml"
    mine.write_text("# my edits\n")
    out = tmp_path / "out"
    status, _, err = viewer("record", small, "--frames", "3", "--size", "64x64", "-o", out, "--save-path", mine)
    refused(status, err, f"--save-path {mine}", "exists already", "--force")
    assert mine.read_text() == "# my edits\n" and not out.exists()
