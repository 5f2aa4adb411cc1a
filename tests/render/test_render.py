"""GL, headless through EGL: every shader compiles, and rendered frames of a tiny known scene have the
right colours in the right places (pixels asserted, not "non-empty"); index switching and frozen
culling give the reference image; one instance buffer, written in place."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from viewer.camera import FlyCamera, InputState

from tests.support.cli import run_cli

pytestmark = pytest.mark.gl

W, H = 160, 120


# red, green, blue, yellow in view; magenta out of its view distance; cyan behind the camera
TINY = SimpleNamespace(
    name="tiny",
    centres=np.array([[0, 0, -10], [4, 0, -10], [-4, 0, -10], [0, 3, -10], [-4, 3, -10], [0, 0, 10]], float),
    radii=np.array([100, 100, 100, 100, 5, 100], float),
    sizes=np.full(6, 1.0, np.float32),
    colours=np.array([[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 0, 255],
                      [255, 0, 255, 255], [0, 255, 255, 255]], np.uint8),
    category=np.arange(6, dtype=np.int32),
)


def pixel_of(p, fov=60.0):
    """Image (row, col) of the world point p seen from the origin looking down -Z."""
    f = 1.0 / np.tan(np.radians(fov) / 2)
    x = p[0] * f / (W / H) / -p[2]
    y = p[1] * f / -p[2]
    return int((1 - y) / 2 * H), int((x + 1) / 2 * W)


def session(gl, scene=TINY, **kw):
    kw.setdefault("fog", 0.0)
    kw.setdefault("hud", False)
    cam = kw.pop("camera", None) or FlyCamera(far=200.0, near=0.1)
    return gl.render.ViewerSession(gl.ctx, gl.fbo, scene, camera=cam, **kw)


def background(gl):
    from viewer.render.session import FOG_COLOUR

    return np.round(np.array(FOG_COLOUR) * 255)


def is_bg(gl, px):
    return np.abs(px.astype(float) - background(gl)).max() <= 1


def test_every_shader_compiles(gl):
    from viewer.shaders import shader_names

    lib = gl.render.ShaderLibrary(gl.ctx)
    names = shader_names()
    assert {"objects", "boxes", "text"} <= set(names)
    for name in names:
        prog = lib.program(name)
        assert prog is lib.program(name)  # cached
    assert lib.program("objects", {"SPRITES": 1}) is not lib.program("objects")


def test_instance_layout_is_one_dtype(gl):
    """The shaders' per-object inputs, the vertex format and the gather kernel all follow INSTANCE_DTYPE."""
    from viewer.frame.pipeline import INSTANCE_DTYPE
    from viewer.render.renderer import INSTANCE_ATTRIBUTES, attribute_format

    assert attribute_format(INSTANCE_DTYPE) == "3f f 4f1 f"
    lib = gl.render.ShaderLibrary(gl.ctx)
    for defines in (None, {"SPRITES": 1}):
        prog = lib.program("objects", defines)
        for name, attr in zip(INSTANCE_DTYPE.names, INSTANCE_ATTRIBUTES):
            want = INSTANCE_DTYPE.fields[name][0].shape or (1,)
            assert prog[attr].dimension == int(np.prod(want)), (defines, attr)
    with pytest.raises(ValueError, match="padding"):
        attribute_format(np.dtype({"names": ["a", "b"], "formats": ["<f4", "<f4"], "offsets": [0, 8], "itemsize": 12}))


