"""The ``coherent`` culling mode (the drawn side follows the deltas): a persistent visible list
on the GPU, appended on enter and swap-removed on leave from a CPU slot mirror, one dispatch over the list.

GL, headless through EGL. On generated flights of bundled recipes at small n (a moving world too), every
frame: the mode's drawn ids equal the CPU path's (CpuCulling over the octree) as a set, its visible count
brute force's, its events the CPU's, the GPU's list the tracker's in-set; across a teleport; and the pixels
of rendered frames equal the CPU path's. The slot mirror's kernel against a set model, without GL."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.camera import FlyCamera

W, H = 160, 120


def recipe_scene(name: str, n: int):
    from viewer.scenes import bundled_recipes, generate_recipe, read_recipe

    recipe = dict(read_recipe(bundled_recipes()[name]))
    recipe["n"] = n
    return generate_recipe(recipe)


def flight(scene, frames: int):
    """(frames, 5) poses (x, y, z, yaw, pitch) of the scene's generated fly-through at 60 frames a second."""
    from viewer.paths.generate import generated_path

    s = generated_path(scene).sample(dt=1.0 / 60.0)
    k = min(frames, s.positions.shape[0])
    return np.column_stack([s.positions[:k], s.yaw[:k], s.pitch[:k]])


# ----------------------------------------------------------------------------- the slot mirror (no GL)
def test_slot_mirror_follows_a_set_model():
    from viewer.render._delta_kernels import apply_events

    rng = np.random.default_rng(5)
    n = 300
    pos = np.full(n, -1, np.int64)
    slots = np.zeros(n, np.int64)
    mark = np.zeros(n, np.uint8)
    pairs = np.zeros((n, 2), np.uint32)
    model: set[int] = set()
    gpu = np.zeros(n, np.int64)  # what the GPU's list holds after the scatters
    count = 0
    for _ in range(400):
        ins = np.array(sorted(model), np.int64)
        left = rng.choice(ins, size=min(ins.size, int(rng.integers(0, 12))), replace=False) if ins.size else ins
        out = np.array(sorted(set(range(n)) - model), np.int64)
        ent = rng.choice(out, size=min(out.size, int(rng.integers(0, 12))), replace=False)
        count, m = apply_events(left, left.size, ent, ent.size, pos, slots, count, mark, pairs)
        assert m <= left.size + ent.size
        gpu[pairs[:m, 0]] = pairs[:m, 1]  # the scatter
        model = (model - set(left.tolist())) | set(ent.tolist())
        assert count == len(model)
        assert set(gpu[:count].tolist()) == model  # the list, changed slots only, is the set
        assert np.array_equal(pos[gpu[:count]], np.arange(count))
        assert (pos >= 0).sum() == count and not mark.any()
    # an id left that is not in the list, an id entered that is: refused (the mode rebuilds the list)
    out_id, in_id = int(np.flatnonzero(pos < 0)[0]), int(np.flatnonzero(pos >= 0)[0])
    none = np.zeros(0, np.int64)
    assert apply_events(np.array([out_id]), 1, none, 0, pos, slots, count, mark, pairs) == (-1, 0)
    assert apply_events(none, 0, np.array([in_id]), 1, pos, slots, count, mark, pairs) == (-1, 0)


def test_a_mode_name_shadows_the_index_once():
    from viewer.render.modes import MODES, check_cullers, culler_names
    from viewer.index import INDEXES

    names = culler_names()
    assert "coherent" in MODES and names.count("coherent") == 1 and len(names) == len(set(names))
    assert check_cullers(["coherent", "octree", "coherent"]) == ["coherent", "octree"]
    if "coherent" in INDEXES:  # without a GL context the pipeline culls on the CPU over the index
        from viewer.frame import FramePipeline
        from viewer.frame.culling import CpuCulling

        s = recipe_scene("clustered-100k", 500)
        p = FramePipeline(s, "coherent")
        assert isinstance(p.mode, CpuCulling) and p.index_name == "coherent"


