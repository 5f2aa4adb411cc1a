"""A bounding volume hierarchy over the spheres' boxes: an object partition, built top-down, queried
by descent, refitted in place on moves and rebuilt when refitting has degraded it.

The kernels are in :mod:`viewer.index.rivals.leaftrees._bvh_kernels`, which also describes the array layout.
"""

from __future__ import annotations

import numpy as np

from . import _bvh_kernels as K
from ..._contract import as_option
from ._leaftree import LeafTree

__all__ = ["BVH"]


class BVH(LeafTree):
    """Bounding volume hierarchy (binary, axis-aligned boxes) over each sphere's box.

    Built top-down with binned splits that minimise the *volume* heuristic (a point lands in a box with
    probability proportional to its volume), with candidate splits along x, y, z and along log radius,
    so the few huge spheres of a heavy-tailed scene get their own subtree. Leaves hold up to
    ``leaf_size`` objects in contiguous slots. A query descends with a small stack into every child
    whose box holds the point.

    Updates: ``move`` writes the object in place and refits its leaf and the chain above (stopping
    where a box does not change); a move that would more than ``reinsert_growth``-fold its leaf's
    volume instead detaches the object and reinserts it into the leaf that grows least (splitting a
    full leaf). ``insert`` does the same; ``remove`` swaps the leaf's last object into the hole. The
    summed volume of all node boxes (the expected traversal cost) is tracked; when it exceeds
    ``rebuild_factor`` times its value at build (or at the last staged swap), or dead slots exceed the
    live ones, the tree is rebuilt (at most once per ``n / 4`` updates, so the rebuild cost is
    amortised); from ``stage_from`` objects the rebuild is staged over later updates so that no update
    pays for a whole build (:mod:`viewer.index.rivals.leaftrees._leaftree`).

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    leaf_size : int, objects per leaf (default 4)
    bins : int, split candidates per axis (default 16)
    rebuild_factor : float, rebuild when the summed node volume grows by this factor (default 2.0)
    reinsert_growth : float, reinsert a moved object rather than refit (default 2.0)
    """

    name = "bvh"
    updates_in_place = True
    update_note = "moves refit in place; far moves reinsert; rebuilt (staged over frames) when refits double the cost"
    K = K

    def __init__(
        self,
        centres,
        radii,
        *,
        leaf_size: int = 4,
        bins: int = 16,
        rebuild_factor: float = 2.0,
        reinsert_growth: float = 2.0,
    ):
        self.bins = as_option(bins, "bins", 2, 256, integer=True)
        self.rebuild_factor = as_option(rebuild_factor, "rebuild_factor", 1.0, lo_open=True)
        self.growth = self.reinsert_growth = as_option(reinsert_growth, "reinsert_growth", 1.0)
        super().__init__(centres, radii, leaf_size)

    def _build_start(self, obj: np.ndarray):
        mean_r = float(obj[:, 3].mean())
        rkey_eps = 1e-3 * mean_r if mean_r > 0 else 1.0
        return K.build_start(obj, rkey_eps)

    def _build_steps(self, state, budget: int) -> bool:
        return K.build_steps(*state, self.leaf_size, self.bins, budget)

    def _build_result(self, state):
        D, perm, nf, ni, _, ctl = state
        nnodes = int(ctl[1])
        return D[:, :4], perm, nf[:nnodes], ni[:nnodes], nnodes, int(ctl[2])  # views: the install copies them

    def _empty_tree(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([[np.inf] * 3 + [-np.inf] * 3]), np.array([[-1, 0, 0, 0, -1, 0]], dtype=np.int32)

    def _after_build(self, nnodes: int) -> None:
        self._ex = np.array([K.total_volume(self._nf, nnodes)])  # summed node volume: the cost measure
        self._cost0 = float(self._ex[0])

    def _after_swap(self) -> None:
        self._cost0 = max(self._cost0, float(self._ex[0]))

    def _worn(self) -> bool:
        return bool(self._ex[0] > self.rebuild_factor * self._cost0 or self._st[K.MAXDEPTH] > 2 * self._depth0 + 16)

    def check_bounds(self) -> None:
        """Assert the invariants (tests): every live object's box lies in its leaf's box and every
        child's box in its parent's; ``idslot`` and ``oid`` agree."""
        nf, ni = self._nf, self._ni

        def node(n, c):
            if ni[c, K.CNT] or ni[c, K.CHILD] >= 0:
                assert ni[c, K.PARENT] == n
                if np.isfinite(nf[c]).all():
                    assert (nf[n, :3] <= nf[c, :3]).all() and (nf[n, 3:] >= nf[c, 3:]).all(), (n, c)

        def obj(leaf, t):
            x = self._obj[t]
            assert (nf[leaf, :3] <= x[:3] - x[3]).all() and (nf[leaf, 3:] >= x[:3] + x[3]).all()

        self._check_leaves(node, obj)
