"""LOD band changes and per-band meshes in the GPU culling modes (``gpu`` and ``coherent``):
the GPU's per-object band state gives the same ``band_changes`` column and the same change events ``(id,
previous, current)`` as the CPU path's :attr:`viewer.frame.ranges.Ranges.changes`, on flights with LOD
switches, teleports, restarts, margins and a radius scale, and a scene's per-band meshes draw the CPU's
pixels."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.camera import FlyCamera
from viewer.frame.pipeline import FramePipeline

from tests.frame.test_ranges import integer_scene
from tests.render.test_ranges_gpu import gpu_pipeline

pytestmark = pytest.mark.gl

W, H = 160, 120


@pytest.fixture(scope="module")
def gpu(gl):
    """(ctx, ShaderLibrary) of the module's context, skipped without compute shaders."""
    from viewer.render.gpu_cull import gpu_cull_unavailable

    why = gpu_cull_unavailable(gl.ctx)
    if why is not None:
        pytest.skip(why)
    return gl.ctx, gl.render.ShaderLibrary(gl.ctx)


def coherent_pipeline(gpu, scene, **kw):
    from viewer.render.delta_cull import DeltaCulling

    return FramePipeline(scene, "coherent", indexes=["coherent"],
                         modes={"coherent": lambda f: DeltaCulling(f, gpu[1])}, **kw)


#: the GPU culling modes, each a pipeline maker
PIPELINES = {"gpu": gpu_pipeline, "coherent": coherent_pipeline}


def _events(ids, prev, cur) -> list[tuple[int, int, int]]:
    return sorted(zip(np.asarray(ids).tolist(), np.asarray(prev).tolist(), np.asarray(cur).tolist()))


def _flight(rng, steps: int) -> list[tuple[float, ...]]:
    """A walk in small steps (bands switch one at a time) with a teleport every 15 frames."""
    q, poses = np.zeros(3), []
    for k in range(steps):
        q = rng.uniform(-95, 95, 3) if k % 15 == 14 else np.clip(q + rng.normal(0, 4, 3), -95, 95)
        poses.append((*q, float(rng.uniform(-180, 180)), float(rng.uniform(-30, 30))))
    return poses


def _compare(g, c, pose_list, restart_at=()) -> tuple[int, set]:
    cam_g, cam_c = FlyCamera(far=1000.0), FlyCamera(far=1000.0)
    total, kinds = 0, set()
    for k, pose in enumerate(pose_list):
        if k in restart_at:
            g.restart()
            c.restart()
        sg, sc = g.step(cam_g, 0.0, pose=pose), c.step(cam_c, 0.0, pose=pose)
        assert (sg.drawn, sg.band0, sg.band1, sg.band2, sg.band3) == (sc.drawn, sc.band0, sc.band1, sc.band2, sc.band3)
        want = _events(*c.ranges.changes)
        got = _events(*g.mode.band_changes())
        assert got == want, f"frame {k}"
        assert sg.band_changes == sc.band_changes == len(want)
        total += len(want)
        for _, a, b in want:
            kinds.add("enter" if a < 0 else "leave" if b < 0 else "switch")
    return total, kinds


@pytest.mark.parametrize("mode", sorted(PIPELINES))
@pytest.mark.parametrize("parents", [False, True])
def test_gpu_band_changes_equal_the_cpu_s_on_a_flight(gpu, rng, parents, mode):
    scene = integer_scene(rng, n=500, lod=True, parents=parents)
    g = PIPELINES[mode](gpu, scene, fade=0.1)
    c = FramePipeline(scene, "octree", fade=0.1)
    total, kinds = _compare(g, c, _flight(rng, 60), restart_at=(20, 41))
    assert total > 0 and {"enter", "leave"} <= kinds
    if not parents:  # (with parents few objects are drawn: this seed's flight switches none)
        assert "switch" in kinds


@pytest.mark.parametrize("mode", sorted(PIPELINES))
def test_gpu_band_changes_with_margins_and_a_radius_scale(gpu, rng, mode):
    scene = integer_scene(rng, n=500, lod=True, parents=True)
    g = PIPELINES[mode](gpu, scene, fade=0.0, hysteresis=(5.0, False))
    c = FramePipeline(scene, "octree", fade=0.0, hysteresis=(5.0, False))
    poses = _flight(rng, 40)
    _compare(g, c, poses[:20])
    g.set_radius_scale(1.3)  # new switch distances: the bands are kept, as the CPU's are
    c.set_radius_scale(1.3)
    total, kinds = _compare(g, c, poses[20:])
    assert total > 0 and "switch" in kinds


