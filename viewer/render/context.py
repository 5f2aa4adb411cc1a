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

__all__ = ["MAX_FRAMEBUFFER_PIXELS", "MAX_FRAMEBUFFER_SIDE", "capped_size", "create_headless_context", "gl_info",
           "gl_max_side", "offscreen_target", "read_rgb", "save_png", "save_png_new"]

#: the largest framebuffer side the window renders (less if the GL implementation allows less:
#: :func:`gl_max_side`)
MAX_FRAMEBUFFER_SIDE = 8192
#: the most pixels the window renders: 2**25 (33.5 megapixels, e.g. 8192x4096 or 7680x4320); a window's
#: colour, back and depth buffers cost ~12 bytes a pixel (400 MB here) and a screenshot ~7 more
MAX_FRAMEBUFFER_PIXELS = 1 << 25


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


def gl_max_side(ctx: moderngl.Context) -> int:
    """The largest framebuffer side to render: :data:`MAX_FRAMEBUFFER_SIDE`, or less when the context's
    ``GL_MAX_VIEWPORT_DIMS``, ``GL_MAX_RENDERBUFFER_SIZE`` or ``GL_MAX_TEXTURE_SIZE`` is smaller."""
    side = MAX_FRAMEBUFFER_SIDE
    info = ctx.info
    for key in ("GL_MAX_VIEWPORT_DIMS", "GL_MAX_RENDERBUFFER_SIZE", "GL_MAX_TEXTURE_SIZE"):
        v = info.get(key)
        for n in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(n, int) and n > 0:
                side = min(side, n)
    return side


def capped_size(size: tuple[int, int], max_side: int = MAX_FRAMEBUFFER_SIDE,
                max_pixels: int = MAX_FRAMEBUFFER_PIXELS) -> tuple[int, int]:
    """``size`` (width, height) scaled down, keeping its aspect ratio, until each side is at most
    ``max_side`` and the area at most ``max_pixels`` (each side at least 1); unchanged when it fits."""
    w, h = max(int(size[0]), 1), max(int(size[1]), 1)
    if w <= max_side and h <= max_side and w * h <= max_pixels:
        return w, h
    scale = min(max_side / w, max_side / h, (max_pixels / (w * h)) ** 0.5)
    cw, ch = max(1, min(max_side, int(w * scale))), max(1, min(max_side, int(h * scale)))
    while cw * ch > max_pixels:  # rounding: shave the longer side
        if cw >= ch:
            cw -= 1
        else:
            ch -= 1
    return cw, ch


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

    from ..files.output import atomic_file

    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_file(path) as f:
        Image.fromarray(rgb, "RGB").save(f, format="PNG")
    return path


def save_png_new(path, rgb: np.ndarray) -> str:
    """Write ``rgb`` as a PNG at ``path``, or, when a file is already there, at the first free
    ``STEM-2.png``, ``STEM-3.png``, ... beside it: never over an existing file (the name is claimed with a
    hard link, so two writers racing for one name both keep their image). Returns the path written.
    :class:`~viewer.files.output.CannotWrite` (an ``OSError`` naming ``path``) when it cannot be written."""
    from PIL import Image

    from ..files.output import CannotWrite

    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    stem, ext = os.path.splitext(path)
    fd, tmp = tempfile.mkstemp(prefix=".screenshot-", suffix=".png", dir=d)  # hidden while it is written
    try:
        with os.fdopen(fd, "wb") as f:
            Image.fromarray(rgb, "RGB").save(f, format="PNG")
        os.chmod(tmp, 0o644)
        for n in range(1, 100_000):
            target = path if n == 1 else f"{stem}-{n}{ext}"
            try:
                os.link(tmp, target)
            except FileExistsError:
                continue
            except OSError:  # a file system without hard links: check, then rename
                if os.path.lexists(target):
                    continue
                os.replace(tmp, target)
                return target
            os.unlink(tmp)
            return target
        raise FileExistsError("no free name beside it")
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):  # a full disk, a quota
            raise CannotWrite.naming(exc, path) from None
        raise
