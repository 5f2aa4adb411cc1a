"""The meshes a scene's objects are instances of (imported glTF scenes): flat arrays, one mesh after
another, and per object the mesh it instances and its local-to-world transform.

In a ``.npz`` scene file the ``mesh_*`` entries (:data:`MESH_ENTRIES`) come all together or not at all;
the optional ``mesh_lods`` (:data:`MESH_LOD_ENTRY`, the per-band mesh table) only with them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import SceneError

__all__ = ["MESH_ENTRIES", "MESH_LOD_ENTRY", "MeshSet", "check_meshes", "mesh_entries", "read_mesh_entries"]

MESH_ENTRIES = ("mesh_vertices", "mesh_faces", "mesh_vertex_start", "mesh_face_start", "mesh_ids",
                "mesh_transforms")
_FIELDS = ("vertices", "faces", "vertex_start", "face_start", "ids", "transforms")  # MeshSet's, as MESH_ENTRIES
MESH_LOD_ENTRY = "mesh_lods"  # optional: MeshSet.lods


@dataclass(eq=False)
class MeshSet:
    """K triangle meshes and which one each of the scene's N objects is.

    vertices : (V, 3) float32, each mesh in its own (local) coordinates, world units
    faces : (F, 3) int32, triangles as vertex rows counted from the start of their mesh
    vertex_start, face_start : (K + 1,) int64: mesh k is vertices[vertex_start[k]:vertex_start[k + 1]] and
        faces[face_start[k]:face_start[k + 1]]
    ids : (N,) int32 in 0..K-1: the mesh object i is an instance of
    transforms : (N, 3, 4) float64: object i's local-to-world affine map (world = A @ [v, 1])
    lods : (K, B) int32 or None: per base mesh, the mesh drawn in each LOD band (``lods[m, b]``: the mesh
        for an instance of base mesh m while the object is in band b; -1 draws nothing); a band >= B uses
        column B - 1. None: every band draws the base mesh. Objects keep their one base mesh (``ids``).
    """

    vertices: np.ndarray
    faces: np.ndarray
    vertex_start: np.ndarray
    face_start: np.ndarray
    ids: np.ndarray
    transforms: np.ndarray
    lods: np.ndarray | None = None

    def band_mesh(self, m: int, band: int) -> int:
        """The mesh drawn for an instance of base mesh ``m`` in LOD band ``band`` (-1: nothing)."""
        if self.lods is None:
            return int(m)
        return int(self.lods[m, min(int(band), self.lods.shape[1] - 1)])

    @property
    def k(self) -> int:
        """Number of distinct meshes."""
        return int(self.vertex_start.shape[0] - 1)

    def mesh(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Mesh ``k``: (vertices (v, 3) float32, faces (f, 3) int32 into those vertices)."""
        v = self.vertices[self.vertex_start[k]:self.vertex_start[k + 1]]
        f = self.faces[self.face_start[k]:self.face_start[k + 1]]
        return v, f

    def counts(self) -> np.ndarray:
        """(K,) int64: objects per mesh."""
        return np.bincount(self.ids, minlength=self.k)

    def __repr__(self) -> str:
        return f"<MeshSet k={self.k} vertices={self.vertices.shape[0]} triangles={self.faces.shape[0]}>"


def mesh_entries(meshes: MeshSet) -> dict[str, np.ndarray]:
    """The ``mesh_*`` arrays a scene file stores (``mesh_lods`` only when the set has a LOD table)."""
    lods = {} if meshes.lods is None else {MESH_LOD_ENTRY: np.ascontiguousarray(meshes.lods, dtype=np.int32)}
    return {
        "mesh_vertices": np.ascontiguousarray(meshes.vertices, dtype=np.float32).reshape(-1, 3),
        "mesh_faces": np.ascontiguousarray(meshes.faces, dtype=np.int32).reshape(-1, 3),
        "mesh_vertex_start": np.ascontiguousarray(meshes.vertex_start, dtype=np.int64),
        "mesh_face_start": np.ascontiguousarray(meshes.face_start, dtype=np.int64),
        "mesh_ids": np.ascontiguousarray(meshes.ids, dtype=np.int32),
        "mesh_transforms": np.ascontiguousarray(meshes.transforms, dtype=np.float64).reshape(-1, 3, 4),
    } | lods


