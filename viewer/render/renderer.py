"""Draws a frame's instance records: one preallocated instance buffer, written with ``buffer.write``
each frame (never a new buffer or an orphan per frame; it is replaced only when a frame needs more room,
at double the size), and one instanced draw of either a low-poly mesh or point-sprite impostors; a scene
of style "stars" (:data:`viewer.scenes.look.STYLES`) is always drawn as unlit star sprites, added onto the
sky (``shaders/stars.glsl``). Also the index's nodes as wire boxes.
"""

from __future__ import annotations

import numpy as np
import moderngl

from ..frame.instances import INSTANCE_DTYPE
from ..frame.options import DRAW_MODES
from .shaders import ShaderLibrary

__all__ = ["DRAW_MODES", "INSTANCE_ATTRIBUTES", "SceneRenderer", "attribute_format", "cube_mesh", "cube_edges"]

# numpy base type -> moderngl format letter: float32 as is, uint8 normalised to [0, 1]
_FORMAT_CODES = {np.dtype("<f4"): "f", np.dtype("u1"): "f1"}


def attribute_format(dtype: np.dtype) -> str:
    """The moderngl buffer format of records of ``dtype`` (a structured dtype of float32 / uint8 fields,
    without padding), one attribute per field: ``INSTANCE_DTYPE`` -> ``"3f f 4f1 f"``."""
    parts = []
    for name in dtype.names:
        ft = dtype.fields[name][0]
        base, shape = ft.base, ft.shape
        if base not in _FORMAT_CODES:
            raise ValueError(f"field {name!r}: no vertex format for {base}")
        count = int(np.prod(shape)) if shape else 1
        parts.append(f"{count if count > 1 else ''}{_FORMAT_CODES[base]}")
    fmt = " ".join(parts)
    if sum(np.dtype(f.base).itemsize * (int(np.prod(f.shape)) if f.shape else 1)
           for f, *_ in dtype.fields.values()) != dtype.itemsize:
        raise ValueError(f"{dtype} has padding: the vertex format {fmt!r} would not match it")
    return fmt


#: The object shaders' per-object inputs: ``in_`` + each field of :data:`viewer.frame.instances.INSTANCE_DTYPE`.
INSTANCE_ATTRIBUTES: tuple[str, ...] = tuple(f"in_{name}" for name in INSTANCE_DTYPE.names)
_INSTANCE_FORMAT = attribute_format(INSTANCE_DTYPE)


def _read_by(prog) -> tuple[str, ...]:
    """The instance format and attribute names for ``prog``: the fields it does not read (the star shader
    has no use for ``size``) are skipped as padding, so one record layout feeds every program."""
    fmt, names = [], []
    for part, name, field in zip(_INSTANCE_FORMAT.split(), INSTANCE_ATTRIBUTES, INSTANCE_DTYPE.names):
        if prog.get(name, None) is not None:
            fmt.append(part)
            names.append(name)
        else:
            fmt.append(f"{INSTANCE_DTYPE.fields[field][0].itemsize}x")
    return (" ".join(fmt), *names)


def cube_mesh() -> np.ndarray:
    """A cube of half-extent 1 as 12 triangles with flat normals: (36, 6) float32 (position, normal)."""
    out = []
    for axis in range(3):
        for sign in (1.0, -1.0):
            n = np.zeros(3)
            n[axis] = sign
            u = np.zeros(3)
            v = np.zeros(3)
            u[(axis + 1) % 3] = 1.0
            v[(axis + 2) % 3] = 1.0
            if sign < 0:
                u, v = v, u  # keep counter-clockwise winding seen from outside
            c = n
            quad = [c - u - v, c + u - v, c + u + v, c - u - v, c + u + v, c - u + v]
            out += [np.concatenate([p, n]) for p in quad]
    return np.array(out, dtype=np.float32)


def cube_edges() -> np.ndarray:
    """The 12 edges of the unit cube [0, 1]^3 as line vertices: (24, 3) float32."""
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=np.float32)
    edges = []
    for i in range(8):
        for j in range(i + 1, 8):
            if np.abs(corners[i] - corners[j]).sum() == 1:
                edges += [corners[i], corners[j]]
    return np.array(edges, dtype=np.float32)


def _mat(m: np.ndarray) -> bytes:
    """A row-major maths matrix as GL's column-major float32 bytes."""
    return np.ascontiguousarray(np.asarray(m, dtype=np.float32).T).tobytes()


