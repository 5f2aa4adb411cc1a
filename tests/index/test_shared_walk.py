"""The octree's shared walk (``Octree.query_many`` by ``_octree_many_kernels.query_shared``): one depth-first
walk for a group of points; and the hash grid's shared cells (``HashGrid.query_many`` by
``_hashgrid_many_kernels.query_cells``): a run of points in one cell reads its entries once. Each view must
equal its own ``query_into`` element for element (order included) and brute force as a set, the counters
must sum the single queries', and the batch's overflow must follow ``query_many_into``'s contract, in the
cases where sharing could go wrong: many points in one node or cell, points on node and cell boundaries
and on sphere surfaces, duplicates, groups of every size."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.index import QueryOverflow, brute_query
from viewer.index._contract import BATCH_FROM
from viewer.index.rivals.grids import _hashgrid_kernels as K
from viewer.index.rivals.grids.hashgrid import HashGrid
from viewer.index.octree import Octree

from tests.support.data import DISTRIBUTIONS, query_points


def singles(ix, pts: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Each point's ``query_into`` answer (in its order) and the counters summed as a batch sums them
    (candidates, visible, nodes; the most nodes on one level: the max)."""
    out = np.empty(1 << 16, dtype=np.int64)
    ans, acc = [], np.zeros(4, dtype=np.int64)
    for p in pts:
        n = ix.query_into(p, out)
        ans.append(out[:n].copy())
        s = ix.stats
        acc += [s.candidates, s.visible, s.nodes_visited, 0]
        acc[3] = max(acc[3], s.max_nodes_per_level)
    return ans, acc


def assert_shared_exact(ix, pts: np.ndarray, centres=None, radii=None, groups=(1, 5, 64, 256)) -> None:
    want, acc = singles(ix, pts)
    assert len(pts) >= BATCH_FROM  # below, the batch is answered point by point: not the shared walk
    for group in groups:
        ix.shared_group = group
        offsets, ids = ix.query_many(pts)
        assert offsets.shape == (len(pts) + 1,) and offsets[0] == 0 and offsets[-1] == ids.size
        for k in range(len(pts)):
            assert np.array_equal(ids[offsets[k]:offsets[k + 1]], want[k]), (group, k)
        s = ix.stats
        assert [s.candidates, s.visible, s.nodes_visited, s.max_nodes_per_level] == acc.tolist(), group
    if centres is not None:
        for k, p in enumerate(pts):
            assert np.array_equal(np.sort(want[k]), np.sort(brute_query(centres, radii, p))), k


@pytest.fixture
def rng():
    return np.random.default_rng(27)


@pytest.mark.parametrize("dist", sorted(DISTRIBUTIONS))
def test_equals_single_queries_and_brute_force(dist, rng):
    c, r = DISTRIBUTIONS[dist](rng, 3000)
    ix = Octree(c, r)
    pts = query_points(rng, c, 150)
    assert_shared_exact(ix, pts, c, r)
    ix.shared_group = 0  # the walk a point, kept as the reference path: the same answers
    o0, i0 = ix.query_many(pts)
    ix.shared_group = 64
    o1, i1 = ix.query_many(pts)
    assert np.array_equal(o0, o1) and np.array_equal(i0, i1)


def test_points_in_one_node(rng):
    """Every point of the group in one leaf: the whole group enters every node of the path together."""
    c, r = DISTRIBUTIONS["clustered"](rng, 4000)
    ix = Octree(c, r)
    pts = c[17] + rng.uniform(-1e-3, 1e-3, (70, 3))
    assert_shared_exact(ix, pts, c, r)


def test_points_on_node_boundaries(rng):
    """Points on a grid of powers of two: on the faces, edges and corners of the octree's nodes (their
    corners are multiples of their power-of-two edges), where a box test decides by its slack."""
    c = rng.uniform(-256, 256, (3000, 3))
    r = rng.uniform(1, 40, 3000)
    ix = Octree(c, r)
    g = np.array([-256.0, -128.0, -64.0, -32.0, 0.0, 32.0, 64.0, 128.0, 256.0])
    pts = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    assert_shared_exact(ix, pts, c, r)


