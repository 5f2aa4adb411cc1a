"""``viewer bench`` flags: the seed range is the scenes', --updates / --queries take the 1e4 notation
--n takes, an empty --index, a true/false option value, an option given twice, a bad or out-of-range index option:
each refused with one line naming the flag, before any scene is generated."""

from __future__ import annotations

import csv
import json

import pytest

from tests.support.cli import refused, run_cli, with_flags
from tests.support.hostile_index import spec as plugin_spec


TINY = ["bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--rounds", "1", "--dynamic", "none",
        "--no-plots", "--no-first-build"]


def _bench(args: list[str], out):
    """The tiny bench with ``args`` (each replacing the tiny bench's own value), into ``out``."""
    return run_cli(*with_flags(TINY, args), "--out", out)


def test_full_seed_range_and_1e_notation_are_accepted(tmp_path):
    out = tmp_path / "b"
    done = _bench(["--seed", str(2**63 - 1), "--updates", "1e2", "--queries", "1e1"], out)
    assert done.returncode == 0, done.stderr
    config = json.loads((out / "bench.json").read_text())["config"]
    assert (config["seed"], config["updates"], config["queries"]) == (2**63 - 1, 100, 10)
    for r in csv.DictReader(open(out / "bench.csv")):
        assert 0 < int(r["moves"]) <= 100


#: every hostile input of ``viewer bench``: (flags over the tiny bench's, words its one error line holds, exit
#: status). A bad index option is refused before the memory estimate, the first workload or any build (at 1e7
#: objects that was 12 s; so --n 1e6 here); an option out of range names its own range, never a radius's.
REFUSED = [
    pytest.param(["--seed", str(2**63)], ["--seed", "0..2**63-1"], 2, id="seed-past-2**63-1"),
    pytest.param(["--seed", "-1"], ["--seed", "0..2**63-1"], 2, id="seed-negative"),
    pytest.param(["--updates", "1.5"], ["--updates", "whole number"], 2, id="updates-not-whole"),
    pytest.param(["--queries", "0"], ["--queries", "1..1e6"], 2, id="queries-0"),
    pytest.param(["--index", ""], ["--index", "names no index"], 2, id="index-empty"),
    pytest.param(["--index", " ; "], ["--index", "names no index"], 2, id="index-blank-list"),
    pytest.param(["--index", "hashgrid:cell_size=true"], ["'hashgrid:cell_size=true'", "cell_size", "true"], 2,
                 id="option-true"),
    pytest.param(["--index", "octree:max_depth=8,max_depth=9"], ["'octree:max_depth=8,max_depth=9'", "twice"], 2,
                 id="option-twice"),
    pytest.param(["--drift", "0"], ["--drift", "positive"], 2, id="drift-0"),
    pytest.param(["--drift", "1e300"], ["--drift 1e+300", "numeric domain", "at most"], 2, id="drift-walks-out"),
    pytest.param(["--index", "coherent:relative=maybe"], ["--index 'coherent:relative=maybe'", "relative",
                                                           "true or false"], 2, id="bool-option-maybe"),
    pytest.param(["--index", "octree;" + plugin_spec("NoMove")], ["--index", "hostile_index.py:NoMove'",
                                                                  "does not implement the hook _move"], 2,
                 id="plugin-missing-a-hook"),
    pytest.param(["--n", "1e6", "--index", plugin_spec("Raises")],
                 ["--index", "hostile_index.py:Raises'", "RuntimeError: the plugin's own failure"], 2,
                 id="plugin-constructor-raises-before-any-work"),
    pytest.param(["--dynamic", "0"], ["--dynamic", "(0, 1]"], 2, id="dynamic-0"),
    pytest.param(["--dynamic", "-0.1"], ["--dynamic", "(0, 1]"], 2, id="dynamic-negative"),
    pytest.param(["--n", "1e6", "--index", "octree:max_depth=0"], ["--index octree:max_depth=0", "max_depth", "1..100"],
                 2, id="max_depth-0-before-any-work"),
    pytest.param(["--n", "1e6", "--index", "hashgrid:cell_size=0"],
                 ["--index hashgrid:cell_size=0", "cell_size", "(0, 2**100]"], 2, id="cell_size-0-before-any-work"),
    pytest.param(["--index", "hashgrid:cell_size=-1"], ["hashgrid: cell_size must be a number in (0, 2**100], got -1"],
                 2, id="cell_size-negative"),
    pytest.param(["--index", "buckettree:cell_size=1e300"],
                 ["buckettree: cell_size must be a number in (0, 2**100], got 1e+300"], 2, id="cell_size-huge"),
    pytest.param(["--index", "hgrid:base=-1"], ["hgrid: base must be a number in (0, 2**100], got -1"], 2,
                 id="base-negative"),
    pytest.param(["--index", "hgrid:cell_factor=-1"], ["cell_factor", "must be a number in [1, 2**100], got -1"], 2,
                 id="cell_factor-negative"),
]


@pytest.mark.parametrize("args, words, status", REFUSED)
def test_a_hostile_flag_is_refused_with_one_line_before_any_work(tmp_path, args, words, status):
    """Exit status 2, one error line naming the flag, nothing on stdout, no scene generated, no index built,
    no memory estimate, no output directory."""
    out = tmp_path / "b"
    code, stdout, err = _bench(["--queries", "2", "--updates", "0", *args], out)
    assert code == status
    line = refused(code, err, *words)
    assert stdout == "" and "radius" not in line
    assert "generated" not in err and "estimated" not in err and "built" not in err, err
    assert not out.exists()
