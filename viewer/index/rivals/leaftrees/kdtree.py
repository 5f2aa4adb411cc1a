"""A kd-tree over the centres whose nodes keep the largest radius below them: a query prunes a subtree
when the point is farther than that radius from the subtree's box of centres.

The kernels are in :mod:`viewer.index.rivals.leaftrees._kdtree_kernels`, which also describes the array layout.
"""

from __future__ import annotations

import numpy as np

from . import _kdtree_kernels as K
from ... import _pages
from ._leaftree import LeafTree

__all__ = ["KDTree"]


class KDTree(LeafTree):
    """kd-tree over the sphere centres, each node holding the tight box of the centres below it and the
    largest radius below it.

    Built by median splits on the axis where the centres spread most, down to leaves of at most
    ``leaf_size`` objects in contiguous slots, sorted by radius (largest first) so a leaf scan stops at
    the first sphere too small to reach the point. A query descends into a child only when the squared
    distance from the point to the child's box is at most its largest radius squared.

    Updates: ``move`` is in place when the new centre stays inside its leaf's region (the split planes
    above it); the leaf's box and largest radius are then refitted up the chain (tightening as well as
    loosening). A centre that leaves the region is removed and reinserted into the leaf whose region
    holds it; a full leaf splits at its median. The tree is rebuilt (at most once per ``n / 4``
    updates) when dead slots exceed the live ones or the depth has grown by more than 16 levels; from
    ``stage_from`` objects the rebuild is staged over later updates so that no update pays for a whole
    build (:mod:`viewer.index.rivals.leaftrees._leaftree`).

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    leaf_size : int, objects per leaf (default 8)
    """

    name = "kdtree"
    updates_in_place = True
    update_note = "in place within the leaf's region, else remove + insert; periodic rebuild, staged over frames"
    K = K
    ex_per_node = True  # _ex: (M, 6) each node's region (the split planes above it)
    leaf_slack = True  # a centre leaving its leaf's region is reinserted: leaves keep room for it

    def __init__(self, centres, radii, *, leaf_size: int = 8):
        super().__init__(centres, radii, leaf_size)

    def _build_start(self, obj: np.ndarray):
        return K.build_start(obj)

    def _build_steps(self, state, budget: int) -> bool:
        return K.build_steps(*state, self.leaf_size, budget)

    def _build_result(self, state):
        D, perm, nf, ni, _, ctl = state
        nnodes = int(ctl[1])
        return D, perm, nf[:nnodes], ni[:nnodes], nnodes, int(ctl[2])  # views: the install copies them

    def _empty_tree(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros((1, K.NF_COLS)), np.array([[-1, 0, 0, 0, -1, 0, 0]], dtype=np.int32)

    def _after_build(self, nnodes: int) -> None:
        self._nf[:nnodes, :6] = 0.0  # so refit_all sees every node as changed
        self._ex = _pages.zeros((self._nf.shape[0], 6), reserve=3 * self._nf.shape[0])  # grows in place
        K.regions(self._nf, self._ni, nnodes, self._ex)
        K.refit_all(self._obj, self._nf, self._ni, self._ex, self._st)

    def _worn(self) -> bool:
        return bool(self._st[K.MAXDEPTH] > self._depth0 + 16)

    def check_bounds(self) -> None:
        """Assert the invariants (tests): each node's box holds the centres below it and its largest
        radius bounds theirs; leaves are radius-sorted and their centres lie in their regions."""
        nf, ni, reg = self._nf, self._ni, self._ex

        def node(n, c):
            assert ni[c, K.PARENT] == n
            if ni[c, K.CHILD] >= 0 or ni[c, K.CNT]:
                assert (nf[n, :3] <= nf[c, :3]).all() and (nf[n, 3:6] >= nf[c, 3:6]).all()
                assert nf[n, K.RMAX] >= nf[c, K.RMAX]

        def obj(leaf, t):
            x = self._obj[t]
            if t > ni[leaf, K.START]:
                assert self._obj[t - 1, 3] >= x[3], "leaf not sorted by radius"
            assert (nf[leaf, :3] <= x[:3]).all() and (nf[leaf, 3:6] >= x[:3]).all()
            assert nf[leaf, K.RMAX] >= x[3]
            assert K._in_region(leaf, x[0], x[1], x[2], nf, ni)
            assert (reg[leaf, :3] <= x[:3]).all() and (reg[leaf, 3:] >= x[:3]).all()

        self._check_leaves(node, obj)
