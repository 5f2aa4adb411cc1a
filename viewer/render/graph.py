"""The HUD's live stage graph: the last few hundred frames' stage times as stacked bars (update, query,
cull, gather, upload, draw), the index of the newest frame named, and a mark where the index changed.

Drawn with one small colour program (``shaders/graph.glsl``) and the HUD's :class:`TextLayer` for the
labels: no imgui, nothing beyond moderngl. :class:`StageHistory` (the numbers) has no GL in it.
"""

from __future__ import annotations

import math

import moderngl
import numpy as np

from ..frame.stages import STAGES, culler_of
from .shaders import ShaderLibrary
from .text import TextLayer

__all__ = ["GRAPH_STAGES", "STAGE_COLOURS", "GraphLayer", "StageHistory", "nice_scale"]

#: the stacked stages' columns, in pipeline order (every stage of :data:`viewer.frame.STAGES`)
GRAPH_STAGES: tuple[str, ...] = tuple(s.column for s in STAGES)

#: one RGB colour per stage of :data:`GRAPH_STAGES`, each stage's declared colour
STAGE_COLOURS = np.array([s.colour for s in STAGES], dtype=np.float32)


def nice_scale(ms: float) -> float:
    """The smallest of 1, 2, 5 x 10^k milliseconds at or above ``ms`` (at least 0.1)."""
    ms = max(float(ms), 0.1)
    e = 10.0 ** math.floor(math.log10(ms))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * e >= ms * (1 - 1e-9):
            return m * e
    return 10.0 * e


class StageHistory:
    """The stage times of the last ``length`` frames, oldest first.

    times : (length, stages) float32 milliseconds in :data:`GRAPH_STAGES` order (rows before the first frame are 0)
    indexes : the index name of each row ('' before the first frame)
    """

    def __init__(self, length: int = 300) -> None:
        self.length = int(length)
        self.times = np.zeros((self.length, len(GRAPH_STAGES)), dtype=np.float32)
        self.indexes: list[str] = [""] * self.length
        self.count = 0

    def push(self, stats) -> None:
        """Add one frame (a :class:`viewer.frame.FrameStats`, or anything with the stage attributes)."""
        self.times[:-1] = self.times[1:]
        self.times[-1] = [getattr(stats, s) for s in GRAPH_STAGES]
        self.indexes.pop(0)
        self.indexes.append(culler_of(str(stats.index), str(getattr(stats, "culling", "cpu"))))
        self.count += 1

    @property
    def index(self) -> str:
        """The index of the newest frame."""
        return self.indexes[-1]

    def switches(self) -> list[int]:
        """Rows whose index differs from the row before (both recorded frames)."""
        first = self.length - min(self.count, self.length)
        return [i for i in range(first + 1, self.length) if self.indexes[i] != self.indexes[i - 1]]


