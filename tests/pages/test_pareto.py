"""The Pareto front of a trade-off: the points nothing beats on both costs."""

from __future__ import annotations

import numpy as np

from viewer.pages import pareto_front


def test_a_point_beaten_on_both_costs_is_off_the_front():
    x = [1.0, 2.0, 3.0, 2.5]
    y = [5.0, 2.0, 1.0, 3.0]  # (2.5, 3) is beaten by (2, 2)
    assert pareto_front(x, y).tolist() == [True, True, True, False]


def test_a_tie_on_one_cost_keeps_only_the_better_on_the_other():
    assert pareto_front([1.0, 1.0], [2.0, 3.0]).tolist() == [True, False]


def test_equal_points_are_both_on_the_front_and_values_not_finite_never():
    mask = pareto_front([1.0, 1.0, np.nan, 0.5], [1.0, 1.0, 0.1, np.inf])
    assert mask.tolist() == [True, True, False, False]
