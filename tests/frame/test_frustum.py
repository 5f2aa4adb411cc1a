"""Frustum planes and the culling kernel, against a clip-space reference and the numpy version."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.camera import FlyCamera
from viewer.frame.frustum import cull_spheres, cull_spheres_numpy, frustum_planes


@pytest.fixture
def cam():
    c = FlyCamera(position=(10.0, -5.0, 20.0), yaw=35.0, pitch=-20.0, fov=60.0, aspect=1.5, near=0.5, far=300.0)
    return c


def clip_inside(vp, pts):
    h = np.c_[pts, np.ones(len(pts))] @ vp.T
    w = h[:, 3:4]
    return (np.abs(h[:, :3]) <= w).all(axis=1) & (w[:, 0] > 0)


def test_points_match_clip_space(cam, rng):
    vp = cam.view_projection()
    planes = frustum_planes(vp)
    assert planes.shape == (6, 4) and np.allclose(np.linalg.norm(planes[:, :3], axis=1), 1.0)
    pts = cam.position + rng.uniform(-350, 350, (20000, 3))
    d = pts @ planes[:, :3].T + planes[:, 3]
    clear = (np.abs(d) > 1e-6).all(axis=1)  # not on a plane (float ties)
    pts = pts[clear]
    ids = np.arange(len(pts), dtype=np.int64)
    out = np.empty_like(ids)
    m = cull_spheres(planes, pts, np.zeros(len(pts)), ids, len(ids), out)
    want = np.flatnonzero(clip_inside(vp, pts))
    assert m > 100 and np.array_equal(out[:m], want)


def test_kernel_equals_numpy_with_radii(cam, rng):
    planes = frustum_planes(cam.view_projection())
    c = cam.position + rng.uniform(-400, 400, (5000, 3))
    b = rng.uniform(0, 40, 5000)
    ids = rng.permutation(5000).astype(np.int64)[:3000]
    out = np.empty(3000, dtype=np.int64)
    m = cull_spheres(planes, c, b, ids, 3000, out)
    assert np.array_equal(out[:m], cull_spheres_numpy(planes, c, b, ids))
    m2 = cull_spheres(planes, c, b, ids, 100, out)  # only the first k candidates
    assert np.array_equal(out[:m2], cull_spheres_numpy(planes, c, b, ids[:100]))


def test_spheres_straddling_planes_are_kept(cam):
    planes = frustum_planes(cam.view_projection())
    behind = cam.position - 5.0 * cam.forward
    c = np.array([behind, behind, cam.position + 10 * cam.forward])
    b = np.array([1.0, 6.0, 0.0])  # 5 behind the eye: radius 1 outside the near plane, radius 6 reaches past it
    ids = np.arange(3, dtype=np.int64)
    out = np.empty(3, dtype=np.int64)
    m = cull_spheres(planes, c, b, ids, 3, out)
    assert list(out[:m]) == [1, 2]


def test_errors():
    with pytest.raises(ValueError):
        frustum_planes(np.zeros((3, 4)))
    with pytest.raises(ValueError):
        frustum_planes(np.zeros((4, 4)))
    planes = frustum_planes(FlyCamera().view_projection())
    with pytest.raises(ValueError):
        cull_spheres(planes, np.zeros((3, 3)), np.zeros(3), np.arange(3), 3, np.empty(2, dtype=np.int64))
