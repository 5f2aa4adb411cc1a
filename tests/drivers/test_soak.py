"""The soak's own checks (viewer.drivers.soak): beside the camera's visible set, points inside moving spheres, where
a moved object's boxes would go wrong, are checked against brute force."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from viewer.drivers.soak import INSIDE_PROBES, _check_inside_movers
from viewer.index import BruteForce


def _world(m: int = 3):
    rng = np.random.default_rng(2)
    centres = rng.uniform(-100, 100, (50, 3))
    radii = rng.uniform(1, 10, 50)
    return SimpleNamespace(centres=centres, radii=radii, ids=np.arange(m, dtype=np.int64), m=m)


def test_points_inside_movers_spheres_pass_for_an_exact_index():
    state = _world()
    index = BruteForce(state.centres, state.radii)
    assert _check_inside_movers(index, state, np.random.default_rng(0)) is None


def test_a_mover_the_index_lost_is_named_with_the_point_and_the_missing_id():
    state = _world(m=1)
    index = BruteForce(state.centres, state.radii)
    index.move(0, (1e4, 1e4, 1e4))  # the index has it elsewhere; the world keeps it where it is
    problem = _check_inside_movers(index, state, np.random.default_rng(0))
    assert problem is not None and "inside mover 0's sphere" in problem and "missing [0]" in problem, problem


def test_a_still_world_adds_no_probe():
    state = _world(m=0)
    assert INSIDE_PROBES > 0
    assert _check_inside_movers(BruteForce(state.centres, state.radii), state, np.random.default_rng(0)) is None
