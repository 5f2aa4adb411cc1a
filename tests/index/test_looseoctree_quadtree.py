"""The loose octree's and the seed's quadtree's own promises (their class docstrings), and the flat world
(the ``terrain`` generator) they are measured on. Exactness against brute force for every operation is the
contract suite's, the state machine's and the domain sweep's (both indexes are registered)."""

import math

import numpy as np
import pytest

from viewer.index import brute_query
from viewer.index.rivals.looseoctree import LooseOctree
from viewer.index.rivals.quadtree import Quadtree


def _flat_world(rng, n=6000, width=2000.0, height=30.0):
    """Centres over a wide x-z plane, y within a few tens; radii from rocks to buildings."""
    c = rng.uniform(-width / 2, width / 2, (n, 3))
    c[:, 1] = rng.uniform(-height, height, n)
    r = np.exp(rng.uniform(math.log(5.0), math.log(400.0), n))
    return c, r


def _worlds(rng):
    c, r = _flat_world(rng)
    yield "flat", c, r
    u = rng.uniform(-500, 500, (4000, 3))
    yield "uniform", u, np.exp(rng.uniform(math.log(2.0), math.log(200.0), 4000))
    k = rng.uniform(-800, 800, (12, 3))
    cl = k[rng.integers(0, 12, 4000)] + rng.normal(0, 30, (4000, 3))
    yield "clustered", cl, np.exp(rng.uniform(math.log(1.0), math.log(300.0), 4000))


