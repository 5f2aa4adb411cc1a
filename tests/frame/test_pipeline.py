"""The GL-free frame pipeline: exact drawn sets, instance records, buffer growth, index switching,
frozen culling, replay; and no GL module loaded by the pure viewer modules."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from viewer.camera import FlyCamera, InputState
from viewer.frame.pipeline import FRAME_COLUMNS, INSTANCE_DTYPE, LEVEL_PALETTE, FramePipeline, FrameStats, pack_colours
from viewer.frame.frustum import cull_spheres_numpy, frustum_planes
from viewer.index import INDEXES, brute_query

TIMINGS = {"update_ms", "query_ms", "cull_ms", "lod_ms", "gather_ms", "upload_ms", "draw_ms", "frame_ms"}


def make_scene(rng, n=3000, world=400.0):
    c = rng.uniform(-world / 2, world / 2, (n, 3))
    return SimpleNamespace(
        name="test", centres=c, radii=rng.uniform(10, 120, n), sizes=rng.uniform(0.5, 3, n).astype(np.float32),
        colours=rng.integers(0, 256, (n, 4)).astype(np.uint8), category=rng.integers(0, 5, n).astype(np.int32),
    )


def expected_drawn(scene, cam):
    vis = brute_query(scene.centres, scene.radii, cam.position)
    planes = frustum_planes(cam.view_projection())
    return np.sort(cull_spheres_numpy(planes, scene.centres, scene.sizes.astype(np.float64) * np.sqrt(3.0), vis))


def test_frame_stats_are_the_schemas_frame_columns():
    from viewer.recording.schema import COLUMN_INFO

    mine = tuple(c for c in COLUMN_INFO if c.source == "frame")
    assert FRAME_COLUMNS == tuple(c.name for c in mine)
    assert [c.name for c in COLUMN_INFO if c.source != "frame"] == ["record_ms"]  # the recorder's own
    st = FrameStats()
    assert st.as_row() == tuple(st.as_dict().values()) and tuple(st.as_dict()) == FRAME_COLUMNS
    kinds = {"int": int, "float": float, "str": str}
    assert all(type(getattr(st, c.name)) is kinds[c.kind] for c in mine)  # zero of the column's type
    with pytest.raises(AttributeError):
        st.not_a_column = 1  # slotted: a misspelt column is an error, not a silent new attribute


def test_drawn_set_is_exact(rng):
    scene = make_scene(rng)
    p = FramePipeline(scene, "brute", capacity=16)
    cam = FlyCamera(far=500.0)
    for pose in [(0, 0, 0, 0, 0), (50, -20, 30, 120, -30), (-150, 100, 0, -60, 45), (0, 0, 0, 180, 0)]:
        st = p.step(cam, 1 / 60, pose=pose)
        want = expected_drawn(scene, cam)
        assert np.array_equal(np.sort(p.drawn()), want)
        assert st.drawn == len(want) and st.visible == len(brute_query(scene.centres, scene.radii, cam.position))
        assert st.candidates == len(scene.centres) and st.objects == len(scene.centres)
    assert p.capacity >= st.visible  # grew from 16 on QueryOverflow


def test_drawn_nearest_first_ties_by_id(rng):
    scene = make_scene(rng)
    scene.centres[:10] = (0.0, 0.0, -50.0)  # ten at one distance, all in view
    scene.radii[:10] = 100.0
    p = FramePipeline(scene, "brute")
    cam = FlyCamera(far=500.0)
    p.step(cam, 0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0))
    ids = p.drawn()
    d = np.linalg.norm(scene.centres[ids], axis=1)
    assert (np.diff(d) >= 0).all()
    assert list(ids[d == 50.0]) == list(range(10))
    assert np.allclose(np.linalg.norm(p.instances["position"], axis=1), d)


def test_instance_records(rng):
    c = np.array([[0.0, 0.0, -10.0], [3.0, 0.0, -95.0], [0.0, 1.0, -50.0]])
    scene = SimpleNamespace(centres=c, radii=np.array([100.0, 100.0, 40.0]), sizes=np.array([1.0, 2.0, 3.0], np.float32),
                            colours=np.array([[255, 0, 0, 255], [1, 2, 3, 4], [9, 9, 9, 9]], np.uint8))
    p = FramePipeline(scene, "brute", fade=0.15)
    cam = FlyCamera(position=(0.0, 0.0, 5.0), far=1000.0)
    p.step(cam, 0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0))
    inst = p.instances
    assert inst.dtype == INSTANCE_DTYPE and len(inst) == 2  # object 2 is 50 away, its view distance 40
    order = np.argsort(p.drawn())
    inst = inst[order]
    assert np.array_equal(inst["position"], c[:2].astype(np.float32))
    assert np.array_equal(inst["size"], [1.0, 2.0])
    assert np.array_equal(inst["colour"], scene.colours[:2])
    d = np.linalg.norm(c[1])
    assert inst["fade"][0] == 1.0 and np.isclose(inst["fade"][1], (100.0 - d) / 15.0, rtol=1e-6)
    assert p.instance_bytes().nbytes == 48
    # positions are relative to the camera
    p.step(cam, 0.0, pose=(1.0, 2.0, 3.0, 0.0, 0.0))
    rel = p.instances[np.argsort(p.drawn())]["position"]
    assert np.allclose(rel, c[:2] - (1.0, 2.0, 3.0))


def test_index_switching_gives_the_same_set(rng):
    scene = make_scene(rng)
    p = FramePipeline(scene, "brute")
    cam = FlyCamera(far=500.0)
    for name in INDEXES:
        if INDEXES[name].unavailable():
            continue
        p.use_index(name)
        st = p.step(cam, 0.0, pose=(20.0, 10.0, -30.0, 70.0, 10.0))
        assert st.index == name
        assert np.array_equal(np.sort(p.drawn()), expected_drawn(scene, cam)), name
    assert set(p.build_s) >= {"brute"}
    names = p.index_names
    p.use_index(names[0])
    assert p.cycle_index() == names[1 % len(names)] and p.cycle_index(-1) == names[0]
    with pytest.raises(KeyError):
        p.use_index("nope")


def test_a_pipeline_culls_with_any_index_spec_and_cycles_through_it(rng):
    """An index given by its spec's text (a file's class with options, a registered one with options) is built
    from that text, culls exactly, and stays in the I cycle beside the registered indexes."""
    from tests.support.hostile_index import spec

    scene = make_scene(rng)
    fine = spec("Fine", "leaf=4")
    p = FramePipeline(scene, fine, indexes=[fine, "octree:max_depth=8", "octree"])
    cam = FlyCamera(far=500.0)
    for name, option, value in ((fine, "leaf", 4), ("octree:max_depth=8", "max_depth", 8)):
        p.use_index(name)
        st = p.step(cam, 0.0, pose=(20.0, 10.0, -30.0, 70.0, 10.0))
        assert st.index == name and getattr(p.mode.index, option) == value
        assert np.array_equal(np.sort(p.drawn()), expected_drawn(scene, cam)), name
    assert p.cycle_index() == "octree" and p.cycle_index() == fine


def test_frozen_culling_keeps_the_set_and_follows_the_camera(rng):
    scene = make_scene(rng)
    p = FramePipeline(scene, "brute")
    cam = FlyCamera(far=500.0)
    p.step(cam, 0.0, pose=(0.0, 0.0, 0.0, 30.0, 0.0))
    before = np.sort(p.drawn()).copy()
    p.set_frozen(True, cam)
    st = p.step(cam, 0.0, pose=(300.0, 50.0, 80.0, -90.0, 20.0))
    assert np.array_equal(np.sort(p.drawn()), before)
    rel = p.instances["position"]
    assert np.allclose(rel, (scene.centres[p.drawn()] - cam.position).astype(np.float32), atol=1e-3)
    assert (st.cam_x, st.yaw) == (300.0, -90.0)
    p.set_frozen(False)
    p.step(cam, 0.0)
    assert np.array_equal(np.sort(p.drawn()), expected_drawn(scene, cam))


def test_input_and_replay(rng):
    scene = make_scene(rng, 500)
    runs = []
    for _ in range(2):
        p = FramePipeline(scene, "brute")
        cam = FlyCamera(speed=40.0, far=500.0)
        rows = [p.step(cam, 0.1, input_state=InputState(frozenset({"forward"}), mouse_dx=5.0)) for _ in range(20)]
        runs.append([tuple(v for k, v in r.as_dict().items() if k not in TIMINGS) for r in rows])
    assert runs[0] == runs[1]
    last = dict(zip([c for c in FRAME_COLUMNS if c not in TIMINGS], runs[0][-1]))
    assert last["frame"] == 19 and np.isclose(last["t"], 1.9) and last["cam_z"] < -50


def test_colour_by_level(rng):
    scene = make_scene(rng, 500)
    p = FramePipeline(scene, "brute")
    p.set_colour_mode("level")
    assert not p.has_levels and np.array_equal(p.colours, pack_colours(scene.colours))
    assert p.node_boxes() is None
    if "octree" in INDEXES:
        p.use_index("octree")
        assert p.has_levels
        lev = np.asarray(p.index.levels(), dtype=np.int64)
        assert np.array_equal(p.colours, pack_colours(LEVEL_PALETTE)[lev % len(LEVEL_PALETTE)])
        p.step(FlyCamera(far=500.0), 0.0)
        boxes, visited = p.node_boxes()
        assert boxes.shape[1] == 4 and visited.shape == (len(boxes),) and visited.any()
    with pytest.raises(ValueError):
        p.set_colour_mode("rainbow")


def test_pure_modules_load_no_gl():
    mods = ["viewer.camera", "viewer.frame.frustum", "viewer.frame", "viewer.drivers.headless", "viewer.commands.view", "shaders"]
    code = (
        "import sys, importlib\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "print(','.join(m for m in ('moderngl', 'moderngl_window', 'pyglet', 'glcontext') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_index_cycle_starts_with_the_baseline_and_the_core():
    """I cycles scan -> octree -> the other indexes -> the GPU mode, not the registry's alphabet."""
    from viewer.render.modes import culler_names

    names = culler_names()
    assert names[:2] == ["scan", "octree"] and names[-1] == "gpu" and sorted(names[2:-1]) == names[2:-1]
    rng = np.random.default_rng(3)
    p = FramePipeline(make_scene(rng, n=200), "octree")
    assert p.index_names[:2] == ["scan", "octree"] and p.cycle_index() != "rtree"