# ----------------------------------------------------------------------------- GL
@pytest.fixture(scope="module")
def shaders(compute_gl):
    """The shader library of the shared compute context (``compute_gl`` in ``tests/conftest.py``)."""
    return compute_gl[1]


def pipelines(shaders, scene, hysteresis=None):
    from viewer.frame import FramePipeline
    from viewer.render.delta_cull import DeltaCulling

    d = FramePipeline(scene, "coherent", indexes=["coherent"], hysteresis=hysteresis,
                      modes={"coherent": lambda f: DeltaCulling(f, shaders)})
    c = FramePipeline(scene, "octree", indexes=["octree"], hysteresis=hysteresis)
    return d, c


@pytest.mark.gl
@pytest.mark.parametrize("name, hysteresis", [("clustered-100k", None), ("dynamic-100k", None),
                                              ("dynamic-100k", (0.1, True))],
                         ids=["clustered", "dynamic", "dynamic-hysteresis"])
def test_flight_equals_the_cpu_path_and_brute_force(shaders, name, hysteresis, monkeypatch):
    from viewer.index import INDEXES, brute_query
    from viewer.render import delta_cull

    scatter_all = hysteresis is not None  # this case sends every change through the scatter dispatch
    if scatter_all:
        monkeypatch.setattr(delta_cull, "DIRECT_RUNS", 0)
    scene = recipe_scene(name, 4000)
    d, c = pipelines(shaders, scene, hysteresis)
    mode = d.mode
    assert mode.kind == "coherent" and mode.index_name == ("coherent" if "coherent" in INDEXES else "octree")
    poses = flight(scene, 240)
    far = tuple(np.asarray(scene.centres).max(axis=0) + 500.0)
    cam_d, cam_c = FlyCamera(far=3000.0), FlyCamera(far=3000.0)
    sources, pairs, visible, dispatches, pairs_of = [], 0, 0, [], []
    rows = []  # the movers' rows uploaded to the GPU, a count per upload
    upload = mode.culler.move
    monkeypatch.setattr(mode.culler, "move", lambda ids, cs, rs: (rows.append(len(ids)), upload(ids, cs, rs)))
    for f, pose in enumerate(poses):
        if f == 150:  # a teleport out of the world, then back onto the path at frame 151
            pose = (*far, 0.0, 0.0)
        sd = d.step(cam_d, 1.0 / 60.0, pose=tuple(pose))
        sc = c.step(cam_c, 1.0 / 60.0, pose=tuple(pose))
        assert np.array_equal(d.centres, c.centres)  # the same world
        want = brute_query(d.centres, d.radii, np.asarray(pose[:3], np.float64))
        assert sd.visible == want.size == sc.visible, f
        assert mode.gpu_visible == want.size, f  # the GPU's own re-test of the list
        assert (sd.drawn, sd.entered, sd.left) == (sc.drawn, sc.entered, sc.left), f
        assert set(mode.drawn_ids().tolist()) == set(c.drawn().tolist()), f
        got_list = mode.list_ids()
        assert got_list.size == len(set(got_list.tolist()))
        assert set(got_list.tolist()) == set(d.events.inside().tolist()), f  # the list is the in-set
        sources.append(mode.last_source)
        dispatches.append(mode.last_dispatches)
        pairs_of.append(mode.last_pairs)
        if mode.last_source != "rebuild":
            pairs += mode.last_pairs
            visible += sd.visible
    assert sources[0] == "rebuild" and sources.count("rebuild") == 1  # only the first frame rebuilt
    assert visible > 0 and pairs < visible / 10  # the list follows the deltas, not the visible set
    changed = [f for f in range(1, len(poses)) if sources[f] != "rebuild" and pairs_of[f] > 0]
    assert len(changed) > 10
    if scatter_all:
        assert all(dispatches[f] == 1 for f in changed)
    else:  # at 60 frames a second a frame's few changed slots are written in place, no dispatch
        assert sum(dispatches[f] for f in changed) < len(changed) / 2
    if "coherent" in INDEXES:  # the index's own deltas (with the tracker's margin), equal to the tracker's
        assert set(sources[1:]) == {"index"}
    if scene.motion is not None:  # rows go up for listed movers and stale entering ones, not for every mover
        assert 0 < sum(rows) < scene.motion.m * len(poses) / 10, (sum(rows), scene.motion.m)
    with pytest.raises(ValueError, match="integers"):  # the index's contract checks the batch: a float id is refused
        mode.move_many(np.array([1.5, 2.0]), np.zeros((2, 3)))
    d.release()
    c.release()