def _points(rng, c, edges, m=150):
    """Query points: at objects, anywhere in the box, and exactly on grid lines of every given edge (node
    and cell boundaries, where the per-level bounds are tight)."""
    lo, hi = c.min(axis=0), c.max(axis=0)
    near = c[rng.integers(0, len(c), m)] + rng.normal(0, 3, (m, 3))
    anywhere = rng.uniform(lo, hi, (m, 3))
    on = []
    for e in edges:
        p = rng.uniform(lo, hi, (m // 4, 3))
        on.append(np.floor(p / e) * e)
        q = rng.uniform(lo, hi, (m // 4, 3))
        q[:, ::2] = np.floor(q[:, ::2] / e + 0.5) * e - e / 2  # odd multiples of half an edge
        on.append(q)
    return np.concatenate([near, anywhere] + on)


def _check_exact(ix, c, r, p):
    assert np.array_equal(np.sort(ix.query(p)), np.sort(brute_query(c, r, p))), p


# --------------------------------------------------------------------------- quadtree


def test_quadtree_enters_at_most_4_nodes_per_level_boundaries_included(rng):
    for name, c, r in _worlds(rng):
        ix = Quadtree(c, r)
        ix.check()
        root = ix._nf[ix._meta[0], 2]
        edges = [root / 2.0**j for j in range(1, ix.depth() + 1)]
        most = 0
        for p in _points(rng, c, edges):
            _check_exact(ix, c, r, p)
            assert ix.stats.max_nodes_per_level <= 4, (name, p)
            most = max(most, ix.stats.max_nodes_per_level)
        assert most >= 3, name  # the queries did meet several nodes on a level


def test_quadtree_depth_and_axes(rng):
    c, r = _flat_world(rng)
    ix = Quadtree(c, r)
    assert ix.axes == (0, 2)  # the flat world spreads along x and z; y is left to the exact predicate
    assert 3 <= ix.depth() <= 20
    assert Quadtree(c[:, [1, 0, 2]], r).axes == (1, 2)
    assert Quadtree(c, r, axes=(1, 0)).axes == (1, 0)
    for bad in [(0, 0), (0, 3), (0.0, 1), "xy", (0,)]:
        with pytest.raises(ValueError, match="axes"):
            Quadtree(c, r, axes=bad)


def test_quadtree_third_axis_is_tested_exactly():
    # a column of spheres at one (x, z): the tree cannot tell them apart, the predicate can
    y = np.arange(-50.0, 50.0, 1.0)
    c = np.zeros((y.size, 3))
    c[:, 0] = 1000.0 * np.arange(y.size) % 7
    c[:, 1] = y
    r = np.full(y.size, 2.5)
    ix = Quadtree(c, r, axes=(0, 2))
    for py in (-50.0, 0.0, 0.5, 2.5, 49.0):
        p = (c[0, 0], py, 0.0)
        _check_exact(ix, c, r, p)


def test_quadtree_a_move_inside_its_node_keeps_its_slot_and_node(rng):
    from viewer.index.rivals._quadtree_kernels import fits

    c, r = _flat_world(rng, n=3000)
    ix = Quadtree(c, r)
    stayed = banded = 0
    for i in rng.integers(0, len(r), 200).tolist():
        s, node = int(ix._id2s[i]), int(ix._sl[ix._id2s[i], 2]) >> 2  # (list 4 node + quadrant)
        h = ix._nf[node, 2] / 2
        in_band = h < ix._fm[0] or not fits(r[i], h)  # not a smaller sphere kept by a bucket leaf
        new = c[i] + rng.normal(0, 0.01, 3)
        ix.move(i, new)
        c[i] = new
        if in_band:
            banded += 1
            if ix._sl[ix._id2s[i], 2] >> 2 == node:
                stayed += 1
                assert ix._id2s[i] == s  # rewritten in place: no relink, no new slot
    assert banded >= 50 and stayed >= 0.95 * banded
    ix.check()
    for p in _points(rng, c, [], m=40):
        _check_exact(ix, c, r, p)


def test_quadtree_far_moves_grow_the_root_or_rebuild_keeping_ids(rng):
    c, r = _flat_world(rng, n=500)
    ix = Quadtree(c, r)
    far = [(5e4, 0.0, -5e4, 10.0), (2.0**99, 1.0, -(2.0**99), 2.0**98), (3e-300, 0.0, 1e-310, 0.0)]
    for j, (x, y, z, rad) in enumerate(far):
        ix.move(j, (x, y, z), rad)
        c[j], r[j] = (x, y, z), rad
        ix.check()
    i = ix.insert((-7e20, 5.0, 3e20), 1e19)
    assert i == len(r)
    c, r = np.vstack([c, [(-7e20, 5.0, 3e20)]]), np.append(r, 1e19)
    for p in [c[0], c[1], c[2], c[i], (0.0, 0.0, 0.0)] + list(_points(rng, c[3:500], [], m=20)):
        _check_exact(ix, c, r, p)


def test_quadtree_removals_free_empty_nodes(rng):
    c, r = _flat_world(rng, n=2000)
    ix = Quadtree(c, r)
    for i in range(2000):
        ix.remove(i)
    assert len(ix) == 0 and ix.node_count == 1  # only the root is left
    ix.check()


# --------------------------------------------------------------------------- loose octree


@pytest.mark.parametrize("k", [2.0, 1.5, 1.25])
def test_looseoctree_enters_at_most_8_cells_per_level_boundaries_included(rng, k):
    for name, c, r in _worlds(rng):
        ix = LooseOctree(c, r, looseness=k)
        ix.check()
        edges = list(ix._edge)
        most = 0
        for p in _points(rng, c - 0.0, edges):
            _check_exact(ix, c, r, p)
            assert ix.stats.max_nodes_per_level <= 8, (name, k, p)
            most = max(most, ix.stats.max_nodes_per_level)
        assert most >= 4, (name, k)


def test_looseoctree_each_object_on_the_deepest_level_its_radius_allows(rng):
    c, r = _flat_world(rng)
    ix = LooseOctree(c, r, looseness=1.5)
    assert 1 <= ix.levels <= 48
    loose = ix._loose
    for i in rng.integers(0, len(r), 300).tolist():
        s = ix._id2s[i]
        cell = int(ix._sl[s, 2])
        lv = int(np.searchsorted(ix._off, cell, side="right") - 1)
        reach = r[i] + r[i] * 2.0**-45 + 2.0**-490
        assert reach <= loose[lv] and (lv == ix.levels - 1 or reach > loose[lv + 1])


def test_looseoctree_updates_are_o1_and_exact_outside_the_build_box(rng):
    c, r = _flat_world(rng, n=3000)
    ix = LooseOctree(c, r)
    cells = ix._head.size
    for i in rng.integers(0, len(r), 100).tolist():
        s = int(ix._id2s[i])
        new = c[i] + rng.normal(0, 0.01, 3)
        ix.move(i, new)
        c[i] = new
        assert ix._id2s[i] == s  # a move rewrites the object's row where it is
    # far outside the grid and larger than level 0: clamped onto the edge cells, and the big list
    for j, (p, rad) in enumerate([((1e9, 0.0, -1e9), 5.0), ((-(2.0**100), 2.0**100, 0.0), 2.0**100),
                                  ((1e-300, -1e-310, 0.0), 0.0)]):
        ix.move(j, p, rad)
        c[j], r[j] = p, rad
    assert ix.level_counts()[-1] >= 1  # the sphere of radius 2**100
    i = ix.insert((3e6, 1.0, 2.0), 1e7)
    c, r = np.vstack([c, [(3e6, 1.0, 2.0)]]), np.append(r, 1e7)
    ix.remove(7)
    alive = np.ones(len(r), bool)
    alive[7] = False
    assert ix._head.size == cells  # updates never add cells
    ix.check()
    for p in [c[0], c[1], c[2], c[i], (0.0, 0.0, 0.0)] + list(_points(rng, c[3:], [], m=30)):
        got = np.sort(ix.query(p))
        assert np.array_equal(got, np.flatnonzero(alive)[brute_query(c[alive], r[alive], p)])


@pytest.mark.parametrize("k", [1.0, 2.5, 1.3, "2", True])
def test_looseoctree_refuses_a_bad_looseness(rng, k):
    with pytest.raises(ValueError, match="looseness"):
        LooseOctree(np.zeros((2, 3)), np.ones(2), looseness=k)


def test_looseoctree_cell_budget(rng):
    c, r = _flat_world(rng, n=4000)
    small = LooseOctree(c, r, cells_per_object=0.0)
    big = LooseOctree(c, r, cells_per_object=8.0)
    assert small._head.size <= 4096 + 1 < big._head.size <= 8 * 4000 + 4096 + 1
    for ix in (small, big):
        for p in _points(rng, c, [], m=20):
            _check_exact(ix, c, r, p)


# --------------------------------------------------------------------------- the flat world


def test_terrain_is_a_flat_world_of_kinds_and_clusters():
    from viewer.scenes import generate_scene

    s = generate_scene("terrain", 20000, seed=3, world=4000.0)
    again = generate_scene("terrain", 20000, seed=3, world=4000.0)
    assert np.array_equal(s.centres, again.centres) and np.array_equal(s.radii, again.radii)
    lo, hi = s.bounds
    assert (s.centres >= lo).all() and (s.centres <= hi).all()
    spread = np.ptp(s.centres, axis=0)
    assert spread[0] > 3500 and spread[2] > 3500 and spread[1] <= 2 * 1.25 * 30.0  # wide in x-z, low in y
    kind = np.searchsorted([60.0, 250.0], s.radii, side="right")
    share = np.bincount(kind, minlength=3) / s.n
    assert np.allclose(share, [0.30, 0.55, 0.15], atol=0.02)
    assert s.radii.min() >= 15.0 and s.radii.max() <= 1200.0
    # buildings mostly in villages (categories 0..39), trees mostly in forests (40..99), rocks mostly scattered
    cat = s.category
    assert np.mean((cat[kind == 2] >= 0) & (cat[kind == 2] < 40)) > 0.8
    assert np.mean(cat[kind == 1] >= 40) > 0.75
    assert np.mean(cat[kind == 0] < 0) > 0.5
    # colours by kind
    assert len({tuple(x) for x in s.colours.tolist()}) == 3


def test_terrain_refuses_hills_taller_than_the_world(tmp_path):
    from viewer.scenes import SceneError, generate_scene

    with pytest.raises(SceneError, match="height"):
        generate_scene("terrain", 100, world=100.0, height=50.0)
