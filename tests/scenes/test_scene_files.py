"""Scene files: TOML recipes and the .npz format, their round trip, and every kind of bad input."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from viewer.scenes.format import READ_VERSIONS
from viewer.scenes import (
    FORMAT_VERSION,
    RECIPE_FIELDS,
    SceneError,
    bundled_recipes,
    check_recipe,
    generate_recipe,
    generate_scene,
    load_scene,
    read_recipe,
    save_scene,
)

GOOD = """\
generator = "clustered"
n = 2_000
seed = 5
world = 1000.0

[params]
clusters = 4
background = 0.25

[radius]
model = "log-uniform"
min = 2.0
max = 40.0

[look]
colour_by = "cluster"
size = { model = "constant", value = 1.5 }
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def same_arrays(a, b) -> bool:
    return all(
        np.array_equal(getattr(a, k), getattr(b, k))
        for k in ("centres", "radii", "sizes", "colours", "category", "cluster_centres", "cluster_spread")
    )


# --------------------------------------------------------------------------- good files


def test_recipe_file_generates_the_scene_it_describes(tmp_path):
    p = write(tmp_path / "mine.toml", GOOD)
    s = load_scene(p)
    assert s.name == "mine" and s.n == 2000 and s.seed == 5 and s.world == 1000.0
    assert s.source == str(p) and s.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    assert s.recipe["params"]["clusters"] == 4 and s.cluster_centres.shape == (4, 3)
    assert (s.sizes == 1.5).all() and s.radii.min() >= 2.0 and s.radii.max() <= 40.0
    ref = generate_scene(
        "clustered", 2000, seed=5, world=1000.0, radius={"model": "log-uniform", "min": 2.0, "max": 40.0},
        look={"colour_by": "cluster", "size": {"model": "constant", "value": 1.5}}, clusters=4, background=0.25,
    )
    assert same_arrays(s, ref)


def test_round_trip_recipe_to_file_to_arrays(tmp_path):
    s = load_scene(write(tmp_path / "mine.toml", GOOD))
    out = save_scene(s, tmp_path / "mine.npz")
    assert sorted(os.listdir(tmp_path)) == ["mine.npz", "mine.toml"]  # no temporary file left
    t = load_scene(out)
    assert same_arrays(s, t)
    for k in ("centres", "radii", "sizes", "colours", "category"):
        assert getattr(t, k).dtype == getattr(s, k).dtype
    assert t.name == s.name and t.seed == s.seed and t.world == s.world
    assert t.origin.tolist() == s.origin.tolist()
    assert t.recipe == s.recipe and t.extras == s.extras
    assert t.sha256 == hashlib.sha256(out.read_bytes()).hexdigest() and t.source == str(out)
    with np.load(out, allow_pickle=False) as z:
        assert int(z["format_version"]) == FORMAT_VERSION


@pytest.mark.parametrize("kind", ["clustered", "remote-cluster", "octaves"])
def test_a_checked_recipe_checks_to_itself(tmp_path, kind):
    s = generate_scene(kind, 200, seed=1, world=1000.0)
    assert check_recipe(s.recipe) == s.recipe
    t = load_scene(save_scene(s, tmp_path / "s.npz"))
    assert check_recipe(t.recipe) == s.recipe
    assert np.array_equal(generate_recipe(t.recipe).centres, s.centres)


def test_saving_twice_gives_the_same_bytes(tmp_path):
    s = generate_scene("remote-cluster", 500, seed=1, world=100.0, spread=2.0)
    a = save_scene(s, tmp_path / "a.npz").read_bytes()
    b = save_scene(s, tmp_path / "b.npz").read_bytes()
    assert hashlib.sha256(a).digest() == hashlib.sha256(b).digest()


def test_minimal_data_file_from_elsewhere_gets_defaults(tmp_path):
    c = np.array([[0.0, 0.0, 0.0], [10.0, 4.0, -2.0], [-10.0, 0.0, 2.0]], dtype=np.float32)
    np.savez(tmp_path / "ext.npz", format_version=1, centres=c, radii=np.array([1, 2, 3]))
    s = load_scene(tmp_path / "ext.npz")
    assert s.name == "ext" and s.n == 3 and s.recipe is None and s.seed == 0
    assert s.centres.dtype == np.float64 and s.radii.dtype == np.float64
    assert (s.category == -1).all() and s.colours.shape == (3, 4) and (s.colours[:, 3] == 255).all()
    assert s.sizes.dtype == np.float32 and (s.sizes > 0).all()
    lo, hi = s.bounds
    assert (s.centres >= lo).all() and (s.centres <= hi).all() and s.world == 20.0


