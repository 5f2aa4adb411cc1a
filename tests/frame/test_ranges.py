"""Visibility ranges, LOD bands and HLOD at run time: exact against brute force on the begin and
end surfaces and after moves, for several indexes; margins against a brute-force rule; bands and band
changes against a brute-force band computation; HLOD with no hole and no double outside the window;
the scene model's checks and its .npz round trip."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.camera import FlyCamera
from viewer.frame.pipeline import FramePipeline
from viewer.frame.ranges import BAND_COLUMNS, brute_bands, brute_in_range
from viewer.index import INDEXES
from viewer.scenes.construct import scene_from_arrays
from viewer.scenes.errors import SceneError
from viewer.scenes.format import read_npz, save_scene
from viewer.scenes.meshes import MeshSet
from viewer.scenes.scene import Motion

INDEX_NAMES = [n for n in ("scan", "octree", "hashgrid", "brute", "hgrid", "looseoctree", "kdtree", "bvh")
               if n in INDEXES and INDEXES[n].unavailable() is None]

# exactly representable offsets of length 1 (times an integer begin or radius: exact in float64)
UNIT_OFFSETS = [(1, 0, 0), (0, -1, 0), (0, 0, 1), (0.6, 0.8, 0), (0, -0.6, 0.8), (-0.8, 0, -0.6)]


def integer_scene(rng, n=600, world=200, lod=False, parents=False):
    """Objects at integer centres with integer radii and begins (every surface point below is exact)."""
    c = rng.integers(-world // 2, world // 2, (n, 3)).astype(np.float64)
    r = rng.integers(5, 60, n).astype(np.float64)
    b = np.floor(r * rng.uniform(0, 0.9, n))
    b[rng.random(n) < 0.2] = 0.0
    kw = {"begin": b}
    if lod:
        s = np.sort(rng.integers(1, 80, (n, 3)).astype(np.float64), axis=1)
        s[rng.random(n) < 0.3, 2] = np.inf
        kw["lod"] = s
    if parents:
        par = np.full(n, -1, dtype=np.int64)
        heads = rng.choice(n, n // 20, replace=False)
        for h in heads:  # a parent with a begin, its children near it
            b[h] = np.floor(r[h] / 2)
            kids = rng.choice(np.setdiff1d(np.arange(n), heads), 4, replace=False)
            par[kids[par[kids] < 0]] = h
        kw["parent"] = par
    return scene_from_arrays(c, r, world=float(world), **kw)


def surface_points(scene, rng, count=40):
    """Camera points exactly on begin and end surfaces of random objects, and random points."""
    pts = []
    for i in rng.choice(scene.n, count, replace=False):
        u = np.array(UNIT_OFFSETS[rng.integers(len(UNIT_OFFSETS))])
        for dist in (scene.begin[i], scene.radii[i]):
            pts.append(scene.centres[i] + dist * u)
    pts += list(rng.uniform(-100, 100, (count, 3)))
    return pts


def visible(p):
    return np.sort(p.visible_ids())


@pytest.mark.parametrize("name", INDEX_NAMES)
@pytest.mark.parametrize("fade", [0.0, 0.15])
def test_ranges_are_exact_on_the_begin_and_end_surfaces(rng, name, fade):
    scene = integer_scene(rng, parents=True)
    p = FramePipeline(scene, name, fade=fade)
    cam = FlyCamera(far=1000.0)
    surface_hits = 0
    for q in surface_points(scene, rng):
        st = p.step(cam, 0.0, pose=(*q, 0.0, 0.0))
        want = np.flatnonzero(brute_in_range(scene.centres, scene.radii, scene.begin, scene.parent, q, fade))
        assert np.array_equal(visible(p), want), (name, q)
        assert st.visible == want.size
        d = scene.centres - q
        d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
        surface_hits += int(np.count_nonzero((d2 == scene.begin ** 2) & (scene.begin > 0) & np.isin(np.arange(scene.n), want)))
    assert surface_hits > 0  # some objects were in range exactly on their begin surface


def test_a_point_on_the_begin_surface_is_in_and_just_inside_it_is_out():
    c = np.zeros((1, 3))
    scene = scene_from_arrays(c, [10.0], begin=[5.0], world=40.0)
    for name in INDEX_NAMES:
        p = FramePipeline(scene, name, fade=0.0)
        cam = FlyCamera(far=100.0)
        for x, want in ((5.0, 1), (np.nextafter(5.0, 0.0), 0), (3.0, 0), (10.0, 1), (np.nextafter(10.0, 11.0), 0)):
            assert p.step(cam, 0.0, pose=(x, 0.0, 0.0, 0.0, 0.0)).visible == want, (name, x)


def moving_scene(rng, n=500):
    base = integer_scene(rng, n=n, parents=True)
    m = n // 3
    ids = np.sort(rng.choice(n, m, replace=False)).astype(np.int64)
    d = rng.normal(size=(m, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    mo = Motion(ids=ids, kind=np.zeros(m, np.int8), speed=rng.uniform(5, 30, m), direction=d,
                axis=np.zeros((m, 3)), orbit_radius=np.zeros(m), phase=np.zeros(m))
    return scene_from_arrays(base.centres, base.radii, world=base.world, begin=base.begin, parent=base.parent,
                             motion=mo)


@pytest.mark.parametrize("name", INDEX_NAMES[:4])
def test_ranges_stay_exact_after_moves(rng, name):
    scene = moving_scene(rng)
    p = FramePipeline(scene, name, fade=0.1)
    cam = FlyCamera(far=1000.0)
    for f in range(25):
        q = rng.uniform(-80, 80, 3)
        p.step(cam, 0.1, pose=(*q, 0.0, 0.0))
        want = np.flatnonzero(brute_in_range(p.centres, p.radii, scene.begin, scene.parent, q, 0.1))
        assert np.array_equal(visible(p), want), (name, f)


def test_views_batch_filters_ranges(rng):
    from viewer.frame.views import ViewSet

    scene = integer_scene(rng, parents=True)
    p = FramePipeline(scene, "octree", fade=0.0)
    cams = [FlyCamera(far=1000.0) for _ in range(3)]
    vs = ViewSet(p, cams)
    for _ in range(5):
        pts = rng.uniform(-90, 90, (3, 3))
        vs.run(0.0, poses=[(*q, 0.0, 0.0) for q in pts])
        for v, q in zip(vs.frames, pts):
            want = np.flatnonzero(brute_in_range(scene.centres, scene.radii, scene.begin, scene.parent, q))
            assert np.array_equal(np.sort(v.visible_ids()), want)


def test_a_scene_without_ranges_runs_as_before(rng):
    c = rng.uniform(-100, 100, (800, 3))
    r = rng.uniform(5, 60, 800)
    plain = scene_from_arrays(c, r, world=220.0)
    zero = scene_from_arrays(c, r, world=220.0, begin=np.zeros(800))
    a, b = FramePipeline(plain, "octree"), FramePipeline(zero, "octree")
    assert not a.ranges.active and not b.ranges.active
    cam = FlyCamera(far=500.0)
    for q in rng.uniform(-90, 90, (10, 3)):
        sa = a.step(cam, 0.0, pose=(*q, 30.0, 10.0))
        sb = b.step(cam, 0.0, pose=(*q, 30.0, 10.0))
        assert np.array_equal(a.drawn(), b.drawn()) and np.array_equal(a.instances, b.instances)
        assert sa.band0 == sa.drawn and sa.band1 == sa.band2 == sa.band3 == sa.band_changes == sa.proxies == 0


# --------------------------------------------------------------------------- margins


def brute_margin_rule(scene, points, margin, relative, fade=0.0):
    """The in-set after each point, object by object: enter when in range, stay while inside every widened
    edge (end + m, begin - m, parent's limit + m; relative: r (1 + m), b (1 - m), limit (1 + m))."""
    c, r, b, par = scene.centres, scene.radii, scene.begin, scene.parent
    lim = b * (1.0 + fade) if fade > 0 else b
    inside = np.zeros(scene.n, bool)
    out = []
    for q in points:
        now = brute_in_range(c, r, b, par, q, fade)
        d = c - q
        d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
        big = r * (1.0 + margin) if relative else r + margin
        small = b * (1.0 - margin) if relative else b - margin
        keep = (d2 <= big * big) & ((small <= 0) | (d2 >= small * small))
        has = par >= 0
        pl = lim[par[has]] * (1.0 + margin) if relative else lim[par[has]] + margin
        keep[has] &= d2[par[has]] < pl * pl
        inside = now | (inside & keep)
        out.append(np.flatnonzero(inside))
    return out


@pytest.mark.parametrize("margin, relative", [(4.0, False), (0.1, True)])
def test_margins_follow_the_brute_force_rule(rng, margin, relative):
    scene = integer_scene(rng, parents=True)
    p = FramePipeline(scene, "hashgrid", fade=0.0, hysteresis=(margin, relative))
    cam = FlyCamera(far=1000.0)
    q = np.zeros(3)
    points = []
    for _ in range(60):  # a wandering camera: objects cross their edges both ways
        q = np.clip(q + rng.normal(0, 6, 3), -95, 95)
        points.append(q.copy())
    want = brute_margin_rule(scene, points, margin, relative)
    for q, w in zip(points, want):
        p.step(cam, 0.0, pose=(*q, 0.0, 0.0))
        assert np.array_equal(np.sort(p.events.inside()), w)


# --------------------------------------------------------------------------- LOD bands


@pytest.mark.parametrize("name", ["scan", "octree"])
def test_bands_counts_and_changes_follow_brute_force(rng, name):
    scene = integer_scene(rng, lod=True)
    p = FramePipeline(scene, name, fade=0.0)
    cam = FlyCamera(far=1000.0)
    last: dict[int, int] = {}
    q = np.zeros(3)
    for f in range(40):
        q = np.clip(q + rng.normal(0, 8, 3), -95, 95)
        if f % 10 == 3:  # exactly on a switch surface of some drawn object
            j = int(p.drawn()[0]) if p.n_drawn else 0
            q = scene.centres[j] + scene.lod[j, 0] * np.array([0.0, 0.6, 0.8])
        st = p.step(cam, 0.0, pose=(*q, float(rng.uniform(-180, 180)), 0.0))
        drawn = p.drawn()
        want = brute_bands(scene.centres, scene.lod, q)[drawn]
        assert np.array_equal(p.ranges.bands, want)
        counts = np.bincount(want, minlength=4)
        assert [getattr(st, c) for c in BAND_COLUMNS] == [*counts[:3], counts[3:].sum()]
        now = dict(zip(drawn.tolist(), want.tolist()))
        expect = {i: (last.get(i, -1), b) for i, b in now.items() if last.get(i, -1) != b}
        expect.update({i: (b, -1) for i, b in last.items() if i not in now})
        ids, prev, cur = p.ranges.changes
        assert {int(i): (int(a), int(b)) for i, a, b in zip(ids, prev, cur)} == expect
        assert st.band_changes == len(expect)
        last = now


def test_mesh_batches_draw_each_band_s_mesh():
    from viewer.frame.mesh_batches import MeshBatches
    from viewer.frame.instances import INSTANCE_DTYPE

    n = 6
    ms = MeshSet(np.zeros((9, 3), np.float32), np.array([[0, 1, 2]] * 3, np.int32), np.array([0, 3, 6, 9]),
                 np.array([0, 1, 2, 3]), np.zeros(n, np.int32), np.tile(np.eye(3, 4), (n, 1, 1)),
                 lods=np.array([[0, 1, -1], [1, 1, 1], [2, 2, 2]], np.int32))
    mb = MeshBatches(ms, np.zeros((n, 3)))
    drawn = np.arange(n, dtype=np.int64)
    mb.group(drawn, np.zeros(n, INSTANCE_DTYPE), np.array([0, 1, 2, 0, 5, 1]))
    assert mb.batches() == [(0, 0, 2), (1, 2, 2)]  # bands 2 and 5 (-> column 2) draw nothing


# --------------------------------------------------------------------------- HLOD


def hlod_scene(rng, groups=30, kids=5):
    """Parents with a begin over groups of children whose own ranges cover the parent's window."""
    pc = rng.integers(-80, 80, (groups, 3)).astype(np.float64)
    pb = rng.integers(20, 40, groups).astype(np.float64)
    centres, radii, begin, parent = [pc], [np.full(groups, 1000.0)], [pb], [np.full(groups, -1)]
    for g in range(groups):
        off = rng.integers(-3, 4, (kids, 3)).astype(np.float64)
        centres.append(pc[g] + off)
        radii.append(np.full(kids, pb[g] * 1.5 + 10))
        begin.append(np.zeros(kids))
        parent.append(np.full(kids, g))
    return scene_from_arrays(np.concatenate(centres), np.concatenate(radii), world=400.0, begin=np.concatenate(begin),
                             parent=np.concatenate(parent), sizes=np.full(groups * (kids + 1), 0.5))


@pytest.mark.parametrize("fade", [0.0, 0.2])
def test_hlod_no_hole_and_no_double_outside_the_window(rng, fade):
    groups, kids = 30, 5
    scene = hlod_scene(rng, groups, kids)
    p = FramePipeline(scene, "octree", fade=fade)
    cam = FlyCamera(far=5000.0)
    line = np.linspace(-150, 150, 200)[:, None] * np.array([1.0, 0.3, -0.2])  # a fly-through
    pts = np.concatenate([line, rng.uniform(-150, 150, (200, 3))])
    windows = 0
    for q in pts:
        p.step(cam, 0.0, pose=(*q, 0.0, 0.0))
        vis = np.zeros(scene.n, bool)
        vis[p.visible_ids()] = True
        kid_vis = vis[groups:].reshape(groups, kids)
        d = scene.centres[:groups] - q
        dp = np.sqrt((d * d).sum(axis=1))
        bp = scene.begin[:groups]
        in_window = (dp >= bp) & (dp < bp * (1 + fade))
        windows += int(in_window.sum())
        assert (vis[:groups] | kid_vis.all(axis=1)).all()  # never a hole: the parent or all its children
        assert not (vis[:groups] & kid_vis.any(axis=1) & ~in_window).any()  # a double only in the window
        assert (kid_vis.all(axis=1) | ~kid_vis.any(axis=1)).all()  # children switch together
    assert fade == 0.0 or windows > 0


def test_hlod_cross_fade_fades_the_child_out_and_the_parent_in(rng):
    scene = hlod_scene(rng, groups=1, kids=1)
    p = FramePipeline(scene, "brute", fade=0.2)
    cam = FlyCamera(far=5000.0)
    bp = scene.begin[0]
    u = np.array([0.0, 0.0, 1.0])  # the camera looks along -z, at the group
    fades = []
    for s in (0.5, 1.0, 1.1, 1.19, 1.3):
        q = scene.centres[0] + s * bp * u
        p.step(cam, 0.0, pose=(*q, 0.0, 0.0))
        ids = p.drawn()
        f = dict(zip(ids.tolist(), p.instances["fade"].tolist()))
        fades.append((f.get(0), f.get(1)))
    (p0, c0), (p1, c1), (p2, c2), (p3, c3), (p4, c4) = fades
    assert p0 is None and c0 == 1.0  # nearer than the parent's begin: only the child, opaque
    assert p1 == 0.0 and c1 == 1.0  # on the begin surface: the parent in, fully transparent
    assert 0.0 < p2 < 1.0 and 0.0 < c2 < 1.0 and abs(p2 + c2 - 1.0) < 1e-5  # in the window: a cross-fade
    assert p3 > 0.9 and c3 < 0.1
    assert p4 == 1.0 and c4 is None  # beyond the window: only the parent


# --------------------------------------------------------------------------- the model


def test_the_model_round_trips_and_checks(tmp_path, rng):
    scene = integer_scene(rng, n=50, lod=True, parents=True)
    t = read_npz(save_scene(scene, tmp_path / "a.npz"))
    assert np.array_equal(t.begin, scene.begin) and np.array_equal(t.lod, scene.lod)
    assert np.array_equal(t.parent, scene.parent)
    with np.load(tmp_path / "a.npz") as z:
        assert int(z["format_version"]) == 3
    ms = MeshSet(np.zeros((6, 3), np.float32), np.array([[0, 1, 2]] * 2, np.int32), np.array([0, 3, 6]),
                 np.array([0, 1, 2]), np.zeros(50, np.int32), np.tile(np.eye(3, 4), (50, 1, 1)),
                 lods=np.array([[0, 1, -1], [1, 1, 1]], np.int32))
    m = read_npz(save_scene(scene_from_arrays(scene.centres, scene.radii, meshes=ms), tmp_path / "m.npz"))
    assert np.array_equal(m.meshes.lods, ms.lods) and m.begin is None
    with np.load(tmp_path / "a.npz") as z:  # a range entry in a version 2 file is an error naming it
        entries = dict(z)
    entries["format_version"] = np.array(2)
    np.savez(tmp_path / "old.npz", **entries)
    with pytest.raises(SceneError) as e:
        read_npz(tmp_path / "old.npz")
    assert e.value.field == "begin" and "version 3" in str(e.value)
    bad = MeshSet(*[getattr(ms, f) for f in ("vertices", "faces", "vertex_start", "face_start", "ids", "transforms")],
                  lods=np.array([[0, 2], [1, 1]], np.int32))
    with pytest.raises(SceneError) as e:
        scene_from_arrays(scene.centres, scene.radii, meshes=bad)
    assert e.value.field == "mesh_lods"
    plain = scene_from_arrays(scene.centres, scene.radii)
    with np.load(save_scene(plain, tmp_path / "b.npz")) as z:
        assert int(z["format_version"]) == 2 and "begin" not in z.files
    c, r = np.zeros((3, 3)), np.full(3, 10.0)
    for kw, field in ((dict(begin=[0, 11, 0]), "begin"), (dict(begin=[np.nan, 0, 0]), "begin"),
                      (dict(lod=[[5, 3], [1, 2], [1, 2]]), "lod"), (dict(lod=[[-1.0], [1], [1]]), "lod"),
                      (dict(parent=[1, 0, -1]), "parent"), (dict(parent=[0, -1, -1]), "parent"),
                      (dict(parent=[3, -1, -1]), "parent"), (dict(parent=[0.5, -1, -1]), "parent")):
        with pytest.raises(SceneError) as e:
            scene_from_arrays(c, r, **kw)
        assert e.value.field == field