def test_parts_are_included_once_and_are_not_programs(tmp_path, monkeypatch):
    """``#include "_PART.glsl"`` splices a part in (between #line directives, so line numbers still name the
    file's lines); the two culling programs share one definition of the record's steps; a part is not listed as a
    program, and a part that includes another is refused naming it."""
    from viewer.render import shaders as sh
    from viewer.shaders import shader_names

    assert "_cull_record" not in shader_names() and {"cull", "cull_visible"} <= set(shader_names())
    for name in ("cull", "cull_visible"):
        src = sh.stage_sources(name)["compute_shader"]
        assert "#include" not in src.replace("before its #include", "")
        assert src.count("void write_record(") == 1 and src.count("bool within_ranges(") == 1, name
        # the buffers both programs share are declared once, at the binding points the Python side binds
        assert src.count("buffer Command {") == 1 and src.count("uniform Frame {") == 1, name
        assert "binding = B_OBJECTS" in src and f"#define B_OBJECTS {sh.CULL_BINDINGS['OBJECTS']}\n" in src, name
    assert len(set(sh.CULL_BINDINGS.values())) == len(sh.CULL_BINDINGS) and max(sh.CULL_BINDINGS.values()) < 16
    (tmp_path / "prog.glsl").write_text('#version 430\n#if defined COMPUTE_SHADER\n#include "_a.glsl"\n'
                                        '#include "_c.glsl"\nvoid main() {}\n#endif\n')
    (tmp_path / "_a.glsl").write_text("int a() { return 1; }\n")
    (tmp_path / "_c.glsl").write_text("int c() { return 2; }\n")
    (tmp_path / "_b.glsl").write_text('#include "_a.glsl"\n')
    monkeypatch.setattr(sh, "shader_path", lambda name: tmp_path / f"{name}.glsl")
    sh._read.cache_clear()
    try:
        lines = sh.stage_sources("prog")["compute_shader"].splitlines()
        at = lines.index("int a() { return 1; }")
        assert lines[at - 1] == "#line 1 1" and lines[at + 1] == "#line 4 0"
        at = lines.index("int c() { return 2; }")  # the second include: source string 2
        assert lines[at - 1] == "#line 1 2" and lines[at + 1] == "#line 5 0" and lines[at + 2] == "void main() {}"
        (tmp_path / "prog.glsl").write_text('#version 430\n#if defined COMPUTE_SHADER\n#include "_b.glsl"\n#endif\n')
        sh._read.cache_clear()
        with pytest.raises(ValueError, match="_b.glsl"):
            sh.stage_sources("prog")
    finally:
        sh._read.cache_clear()


def test_broken_shader_reports_the_file(gl, tmp_path, monkeypatch):
    from viewer.render import shaders as sh

    bad = tmp_path / "bad.glsl"
    bad.write_text("#version 330\n#if defined VERTEX_SHADER\nvoid main() { nope; }\n#elif defined FRAGMENT_SHADER\n"
                   "out vec4 c; void main() { c = vec4(1); }\n#endif\n")
    monkeypatch.setattr(sh, "shader_path", lambda name: tmp_path / f"{name}.glsl")
    sh._read.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="bad.glsl"):
            sh.ShaderLibrary(gl.ctx).program("bad")
    finally:
        sh._read.cache_clear()


@pytest.mark.parametrize("draw", ["sprites", "mesh"])
def test_known_scene_pixels(gl, draw):
    s = session(gl, draw=draw)
    st = s.frame(0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0))
    assert (st.visible, st.drawn) == (5, 4)  # magenta is beyond its view distance; cyan is behind
    img = s.image()
    assert img.shape == (H, W, 3)
    want = {0: (0,), 1: (1,), 2: (2,), 3: (0, 1)}
    for i, channels in want.items():
        px = img[pixel_of(TINY.centres[i])].astype(int)
        for ch in range(3):
            if ch in channels:
                assert px[ch] >= 100, (i, px)
            else:
                assert px[ch] <= 30, (i, px)
    for rc in [(0, 0), (H - 1, W - 1), (H - 1, 0), pixel_of(TINY.centres[4]), pixel_of((2, 0, -10)),
               pixel_of((0, -3, -10))]:
        assert is_bg(gl, img[rc]), (rc, img[rc])
    # an object covers its projected size: a sphere of radius 1 at distance 10, or a cube's front face
    # (half-extent 1) at distance 9, with fov 60
    r0, c0 = pixel_of(TINY.centres[0])
    col = img[r0 - 20:r0 + 20, c0]  # the yellow object above is further than 20 rows
    covered = ~np.all(np.abs(col.astype(int) - background(gl)) <= 1, axis=1)
    expect = 2 * 1.0 / (10 if draw == "sprites" else 9) / np.tan(np.radians(30)) / 2 * H
    assert abs(covered.sum() - expect) <= 2


