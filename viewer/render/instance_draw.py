"""The draw side of a frame: where a culling mode hands its instance records, and the draw of them.

A culling mode's :meth:`viewer.frame.CullingMode.upload` calls one of two methods:

- :meth:`InstanceDraw.cpu_records`: the records are in CPU memory (the frame's gather): one write into
  the instance buffer, or, for a scene drawn with its own meshes, one write per mesh batch;
- :meth:`InstanceDraw.gpu_records`: a GPU mode wrote the records and the indirect draw command itself
  (:mod:`viewer.render.gpu_cull`): nothing moves, the draw reads them where they are; a scene drawn with
  its own meshes needs its records grouped by mesh, so they are read back and grouped (that time is the
  gather's) and written per mesh as the CPU mode's are.

:meth:`InstanceDraw.draw` then issues the draws, whichever way the records came: every mode draws
what the CPU mode draws.
"""

from __future__ import annotations

from time import perf_counter

import moderngl
import numpy as np

from ..frame.instances import INSTANCE_DTYPE
from .renderer import SceneRenderer

__all__ = ["InstanceDraw"]


class InstanceDraw:
    """The instance records of one frame, and their draw.

    renderer : the context's :class:`SceneRenderer` (sprites, cubes, stars)
    file_meshes : a :class:`viewer.render.file_meshes.FileMeshRenderer` for a scene with its own meshes, or None
    """

    def __init__(self, renderer: SceneRenderer, file_meshes=None):
        self.renderer = renderer
        self.file_meshes = file_meshes
        self._n = 0
        self._indirect: tuple[moderngl.Buffer, moderngl.Buffer] | None = None
        self._meshes = False
        self._groups = None  # a GpuMeshGroups that grouped this frame's records on the GPU (gpu_mesh_records)

    @property
    def own_meshes(self) -> bool:
        """Whether objects are drawn with the scene's own meshes (a scene that has them, in "mesh" mode)."""
        return self.file_meshes is not None and self.renderer.mode == "mesh"

    def cpu_records(self, frame) -> None:
        """This frame's records from the frame's gather (``frame.instance_bytes()``, or its mesh batches)."""
        self._indirect = None
        self._groups = None
        self._meshes = frame.mesh_batches is not None
        if self._meshes:
            self.file_meshes.upload(frame.mesh_batches)
        else:
            self._n = frame.n_drawn
            self.renderer.upload(frame.instance_bytes(), self._n)

    def gpu_records(self, frame, instances: moderngl.Buffer, command: moderngl.Buffer, read_back) -> None:
        """This frame's records written on the GPU: ``instances`` holds them, ``command`` is the indirect draw
        command; ``read_back()`` returns ``(ids (m,) int64, records (m,) INSTANCE_DTYPE)`` for a scene drawn
        with its own meshes (grouped here by mesh, the time added to the frame's gather). ``frame``: the
        culling mode's :class:`viewer.frame.ModeFrame`."""
        self._groups = None
        batches = frame.look.mesh_batches
        self._meshes = batches is not None
        if self._meshes:
            t0 = perf_counter()
            ids, records = read_back()
            batches.group(ids, np.ascontiguousarray(records).view(INSTANCE_DTYPE).reshape(-1))
            frame.stage_ms["gather"] += (perf_counter() - t0) * 1e3
            self._indirect = None
            self.file_meshes.upload(batches)
        else:
            self._indirect = (instances, command)

    def gpu_mesh_records(self, groups) -> None:
        """This frame's records grouped by mesh (and LOD band) on the GPU by ``groups`` (a
        :class:`viewer.render.gpu_mesh_groups.GpuMeshGroups`): one indirect draw per mesh with records."""
        self._indirect = None
        self._meshes = True
        self._groups = groups

    def draw(self, matrices, viewport_height: int, drawn: int) -> int:
        """Draw this frame's records into the bound framebuffer; returns the instanced draws issued.

        matrices : the frame's :class:`viewer.camera.CameraMatrices`; drawn : the frame's drawn count
        """
        r = self.renderer
        if self._meshes:  # one instanced draw per mesh with drawn instances
            r.set_uniforms(self.file_meshes.prog, matrices.rotation, matrices.projection)
            return self.file_meshes.draw() if self._groups is None else self._groups.draw()
        if self._indirect is not None:
            r.draw_indirect(*self._indirect, matrices.rotation, matrices.projection, viewport_height)
        else:
            r.draw(self._n, matrices.rotation, matrices.projection, viewport_height)
        return int(drawn > 0)