@pytest.mark.gl
def test_restart_and_switching_modes_keep_the_list_in_step(shaders):
    from viewer.render.delta_cull import DeltaCulling
    from viewer.frame import FramePipeline

    scene = recipe_scene("clustered-100k", 3000)
    p = FramePipeline(scene, "coherent", indexes=["coherent", "octree"],
                      modes={"coherent": lambda f: DeltaCulling(f, shaders)})
    mode = p.mode
    cam = FlyCamera(far=3000.0)
    poses = flight(scene, 240)[140:230]  # where the flight is among the objects
    for f, pose in enumerate(poses):
        if f == 30:
            p.restart()
        if f == 50:
            p.use_index("octree")  # the tracker moves on without the mode
        if f == 70:
            p.use_index("coherent")
        st = p.step(cam, 0.0, pose=tuple(pose))
        if p.mode is mode:
            assert set(mode.list_ids().tolist()) == set(p.events.inside().tolist())
            assert mode.gpu_visible == st.visible
            if f in (30, 70):
                assert mode.last_source == "rebuild"
            if f == 30:
                assert st.entered == st.visible > 0  # a restart reports everything visible as entered
    p.release()


@pytest.mark.gl
@pytest.mark.parametrize("draw", ["sprites", "mesh"])
def test_pixels_equal_the_cpu_path(shaders, draw):
    import viewer.render as render

    ctx = shaders.ctx
    fbo = render.offscreen_target(ctx, (W, H))
    scene = recipe_scene("dynamic-100k", 3000)
    poses = flight(scene, 330)[140:330:15]  # where the flight is among the objects
    images = {}
    for name in ("octree", "coherent"):
        s = render.ViewerSession(ctx, fbo, scene, index=name, draw=draw, hud=False, fog=0.0,
                                 camera=FlyCamera(far=3000.0))
        assert s.options.index == name
        shots = []
        for pose in poses:
            row = s.frame(1.0 / 60.0, pose=tuple(pose))
            shots.append((row.drawn, s.image()))
        images[name] = shots
        assert (row.culling == "coherent") == (name == "coherent")
    assert sum(dr for dr, _ in images["octree"]) > 40
    for (da, a), (db, b) in zip(images["octree"], images["coherent"]):
        assert da == db
        assert np.array_equal(a, b)
    fbo.release()


@pytest.mark.gl
@pytest.mark.parametrize("margin, relative", [(0.0, False), (4.0, False), (0.1, True)])
def test_visibility_ranges_events_and_fades_match_the_cpu(shaders, margin, relative):
    from viewer.frame import FramePipeline
    from viewer.frame.ranges import brute_in_range
    from viewer.render.delta_cull import DeltaCulling

    from tests.frame.test_ranges import integer_scene, surface_points

    rng = np.random.default_rng(11)
    scene = integer_scene(rng, n=400, lod=True, parents=True)
    d = FramePipeline(scene, "coherent", indexes=["coherent"], fade=0.15, hysteresis=(margin, relative),
                      modes={"coherent": lambda f: DeltaCulling(f, shaders)})
    c = FramePipeline(scene, "octree", indexes=["octree"], fade=0.15, hysteresis=(margin, relative))
    cam_d, cam_c = FlyCamera(far=1000.0), FlyCamera(far=1000.0)
    q = np.zeros(3)
    points = [*(np.clip(q + rng.normal(0, 6, 3) * (j + 1) ** 0.5, -95, 95) for j in range(30)),
              *surface_points(scene, rng, count=10)]
    drawn = 0
    for q in points:
        pose = (*q, float(rng.uniform(-180, 180)), 0.0)
        sd, sc = d.step(cam_d, 0.0, pose=pose), c.step(cam_c, 0.0, pose=pose)
        want = np.flatnonzero(brute_in_range(scene.centres, scene.radii, scene.begin, scene.parent, q, 0.15))
        assert sd.visible == want.size == d.mode.gpu_visible
        assert (sd.visible, sd.drawn, sd.entered, sd.left) == (sc.visible, sc.drawn, sc.entered, sc.left)
        assert (sd.band0, sd.band1, sd.band2, sd.band3, sd.proxies, sd.band_changes) == \
            (sc.band0, sc.band1, sc.band2, sc.band3, sc.proxies, sc.band_changes)
        ids, words = d.mode.culler.drawn_ids(), d.mode.culler.records()
        fade_d = dict(zip(ids.tolist(), words[:, -1].tolist()))
        fade_c = dict(zip(c.drawn().tolist(), c.instances["fade"].tolist()))
        assert fade_d.keys() == fade_c.keys()
        assert max((abs(fade_d[k] - fade_c[k]) for k in fade_c), default=0.0) < 1e-6
        assert set(d.mode.list_ids().tolist()) == set(d.events.inside().tolist())
        drawn += sd.drawn
    assert drawn > 0


