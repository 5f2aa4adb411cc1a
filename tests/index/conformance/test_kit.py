"""The conformance kit's own behaviour: a wrong index fails the property it breaks, with the smallest
counter-example found and a replay that reproduces it; a right one passes; every draw follows the seed."""

from __future__ import annotations

import contextlib
import io
import time

import numpy as np
import pytest

from viewer.index import BruteForce
from viewer.index.conformance import (ConformanceFailure, check, check_together, describe, evaluate, properties,
                                      subject_for)
from viewer.index.conformance._guard import beat, guarded
from viewer.index.conformance._kit import shrink

from .wrong_indexes import LosesLastMover, OpenBalls, SkipsIds

SPEC = "tests.index.conformance.wrong_indexes:OpenBalls"


def test_a_camera_on_a_surface_missed_fails_with_one_object_and_a_snippet_that_replays_it():
    with pytest.raises(ConformanceFailure) as err:
        check(OpenBalls, "surface_one_ulp")
    report = str(err.value)
    assert "missed ids" in report
    assert "smallest counter-example found: 1 object(s)" in report
    assert f"viewer check-index '{SPEC}' --only 'surface_one_ulp'" in report
    code = report.split("one query:\n", 1)[1].split("\nreplay:", 1)[0]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec("\n".join(line[2:] for line in code.splitlines()), {})  # noqa: S102 - the report's own snippet
    said = printed.getvalue().strip()
    assert said == "[]" and "the exact answer: [0]" in code  # the snippet shows the wrong answer again


def test_a_batch_move_losing_its_last_mover_fails_the_batch_property():
    out = evaluate(subject_for(LosesLastMover), "move_many_equals_single_moves")
    assert not out.ok
    assert "the batch against the same moves one by one" in out.report and "missed ids" in out.report
    assert "updates before the query matter" in out.report  # a fresh build answers rightly: no snippet then
    missed = out.report.split("missed ids [", 1)[1].split("]", 1)[0]
    assert f"id {missed} (missed): centre [" in out.report  # where the lost mover should be
    assert "--only 'move_many_equals_single_moves'" in out.report


@pytest.mark.parametrize("prop", ["surface_one_ulp", "move_many_equals_single_moves", "bad_batch_changes_nothing/removed-id"])
def test_a_right_index_passes(prop):
    check(BruteForce, prop)


def test_indexes_run_together_fail_as_the_one_that_broke_with_a_replay_of_it_alone():
    """The state machine over several indexes at once names the one that broke; its replay, that index alone,
    fails the same way."""
    with pytest.raises(ConformanceFailure) as together:
        check_together([BruteForce, SkipsIds, LosesLastMover])
    report = str(together.value)
    label = "tests.index.conformance.wrong_indexes:LosesLastMover"
    assert report.startswith(f"{label}: ") and "missed ids" in report, report
    assert f"viewer check-index '{label}' --only 'state_machine'" in report
    alone = evaluate(subject_for(LosesLastMover), "state_machine")
    assert not alone.ok and "missed ids" in alone.report


def test_the_fuzz_run_together_fails_as_the_index_that_broke():
    """The fuzz over several indexes at once (one guarded child) names the index that broke."""
    with pytest.raises(ConformanceFailure) as together:
        check_together([BruteForce, OpenBalls], "fuzz_magnitudes_and_dtypes")
    report = str(together.value)
    assert report.startswith(f"{SPEC}: ") and "missed ids" in report, report
    assert f"viewer check-index '{SPEC}' --only 'fuzz_magnitudes_and_dtypes'" in report
    with pytest.raises(KeyError, match="together_properties"):
        check_together([BruteForce], "surface_one_ulp")


def test_an_index_handing_out_other_ids_holds_the_state_machine_beside_brute_force():
    """Ids are the model's, mapped to each index's own: an index whose inserts hand out other ids than brute
    force's is checked as rightly, in the same run."""
    check_together([BruteForce, SkipsIds])
    check(SkipsIds, "state_machine")


def test_the_same_seed_draws_the_same_failure_and_another_seed_another():
    a = evaluate(subject_for(OpenBalls), "surface_one_ulp").report
    b = evaluate(subject_for(OpenBalls), "surface_one_ulp").report
    c = evaluate(subject_for(OpenBalls, seed=7), "surface_one_ulp").report
    assert a == b and a != c and "--seed 7" in c


def test_shrink_finds_the_one_object_of_many_that_an_index_answers_wrongly():
    rng = np.random.default_rng(1)
    c = rng.integers(-10, 10, (200, 3)).astype(float)  # whole numbers: a point exactly on a surface is exact
    r = rng.integers(1, 5, 200).astype(float)
    p = c[17] + np.array([r[17], 0.0, 0.0])  # on sphere 17's surface
    found = shrink(subject_for(OpenBalls), c, r, p)
    assert found is not None
    cs, rs = found
    assert len(rs) == 1 and np.linalg.norm(cs[0] - p) == rs[0]  # one sphere, the point on its surface
    assert shrink(subject_for(BruteForce), c, r, p) is None


def test_a_property_family_lists_its_cases_and_each_property_says_what_it_holds():
    cases = properties("bad_batch_changes_nothing")
    assert len(cases) == 19 and all(n.startswith("bad_batch_changes_nothing/") for n in cases)
    assert properties("state_machine") == ["state_machine"]
    assert properties("no_such_property") == []
    assert all(describe(n) for n in properties())
    with pytest.raises(KeyError, match="no_such_property"):
        check(BruteForce, "no_such_property")


def test_a_hung_case_is_killed_and_fails():
    t0 = time.monotonic()
    with pytest.raises(AssertionError, match="hung"):
        guarded(lambda: time.sleep(60), seconds=0.5)
    assert time.monotonic() - t0 < 30  # killed, not waited for


def test_a_case_of_many_steps_is_guarded_step_by_step_and_a_hang_names_its_step():
    def case():
        for k in range(5):  # 2.5 s in all, over the guard's 2 s: each beat starts its clock again
            beat(f"step {k}")
            time.sleep(0.5)
        beat("the last step")
        time.sleep(60)

    t0 = time.monotonic()
    with pytest.raises(AssertionError, match="hung: still running after 2 s, at the last step"):
        guarded(case, seconds=2.0)
    assert time.monotonic() - t0 < 30


def test_a_fuzz_failure_comes_back_from_its_child_with_hypothesis_example_and_a_snippet():
    out = evaluate(subject_for(OpenBalls), "fuzz_magnitudes_and_dtypes")
    assert not out.ok
    assert "missed ids" in out.report and "Falsifying example" in out.report, out.report
    assert "smallest counter-example found: 1 object(s)" in out.report, out.report
    assert "--only 'fuzz_magnitudes_and_dtypes'" in out.report


def test_a_forked_case_raises_what_the_child_raised():
    def case():
        raise KeyError("id 7")

    with pytest.raises(KeyError, match="id 7"):
        guarded(case)
