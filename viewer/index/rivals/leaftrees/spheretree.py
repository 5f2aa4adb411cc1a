"""A bounding-sphere hierarchy: the BVH's object partition with a sphere, not a box, around every node;
refitted in place on moves (a sphere is merged from its two children in O(1)) and rebuilt when refits
have degraded it.

The kernels are in :mod:`viewer.index.rivals.leaftrees._spheretree_kernels`, which also states the rounding bound every
node sphere keeps.
"""

from __future__ import annotations

import numpy as np

from . import _bvh_kernels as BK
from . import _spheretree_kernels as K
from .bvh import BVH

__all__ = ["SphereTree"]


class SphereTree(BVH):
    """Bounding-sphere hierarchy (binary) over the view spheres: the BVH with a sphere, not a box, for
    every node (its build, options, storage and update policy; its own node test and refit).

    Built top-down by the BVH's binned volume-heuristic splits (over x, y, z and log radius; depth at
    most 48 + log2(n), median splits below depth 48), then each node's sphere is fitted bottom-up: a
    leaf's is centred on the middle of its spheres' box, an inner node's is the smallest sphere holding
    its two children's (one of them when it holds the other). Every radius carries a relative margin of
    2**-45 over the exact enclosing one (the bound is proved in the kernel module), so a rounded node test
    never loses a sphere the contract's predicate accepts. A query enters a child only when the point is
    inside the child's sphere; a node costs 32 bytes (centre and radius).

    Updates: ``move`` writes the object in its slot and refits its leaf's sphere (O(leaf_size)) and the
    chain above (O(1) a level: one merge of two child spheres, a square root each), stopping at the first
    node whose sphere does not change: at most ``depth + 1`` nodes are rewritten, the rest of the tree
    is untouched. A move that would grow its leaf's sphere more than ``reinsert_growth``-fold in volume
    (leaf + object) instead detaches the object and reinserts it into the leaf whose sphere grows least.
    ``insert`` does the same, ``remove`` swaps the leaf's last object in. The summed cube of all node
    radii (the expected traversal cost) is tracked; the tree is rebuilt, at most once per ``n / 4``
    updates, when it exceeds ``rebuild_factor`` times its value at build (or at the last staged swap) or
    dead slots exceed the live ones; from ``stage_from`` objects the rebuild is staged over later updates
    so that no update pays for a whole build (:mod:`viewer.index.rivals.leaftrees._leaftree`).

    Options (``leaf_size`` default 4, ``bins``, ``rebuild_factor`` on the summed radius cubes,
    ``reinsert_growth``) are the BVH's.
    """

    name = "spheretree"
    update_note = (
        "moves refit spheres in place (O(1) a level); far moves reinsert; rebuilt (staged over frames) when refits"
        " double the cost"
    )
    K = K

    def _build_result(self, state):
        rows, perm, _, ni, nnodes, maxdepth = super()._build_result(state)  # the BVH's partition, boxes dropped
        return rows, perm, np.zeros((nnodes, K.NF_COLS)), ni, nnodes, maxdepth

    def _empty_tree(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([[0.0, 0.0, 0.0, np.nan]]), np.array([[-1, 0, 0, 0, -1, 0]], dtype=np.int32)

    def _after_build(self, nnodes: int) -> None:
        self._ex = np.zeros((1, 1, 1))  # three dimensions: the sphere tree's tag in the shared update kernels
        K.refit_all(self._obj, self._nf, self._ni, self._ex, self._st)
        self._cost0 = float(self._ex[0, 0, 0])

    def _after_swap(self) -> None:
        self._cost0 = max(self._cost0, float(self._ex[0, 0, 0]))

    def _worn(self) -> bool:
        return bool(self._ex[0, 0, 0] > self.rebuild_factor * self._cost0
                    or self._st[BK.MAXDEPTH] > 2 * self._depth0 + 16)

    def check_bounds(self) -> None:
        """Assert the invariants (tests): every child's sphere lies inside its parent's, and every live
        object's inside its leaf's with the relative margin the kernel module proves (checked in float64
        at 2**-47, far below that margin); ``idslot`` and ``oid`` agree; every sphere equals its refit
        from scratch."""
        nf, ni = self._nf, self._ni

        def inside(n, x, r, margin):
            d = float(np.sqrt(((x - nf[n, :3]) ** 2).sum()))
            assert d + r <= nf[n, K.RAD] * (1 - margin), (n, x, r, nf[n])

        def node(n, c):
            assert ni[c, K.PARENT] == n
            if not np.isnan(nf[c, K.RAD]):
                inside(n, nf[c, :3], nf[c, K.RAD], 0.0)

        def obj(leaf, t):
            inside(leaf, self._obj[t, :3], self._obj[t, 3], 2.0**-47)

        self._check_leaves(node, obj)
