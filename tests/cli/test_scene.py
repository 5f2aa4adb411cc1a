"""``viewer scene generate / info / list``: output, exit status 2 on every bad input, nothing left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from viewer.scenes import load_scene
from tests.scenes.test_scene_files import BAD_NPZ, BAD_RECIPES, BROKEN_FILES, GOOD, _good_npz, write_bad_recipe
from viewer.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def recipe(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text(GOOD)
    return p


def test_generate_writes_the_recipes_scene(tmp_path, capsys, recipe):
    out = tmp_path / "out.npz"
    code, stdout, err = run(capsys, "scene", "generate", str(recipe), "-o", str(out))
    assert code == 0, err
    assert stdout.count("\n") == 1 and stdout.startswith(f"wrote {out}: mine, 2,000 objects (clustered, seed 5)")
    a, b = load_scene(recipe), load_scene(out)
    assert np.array_equal(a.centres, b.centres) and np.array_equal(a.radii, b.radii)
    assert np.array_equal(a.colours, b.colours) and np.array_equal(a.category, b.category)
    assert sorted(os.listdir(tmp_path)) == ["mine.toml", "out.npz"]


def test_generate_overrides_n_and_seed(tmp_path, capsys, recipe):
    out = tmp_path / "big.npz"
    code, stdout, err = run(capsys, "scene", "generate", str(recipe), "--n", "3e3", "--seed", "9", "-o", str(out))
    assert code == 0, err
    s = load_scene(out)
    assert s.n == 3000 and s.seed == 9 and s.recipe["n"] == 3000


def test_generate_default_output_is_the_stem_here(tmp_path, capsys, recipe, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, stdout, err = run(capsys, "scene", "generate", str(recipe), "--n", "50")
    assert code == 0, err
    assert (tmp_path / "mine.npz").exists()


def test_info_on_recipe_and_data_file(tmp_path, capsys, recipe):
    out = tmp_path / "out.npz"
    assert run(capsys, "scene", "generate", str(recipe), "-o", str(out))[0] == 0
    for src in (recipe, out):
        code, stdout, err = run(capsys, "scene", "info", str(src))
        assert code == 0, err
        assert "objects    2,000" in stdout
        assert "radii      min" in stdout and "p50" in stdout and "p99" in stdout
        assert "clusters   4;" in stdout
    code, stdout, _ = run(capsys, "scene", "info", str(out), "--json")
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
    code, stdout, err = run(capsys, "scene", "info", "remote-cluster-100k", "--json")
    assert code == 0, err
    d = json.loads(stdout)
    assert d["n"] == 100_000 and d["extras"]["remote"]["keep_out"] > 0


def test_list_shows_the_bundled_recipes(capsys):
    code, stdout, _ = run(capsys, "scene", "list")
    assert code == 0 and "clustered-1m" in stdout and "uniform-100k" in stdout


def _no_leftovers(tmp_path, keep):
    assert sorted(os.listdir(tmp_path)) == sorted(keep)


@pytest.mark.parametrize("name, text, field, words", BAD_RECIPES, ids=[c[0] for c in BAD_RECIPES])
def test_bad_recipe_through_the_cli(tmp_path, capsys, name, text, field, words):
    p = write_bad_recipe(tmp_path, name, text)
    out = tmp_path / "out.npz"
    for argv in (["scene", "generate", str(p), "-o", str(out)], ["scene", "info", str(p)]):
        code, stdout, err = run(capsys, *argv)
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
        code, stdout, err = run(capsys, *argv)
        assert code == 2 and "Traceback" not in err
        assert str(p) in err and f"field '{field}'" in err and words in err
    _no_leftovers(tmp_path, [p.name])


@pytest.mark.parametrize("name, damage, field, words", BROKEN_FILES, ids=[c[0] for c in BROKEN_FILES])
def test_broken_data_file_through_the_cli(tmp_path, capsys, name, damage, field, words):
    p = _good_npz(tmp_path)
    damage(p)
    code, stdout, err = run(capsys, "scene", "generate", str(p), "-o", str(tmp_path / "out.npz"))
    assert code == 2 and "Traceback" not in err and str(p) in err and words in err
    _no_leftovers(tmp_path, [p.name])


def test_a_failed_generate_keeps_the_previous_output(tmp_path, capsys):
    bad = write_bad_recipe(tmp_path, "bad", 'generator = "uniform"\nn = 0\n')
    out = tmp_path / "out.npz"
    out.write_bytes(b"previous")
    assert run(capsys, "scene", "generate", str(bad), "-o", str(out))[0] == 2
    assert out.read_bytes() == b"previous"
    _no_leftovers(tmp_path, ["bad.toml", "out.npz"])


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--n", "0"], "--n"),
        (["--n", "1e12"], "--n"),
        (["--n", "lots"], "--n"),
        (["--seed", "-4"], "--seed"),
    ],
)
def test_bad_flags_exit_2(tmp_path, capsys, recipe, argv, words):
    with pytest.raises(SystemExit) as exc:
        main(["scene", "generate", str(recipe), "-o", str(tmp_path / "o.npz"), *argv])
    assert exc.value.code == 2
    assert words in capsys.readouterr().err
    _no_leftovers(tmp_path, ["mine.toml"])


def test_bad_output_paths(tmp_path, capsys, recipe):
    for out, words in ((tmp_path / "o.txt", ".npz"), (tmp_path / "nodir" / "o.npz", "does not exist")):
        code, _, err = run(capsys, "scene", "generate", str(recipe), "-o", str(out))
        assert code == 2 and words in err and "-o/--output" in err
    code, _, err = run(capsys, "scene", "generate", str(_good_npz(tmp_path)), "--n", "5", "-o", str(tmp_path / "x.npz"))
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
