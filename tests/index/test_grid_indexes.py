"""Structure-specific tests of the grid-like rivals: hashgrid (big list, cell size), hgrid (radius
levels, cells per level), buckettree (leaf capacity, tight boxes). Exactness against brute force is
the contract suite's job; here each structure's own promises are checked."""

from __future__ import annotations

import math

import numpy as np
import pytest

from viewer.index import BucketTree, HashGrid, HGrid, brute_query

from tests.support.data import DISTRIBUTIONS, query_points

GRIDS = [HashGrid, HGrid, BucketTree]


def same_as_brute(ix, centres, radii, points, ids=None):
    for p in points:
        want = brute_query(centres, radii, p)
        if ids is not None:
            want = ids[want]
        assert np.array_equal(np.sort(ix.query(p)), np.sort(want)), p


# --------------------------------------------------------------------------- hashgrid


def test_hashgrid_large_spheres_go_to_a_coarser_level(rng):
    """A sphere whose box would span more than max_span cells an axis is stored on the lowest level whose
    cells (twice, four times... as wide) it spans at most max_span of: at most max_span^3 entries each; a
    move that grows or shrinks it changes its level; a query reads one cell a level in use."""
    from viewer.index.rivals.grids import _hashgrid_kernels as K

    c = rng.uniform(-100, 100, (300, 3))
    r = rng.uniform(0.5, 4.0, 300)
    r[:10] = 60.0  # 120 wide: 12+ cells of 10; at most 4 of 40 (level 2), or of 80 (level 3)
    ix = HashGrid(c, r, cell_size=10.0, max_span=4)
    assert ix.big_count == 0
    lev = [K.level_of(*c[i], r[i], 0.1, 4) for i in range(300)]
    assert all(lev[i] in (2, 3) for i in range(10)) and all(v <= 1 for v in lev[10:])
    assert ix.level_counts.sum() == 300 and ix.level_counts[2:].sum() == 10
    assert ix.entry_count <= 300 * 4**3
    ix.move(20, c[20], 60.0)
    ix.move(0, c[0], 1.0)
    assert ix.level_counts[2:].sum() == 10 and ix.entry_count <= 300 * 4**3
    r2 = r.copy()
    r2[20], r2[0] = 60.0, 1.0
    same_as_brute(ix, c, r2, query_points(rng, c, 100))
    ix.query(c[5])
    assert ix.stats.nodes_visited <= int(np.count_nonzero(ix.level_counts))


def test_hashgrid_spheres_past_the_last_level_go_to_the_big_list(rng):
    from viewer.index.rivals.grids import _hashgrid_kernels as K

    c = rng.uniform(-100, 100, (200, 3))
    r = rng.uniform(0.5, 4.0, 200)
    r[:5] = 1e9  # 2^30 cells of 1: past LEVELS levels of 4 cells
    ix = HashGrid(c, r, cell_size=1.0, max_span=4)
    assert sorted(ix.big_ids().tolist()) == list(range(5)) and K.LEVELS < 30
    ix.move(7, c[7], 1e9)
    ix.move(0, c[0], 2.0)
    assert sorted(ix.big_ids().tolist()) == [1, 2, 3, 4, 7]
    r2 = r.copy()
    r2[7], r2[0] = 1e9, 2.0
    same_as_brute(ix, c, r2, query_points(rng, c, 50))


def test_hashgrid_default_cap_keeps_a_few_entries_an_object(rng):
    """Without max_span the grid takes the largest cap of SPANS whose spheres average at most ENTRY_BUDGET
    entries (the smallest cap when none does): small spheres keep one level, a heavy tail is capped."""
    from viewer.index.rivals.grids.hashgrid import ENTRY_BUDGET, SPANS

    c = rng.uniform(0, 10_000, (5000, 3))
    small = HashGrid(c, rng.uniform(5, 30, 5000))
    assert small.max_span == SPANS[0] and small.entry_count / 5000 <= ENTRY_BUDGET
    r = 5.0 * 200.0 ** (rng.random(5000) ** 4)  # a tenth of the radii above 150
    heavy = HashGrid(c, r, cell_size=small.cell_size)
    assert heavy.max_span < SPANS[0]
    assert heavy.entry_count / 5000 <= ENTRY_BUDGET or heavy.max_span == SPANS[-1]
    assert HashGrid(c, r, cell_size=small.cell_size, max_span=SPANS[0]).entry_count > heavy.entry_count
    same_as_brute(heavy, c, r, query_points(rng, c, 30))


@pytest.mark.parametrize("cell", [0.5, 3.0, 20.0, 500.0])
def test_hashgrid_cell_size_changes_cost_not_results(rng, cell):
    c, r = DISTRIBUTIONS["clustered"](rng, 1500)
    ix = HashGrid(c, r, cell_size=cell)
    assert ix.cell_size == cell
    same_as_brute(ix, c, r, query_points(rng, c, 60))