@pytest.mark.parametrize("mode", sorted(PIPELINES))
def test_gpu_band_changes_on_the_switch_surfaces(gpu, rng, mode):
    """Cameras exactly on objects' switch distances (a switch distance belongs to the coarser band)."""
    scene = integer_scene(rng, n=400, lod=True)
    g = PIPELINES[mode](gpu, scene, fade=0.0)
    c = FramePipeline(scene, "octree", fade=0.0)
    poses = []
    for i in rng.choice(scene.n, 30, replace=False):
        for s in scene.lod[i]:
            if np.isfinite(s):
                poses.append((scene.centres[i, 0] + s, scene.centres[i, 1], scene.centres[i, 2], -90.0, 0.0))
    total, kinds = _compare(g, c, poses)
    assert total > 0 and "switch" in kinds


@pytest.mark.parametrize("mode", sorted(PIPELINES))
def test_no_band_changes_without_lod(gpu, rng, mode):
    scene = integer_scene(rng, n=300, parents=True)
    g = PIPELINES[mode](gpu, scene, fade=0.0)
    cam = FlyCamera(far=1000.0)
    drawn = 0
    for pose in _flight(rng, 8):
        st = g.step(cam, 0.0, pose=pose)
        assert st.band_changes == 0 and g.mode.band_changes()[0].size == 0
        drawn += st.drawn
    assert drawn > 0


# --------------------------------------------------------------------------- per-band meshes on pixels


def _shape(kind: int, s: float) -> tuple[np.ndarray, np.ndarray]:
    """A two-sided flat shape in the z = 0 plane, half-size s: 0 a square, 1 a triangle, 2 a thin bar."""
    if kind == 0:
        v = np.array([[-s, -s, 0], [s, -s, 0], [s, s, 0], [-s, s, 0]], np.float32)
        f = np.array([[0, 1, 2], [0, 2, 3], [0, 2, 1], [0, 3, 2]], np.int32)
    elif kind == 1:
        v = np.array([[-s, -s, 0], [s, -s, 0], [0, s, 0]], np.float32)
        f = np.array([[0, 1, 2], [0, 2, 1]], np.int32)
    else:
        v = np.array([[-s, -s / 4, 0], [s, -s / 4, 0], [s, s / 4, 0], [-s, s / 4, 0]], np.float32)
        f = np.array([[0, 1, 2], [0, 2, 3], [0, 2, 1], [0, 3, 2]], np.int32)
    return v, f


def band_mesh_scene(rng, n: int = 40):
    """n objects ahead of the camera (distinct depths), two base meshes with three band meshes each (base 1
    draws nothing in band 2), each object with its own switch distances."""
    from viewer.scenes.construct import scene_from_arrays
    from viewer.scenes.meshes import MeshSet

    shapes = [_shape(kind, 0.8) for kind in (0, 1, 2)] + [_shape(kind, 1.2) for kind in (1, 2, 0)]
    vs, fs = [s[0] for s in shapes], [s[1] for s in shapes]
    vstart = np.concatenate([[0], np.cumsum([len(v) for v in vs])])
    fstart = np.concatenate([[0], np.cumsum([len(f) for f in fs])])
    lods = np.array([[0, 1, 2], [3, 4, -1], [2, 2, 2], [3, 3, 3], [4, 4, 4], [5, 5, 5]], np.int32)
    centres = np.column_stack([rng.uniform(-12, 12, n), rng.uniform(-8, 8, n), -rng.permutation(n) * 1.37 - 6.0])
    tr = np.zeros((n, 3, 4))
    tr[:, :, :3] = np.eye(3)
    tr[:, :, 3] = centres
    ms = MeshSet(np.concatenate(vs), np.concatenate(fs), vstart, fstart, rng.integers(0, 2, n).astype(np.int32), tr,
                 lods=lods)
    lod = np.sort(rng.uniform(8, 50, (n, 2)), axis=1)
    colours = rng.integers(60, 255, (n, 4)).astype(np.uint8)
    colours[:, 3] = 255
    return scene_from_arrays(centres, np.full(n, 1000.0), lod=lod, meshes=ms, sizes=np.full(n, 1.5), colours=colours,
                             world=200.0)


