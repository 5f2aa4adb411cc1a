"""GL, headless through EGL: GPU culling (one compute dispatch, an indirect draw) selects exactly the
objects the CPU oracle selects (brute force, then the CPU frustum cull), on uniform, clustered and
diagonal scenes, on points exactly on sphere surfaces and after moves; its instance records are the CPU
gather's, bit for bit; its visibility events count what the CPU tracker reports."""

from __future__ import annotations

import math

import numpy as np
import pytest

from viewer._frame_kernels import gather_instances
from viewer.camera import FlyCamera
from viewer.events import VisibilityTracker
from viewer.frame import pack_colours
from viewer.frustum import cull_spheres, frustum_planes
from viewer.index import brute_query
from viewer.instances import instance_words

pytestmark = pytest.mark.gl


@pytest.fixture(scope="module")
def gl():
    render = pytest.importorskip("viewer.render")
    from viewer.render.gpu_cull import gpu_cull_unavailable

    try:
        ctx = render.create_headless_context()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    why = gpu_cull_unavailable(ctx)
    if why is not None:
        pytest.skip(why)
    yield ctx, render.ShaderLibrary(ctx)
    ctx.release()


def culler(gl, centres, radii, sizes=None, colours=None):
    from viewer.render.gpu_cull import GpuCuller

    ctx, shaders = gl
    n = len(radii)
    sizes = np.full(n, 1.5, np.float32) if sizes is None else sizes
    if colours is None:
        colours = pack_colours(np.random.default_rng(1).integers(0, 256, (n, 4), dtype=np.uint8))
    return GpuCuller(ctx, shaders, centres, radii, sizes, colours, visible_ids=True)


def camera_at(point, yaw, pitch, far=2000.0):
    cam = FlyCamera(position=point, yaw=yaw, pitch=pitch, far=far, near=0.5, aspect=4 / 3)
    return cam


def cpu_answer(centres, radii, sizes, point, planes):
    """The oracle: brute force's visible ids and the CPU frustum cull's drawn ids, both sorted."""
    vis = brute_query(centres, radii, point)
    bounds = sizes.astype(np.float64) * math.sqrt(3.0)
    out = np.empty(max(vis.size, 1), np.int64)
    m = cull_spheres(planes, centres, bounds, vis, vis.size, out)
    return vis, np.sort(out[:m])


def check_frame(g, centres, radii, sizes, colours, point, cam, fade=0.15):
    """One GPU frame against the CPU: visible and drawn sets, counters and every record."""
    planes = frustum_planes(cam.view_projection())
    eye = np.asarray(cam.position, np.float64)
    g.cull(point, eye, planes, fade)
    vis, drawn = cpu_answer(centres, radii, sizes, point, planes)
    got_vis = g.visible_ids()
    got_ids = g.drawn_ids()
    np.testing.assert_array_equal(np.sort(got_vis), vis)
    np.testing.assert_array_equal(np.sort(got_ids), drawn)
    assert len(set(got_ids.tolist())) == got_ids.size  # no id twice
    cnt = g.counters()
    assert (cnt.visible, cnt.drawn) == (vis.size, drawn.size)
    # the records, in the GPU's order, equal the CPU gather's for the same ids, bit for bit
    k = got_ids.size
    inst, words = instance_words(max(k, 1))
    gather_instances(got_ids, k, centres, sizes, radii, colours, eye, np.asarray(point, np.float64), fade,
                     inst, words)
    np.testing.assert_array_equal(g.records().view(np.uint32), inst[:k].view(np.uint32))
    return vis, drawn


def scene_arrays(kind, n, seed=3):
    from viewer.scenes import generate_scene

    s = generate_scene(kind, n, seed=seed, world=2000.0, radius={"model": "log-uniform", "min": 20, "max": 400})
    return (np.ascontiguousarray(s.centres, np.float64), np.ascontiguousarray(s.radii, np.float64),
            np.ascontiguousarray(s.sizes, np.float32), pack_colours(s.colours))


@pytest.mark.parametrize("kind", ["uniform", "clustered", "diagonal"])
def test_gpu_selects_the_oracles_ids(gl, kind):
    centres, radii, sizes, colours = scene_arrays(kind, 30_000)
    g = culler(gl, centres, radii, sizes, colours)
    rng = np.random.default_rng(7)
    total_vis = total_drawn = 0
    # half the points at objects (dense regions), half anywhere in the world
    points = np.concatenate([centres[rng.integers(0, len(radii), 6)] + rng.normal(0, 3, (6, 3)),
                             rng.uniform(-1000, 1000, (6, 3))])
    for p in points:
        cam = camera_at(p, rng.uniform(0, 360), rng.uniform(-60, 60))
        vis, drawn = check_frame(g, centres, radii, sizes, colours, p, cam)
        total_vis += vis.size
        total_drawn += drawn.size
    assert total_vis > 100 and 0 < total_drawn < total_vis  # the frustum really culled, and not everything
    g.release()


