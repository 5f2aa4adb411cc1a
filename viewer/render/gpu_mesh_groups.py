"""A scene drawn with its own meshes in the ``gpu`` culling mode: the GPU's records grouped by mesh (and LOD
band) on the GPU, and one indirect instanced draw per mesh (issue 24).

After the cull (:class:`viewer.render.gpu_cull.GpuCuller`, mesh mode: its records, drawn ids and, with LOD
switches, each drawn object's band, in record order), three small compute passes
(``shaders/mesh_groups.glsl``) count the records per mesh (the mesh of each object's band,
``MeshSet.lods[base, min(band, B - 1)]``, -1 drawing nothing, as
:meth:`viewer.frame.mesh_batches.MeshBatches.group`), take a running sum over the meshes, and write each
record with its object's mesh transform (:data:`~viewer.frame.mesh_batches.MESH_INSTANCE_DTYPE`) into its
mesh's range of one instance buffer; each mesh's indirect command (vertex count, instance count, 0, first
record as baseInstance) is written on the GPU. Only the K instance counts come back (4 bytes a mesh), to
issue a draw for the meshes that have instances, as the CPU path does. Within a mesh the records are in
the atomic counters' order, not nearest first: with the depth test the image is the same.

GPU memory: 72 + 8 bytes an object (the grouped records, each record's place), 12 a mesh.
"""

from __future__ import annotations

import moderngl
import numpy as np

from ..frame.mesh_batches import MESH_INSTANCE_DTYPE
from .renderer import attribute_format
from .shaders import ShaderLibrary

__all__ = ["GpuMeshGroups"]

_FORMAT = attribute_format(MESH_INSTANCE_DTYPE) + "/i"
_ATTRIBUTES = tuple(f"in_{name}" for name in MESH_INSTANCE_DTYPE.names)
_CMD = 5  # words per indirect command (moderngl's render_indirect stride is 20 bytes)
_GRID = 64  # groups of 128 of the COUNT and SCATTER passes (each invocation loops over the records)


