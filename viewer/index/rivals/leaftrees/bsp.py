"""A binary space partitioning tree whose splitting planes need not be perpendicular to an axis: each
node chooses among the axes, the diagonals and the principal direction of its centres by an SAH-like
cost over the spheres' extents along the plane's normal.

The kernels are in :mod:`viewer.index.rivals.leaftrees._bsp_kernels`, which also states the rounding bound its
planes keep.
"""

from __future__ import annotations

import numpy as np

from . import _bsp_kernels as K
from ..._contract import as_option
from ._leaftree import LeafTree

__all__ = ["BSPTree"]


class BSPTree(LeafTree):
    """BSP tree over the sphere centres, with free planes.

    Built top-down: a node of more than ``leaf_size`` objects tries every candidate normal of ``planes``
    (``axes``: x, y, z; ``diagonals``: those and the 6 face and 4 body diagonals; ``pca``: the axes and
    the principal direction of the node's centres; ``all``: the 13 and the principal direction), bins
    its centres' projections into ``bins`` and takes the plane of least cost ``(w_L * n_L + w_R * n_R) /
    w``, ``w`` the width along the normal of the spheres a side holds; centres with ``n . c < offset`` go
    left. Nodes of at most 16 objects, nodes below depth 48, and nodes no plane splits split at the
    median of their widest axis, so the depth at build is at most 48 + log2(n). Each child keeps its
    spheres' interval along its parent's normal (widened by the proved rounding bound of the kernel
    module) and, beside it, the padded axis-aligned box of its spheres (the BVH's); a query enters a
    child only when the point lies in both. A node costs 96 bytes of floats and 24 of topology.

    Updates: ``move`` walks once from its leaf to the root (O(depth), a projection a level), widening the
    intervals on the path (never narrowing them: they stay conservative until the next rebuild) and
    checking that the planes still lead the new centre to its leaf; if so it is written in place and the
    boxes refitted up the chain, else it is removed and reinserted where the planes lead it (another
    O(depth) descent); a full leaf splits at the median of its widest axis (the planes a dynamic world
    adds are the axes'). The tree is rebuilt (at most once per
    ``n / 4`` updates) when the summed box volume exceeds ``rebuild_factor`` times its value at build,
    the depth has grown by 16, or dead slots exceed the live ones; from ``stage_from`` objects the
    rebuild is staged over later updates so that no update pays for a whole build
    (:mod:`viewer.index.rivals.leaftrees._leaftree`; the volume's reference is then the one after the swap).

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    leaf_size : int, objects per leaf (default 6)
    planes : str, candidate normals: ``axes``, ``pca``, ``diagonals`` or ``all`` (default)
    bins : int, split candidates per normal (default 16)
    rebuild_factor : float, rebuild when the summed box volume grows by this factor (default 2.0)
    """

    name = "bsp"
    updates_in_place = True
    update_note = (
        "in place while the planes lead the centre to its leaf (O(depth)), else remove + insert; rebuilds staged"
        " over frames"
    )
    K = K
    warm_options = {"leaf_size": 2, "planes": "all"}

    def __init__(self, centres, radii, *, leaf_size: int = 6, planes: str = "all", bins: int = 16,
                 rebuild_factor: float = 2.0):
        if not isinstance(planes, str) or planes not in K.PLANES:  # (a list is not even hashable)
            raise ValueError(f"planes must be one of {', '.join(K.PLANES)}, got {planes!r}")
        self.planes = planes
        self.bins = as_option(bins, "bins", 2, 256, integer=True)
        self.rebuild_factor = as_option(rebuild_factor, "rebuild_factor", 1.0, lo_open=True)
        super().__init__(centres, radii, leaf_size)

    def _build_start(self, obj: np.ndarray):
        return K.build_start(obj)

    def _build_steps(self, state, budget: int) -> bool:
        count, pca = K.PLANES[self.planes]
        return K.build_steps(*state, self.leaf_size, self.bins, count, pca, budget)

    def _build_result(self, state):
        D, perm, nf, ni, _, ctl = state
        nnodes = int(ctl[1])
        return D[:, :4], perm, nf[:nnodes], ni[:nnodes], nnodes, int(ctl[2])  # views: the install copies them

    def _empty_tree(self) -> tuple[np.ndarray, np.ndarray]:
        nf = np.zeros((1, K.NF_COLS))
        nf[0, :6] = [np.inf] * 3 + [-np.inf] * 3
        nf[0, K.SLO], nf[0, K.SHI] = -np.inf, np.inf
        return nf, np.array([[-1, 0, 0, 0, -1, 0]], dtype=np.int32)

    def _after_build(self, nnodes: int) -> None:
        self._ex = np.zeros((1, 1, 1, 1))  # four dimensions: the BSP tree's tag in the shared update kernels
        K.refit_all(self._obj, self._nf, self._ni, self._ex, self._st)
        self._cost0 = float(self._ex[0, 0, 0, 0])

    def _after_swap(self) -> None:
        self._cost0 = max(self._cost0, float(self._ex[0, 0, 0, 0]))

    def _worn(self) -> bool:
        return bool(self._ex[0, 0, 0, 0] > self.rebuild_factor * self._cost0
                    or self._st[3] > self._depth0 + 16)

    def normals(self) -> np.ndarray:
        """(M, 3) float64: the unit normal of every inner node's plane (for reports and tests)."""
        nn = int(self._st[0])
        inner = self._ni[:nn, K.CHILD] >= 0
        return self._nf[:nn][inner][:, K.NX:K.NZ + 1].copy()

    def check_bounds(self) -> None:
        """Assert the invariants (tests): every live object's padded box lies in its leaf's box and every
        child's in its parent's; every sphere's interval along each plane above it lies in the interval
        its ancestor on that side keeps; ``idslot`` and ``oid`` agree; boxes are tight."""
        nf, ni = self._nf, self._ni

        def node(n, c):
            assert ni[c, K.PARENT] == n
            if ni[c, K.CNT] or ni[c, K.CHILD] >= 0:
                assert (nf[n, :3] <= nf[c, :3]).all() and (nf[n, 3:6] >= nf[c, 3:6]).all(), (n, c)

        def obj(leaf, t):
            x = self._obj[t]
            assert (nf[leaf, :3] <= x[:3] - x[3]).all() and (nf[leaf, 3:6] >= x[:3] + x[3]).all()
            c, p = leaf, ni[leaf, K.PARENT]
            while p >= 0:
                lo, hi = K._extent(*nf[p, K.NX:K.NZ + 1], *x)
                assert nf[c, K.SLO] <= lo and hi <= nf[c, K.SHI], (leaf, t, p)
                c, p = p, ni[p, K.PARENT]

        self._check_leaves(node, obj)