def test_camera_moves_under_input(gl):
    s = session(gl)
    s.frame(0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0))
    red = lambda img: ((img[..., 0] > 60) & (img[..., 1] < 30) & (img[..., 2] < 30)).sum()  # noqa: E731
    r0 = red(s.image())
    s.camera.speed = 10.0
    for _ in range(5):
        st = s.frame(0.1, input_state=InputState(frozenset({"forward"})))
    assert np.isclose(st.cam_z, -5.0)
    r1 = red(s.image())
    assert r1 > 3 * r0  # twice as close: the red sphere covers ~4x the pixels
    s.frame(0.0, input_state=InputState(mouse_dx=180.0 / s.camera.sensitivity))  # turn round
    assert s.last.drawn == 1  # only cyan ahead now (behind the start), the rest is behind
    px = s.image()[pixel_of((0.0, 0.0, -15.0))]
    assert px[1] > 100 and px[2] > 100 and px[0] < 30


def random_scene(n=400, seed=7):
    rng = np.random.default_rng(seed)
    return SimpleNamespace(
        name="rand", centres=rng.uniform(-60, 60, (n, 3)), radii=rng.uniform(20, 90, n),
        sizes=rng.uniform(0.5, 2.5, n).astype(np.float32), colours=rng.integers(0, 256, (n, 4)).astype(np.uint8),
        category=np.zeros(n, np.int32),
    )


POSES = [(0.0, 0.0, 0.0, 0.0, 0.0), (30.0, 10.0, -20.0, 135.0, -15.0), (-50.0, -40.0, 50.0, -30.0, 40.0)]


@pytest.mark.parametrize("draw", ["sprites", "mesh"])
def test_index_switching_gives_the_reference_image(gl, draw):
    from viewer.index import INDEXES

    scene = random_scene()
    s = session(gl, scene, draw=draw, fog=1.5, camera=FlyCamera(far=100.0))
    ref = []
    for pose in POSES:
        s.frame(0.0, pose=pose)
        ref.append(s.image())
    assert any((~np.all(np.abs(r.astype(int) - background(gl)) <= 1, axis=2)).sum() > 500 for r in ref)
    for name, cls in INDEXES.items():
        if cls.unavailable() or name == "brute":
            continue
        s.use_index(name)
        for pose, want in zip(POSES, ref):
            s.frame(0.0, pose=pose)
            assert np.array_equal(s.image(), want), (name, pose)


def test_frozen_culling_gives_the_reference_image(gl):
    from viewer.index import INDEXES

    scene = random_scene()
    names = [n for n, c in INDEXES.items() if not c.unavailable()]
    images = {}
    for name in names:
        s = session(gl, scene, index=name, camera=FlyCamera(far=100.0))
        s.frame(0.0, pose=POSES[0])
        live = s.image()
        s.set_frozen(True)
        s.frame(0.0, pose=POSES[0])
        assert np.array_equal(s.image(), live)  # freezing changes nothing where it froze
        s.frame(0.0, pose=POSES[1])  # fly away: query and cull stay at POSES[0]
        images[name] = s.image()
        s.set_frozen(False)
        s.frame(0.0, pose=POSES[1])
        assert s.last.drawn != 0
    for name in names:
        assert np.array_equal(images[name], images["brute"]), name


def test_fade_dithers_at_the_edge_of_view_distance(gl):
    scene = SimpleNamespace(name="fade", centres=np.array([[0.0, 0.0, -10.0]]), radii=np.array([10.5]),
                            sizes=np.array([1.5], np.float32), colours=np.array([[255, 0, 0, 255]], np.uint8))
    s = session(gl, scene, fade=0.2)  # fade = (10.5 - 10) / 2.1 ~ 0.24
    s.frame(0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0))
    r, c = pixel_of(scene.centres[0])
    patch = s.image()[r - 4:r + 4, c - 4:c + 4]
    red = lambda p: (p[..., 0] > 100) & (p[..., 1] < 30)  # noqa: E731
    assert 0.1 < red(patch).mean() < 0.4
    s.set(fade=0.0)
    s.frame(0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0))
    assert red(s.image()[r - 4:r + 4, c - 4:c + 4]).all()


