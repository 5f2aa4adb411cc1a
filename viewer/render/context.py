"""GL contexts and offscreen targets.

On this kind of machine (no GPU, Mesa llvmpipe) the headless context is EGL. An EGL context and a GLX
(X window) context must not be created in one process (X error BadAccess), so headless rendering and
the window live in separate processes.
"""

from __future__ import annotations

import os
import tempfile

import moderngl
import numpy as np

__all__ = ["create_headless_context", "offscreen_target", "read_rgb", "save_png", "gl_info"]


def create_headless_context() -> moderngl.Context:
    """A standalone OpenGL 3.3+ core context over EGL (no display needed)."""
    try:
        return moderngl.create_context(standalone=True, backend="egl", require=330)
    except Exception as exc:
        raise RuntimeError(
            f"cannot create a headless EGL OpenGL context ({exc}); install Mesa's EGL "
            "(Debian/Ubuntu: apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri)"
        ) from exc


def gl_info(ctx: moderngl.Context) -> str:
    """``renderer, version`` of the context, for reports."""
    return f"{ctx.info['GL_RENDERER']}, {ctx.info['GL_VERSION']}"


def offscreen_target(ctx: moderngl.Context, size: tuple[int, int]) -> moderngl.Framebuffer:
    """A framebuffer of ``size`` (width, height) pixels: RGBA8 colour plus a depth buffer."""
    w, h = int(size[0]), int(size[1])
    if w <= 0 or h <= 0:
        raise ValueError(f"size must be positive, got {size!r}")
    return ctx.framebuffer(
        color_attachments=[ctx.renderbuffer((w, h), components=4)],
        depth_attachment=ctx.depth_renderbuffer((w, h)),
    )


def read_rgb(fbo: moderngl.Framebuffer) -> np.ndarray:
    """The framebuffer's colour as (H, W, 3) uint8, row 0 at the top (image order)."""
    w, h = fbo.viewport[2], fbo.viewport[3]
    raw = fbo.read(viewport=fbo.viewport, components=3, alignment=1)
    return np.frombuffer(raw, dtype=np.uint8).reshape(h, w, 3)[::-1].copy()


def save_png(path, rgb: np.ndarray) -> str:
    """Write ``rgb`` (H, W, 3) uint8 as a PNG at ``path`` atomically (temp file, then rename)."""
    from PIL import Image

    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            Image.fromarray(rgb, "RGB").save(f, format="PNG")
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a screenshot is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
