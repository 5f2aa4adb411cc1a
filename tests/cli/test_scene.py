"""``viewer scene generate / info / list``: output, exit status 2 on every bad input, nothing left behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from viewer.scenes import load_scene

from tests.scenes.test_scene_files import BAD_NPZ, BAD_RECIPES, BROKEN_FILES, GOOD, _good_npz, write_bad_recipe
from tests.support.cli import SMALL, refused, run_cli, run_process, sigterm_when, small  # noqa: F401 (small: a fixture)


@pytest.fixture
def recipe(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text(GOOD)
    return p


def test_generate_writes_the_recipes_scene(tmp_path, capsys, recipe):
    out = tmp_path / "out.npz"
    code, stdout, err = run_cli("scene", "generate", str(recipe), "-o", str(out))
    assert code == 0, err
    assert stdout.count("\n") == 1 and stdout.startswith(f"wrote {out}: mine, 2,000 objects (clustered, seed 5)")
    a, b = load_scene(recipe), load_scene(out)
    assert np.array_equal(a.centres, b.centres) and np.array_equal(a.radii, b.radii)
    assert np.array_equal(a.colours, b.colours) and np.array_equal(a.category, b.category)
    assert sorted(os.listdir(tmp_path)) == ["mine.toml", "out.npz"]


def test_generate_overrides_n_and_seed(tmp_path, capsys, recipe):
    out = tmp_path / "big.npz"
    code, stdout, err = run_cli("scene", "generate", str(recipe), "--n", "3e3", "--seed", "9", "-o", str(out))
    assert code == 0, err
    s = load_scene(out)
    assert s.n == 3000 and s.seed == 9 and s.recipe["n"] == 3000


def test_generate_default_output_is_the_stem_here(tmp_path, capsys, recipe, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, stdout, err = run_cli("scene", "generate", str(recipe), "--n", "50")
    assert code == 0, err
    assert (tmp_path / "mine.npz").exists()


def test_info_on_recipe_and_data_file(tmp_path, capsys, recipe):
    out = tmp_path / "out.npz"
    assert run_cli("scene", "generate", str(recipe), "-o", str(out))[0] == 0
    for src in (recipe, out):
        code, stdout, err = run_cli("scene", "info", str(src))
        assert code == 0, err
        assert "objects    2,000" in stdout
        assert "radii      min" in stdout and "p50" in stdout and "p99" in stdout
        assert "clusters   4;" in stdout
    code, stdout, _ = run_cli("scene", "info", str(out), "--json")
    d = json.loads(stdout)
    s = load_scene(out)
    assert d["n"] == 2000 and d["generator"] == "clustered"
    assert sum(c["count"] for c in d["clusters"]) + d["background"] == 2000
    assert sorted((c["id"], c["count"]) for c in d["clusters"]) == [
        (k, int(np.count_nonzero(s.category == k))) for k in range(4)
    ]
    assert d["radii"]["p50"] == pytest.approx(float(np.median(s.radii)))
    assert d["bounds"] == [s.centres.min(0).tolist(), s.centres.max(0).tolist()]


def test_info_names_a_bundled_recipe(capsys):
    code, stdout, err = run_cli("scene", "info", "remote-cluster-100k", "--json")
    assert code == 0, err
    d = json.loads(stdout)
    assert d["n"] == 100_000 and d["extras"]["remote"]["keep_out"] > 0


def test_list_shows_the_bundled_recipes(capsys):
    code, stdout, _ = run_cli("scene", "list")
    assert code == 0 and "clustered-1m" in stdout and "uniform-100k" in stdout


def _no_leftovers(tmp_path, keep):
    assert sorted(os.listdir(tmp_path)) == sorted(keep)


@pytest.mark.parametrize("name, text, field, words", BAD_RECIPES, ids=[c[0] for c in BAD_RECIPES])
def test_bad_recipe_through_the_cli(tmp_path, capsys, name, text, field, words):
    p = write_bad_recipe(tmp_path, name, text)
    out = tmp_path / "out.npz"
    for argv in (["scene", "generate", str(p), "-o", str(out)], ["scene", "info", str(p)]):
        code, stdout, err = run_cli(*argv)
        assert code == 2
        assert "Traceback" not in err and err.count("\n") == 1
        assert str(p) in err and words in err
        if field:
            assert f"field '{field}'" in err
    _no_leftovers(tmp_path, [p.name])


@pytest.mark.parametrize("name, make, field, words", BAD_NPZ, ids=[c[0] for c in BAD_NPZ])
def test_bad_data_file_through_the_cli(tmp_path, capsys, name, make, field, words):
    p = tmp_path / f"{name}.npz"
    np.savez(p, **make())
    out = tmp_path / "out.npz"
    for argv in (["scene", "generate", str(p), "-o", str(out)], ["scene", "info", str(p)]):
        code, stdout, err = run_cli(*argv)
        assert code == 2 and "Traceback" not in err
        assert str(p) in err and f"field '{field}'" in err and words in err
    _no_leftovers(tmp_path, [p.name])


@pytest.mark.parametrize("name, damage, field, words", BROKEN_FILES, ids=[c[0] for c in BROKEN_FILES])
def test_broken_data_file_through_the_cli(tmp_path, capsys, name, damage, field, words):
    p = _good_npz(tmp_path)
    damage(p)
    code, stdout, err = run_cli("scene", "generate", str(p), "-o", str(tmp_path / "out.npz"))
    assert code == 2 and "Traceback" not in err and str(p) in err and words in err
    _no_leftovers(tmp_path, [p.name])


def test_a_failed_generate_keeps_the_previous_output(tmp_path, capsys):
    bad = write_bad_recipe(tmp_path, "bad", 'generator = "uniform"\nn = 0\n')
    out = tmp_path / "out.npz"
    out.write_bytes(b"previous")
    assert run_cli("scene", "generate", str(bad), "-o", str(out))[0] == 2
    assert out.read_bytes() == b"previous"
    _no_leftovers(tmp_path, ["bad.toml", "out.npz"])


UNIFORM = 'generator = "uniform"\nn = 100\n'
CITY, TERRAIN = 'generator = "city"\nn = 1000\n[params]\n', 'generator = "terrain"\nn = 1000\n[params]\n'


def _row(id: str, recipe: str, flags: list, words: list, status: int = 2):
    return pytest.param(recipe, flags, words, status, id=id)


#: every hostile recipe or flag of ``viewer scene generate``: (the recipe's text, flags after ``scene generate
#: RECIPE -o OUT``, words its one error line holds besides the recipe's name, exit status). A value that would
#: overflow later, or a grid too fine to build whole (the city's blocks, the terrain's noise lattices: 'Maximum
#: allowed size exceeded' tracebacks, or every block weight underflowing to NaN with two RuntimeWarnings), is
#: refused at load naming its field; no file is written and no numpy warning printed.
REFUSED = [
    _row("origin-past-the-domain", UNIFORM + "origin = [1e308, 1e308, 1e308]\n", [], ["field 'origin[0]'"]),
    _row("constant-radius-1e300", UNIFORM + '[radius]\nmodel = "constant"\nvalue = 1e300\n', [],
         ["field 'radius.value'"]),
    _row("world-1e-300", UNIFORM + "world = 1e-300\n", [], ["field 'world'"]),
    _row("city-downtown-1e-300", CITY + "downtown = 1e-300\n", [],
         ["params.downtown", "must be >= block / 100 (1.2)"]),
    _row("city-downtown-0.01", CITY + "downtown = 0.01\n", [], ["params.downtown", "must be >= block / 100 (1.2)"]),
    _row("city-block-1e-20", CITY + "block = 1e-20\nstreet = 0\n", [],
         ["params.block", "must be >= world / 1000 (10)"]),
    _row("terrain-hill-1e-300", TERRAIN + "hill_size = 1e-300\n", [],
         ["params.hill_size", "must be >= world / 1000 (10)"]),
    _row("n-0", UNIFORM, ["--n", "0"], ["--n"]),
    _row("n-1e12", UNIFORM, ["--n", "1e12"], ["--n"]),
    _row("n-not-a-number", UNIFORM, ["--n", "lots"], ["--n"]),
    _row("seed-negative", UNIFORM, ["--seed", "-4"], ["--seed"]),
    _row("hlod-cell-1e-300-in-the-recipe", UNIFORM + "[hlod]\ncell = 1e-300\n", [],
         ["field 'hlod.cell'", "2**62 cells", "larger cell"]),
    _row("hlod-1e-300", UNIFORM, ["--hlod", "1e-300"], ["--hlod 1e-300:", "2**62 cells", "larger cell"]),
    _row("hlod-1e-6", UNIFORM, ["--hlod", "1e-6"], ["--hlod 1e-06:", "2**62 cells", "larger cell"]),
    _row("hlod-5e-324", UNIFORM, ["--hlod", "5e-324"], ["--hlod 5e-324:", "2**62 cells", "larger cell"]),
    _row("hlod-past-the-domain", UNIFORM, ["--hlod", "1e31"], ["--hlod 1e+31:", "2**100"]),
    _row("hlod-0", UNIFORM, ["--hlod", "0"], ["argument --hlod", "> 0"]),
    _row("hlod-nan", UNIFORM, ["--hlod", "nan"], ["argument --hlod", "> 0"]),
    _row("hlod-inf", UNIFORM, ["--hlod", "inf"], ["argument --hlod", "> 0"]),
    _row("hlod-not-a-number", UNIFORM, ["--hlod", "wide"], ["argument --hlod", "'wide'"]),
    _row("radius-scale-past-the-domain", UNIFORM + '[radius]\nmodel = "constant"\nvalue = 1e25\n',
         ["--radius-scale", "1e6"], ["--radius-scale 1000000.0:", "outside the numeric domain"]),
]


@pytest.mark.parametrize("recipe, flags, words, status", REFUSED)
def test_a_hostile_recipe_or_flag_is_refused_with_one_line_and_nothing_written(tmp_path, recipe, flags, words,
                                                                                  status):
    p = tmp_path / "r.toml"
    p.write_text(recipe)
    code, _, err = run_cli("scene", "generate", p, "-o", tmp_path / "r.npz", *flags)
    assert code == status, err
    line = refused(code, err, *words, *([] if flags else [str(p)]))
    if flags:  # a value given on the command line is named as its flag, never as the recipe's field
        assert str(p) not in line and "field '" not in line, line
    assert "Warning" not in err, err
    assert sorted(os.listdir(tmp_path)) == ["r.toml"]


def test_bad_output_paths(tmp_path, capsys, recipe):
    for out, words in ((tmp_path / "o.txt", ".npz"), (tmp_path / "nodir" / "o.npz", "does not exist")):
        code, _, err = run_cli("scene", "generate", str(recipe), "-o", str(out))
        assert code == 2 and words in err and "-o/--output" in err
    code, _, err = run_cli("scene", "generate", str(_good_npz(tmp_path)), "--n", "5", "-o", str(tmp_path / "x.npz"))
    assert code == 2 and "apply only to a .toml recipe" in err
    _no_leftovers(tmp_path, ["good.npz", "mine.toml"])


def test_the_real_command_exits_2_without_a_traceback(tmp_path):
    bad = write_bad_recipe(tmp_path, "bad", 'generator = "uniform"\nn = 10\nworld = nan\n')
    proc = subprocess.run(
        [sys.executable, "-m", "viewer", "scene", "generate", str(bad), "-o", str(tmp_path / "o.npz")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"viewer scene: error: {bad}: field 'world': must be finite, got nan"
    _no_leftovers(tmp_path, ["bad.toml"])


def _listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


def test_an_empty_scene_argument(tmp_path):
    status, _, err = run_cli("scene", "info", "")
    refused(status, err, "SCENE", "empty")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_scene_that_is_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    p = tmp_path / "scene.npz"
    if kind == "fifo":
        os.mkfifo(p)
    else:
        p.symlink_to("/dev/zero")
    status, _, err = run_process("scene", "info", p, timeout=60)  # a hang fails here
    refused(status, err, str(p), "not a regular file")


def _read_only(d: Path) -> tuple[str, ...]:
    """A command prefix that runs the command with a read-only file system mounted at ``d`` (a private
    mount namespace: nothing outside the command sees it)."""
    if not shutil.which("unshare"):
        pytest.fail("unshare (util-linux) is needed for the read-only file system cases")
    d.mkdir(exist_ok=True)
    return ("unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o ro none "{d}" && exec "$0" "$@"')


def test_scene_generate_targets_are_checked_before_generating(tmp_path, small):
    (tmp_path / "x.npz").mkdir()
    status, _, err = run_cli("scene", "generate", small, "-o", tmp_path / "x.npz")
    refused(status, err, "-o/--output", "is a directory")
    assert _listing(tmp_path) == ["small.toml", "x.npz"]
    ro = tmp_path / "ro"
    status, _, err = run_process("scene", "generate", small, "-o", ro / "s.npz", prefix=_read_only(ro))
    refused(status, err, "-o/--output", "Read-only file system")


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
    status, out, err = run_cli("scene", "info", p)
    refused(status, err, str(p), "field 'name'", "control characters", "\\x1b]0;owned\\x07")
    assert "\x1b" not in out + err


@pytest.mark.parametrize("cell", ["1e-300", "1e-5"])
def test_an_hlod_cell_too_small_to_number_its_grid_is_refused(tmp_path, cell):
    """A recipe's [hlod] cell so small that its grid's cells cannot be numbered (1e-300: every cell index cast to
    one int64, all objects the children of one proxy; 1e-5: the cells' keys overflowing) is refused naming the
    file and the field, by 'scene info' as by 'scene generate' (the table above)."""
    recipe = tmp_path / "r.toml"
    recipe.write_text(SMALL + f"[hlod]\ncell = {cell}\n")
    status, _, err = run_cli("scene", "info", recipe)
    refused(status, err, str(recipe), "field 'hlod.cell'", "2**62 cells", "larger cell")
    assert "Warning" not in err


def test_a_count_too_large_for_memory_is_refused_naming_the_flag(tmp_path, small, monkeypatch):
    """--n past what the process may use is named as the flag and its value, not as the recipe's field 'n'."""
    import viewer.scenes.build as build

    monkeypatch.setattr(build, "available", lambda: (100_000_000, "a test's limit"))
    status, out, err = run_cli("scene", "generate", small, "--n", "1e7", "-o", tmp_path / "big.npz")
    line = refused(status, err, "--n 10000000:", "10,000,000 objects need about", "a test's limit")
    assert str(small) not in line and "field 'n'" not in line and out == ""
    assert sorted(os.listdir(tmp_path)) == ["small.toml"]


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
        status, out, err = run_cli("scene", "info", p)
        assert status == 0 and "Traceback" not in err, err
        first = out.splitlines()[0]
        assert "\ufffd" in first and "\x1b" not in first.split("(")[0], repr(first)


@pytest.mark.parametrize("entry", ["extras", "recipe", "look"])
def test_a_5000_digit_integer_in_a_scene_files_json_is_one_message(tmp_path, entry):
    """Python's JSON reader refuses an integer of more than 4,300 digits with a ValueError that is no
    JSONDecodeError. Before: a traceback from 'scene info' (the metadata and the camera paths already said so
    in one line)."""
    p = tmp_path / "big.npz"
    np.savez(p, format_version=np.array(2), centres=np.array([[0.0, 0, 0], [1, 1, 1]]), radii=np.ones(2),
             **{entry: np.array('{"a": ' + "1" * 5000 + "}")})
    status, _, err = run_cli("scene", "info", p)
    refused(status, err, str(p), f"field '{entry}'", "4300 digits")


def test_a_compressed_scene_file_too_big_to_load_is_refused_from_its_headers(tmp_path, monkeypatch):
    """A .npz entry of zeros compresses a thousandfold. Before: a 4.6 MB file (np.savez_compressed of
    150,000,000 centres and radii) was decompressed entry by entry (18 s, 3.6 GB under a 4 GB address-space
    limit) until numpy ran out, and then said 'field 'radii': cannot be read (truncated or corrupt file?):
    MemoryError: ...'. Now every entry's size is read from its .npy header and weighed against the memory the
    process may use before any is decompressed, naming the largest; a MemoryError while reading an entry
    is reported as memory, not as a damaged file."""
    import viewer.system.memory as memory

    n = 4_000_000
    src = tmp_path / "zeros.npz"
    np.savez_compressed(src, format_version=np.int64(2), centres=np.zeros((n, 3)), radii=np.zeros(n))
    assert src.stat().st_size < 1_000_000
    monkeypatch.setattr(memory, "available", lambda: (100_000_000, "a test's limit"))
    status, out, err = run_cli("scene", "info", src)
    refused(status, err, "zeros.npz", "'centres'", "the file's entries hold 128 MB (centres 96 MB)",
            "would need about 192 MB of memory; this process may use 100 MB (a test's limit)")
    assert out == ""

    monkeypatch.setattr(memory, "available", lambda: (1 << 62, "no limit known"))

    def no_memory(*a, **k):
        raise MemoryError("Unable to allocate 96 MB")

    monkeypatch.setattr(np.lib.format, "read_array", no_memory)
    status, out, err = run_cli("scene", "info", src)
    line = refused(status, err, "zeros.npz", "not enough memory to hold this scene")
    assert "corrupt" not in line


@pytest.mark.parametrize("provenance, field, words", [
    (5, "recipe.import", "must be a JSON object"),
    ({"format": "csv", "inf_means": "far"}, "recipe.import.inf_means", "must be a number, got 'far'"),
    ({"format": "glb", "lod_hints": 7}, "recipe.import.lod_hints", "must be a JSON object, got 7"),
    ({"format": "csv", "ranges": ["begin"]}, "recipe.import.ranges", "must be a JSON object"),
], ids=["not-a-table", "inf_means", "lod_hints", "ranges"])
def test_a_scene_file_whose_import_record_has_the_wrong_types_is_refused_naming_the_field(tmp_path, provenance,
                                                                                        field, words):
    """A recipe without a generator (an import's provenance, ``recipe.import``) was kept unchecked. Before:
    'viewer scene info' on a .npz whose recipe was {"import": 5} (or whose inf_means was a string, lod_hints a
    number, ranges a list) exited 1 with a traceback (AttributeError: 'int' object has no attribute 'get'; or
    ValueError: Unknown format code 'g'). Now the scene constructor checks the provenance's fields have the
    types an import writes, naming the field, for every command; a real import's record still loads."""
    import json

    src = tmp_path / "odd.npz"
    np.savez(src, format_version=np.int64(2), centres=np.zeros((3, 3)), radii=np.ones(3),
             recipe=np.str_(json.dumps({"import": provenance})))
    status, out, err = run_cli("scene", "info", src)
    refused(status, err, "odd.npz", f"'{field}'", words)
    assert out == ""

    table, good = tmp_path / "pts.csv", tmp_path / "good.npz"
    table.write_text("px,y,z,r,begin\n0,0,0,5,0\n1,1,1,5,0.5\n")
    assert run_cli("scene", "import", table, "--columns", "x=px", "-o", good)[0] == 0
    status, out, err = run_cli("scene", "info", good)
    assert status == 0 and "imported   csv file pts.csv" in out and "columns {'x': 'px'}" in out, err