def test_rgb_colours_get_opaque_alpha(tmp_path):
    np.savez(
        tmp_path / "rgb.npz", format_version=1, centres=np.zeros((2, 3)), radii=np.ones(2),
        colours=np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64),
    )
    assert load_scene(tmp_path / "rgb.npz").colours.tolist() == [[1, 2, 3, 255], [4, 5, 6, 255]]


def test_bundled_recipes_are_valid_and_cover_every_generator():
    from viewer.scenes import GENERATORS

    bundled = bundled_recipes()
    for name in ("uniform-1m", "clustered-1m", "diagonal-1m", "remote-cluster-1m"):
        assert name in bundled
    gens = set()
    for name, path in bundled.items():
        text = path.read_text()
        assert text.startswith("#") and "[radius]" in text, name
        r = check_recipe(read_recipe(path))
        gens.add(r["generator"])
        assert r["name"] == name
        assert r["n"] in (100_000, 1_000_000), name
    assert gens == set(GENERATORS)
    assert {f"{g}-100k" for g in GENERATORS} <= set(bundled)


@pytest.mark.parametrize("name", sorted(n for n in bundled_recipes() if n.endswith("-100k")))
def test_bundled_recipes_generate(name):
    r = read_recipe(bundled_recipes()[name])
    r["n"] = 3000
    s = generate_recipe(r)
    lo, hi = s.bounds
    proxies = 0 if s.parent is None else int(np.unique(s.parent[s.parent >= 0]).size)  # [hlod]: appended
    assert s.n == 3000 + proxies and (s.centres >= lo).all() and (s.centres <= hi).all()


def test_a_bundled_recipe_can_be_named_by_its_stem(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SceneError, match="bundled recipes: .*clustered-100k"):
        load_scene("no-such-scene")
    from viewer.scenes import resolve_scene_path

    assert resolve_scene_path("clustered-100k") == bundled_recipes()["clustered-100k"]
    assert resolve_scene_path("clustered-100k.toml") == bundled_recipes()["clustered-100k"]


def test_the_recipe_fields_are_documented_in_the_readme():
    readme = (Path(__file__).resolve().parents[2] / "scenes" / "README.md").read_text()
    section = readme[readme.index("## Scene files") :]
    for field in RECIPE_FIELDS:
        assert f"`{field}`" in section, field


# --------------------------------------------------------------------------- bad recipes

