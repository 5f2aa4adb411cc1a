"""Draws an imported scene with its own meshes: one vertex buffer per distinct mesh (flat-shaded triangles),
one instance buffer per mesh written each frame with that mesh's batch (the frame's
:class:`viewer.frame.mesh_batches.MeshBatches`, grouped in its gather stage), and one instanced draw per mesh
with drawn instances."""

from __future__ import annotations

import moderngl

from ..frame.mesh_batches import MESH_INSTANCE_DTYPE, MeshBatches, flat_triangles
from .renderer import attribute_format
from .shaders import ShaderLibrary

__all__ = ["FileMeshRenderer"]

_FORMAT = attribute_format(MESH_INSTANCE_DTYPE) + "/i"
_ATTRIBUTES = tuple(f"in_{name}" for name in MESH_INSTANCE_DTYPE.names)


class FileMeshRenderer:
    """The meshes of one scene on one context.

    meshes : :class:`viewer.scenes.meshes.MeshSet`
    """

    def __init__(self, ctx: moderngl.Context, shaders: ShaderLibrary, meshes):
        self.ctx = ctx
        self.prog = shaders.program("objects", {"FILE_MESH": 1})
        self.vertices = []
        self.counts = []
        for k in range(meshes.k):
            v, f = meshes.mesh(k)
            tri = flat_triangles(v, f)
            self.vertices.append(ctx.buffer(tri.tobytes()) if tri.size else None)
            self.counts.append(tri.shape[0])
        self.buffers: list[moderngl.Buffer | None] = [None] * meshes.k
        self.vaos: list[moderngl.VertexArray | None] = [None] * meshes.k
        self.capacity = [0] * meshes.k
        self._todo: list[tuple[int, int, int]] = []

    def upload(self, b: MeshBatches) -> None:
        """Write each mesh's batch of ``b`` (this frame's, grouped) into its instance buffer (grown, doubling,
        only when too small)."""
        self._todo = []
        for k, start, count in b.batches():
            if self.vertices[k] is None:
                continue
            if count > self.capacity[k]:
                self._alloc(k, max(count, 2 * self.capacity[k], 64))
            self.buffers[k].write(b.records[start:start + count].tobytes())
            self._todo.append((k, start, count))

    def _alloc(self, k: int, capacity: int) -> None:
        if self.buffers[k] is not None:
            self.vaos[k].release()
            self.buffers[k].release()
        self.buffers[k] = self.ctx.buffer(reserve=capacity * MESH_INSTANCE_DTYPE.itemsize, dynamic=True)
        self.vaos[k] = self.ctx.vertex_array(self.prog, [(self.vertices[k], "3f 3f", "in_vertex", "in_normal"),
                                                         (self.buffers[k], _FORMAT, *_ATTRIBUTES)],
                                            skip_errors=True)  # in_size: unused by this variant
        self.capacity[k] = capacity

    def draw(self) -> int:
        """One instanced draw per mesh with instances this frame, into the bound framebuffer (the program's
        uniforms set by the caller through :attr:`prog`); returns the number of draw calls."""
        self.ctx.enable(moderngl.DEPTH_TEST)
        for k, _, count in self._todo:
            self.vaos[k].render(moderngl.TRIANGLES, vertices=self.counts[k], instances=count)
        return len(self._todo)