def test_one_instance_buffer_written_in_place(gl):
    s = session(gl, random_scene(), capacity=64, camera=FlyCamera(far=100.0))
    buf = s.renderer.buffer
    for pose in POSES:
        s.frame(0.0, pose=pose)
        assert s.renderer.buffer is buf
    s2 = session(gl, random_scene(), capacity=16, camera=FlyCamera(far=100.0))
    st = s2.frame(0.0, pose=POSES[0])
    assert st.drawn > 16 and s2.renderer.reallocations == 1 and s2.renderer.capacity >= st.drawn
    buf = s2.renderer.buffer
    s2.frame(0.0, pose=POSES[0])
    assert s2.renderer.buffer is buf and s2.renderer.reallocations == 1
    s.frame(0.0, pose=POSES[0])
    assert np.array_equal(s.image(), s2.image())


def test_hud_and_node_boxes(gl):
    from viewer.index import INDEXES

    s = session(gl, random_scene(), camera=FlyCamera(far=100.0))
    s.frame(0.0, pose=POSES[0])
    plain = s.image()
    s.set(hud=True)
    s.frame(0.0, pose=POSES[0])
    hud = s.image()
    diff = np.abs(hud.astype(int) - plain.astype(int)).max(axis=2) > 0
    rows, cols = np.nonzero(diff)
    assert diff.sum() > 200 and rows.max() < 4 * s.text.cell[1] + 8  # text only in the top lines
    assert (hud[rows, cols] > 200).all(axis=1).any()  # white glyph pixels
    s.set(hud=False, boxes=True)
    s.frame(0.0, pose=POSES[0])
    assert np.array_equal(s.image(), plain)  # brute has no nodes
    if "octree" in INDEXES:
        s.use_index("octree")
        s.frame(0.0, pose=POSES[0])
        img = s.image()
        yellow = (img[..., 0] > 240) & (img[..., 1] > 220) & (img[..., 2] < 80)
        assert yellow.sum() > 20  # the visited nodes' edges


def test_headless_viewer_and_screenshot(tmp_path):
    from PIL import Image

    from viewer.drivers.headless import HeadlessViewer, render_frames

    poses = np.array([(0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0, -2.0, 0.0, 0.0)])
    with HeadlessViewer(TINY, size=(W, H), fog=0.0, camera=FlyCamera(far=200.0)) as hv:
        rows = hv.run(poses, 0.5, screenshot=tmp_path / "shot.png")
        assert [r.frame for r in rows] == [0, 1] and [r.t for r in rows] == [0.0, 0.5]
        assert rows[1].cam_z == -2.0 and all(r.frame_ms >= r.draw_ms > 0 for r in rows)
        saved = np.asarray(Image.open(tmp_path / "shot.png").convert("RGB"))
        assert np.array_equal(saved, hv.image())
    seen = []
    rows = render_frames(TINY, poses, dt=0.25, size=(W, H), on_frame=seen.append, camera=FlyCamera(far=200.0))
    assert seen == rows and rows[1].t == 0.25 and rows[1].drawn == 4


def tiny_npz(tmp_path):
    scenes = pytest.importorskip("viewer.scenes")
    sc = scenes.Scene(name="tiny", centres=TINY.centres, radii=TINY.radii, sizes=TINY.sizes, colours=TINY.colours,
                      category=TINY.category, world=100.0)
    return scenes.save_scene(sc, tmp_path / "tiny.npz")


def test_view_command_headless(tmp_path):
    path = tiny_npz(tmp_path)
    shot = tmp_path / "out.png"
    out = run_cli("view", path, "--headless", "--frames", "3", "--size", "64x48", "--screenshot", shot,
                  "--index", "brute")
    assert out.returncode == 0, out.stderr
    assert "median frame" in out.stdout and shot.is_file()


def test_view_command_without_display_says_how_to_run_headless(tmp_path):
    path = tiny_npz(tmp_path)
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    out = subprocess.run([sys.executable, "-m", "viewer", "view", str(path)], capture_output=True, text=True,
                         timeout=60, env=env)
    assert out.returncode == 2 and "--headless" in out.stderr and "Traceback" not in out.stderr


