"""GL, headless through EGL: GPU culling (one compute dispatch, an indirect draw) selects exactly the
objects the CPU oracle selects (brute force, then the CPU frustum cull), on uniform, clustered and
diagonal scenes, on points exactly on sphere surfaces and after moves; its instance records are the CPU
gather's, bit for bit; its visibility events count what the CPU tracker reports."""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest

from viewer.frame._frame_kernels import gather_instances
from viewer.camera import FlyCamera
from viewer.frame.events import VisibilityTracker
from viewer.frame.pipeline import pack_colours
from viewer.frame.frustum import cull_spheres, frustum_planes
from viewer.index import brute_query
from viewer.frame.instances import instance_words

from tests.support.cli import run_cli

pytestmark = pytest.mark.gl


@pytest.fixture(scope="module")
def gl(compute_gl):
    return compute_gl


def culler(gl, centres, radii, sizes=None, colours=None):
    from viewer.render.gpu_cull import GpuCuller

    ctx, shaders = gl
    n = len(radii)
    sizes = np.full(n, 1.5, np.float32) if sizes is None else sizes
    if colours is None:
        colours = pack_colours(np.random.default_rng(1).integers(0, 256, (n, 4), dtype=np.uint8))
    return GpuCuller(ctx, shaders, centres, radii, sizes, colours)


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


def test_the_gpu_queries_refuse_points_an_index_refuses(gl):
    """``clients --index gpu``'s queries check their points as every index does: bool, text and points outside the
    domain are a ValueError naming ``points`` (numpy read True as 1.0 and '1.5' as 1.5)."""
    from viewer.render.gpu_cull import GpuQueries

    centres, radii, _, _ = scene_arrays("uniform", 500)
    q = GpuQueries(gl[0], gl[1], centres, radii)
    try:
        for bad in (np.ones((2, 3), dtype=bool), np.array([["1.5", "0", "0"]]), np.array([[1e31, 0.0, 0.0]])):
            with pytest.raises(ValueError, match="points"):
                q.query_many(bad)
        with pytest.raises((ValueError, TypeError)):
            q.query((True, 0.0, 0.0))
        p = centres[0]
        assert np.array_equal(q.query(p), np.sort(brute_query(centres, radii, p)))
    finally:
        q.release()


def test_query_many_answers_every_view_in_one_dispatch(gl):
    """GpuCuller.query_many: each view's ids equal brute force's (ascending), on dense and empty views,
    duplicated views, surface points and after moves; K = 0 and K = 1 included."""
    centres, radii, sizes, colours = scene_arrays("clustered", 20_000)
    g = culler(gl, centres, radii, sizes, colours)
    rng = np.random.default_rng(11)
    pts = np.concatenate([centres[rng.integers(0, len(radii), 40)] + rng.normal(0, 3, (40, 3)),
                          rng.uniform(-1000, 1000, (20, 3)), [[1e6, 0.0, 0.0]]])
    pts = np.concatenate([pts, pts[:5], centres[:3] + np.array([[0.0, 0.0, 1.0]]) * radii[:3, None]])

    def check(c, r, views):
        offsets, ids = g.query_many(views)
        assert offsets.shape == (len(views) + 1,) and offsets[-1] == ids.size
        for k, p in enumerate(views):
            assert np.array_equal(ids[offsets[k]:offsets[k + 1]], np.sort(brute_query(c, r, p))), k
        return ids.size

    assert check(centres, radii, pts) > 1000
    assert check(centres, radii, pts[:1]) >= 0 and g.query_many(np.zeros((0, 3)))[0].tolist() == [0]
    movers = rng.choice(len(radii), 2000, replace=False)
    c2, r2 = centres.copy(), radii.copy()
    c2[movers] += rng.normal(0, 50, (2000, 3))
    r2[movers] *= 1.5
    g.move(movers, c2[movers], r2[movers])
    check(c2, r2, pts)
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


# ----------------------------------------------------------------------------- the viewer's gpu mode

W, H = 320, 240


def dynamic_scene(n=4000, seed=5):
    from viewer.scenes import generate_scene

    return generate_scene("clustered", n, seed=seed, world=600.0, clusters=3, spread_min=20.0, spread_max=40.0,
                          radius={"model": "log-uniform", "min": 10.0, "max": 120.0},
                          look={"size": {"model": "constant", "value": 0.6}},
                          motion={"share": 0.3, "speed": 40.0, "radius_pulse": 0.2, "radius_period": 1.0})


