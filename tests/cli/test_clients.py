"""``viewer clients``: every hostile flag refused with one line naming it, nothing written; the verdict when a
batch is slower than single queries."""

from __future__ import annotations

import pytest

from tests.support.hostile_index import spec as plugin_spec
from tests.support.cli import files_under, refused, run_cli, run_process, small, with_flags  # noqa: F401 (small: a fixture)

#: a scene file whose recipe is refused only when its workload comes up, after --out is made
BAD_RECIPE = 'generator = "uniform"\nn = 100\n[radius]\nmodel = "log-uniform"\nmin = 0\nmax = 1\n'


def _bad_recipe(tmp_path):
    (tmp_path / "bad.toml").write_text(BAD_RECIPE)
    return ["--scene", tmp_path / "bad.toml"]


def _earlier_run(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "clients.csv").write_text("an earlier run\n")
    return []


#: every hostile input of ``viewer clients``: (flags over the quick run's, words its one error line holds, exit
#: status, setup, quiet). ``setup`` (or None) prepares a file in the test's directory and returns the flags that
#: name it; ``quiet``: nothing on stdout (a refusal when the workload comes up follows the machine line).
#: A step that walks the clients out of the numeric domain is refused up front (it was a ValueError traceback
#: from the index contract); a budget must be positive (0 and nan skipped every tick, or none); --n is bounded
#: by the largest scene (it was refused only while generating the workload, naming no flag, --out left behind);
#: a recipe refused after --out is made leaves no directory.
REFUSED = [
    pytest.param(["--step", "1e300"], ["--step 1e+300", "numeric domain", "at most"], 2, None, True, id="step-1e300"),
    pytest.param(["--layout", "hotspots", "--ticks", "100000", "--step", "1e26"], ["--step 1e+26", "numeric domain"],
                 2, None, True, id="step-walks-out"),
    pytest.param(["--step", "-1"], ["--step"], 2, None, True, id="step-negative"),
    pytest.param(["--budget", "0"], ["--budget", "positive"], 2, None, True, id="budget-0"),
    pytest.param(["--budget", "nan"], ["--budget", "positive"], 2, None, True, id="budget-nan"),
    pytest.param(["--k", "0"], ["--k", "1..65536"], 2, None, True, id="k-0"),
    pytest.param(["--layout", "ring"], ["--layout", "spread"], 2, None, True, id="layout-unknown"),
    pytest.param(["--index", "nope"], ["--index", "nope"], 2, None, True, id="index-unknown"),
    pytest.param(["--index", "scan," + plugin_spec("Nope")], ["--index", "hostile_index.py:Nope'", "no class 'Nope'"],
                 2, None, True, id="index-class-missing"),
    pytest.param(["--scene", "nowhere.toml"], ["--scene", "nowhere.toml"], 2, None, True, id="scene-missing"),
    pytest.param(["--scene", "uniform", "--n", "6e8"], ["--n", "1..500,000,000", "'6e8'"], 2, None,
                 True, id="n-past-the-largest-scene"),
    pytest.param(["--out", "{tmp}/out/deep"], ["bad.toml", "radius.min"], 2, _bad_recipe,
                 False, id="recipe-refused-after-out-is-made"),
    pytest.param([], ["--out", "clients.csv exists already", "--force"], 2, _earlier_run, True,
                 id="earlier-run-without-force"),
]


@pytest.mark.parametrize("flags, words, status, setup, quiet", REFUSED)
def test_a_hostile_flag_is_refused_with_one_line_and_nothing_written(tmp_path, small, flags, words, status, setup,
                                                                      quiet):
    """Exit status 2, one error line naming the flag (or the file), nothing on stdout (where the refusal comes
    before the machine line), nothing written in the test's directory: no --out directory, not even an empty one."""
    quick = ["clients", "--scene", small, "--index", "scan", "--k", "1", "--ticks", "3", "--out", tmp_path / "out"]
    extra = setup(tmp_path) if setup else []
    before = files_under(tmp_path)
    args = [str(a).replace("{tmp}", str(tmp_path)) for a in with_flags(with_flags(quick, extra), flags)]
    code, stdout, err = run_cli(*args)
    assert code == status, err
    refused(code, err, *words)
    assert stdout == "" if quiet else stdout.startswith("machine: ")
    assert files_under(tmp_path) == before


def test_clients_whose_answers_exceed_the_memory_are_refused_before_measuring(tmp_path):
    """65,536 clients over a world where each sees all of its 2,000 objects: a tick's answers hold 131 million
    ids, about 3.8 GB to measure. Under a 2 GB address-space limit the command refuses after counting a sample
    of clients, naming --k and both figures, exit 2, no traceback, no --out left behind."""
    import resource

    (tmp_path / "all.toml").write_text('generator = "uniform"\nn = 2000\nworld = 10.0\n[radius]\nmodel = "constant"\n'
                                       'value = 100.0\n')

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    code, stdout, err = run_process("clients", "--scene", tmp_path / "all.toml", "--index", "octree", "--k", "65536",
                                    "--ticks", "3", "--out", tmp_path / "out", preexec_fn=limited)
    line = refused(code, err, "--k 65536", "ids", "2,000 a client", "this process may use")
    assert "RLIMIT_AS" in line
    assert not (tmp_path / "out").exists()


def test_the_clients_verdict_says_a_slower_batch_saves_nothing():
    """Before: 'viewer clients' ended each K with 'sharing saves most on octree: 0.40x its singles' where
    0.40 was its batch gain (singles / batch: the batch 2.5x slower): read as the batch taking 0.40 of the
    singles' time, the opposite of what was measured (frame/README.md's table gives batch / singles). The
    sentence now gives batch / singles, and says when no shared batch saves anything."""
    from viewer.bench.clients import verdict

    def row(index, single, batch, shared=1):
        return {"workload": "small-2k", "layout": "spread", "k": 8, "index": index, "shared_walk": shared,
                "single_tick_us": single, "batch_tick_us": batch, "batch_x_single": round(single / batch, 3)}

    slower = verdict([row("octree", 6.0, 15.0), row("scan", 30.0, 29.0, shared=0)])[0]
    assert "sharing saves nothing here" in slower and "octree's, takes 2.50x its singles' time" in slower, slower
    assert "saves most" not in slower and "0.40x" not in slower
    faster = verdict([row("octree", 60.0, 15.0), row("hashgrid", 60.0, 30.0)])[0]
    assert "sharing saves most on octree: its batch takes 0.25x its singles' time" in faster, faster


def test_clients_json_says_what_it_is_and_validates_against_its_schema(tmp_path, small):
    """clients.json carries its format, version and provenance (the checkout's commit) and validates against
    the JSON Schema the package ships."""
    import json

    from tests.results.test_load import validate

    out = tmp_path / "out"
    code, _, err = run_cli("clients", "--scene", small, "--index", "scan", "--k", "2", "--ticks", "3", "--out", out)
    assert code == 0, err
    meta = json.loads((out / "clients.json").read_text())
    assert (meta["format"], meta["format_version"]) == ("viewdist-clients", 2) and meta["provenance"]["commit"]
    validate(meta, "viewer.bench", "clients.schema.json")
