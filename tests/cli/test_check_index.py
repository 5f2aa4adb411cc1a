"""``viewer check-index SPEC``: one line per property, pass or FAIL with its time; under a failure the
counter-example and the replay; exit 0 all hold, 1 any fails, 2 a spec that does not load or a bad flag."""

from __future__ import annotations

import pytest

from tests.support.cli import refused, run_cli

WRONG = "tests.index.conformance.wrong_indexes"


def test_a_right_index_holds_every_property_asked_one_line_each():
    code, out, err = run_cli("check-index", "brute", "--only", "bad_build_refused")
    assert code == 0, err
    lines = [ln for ln in out.splitlines() if ln.lstrip().startswith("pass")]
    assert len(lines) == 8 and all(ln.rstrip().endswith(" s") for ln in lines)
    assert "brute: all 8 properties hold" in out and "machine:" in out


def test_a_wrong_index_fails_naming_the_property_with_the_counter_example_and_the_replay():
    code, out, err = run_cli("check-index", f"{WRONG}:OpenBalls", "--only", "surface_one_ulp", "--seed", "3")
    assert code == 1, err
    assert "FAIL  surface_one_ulp" in out
    assert "smallest counter-example found: 1 object(s)" in out
    assert f"viewer check-index '{WRONG}:OpenBalls' --only 'surface_one_ulp' --seed 3" in out
    assert "1 of 1 property FAIL (surface_one_ulp)" in out


def test_examples_sets_the_draws_of_the_randomised_properties_and_its_replay_keeps_them():
    code, out, err = run_cli("check-index", "brute", "--only", "fuzz_magnitudes_and_dtypes", "--examples", "3")
    assert code == 0, err
    assert "1 property, seed 12345, 3 examples" in out and "pass  fuzz_magnitudes_and_dtypes" in out
    code, out, err = run_cli("check-index", f"{WRONG}:OpenBalls", "--only", "fuzz_magnitudes_and_dtypes",
                             "--examples", "5")
    assert code == 1, err
    assert "--only 'fuzz_magnitudes_and_dtypes' --examples 5" in out


def test_a_file_spec_is_checked(tmp_path):
    f = tmp_path / "my_index.py"
    f.write_text("from viewer.index import BruteForce\n\n\nclass Mine(BruteForce):\n    pass\n")
    code, out, err = run_cli("check-index", f"{f}:Mine", "--only", "query_into_overflow")
    assert code == 0, err
    assert "pass  query_into_overflow" in out


REFUSED = [
    pytest.param(["nope"], ["SPEC", "unknown index 'nope'"], id="unknown-name"),
    pytest.param(["octree:max_depth=0"], ["SPEC", "max_depth"], id="option-out-of-range"),
    pytest.param(["octree:bogus=1"], ["SPEC", "bogus"], id="option-not-taken"),
    pytest.param(["no_such_module_here:Cls"], ["SPEC", "no_such_module_here"], id="module-not-importable"),
    pytest.param([f"{WRONG}:NoSuchClass"], ["SPEC", "NoSuchClass"], id="class-missing"),
    pytest.param(["brute", "--only", "zz"], ["--only", "'zz'", "no such property"], id="only-unknown"),
    pytest.param(["brute", "--examples", "0"], ["--examples"], id="examples-0"),
    pytest.param(["brute", "--examples", "1e9"], ["--examples"], id="examples-not-whole"),
    pytest.param(["brute", "--seed", "-1"], ["--seed", "0..2**63-1"], id="seed-negative"),
    pytest.param(["brute", "--seed", str(2**63)], ["--seed", "0..2**63-1"], id="seed-past-2**63-1"),
]


@pytest.mark.parametrize("args, words", REFUSED)
def test_a_hostile_spec_or_flag_is_refused_with_one_line_before_any_property(args, words):
    code, out, err = run_cli("check-index", *args)
    refused(code, err, *words)
    assert out == ""
