"""Structure-specific tests of the tree rivals (bvh, kdtree) and the peer wrappers (rtree, ckdtree).
The shared contract suite covers exact sets, updates and bad input for all of them; these check what
each structure promises beyond it: BVH boxes stay the tight union of their contents through moves,
refits and reinserts; kd-tree boxes and largest radii stay tight bounds; the peers report a missing
library cleanly."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from viewer.index import brute_query
from viewer.index.rivals.leaftrees.bvh import BVH
from viewer.index.rivals.leaftrees.kdtree import KDTree
from viewer.index.rivals.peers import CKDTreeIndex, RTreeIndex

from tests.support.data import DISTRIBUTIONS, query_points

TREES = [BVH, KDTree]


class Mirror:
    """The expected contents, by id, beside an index under test."""

    def __init__(self, c, r):
        self.c = {i: np.array(p) for i, p in enumerate(c)}
        self.r = {i: float(q) for i, q in enumerate(r)}

    def assert_same(self, ix, rng, m=60):
        ids = np.array(sorted(self.c), dtype=np.int64)
        c = np.array([self.c[i] for i in ids]).reshape(-1, 3)
        r = np.array([self.r[i] for i in ids])
        assert len(ix) == ids.size
        if not ids.size:
            return
        for p in query_points(rng, c, m):
            got = np.sort(ix.query(p))
            assert np.array_equal(got, ids[brute_query(c, r, p)]), p


def run_churn(ix, mirror, rng, rounds=300, far=True):
    """Single moves (small and far, some with a new radius), inserts and removes, mirrored."""
    for k in range(rounds):
        live = list(mirror.c)
        i = live[rng.integers(len(live))]
        op = k % 6
        if op == 0:
            c, r = rng.uniform(-500, 500, 3), float(rng.uniform(0, 40))
            j = ix.insert(c, r)
            mirror.c[j], mirror.r[j] = c, r
        elif op == 1:
            ix.remove(i)
            del mirror.c[i], mirror.r[i]
        else:
            step = rng.normal(0, 300 if (far and op == 2) else 2, 3)
            mirror.c[i] = mirror.c[i] + step
            if op == 3:
                mirror.r[i] = float(mirror.r[i] * rng.uniform(0.2, 5))
                ix.move(i, mirror.c[i], mirror.r[i])
            else:
                ix.move(i, mirror.c[i])


def batch_move(ix, mirror, rng, m, sigma, new_radii=False):
    ids = rng.choice(np.array(sorted(mirror.c)), m, replace=False)
    c = np.array([mirror.c[i] for i in ids]) + rng.normal(0, sigma, (m, 3))
    r = rng.uniform(0, 30, m) if new_radii else None
    ix.move_many(ids, c, r)
    for k, i in enumerate(ids):
        mirror.c[i] = c[k]
        if new_radii:
            mirror.r[i] = float(r[k])


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
@pytest.mark.parametrize("dist", sorted(DISTRIBUTIONS))
def test_bounds_hold_through_moves_and_refits(cls, dist, rng):
    """After every kind of update, every box is the tight union of its contents (and, for the kd-tree,
    every node's largest radius is exactly the largest below it), and queries equal brute force."""
    c, r = DISTRIBUTIONS[dist](rng, 2000)
    ix = cls(c, r)
    mirror = Mirror(c, r)
    ix.check_bounds()
    run_churn(ix, mirror, rng, 300)
    ix.check_bounds()
    mirror.assert_same(ix, rng)
    batch_move(ix, mirror, rng, 40, 3.0)  # small batch: each object's chain refitted
    ix.check_bounds()
    batch_move(ix, mirror, rng, 1200, 3.0, new_radii=True)  # large batch: one sweep refit
    ix.check_bounds()
    batch_move(ix, mirror, rng, 1200, 400.0)  # far moves: reinserts / region changes
    ix.check_bounds()
    mirror.assert_same(ix, rng)


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
def test_degradation_triggers_rebuild(cls, rng):
    """Teleporting every object, batch after batch, degrades the tree; it rebuilds itself and stays
    exact."""
    c, r = DISTRIBUTIONS["clustered"](rng, 3000)
    ix = cls(c, r)
    mirror = Mirror(c, r)
    for _ in range(6):
        ids = np.arange(3000)
        new = rng.uniform(-3000, 3000, (3000, 3))
        ix.move_many(ids, new)
        for i in ids:
            mirror.c[i] = new[i]
    ix.check_bounds()
    mirror.assert_same(ix, rng)
    if cls is BVH:
        assert ix.rebuilds >= 1
        assert ix._ex[0] <= ix.rebuild_factor * ix._cost0 or ix._updates < len(ix) // 4 + 64


def test_bvh_refit_only_degrades_then_rebuilds(rng):
    """With reinsertion disabled every far move is a refit, boxes balloon, and the summed volume check
    rebuilds the tree."""
    c = rng.uniform(-1000, 1000, (2000, 3))
    r = rng.uniform(1, 10, 2000)
    ix = BVH(c, r, reinsert_growth=1e30)
    v0 = ix._cost0
    ids = np.arange(0, 2000, 2)
    ix.move_many(ids[:100], rng.uniform(-1000, 1000, (100, 3)))
    assert ix._ex[0] > v0  # refits grew the boxes
    for _ in range(4):
        ix.move_many(ids, rng.uniform(-1000, 1000, (ids.size, 3)))
    assert ix.rebuilds >= 1
    ix.check_bounds()


def test_bvh_options_and_heavy_tail(rng):
    n = 3000
    c = rng.uniform(-2000, 2000, (n, 3))
    r = 10.0 ** rng.uniform(-2, 3, n)
    for opts in ({"leaf_size": 1, "bins": 2}, {"leaf_size": 16, "bins": 64}):
        ix = BVH(c, r, **opts)
        ix.check_bounds()
        Mirror(c, r).assert_same(ix, rng, 100)


def test_kdtree_radius_bound_is_tight(rng):
    """The root's largest radius follows removals and shrinking moves down, not just growth up, and
    leaves are scanned largest radius first."""
    c = rng.uniform(-100, 100, (500, 3))
    r = rng.uniform(1, 5, 500)
    r[17] = 90.0
    ix = KDTree(c, r)
    assert ix._nf[0, 6] == 90.0
    ix.move(17, c[17], 3.0)
    assert ix._nf[0, 6] == r[np.arange(500) != 17].max()
    ix.move(17, c[17] + 0.5, 200.0)
    assert ix._nf[0, 6] == 200.0
    ix.remove(17)
    assert ix._nf[0, 6] == r[np.arange(500) != 17].max()
    ix.check_bounds()
    # a point far from everything except one big sphere: the small spheres of its leaf are skipped
    big = ix.insert((1000.0, 0.0, 0.0), 500.0)
    for k in range(20):
        ix.insert((1000.0 + k, 1.0, 0.0), 1.0)
    got = ix.query((1400.0, 0.0, 0.0))
    assert list(got) == [big]
    assert ix.stats.candidates < 5


def test_kdtree_coincident_centres(rng):
    """Hundreds of identical centres force repeated leaf splits on ties; results stay exact."""
    ix = KDTree(np.zeros((0, 3)), np.zeros(0), leaf_size=4)
    mirror = Mirror(np.zeros((0, 3)), np.zeros(0))
    for k in range(300):
        p = np.array([1.0, 2.0, 3.0]) if k % 3 else rng.uniform(-5, 5, 3)
        q = float(rng.uniform(0, 4))
        j = ix.insert(p, q)
        mirror.c[j], mirror.r[j] = p, q
    ix.check_bounds()
    mirror.assert_same(ix, rng)
    assert ix.query((1.0, 2.0, 3.0)).size >= 200


@pytest.mark.parametrize("cls", TREES, ids=lambda c: c.name)
def test_bad_options(cls):
    with pytest.raises(ValueError, match="leaf_size"):
        cls(np.zeros((1, 3)), [1.0], leaf_size=0)
    with pytest.raises(TypeError):
        cls(np.zeros((1, 3)), [1.0], nonsense=3)


def test_move_many_bad_input_leaves_index_unchanged(rng):
    c = rng.uniform(-50, 50, (100, 3))
    r = rng.uniform(1, 20, 100)
    for cls in (BVH, KDTree, RTreeIndex, CKDTreeIndex):
        if cls.unavailable():
            continue
        ix = cls(c, r)
        ix.remove(5)
        pts = query_points(rng, c, 20)
        before = [np.sort(ix.query(p)) for p in pts]
        with pytest.raises(KeyError, match="removed"):
            ix.move_many([1, 5], c[:2])
        with pytest.raises(KeyError, match="unknown"):
            ix.move_many([1, 500], c[:2])
        with pytest.raises(ValueError, match="finite"):
            ix.move_many([1, 2], [[0.0, 0.0, np.nan], [0.0, 0.0, 0.0]])
        with pytest.raises(ValueError, match="radii"):
            ix.move_many([1, 2], c[:2], [1.0])
        after = [np.sort(ix.query(p)) for p in pts]
        assert all(np.array_equal(a, b) for a, b in zip(before, after)), cls.name


# --------------------------------------------------------------------------------------- peers


@pytest.mark.parametrize(
    "cls,modules,package",
    [(RTreeIndex, ("rtree", "rtree.index"), "rtree"), (CKDTreeIndex, ("scipy.spatial",), "scipy")],
    ids=["rtree", "ckdtree"],
)
def test_peer_reports_missing_library(cls, modules, package, monkeypatch):
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)  # `import m` now raises ImportError
    why = cls.unavailable()
    assert why and f"{package} not installed" in why and "pip install '.[peers]'" in why
    with pytest.raises(ImportError, match="not installed"):
        cls(np.zeros((1, 3)), [1.0])


