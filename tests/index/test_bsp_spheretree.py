"""Structure-specific tests of the BSP tree (free planes) and the bounding-sphere hierarchy. The shared
contract suite, state machine and domain sweep cover exact sets and bad input; these check what each
class's docstring promises beyond them: the bounds hold through every kind of update, the depth bound of
the build, a query enters exactly the children its test admits, a sphere-tree move rewrites only its
leaf-to-root chain, the BSP keeps its planes' intervals conservative and picks free planes on a
diagonal world."""

from __future__ import annotations

import math

import numpy as np
import pytest

from viewer.index.rivals.leaftrees.bsp import BSPTree
from viewer.index.rivals.leaftrees.spheretree import SphereTree

from tests.support.data import DISTRIBUTIONS
from tests.index.test_tree_indexes import Mirror, run_churn
from tests.index.test_tree_indexes import test_bounds_hold_through_moves_and_refits as bounds_hold

TREES = [BSPTree, SphereTree]
CHILD, PARENT = 0, 4


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
@pytest.mark.parametrize("dist", sorted(DISTRIBUTIONS))
def test_bounds_hold_through_moves_and_refits(cls, dist, rng):
    """After single moves (small and far, new radii), inserts, removes, small and large batches, every
    bound holds (sphere-tree spheres with their margin; BSP boxes and intervals) and queries equal brute
    force: the kd-tree's and BVH's test, run on these two."""
    bounds_hold(cls, dist, rng)


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
def test_degradation_triggers_rebuild(cls, rng):
    """Teleporting every object, batch after batch, wears the tree out; it rebuilds itself, stays exact
    and its cost measure is back within the rebuild factor."""
    c, r = DISTRIBUTIONS["clustered"](rng, 3000)
    ix = cls(c, r)
    mirror = Mirror(c, r)
    for _ in range(6):
        new = rng.uniform(-3000, 3000, (3000, 3))
        ix.move_many(np.arange(3000), new)
        for i in range(3000):
            mirror.c[i] = new[i]
    assert ix.rebuilds >= 1
    ix.check_bounds()
    mirror.assert_same(ix, rng)


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
def test_depth_bound_on_coincident_and_spread_centres(cls, rng):
    """Depth at build is at most 48 + log2(n): on spread data, and on 3000 identical centres (no plane
    splits them: median fallback), where every query at the shared centre returns them all."""
    for c in (rng.uniform(-1e6, 1e6, (5000, 3)), np.ones((3000, 3))):
        n = len(c)
        r = rng.uniform(0, 2, n)
        ix = cls(c, r, leaf_size=2)
        assert ix._depth0 <= 48 + math.ceil(math.log2(n))
        ix.check_bounds()
    assert ix.query((1.0, 1.0, 1.0)).size == np.count_nonzero(r >= 0)


def _recount_sphere(ix, p):
    """Nodes a sphere-tree query enters, walked in Python with the kernel's float64 test."""
    nf, ni = ix._nf, ix._ni

    def inside(i):
        dx, dy, dz = p[0] - nf[i, 0], p[1] - nf[i, 1], p[2] - nf[i, 2]
        return (dx * dx + dy * dy) + dz * dz <= nf[i, 3] * nf[i, 3]

    return _recount(ni, inside, lambda node, c: inside(c))


def _recount_bsp(ix, p):
    """Nodes a BSP query enters, walked in Python with the kernel's float64 tests."""
    nf, ni = ix._nf, ix._ni
    e = max(abs(p[0]), abs(p[1]), abs(p[2])) * 2.0**-49 + 2.0**-1000

    def in_box(i):
        return all(nf[i, a] <= p[a] <= nf[i, 3 + a] for a in range(3))

    def child(node, c):
        v = (nf[node, 6] * p[0] + nf[node, 7] * p[1]) + nf[node, 8] * p[2]
        return v + e >= nf[c, 10] and v - e <= nf[c, 11] and in_box(c)

    return _recount(ni, in_box, child)


def _recount(ni, root_ok, child_ok):
    if not root_ok(0):
        return 0
    visited, todo = 0, [0]
    while todo:
        node = todo.pop()
        visited += 1
        ch = ni[node, CHILD]
        if ch >= 0:
            todo += [c for c in (ch, ch + 1) if child_ok(node, c)]
    return visited


@pytest.mark.parametrize("cls,recount", [(BSPTree, _recount_bsp), (SphereTree, _recount_sphere)],
                         ids=["bsp", "spheretree"])
@pytest.mark.parametrize("dist", sorted(DISTRIBUTIONS))
def test_query_enters_exactly_the_admitted_children(cls, recount, dist, rng):
    """A query enters the root when the point is in it, and a child exactly when its node test admits the
    point (sphere tree: inside the child's sphere; BSP: inside its box and its interval along the node's
    normal), so ``nodes_visited`` equals a recount in Python, and the candidates are the admitted
    leaves' objects."""
    c, r = DISTRIBUTIONS[dist](rng, 3000)
    ix = cls(c, r)
    mirror = Mirror(c, r)
    run_churn(ix, mirror, rng, 120)
    live = np.array([mirror.c[i] for i in sorted(mirror.c)])
    points = np.concatenate([live[:30] + rng.normal(0, 5, (30, 3)), rng.uniform(-600, 600, (30, 3))])
    for p in points:
        ix.query(p)
        assert ix.stats.nodes_visited == recount(ix, p.tolist()), p