def pass_poses(scene, frames):
    """A pass through the first cluster's centre, turning as it goes."""
    c = scene.cluster_centres[0]
    xs = np.linspace(c[0] - 120.0, c[0] + 120.0, frames)
    return [(float(x), float(c[1]) + 5.0, float(c[2]) + 30.0, 60.0 + 3.0 * k, -10.0) for k, x in enumerate(xs)]


@pytest.fixture(scope="module")
def fbo(gl):
    from viewer.render import offscreen_target

    return offscreen_target(gl[0], (W, H))


def sessions(gl, fbo, scene, draw, hysteresis=None):
    from viewer.render import ViewerSession

    out = {}
    for name in ("brute", "gpu"):
        cam = FlyCamera(fov=70.0, near=0.05, far=400.0, aspect=W / H)
        out[name] = ViewerSession(gl[0], fbo, scene, index=name, indexes=[name], draw=draw, hud=False, fog=0.0,
                                  camera=cam, hysteresis=hysteresis)
    return out


@pytest.mark.parametrize("draw", ["sprites", "mesh"])
def test_the_gpu_image_equals_the_cpu_image_in_a_moving_world(gl, fbo, draw):
    """Frame by frame, brute force + the CPU cull and the GPU see the same world (each its own copy, moved
    by the same dt), select the same ids, count the same events, and draw the same pixels."""
    scene = dynamic_scene()
    ss = sessions(gl, fbo, scene, draw, hysteresis=(0.1, True))
    poses = pass_poses(scene, 24)
    for s in ss.values():
        s.warm_up(poses[0])
    drawn_total = pixels = 0
    for k, pose in enumerate(poses):
        rows, images = {}, {}
        for name, s in ss.items():
            rows[name] = s.frame(1.0 / 60.0, pose=pose)
            images[name] = s.image()
        cpu, gpu = ss["brute"], ss["gpu"]
        np.testing.assert_array_equal(np.sort(gpu.visible_ids()), np.sort(cpu.visible_ids()))
        np.testing.assert_array_equal(np.sort(gpu.drawn_ids()), np.sort(cpu.drawn_ids()))
        a, b = rows["brute"], rows["gpu"]
        assert (b.visible, b.drawn, b.entered, b.left, b.moved) == (a.visible, a.drawn, a.entered, a.left, a.moved)
        assert (b.candidates, b.nodes_visited, b.cull_ms, b.gather_ms) == (len(scene.radii), 0, 0.0, 0.0)
        assert (b.index, b.culling, b.culler, a.culling) == ("none", "gpu", "gpu", "cpu") and b.query_ms > 0.0
        np.testing.assert_array_equal(images["gpu"], images["brute"], err_msg=f"frame {k}")
        drawn_total += a.drawn
        pixels += int((np.abs(images["brute"].astype(int) - np.round(np.array(cpu.fog_colour) * 255)).max(axis=2) > 2).sum())
    assert a.moved > 0 and drawn_total > 200 and pixels > 5000  # a moving world, really drawn


def test_gpu_is_in_the_index_cycle_and_switching_keeps_the_world(gl, fbo):
    from viewer.render import ViewerSession

    scene = dynamic_scene(2000, seed=8)
    s = ViewerSession(gl[0], fbo, scene, index="brute", hud=False)
    assert "gpu" in s.options.indexes and s.options.indexes[-1] == "gpu"
    poses = pass_poses(scene, 12)
    for k, pose in enumerate(poses):
        s.set(index="gpu" if k % 3 == 1 else "brute")  # gpu misses moves while brute runs: caught up on return
        st = s.frame(1.0 / 60.0, pose=pose)
        world = s._pipeline  # the world now
        ref = brute_query(world.centres, world.radii, pose[:3])
        assert st.visible == ref.size
        np.testing.assert_array_equal(np.sort(s.visible_ids()), ref)


def test_record_writes_a_gpu_csv_beside_the_indexes(tmp_path):
    from viewer.recording import read_run
    from viewer.scenes import save_scene

    path = save_scene(dynamic_scene(2000, seed=9), tmp_path / "dyn.npz")
    out = tmp_path / "runs"
    # as a user runs it (its own process, so its EGL context never replaces this module's current one)
    done = run_cli("record", path, "--index", "brute", "gpu", "--frames", "30", "--size", "160x90", "-q", "-o", out)
    assert done.returncode == 0, done.stderr
    cpu, gpu = read_run(out / "brute.csv"), read_run(out / "gpu.csv")
    for col in ("visible", "drawn", "entered", "left", "moved", "cam_x", "t"):
        np.testing.assert_array_equal(gpu[col], cpu[col], err_msg=col)
    assert (gpu["candidates"] == 2000).all() and (gpu["nodes_visited"] == 0).all()
    assert (gpu["cull_ms"] == 0).all() and (gpu["gather_ms"] == 0).all() and (gpu["query_ms"] > 0).all()
    assert gpu.meta["index"]["name"] == "gpu" and gpu.meta["gl"]["renderer"]
    assert cpu["visible"].sum() > 0


