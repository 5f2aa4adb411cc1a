"""What an ``--index`` text means (viewer.index.specs): a registered name, an installed plugin's name, a
``module:Class``, a ``file.py:Class``, each with typed options; one list grammar; the one boolean rule; every
mistake a plugin author can make refused with one message naming the spec."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

from tests.support import hostile_index
from viewer.errors import UserError
from viewer.index import (ENTRY_POINT_GROUP, INDEXES, installed_plugins, make_index, parse_index_list,
                          parse_index_spec)
from viewer.index.specs import label_stem, split_index_list

PLUGIN_MODULE = '''
from viewer.index import BruteForce


class PlugIndex(BruteForce):
    def __init__(self, centres, radii, leaf: int = 8):
        super().__init__(centres, radii)
        self.leaf = leaf
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """An installed plugin ``plugtest`` (a module and its distribution's entry point on sys.path), as
    ``pip install`` of a package declaring it would leave it."""
    (tmp_path / "plugtest_mod.py").write_text(PLUGIN_MODULE)
    info = tmp_path / "plugtest-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugtest\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nplugtest = plugtest_mod:PlugIndex\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "plugtest"
    sys.modules.pop("plugtest_mod", None)


def test_a_registered_name_with_options_is_its_class_with_typed_options():
    spec = parse_index_spec(" hashgrid:cell_size=20,max_span=4,cell_scale=2.5 ")
    assert spec.label == "hashgrid:cell_size=20,max_span=4,cell_scale=2.5"
    assert (spec.name, spec.cls) == ("hashgrid", INDEXES["hashgrid"])
    assert spec.options == {"cell_size": 20, "max_span": 4, "cell_scale": 2.5}
    assert type(spec.options["cell_scale"]) is float and type(spec.options["max_span"]) is int


@pytest.mark.parametrize("text, value", [(t, True) for t in ("true", "TRUE", "yes", "On", "1")]
                         + [(t, False) for t in ("false", "False", "no", "OFF", "0")])
def test_a_boolean_option_follows_the_one_rule(text, value):
    assert parse_index_spec(f"coherent:relative={text}").options == {"relative": value}


@pytest.mark.parametrize("text", ["maybe", "2", "t", "nope", "truee"])
def test_a_boolean_option_refuses_any_other_text_naming_the_spec_and_the_option(text):
    with pytest.raises(UserError, match=rf"'coherent:relative={text}'.*option relative.*true or false"):
        parse_index_spec(f"coherent:relative={text}")


def test_the_coherent_index_built_with_relative_off_is_not_relative():
    ix = make_index(parse_index_spec("coherent:relative=off"), np.zeros((1, 3)), np.ones(1))
    assert ix.relative is False


@pytest.mark.parametrize("words, labels", [
    ("octree", ["octree"]),
    ("octree,bvh", ["octree", "bvh"]),
    ("octree;hashgrid:cell_size=64;hashgrid:cell_size=16", ["octree", "hashgrid:cell_size=64",
                                                            "hashgrid:cell_size=16"]),
    ("octree,hashgrid:cell_size=20,max_span=4,bvh", ["octree", "hashgrid:cell_size=20,max_span=4", "bvh"]),
    (["octree", "bvh;scan", " kdtree "], ["octree", "bvh", "scan", "kdtree"]),
    (" ; ,", []),
])
def test_one_list_grammar_reads_every_commands_old_spelling(words, labels):
    assert split_index_list([words] if isinstance(words, str) else words) == labels


def test_an_empty_list_is_refused_naming_the_flag():
    with pytest.raises(UserError, match="--index ' ; ' names no index"):
        parse_index_list(" ; ")


def test_a_module_spec_imports_the_class_with_its_options(tmp_path, monkeypatch):
    (tmp_path / "specmod_pkg").mkdir()
    (tmp_path / "specmod_pkg" / "__init__.py").write_text("")
    (tmp_path / "specmod_pkg" / "idx.py").write_text(PLUGIN_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = parse_index_spec("specmod_pkg.idx:PlugIndex:leaf=16")
    assert (spec.name, spec.cls.__module__, spec.options) == ("PlugIndex", "specmod_pkg.idx", {"leaf": 16})
    assert make_index(spec, [[0.0, 0.0, 0.0]], [1.0]).leaf == 16


def test_a_file_spec_loads_the_file_once_and_pickles_as_its_text(monkeypatch):
    monkeypatch.chdir(hostile_index.PATH.rsplit("/", 1)[0])
    spec = parse_index_spec("./hostile_index.py:Fine:leaf=4,scale=0.5,exact=no,tag=a")
    assert spec.name == "Fine" and spec.options == {"leaf": 4, "scale": 0.5, "exact": False, "tag": "a"}
    assert parse_index_spec("hostile_index.py:Fine").cls is spec.cls  # one module a file, one class
    assert spec.text == f"{hostile_index.PATH}:Fine:leaf=4,scale=0.5,exact=false,tag=a"
    back = pickle.loads(pickle.dumps(spec))
    assert (back.label, back.cls, back.options) == (spec.label, spec.cls, spec.options)
    ix = make_index(spec.label, [[0.0, 0.0, 0.0], [5.0, 0.0, 0.0]], [1.0, 1.0])
    assert ix.leaf == 4 and ix.query([0.5, 0.0, 0.0]).tolist() == [0]
    assert label_stem(spec.label) == "hostile_index.py:Fine:leaf=4,scale=0.5,exact=no,tag=a"


def test_an_installed_plugin_is_found_by_its_entry_point_name(plugin):
    from viewer.frame.culling import index_names

    assert installed_plugins()[plugin] == "plugtest_mod:PlugIndex"
    spec = parse_index_list(f"octree,{plugin}:leaf=3")[1]
    assert (spec.label, spec.name, spec.cls.__name__, spec.options) == ("plugtest:leaf=3", plugin, "PlugIndex",
                                                                         {"leaf": 3})
    assert plugin in index_names() and plugin in index_names(available=True)  # the window's I cycle


def test_the_bench_measures_an_installed_plugin_by_default_and_leaves_out_one_that_does_not_load(plugin, tmp_path,
                                                                                                 monkeypatch):
    """``viewer bench`` without --index: every registered index, then the plugins that load (a broken one is
    left out, as from the window's list, rather than refusing the whole bench)."""
    from viewer.bench.checks import check_indexes, default_indexes

    info = tmp_path / "broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nbroken = no_such_module_here:Nothing\n")
    assert {plugin, "broken"} <= set(installed_plugins())
    names = default_indexes().split(",")
    assert names == [*sorted(INDEXES), plugin]
    assert [s.name for s in check_indexes(default_indexes())][-1] == plugin


def test_make_index_keeps_registered_names_and_their_key_error():
    assert make_index("octree", np.zeros((2, 3)), np.ones(2), max_depth=8).query([0.0, 0.0, 0.0]).size == 2
    with pytest.raises(KeyError, match="unknown index 'nosuch'"):
        make_index("nosuch", np.zeros((1, 3)), np.ones(1))


def test_a_spec_is_resolved_again_in_a_fresh_process_for_its_first_build(tmp_path):
    from viewer.bench.measure import measure_first_build

    np.save(tmp_path / "c.npy", np.zeros((3, 3)))
    np.save(tmp_path / "r.npy", np.ones(3))
    spec = parse_index_spec(hostile_index.spec("Fine", "leaf=2"))
    assert np.isfinite(measure_first_build(spec.text, str(tmp_path / "c.npy"), str(tmp_path / "r.npy")))
    assert np.isnan(measure_first_build(hostile_index.spec("Raises"), str(tmp_path / "c.npy"),
                                        str(tmp_path / "r.npy")))


F = hostile_index.spec

#: every mistake a plugin author (or a user) can make in a spec: (text, words the one message holds)
REFUSED = [
    pytest.param("nosuch", ["--index", "unknown index 'nosuch'", "octree", "package.module:Class"], id="unknown-name"),
    pytest.param("no_such_pkg_x.mod:Cls", ["'no_such_pkg_x.mod:Cls'", "does not import",
                                           "ModuleNotFoundError: No module named 'no_such_pkg_x'"],
                 id="module-does-not-import"),
    pytest.param("{tmp}/broken.py:X", ["broken.py:X'", "does not import", "SyntaxError", "line 1"],
                 id="file-with-a-syntax-error"),
    pytest.param("{tmp}/raising.py:X", ["raising.py:X'", "does not import", "ZeroDivisionError"],
                 id="file-that-raises-on-import"),
    pytest.param("{tmp}/none.py:X", ["none.py:X'", "no such file"], id="file-missing"),
    pytest.param(F(""), ["hostile_index.py", "names its class"], id="file-without-a-class"),
    pytest.param(F("Nope"), ["hostile_index.py:Nope'", "no class 'Nope'", "Fine, NoMove, Raises"],
                 id="class-missing"),
    pytest.param(F("not_a_class"), ["'not_a_class'", "not a class but a int"], id="not-a-class"),
    pytest.param(F("NotAnIndex"), ["NotAnIndex does not follow the index protocol", "SphereIndex", "_query"],
                 id="not-a-sphere-index"),
    pytest.param(F("NoMove"), ["NoMove does not implement the hook _move"], id="missing-hook"),
    pytest.param(F("Raises"), ["hostile_index.py:Raises'", "raised RuntimeError: the plugin's own failure"],
                 id="constructor-raises"),
    pytest.param(F("Fine", "bogus=1"), ["Fine takes no option 'bogus'", "leaf, scale, exact, tag"],
                 id="option-not-taken"),
    pytest.param(F("Fine", "leaf=lots"), ["option leaf must be a whole number", "'lots'"], id="int-option-text"),
    pytest.param(F("Fine", "leaf=1.5"), ["option leaf must be a whole number", "'1.5'"], id="int-option-fraction"),
    pytest.param(F("Fine", "scale=wide"), ["option scale must be a number", "'wide'"], id="float-option-text"),
    pytest.param(F("Fine", "exact=maybe"), ["option exact is true or false", "'maybe'"], id="bool-option-maybe"),
    pytest.param(F("Fine", "leaf=2,leaf=3"), ["option 'leaf' is given twice"], id="option-twice"),
    pytest.param(F("Fine", "leaf"), ["key=value"], id="option-without-value"),
    pytest.param("octree:max_depth=0", ["--index octree:max_depth=0", "max_depth"], id="registered-option-range"),
    pytest.param("hashgrid:cell_size=true", ["'hashgrid:cell_size=true'", "cell_size", "true"],
                 id="untyped-option-true"),
]


@pytest.mark.parametrize("text, words", REFUSED)
def test_a_bad_spec_is_one_message_naming_it(tmp_path, text, words):
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "raising.py").write_text("1 / 0\n")
    text = text.replace("{tmp}", str(tmp_path))
    with pytest.raises(UserError) as caught:
        parse_index_list(text)
    message = str(caught.value)
    assert "\n" not in message
    for w in words:
        assert w in message, message