@pytest.mark.parametrize("cls", [RTreeIndex, CKDTreeIndex], ids=lambda c: c.name)
def test_peers_say_how_they_update(cls):
    assert cls.updates_in_place is False
    assert cls.update_note
    if cls is CKDTreeIndex:
        assert "rebuilt on change" in cls.update_note


def test_ckdtree_plain_and_banded_agree(rng):
    if CKDTreeIndex.unavailable():
        pytest.skip(CKDTreeIndex.unavailable())
    c, r = DISTRIBUTIONS["uniform"](rng, 2000)
    plain = CKDTreeIndex(c, r, bands=1)
    banded = CKDTreeIndex(c, r)
    mirror = Mirror(c, r)
    batch_move(plain, Mirror(c, r), np.random.default_rng(3), 300, 50.0, new_radii=True)
    batch_move(banded, mirror, np.random.default_rng(3), 300, 50.0, new_radii=True)
    for p in query_points(rng, c, 100):
        a = np.sort(plain.query(p))
        assert np.array_equal(a, np.sort(banded.query(p)))
    mirror.assert_same(banded, rng)
    with pytest.raises(ValueError, match="bands"):
        CKDTreeIndex(c, r, bands=3)


def test_rtree_capacity_options(rng):
    if RTreeIndex.unavailable():
        pytest.skip(RTreeIndex.unavailable())
    c, r = DISTRIBUTIONS["diagonal"](rng, 2000)
    ix = RTreeIndex(c, r, leaf_capacity=8, index_capacity=8)
    mirror = Mirror(c, r)
    run_churn(ix, mirror, rng, 120)
    mirror.assert_same(ix, rng)
    assert ix.nbytes() >= 2000 * 32
    with pytest.raises(ValueError, match="leaf_capacity"):
        RTreeIndex(c, r, leaf_capacity=1)


