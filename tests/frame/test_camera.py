"""The fly camera: movement by explicit dt, key bindings as data, mouse look, matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from viewer.camera import (
    DEFAULT_BINDINGS,
    FlyCamera,
    InputState,
    KeyBindings,
    Pose,
    forward_vector,
    look_at_angles,
    view_rotation,
)


def held(*keys, **kw):
    return InputState.from_keys(keys, **kw)


def test_forward_moves_speed_times_dt_along_the_view():
    cam = FlyCamera(position=(1.0, 2.0, 3.0), speed=10.0)
    assert cam.update(0.5, held("w"))
    assert np.allclose(cam.position, (1.0, 2.0, -2.0))  # yaw 0 looks down -Z
    cam.yaw = 90.0
    cam.update(0.1, held("w"))
    assert np.allclose(cam.position, (2.0, 2.0, -2.0))  # yaw 90 looks down +X


def test_strafe_vertical_fast_and_diagonal_normalised():
    cam = FlyCamera(speed=2.0, fast_factor=5.0)
    cam.update(1.0, held("d"))
    assert np.allclose(cam.position, (2.0, 0.0, 0.0))
    cam.update(1.0, held("a", "left_shift"))
    assert np.allclose(cam.position, (-8.0, 0.0, 0.0))
    cam.update(1.0, held("space"))
    cam.update(0.5, held("q"))
    assert np.allclose(cam.position, (-8.0, 1.0, 0.0))
    cam.update(1.0, held("e"))
    cam.update(1.0, held("left_ctrl"))
    assert np.allclose(cam.position, (-8.0, 1.0, 0.0))
    p0 = cam.position.copy()
    cam.update(1.0, held("w", "d"))
    assert math.isclose(np.linalg.norm(cam.position - p0), 2.0)


def test_opposite_keys_cancel_and_zero_dt_does_not_move():
    cam = FlyCamera()
    assert not cam.update(1.0, held("w", "s"))
    assert not cam.update(0.0, held("w"))
    assert np.array_equal(cam.position, np.zeros(3))


def test_mouse_look_ignores_dt_and_clamps_pitch():
    cam = FlyCamera(sensitivity=0.1)
    cam.update(0.0, InputState(mouse_dx=300.0, mouse_dy=-100.0))  # large moves are kept whole
    assert math.isclose(cam.yaw, 30.0) and math.isclose(cam.pitch, 10.0)
    cam.update(1.0, InputState(mouse_dy=-10_000.0))
    assert cam.pitch == 89.0
    cam.update(1.0, InputState(mouse_dx=1600.0))  # +160 -> wraps to -170
    assert math.isclose(cam.yaw, -170.0)


def test_scroll_scales_speed():
    cam = FlyCamera(speed=8.0, scroll_factor=2.0)
    cam.update(0.0, InputState(scroll=2))
    assert cam.speed == 32.0
    cam.update(0.0, InputState(scroll=-3))
    assert cam.speed == 4.0


def test_bindings_are_data():
    assert DEFAULT_BINDINGS.actions(["w", "left_shift", "x"]) == {"forward", "fast"}
    arrows = KeyBindings({"up": "forward", "down": "back"})
    cam = FlyCamera(speed=1.0)
    cam.update(1.0, InputState.from_keys(["w"], arrows))
    assert np.array_equal(cam.position, np.zeros(3))
    cam.update(1.0, InputState.from_keys(["up"], arrows))
    assert np.allclose(cam.position, (0.0, 0.0, -1.0))


def test_replay_is_exact():
    rng = np.random.default_rng(3)
    keys = ["w", "a", "s", "d", "q", "e", "left_shift"]
    script = [(float(rng.uniform(0.001, 0.05)), list(rng.choice(keys, 2)), float(rng.normal(0, 20)),
               float(rng.normal(0, 20))) for _ in range(200)]
    poses = []
    for _ in range(2):
        cam = FlyCamera(position=(5.0, 1.0, -2.0), speed=3.0)
        for dt, ks, dx, dy in script:
            cam.update(dt, held(*ks, mouse_dx=dx, mouse_dy=dy))
        poses.append(cam.pose)
    assert poses[0] == poses[1]


def test_pose_roundtrip_and_look_at():
    cam = FlyCamera()
    cam.set_pose(Pose(1.0, 2.0, 3.0, 45.0, 100.0))
    assert cam.pose == Pose(1.0, 2.0, 3.0, 45.0, 89.0)
    cam.position = np.array((10.0, 0.0, 0.0))
    cam.look_at((10.0, 5.0, -5.0))
    assert math.isclose(cam.yaw, 0.0, abs_tol=1e-12) and math.isclose(cam.pitch, 45.0)
    yaw, pitch = look_at_angles((0, 0, 0), forward_vector(-120.0, -30.0))
    assert math.isclose(yaw, -120.0) and math.isclose(pitch, -30.0)


def test_view_and_projection_matrices():
    cam = FlyCamera(position=(3.0, -2.0, 7.0), near=0.5, far=200.0, fov=90.0, aspect=2.0)
    target = np.array((13.0, 3.0, -1.0))
    cam.look_at(target)
    v = cam.view_matrix().astype(np.float64)
    eye = v @ np.append(target, 1.0)
    assert np.allclose(eye[:3], (0.0, 0.0, -np.linalg.norm(target - cam.position)), atol=1e-4)
    r = view_rotation(cam.yaw, cam.pitch)[:3, :3]
    assert np.allclose(r @ r.T, np.eye(3)) and math.isclose(np.linalg.det(r), 1.0)
    vp = cam.view_projection()
    for dist, ndc_z in ((0.5, -1.0), (200.0, 1.0)):
        clip = vp @ np.append(cam.position + dist * cam.forward, 1.0)
        assert math.isclose(clip[2] / clip[3], ndc_z, abs_tol=1e-9)
    # fov 90, aspect 2: a point 10 ahead and 10 up sits on the top edge
    clip = cam.projection_matrix().astype(np.float64) @ np.array((0.0, 10.0, -10.0, 1.0))
    assert math.isclose(clip[1] / clip[3], 1.0, rel_tol=1e-6)


def test_bad_pose():
    with pytest.raises(ValueError):
        FlyCamera().set_pose((1.0, 2.0, 3.0))