class GpuMeshGroups:
    """The grouping passes and the per-mesh draws of one scene on one context.

    ctx, shaders : the context and its library; file_meshes : the scene's
    :class:`viewer.render.file_meshes.FileMeshRenderer` (its vertex buffers, vertex counts and program)
    batches : the frame's :class:`viewer.frame.mesh_batches.MeshBatches` (``mesh_of`` (N,), ``lods`` (K, B) or
    None, ``affine`` (N, 12) float32)
    """

    def __init__(self, ctx: moderngl.Context, shaders: ShaderLibrary, file_meshes, batches):
        self.ctx = ctx
        self.file_meshes = file_meshes
        self.k = int(batches.k)
        n = int(batches.mesh_of.shape[0])
        self.count_prog = shaders.program("mesh_groups", {"COUNT": 1})
        self.prefix_prog = shaders.program("mesh_groups", {"PREFIX": 1})
        self.scatter_prog = shaders.program("mesh_groups", {"SCATTER": 1})
        lods = batches.lods if batches.lods is not None else np.arange(self.k).reshape(-1, 1)
        self.columns = int(lods.shape[1])
        self.has_lods = batches.lods is not None
        self.mesh_of = ctx.buffer(np.asarray(batches.mesh_of, dtype=np.uint32).tobytes() or bytes(4))
        self.lods = ctx.buffer(np.ascontiguousarray(lods, dtype=np.int32).tobytes() or bytes(4))
        self.affine = ctx.buffer(np.ascontiguousarray(batches.affine, dtype=np.float32).tobytes() or bytes(48))
        self.vertex_counts = ctx.buffer(np.asarray(file_meshes.counts, dtype=np.uint32).tobytes() or bytes(4))
        self.commands = ctx.buffer(reserve=max(self.k, 1) * _CMD * 4)
        self.places = ctx.buffer(reserve=max(n, 1) * 8)
        self.records = ctx.buffer(reserve=max(n, 1) * MESH_INSTANCE_DTYPE.itemsize)
        self._zeros = np.zeros(max(self.k, 1) * _CMD, dtype=np.uint32)
        self.vaos: list[moderngl.VertexArray | None] = [
            None if v is None else ctx.vertex_array(file_meshes.prog, [(v, "3f 3f", "in_vertex", "in_normal"),
                                                                       (self.records, _FORMAT, *_ATTRIBUTES)],
                                                    skip_errors=True)
            for v in file_meshes.vertices]
        self._todo: list[int] = []
        #: (K,) int64 the last frame's records per mesh
        self.counts = np.zeros(self.k, dtype=np.int64)

    def group(self, culler, bands: bool) -> None:
        """Group the last dispatch's records of ``culler`` (a :class:`viewer.render.gpu_cull.GpuCuller` run in
        mesh mode) by mesh, ``bands``: by the mesh of each object's LOD band (the culler has LOD switches);
        then read the K instance counts back (waits for the GPU)."""
        self.commands.write(self._zeros)
        culler.ids.bind_to_storage_buffer(0)
        if bands and culler.drawn_bands is not None:
            culler.drawn_bands.bind_to_storage_buffer(1)
        else:
            bands = False
            culler.ids.bind_to_storage_buffer(1)  # bound, never read
        culler.command.bind_to_storage_buffer(2)
        self.mesh_of.bind_to_storage_buffer(3)
        self.lods.bind_to_storage_buffer(4)
        self.commands.bind_to_storage_buffer(5)
        self.places.bind_to_storage_buffer(6)
        culler.instances.bind_to_storage_buffer(7)
        self.records.bind_to_storage_buffer(8)
        self.affine.bind_to_storage_buffer(9)
        self.vertex_counts.bind_to_storage_buffer(10)
        values = {"meshes": self.k, "columns": self.columns, "has_bands": int(bands and self.has_lods)}
        for prog in (self.count_prog, self.prefix_prog, self.scatter_prog):
            for name, value in values.items():  # (a pass that does not read a uniform has none)
                u = prog.get(name, None)
                if u is not None:
                    u.value = value
        self.count_prog.run(_GRID)
        self.ctx.memory_barrier()
        self.prefix_prog.run(1)
        self.ctx.memory_barrier()
        self.scatter_prog.run(_GRID)
        self.ctx.memory_barrier()
        if self.k:
            c = np.frombuffer(self.commands.read(self.k * _CMD * 4), dtype=np.uint32).reshape(self.k, _CMD)
            self.counts = c[:, 1].astype(np.int64)
        self._todo = [k for k in range(self.k) if self.counts[k] > 0 and self.vaos[k] is not None]

    def records_of(self, k: int) -> np.ndarray:
        """Mesh ``k``'s grouped records, (count,) :data:`MESH_INSTANCE_DTYPE` (a readback, for tests)."""
        c = np.frombuffer(self.commands.read(_CMD * 4, offset=k * _CMD * 4), dtype=np.uint32)
        size = MESH_INSTANCE_DTYPE.itemsize
        if c[1] == 0:
            return np.zeros(0, dtype=MESH_INSTANCE_DTYPE)
        return np.frombuffer(self.records.read(int(c[1]) * size, offset=int(c[3]) * size), dtype=MESH_INSTANCE_DTYPE)

    def draw(self) -> int:
        """One indirect instanced draw per mesh with records this frame, into the bound framebuffer (the
        program's uniforms set by the caller); returns the number of draw calls."""
        self.ctx.enable(moderngl.DEPTH_TEST)
        for k in self._todo:
            self.vaos[k].render_indirect(self.commands, moderngl.TRIANGLES, count=1, first=k)
        return len(self._todo)

    def release(self) -> None:
        """Free the GPU buffers and vertex arrays."""
        for v in self.vaos:
            if v is not None:
                v.release()
        for b in (self.mesh_of, self.lods, self.affine, self.vertex_counts, self.commands, self.places, self.records):
            b.release()