# (name, text, the field the error must name or None for a file-level error, words in the message)
BAD_RECIPES = [
    ("no-generator", 'n = 10\n', "generator", "missing"),
    ("no-n", 'generator = "uniform"\n', "n", "missing"),
    ("unknown-field", 'generator = "uniform"\nn = 10\ncolour = "red"\n', "colour", "unknown"),
    ("unknown-generator", 'generator = "spiral"\nn = 10\n', "generator", "must be one of"),
    ("unknown-param", 'generator = "clustered"\nn = 10\n[params]\nclustrs = 4\n', "params.clustrs", "unknown"),
    ("param-for-paramless", 'generator = "uniform"\nn = 10\n[params]\njitter = 4\n', "params.jitter", "unknown"),
    ("unknown-radius-field", 'generator = "uniform"\nn = 10\n[radius]\nmodel = "heavy-tailed"\ntial = 0.1\n',
     "radius.tial", "unknown"),
    ("unknown-radius-model", 'generator = "uniform"\nn = 10\n[radius]\nmodel = "gamma"\n', "radius.model", "gamma"),
    ("radius-no-model", 'generator = "uniform"\nn = 10\n[radius]\nmin = 3\n', "radius.model", "missing"),
    ("radius-not-table", 'generator = "uniform"\nn = 10\nradius = 5\n', "radius", "table"),
    ("n-string", 'generator = "uniform"\nn = "many"\n', "n", "integer"),
    ("n-fraction", 'generator = "uniform"\nn = 10.5\n', "n", "integer"),
    ("n-bool", 'generator = "uniform"\nn = true\n', "n", "integer"),
    ("n-zero", 'generator = "uniform"\nn = 0\n', "n", ">= 1"),
    ("n-negative", 'generator = "uniform"\nn = -5\n', "n", ">= 1"),
    ("n-absurd", 'generator = "uniform"\nn = 1e12\n', "n", "<= 5e+08"),
    ("seed-float", 'generator = "uniform"\nn = 10\nseed = 1.5\n', "seed", "integer"),
    ("seed-negative", 'generator = "uniform"\nn = 10\nseed = -1\n', "seed", ">= 0"),
    ("world-string", 'generator = "uniform"\nn = 10\nworld = "big"\n', "world", "number"),
    ("world-nan", 'generator = "uniform"\nn = 10\nworld = nan\n', "world", "finite"),
    ("world-inf", 'generator = "uniform"\nn = 10\nworld = inf\n', "world", "finite"),
    ("world-negative", 'generator = "uniform"\nn = 10\nworld = -10.0\n', "world", ">= 1e-06"),
    ("origin-nan", 'generator = "uniform"\nn = 10\norigin = [0.0, nan, 0.0]\n', "origin[1]", "finite"),
    ("origin-short", 'generator = "uniform"\nn = 10\norigin = [0.0, 1.0]\n', "origin", "3 numbers"),
    ("param-inf", 'generator = "diagonal"\nn = 10\n[params]\njitter = inf\n', "params.jitter", "finite"),
    ("param-wrong-type", 'generator = "clustered"\nn = 10\n[params]\nclusters = true\n', "params.clusters", "integer"),
    ("param-range", 'generator = "clustered"\nn = 10\n[params]\nbackground = 1.5\n', "params.background", "<= 1"),
    ("negative-radius", 'generator = "uniform"\nn = 10\n[radius]\nmodel = "constant"\nvalue = -2.0\n',
     "radius.value", ">= 0"),
    ("radius-nan", 'generator = "uniform"\nn = 10\n[radius]\nmodel = "constant"\nvalue = nan\n', "radius.value", "finite"),
    ("radius-min-above-max", 'generator = "uniform"\nn = 10\n[radius]\nmodel = "log-uniform"\nmin = 9.0\nmax = 3.0\n',
     "radius.min", "<= max"),
    ("look-unknown", 'generator = "uniform"\nn = 10\n[look]\ncolor_by = "radius"\n', "look.color_by", "unknown"),
    ("look-choice", 'generator = "uniform"\nn = 10\n[look]\ncolour_by = "rainbow"\n', "look.colour_by", "one of"),
    ("look-palette", 'generator = "uniform"\nn = 10\n[look]\npalette = ["#ff0000", "red"]\n', "look.palette[1]", "#rrggbb"),
    ("look-size-model", 'generator = "uniform"\nn = 10\n[look]\nsize = { model = "huge" }\n', "look.size.model", "huge"),
    ("look-size-negative", 'generator = "uniform"\nn = 10\n[look]\nsize = { model = "constant", value = -1 }\n',
     "look.size.value", ">= 0"),
    ("motion-share", 'generator = "uniform"\nn = 10\n[motion]\nshare = 1.5\n', "motion.share", "<= 1"),
    ("motion-unknown", 'generator = "uniform"\nn = 10\n[motion]\nvelocity = 3\n', "motion.velocity", "unknown"),
    ("remote-outside", 'generator = "remote-cluster"\nn = 10\nworld = 100.0\n[params]\nspread = 5.0\nposition = [0.0, 0.0, 80.0]\n',
     "params.position", "inside"),
    ("syntax", 'generator = "uniform"\nn = = 10\n', None, "not valid TOML"),
    ("not-utf8", b"generator = '\xff\xfe'\n", None, "UTF-8"),
]


def write_bad_recipe(tmp_path: Path, name: str, text) -> Path:
    p = tmp_path / f"{name}.toml"
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