def test_rtree_reloads_for_a_batch_dearer_than_a_load_and_stays_exact(rng, monkeypatch):
    """A batch whose deletes + inserts would cost more than a bulk load is a bulk load (timed: the first moves of
    the batch, the last load); small batches stay deletes + inserts. Answers equal brute force either way, with
    removed and inserted objects kept out of and in the reloaded tree."""
    if RTreeIndex.unavailable():
        pytest.skip(RTreeIndex.unavailable())
    from viewer.index import brute_query

    c, r = DISTRIBUTIONS["clustered"](rng, 3000)
    ix = RTreeIndex(c, r)
    c, r = c.copy(), r.copy()
    loads = []
    load = ix._load
    monkeypatch.setattr(ix, "_load", lambda ids: (loads.append(ids.size), load(ids)))
    gone = [ix.insert((1.0, 2.0, 3.0), 50.0), 7]
    ix.remove(gone[1])
    c = np.vstack([c, [[1.0, 2.0, 3.0]]])
    r = np.append(r, 50.0)
    live = np.ones(len(r), dtype=bool)
    live[7] = False
    small = rng.choice(np.flatnonzero(live), 10, replace=False)
    c[small] += 3.0
    ix.move_many(small, c[small])
    assert loads == []  # ten moves: deletes + inserts
    big = np.flatnonzero(live)[::2]
    c[big] += rng.normal(0, 20.0, (big.size, 3))
    r[big] *= 1.5
    ix._load_s = 0.0  # a load costs nothing: the batch must reload
    ix.move_many(big, c[big], r[big])
    assert loads == [live.sum()]  # every live object, the removed one left out
    assert ix._move_s > 0
    for p in np.vstack([c[rng.choice(len(c), 40)], [[1.0, 2.0, 3.0]]]):
        got = np.sort(ix.query(p))
        want = brute_query(c, r, p)
        want = np.sort(want[live[want]])
        assert np.array_equal(got, want)
    ix._load_s = 1e9  # a load costs more than any batch: deletes + inserts
    ix.move_many(big, c[big] + 1.0)
    assert loads == [live.sum()]
