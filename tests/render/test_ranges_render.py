"""HLOD on pixels: flying away from a group, its children (red) give way to their proxy (blue)
with never a frame showing neither (a hole) nor both (a double) outside the cross-fade window; and the band
colour mode paints each drawn object its LOD band's colour."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.camera import FlyCamera
from viewer.frame.ranges import BAND_PALETTE
from viewer.scenes.construct import scene_from_arrays

pytestmark = pytest.mark.gl

W, H = 160, 120

RED, BLUE = (255, 0, 0, 255), (0, 0, 255, 255)


def group_scene():
    """A proxy (blue, begin 20) over two children (red) at z = -10."""
    centres = np.array([[1.5, 0, -10], [0, 0, -10], [3, 0, -10]], float)
    return scene_from_arrays(centres, [1000.0, 1000.0, 1000.0], begin=[20.0, 0.0, 0.0], parent=[-1, 0, 0],
                             sizes=[2.5, 1.0, 1.0], colours=np.array([BLUE, RED, RED], np.uint8), world=100.0)


def session(gl, scene, **kw):
    cam = FlyCamera(far=2000.0, near=0.1)
    return gl.render.ViewerSession(gl.ctx, gl.fbo, scene, camera=cam, fog=0.0, hud=False, **kw)


def counts(img):
    px = img.reshape(-1, 3).astype(int)
    red = np.count_nonzero((px[:, 0] > 120) & (px[:, 1] < 60) & (px[:, 2] < 60))
    blue = np.count_nonzero((px[:, 2] > 120) & (px[:, 0] < 60) & (px[:, 1] < 60))
    return red, blue


@pytest.mark.parametrize("fade", [0.0, 0.3])
def test_hlod_pixels_no_hole_no_double_outside_the_window(gl, fade):
    scene = group_scene()
    s = session(gl, scene, fade=fade)
    seen = set()
    for z in np.linspace(0.0, 40.0, 81):
        s.frame(0.0, pose=(0.0, 0.0, float(z), 0.0, 0.0))
        red, blue = counts(s.image())
        dp = float(np.sqrt(1.5**2 + (z + 10) ** 2))
        in_window = 20.0 <= dp < 20.0 * (1 + fade)
        assert red or blue, z  # never a hole
        if not in_window:
            assert not (red and blue), z  # never a double outside the window
            assert (red > 0) == (dp < 20.0), z  # children nearer than the proxy's begin, the proxy beyond
        seen.add((red > 0, blue > 0))
    assert (True, False) in seen and (False, True) in seen
    if fade:
        assert (True, True) in seen  # the cross-fade drew both, dithered


def test_band_colour_mode_paints_bands(gl):
    centres = np.array([[0, 0, -10], [3, 0, -10]], float)
    scene = scene_from_arrays(centres, [1000.0, 1000.0], lod=[[5.0, 50.0], [20.0, 50.0]], sizes=[1.0, 1.0],
                              colours=np.full((2, 4), 255, np.uint8), world=100.0)
    s = session(gl, scene, fade=0.0, colour="band")
    st = s.frame(0.0, pose=(0.0, 0.0, 0.0, 0.0, 0.0))  # distances 10 and ~10.4: bands 1 and 0
    assert (st.band0, st.band1, st.band2, st.band3) == (1, 1, 0, 0)
    img = s.image().reshape(-1, 3).astype(int)
    for band in (0, 1):
        want = BAND_PALETTE[band, :3].astype(int)
        assert np.count_nonzero(np.abs(img - want).max(axis=1) <= 40) > 20, band


def quad(x0, x1):
    """Two-sided quad x0..x1 by -1..1 at z = 0: 4 vertices, 4 triangles."""
    v = np.array([[x0, -1, 0], [x1, -1, 0], [x1, 1, 0], [x0, 1, 0]], np.float32)
    f = np.array([[0, 1, 2], [0, 2, 3], [0, 2, 1], [0, 3, 2]], np.int32)
    return v, f


def test_each_band_draws_its_own_mesh(gl):
    from tests.render.test_render import pixel_of
    from viewer.scenes.meshes import MeshSet

    (v0, f0), (v1, f1) = quad(-3, -1), quad(1, 3)
    for lods, far_mesh in (([[0, 1], [1, 1]], 1), ([[0, -1], [1, 1]], None)):
        ms = MeshSet(np.concatenate([v0, v1]), np.concatenate([f0, f1]), np.array([0, 4, 8]), np.array([0, 4, 8]),
                     np.zeros(1, np.int32), np.array([[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, -10]]], float),
                     lods=np.array(lods, np.int32))
        scene = scene_from_arrays([[0.0, 0.0, -10.0]], [1000.0], lod=[[15.0]], meshes=ms, sizes=[3.0], world=100.0)
        s = session(gl, scene, fade=0.0, draw="mesh")
        for z, band in ((0.0, 0), (10.0, 1)):
            st = s.frame(0.0, pose=(0.0, 0.0, z, 0.0, 0.0))
            img = s.image()
            bg = img[0, 0].astype(int)
            left = np.abs(img[pixel_of((-2.0, 0.0, -10.0 - z))].astype(int) - bg).max() > 10
            right = np.abs(img[pixel_of((2.0, 0.0, -10.0 - z))].astype(int) - bg).max() > 10
            mesh = 0 if band == 0 else far_mesh
            assert (left, right) == (mesh == 0, mesh == 1), (lods, z)
            assert st.draw_calls == (0 if mesh is None else 1) and (st.band0, st.band1) == (1 - band, band)
