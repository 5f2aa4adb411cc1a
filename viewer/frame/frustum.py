"""View-frustum culling without GL: six planes from a view-projection matrix, and a test of the
candidate ids' bounding spheres against them.

Planes are extracted with the Gribb-Hartmann method from a world -> clip matrix in numpy's row-major
convention (``clip = m @ [x, y, z, 1]``), normalised so that ``n . p + d`` is a signed distance in
world units, positive inside. A sphere is culled only when it lies wholly outside one plane: the test
is conservative (a sphere near a frustum corner may be kept), never wrong the other way.
"""

from __future__ import annotations

import numpy as np

from ._frustum_kernels import cull_spheres_kernel, planes_kernel as _planes_kernel, warm

__all__ = ["PLANE_NAMES", "cull_spheres", "cull_spheres_numpy", "frustum_planes", "warm"]

PLANE_NAMES = ("left", "right", "bottom", "top", "near", "far")


def frustum_planes(view_proj) -> np.ndarray:
    """The six frustum planes of a world -> clip matrix.

    view_proj : (4, 4) float, row-major maths convention
    Returns (6, 4) float64 rows ``(nx, ny, nz, d)`` in :data:`PLANE_NAMES` order, unit normals pointing
    inwards.
    """
    m = np.asarray(view_proj, dtype=np.float64)
    if m.shape != (4, 4):
        raise ValueError(f"view_proj must be (4, 4), got {m.shape}")
    planes = np.empty((6, 4))
    if not _planes_kernel(np.ascontiguousarray(m), planes):
        raise ValueError("view_proj is degenerate: a frustum plane has no normal")
    return planes


def cull_spheres(planes: np.ndarray, centres: np.ndarray, bounds: np.ndarray, ids: np.ndarray, k: int,
                 out: np.ndarray) -> int:
    """Keep the candidates whose bounding sphere touches the frustum (numba kernel, no allocation).

    planes : (6, 4) float64 from :func:`frustum_planes`
    centres : (N, 3) float64 world units; bounds : (N,) float64 bounding radii, world units
    ids : (K,) int64 candidate ids (the first ``k`` are used); out : (>= k,) int64, receives the kept ids
    Returns the number kept; ``out[:n]`` keeps the order of ``ids``.
    """
    if out.size < k:
        raise ValueError(f"out holds {out.size} ids but {k} candidates were given")
    return int(cull_spheres_kernel(planes, centres, bounds, ids, k, out))


def cull_spheres_numpy(planes: np.ndarray, centres: np.ndarray, bounds: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The vectorised reference of :func:`cull_spheres`: the kept ids (M,) int64, order kept."""
    ids = np.asarray(ids, dtype=np.int64)
    c = centres[ids]
    dist = c @ planes[:, :3].T + planes[:, 3]  # (K, 6) signed distances
    keep = (dist >= -bounds[ids][:, None]).all(axis=1)
    return ids[keep]
