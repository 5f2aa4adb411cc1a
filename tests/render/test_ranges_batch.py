"""Visibility ranges in the batch answers: the cost map (``viewer map``) counts the objects in range,
and the GPU's many-view query (``GpuCuller.query_many``, ``shaders/cull_many.glsl``) answers the ids in range,
both exactly as brute force on the begin and end surfaces."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.reports.costmap import count_points, scene_ranges, time_points
from viewer.frame.ranges import Ranges, brute_in_range
from viewer.index import make_index, warm_up
from viewer.scenes.construct import scene_from_arrays

from tests.frame.test_ranges import integer_scene, surface_points


def brute_counts(scene, points, scale=1.0):
    b = None if scene.begin is None else scene.begin * scale
    return np.array([brute_in_range(scene.centres, scene.radii * scale, b, scene.parent, p).sum() for p in points])


@pytest.mark.parametrize("parents", [False, True])
def test_costmap_counts_objects_in_range(rng, parents):
    scene = integer_scene(rng, n=500, parents=parents)
    pts = np.array(surface_points(scene, rng, count=30))
    ranges = scene_ranges(scene)
    assert ranges is not None
    want = brute_counts(scene, pts)
    ends = np.array([brute_in_range(scene.centres, scene.radii, None, None, p).sum() for p in pts])
    assert np.any(want < ends)  # the begins matter at these points
    warm_up(["octree", "hashgrid"])
    octree = make_index("octree", scene.centres, scene.radii)
    assert np.array_equal(count_points(octree, pts, ranges=ranges), want)
    assert np.array_equal(count_points(octree, pts), ends)  # without ranges: the end spheres, as before
    counts, times = time_points({"octree": octree, "hashgrid": make_index("hashgrid", scene.centres, scene.radii)},
                                pts, ranges=ranges)
    assert np.array_equal(counts, want)
    assert set(times) == {"octree", "hashgrid"} and all(np.all(t > 0) for t in times.values())


def test_costmap_ranges_follow_the_scale(rng):
    scene = integer_scene(rng, n=400, parents=True)
    pts = rng.uniform(-100, 100, (40, 3))
    ranges = scene_ranges(scene, 1.5)
    ix = make_index("octree", scene.centres, scene.radii * 1.5)
    assert np.array_equal(count_points(ix, pts, ranges=ranges), brute_counts(scene, pts, 1.5))


def test_scene_without_ranges_counts_end_spheres(rng):
    c = rng.uniform(-100, 100, (300, 3))
    r = rng.uniform(5, 50, 300)
    assert scene_ranges(scene_from_arrays(c, r)) is None
    lod_only = scene_from_arrays(c, r, lod=np.stack([r * 0.3, r * 0.6], axis=1))
    assert scene_ranges(lod_only) is None  # LOD switches alone hide nothing


# --------------------------------------------------------------------------- the GPU's many-view query


@pytest.fixture(scope="module")
def gl(compute_gl):
    return compute_gl


def gpu_culler(gl, scene):
    from viewer.frame.pipeline import pack_colours
    from viewer.render.gpu_cull import GpuCuller

    n = scene.n
    colours = pack_colours(np.full((n, 4), 200, dtype=np.uint8))
    return GpuCuller(gl[0], gl[1], np.ascontiguousarray(scene.centres), np.ascontiguousarray(scene.radii),
                     np.full(n, 1.0, np.float32), colours)


@pytest.mark.gl
@pytest.mark.parametrize("fade", [0.0, 0.15])
def test_gpu_query_many_answers_ids_in_range(gl, rng, fade):
    scene = integer_scene(rng, n=500, parents=True)
    pts = np.array(surface_points(scene, rng, count=30))
    g = gpu_culler(gl, scene)
    try:
        ends = g.query_many(pts)  # no ranges set: the end spheres, as before
        rg = Ranges(scene, scene.centres, fade=fade)
        g.set_ranges(rg.begin, rg.limit, rg.parent, rg.is_proxy)
        offsets, ids = g.query_many(pts)
        assert offsets.shape == (len(pts) + 1,) and offsets[-1] == ids.size
        fewer = 0
        for k, p in enumerate(pts):
            want = np.flatnonzero(brute_in_range(scene.centres, scene.radii, scene.begin, scene.parent, p, fade))
            assert np.array_equal(ids[offsets[k]:offsets[k + 1]], want), k
            end = np.flatnonzero(brute_in_range(scene.centres, scene.radii, None, None, p))
            assert np.array_equal(ends[1][ends[0][k]:ends[0][k + 1]], end), k
            fewer += end.size - want.size
        assert fewer > 0  # the begins and the parents dropped something
        # the CPU's filter after an index's query gives the same ids
        ix = make_index("octree", scene.centres, scene.radii)
        out = np.empty(scene.n, dtype=np.int64)
        for k, p in enumerate(pts[:20]):
            m = rg.filter(out, ix.query_into(p, out), p)
            assert np.array_equal(np.sort(out[:m]), ids[offsets[k]:offsets[k + 1]])
        g.set_ranges(None, None, None)  # ranges off again
        o2, i2 = g.query_many(pts)
        assert np.array_equal(o2, ends[0]) and np.array_equal(i2, ends[1])
    finally:
        g.release()