def test_hashgrid_smaller_cells_mean_more_entries(rng):
    c = rng.uniform(-500, 500, (2000, 3))
    r = rng.uniform(1, 10, 2000)
    small = HashGrid(c, r, cell_size=5.0, max_span=64)
    large = HashGrid(c, r, cell_size=40.0, max_span=64)
    assert small.big_count == 0 and large.big_count == 0
    assert small.entry_count > large.entry_count >= 2000


def test_hashgrid_default_cell_size_follows_the_diameters():
    c = np.array([[0.0, 0.0, 0.0], [1e5, 1e5, 1e5], [0, 1e5, 0], [1e5, 0, 0], [0, 0, 1e5]])  # sparse
    r = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert HashGrid(c, r).cell_size == pytest.approx(8.0 * 6.0)  # 8 x median diameter
    assert HashGrid(c, r, cell_percentile=100, cell_scale=1).cell_size == pytest.approx(10.0)
    assert HashGrid(c, np.zeros(5)).cell_size == 1.0
    # dense data caps it: 1000 centres in a 10-wide cube -> ~16 per cell of edge 10 * (16/1000)^(1/3)
    dense = np.random.default_rng(0).uniform(0, 10, (1000, 3))
    cell = HashGrid(dense, np.full(1000, 0.5)).cell_size
    assert 1.0 <= cell < 8 * 1.0 and cell == pytest.approx(np.ptp(dense, axis=0).prod() ** (1 / 3) * 0.016 ** (1 / 3))


# --------------------------------------------------------------------------- hgrid


def test_hgrid_one_level_per_radius_band(rng):
    n = 1100
    c = rng.uniform(-1000, 1000, (n, 3))
    k = np.repeat(np.arange(11), 100)
    r = 2.0 ** k * rng.uniform(0.51, 1.0, n)  # r in (2^(k-1), 2^k]
    ix = HGrid(c, r, base=1.0)
    counts = ix.level_counts()
    assert counts[:11].tolist() == [100] * 11 and counts[11:].sum() == 0
    assert np.count_nonzero(counts) <= math.ceil(math.log2(r.max() / ix.base)) + 1


def test_hgrid_probes_at_most_8_cells_per_level(rng):
    c, r = DISTRIBUTIONS["uniform"](rng, 3000)
    ix = HGrid(c, r)
    levels = np.count_nonzero(ix.level_counts())
    for p in query_points(rng, c, 100):
        ix.query(p)
        assert ix.stats.max_nodes_per_level <= 8
        assert ix.stats.nodes_visited <= 8 * levels
    ix.query((1e9, 1e9, 1e9))
    assert ix.stats.candidates == 0


def test_hgrid_moves_across_levels(rng):
    c = rng.uniform(-50, 50, (500, 3))
    r = rng.uniform(1, 3, 500)
    ix = HGrid(c, r, base=1.0)
    before = ix.level_counts()
    ix.move_many(np.arange(100), c[:100] + 500.0, np.full(100, 300.0))
    c[:100] += 500.0
    r[:100] = 300.0
    after = ix.level_counts()
    assert after.sum() == before.sum() == 500
    assert after[9] == 100  # 300 is in (256, 512]
    same_as_brute(ix, c, r, np.concatenate([query_points(rng, c, 80), c[:20]]))


# --------------------------------------------------------------------------- buckettree


def check_tree(ix, centres, radii, ids):
    """Every live id is in exactly one leaf of <= m objects, inside its leaf's cube; every node's tight
    box holds the boxes of all spheres below it."""
    leaves = ix.leaves()
    held = np.concatenate(leaves) if leaves else np.zeros(0, dtype=np.int64)
    assert np.array_equal(np.sort(held), np.sort(ids))
    assert max(len(v) for v in leaves) <= ix.m
    pos = {int(i): k for k, i in enumerate(ids)}
    nodes, cube, box = ix.node_boxes()
    for n, q, b in zip(nodes, cube, box):
        below = ix.subtree_ids(n)
        if below.size == 0:
            continue
        rows = np.array([pos[int(i)] for i in below])
        cc, rr = centres[rows], radii[rows]
        assert (b[:3] <= (cc - rr[:, None]) + 1e-9).all() and ((cc + rr[:, None]) - 1e-9 <= b[3:]).all()
        # tight: some sphere touches each face
        assert np.allclose(b[:3], (cc - rr[:, None]).min(0), rtol=0, atol=1e-6)
        assert np.allclose(b[3:], (cc + rr[:, None]).max(0), rtol=0, atol=1e-6)
        assert ((cc >= q[:3] - q[3] - 1e-9) & (cc <= q[:3] + q[3] + 1e-9)).all()