def read_mesh_entries(get, keys) -> MeshSet | None:
    """The :class:`MeshSet` of a scene file's ``mesh_*`` entries as stored (``get(key)`` reads one; the
    scene constructor checks it, :func:`check_meshes`), None when there are none; :class:`SceneError`
    naming the entry when only some are there."""
    present = [k for k in MESH_ENTRIES if k in keys]
    if not present:
        if MESH_LOD_ENTRY in keys:
            raise SceneError("needs the mesh_* entries (a LOD table of meshes the file does not hold)", MESH_LOD_ENTRY)
        return None
    missing = [k for k in MESH_ENTRIES if k not in keys]
    if missing:
        raise SceneError(f"missing (the mesh_* entries come together; found {', '.join(present)})", missing[0])
    return MeshSet(**{field: get(key) for field, key in zip(_FIELDS, MESH_ENTRIES)},
                   lods=get(MESH_LOD_ENTRY) if MESH_LOD_ENTRY in keys else None)


def check_meshes(meshes: MeshSet, n: int) -> MeshSet:
    """``meshes`` for a scene of ``n`` objects, checked (dtypes, shapes, finite values, mesh ranges that
    run from 0 to the row counts, ids and faces in range) and cast to the dtypes :class:`MeshSet` names;
    :class:`SceneError` naming the ``.npz`` entry (``mesh_*``) otherwise."""
    a = {key: np.asarray(getattr(meshes, field)) for field, key in zip(_FIELDS, MESH_ENTRIES)}
    for k, kind, shape in (("mesh_vertices", "f", (None, 3)), ("mesh_faces", "iu", (None, 3)),
                           ("mesh_vertex_start", "iu", (None,)), ("mesh_face_start", "iu", (None,)),
                           ("mesh_ids", "iu", (n,)), ("mesh_transforms", "f", (n, 3, 4))):
        v = a[k]
        if v.dtype.kind not in kind or v.ndim != len(shape) or any(w is not None and s != w
                                                                   for s, w in zip(v.shape, shape)):
            raise SceneError(f"must be {'real' if kind == 'f' else 'integer'} with shape "
                             f"{tuple('any' if w is None else w for w in shape)}, got {v.dtype} {v.shape}", k)
        if kind == "f" and not np.isfinite(v).all():
            raise SceneError("must be finite", k)
    vs, fs = a["mesh_vertex_start"], a["mesh_face_start"]
    kk = vs.shape[0] - 1
    if kk < 1 or fs.shape[0] != kk + 1 or vs[0] != 0 or fs[0] != 0 or (np.diff(vs) < 0).any() \
            or (np.diff(fs) < 0).any() or vs[-1] != a["mesh_vertices"].shape[0] or fs[-1] != a["mesh_faces"].shape[0]:
        raise SceneError("must run from 0 to the number of rows, not decreasing, one more than the meshes",
                         "mesh_vertex_start")
    ids = a["mesh_ids"]
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= kk):
        raise SceneError(f"must be 0..{kk - 1}", "mesh_ids")
    faces = a["mesh_faces"]
    per = np.repeat(np.arange(kk), np.diff(fs))
    if faces.size and ((faces < 0).any() or (faces.max(axis=1) >= np.diff(vs)[per]).any()):
        raise SceneError("must index vertices of their own mesh", "mesh_faces")
    lods = getattr(meshes, "lods", None)
    if lods is not None:
        lods = np.asarray(lods)
        if lods.dtype.kind not in "iu" or lods.ndim != 2 or lods.shape[0] != kk or lods.shape[1] < 1:
            raise SceneError(f"must be integer with shape ({kk}, B), B >= 1 (one row per mesh), got {lods.dtype} "
                             f"{lods.shape}", MESH_LOD_ENTRY)
        if lods.size and (int(lods.min()) < -1 or int(lods.max()) >= kk):
            raise SceneError(f"must be -1 (nothing) or a mesh 0..{kk - 1}", MESH_LOD_ENTRY)
        lods = np.ascontiguousarray(lods, dtype=np.int32)
    return MeshSet(vertices=a["mesh_vertices"].astype(np.float32), faces=faces.astype(np.int32),
                   vertex_start=vs.astype(np.int64), face_start=fs.astype(np.int64),
                   ids=ids.astype(np.int32), transforms=a["mesh_transforms"].astype(np.float64), lods=lods)
