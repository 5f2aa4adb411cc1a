"""The HUD, headless: the HUD drawn in a frame describes that frame (its counts and pose are the
returned row's, in the saved image's pixels too), the HUD fits a 1280-wide framebuffer, and `viewer view
--headless` names what it draws and the index's build time."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.scenes import generate_scene

from tests.support.cli import run_cli

W, H = 1280, 720


@pytest.fixture(scope="module")
def scene():
    return generate_scene("clustered", 3000, seed=11, clusters=5)


def _poses(scene, n=6):
    """A flight from far off into the densest spot: the counts change every frame."""
    from viewer.camera import busy_spots

    end = np.array(busy_spots(scene.centres, scene.radii, 1)[0].pose)
    start = end + np.array([0.0, 0.0, 400.0, 0.0, 0.0])
    return [tuple(start + (end - start) * k / (n - 1)) for k in range(n)]


def test_the_hud_of_a_frame_is_that_frames_row_and_pixels(gl, scene):
    s = gl.render.ViewerSession(gl.ctx, gl.fbo, scene, index="octree", hud=True)
    rows = [s.frame(1 / 60, pose=p) for p in _poses(scene)]
    last, prev = rows[-1], rows[-2]
    counts = next(l for l in s.hud_shown if l.startswith("objects "))
    pos = next(l for l in s.hud_shown if l.startswith("pos ("))
    print(counts, "|", pos, "| row drawn", last.drawn, "pos", (last.cam_x, last.cam_y, last.cam_z))
    assert f"visible {last.visible} " in counts and f"drawn {last.drawn} " in counts
    assert f"candidates {last.candidates} " in counts
    assert pos.startswith(f"pos ({last.cam_x:.1f}, {last.cam_y:.1f}, {last.cam_z:.1f})  yaw {last.yaw:.0f}")
    assert prev.drawn != last.drawn  # the old HUD (the previous frame's row) would have said another count
    # pixels: the saved image's HUD lines are the text of the returned row, drawn over the same frame
    shot = s.image()
    lines = s.text.fit(s.hud_lines(last), W)
    s.set(hud=False)
    assert s.frame(0.0, pose=_poses(scene)[-1]).drawn == last.drawn
    s.fbo.use()
    s.text.draw(lines, (W, H))
    gl.ctx.finish()
    want = s.image()
    ch = s.text.cell[1]
    for i, line in enumerate(lines):
        if line.startswith(("objects ", "pos (")):
            band = slice(6 + i * ch, 6 + (i + 1) * ch)
            assert np.array_equal(shot[band], want[band]), line


def test_the_longest_hud_line_fits_a_1280_wide_window(gl, scene):
    pytest.importorskip("moderngl_window")
    from viewer.drivers.window import HELP_LINE, EventsSession

    s = EventsSession(gl.ctx, gl.fbo, scene, index="octree", hud=True, hysteresis=(0.1, True))
    s.help_line = HELP_LINE
    s.status = "REC take-12    123.4 s  7404 frames  -> /home/someone/runs/a-rather-long-directory-name/takes  (R stops)"
    s.set(frozen=True, boxes=True)
    s.frame(1 / 60, pose=_poses(scene)[-1])
    widths = [s.text.width_px(l) for l in s.hud_shown]
    print(f"longest HUD line {max(widths)} px of {W}: {s.hud_shown[int(np.argmax(widths))]!r}")
    assert max(widths) <= W
    joined = " ".join(s.hud_shown)
    for key in ("J next busy spot", "O/Home back to start", "Esc quit", "R record"):
        assert key in joined  # wrapped, not cut
    assert 6 + len(s.hud_shown) * s.text.cell[1] < H


def test_headless_view_names_what_it_draws_and_the_build_time(tmp_path):
    from tests.support.gltf_writer import write_glb

    glb = write_glb(tmp_path / "level.glb")
    shot = tmp_path / "level.png"
    r = run_cli("view", glb, "--headless", "--hud", "--frames", "4", "--size", "320x240", "--screenshot", shot)
    assert r.returncode == 0, r.stderr
    head = next(l for l in r.stderr.splitlines() if " frames of " in l)
    print(head)
    print(next(l for l in r.stdout.splitlines() if "built in" in l))
    assert head.endswith(", mesh") and "(built in " in head  # drawn with its own meshes, as the HUD says
    assert shot.exists()