@pytest.mark.parametrize("mode", sorted(PIPELINES))
def test_gpu_per_band_meshes_draw_the_cpu_s_pixels(gl, gpu, rng, mode):
    from viewer.camera import FlyCamera

    scene = band_mesh_scene(rng)
    sessions = {}
    for name in ("brute", mode):
        cam = FlyCamera(far=2000.0, near=0.1, aspect=W / H)
        sessions[name] = gl.render.ViewerSession(gl.ctx, gl.fbo, scene, camera=cam, fog=0.0, hud=False, fade=0.0,
                                                 index=name, indexes=[name])
    bands_seen, calls, changes = set(), set(), 0
    for z in np.linspace(10.0, -40.0, 21):
        pose = (float(z) * 0.1, 0.0, float(z), 0.0, 0.0)
        rows, images = {}, {}
        for name, s in sessions.items():
            rows[name] = s.frame(0.0, pose=pose)
            images[name] = s.image()
        rg, rc = rows[mode], rows["brute"]
        assert (rg.culling, rc.culling) == (mode, "cpu")
        assert (rg.drawn, rg.draw_calls, rg.band0, rg.band1, rg.band2, rg.band_changes) == \
            (rc.drawn, rc.draw_calls, rc.band0, rc.band1, rc.band2, rc.band_changes), z
        np.testing.assert_array_equal(images[mode], images["brute"], err_msg=f"z={z}")
        bands_seen |= {b for b, c in enumerate((rc.band0, rc.band1, rc.band2)) if c}
        calls.add(rc.draw_calls)
        changes += rc.band_changes
    assert bands_seen == {0, 1, 2} and max(calls) >= 4 and changes > 0


def test_gpu_mesh_groups_hold_each_band_s_records(gl, gpu, rng):
    """The GPU's groups hold, per mesh, the records of exactly the drawn objects whose band draws that mesh."""
    scene = band_mesh_scene(rng)
    cam = FlyCamera(far=2000.0, near=0.1, aspect=W / H)
    s = gl.render.ViewerSession(gl.ctx, gl.fbo, scene, camera=cam, fog=0.0, hud=False, fade=0.0, index="gpu",
                                indexes=["gpu"])
    s.frame(0.0, pose=(0.0, 0.0, -5.0, 0.0, 0.0))
    mode = s._pipeline.mode
    groups = mode.band_groups()
    assert groups is not None
    drawn = mode.culler.drawn_ids()
    pos = scene.centres[drawn] - np.array([0.0, 0.0, -5.0])
    band = np.sum(scene.lod[drawn] ** 2 <= ((pos[:, 0] ** 2 + pos[:, 1] ** 2) + pos[:, 2] ** 2)[:, None], axis=1)
    mesh = scene.meshes.lods[scene.meshes.ids[drawn], np.minimum(band, 2)]
    used = 0
    for k in range(scene.meshes.k):
        recs = groups.records_of(k)
        off = recs["offset"].astype(np.float64)  # translation - centre: zero here
        assert np.all(off == 0.0)
        want = np.sort(drawn[mesh == k])
        # a record's position is the object's centre relative to the camera (float32)
        got_pos = recs["position"].astype(np.float64) + np.array([0.0, 0.0, -5.0])
        got = np.sort([int(np.argmin(np.abs(scene.centres - p).sum(axis=1))) for p in got_pos]).astype(np.int64)
        assert np.array_equal(got, want), k
        used += len(want) > 0
    assert used >= 3


def _reversed_batches(monkeypatch):
    """Make the CPU path draw each mesh batch in reverse order (for the pixels that depend on draw order)."""
    from viewer.frame.mesh_batches import MeshBatches

    group = MeshBatches.group

    def reversed_group(self, *args, **kw):
        group(self, *args, **kw)
        for _, start, count in self.batches():
            self.records[start:start + count] = self.records[start:start + count][::-1].copy()

    monkeypatch.setattr(MeshBatches, "group", reversed_group)