def test_session_options_are_one_object_set_live(gl):
    from viewer.frame.options import SessionOptions

    s = session(gl, random_scene(), camera=FlyCamera(far=100.0), indexes=["brute", "octree"])
    assert s.options.index == "brute" and s.options.indexes == ["brute", "octree"] and s.options.hud is False
    s.frame(0.0, pose=POSES[0])
    brute = s.image()
    o = s.set(index="octree", draw="mesh", boxes=True, hysteresis=(0.1, True), frozen=True)
    assert (o.index, o.draw, o.boxes, o.hysteresis, o.frozen) == ("octree", "mesh", True, (0.1, True), True)
    assert s.hysteresis == "10%" and s.index_name == "octree" and s.cycle_index() == "brute"
    assert s.toggle_draw_mode() == "sprites" and s.toggle_frozen() is False and s.toggle_hysteresis((5.0, False)) == "off"
    s.set(boxes=False)
    st = s.frame(0.0, pose=POSES[0])
    assert np.array_equal(s.image(), brute) and st.index == "brute"
    before = s.options
    for bad in ({"draw": "wire"}, {"colour": "rainbow"}, {"fade": 2.0}):
        with pytest.raises(ValueError):
            s.set(**bad)
    with pytest.raises(TypeError, match="unknown"):
        s.set(sparkle=True)
    with pytest.raises(TypeError, match="fixed"):
        s.set(capacity=8)
    assert s.options == before  # a refused change changes nothing
    t = SessionOptions(index="octree", draw="mesh", hud=False)
    s2 = gl.render.ViewerSession(gl.ctx, gl.fbo, random_scene(), t, camera=FlyCamera(far=100.0))
    assert s2.options.draw == "mesh" and s2.index_name == "octree" and t.indexes is None  # the caller's copy kept


WARM_SCRIPT = r"""
import sys, numba
import numpy as np
from viewer.scenes import generate_scene
from viewer.render import ViewerSession, create_headless_context, offscreen_target

def compiled():
    out = {}
    for name, mod in list(sys.modules.items()):
        if name.startswith("viewer"):
            for attr, obj in list(vars(mod).items()):
                if isinstance(obj, numba.core.dispatcher.Dispatcher):
                    out[f"{name}.{attr}"] = len(obj.signatures)
    return out

scene = generate_scene("clustered", 3000, seed=5, world=600.0, clusters=3, spread_min=20.0, spread_max=40.0,
                       radius={"model": "log-uniform", "min": 5.0, "max": 60.0},
                       motion={"share": 0.3, "speed": 40.0, "radius_pulse": 0.2, "radius_period": 1.0})
ctx = create_headless_context()
fbo = offscreen_target(ctx, (64, 48))
c = scene.cluster_centres[0]
for index in sys.argv[1:]:
    s = ViewerSession(ctx, fbo, scene, index=index, indexes=[index], hud=False, hysteresis=(0.1, True))
    s.warm_up((c[0] - 80.0, c[1], c[2], 90.0, 0.0), 2)
    before = compiled()
    for k in range(6):
        st = s.frame(1 / 60, pose=(c[0] - 80.0 + 4.0 * k, c[1], c[2], 90.0, 0.0))
        assert st.moved > 0 and st.frame == k
    after = compiled()
    grew = {k: (before.get(k, 0), v) for k, v in after.items() if v != before.get(k, 0)}
    print(index, "compiled while recording:", grew)
    assert not grew
"""


def test_warm_up_leaves_the_setup_out_of_the_collectors_scans(gl):
    """After warm_up the setup's objects are frozen (viewer.timing.heap.settle): a collection in a frame walks only
    what the frames made (a generation-1 collection of 5.6 ms fell in a recorded frame before)."""
    import gc

    gc.unfreeze()
    s = session(gl)
    s.warm_up()
    frozen = gc.get_freeze_count()
    assert frozen > 1000, frozen  # the scene, the index, numba's dispatchers, the GL objects
    s.frame(1 / 60)
    old = len(gc.get_objects(generation=2))  # what a full collection would walk now
    assert old < frozen / 10, (old, frozen)


def test_warm_up_leaves_no_compilation_to_recorded_frames(gl):
    """In a fresh process (nothing compiled yet), a moving world: after warm_up, recorded frames compile
    nothing (every numba kernel of the viewer keeps its signature count)."""
    from viewer.index import INDEXES

    names = [n for n in ("octree", "hashgrid", "bvh") if n in INDEXES and not INDEXES[n].unavailable()]
    r = subprocess.run([sys.executable, "-c", WARM_SCRIPT, *names], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
