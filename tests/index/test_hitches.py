"""No hitches from rebuilds: the leaf-bucket trees (bvh, kdtree, bsp, spheretree) stage a
rebuild of a large tree over later updates (:mod:`viewer.index.rivals.leaftrees._leaftree`): the new tree is
built a slice at a time while the old one answers, then swapped in with the updates made meanwhile replayed. These
check that a rebuild in progress never changes an answer (every step equals brute force, through single
moves, batches with and without new radii, inserts and removes, and the swaps), that a worn large tree
stages its rebuild instead of building at once, that the build is spread over many update calls, and
that an explicit rebuild drops a staged one."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.index import brute_query
from viewer.index.rivals.leaftrees.bsp import BSPTree
from viewer.index.rivals.leaftrees.bvh import BVH
from viewer.index.rivals.leaftrees.kdtree import KDTree
from viewer.index.rivals.leaftrees.spheretree import SphereTree

from tests.support.data import DISTRIBUTIONS, query_points

TREES = [BVH, KDTree, BSPTree, SphereTree]


class World:
    """The expected contents by id (centres, radii, live flags) beside an index under test."""

    def __init__(self, c: np.ndarray, r: np.ndarray):
        self.c = c.copy()
        self.r = r.copy()
        self.live = np.ones(r.size, dtype=bool)

    def add(self, i: int, c, r: float) -> None:
        if i >= self.r.size:
            grow = i + 1 - self.r.size
            self.c = np.vstack([self.c, np.zeros((grow, 3))])
            self.r = np.concatenate([self.r, np.zeros(grow)])
            self.live = np.concatenate([self.live, np.zeros(grow, dtype=bool)])
        self.c[i], self.r[i], self.live[i] = c, r, True

    def assert_same(self, ix, rng, m: int = 6) -> None:
        ids = np.flatnonzero(self.live)
        assert len(ix) == ids.size
        for p in query_points(rng, self.c[ids], m):
            got = np.sort(ix.query(p))
            assert np.array_equal(got, ids[brute_query(self.c[ids], self.r[ids], p)]), p


def step(ix, w: World, rng, k: int) -> None:
    """One update of kind ``k % 6``: insert, remove, single move (far or with a new radius), a batch
    of small moves, a batch of far moves with new radii."""
    ids = np.flatnonzero(w.live)
    op = k % 6
    if op == 0:
        c, r = rng.uniform(-600, 600, 3), float(rng.uniform(0, 40))
        w.add(ix.insert(c, r), c, r)
    elif op == 1:
        i = int(rng.choice(ids))
        ix.remove(i)
        w.live[i] = False
    elif op == 2:
        i = int(rng.choice(ids))
        w.c[i] = w.c[i] + rng.normal(0, 300, 3)
        if k % 12 == 2:
            w.r[i] = float(rng.uniform(0, 60))
            ix.move(i, w.c[i], w.r[i])
        else:
            ix.move(i, w.c[i])
    else:
        sel = rng.choice(ids, 150, replace=False)
        w.c[sel] = w.c[sel] + rng.normal(0, 400 if op == 5 else 5, (sel.size, 3))
        if op == 5:
            w.r[sel] = rng.uniform(0, 50, sel.size)
            ix.move_many(sel, w.c[sel], w.r[sel])
        else:
            ix.move_many(sel, w.c[sel])


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
@pytest.mark.parametrize("dist", sorted(DISTRIBUTIONS))
def test_staged_rebuild_answers_exactly_at_every_step(cls, dist, rng):
    """A staged rebuild is always in progress (a new one begins as each is swapped in) while every kind
    of update goes on: after every update the answers equal brute force's, and several swaps happen,
    each leaving every bound of the tree intact."""
    c, r = DISTRIBUTIONS[dist](rng, 2000)
    ix = cls(c, r)
    ix.stage_pace = 16.0  # a build of 2,000 objects spans tens of updates
    w = World(c, r)
    ix.stage_rebuild()
    swaps = 0
    for k in range(240):
        staged = ix.staging
        step(ix, w, rng, k)
        w.assert_same(ix, rng)
        if staged and not ix.staging:
            swaps += 1
            ix.check_bounds()
            ix.stage_rebuild()
    assert swaps >= 3
    assert ix.rebuilds == swaps


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
def test_worn_large_tree_stages_its_rebuild(cls, rng):
    """A tree of at least ``stage_from`` objects that wears out is not rebuilt in one update: the
    rebuild is staged, the build spans many update calls (each advancing it by about ``stage_pace``
    objects' worth a move), and the swapped-in tree is exact and tight."""
    n = 3000
    c, r = DISTRIBUTIONS["clustered"](rng, n)
    ix = cls(c, r)
    ix.stage_from = 1000
    w = World(c, r)
    calls_staged = 0
    for _ in range(60):
        ids = rng.choice(n, 300, replace=False)
        w.c[ids] = rng.uniform(-3000, 3000, (300, 3))
        rebuilds = ix.rebuilds
        ix.move_many(ids, w.c[ids])
        assert ix.rebuilds <= rebuilds + 1
        calls_staged += ix.staging
        w.assert_same(ix, rng, 4)
    assert ix.rebuilds >= 1
    assert calls_staged >= 5  # the build spread over at least five update calls
    ix.check_bounds()
    w.assert_same(ix, rng, 40)


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
def test_explicit_rebuild_drops_a_staged_one(cls, rng):
    """``rebuild()`` during a staged rebuild builds at once from the current objects and drops the
    stage; the answers stay exact, and updates afterwards do not swap in the stale build."""
    c, r = DISTRIBUTIONS["uniform"](rng, 1500)
    ix = cls(c, r)
    ix.stage_pace = 4.0
    w = World(c, r)
    ix.stage_rebuild()
    for k in range(20):
        step(ix, w, rng, k)
    assert ix.staging
    ix.rebuild()
    assert not ix.staging
    rebuilds = ix.rebuilds
    for k in range(20, 60):
        step(ix, w, rng, k)
        w.assert_same(ix, rng, 4)
    assert ix.rebuilds == rebuilds or not ix.staging
    ix.check_bounds()


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
def test_swap_keeps_radii_of_a_batch_that_keeps_them(cls, rng):
    """Radii changed while the new tree was built, then a batch that keeps its radii (``radii=None``)
    arrives just as the build completes: the swap gives those objects their current radii, not the ones
    the new tree was built with."""
    c, r = DISTRIBUTIONS["clustered"](rng, 1200)
    ix = cls(c, r)
    w = World(c, r)
    ix.stage_rebuild()
    ids = np.arange(0, 1200, 3)
    w.r[ids] = w.r[ids] * 3.0 + 1.0
    ix.move_many(ids, w.c[ids], w.r[ids])
    ix._advance(None, -1)  # complete the build: the next update swaps it in
    assert ix.staging
    w.c[ids] = w.c[ids] + 0.5
    ix.move_many(ids, w.c[ids])
    assert not ix.staging
    ix.check_bounds()
    w.assert_same(ix, rng, 60)
