"""Render frames offscreen through EGL, no display needed: the entry point of recordings and tests.

Typical use (one row per frame; replays are exact because poses and ``dt`` are given)::

    from viewer.drivers.headless import HeadlessViewer
    from viewer.paths import generated_path
    samples = generated_path(scene).sample(dt=1 / 60)          # PoseSamples: poses at a fixed dt
    with HeadlessViewer(scene, size=(1280, 720), index="octree") as hv:
        rows = hv.run(samples, on_frame=recorder.append, screenshot="last.png")

or in one call: ``render_frames(scene, poses, dt=1 / 60, index="octree")``.

Each row is a :class:`viewer.frame.FrameStats` (fields :data:`viewer.frame.FRAME_COLUMNS`). Kernels and
shaders are warmed before the first recorded frame (:meth:`viewer.render.ViewerSession.warm_up`), and the
frame counter and clock start at 0 then.

This module imports GL lazily (in :class:`HeadlessViewer`), so importing it is cheap. EGL and a GLX window
must not share a process on Mesa: do not open a window in a process that used this.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..camera import FlyCamera
from ..frame.pipeline import FrameStats
from ..frame.options import SessionOptions
from ..timing.heap import FrameCollector

__all__ = ["HeadlessViewer", "as_poses", "render_frames"]


def as_poses(poses) -> tuple[list[tuple[float, float, float, float, float]], float | None]:
    """Normalise ``poses`` to a list of ``(x, y, z, yaw, pitch)`` and the dt they carry (or None).

    Accepts :class:`viewer.paths.PoseSamples` (anything with ``pose(k)``, ``len`` and ``dt``), an
    (F, 5) array, or an iterable of 5-sequences such as :class:`viewer.camera.Pose`.
    """
    if hasattr(poses, "pose") and hasattr(poses, "__len__"):
        return [poses.pose(k) for k in range(len(poses))], float(getattr(poses, "dt", 0.0)) or None
    if isinstance(poses, np.ndarray):
        a = np.asarray(poses, dtype=np.float64)
        if a.ndim != 2 or a.shape[1] != 5:
            raise ValueError(f"a pose array must have shape (F, 5), got {a.shape}")
        return [tuple(float(v) for v in row) for row in a], None
    out = []
    for p in poses:
        x, y, z, yaw, pitch = (float(v) for v in p)
        out.append((x, y, z, yaw, pitch))
    return out, None


class HeadlessViewer:
    """An offscreen viewer of one scene on an EGL context: a :class:`viewer.render.ViewerSession` on an
    offscreen framebuffer, driven pose by pose.

    Parameters
    ----------
    scene : a :class:`viewer.scenes.Scene` (or anything with its array fields)
    size : (width, height) pixels
    options : a :class:`viewer.frame.options.SessionOptions` (index, indexes, draw, colour, hud, boxes, fade, fog,
        hysteresis, ...); ``**changes`` override fields of it. Headless, the HUD is off unless asked for.
    camera : lens and speed to use (default: fitted to the scene); poses given to :meth:`run` move it

    A scene with motion (``scene.motion``) moves every frame rendered with ``dt > 0`` (warm-up frames do
    not move it), so two runs of the same poses and ``dt`` see the same world.
    """

    def __init__(self, scene, *, size: tuple[int, int] = (1280, 720), options: SessionOptions | None = None,
                 camera: FlyCamera | None = None, **changes):
        from ..render import ViewerSession, create_headless_context, offscreen_target

        if options is None:
            changes.setdefault("hud", False)
        self.ctx = create_headless_context()
        self.size = (int(size[0]), int(size[1]))
        self.fbo = offscreen_target(self.ctx, self.size)
        self.session = ViewerSession(self.ctx, self.fbo, scene, options, camera=camera, **changes)

    # ----------------------------------------------------------------------------- shortcuts
    @property
    def camera(self) -> FlyCamera:
        return self.session.camera

    def use_index(self, name: str) -> None:
        """Switch the index (built on first use, then kept)."""
        self.session.set(index=name)

    def set_frozen(self, frozen: bool) -> None:
        """Freeze culling at the current camera (or unfreeze)."""
        self.session.set(frozen=frozen)

    # ----------------------------------------------------------------------------- frames
    def render(self, pose=None, dt: float = 0.0) -> FrameStats:
        """Render one frame at ``pose`` ((x, y, z, yaw, pitch); None keeps the camera) and return its stats."""
        return self.session.frame(dt, pose=pose)

    def run(self, poses, dt: float | None = None, *, on_frame: Callable[[FrameStats], object] | None = None,
            screenshot=None, warmup: int = 2) -> list[FrameStats]:
        """Render one frame per pose with a fixed ``dt`` and return one :class:`FrameStats` per frame.

        poses : :class:`viewer.paths.PoseSamples`, an (F, 5) array, or an iterable of
            (x, y, z, yaw, pitch) (e.g. :class:`viewer.camera.Pose`)
        dt : seconds per frame (default: the samples' own dt, else 1/60); it fills the ``t`` / ``dt`` columns
        on_frame : called with each frame's stats as it is produced (e.g. ``recorder.append``)
        screenshot : a path: save the last frame there as PNG
        warmup : unrecorded frames at the first pose before frame 0 (:meth:`ViewerSession.warm_up`; 0: none)
        """
        plist, own_dt = as_poses(poses)
        step = float(dt if dt is not None else (own_dt or 1.0 / 60.0))
        rows: list[FrameStats] = []
        if not plist:
            return rows
        if warmup:
            self.session.warm_up(plist[0], warmup)
        with FrameCollector() as frames_gc:  # no collection inside a timed frame (viewer.timing.heap)
            for pose in plist:
                st = self.session.frame(step, pose=pose)
                rows.append(st)
                if on_frame is not None:
                    on_frame(st)
                frames_gc.between_frames()
        if screenshot:
            self.screenshot(screenshot)
        return rows

    def image(self) -> np.ndarray:
        """The last frame, (H, W, 3) uint8, row 0 at the top."""
        return self.session.image()

    def screenshot(self, path) -> str:
        """Save the last frame as a PNG (atomically)."""
        return self.session.screenshot(path)

    def screenshot_new(self, path) -> str:
        """Save the last frame as a PNG at ``path``, never over an existing file (a name taken: beside it as
        PATH-2.png, PATH-3.png, ..., as the window's screenshot key does); returns the path written."""
        from ..render.context import save_png_new

        return save_png_new(path, self.image())

    def close(self) -> None:
        self.ctx.release()

    def __enter__(self) -> "HeadlessViewer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def render_frames(scene, poses, *, dt: float | None = None, screenshot=None,
                  on_frame: Callable[[FrameStats], object] | None = None, **options) -> list[FrameStats]:
    """Render ``poses`` of ``scene`` offscreen and return the per-frame stats; ``options`` go to
    :class:`HeadlessViewer` (size, camera, options, or any field of :class:`viewer.frame.options.SessionOptions`)."""
    with HeadlessViewer(scene, **options) as hv:
        return hv.run(poses, dt, on_frame=on_frame, screenshot=screenshot)