def test_points_on_sphere_surfaces(rng):
    """Points exactly on spheres' surfaces (3-4-5 offsets, exact in float64): included, as brute force
    includes them (distance squared == r squared)."""
    n = 1500
    c = rng.integers(-200, 200, (n, 3)).astype(np.float64)
    r = 5.0 * rng.integers(1, 8, n)
    ix = Octree(c, r)
    pick = rng.integers(0, n, 80)
    pts = c[pick] + np.array([3.0, 4.0, 0.0]) * (r[pick] / 5.0)[:, None]
    assert_shared_exact(ix, pts, c, r)
    offsets, ids = ix.query_many(pts)
    for k, j in enumerate(pick):
        assert j in ids[offsets[k]:offsets[k + 1]]


def test_duplicated_and_unsorted_points(rng):
    c, r = DISTRIBUTIONS["uniform"](rng, 3000)
    ix = Octree(c, r)
    base = query_points(rng, c, 30)
    pts = np.concatenate([base, base[::-1], base[3:4], base[3:4], base[3:4]])
    assert_shared_exact(ix, pts, c, r)


def test_after_updates(rng):
    """Inserts, removals and moves leave blocks unsorted (their octant runs dropped) and boxes loose:
    the shared walk still answers as the single queries do."""
    c, r = DISTRIBUTIONS["clustered"](rng, 3000)
    ix = Octree(c, r)
    live = c.copy()
    for i in rng.choice(3000, 400, replace=False):
        live[i] += rng.normal(0, 20, 3)
        ix.move(int(i), live[i])
    alive = np.ones(3000, dtype=bool)
    alive[rng.choice(3000, 200, replace=False)] = False
    for i in np.flatnonzero(~alive):
        ix.remove(int(i))
    pts = query_points(rng, c, 120)
    want, _ = singles(ix, pts)
    assert_shared_exact(ix, pts)
    ids = np.flatnonzero(alive)
    for k, p in enumerate(pts):
        assert np.array_equal(np.sort(want[k]), np.sort(ids[brute_query(live[alive], r[alive], p)])), k