class SceneRenderer:
    """The objects and node boxes of one context.

    capacity : instances the GPU buffer holds at first (:data:`viewer.frame.instances.INSTANCE_DTYPE` records)
    mode : "sprites" (point impostors) or "mesh" (instanced cubes)
    style : "objects" (lit, fogged, dithered fade-in) or "stars" (unlit point sprites added onto the sky,
        brightness from each star's apparent magnitude; ``mode`` does not apply)
    """

    def __init__(self, ctx: moderngl.Context, shaders: ShaderLibrary, *, capacity: int = 4096, mode: str = "sprites",
                 fog_colour=(0.62, 0.70, 0.80), fog_density: float = 0.0, ambient: float = 0.35,
                 light_dir=(0.35, 0.8, 0.5), style: str = "objects"):
        if mode not in DRAW_MODES:
            raise ValueError(f"draw mode must be one of {DRAW_MODES}, got {mode!r}")
        if style not in ("objects", "stars"):
            raise ValueError(f"style must be 'objects' or 'stars', got {style!r}")
        self.stars = style == "stars"
        self.ctx = ctx
        self.shaders = shaders
        self.mode = mode
        self.fog_colour = tuple(float(c) for c in fog_colour)
        self.fog_density = float(fog_density)
        self.ambient = float(ambient)
        ld = np.asarray(light_dir, dtype=np.float64)
        self.light_dir = ld / np.linalg.norm(ld)  # in eye space: lit from above-right-front of the viewer
        self.prog_mesh = shaders.program("objects")
        self.prog_sprite = shaders.program("stars") if self.stars else shaders.program("objects", {"SPRITES": 1})
        self.prog_boxes = shaders.program("boxes")
        self.cube = ctx.buffer(cube_mesh().tobytes())
        self.edges = ctx.buffer(cube_edges().tobytes())
        lo, hi = ctx.info.get("GL_POINT_SIZE_RANGE", (1.0, 255.0))
        self.max_point_size = float(hi)
        self.capacity = 0
        self.buffer: moderngl.Buffer | None = None
        self.reallocations = 0
        self._indirect_vaos: dict[int, tuple[moderngl.VertexArray, moderngl.VertexArray]] = {}
        self._alloc(max(16, int(capacity)))
        self.box_capacity = 0
        self.box_buffer: moderngl.Buffer | None = None
        self.n_boxes = 0
        self._box_data = np.zeros((0, 5), dtype=np.float32)

    # ----------------------------------------------------------------------------- instances
    def _alloc(self, capacity: int) -> None:
        if self.buffer is not None:
            self.buffer.release()
            self.vao_mesh.release()
            self.vao_sprite.release()
            self.reallocations += 1
        self.capacity = capacity
        self.buffer = self.ctx.buffer(reserve=capacity * INSTANCE_DTYPE.itemsize, dynamic=True)
        self.vao_mesh, self.vao_sprite = self._vertex_arrays(self.buffer)

    def _vertex_arrays(self, buffer: moderngl.Buffer) -> tuple[moderngl.VertexArray, moderngl.VertexArray]:
        """The (mesh, sprite) vertex arrays over the records in ``buffer``."""
        mesh = self.ctx.vertex_array(
            self.prog_mesh,
            [(self.cube, "3f 3f", "in_vertex", "in_normal"), (buffer, f"{_INSTANCE_FORMAT}/i", *INSTANCE_ATTRIBUTES)],
        )
        # sprites read the same records once per point (per vertex, not per instance)
        sprite = self.ctx.vertex_array(self.prog_sprite, [(buffer, *_read_by(self.prog_sprite))])
        return mesh, sprite

    def upload(self, data, n: int) -> None:
        """Write ``n`` instance records (``data``: n * INSTANCE_DTYPE.itemsize bytes) at the start of the buffer."""
        if n > self.capacity:
            self._alloc(max(n, 2 * self.capacity))
        if n:
            self.buffer.write(data)

    def set_uniforms(self, prog, view_rot: np.ndarray, proj: np.ndarray) -> None:
        """The view, projection, light and fog uniforms of ``prog`` (an objects program)."""
        prog["m_view"].write(_mat(view_rot))
        prog["m_proj"].write(_mat(proj))
        prog["light_dir"].value = tuple(self.light_dir)
        prog["fog_colour"].value = self.fog_colour
        prog["fog_density"].value = self.fog_density
        prog["ambient"].value = self.ambient

    def draw(self, n: int, view_rot: np.ndarray, proj: np.ndarray, viewport_height: int) -> None:
        """One instanced draw of the first ``n`` records into the bound framebuffer.

        view_rot : (4, 4) view rotation (positions are camera-relative); proj : (4, 4) projection
        """
        if n <= 0:
            return
        if self.mode == "mesh" and not self.stars:
            self._draw(self.vao_mesh, view_rot, proj, viewport_height,
                       lambda vao: vao.render(moderngl.TRIANGLES, vertices=36, instances=n))
        else:
            self._draw(self.vao_sprite, view_rot, proj, viewport_height,
                       lambda vao: vao.render(moderngl.POINTS, vertices=n))

    def draw_indirect(self, instances: moderngl.Buffer, command: moderngl.Buffer, view_rot: np.ndarray,
                      proj: np.ndarray, viewport_height: int) -> None:
        """Draw records the GPU wrote itself (:mod:`viewer.render.gpu_cull`): ``instances`` holds them,
        ``command`` is one indirect draw command (count, instanceCount, first, baseInstance) the GPU
        filled: for sprites the vertex count is the records', for the mesh the instance count."""
        vaos = self._indirect_vaos.get(instances.glo)
        if vaos is None:
            vaos = self._indirect_vaos[instances.glo] = self._vertex_arrays(instances)
        vao_mesh, vao_sprite = vaos
        if self.mode == "mesh" and not self.stars:
            self._draw(vao_mesh, view_rot, proj, viewport_height,
                       lambda vao: vao.render_indirect(command, moderngl.TRIANGLES, count=1))
        else:
            self._draw(vao_sprite, view_rot, proj, viewport_height,
                       lambda vao: vao.render_indirect(command, moderngl.POINTS, count=1))

    def _draw(self, vao, view_rot, proj, viewport_height, render) -> None:
        ctx = self.ctx
        if self.stars:
            self._draw_stars(vao, view_rot, proj, viewport_height, render)
            return
        ctx.enable(moderngl.DEPTH_TEST)
        if self.mode == "mesh":
            ctx.enable(moderngl.CULL_FACE)
            self.set_uniforms(self.prog_mesh, view_rot, proj)
            render(vao)
            ctx.disable(moderngl.CULL_FACE)
        else:
            ctx.enable(moderngl.PROGRAM_POINT_SIZE)
            p = self.prog_sprite
            self.set_uniforms(p, view_rot, proj)
            p["viewport_height"].value = float(viewport_height)
            p["max_point_size"].value = self.max_point_size
            render(vao)
            ctx.disable(moderngl.PROGRAM_POINT_SIZE)

    def _draw_stars(self, vao, view_rot, proj, viewport_height, render) -> None:
        """Stars add their light onto the sky: no depth test (nor depth writes), blend ONE, ONE."""
        ctx = self.ctx
        p = self.prog_sprite
        p["m_view"].write(_mat(view_rot))
        p["m_proj"].write(_mat(proj))
        p["viewport_height"].value = float(viewport_height)
        p["max_point_size"].value = self.max_point_size
        ctx.disable(moderngl.DEPTH_TEST)
        ctx.enable(moderngl.PROGRAM_POINT_SIZE | moderngl.BLEND)
        ctx.blend_func = moderngl.ONE, moderngl.ONE
        render(vao)
        ctx.disable(moderngl.PROGRAM_POINT_SIZE | moderngl.BLEND)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA  # moderngl's default

    # ----------------------------------------------------------------------------- node boxes
    def upload_boxes(self, boxes: np.ndarray, visited: np.ndarray, eye: np.ndarray) -> None:
        """Node boxes (M, 4) [x0, y0, z0, edge] world units, visited (M,) bool; drawn relative to ``eye``."""
        m = len(boxes)
        if m > self._box_data.shape[0]:
            self._box_data = np.zeros((max(m, 2 * self._box_data.shape[0], 256), 5), dtype=np.float32)
        d = self._box_data
        if m:
            d[:m, :3] = np.asarray(boxes[:, :3], dtype=np.float64) - eye
            d[:m, 3] = boxes[:, 3]
            d[:m, 4] = visited
        if m > self.box_capacity:
            if self.box_buffer is not None:
                self.box_buffer.release()
                self.vao_boxes.release()
            self.box_capacity = d.shape[0]
            self.box_buffer = self.ctx.buffer(reserve=d.nbytes, dynamic=True)
            self.vao_boxes = self.ctx.vertex_array(
                self.prog_boxes,
                [(self.edges, "3f", "in_position"), (self.box_buffer, "4f f/i", "in_box", "in_visited")],
            )
        if m:
            self.box_buffer.write(d[:m])
        self.n_boxes = m

    def draw_boxes(self, view_rot: np.ndarray, proj: np.ndarray) -> None:
        if self.n_boxes == 0:
            return
        p = self.prog_boxes
        p["m_view"].write(_mat(view_rot))
        p["m_proj"].write(_mat(proj))
        p["colour_idle"].value = (0.25, 0.28, 0.35, 1.0)
        p["colour_visited"].value = (1.0, 0.95, 0.2, 1.0)
        self.ctx.enable(moderngl.DEPTH_TEST)
        self.vao_boxes.render(moderngl.LINES, vertices=24, instances=self.n_boxes)