@pytest.mark.parametrize("m,rows", [(4, None), (16, None), (16, 3)])
def test_buckettree_leaves_split_at_m_and_boxes_are_tight(rng, m, rows):
    c, r = DISTRIBUTIONS["clustered"](rng, 1200)
    ix = BucketTree(c, r, m=m, cell_size=256.0, block_rows=rows)
    ids = np.arange(1200)
    check_tree(ix, c, r, ids)
    assert len(ix.leaves()) >= 1200 // m
    # removals and moves keep both properties (boxes shrink back, leaves merge)
    alive = np.ones(1200, dtype=bool)
    for i in rng.choice(1200, 500, replace=False):
        ix.remove(int(i))
        alive[i] = False
    moved = rng.choice(np.flatnonzero(alive), 300, replace=False)
    c[moved] += rng.normal(0, 30, (300, 3))
    r[moved] *= rng.uniform(0.2, 3, 300)
    ix.move_many(moved, c[moved], r[moved])
    check_tree(ix, c[alive], r[alive], ids[alive])
    same_as_brute(ix, c[alive], r[alive], query_points(rng, c[alive], 60), ids=ids[alive])


def test_buckettree_coincident_centres_terminate(rng):
    c = np.zeros((200, 3))
    r = rng.uniform(0, 2, 200)
    ix = BucketTree(c, r, m=4)
    same_as_brute(ix, c, r, [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.9, 0.0)])
    for i in range(200):
        ix.remove(i)
    assert len(ix) == 0 and ix.cell_count == 0


def test_buckettree_removing_everything_frees_cells(rng):
    c = rng.uniform(-1e4, 1e4, (300, 3))
    r = rng.uniform(1, 5, 300)
    ix = BucketTree(c, r, m=8, cell_size=100.0)
    assert ix.cell_count > 100
    for i in range(300):
        ix.remove(i)
    assert ix.cell_count == 0 and ix.leaves() == []


# --------------------------------------------------------------------------- all three


@pytest.mark.parametrize("cls", GRIDS, ids=lambda c: c.name)
def test_move_many_equals_single_moves(rng, cls):
    c, r = DISTRIBUTIONS["uniform"](rng, 1500)
    a, b = cls(c, r), cls(c, r)
    ids = rng.choice(1500, 400, replace=False)
    newc = c[ids] + rng.normal(0, 40, (400, 3))
    newr = r[ids] * rng.uniform(0.1, 20, 400)
    a.move_many(ids, newc, newr)
    for i, p, q in zip(ids, newc, newr):
        b.move(int(i), p, q)
    c2, r2 = c.copy(), r.copy()
    c2[ids], r2[ids] = newc, newr
    pts = query_points(rng, c2, 80)
    for p in pts:
        assert np.array_equal(np.sort(a.query(p)), np.sort(b.query(p)))
    same_as_brute(a, c2, r2, pts)


@pytest.mark.parametrize("cls", GRIDS, ids=lambda c: c.name)
def test_move_many_rejects_bad_batches_whole(rng, cls):
    c = rng.uniform(-50, 50, (100, 3))
    r = rng.uniform(1, 10, 100)
    ix = cls(c, r)
    ix.remove(5)
    with pytest.raises(KeyError, match="removed"):
        ix.move_many([1, 5], np.zeros((2, 3)))
    with pytest.raises(KeyError, match="unknown"):
        ix.move_many([1, 500], np.zeros((2, 3)))
    with pytest.raises(ValueError):
        ix.move_many([1, 2], np.array([[0, 0, 0], [np.nan, 0, 0]]))
    with pytest.raises(ValueError):
        ix.move_many([1, 2], np.zeros((2, 3)), [1.0, -1.0])
    r2 = r.copy()
    r2[5] = -1.0
    same_as_brute(ix, c[r2 >= 0], r[r2 >= 0], query_points(rng, c, 40), ids=np.flatnonzero(r2 >= 0))


@pytest.mark.parametrize("cls", GRIDS, ids=lambda c: c.name)
def test_nbytes_grows_with_n(rng, cls):
    c, r = DISTRIBUTIONS["uniform"](rng, 4000)
    small, big = cls(c[:400], r[:400]), cls(c, r)
    assert 0 < small.nbytes() < big.nbytes()


@pytest.mark.parametrize(
    "cls,options",
    [
        (HashGrid, {"cell_size": 0.0}),
        (HashGrid, {"max_span": 0}),
        (HGrid, {"base": -1.0}),
        (HGrid, {"cell_factor": 0.5}),
        (BucketTree, {"m": 1}),
        (BucketTree, {"m": 4, "block_rows": 5}),
        (BucketTree, {"cell_size": float("nan")}),
    ],
)
def test_bad_options(cls, options):
    with pytest.raises(ValueError):
        cls(np.zeros((3, 3)), np.ones(3), **options)


@pytest.mark.parametrize("cls", GRIDS, ids=lambda c: c.name)
def test_unknown_option_is_a_type_error(cls):
    with pytest.raises(TypeError, match="bogus"):
        cls(np.zeros((3, 3)), np.ones(3), bogus=1)