@pytest.mark.parametrize("fade", [0.0, 0.15])
def test_gpu_city_draws_the_cpu_s_pixels_and_band_changes(gl, gpu, fade, monkeypatch):
    """The bundled ``city-100k`` recipe at n = 1500 (three LOD meshes a building, HLOD proxies per block):
    a flight at street height, the GPU mode's draw calls, band counts and band changes the CPU's, and its
    pixels the CPU's except at exact depth ties between buildings (coincident walls), where the winner is
    the first drawn: those pixels are found by drawing the CPU's batches in reverse order too, and the
    GPU's pixel must be one of the two there."""
    import tomllib
    from importlib.resources import files

    from viewer.camera import FlyCamera
    from viewer.scenes import generate_recipe

    recipe = tomllib.loads(files("viewer.scenes").joinpath("city-100k.toml").read_text())
    recipe.update(n=1500, world=1200.0)
    recipe["params"] = {**recipe["params"], "downtown": 300.0}
    scene = generate_recipe(recipe)
    assert scene.meshes is not None and scene.meshes.lods is not None and scene.parent is not None
    sessions = {}
    for name in ("brute", "reversed", "gpu"):
        cam = FlyCamera(far=3000.0, near=0.5, aspect=W / H)
        index = "gpu" if name == "gpu" else "brute"
        sessions[name] = gl.render.ViewerSession(gl.ctx, gl.fbo, scene, camera=cam, fog=0.0, hud=False, fade=fade,
                                                 index=index, indexes=[index])
    switches = changes = 0
    for k, x in enumerate(np.linspace(-500.0, 500.0, 16)):
        pose = (float(x), 25.0 + 10.0 * (k % 3), float(-0.3 * x), float(30.0 * k), -10.0)
        if k == 10:  # a teleport
            pose = (400.0, 60.0, 400.0, 225.0, -20.0)
        rows, images = {}, {}
        for name, s in sessions.items():
            with monkeypatch.context() as m:
                if name == "reversed":
                    _reversed_batches(m)
                rows[name] = s.frame(0.0, pose=pose)
            images[name] = s.image()
        rg, rc = rows["gpu"], rows["brute"]
        assert (rg.drawn, rg.draw_calls, rg.band0, rg.band1, rg.band2, rg.band3, rg.band_changes, rg.proxies) == \
            (rc.drawn, rc.draw_calls, rc.band0, rc.band1, rc.band2, rc.band3, rc.band_changes, rc.proxies), k
        img_g, img_c, img_r = images["gpu"], images["brute"], images["reversed"]
        tie = np.any(img_c != img_r, axis=-1)
        same = np.all(img_g == img_c, axis=-1) | np.all(img_g == img_r, axis=-1)
        assert same.all() and np.array_equal(img_g[~tie], img_c[~tie]), f"frame {k}"
        assert tie.mean() < 1e-3  # a few tie pixels at most
        switches += int(rc.band1 > 0) + int(rc.band2 > 0)
        changes += rc.band_changes
    assert switches > 0 and changes > 0


def test_coherent_views_sharing_the_mode_each_track_their_own_bands(gpu, rng):
    """Two views share the ``coherent`` mode (``viewer.frame.ViewSet``): each view's band changes are its
    own (a band state per view's list), equal to the CPU path's for that view."""
    from viewer.frame.views import ViewSet

    scene = integer_scene(rng, n=500, lod=True)
    vd = ViewSet(coherent_pipeline(gpu, scene, fade=0.0), [FlyCamera(far=1000.0), FlyCamera(far=1000.0)])
    vc = ViewSet(FramePipeline(scene, "octree", fade=0.0), [FlyCamera(far=1000.0), FlyCamera(far=1000.0)])
    poses = _flight(rng, 40)
    total = 0
    for k in range(1, len(poses)):
        two = [poses[k], poses[k - 1][:3] + (0.0, 0.0)]
        rd, rc = vd.step(0.0, poses=two), vc.step(0.0, poses=two)
        for a, b in zip(rd, rc):
            assert (a.drawn, a.band0, a.band1, a.band2, a.band_changes) == \
                (b.drawn, b.band0, b.band1, b.band2, b.band_changes), k
            total += a.band_changes
    assert total > 0
