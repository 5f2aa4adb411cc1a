"""The hash grid's memory on heavy-tailed worlds: the default cap keeps the entries an
object averages within ``ENTRY_BUDGET``, and the bytes an object within what that layout costs (a sphere:
x, y, z, r, its state and chain head, 40 bytes; an entry: 52 bytes; a cell: its record and free-list slot,
24 bytes, and at most eight map slots of 20, the map's load being >= 1/8 after the build) and within a
small multiple of the octree's, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.index import INDEXES, brute_query
from viewer.index.rivals.grids import _hashgrid_kernels as K
from viewer.index.rivals.grids.hashgrid import ENTRY_BUDGET, SPANS, HashGrid

from tests.support.data import query_points

N = 60_000
#: bytes per sphere / entry / live cell of the layout (hashgrid.HashGrid.nbytes)
PER_OBJECT, PER_ENTRY, PER_CELL = 40, 52, 24 + 8 * 20


def heavy_world(rng, n: int = N, world: float = 3_000.0):
    """A third of the spheres in a tight cluster at the origin (a corner of every level's cells when those
    are aligned), the rest uniform in a cube ``world`` wide (about the bench's density at 1e6: a sphere
    every ~80 units); radii r = 5 * 200**(u**4) (a tenth above 150), and one in 3,000 a quarter of the
    world (with the old cut-off the grid took ~4,900 bytes an object here)."""
    k = n // 3
    centres = np.concatenate([rng.normal(0.0, 20.0, (k, 3)), rng.uniform(-world / 2, world / 2, (n - k, 3))])
    radii = 5.0 * 200.0 ** (rng.uniform(0.0, 1.0, n) ** 4)
    radii[:: n // 20] = world / 4
    return centres, radii


def _check_layout_bound(ix: HashGrid, n: int) -> None:
    bound = PER_OBJECT * n + PER_ENTRY * ix.entry_count + PER_CELL * ix.cell_count + 4096
    assert ix.nbytes() <= bound, (ix.nbytes() / n, bound / n)


def test_heavy_tail_stays_within_the_entry_budget_and_its_layout(rng):
    c, r = heavy_world(rng)
    ix = HashGrid(c, r)
    assert ix.max_span < SPANS[0]  # the default cap is not the default worlds' one here
    assert ix.entry_count / N <= ENTRY_BUDGET
    _check_layout_bound(ix, N)
    for p in query_points(rng, c, 300):
        assert np.array_equal(np.sort(ix.query(p)), np.sort(brute_query(c, r, p))), p


def test_heavy_tail_within_five_times_the_octree(rng):
    """The grid's bytes an object on the heavy-tailed world: at most 5x the octree's (247 against 54
    measured, 4.5x: 2.95 entries and 0.4 cells an object; ~90x with the old cut-off)."""
    c, r = heavy_world(rng)
    grid = HashGrid(c, r)
    octree = INDEXES["octree"](c, r)
    assert grid.nbytes() <= 5 * octree.nbytes(), (grid.nbytes() / N, octree.nbytes() / N)


def test_levels_are_offset_so_a_cluster_at_a_corner_climbs_out_of_it():
    """Small spheres around the origin straddle a corner of level 0's cells; each coarser level's cells are
    shifted by a different fraction (``K.phase``), so one level up they lie inside one cell."""
    c = np.array([[0.1, -0.1, 0.2], [-0.2, 0.15, -0.05], [0.0, 0.0, 0.0]])
    r = np.array([0.3, 0.4, 0.5])
    assert K.phase(0) == 0.0 and all(0.0 < K.phase(lev) < 1.0 for lev in range(1, K.LEVELS))
    ix = HashGrid(c, r, cell_size=10.0, max_span=2, max_cells=1)
    assert ix.entry_count == 3 and ix.level_counts[0] == 0
    same = HashGrid(c, r, cell_size=10.0, max_span=2)  # no cells cap: 8 cells each on level 0
    assert same.entry_count == 24 and same.level_counts[0] == 3
    for p in ([0.05, 0.05, 0.05], [-0.3, 0.1, 0.1], [0.4, 0.0, 0.0], [0.0, 0.0, 0.6]):
        want = np.sort(brute_query(c, r, np.array(p)))
        assert np.array_equal(np.sort(ix.query(p)), want) and np.array_equal(np.sort(same.query(p)), want)


def test_inserts_after_an_exact_build_grow_by_a_quarter(rng):
    """The build sizes entries and cells exactly; inserts then grow them by a quarter, not double, and
    the answers stay exact."""
    c, r = heavy_world(rng, 6_000)
    ix = HashGrid(c, r)
    before = ix._ed.shape[0]
    assert before == max(64, ix.entry_count)
    extra_c = rng.uniform(-5_000, 5_000, (400, 3))
    extra_r = rng.uniform(1.0, 30.0, 400)
    ids = [ix.insert(extra_c[k], extra_r[k]) for k in range(400)]
    assert ix._ed.shape[0] < 2 * before  # grown by quarters (the old policy doubled)
    allc, allr = np.concatenate([c, extra_c]), np.concatenate([r, extra_r])
    assert ids == list(range(6_000, 6_400))
    for p in query_points(rng, allc, 100):
        assert np.array_equal(np.sort(ix.query(p)), np.sort(brute_query(allc, allr, p))), p


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_max_cells_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="max_cells"):
        HashGrid(np.zeros((2, 3)), np.ones(2), max_cells=bad)