@pytest.mark.gl
def test_views_sharing_the_mode_each_get_the_cpu_path_s_rows(shaders):
    """Two views of one world share the mode (``viewer.frame.ViewSet``): each view keeps a list of its own,
    following its own tracker's events (the index's deltas are the other view's, so not used)."""
    from viewer.frame import FramePipeline
    from viewer.frame.views import ViewSet
    from viewer.render.delta_cull import DeltaCulling

    scene = recipe_scene("dynamic-100k", 3000)
    d = FramePipeline(scene, "coherent", indexes=["coherent"], hysteresis=(5.0, False),
                      modes={"coherent": lambda f: DeltaCulling(f, shaders)})
    c = FramePipeline(scene, "octree", indexes=["octree"], hysteresis=(5.0, False))
    vd = ViewSet(d, [FlyCamera(far=3000.0), FlyCamera(far=3000.0)])
    vc = ViewSet(c, [FlyCamera(far=3000.0), FlyCamera(far=3000.0)])
    poses = flight(scene, 330)
    seen = 0
    mode = d.mode
    for f in range(140, 330, 5):
        two = [tuple(poses[f]), tuple(poses[f - 60])]
        rd, rc = vd.step(1 / 60, poses=two), vc.step(1 / 60, poses=two)
        for a, b in zip(rd, rc):
            assert (a.visible, a.drawn, a.entered, a.left) == (b.visible, b.drawn, b.entered, b.left)
            seen += a.visible
        assert mode.last_source == ("rebuild" if f == 140 else "events")
        assert len(mode._lists) == 2
        for view in vd.frames:
            v = mode._lists[id(view.events)]
            got = np.frombuffer(v.buf.read(v.count * 4), np.uint32) if v.count else np.zeros(0, np.uint32)
            assert set(got.tolist()) == set(view.events.inside().tolist())
    assert seen > 0


@pytest.mark.gl
def test_turning_the_camera_uploads_no_slot(shaders):
    """Turning in place changes what is drawn, never the list: no slot goes up, the frustum is the GPU's."""
    scene = recipe_scene("clustered-100k", 4000)
    d, c = pipelines(shaders, scene)
    mode = d.mode
    cam_d, cam_c = FlyCamera(far=3000.0), FlyCamera(far=3000.0)
    x, y, z = (float(v) for v in flight(scene, 240)[200, :3])
    drawn_sets = set()
    for f, yaw in enumerate(range(0, 360, 20)):
        pose = (x, y, z, float(yaw), 10.0)
        sd, sc = d.step(cam_d, 0.0, pose=pose), c.step(cam_c, 0.0, pose=pose)
        got = frozenset(mode.drawn_ids().tolist())
        assert got == set(c.drawn().tolist()) and sd.visible == sc.visible > 0
        drawn_sets.add(got)
        if f:
            assert (mode.last_pairs, mode.last_dispatches, sd.entered, sd.left) == (0, 0, 0, 0)
    assert len(drawn_sets) > 3  # the drawn set really changed as the camera turned