class GraphLayer:
    """Draws a :class:`StageHistory` into the bottom-left corner of the framebuffer.

    size : (width, height) of the plot area in pixels (shrunk to fit a small framebuffer)
    """

    def __init__(self, ctx: moderngl.Context, shaders: ShaderLibrary, *, size: tuple[int, int] = (420, 110),
                 text: TextLayer | None = None) -> None:
        self.ctx = ctx
        self.size = (int(size[0]), int(size[1]))
        self.prog = shaders.program("graph")
        self.text = text if text is not None else TextLayer(ctx, shaders, px=12, capacity=512)
        self.scale_ms = 1.0
        self._cap = 0
        self.buffer = None
        self.vao = None

    def _reserve(self, vertices: int) -> None:
        if vertices <= self._cap:
            return
        self._cap = max(vertices, 2 * self._cap)
        if self.buffer is not None:
            self.vao.release()
            self.buffer.release()
        self.buffer = self.ctx.buffer(reserve=self._cap * 6 * 4)
        self.vao = self.ctx.vertex_array(self.prog, [(self.buffer, "2f 4f", "in_px", "in_colour")])

    def vertices(self, history: StageHistory, origin: tuple[float, float], size: tuple[float, float]) -> np.ndarray:
        """Triangles of the panel, the stacked bars and the index-switch marks: (V, 6) float32 rows of
        x, y (pixels from the top-left) and RGBA."""
        x0, y0 = origin
        w, h = size
        n = history.length
        t = np.cumsum(history.times, axis=1)  # (n, 6) stacked tops
        total = float(t[:, -1].max()) if n else 0.0
        # the scale grows at once and shrinks slowly, so the bars do not jump about
        want = nice_scale(total)
        self.scale_ms = want if want >= self.scale_ms else max(want, self.scale_ms * 0.98)
        k = h / self.scale_ms
        quads = [np.array([[x0 - 4, y0 - 4, x0 + w + 4, y0 + h + 2]]), ]
        colours = [np.array([[0.0, 0.0, 0.0, 0.55]])]
        bw = w / n
        xs = x0 + np.arange(n) * bw
        bottom = np.concatenate([np.zeros((n, 1)), t[:, :-1]], axis=1)
        base = y0 + h
        for s in range(len(GRAPH_STAGES)):
            top_px = base - np.minimum(t[:, s], self.scale_ms) * k
            bot_px = base - np.minimum(bottom[:, s], self.scale_ms) * k
            keep = bot_px - top_px > 0.01
            if keep.any():
                quads.append(np.column_stack([xs[keep], top_px[keep], xs[keep] + bw, bot_px[keep]]))
                c = np.append(STAGE_COLOURS[s], 0.95)
                colours.append(np.repeat(c[None, :], int(keep.sum()), axis=0))
        for i in history.switches():
            quads.append(np.array([[x0 + i * bw - 1, y0, x0 + i * bw + 1, y0 + h]]))
            colours.append(np.array([[1.0, 1.0, 1.0, 0.9]]))
        q = np.concatenate(quads).astype(np.float32)
        c = np.concatenate(colours).astype(np.float32)
        # two triangles per quad: (l, t) (r, t) (l, b) / (r, t) (r, b) (l, b)
        l, tp, r, b = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
        xy = np.stack([np.stack([l, tp], 1), np.stack([r, tp], 1), np.stack([l, b], 1),
                       np.stack([r, tp], 1), np.stack([r, b], 1), np.stack([l, b], 1)], axis=1)  # (Q, 6, 2)
        rgba = np.repeat(c[:, None, :], 6, axis=1)
        return np.concatenate([xy, rgba], axis=2).reshape(-1, 6)

    def box(self, viewport: tuple[int, int]) -> tuple[float, float, float, float] | None:
        """The plot area ``(x, y, width, height)`` in pixels from the top-left (above the legend line, at
        most a third of the height), or None when the framebuffer is too small for a graph."""
        vw, vh = int(viewport[0]), int(viewport[1])
        w = min(self.size[0], vw - 16)
        h = min(self.size[1], vh // 3)
        if w < 40 or h < 20:
            return None
        return 10.0, float(vh - h - 10 - self.text.cell[1]), float(w), float(h)

    def draw(self, history: StageHistory, viewport: tuple[int, int]) -> None:
        """Draw the graph and its labels over whatever the framebuffer holds (blended, no depth test)."""
        vw, vh = int(viewport[0]), int(viewport[1])
        cw, ch = self.text.cell
        b = self.box(viewport)
        if b is None:
            return
        origin, (w, h) = b[:2], b[2:]
        v = self.vertices(history, origin, (w, h))
        self._reserve(len(v))
        self.buffer.write(v.tobytes())
        ctx = self.ctx
        ctx.disable(moderngl.DEPTH_TEST)
        ctx.enable(moderngl.BLEND)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        self.prog["viewport"].value = (float(vw), float(vh))
        self.vao.render(moderngl.TRIANGLES, vertices=len(v))
        ctx.disable(moderngl.BLEND)
        # labels: the scale and the index above the plot, the stage legend below it, each in its colour
        text = self.text
        white = text.colour
        title = f"{history.index or '-'}  stage ms, last {history.length} frames  (0..{self.scale_ms:g} ms)"
        text.draw([title], (vw, vh), origin=(origin[0], origin[1] - ch - 4))
        x = origin[0]
        for s, name in enumerate(GRAPH_STAGES):
            label = name.removesuffix("_ms")
            text.colour = (*(float(c) for c in STAGE_COLOURS[s]), 1.0)
            text.draw([label], (vw, vh), origin=(x, origin[1] + h + 3))
            x += (len(label) + 2) * cw
        text.colour = white
