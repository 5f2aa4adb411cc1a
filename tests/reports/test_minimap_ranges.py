"""The panel's minimap counts what the frame counts: in a scene with visibility ranges, the objects in range."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from viewer.reports.costmap import plane_grid
from viewer.frame.pipeline import FramePipeline
from viewer.frame.ranges import brute_in_range
from viewer.scenes import scene_from_arrays


def test_minimap_counts_objects_in_range(rng):
    pytest.importorskip("imgui_bundle")
    from viewer.drivers.panel import MINIMAP_RES, Minimap

    n = 600
    centres = rng.uniform(-200.0, 200.0, (n, 3))
    centres[:, 1] = rng.uniform(-5.0, 5.0, n)
    radii = rng.uniform(20.0, 120.0, n)
    begin = radii * rng.uniform(0.0, 0.8, n)
    parent = np.full(n, -1, dtype=np.int64)
    parent[1:40] = 0  # an HLOD group: object 0 stands in for 39 children
    radii[0] = 400.0
    begin[0] = 60.0
    scene = scene_from_arrays(centres, radii, begin=begin, parent=parent)
    pipe = FramePipeline(scene, "octree", fade=0.0)
    session = SimpleNamespace(world=pipe, index_name="octree", options=SimpleNamespace(radius_scale=1.0, fade=0.0))
    mm = Minimap()
    mm._sample(session, 0.0)
    lo, hi = mm.box
    step = max(float(hi[1] - lo[1]) / 16.0, 1e-9)
    y = float(np.clip(round(0.0 / step) * step, lo[1], hi[1]))
    _, _, pts = plane_grid(lo, hi, 1, y, MINIMAP_RES)
    want = np.array([brute_in_range(scene.centres, scene.radii, scene.begin, scene.parent, p, 0.0).sum() for p in pts])
    assert np.array_equal(mm.counts.reshape(-1), want)
    ends = np.array([np.count_nonzero(((scene.centres - p) ** 2).sum(axis=1) <= scene.radii**2) for p in pts])
    assert (want < ends).any()  # the ranges hide something: the test tells the two counts apart