def test_large_batch_grows_segments_and_overflows(rng):
    """Many points each finding more ids than a segment first holds (the span grows and the batch is
    answered again), then query_many_into with too small an ``out``: QueryOverflow with the total, every
    offset written, and the ids that fit equal to the full answer's first ones."""
    n = 3000
    c = rng.uniform(-10, 10, (n, 3))
    r = rng.uniform(20, 60, n)  # most spheres hold every point below
    ix = Octree(c, r)
    pts = rng.uniform(-10, 10, (600, 3))
    assert_shared_exact(ix, pts, c, r, groups=(64,))
    ix.shared_group = 64
    offsets_full, ids_full = ix.query_many(pts)
    assert ids_full.size > 600 * 1000
    offsets = np.full(601, -1, dtype=np.int64)
    small = np.full(ids_full.size // 3, -1, dtype=np.int64)
    with pytest.raises(QueryOverflow) as err:
        ix.query_many_into(pts, offsets, small)
    assert err.value.needed == ids_full.size
    assert np.array_equal(offsets, offsets_full)
    assert np.array_equal(small, ids_full[:small.size])
    out = np.full(ids_full.size + 5, -1, dtype=np.int64)
    assert ix.query_many_into(pts, offsets, out) == ids_full.size
    assert np.array_equal(out[:ids_full.size], ids_full) and (out[ids_full.size:] == -1).all()


def test_empty_index_and_small_batches(rng):
    empty = Octree(np.zeros((0, 3)), np.zeros(0))
    pts = rng.uniform(-5, 5, (40, 3))
    offsets, ids = empty.query_many(pts)
    assert ids.size == 0 and (offsets == 0).all()
    c, r = DISTRIBUTIONS["uniform"](rng, 500)
    ix = Octree(c, r)
    for k in (0, 1, BATCH_FROM - 1, BATCH_FROM):
        p = query_points(rng, c, max(k, 2))[:k]
        offsets, ids = ix.query_many(p)
        assert offsets.shape == (k + 1,) and offsets[-1] == ids.size
        for j in range(k):
            assert np.array_equal(ids[offsets[j]:offsets[j + 1]], ix.query(p[j]))


# ----------------------------------------------------------------------------- the hash grid


@pytest.mark.parametrize("dist", sorted(DISTRIBUTIONS))
def test_hashgrid_equals_single_queries_and_brute_force(dist, rng):
    c, r = DISTRIBUTIONS[dist](rng, 3000)
    ix = HashGrid(c, r)
    pts = query_points(rng, c, 150)
    assert_shared_exact(ix, pts, c, r)


def test_hashgrid_points_sharing_cells_and_on_cell_boundaries(rng):
    """Runs of points in one cell on every level (a crowd within a hundredth of a unit), points on cell
    faces and corners (multiples of the cell edges, powers of two times the cell size), and duplicates."""
    c = rng.uniform(-256, 256, (3000, 3))
    r = rng.uniform(1, 40, 3000)
    ix = HashGrid(c, r, cell_size=8.0)
    crowd = c[5] + rng.uniform(-1e-2, 1e-2, (40, 3))
    g = np.array([-128.0, -64.0, -8.0, 0.0, 8.0, 16.0, 64.0])
    grid = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    pts = np.concatenate([crowd, grid, crowd[:5], grid[::-1][:20]])
    assert_shared_exact(ix, pts, c, r)


def test_hashgrid_points_on_sphere_surfaces(rng):
    n = 1500
    c = rng.integers(-200, 200, (n, 3)).astype(np.float64)
    r = 5.0 * rng.integers(1, 8, n)
    ix = HashGrid(c, r)
    pick = rng.integers(0, n, 80)
    pts = c[pick] + np.array([0.0, 3.0, 4.0]) * (r[pick] / 5.0)[:, None]
    assert_shared_exact(ix, pts, c, r)


def test_hashgrid_big_list_and_overflow(rng):
    """Spheres too big for any level (the big list, scanned once for the group) and points each finding
    more ids than a segment first holds; then query_many_into's QueryOverflow."""
    n = 2000
    c = rng.uniform(-10, 10, (n, 3))
    r = rng.uniform(20, 60, n)
    r[:50] = 1e12  # beyond the top level's cells: the big list
    ix = HashGrid(c, r)
    assert ix._meta[K.BIG_N] == 50  # the 50 go to the big list
    pts = np.concatenate([rng.uniform(-10, 10, (300, 3)), rng.uniform(-1e6, 1e6, (30, 3))])
    assert_shared_exact(ix, pts, c, r, groups=(1, 64))
    ix.shared_group = 64
    offsets_full, ids_full = ix.query_many(pts)
    offsets = np.full(len(pts) + 1, -1, dtype=np.int64)
    small = np.full(ids_full.size // 2, -1, dtype=np.int64)
    with pytest.raises(QueryOverflow) as err:
        ix.query_many_into(pts, offsets, small)
    assert err.value.needed == ids_full.size and np.array_equal(offsets, offsets_full)
    assert np.array_equal(small, ids_full[:small.size])


@pytest.mark.parametrize("make", [Octree, HashGrid], ids=["octree", "hashgrid"])
def test_batch_walked_in_chunks_when_segments_would_exceed_their_budget(make, rng, monkeypatch):
    """With segments bounded to a few thousand ids, a batch where one point sees every object and the rest
    see few is walked in chunks, their answers packed: each view still equals its single query (order
    included) and brute force, and the counters sum the single queries'."""
    import viewer.index._contract as contract

    monkeypatch.setattr(contract, "SEGMENT_IDS", 4000)
    n = 2500
    c = rng.uniform(-100, 100, (n, 3))
    r = rng.uniform(0.5, 8.0, n)
    r[:] = np.where(np.arange(n) % 7 == 0, np.linalg.norm(c, axis=1) + 1.0, r)  # a seventh hold the origin
    pts = rng.uniform(-100, 100, (300, 3))
    pts[[0, 150, 299]] = 0.0
    assert_shared_exact(make(c, r), pts, c, r, groups=(1, 64))


@pytest.mark.parametrize("make", [Octree, HashGrid], ids=["octree", "hashgrid"])
def test_batch_memory_follows_its_answer_not_k_times_the_largest(make, rng):
    """65,536 points, one of which sees all 20,000 objects: a segment a point at the largest answer's size
    would reserve 65,536 x 25,000 ids (6.5 GB); the batch's numpy allocations peak under 256 MiB and the
    answer is exact."""
    import tracemalloc

    n = 20_000
    c = rng.uniform(-1000, 1000, (n, 3))
    r = np.linalg.norm(c, axis=1) + 1.0  # every sphere holds the origin ...
    far = rng.uniform(5000, 6000, (65_536, 3))  # ... and none of these
    far[12345] = 0.0
    ix = make(c, r)
    tracemalloc.start()
    try:
        offsets, ids = ix.query_many(far)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 256 << 20, peak
    assert offsets[-1] == n and np.array_equal(np.sort(ids), np.arange(n))
    assert offsets[12345] == 0 and offsets[12346] == n