@pytest.mark.parametrize("origin, unit", [((10.0, -20.0, 30.0), 1.0), ((3e6, -2e6, 1.2e7), 2.0**-10)],
                         ids=["near-origin", "far-small"])
def test_points_exactly_on_sphere_surfaces(gl, origin, unit):
    # (3k, 4k, 12k) lies exactly 13k from the point: the sphere of radius 13k holds it, the next radius
    # down does not; in front of the camera so the drawn set shows them too. Far from the origin with
    # spheres smaller than a float32 ulp of the coordinates, only the prefilter's slack keeps them.
    p = np.array(origin)
    k = np.arange(1, 401, dtype=np.float64) * unit
    dirs = np.array([[3, 4, -12], [-4, 3, -12], [12, -3, -4], [-3, -12, -4]], np.float64)
    centres, radii = [], []
    for d in dirs:
        for kk in k:
            c = p + d * kk
            centres += [c, c, c]
            assert np.array_equal(c - p, d * kk)  # exactly representable
            r = 13.0 * kk
            radii += [r, np.nextafter(r, 0.0), np.nextafter(r, np.inf)]
    centres = np.array(centres)
    radii = np.array(radii)
    sizes = np.full(len(radii), 0.5, np.float32)
    colours = pack_colours(np.full((len(radii), 4), 200, np.uint8))
    g = culler(gl, centres, radii, sizes, colours)
    cam = camera_at(p, 0.0, 0.0, far=1e5 * unit)
    vis, _ = check_frame(g, centres, radii, sizes, colours, p, cam)
    assert vis.size == 2 * len(dirs) * k.size  # the exact radius and the one above: all surface points held
    g.release()


def test_after_moves_and_the_events_match_the_tracker(gl):
    centres, radii, sizes, colours = scene_arrays("clustered", 20_000, seed=5)
    world_c, world_r = centres.copy(), radii.copy()
    g = culler(gl, world_c, world_r, sizes, colours)
    rng = np.random.default_rng(11)
    for margin, relative in ((0.0, False), (5.0, False), (0.1, True)):
        tracker = VisibilityTracker(len(radii), margin, relative)
        g.set_hysteresis(margin, relative)
        g.reset_events()
        p = world_c[0].copy()
        for frame in range(8):
            movers = rng.choice(len(radii), 2000, replace=False)
            world_c[movers] += rng.normal(0, 8.0, (movers.size, 3))
            world_r[movers] *= rng.uniform(0.9, 1.1, movers.size)
            g.move(movers, world_c[movers], world_r[movers])
            p += rng.normal(0, 10.0, 3)
            cam = camera_at(p, 30.0 * frame, -10.0)
            vis, _ = check_frame(g, world_c, world_r, sizes, colours, p, cam)
            ent, left = tracker.update(vis, vis.size, p, world_c, world_r)
            cnt = g.counters()
            assert (cnt.entered, cnt.left) == (ent.size, left.size), (margin, relative, frame)
    g.release()


def test_sprites_and_mesh_commands(gl):
    centres, radii, sizes, colours = scene_arrays("uniform", 5000)
    g = culler(gl, centres, radii, sizes, colours)
    p = centres[0]
    cam = camera_at(p, 45.0, 0.0)
    planes = frustum_planes(cam.view_projection())
    out = []
    for mode in ("sprites", "mesh"):
        g.cull(p, p, planes, 0.15, mode)
        cmd = np.frombuffer(g.command.read(16), np.uint32)
        out.append(cmd.tolist())
        assert g.counters().drawn == (cmd[0] if mode == "sprites" else cmd[1])
    drawn = out[0][0]
    assert drawn > 0
    assert out == [[drawn, 1, 0, 0], [36, drawn, 0, 0]]  # (count, instanceCount, first, baseInstance)
    g.release()


def test_an_empty_scene(gl):
    g = culler(gl, np.zeros((0, 3)), np.zeros(0), np.zeros(0, np.float32), np.zeros(0, np.uint32))
    cam = camera_at((0, 0, 0), 0, 0)
    g.cull((0, 0, 0), (0, 0, 0), frustum_planes(cam.view_projection()), 0.15)
    assert g.counters().drawn == 0 and g.drawn_ids().size == 0
    g.release()