@pytest.mark.gl
def test_hysteresis_toggled_and_radius_scaled_mid_flight(shaders):
    """The Y toggle (a margin on, then off) and a radius scale change between frames keep the list the
    tracker's in-set and the drawn set the CPU path's."""
    from viewer.index import INDEXES, brute_query

    scene = recipe_scene("dynamic-100k", 4000)
    d, c = pipelines(shaders, scene)
    mode = d.mode
    cam_d, cam_c = FlyCamera(far=3000.0), FlyCamera(far=3000.0)
    for f, pose in enumerate(flight(scene, 300)[140:300]):
        if f in (20, 60):
            d.set_hysteresis(0.2, True), c.set_hysteresis(0.2, True)
        if f in (40, 90):
            d.set_hysteresis(0.0), c.set_hysteresis(0.0)
        if f in (70, 120):
            scale = 1.5 if f == 70 else 1.0
            d.set_radius_scale(scale), c.set_radius_scale(scale)
        sd, sc = d.step(cam_d, 1 / 60, pose=tuple(pose)), c.step(cam_c, 1 / 60, pose=tuple(pose))
        assert sd.visible == brute_query(d.centres, d.radii, np.asarray(pose[:3])).size == mode.gpu_visible
        assert (sd.visible, sd.drawn, sd.entered, sd.left) == (sc.visible, sc.drawn, sc.entered, sc.left), f
        assert set(mode.drawn_ids().tolist()) == set(c.drawn().tolist()), f
        assert set(mode.list_ids().tolist()) == set(d.events.inside().tolist()), f
        if "coherent" in INDEXES and f:
            # the index is given the tracker's margin before each query: its in-set is the tracker's, so its
            # own deltas are used with the margin on, at the toggles and off again
            assert mode.last_source == "index", (f, mode.last_source)


@pytest.mark.gl
@pytest.mark.parametrize("rows", [80, 11000])  # listed movers written in place (<= DIRECT_RUNS), or scattered
def test_listed_movers_rows_are_current_whatever_the_batches(shaders, rows):
    """Movers' GPU rows go up when the list pass reads them; a repeated batch (``last_move_repeated``) marks
    again only the rows uploaded since, so batches A, A, B, A, a single move, A must still leave every
    listed object's GPU row equal to the world's."""
    scene = recipe_scene("clustered-100k", 12000)
    d, _ = pipelines(shaders, scene)
    mode = d.mode
    cam = FlyCamera(far=3000.0)
    rng = np.random.default_rng(5)
    pose = tuple(float(v) for v in flight(scene, 300)[280])  # ~150 objects in view distance
    d.step(cam, 0.0, pose=pose)
    from viewer.render.delta_cull import DIRECT_RUNS

    listed = mode.list_ids()
    assert listed.size >= 10
    pool = np.union1d(listed, rng.choice(scene.n, rows, replace=False))
    a = np.sort(rng.choice(pool, min(rows, pool.size), replace=False))
    b = np.sort(rng.choice(pool, a.size, replace=False))
    paths = set()
    for k, ids in enumerate([a, a, b, a, None, a, a]):
        if ids is None:
            mode.index.move(int(a[0]), d.centres[a[0]])  # a single move between two batches
        else:
            d.centres[ids] += rng.normal(0, 0.5, (ids.size, 3))  # small steps: they stay listed
            mode.move_many(ids.copy(), d.centres[ids])
            assert mode.index.last_move_repeated == (k in (1, 6)), k
            paths.add(np.intersect1d(ids, mode.list_ids()).size <= DIRECT_RUNS)
        d.step(cam, 0.0, pose=pose)
        listed = mode.list_ids()
        gpu_rows = np.frombuffer(mode.culler.objects.read(), dtype=np.float64).reshape(-1, 4)[listed]
        np.testing.assert_array_equal(gpu_rows[:, :3], d.centres[listed], err_msg=f"step {k}")
    assert paths == {rows < 1000}  # the path this case is for