@pytest.mark.parametrize("name, text, field, words", BAD_RECIPES, ids=[c[0] for c in BAD_RECIPES])
def test_bad_recipe_gives_one_error_naming_file_and_field(tmp_path, name, text, field, words):
    p = write_bad_recipe(tmp_path, name, text)
    with pytest.raises(SceneError) as err:
        load_scene(p)
    e = err.value
    assert e.source == str(p) and str(p) in str(e)
    assert e.field == field
    if field:
        assert f"field '{field}'" in str(e)
    assert words in str(e)


# --------------------------------------------------------------------------- bad data files


def _arrays(n=4):
    rng = np.random.default_rng(0)
    return {
        "format_version": np.array(1),
        "centres": rng.uniform(-5, 5, (n, 3)),
        "radii": rng.uniform(1, 2, n),
        "sizes": np.ones(n, dtype=np.float32),
        "colours": np.full((n, 4), 200, dtype=np.uint8),
        "category": np.array([0, 1, -1, 0][:n], dtype=np.int32),
        "cluster_centres": np.zeros((2, 3)),
        "cluster_spread": np.ones(2),
        "world": np.array(20.0),
    }


def _with(**changes):
    def make():
        a = _arrays()
        for k, v in changes.items():
            if v is None:
                del a[k]
            else:
                a[k] = v(a) if callable(v) else v
        return a

    return make


def _nan_at(key, index):
    def f(a):
        v = a[key].astype(np.float64)
        v[index] = np.nan
        return v

    return f


BAD_NPZ = [
    ("missing-centres", _with(centres=None), "centres", "missing"),
    ("missing-radii", _with(radii=None), "radii", "missing"),
    ("missing-version", _with(format_version=None), "format_version", "missing"),
    ("unknown-entry", _with(colors=np.zeros((4, 4), dtype=np.uint8)), "colors", "unknown entry"),
    ("future-version", _with(format_version=np.array(READ_VERSIONS[-1] + 1)), "format_version",
     f"unknown format version {READ_VERSIONS[-1] + 1}"),
    ("version-float", _with(format_version=np.array(1.0)), "format_version", "integers"),
    ("centres-nan", _with(centres=_nan_at("centres", (2, 1))), "centres", "centres[2, 1]"),
    ("centres-inf", _with(centres=lambda a: a["centres"] * np.array([1.0, np.inf, 1.0])), "centres", "finite"),
    ("centres-2d", _with(centres=lambda a: a["centres"][:, :2]), "centres", "(N, 3)"),
    ("centres-text", _with(centres=np.array([["a", "b", "c"]] * 4)), "centres", "real numbers"),
    ("centres-empty", _with(centres=np.zeros((0, 3)), radii=np.zeros(0), sizes=None, colours=None, category=None),
     "centres", "no objects"),
    ("radii-negative", _with(radii=lambda a: a["radii"] * np.array([1, 1, -1, 1])), "radii", "radii[2]"),
    ("radii-nan", _with(radii=_nan_at("radii", 0)), "radii", "finite"),
    ("radii-short", _with(radii=lambda a: a["radii"][:3]), "radii", "3 rows but centres has 4"),
    ("sizes-long", _with(sizes=np.ones(5, dtype=np.float32)), "sizes", "5 rows"),
    ("sizes-negative", _with(sizes=np.array([1, -1, 1, 1], dtype=np.float32)), "sizes", ">= 0"),
    ("colours-range", _with(colours=np.full((4, 4), 300)), "colours", "0..255"),
    ("colours-float", _with(colours=np.full((4, 4), 0.5)), "colours", "integers"),
    ("colours-short", _with(colours=np.full((3, 4), 9, dtype=np.uint8)), "colours", "3 rows"),
    ("category-below", _with(category=np.array([0, -2, 0, 0])), "category", ">= -1"),
    ("category-above", _with(category=np.array([0, 5, 0, 0])), "category", "< the number of clusters"),
    ("spread-mismatch", _with(cluster_spread=np.ones(3)), "cluster_spread", "3 rows but cluster_centres has 2"),
    ("world-nan", _with(world=np.array(np.nan)), "world", "finite"),
    ("world-too-small", _with(world=np.array(2.0)), "world", "outside the world box"),
    ("pickled-object", _with(radii=np.array([1.0, 2.0, None, 3.0], dtype=object)), "radii", "cannot be read"),
    ("recipe-json", _with(recipe=np.array("{not json")), "recipe", "JSON"),
    ("name-array", _with(name=np.array(["a", "b"])), "name", "single string"),
]