def test_spheretree_move_rewrites_only_its_chain(rng):
    """A move that stays in its leaf rewrites at most the nodes on the leaf-to-root chain (depth + 1, O(1)
    each above the leaf); every other node's sphere is untouched."""
    c, r = DISTRIBUTIONS["uniform"](rng, 4000)
    ix = SphereTree(c, r)
    ni = ix._ni
    for i in rng.choice(4000, 50, replace=False):
        slot = int(ix._idt.slots[i])
        leaf = int(ix._leafof[slot])
        chain, node = set(), leaf
        while node >= 0:
            chain.add(node)
            node = int(ni[node, PARENT])
        before = ix._nf.copy()
        ix.move(int(i), c[i] + rng.normal(0, 0.5, 3))
        assert int(ix._leafof[int(ix._idt.slots[i])]) == leaf  # a small move stays in its leaf
        changed = set(np.flatnonzero((ix._nf != before).any(axis=1) & ~(np.isnan(ix._nf) & np.isnan(before)).all(1)))
        assert changed <= chain
        assert len(changed) <= ix._st[3] + 1
    ix.check_bounds()


def test_spheretree_spheres_tighter_than_their_children_union_allows(rng):
    """A node's sphere holds its children's, and an inner node that holds one child's sphere whole reuses
    it without growing (no margin piles up down a chain of contained spheres)."""
    c = np.zeros((40, 3))
    c[:, 0] = np.arange(40) * 1e-3
    r = np.full(40, 1.0)
    r[0] = 100.0  # holds every other sphere
    ix = SphereTree(c, r, leaf_size=1)
    ix.check_bounds()
    assert ix._nf[0, 3] <= 100.0 * (1 + 2.0**-40) + 0.05


def test_bsp_picks_free_planes_on_a_diagonal_world(rng):
    """On objects spread along the (1, 1, 1) diagonal, the top plane with ``planes='all'`` is not an
    axis (its normal is within a few degrees of the diagonal); with ``planes='axes'`` every plane is an
    axis. Both answer exactly."""
    c, r = DISTRIBUTIONS["diagonal"](rng, 4000)
    free = BSPTree(c, r)
    axes = BSPTree(c, r, planes="axes")
    top = free._nf[0, 6:9]
    assert abs(np.dot(top, np.ones(3) / math.sqrt(3))) > 0.99
    assert np.all(np.sort(np.abs(axes.normals()), axis=1)[:, :2] == 0.0)
    mirror = Mirror(c, r)
    mirror.assert_same(free, rng)
    mirror.assert_same(axes, rng)


def test_bsp_moves_in_region_stay_and_crossings_reinsert(rng):
    """A move whose centre stays on the same side of every plane above its leaf keeps the leaf (widening
    the intervals, never narrowing them); one that crosses a plane goes to the leaf the planes lead to."""
    c, r = DISTRIBUTIONS["uniform"](rng, 3000)
    ix = BSPTree(c, r)
    from viewer.index.rivals.leaftrees import _bsp_kernels as K

    n = int(ix._st[0])  # the nodes of the build (a split adds new ones after them)
    lo, hi = ix._nf[:n, 10].copy(), ix._nf[:n, 11].copy()
    for i in range(200):
        slot = int(ix._idt.slots[i])
        leaf = int(ix._leafof[slot])
        new = c[i] + rng.normal(0, 30, 3)
        stays = bool(K._in_region(leaf, *new, ix._nf, ix._ni))
        ix.move(i, new, r[i] * 1.5)
        now = int(ix._leafof[int(ix._idt.slots[i])])
        assert (now == leaf) == stays
        assert now == K._find_leaf(*new, ix._nf, ix._ni)
    assert np.all(ix._nf[:n, 10] <= lo) and np.all(ix._nf[:n, 11] >= hi)
    ix.check_bounds()


def test_bsp_extent_is_conservative_at_extreme_magnitudes():
    """The interval of a sphere along a diagonal normal holds every point the contract's predicate
    accepts, at the edges of the domain (2**100 coordinates and radii, subnormal ones)."""
    from viewer.index.rivals.leaftrees import _bsp_kernels as K
    from viewer.index._contract_kernels import holds

    rng = np.random.default_rng(7)
    for mag in (2.0**100, 1e20, 1.0, 1e-200, 5e-324):
        for _ in range(300):
            n = K.NORMALS[rng.integers(len(K.NORMALS))] * rng.choice([-1.0, 1.0])
            c = rng.uniform(-mag, mag, 3)
            rad = float(rng.uniform(0, mag)) if mag < 2.0**100 else float(rng.uniform(0, 2.0**100))
            u = rng.normal(size=3)
            p = c + u / np.linalg.norm(u) * rad * (1 + rng.uniform(-1e-15, 1e-15))
            p = np.clip(p, -(2.0**100), 2.0**100)
            if holds(*p, *c, rad):
                lo, hi = K._extent(*n, *c, rad)
                v = (n[0] * p[0] + n[1] * p[1]) + n[2] * p[2]
                e = float(K._slack(*p))
                assert v + e >= lo and v - e <= hi, (mag, n, c, rad, p)


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
def test_bad_options(cls):
    with pytest.raises(ValueError, match="leaf_size"):
        cls(np.zeros((1, 3)), [1.0], leaf_size=0)
    with pytest.raises(ValueError, match="bins"):
        cls(np.zeros((1, 3)), [1.0], bins=1)
    with pytest.raises(ValueError, match="rebuild_factor"):
        cls(np.zeros((1, 3)), [1.0], rebuild_factor=1.0)
    if cls is BSPTree:
        with pytest.raises(ValueError, match="planes"):
            cls(np.zeros((1, 3)), [1.0], planes="octagons")
