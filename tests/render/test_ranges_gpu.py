"""Visibility ranges in the GPU culling mode: the shader's begin and HLOD tests are exact against
brute force on the begin and end surfaces, its events follow the CPU tracker's margins at both edges, and
its records' near-edge fades are the CPU gather's."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.camera import FlyCamera
from viewer.frame.pipeline import FramePipeline
from viewer.frame.ranges import brute_in_range

from tests.frame.test_ranges import integer_scene, surface_points

pytestmark = pytest.mark.gl


@pytest.fixture(scope="module")
def gl(compute_gl):
    return compute_gl


def gpu_pipeline(gl, scene, **kw):
    from viewer.render.gpu_cull import GpuCulling

    return FramePipeline(scene, "gpu", indexes=["gpu", "brute"], modes={"gpu": lambda f: GpuCulling(f, gl[1])}, **kw)


@pytest.mark.parametrize("fade", [0.0, 0.15])
def test_gpu_ranges_are_exact_on_the_begin_and_end_surfaces(gl, rng, fade):
    scene = integer_scene(rng, n=400, parents=True)
    p = gpu_pipeline(gl, scene, fade=fade)
    cam = FlyCamera(far=1000.0)
    for q in surface_points(scene, rng, count=25):
        st = p.step(cam, 0.0, pose=(*q, 0.0, 0.0))
        want = np.flatnonzero(brute_in_range(scene.centres, scene.radii, scene.begin, scene.parent, q, fade))
        assert np.array_equal(np.sort(p.visible_ids()), want)
        assert st.visible == want.size


def test_gpu_ranges_follow_a_radius_scale(gl, rng):
    scene = integer_scene(rng, n=400, parents=True)
    p = gpu_pipeline(gl, scene, fade=0.1)
    p.set_radius_scale(1.5)
    cam = FlyCamera(far=1000.0)
    for q in rng.uniform(-90, 90, (10, 3)):
        p.step(cam, 0.0, pose=(*q, 0.0, 0.0))
        want = np.flatnonzero(brute_in_range(scene.centres, scene.radii * 1.5, scene.begin * 1.5, scene.parent, q, 0.1))
        assert np.array_equal(np.sort(p.visible_ids()), want)


@pytest.mark.parametrize("margin, relative", [(4.0, False), (0.1, True)])
def test_gpu_events_and_fades_match_the_cpu(gl, rng, margin, relative):
    scene = integer_scene(rng, n=400, parents=True)
    g = gpu_pipeline(gl, scene, fade=0.15, hysteresis=(margin, relative))
    c = FramePipeline(scene, "brute", fade=0.15, hysteresis=(margin, relative))
    cam_g, cam_c = FlyCamera(far=1000.0), FlyCamera(far=1000.0)
    q = np.zeros(3)
    for _ in range(40):
        q = np.clip(q + rng.normal(0, 6, 3), -95, 95)
        pose = (*q, float(rng.uniform(-180, 180)), 0.0)
        sg, sc = g.step(cam_g, 0.0, pose=pose), c.step(cam_c, 0.0, pose=pose)
        assert (sg.visible, sg.drawn, sg.entered, sg.left) == (sc.visible, sc.drawn, sc.entered, sc.left)
        ids, words = g.mode.culler.drawn_ids(), g.mode.culler.records()
        fade_g = dict(zip(ids.tolist(), words[:, -1].tolist()))
        fade_c = dict(zip(c.drawn().tolist(), c.instances["fade"].tolist()))
        assert fade_g.keys() == fade_c.keys()
        assert max((abs(fade_g[k] - fade_c[k]) for k in fade_c), default=0.0) < 1e-6


def test_gpu_band_counts_match_the_cpu(gl, rng):
    scene = integer_scene(rng, n=400, lod=True, parents=True)
    g = gpu_pipeline(gl, scene, fade=0.0)
    c = FramePipeline(scene, "octree", fade=0.0)
    cam_g, cam_c = FlyCamera(far=1000.0), FlyCamera(far=1000.0)
    total = proxies = 0
    for q in surface_points(scene, rng, count=15):
        pose = (*q, float(rng.uniform(-180, 180)), 0.0)
        sg, sc = g.step(cam_g, 0.0, pose=pose), c.step(cam_c, 0.0, pose=pose)
        assert (sg.drawn, sg.band0, sg.band1, sg.band2, sg.band3, sg.proxies) == \
            (sc.drawn, sc.band0, sc.band1, sc.band2, sc.band3, sc.proxies)
        total += sc.band1 + sc.band2 + sc.band3
        proxies += sc.proxies
    assert total > 0 and proxies > 0


def test_gpu_band_colours_are_the_cpu_s(gl, rng):
    scene = integer_scene(rng, n=400, lod=True)
    g = gpu_pipeline(gl, scene, fade=0.0)
    c = FramePipeline(scene, "octree", fade=0.0)
    g.set_colour_mode("band")
    c.set_colour_mode("band")
    cam_g, cam_c = FlyCamera(far=1000.0), FlyCamera(far=1000.0)
    seen = set()
    for q in rng.uniform(-90, 90, (8, 3)):
        pose = (*q, float(rng.uniform(-180, 180)), 0.0)
        g.step(cam_g, 0.0, pose=pose)
        c.step(cam_c, 0.0, pose=pose)
        words = g.mode.culler.records().view(np.uint32)
        col_g = dict(zip(g.mode.culler.drawn_ids().tolist(), words[:, 4].tolist()))
        col_c = dict(zip(c.drawn().tolist(), c.instances.view(np.uint32).reshape(-1, 6)[:, 4].tolist()))
        assert col_g == col_c
        seen |= set(col_c.values())
    assert len(seen) >= 2  # several bands' colours