def test_unknown_names_list_gpu(capsys, tmp_path):
    from viewer.render.modes import check_cullers, culler_names

    assert culler_names()[-1] == "gpu" and check_cullers(["octree", "gpu", "gpu"]) == ["octree", "gpu"]
    assert run_cli("record", "clustered-100k", "--index", "nosuch", "-o", tmp_path / "x").returncode == 2
    err = capsys.readouterr().err
    assert "unknown index 'nosuch'" in err and "gpu" in err
    assert not (tmp_path / "x").exists()


def test_frozen_gpu_culling_draws_what_the_cpu_draws(gl, fbo):
    from viewer.scenes import generate_scene

    scene = generate_scene("clustered", 3000, seed=4, world=600.0, clusters=3, spread_min=20.0, spread_max=40.0,
                           radius={"model": "log-uniform", "min": 10.0, "max": 120.0},
                           look={"size": {"model": "constant", "value": 0.6}})
    ss = sessions(gl, fbo, scene, "sprites")
    poses = pass_poses(scene, 10)
    images = {}
    for name, s in ss.items():
        s.frame(0.0, pose=poses[2])
        s.set_frozen(True)
        s.frame(0.0, pose=poses[8])  # flown away: query and cull stay at poses[2]
        images[name] = s.image()
        assert s.last.drawn > 0
    assert ss["gpu"].last.drawn == ss["brute"].last.drawn
    np.testing.assert_array_equal(images["gpu"], images["brute"])


@pytest.mark.window
def test_the_window_culls_on_the_gpu_and_cycles_away(display, tmp_path):
    """`viewer view --index gpu` in a real window (Xvfb, a GLX context in its own process) draws what the
    headless CPU path draws, and the I key cycles on to the indexes."""
    from viewer.scenes import Scene, save_scene

    from tests.render.test_render import TINY
    from tests.support.xwindow import open_window, reap, screenshot, xdo

    sc = Scene(name="tiny", centres=TINY.centres, radii=TINY.radii, sizes=TINY.sizes, colours=TINY.colours,
               category=TINY.category, world=100.0)
    path = save_scene(sc, tmp_path / "tiny.npz")
    shot = tmp_path / "shot.png"
    env = dict(os.environ, DISPLAY=display)
    proc, wid = open_window(env, path, "--index", "gpu", "--fixed-dt", "0.001", "--pose", "0,0,0,0,0", "--no-hud",
                            "--screenshot", str(shot), name="viewer - tiny")
    try:
        time.sleep(1.5)
        screenshot(env, shot)
        xdo(env, "key", "i")  # on to the first index
        time.sleep(0.5)
        xdo(env, "key", "Escape")
        out, err = proc.communicate(timeout=30)
    finally:
        reap(proc)
    assert proc.returncode == 0 and shot.exists(), err
    from PIL import Image

    from viewer.drivers.headless import HeadlessViewer

    img = np.asarray(Image.open(shot).convert("RGB"))
    with HeadlessViewer(sc, size=(320, 240), index="brute") as hv:
        hv.render((0.0, 0.0, 0.0, 0.0, 0.0))
        want = hv.image()
    assert (np.abs(img.astype(int) - want.astype(int)).max(axis=2) <= 2).mean() > 0.999


def test_a_context_without_compute_says_so(gl, fbo, monkeypatch):
    from viewer.errors import UserError
    from viewer.render import ViewerSession
    from viewer.render import gpu_cull as gpu_cull_module

    monkeypatch.setattr(gpu_cull_module, "gpu_cull_unavailable", lambda ctx: "this context is 3.3")
    scene = dynamic_scene(500)
    with pytest.raises(UserError, match="--index gpu: .*3.3"):
        ViewerSession(gl[0], fbo, scene, index="gpu", hud=False)
    s = ViewerSession(gl[0], fbo, scene, index="brute", hud=False)
    assert "gpu" not in s.options.indexes  # the I cycle leaves it out