@pytest.mark.parametrize("name, make, field, words", BAD_NPZ, ids=[c[0] for c in BAD_NPZ])
def test_bad_data_file_gives_one_error_naming_file_and_field(tmp_path, name, make, field, words):
    p = tmp_path / f"{name}.npz"
    np.savez(p, **make())
    with pytest.raises(SceneError) as err:
        load_scene(p)
    e = err.value
    assert e.source == str(p) and e.field == field and f"field '{field}'" in str(e)
    assert words in str(e)


def test_the_valid_base_of_the_bad_cases_loads(tmp_path):
    np.savez(tmp_path / "ok.npz", **_arrays())
    s = load_scene(tmp_path / "ok.npz")
    assert s.n == 4 and s.category.tolist() == [0, 1, -1, 0]


def _good_npz(tmp_path) -> Path:
    return save_scene(generate_scene("clustered", 300, seed=1, world=100.0, clusters=3, spread_min=1.0, spread_max=5.0),
                      tmp_path / "good.npz")


def _truncate(p: Path):
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _corrupt_member(p: Path):
    # flip bytes inside the stored `radii` array: the zip CRC check catches it on read
    data = bytearray(p.read_bytes())
    i = data.index(b"radii.npy") + 200
    data[i : i + 16] = bytes(16)
    p.write_bytes(bytes(data))


def _empty(p: Path):
    p.write_bytes(b"")


def _text(p: Path):
    p.write_text("centres,radii\n1,2,3,4\n")


def _npy(p: Path):
    with open(p, "wb") as fh:
        np.save(fh, np.zeros((3, 3)))


BROKEN_FILES = [
    ("truncated", _truncate, None, "truncated or corrupt"),
    ("corrupt-member", _corrupt_member, "radii", "cannot be read"),
    ("empty", _empty, None, "not a readable .npz"),
    ("text", _text, None, "not a readable .npz"),
    ("npy", _npy, None, "not a .npz archive"),
]


@pytest.mark.parametrize("name, damage, field, words", BROKEN_FILES, ids=[c[0] for c in BROKEN_FILES])
def test_truncated_or_corrupt_files(tmp_path, name, damage, field, words):
    p = _good_npz(tmp_path)
    damage(p)
    with pytest.raises(SceneError) as err:
        load_scene(p)
    assert err.value.source == str(p) and err.value.field == field
    assert words in str(err.value)


@pytest.mark.parametrize(
    "name, words",
    [("missing.toml", "no such file"), ("scene.obj", "unknown kind of scene file"), ("adir", "is a directory")],
)
def test_unusable_paths(tmp_path, name, words):
    p = tmp_path / name
    if name == "scene.obj":
        p.write_text("v 1 2 3\n")
    if name == "adir":
        p.mkdir()
    with pytest.raises(SceneError, match=words) as err:
        load_scene(p)
    assert str(p) in str(err.value)


# --------------------------------------------------------------------------- atomic writes


def test_a_failed_save_leaves_nothing_behind(tmp_path, monkeypatch):
    s = generate_scene("uniform", 100, seed=1, world=10.0)
    target = tmp_path / "s.npz"
    target.write_bytes(b"the previous file")

    def boom(fh, **arrays):
        fh.write(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(SceneError, match="cannot write: disk full") as err:
        save_scene(s, target)
    assert err.value.source == str(target)
    assert os.listdir(tmp_path) == ["s.npz"] and target.read_bytes() == b"the previous file"


def test_save_refuses_other_suffixes_and_missing_directories(tmp_path):
    s = generate_scene("uniform", 10, seed=1, world=10.0)
    with pytest.raises(SceneError, match=r"\.npz"):
        save_scene(s, tmp_path / "s.txt")
    with pytest.raises(SceneError, match="does not exist"):
        save_scene(s, tmp_path / "nope" / "s.npz")
    assert os.listdir(tmp_path) == []
