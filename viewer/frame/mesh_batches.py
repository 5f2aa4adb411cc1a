"""Imported scenes drawn with their own meshes: each frame's drawn instances grouped by the mesh they
instance, one batch (one instanced draw) per distinct mesh. GL-free: numpy only.

A batch record is the frame's instance record (:data:`viewer.frame.instances.INSTANCE_DTYPE`) followed by the
object's mesh transform: the three columns of its local-to-world linear map and its translation minus the
object's centre (``affine``, 12 float32), so the vertex shader places a mesh vertex v at
``position + offset + A v`` relative to the camera (float32 stays exact near the camera however large the
world). Within a batch the records keep the frame's order (nearest first).
"""

from __future__ import annotations

import numpy as np

from .instances import INSTANCE_DTYPE

__all__ = ["MESH_INSTANCE_DTYPE", "MeshBatches", "flat_triangles"]

#: one record of a mesh batch: the instance record, then the mesh transform (72 bytes, no padding)
MESH_INSTANCE_DTYPE = np.dtype(INSTANCE_DTYPE.descr + [("affine0", "<f4", (3,)), ("affine1", "<f4", (3,)),
                                                      ("affine2", "<f4", (3,)), ("offset", "<f4", (3,))])
assert MESH_INSTANCE_DTYPE.itemsize == INSTANCE_DTYPE.itemsize + 48


def flat_triangles(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """(3F, 6) float32 vertex rows (position, face normal) of a mesh's triangles, unindexed (flat shading).

    vertices : (V, 3) float32 local coordinates; faces : (F, 3) int32 vertex rows"""
    tri = vertices[faces].astype(np.float64)  # (F, 3, 3)
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, length, out=np.zeros_like(n), where=length > 0)
    out = np.empty((faces.shape[0], 3, 6), dtype=np.float32)
    out[:, :, :3] = tri
    out[:, :, 3:] = n[:, None, :]
    return out.reshape(-1, 6)


class MeshBatches:
    """Groups each frame's drawn objects by mesh.

    meshes : a :class:`viewer.scenes.meshes.MeshSet` (N objects, K meshes)
    centres : (N, 3) float64 object centres, world units (the instance records' positions are relative to
        them)

    After :meth:`group`, :attr:`records` ``[:n]`` holds the batches one after another and :attr:`starts`
    (K + 1,) where each begins; :meth:`batches` lists the non-empty ones.
    """

    def __init__(self, meshes, centres: np.ndarray):
        self.mesh_of = np.ascontiguousarray(meshes.ids, dtype=np.int64)
        self.k = int(meshes.k)
        lods = getattr(meshes, "lods", None)
        #: (K, B) int64 the mesh drawn per base mesh per LOD band (-1: nothing), or None
        self.lods = None if lods is None else np.asarray(lods, dtype=np.int64)
        t = np.asarray(meshes.transforms, dtype=np.float64)
        aff = np.empty((t.shape[0], 12), dtype=np.float32)
        aff[:, 0:9] = t[:, :, :3].transpose(0, 2, 1).reshape(-1, 9)  # columns of A
        aff[:, 9:12] = t[:, :, 3] - np.asarray(centres, dtype=np.float64)
        self.affine = aff
        self.records = np.zeros(0, dtype=MESH_INSTANCE_DTYPE)
        self.starts = np.zeros(self.k + 1, dtype=np.int64)
        self.n = 0

    def group(self, drawn: np.ndarray, instances: np.ndarray, bands: np.ndarray | None = None) -> None:
        """Group the frame's drawn objects ``drawn`` (m,) int64 and their records ``instances`` (m,)
        :data:`INSTANCE_DTYPE`, in draw order, by mesh; with ``bands`` ((m,) int, each object's LOD band)
        and a LOD table (``meshes.lods``), by the mesh of each object's band (one instanced draw per mesh
        per band; an object whose band has no mesh, -1, is not drawn)."""
        if bands is not None and self.lods is not None and drawn.shape[0]:
            b = np.minimum(np.asarray(bands, dtype=np.int64), self.lods.shape[1] - 1)
            mesh = self.lods[self.mesh_of[drawn], b]
            keep = mesh >= 0
            if not keep.all():
                drawn, instances, mesh = drawn[keep], instances[keep], mesh[keep]
            return self._group(drawn, instances, mesh)
        return self._group(drawn, instances, None)

    def _group(self, drawn: np.ndarray, instances: np.ndarray, mesh: np.ndarray | None) -> None:
        m = int(drawn.shape[0])
        if m == 0:  # nothing drawn this frame: no batches
            self.starts[:] = 0
            self.n = 0
            return
        if m > self.records.shape[0]:
            self.records = np.zeros(max(m, 2 * self.records.shape[0], 64), dtype=MESH_INSTANCE_DTYPE)
        if mesh is None:
            mesh = self.mesh_of[drawn]
        order = np.argsort(mesh, kind="stable")
        out = self.records[:m]
        words = out.view(np.float32).reshape(m, -1)
        base = INSTANCE_DTYPE.itemsize // 4
        words[:, :base] = instances.view(np.float32).reshape(m, -1)[order]
        words[:, base:] = self.affine[drawn[order]]
        np.cumsum(np.bincount(mesh, minlength=self.k), out=self.starts[1:])
        self.n = m

    def batches(self) -> list[tuple[int, int, int]]:
        """(mesh, first record, count) of every mesh with drawn instances this frame."""
        s = self.starts
        return [(k, int(s[k]), int(s[k + 1] - s[k])) for k in range(self.k) if s[k + 1] > s[k]]
