"""An imported glTF scene is drawn with its own meshes: one instanced draw per distinct mesh, fed by the
frame's visible instances grouped by mesh; the pixels it covers are those a CPU rasterisation of the same
triangles (transformed on the CPU, one object at a time) covers."""

from __future__ import annotations


import numpy as np
import pytest

from tests.support.gltf_writer import build, quat, write_glb
from viewer.camera import FlyCamera
from viewer.frame.mesh_batches import MeshBatches
from viewer.scenes import import_scene

pytestmark = pytest.mark.gl

W, H = 200, 150


def level(tmp_path):
    """The test glTF, moved in front of a camera at the origin looking down -Z: cubes (mesh 0) and a
    tetrahedron (mesh 1), rotated, scaled and instanced."""
    doc, blob = build()
    doc["nodes"][0].update(translation=[-6, -2, -25], scale=[2.5, 2.5, 2.5])
    doc["nodes"][1].update(translation=[5, 1, -20], rotation=quat((0, 1, 0), 50))
    doc["nodes"][3].update(translation=[0, 0, -80], scale=[0.6, 0.6, 0.6])  # instances tens of units apart
    return import_scene(write_glb(tmp_path / "level.glb", doc, blob), view_distance="constant:value=5000")


def cpu_coverage(scene, cam: FlyCamera, ids) -> np.ndarray:
    """(H, W) bool: pixel centres inside any triangle of the objects ``ids``, transformed and projected here."""
    vp = cam.view_projection()
    ys, xs = np.mgrid[0:H, 0:W]
    px = np.stack([(xs + 0.5) / W * 2 - 1, 1 - (ys + 0.5) / H * 2], -1)  # NDC of pixel centres
    mask = np.zeros((H, W), bool)
    ms = scene.meshes
    for i in ids:
        v, f = ms.mesh(int(ms.ids[i]))
        a = ms.transforms[i]
        w = v.astype(np.float64) @ a[:, :3].T + a[:, 3]
        clip = np.c_[w, np.ones(len(w))] @ vp.T
        assert (clip[:, 3] > 0).all()  # every vertex in front of the camera
        ndc = clip[:, :2] / clip[:, 3:4]
        for tri in ndc[f]:
            e = []
            for j in range(3):
                d, q = tri[(j + 1) % 3] - tri[j], px - tri[j]
                e.append(d[0] * q[..., 1] - d[1] * q[..., 0])
            mask |= ((e[0] >= 0) & (e[1] >= 0) & (e[2] >= 0)) | ((e[0] <= 0) & (e[1] <= 0) & (e[2] <= 0))
    return mask


def test_meshes_group_by_mesh_and_keep_the_draw_order():
    from viewer.frame.instances import INSTANCE_DTYPE
    from viewer.scenes.meshes import MeshSet

    ms = MeshSet(np.zeros((3, 3), np.float32), np.zeros((1, 3), np.int32), np.array([0, 1, 2, 3]),
                 np.array([0, 1, 1, 1]), np.array([2, 0, 2, 1, 0], np.int32), np.tile(np.eye(3, 4), (5, 1, 1)))
    b = MeshBatches(ms, np.zeros((5, 3)))
    drawn = np.array([4, 2, 0, 1], np.int64)  # nearest first
    rec = np.zeros(4, INSTANCE_DTYPE)
    rec["size"] = drawn
    b.group(drawn, rec)
    assert b.batches() == [(0, 0, 2), (2, 2, 2)]  # mesh 1 (object 3) is not drawn: no batch
    assert b.records["size"][:4].tolist() == [4, 1, 2, 0]  # mesh 0: 4 then 1; mesh 2: 2 then 0


def test_a_gltf_scene_is_drawn_with_its_meshes_one_draw_per_mesh(gl, tmp_path):
    scene = level(tmp_path)
    cam = FlyCamera(far=6000.0, near=0.5, aspect=W / H)
    s = gl.render.ViewerSession(gl.ctx, gl.fbo, scene, camera=cam, fog=0.0, hud=False, fade=0.0, index="brute")
    assert s.renderer.mode == "mesh"
    st = s.frame(0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0))
    assert st.visible == scene.n and st.drawn == scene.n
    assert st.draw_calls == 2  # cubes and the tetrahedron
    img = s.image()
    from viewer.render.session import FOG_COLOUR

    drawn = np.abs(img.astype(float) - np.round(np.array(FOG_COLOUR) * 255)).max(axis=2) > 1
    want = cpu_coverage(scene, cam, range(scene.n))
    assert want.sum() > 400  # the objects cover a good part of the image
    differ = drawn ^ want
    # rasterisation rules differ only along edges: a thin rim, far below the covered area
    assert differ.sum() < 0.06 * want.sum(), (differ.sum(), want.sum())
    # the colours are the objects': the cubes' red material, the tetrahedron's blue vertex colour
    red = (img[..., 0] > 100) & (img[..., 2] < 60)
    blue = (img[..., 2] > 100) & (img[..., 0] < 60)
    assert red.sum() > 200 and blue.sum() > 50
    # sprites on V: one draw call
    s.toggle_draw_mode()
    assert s.frame(0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0)).draw_calls == 1


def test_the_gpu_mode_draws_a_files_own_meshes_as_the_cpu_mode_does(gl, tmp_path):
    """Every culling mode draws what the CPU mode draws: culled on the GPU, an imported scene is still drawn
    with its own meshes (one draw per mesh), pixel for pixel the CPU mode's image."""
    scene = level(tmp_path)
    images, rows = {}, {}
    for name in ("brute", "gpu"):
        cam = FlyCamera(far=6000.0, near=0.5, aspect=W / H)
        s = gl.render.ViewerSession(gl.ctx, gl.fbo, scene, camera=cam, fog=0.0, hud=False, fade=0.0, index=name,
                                    indexes=[name])
        rows[name] = s.frame(0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0))
        images[name] = s.image()
        assert np.array_equal(np.sort(s.drawn_ids()), np.arange(scene.n))
    assert (rows["gpu"].culling, rows["gpu"].drawn, rows["gpu"].draw_calls) == ("gpu", scene.n, 2)
    assert rows["brute"].draw_calls == 2
    np.testing.assert_array_equal(images["gpu"], images["brute"])


def test_a_frame_that_draws_nothing_groups_into_no_batches():
    """Grouping an empty frame by mesh (the camera looking away from every object) is no batch, not an
    error, and the next frame groups as usual."""
    from viewer.frame.instances import INSTANCE_DTYPE
    from viewer.scenes.meshes import MeshSet

    ms = MeshSet(np.zeros((3, 3), np.float32), np.zeros((1, 3), np.int32), np.array([0, 1, 2, 3]),
                 np.array([0, 1, 1, 1]), np.array([2, 0, 2, 1, 0], np.int32), np.tile(np.eye(3, 4), (5, 1, 1)))
    b = MeshBatches(ms, np.zeros((5, 3)))
    b.group(np.array([4, 2], np.int64), np.zeros(2, INSTANCE_DTYPE))
    b.group(np.zeros(0, np.int64), np.zeros(0, INSTANCE_DTYPE))
    assert b.batches() == [] and b.n == 0
    b.group(np.array([3], np.int64), np.zeros(1, INSTANCE_DTYPE))
    assert b.batches() == [(1, 0, 1)]
