"""HUD text: a glyph atlas rasterised once with Pillow (a monospace font when one is installed) and one
instanced quad per character, from one preallocated buffer. Light, and needs nothing beyond moderngl
and Pillow (no imgui)."""

from __future__ import annotations

import math

import numpy as np
import moderngl

from .shaders import ShaderLibrary

__all__ = ["TextLayer"]

_FIRST, _LAST = 32, 126  # printable ASCII
_GRID = (16, 6)  # atlas columns, rows (96 cells)
_FONTS = ("DejaVuSansMono.ttf", "LiberationMono-Regular.ttf", "Menlo.ttc", "consola.ttf")


def _font(px: int):
    from PIL import ImageFont

    for name in _FONTS:
        try:
            return ImageFont.truetype(name, px)
        except OSError:
            continue
    return ImageFont.load_default(size=px)


def glyph_atlas(px: int = 14) -> tuple[np.ndarray, tuple[int, int]]:
    """Rasterise ASCII 32..126 into a grid: ((rows * ch, cols * cw) uint8 coverage, (cw, ch) cell px)."""
    from PIL import Image, ImageDraw

    font = _font(px)
    ascent, descent = font.getmetrics()
    cw = max(int(round(font.getlength("M"))), 1)
    ch = ascent + descent
    cols, rows = _GRID
    img = Image.new("L", (cols * cw, rows * ch), 0)
    draw = ImageDraw.Draw(img)
    for code in range(_FIRST, _LAST + 1):
        g = code - _FIRST
        x, y = (g % cols) * cw, (g // cols) * ch
        draw.text((x, y), chr(code), fill=255, font=font)
    return np.asarray(img, dtype=np.uint8), (cw, ch)


class TextLayer:
    """Draws lines of text in the top-left corner over a translucent panel.

    capacity : characters drawn at most per frame (the rest is cut)
    """

    def __init__(self, ctx: moderngl.Context, shaders: ShaderLibrary, *, px: int = 14, capacity: int = 4096):
        self.ctx = ctx
        atlas, self.cell = glyph_atlas(px)
        self.texture = ctx.texture((atlas.shape[1], atlas.shape[0]), 1, atlas.tobytes(), alignment=1)
        self.texture.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self.prog = shaders.program("text")
        self.capacity = int(capacity)
        self._chars = np.zeros((self.capacity, 3), dtype=np.float32)
        self.buffer = ctx.buffer(reserve=self._chars.nbytes)
        corners = np.array([0, 0, 1, 0, 0, 1, 1, 1], dtype=np.float32)
        self._quad = ctx.buffer(corners.tobytes())
        self.vao = ctx.vertex_array(
            self.prog, [(self._quad, "2f", "in_corner"), (self.buffer, "3f/i", "in_char")]
        )
        self.colour = (1.0, 1.0, 1.0, 1.0)
        self.shadow = (0.0, 0.0, 0.0, 0.55)

    def width_px(self, line: str, origin_x: float = 6.0) -> int:
        """Pixels from the framebuffer's left edge to the right end of ``line`` drawn at ``origin_x``."""
        return int(math.ceil(origin_x + len(line) * self.cell[0]))

    def fit(self, lines: list[str], width: int, origin_x: float = 6.0) -> list[str]:
        """``lines`` with each one wider than ``width`` pixels (drawn at ``origin_x``) wrapped: broken at
        its last double space (the HUD's field separator) that fits, else its last space, else cut; the
        continuation lines are indented by two spaces."""
        cols = max(int((width - origin_x) // self.cell[0]), 8)
        out: list[str] = []
        for line in lines:
            while len(line) > cols:
                head = line[:cols + 1]
                cut = head.rfind("  ")
                if cut <= 2:
                    cut = head.rfind(" ")
                if cut <= 2:
                    cut = cols
                out.append(line[:cut].rstrip())
                line = "  " + line[cut:].lstrip()
            out.append(line)
        return out

    def layout(self, lines: list[str]) -> int:
        """Fill the character array from ``lines``; returns the number of characters."""
        n = 0
        cap = self.capacity
        a = self._chars
        for row, line in enumerate(lines):
            for col, c in enumerate(line):
                if n >= cap:
                    return n
                code = ord(c)
                if code < _FIRST or code > _LAST:
                    code = ord("?")
                a[n, 0] = col
                a[n, 1] = row
                a[n, 2] = code - _FIRST
                n += 1
        return n

    def draw(self, lines: list[str], viewport: tuple[int, int], origin: tuple[float, float] = (6.0, 6.0)) -> None:
        """Draw ``lines`` with the top-left of the first at ``origin`` (pixels from the top-left)."""
        n = self.layout(lines)
        if n == 0:
            return
        self.buffer.write(self._chars[:n])
        p = self.prog
        p["viewport"].value = (float(viewport[0]), float(viewport[1]))
        p["cell"].value = (float(self.cell[0]), float(self.cell[1]))
        p["origin"].value = (float(origin[0]), float(origin[1]))
        p["atlas_grid"].value = (float(_GRID[0]), float(_GRID[1]))
        p["colour"].value = self.colour
        p["shadow"].value = self.shadow
        p["atlas"].value = 0
        self.texture.use(0)
        ctx = self.ctx
        ctx.disable(moderngl.DEPTH_TEST)
        ctx.enable(moderngl.BLEND)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        self.vao.render(moderngl.TRIANGLE_STRIP, instances=n)
        ctx.disable(moderngl.BLEND)
