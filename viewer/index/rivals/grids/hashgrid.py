"""Spatial hash grid, as a game engine writes it: grid coordinates -> hash map -> linked lists in one
contiguous array (N. Frykholm, "A spatial hash grid"), adapted to spheres of varied view distance.

The point of a query is not known ahead, the spheres' radii are; so each sphere is stored (as the
article's "store the item in all neighbouring cells" variant) in every cell its bounding box touches,
and a query reads one cell: hash the point's cell, walk its list, test each sphere. A sphere whose box
would span more than ``max_span`` cells on some axis would flood the grid, so it is stored on a coarser
level instead, as engines cap the cells one object may cover: level L has cells of edge
``cell_size * 2**L`` (keyed by level in the same hash map), a sphere goes to the lowest level where it
spans at most ``max_span`` cells an axis, so it has at most ``max_span**3`` entries, and a query reads
one cell of each level in use (a world of small spheres uses one). A second cap, ``max_cells``, lets a
sphere that covers more cells than that in total climb up to ``K.CLIMB`` levels to fit; each level's grid
is offset by a different fraction of its cell (``K.phase``), so a sphere at a corner of one level's cells
(a cluster at the origin) is not at a corner of the next. Past ``K.LEVELS`` levels a sphere goes
to one dense list that every query tests. The world is unbounded: only cells that hold something
exist, in an open-addressing hash map over flat int32 arrays. Memory: 40 bytes a sphere, 52 an entry,
the cells' records (24 bytes) and a map at load <= 1/4 (20 bytes a slot), sized by the bulk build.

Layout choices that make the idea as fast as it can be:

- each entry carries a copy of its sphere (x, y, z, r), and the bulk build lays every cell's list out
  consecutively, so a query streams through one contiguous run instead of chasing ids into a table;
  later inserts link free entries in anywhere (the lists stay correct, only less local);
- the big list is a dense (B, 4) array, swap-removed, scanned by one tight loop;
- a move that keeps a sphere's box in the same cells rewrites its entries in place; otherwise only
  the cells that differ are unlinked / linked;
- cell lists are doubly linked and each object's entries are chained (in a side array a query never
  reads), so a move or removal reaches and unlinks its entries in O(1) each instead of walking cell
  lists, which hold thousands of entries in dense clusters.

The cell size is the knob the article discusses: small cells mean few candidates per query but more
entries per sphere (memory, build and move time) and more spheres in the big list; large cells the
reverse. The default is ``cell_scale`` times a percentile of the diameters, capped by the density
(see ``default_cell_size``).
"""

from __future__ import annotations

import sys

import numpy as np

from . import _hashgrid_kernels as K
from . import _hashgrid_many_kernels as MK
from ... import _pages
from ..._contract import BATCH_FROM, SphereIndex, _is_real, as_length, as_objects, grown
from ..._octree_many_kernels import curve_keys

__all__ = ["CELLS", "CellTable", "ENTRY_BUDGET", "GrowingIndex", "HashGrid", "SPANS", "default_cap", "default_cell_size",
           "default_span"]

#: the caps on the cells a sphere's box spans per axis that the default (``HashGrid(max_span=None)``) picks
#: from: the largest whose entries average at most :data:`ENTRY_BUDGET` an object (:func:`default_span`)
SPANS: tuple[int, ...] = (16, 8, 6, 4, 3, 2)
#: entries (copies of a sphere in cells, 52 bytes each) an object may average under the default cap: a
#: few keep the grid within about 4x the octree's memory on every bench world (40 bytes a sphere + 52 an
#: entry), and where a larger cap fits (the default three worlds) the grid keeps its single level, its
#: fastest. 3.2 rather than 2.5: octaves and city-1m keep 4 cells a sphere (2.9 and 2.7 entries; 2 cells at
#: 2.5: their queries slower), the star field 8 (2.9 entries; 4 at 2.5: slower still). The measurements:
#: viewer/index/README.md, "The hash grid's cap".
ENTRY_BUDGET = 3.2
#: where even the smallest of :data:`SPANS` averages more than :data:`ENTRY_BUDGET` entries (heavy-tailed
#: radii: each level's largest spheres straddle 2 cells an axis, ~5 entries), the caps on a sphere's cells in
#: total that the default tries next, largest first: such a sphere climbs up to ``K.CLIMB`` levels to fit
#: (:func:`~._hashgrid_kernels.level_in`)
CELLS: tuple[int, ...] = (4, 2, 1)


def _pow2(n: int) -> int:
    return 1 << max(4, int(n - 1).bit_length())


class CellTable:
    """The hash map from integer cell keys (4 int32) to cell records, with its growth policy.

    ``tab`` (T, 5) int32, ``ck`` (C, 5) int32, ``cfree`` (C,) int32, ``cmeta`` (3,) int64; see
    :mod:`viewer.index.rivals.grids._hashgrid_kernels`. Shared by ``hashgrid``, ``hgrid`` and ``buckettree``.
    """

    def __init__(self, cells: int = 16):
        cap = max(16, int(cells))
        self.ck = _pages.full((cap, 5), -2, np.int32)
        self.cfree = np.zeros(cap, dtype=np.int32)
        self.cmeta = np.zeros(3, dtype=np.int64)
        self.tab = _pages.full((_pow2(2 * cap), 5), -1, np.int32)

    @property
    def live(self) -> int:
        """Cells holding at least one entry now."""
        return int(self.cmeta[K.CELLS_LIVE])

    def grow_for(self, k: int) -> None:
        """Make room for ``k`` more cells (map load stays <= 1/2)."""
        live, top = int(self.cmeta[K.CELLS_LIVE]), int(self.cmeta[K.CELL_TOP])
        cap = self.ck.shape[0]
        if int(self.cmeta[K.CELL_FREEN]) + cap - top < k:
            new = max(2 * cap, top + k)
            ck = _pages.full((new, 5), -2, np.int32)
            ck[:cap] = self.ck
            cfree = np.zeros(new, dtype=np.int32)
            cfree[:cap] = self.cfree
            self.ck, self.cfree = ck, cfree
        if 2 * (live + k) > self.tab.shape[0]:
            self.tab = _pages.full((_pow2(4 * (live + k)), 5), -1, np.int32)
            K.rehash(self.tab, self.ck, self.cmeta)

    def fit(self) -> None:
        """Drop the room the build reserved: records for the cells in use (on huge pages, as built: a query
        reads them), a map at load <= 1/4 as :meth:`grow_for` leaves it (a map at ~1/2 with the records off
        huge pages made the clustered world's queries slower against the octree; the two were not
        measured apart). The next insert that needs more grows them again."""
        top = int(self.cmeta[K.CELL_TOP])
        cap = max(16, top)
        if cap < self.ck.shape[0]:
            ck = _pages.full((cap, 5), -2, np.int32)
            ck[:] = self.ck[:cap]
            self.ck = ck
            self.cfree = self.cfree[:cap].copy()
        size = _pow2(4 * max(1, int(self.cmeta[K.CELLS_LIVE])))
        if size < self.tab.shape[0]:
            self.tab = _pages.full((size, 5), -1, np.int32)
            K.rehash(self.tab, self.ck, self.cmeta)

    def nbytes(self) -> int:
        """Bytes of the table's arrays (cell records, free list, hash map, counters)."""
        return self.ck.nbytes + self.cfree.nbytes + self.tab.nbytes + self.cmeta.nbytes


def default_cell_size(radii: np.ndarray, centres: np.ndarray | None = None, percentile: float = 50.0,
                      scale: float = 8.0, per_cell: float = 16.0) -> float:
    """``scale`` x the ``percentile`` of the diameters ``2 * radii``, but no larger than the edge of a
    cube holding ``per_cell`` centres at the data's mean density (the centres' bounding box), and no
    smaller than that percentile itself. 1.0 when it comes out 0 (no data, or only point spheres).
    World units. Measured at 1e6 spheres (uniform, radii 5..30 with a 2% tail to 1000): scale 8 with
    ``max_span`` 16 keeps the big list empty and queries ~4 candidates per visible sphere; scale 2
    leaves ~14,000 spheres in the big list."""
    if radii.size == 0:
        return 1.0
    d = float(np.percentile(2.0 * radii, percentile))
    cell = d * scale
    if centres is not None and centres.shape[0] > 1:
        ext = np.ptp(centres, axis=0)
        ext = np.where(ext > 0, ext, max(d, 1e-300))
        spacing = float(np.exp(np.log(ext).sum() / 3.0)) * (per_cell / centres.shape[0]) ** (1.0 / 3.0)
        cell = max(d, min(cell, spacing))
    return cell if cell > 0.0 and np.isfinite(cell) else 1.0


def default_cap(centres: np.ndarray, radii: np.ndarray, cell_size: float, sample: int = 20_000) -> tuple[int, int]:
    """``(max_span, max_cells)``: the largest cap of :data:`SPANS` (cells an axis; ``max_cells`` its cube)
    under which the spheres (a sample of ``sample`` of them, evenly strided) average at most
    :data:`ENTRY_BUDGET` entries on ``cell_size`` (world units); past the smallest, that span with the
    largest cap of :data:`CELLS` (cells in total) that does, else the smallest."""
    step = max(1, radii.size // sample)
    inv = 1.0 / cell_size
    for span in SPANS:
        if not K.mean_entries(centres, radii, inv, span, step, span**3) > ENTRY_BUDGET:
            return span, span**3
    span = SPANS[-1]
    for cells in CELLS:
        if not K.mean_entries(centres, radii, inv, span, step, cells) > ENTRY_BUDGET:
            return span, cells
    return span, CELLS[-1]


def default_span(centres: np.ndarray, radii: np.ndarray, cell_size: float, sample: int = 20_000) -> int:
    """The ``max_span`` of :func:`default_cap`."""
    return default_cap(centres, radii, cell_size, sample)[0]


class GrowingIndex(SphereIndex):
    """An index whose update kernels take the arrays ``self._arrays()`` last and say when those must grow
    first (``self._grow()``): ``insert_one`` / ``move_one`` return False, a batch kernel
    ``kernel(done, ids, centres, radii, *arrays)`` returns where it stopped. ``K`` is the kernel module;
    ``self._next_id`` the next id. Shared by ``hashgrid`` and ``buckettree``."""

    K = None

    def _arrays(self) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def _grow(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _grow_ids(self, upto: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _run(self, kernel, ids, cen, rad) -> None:
        done = 0
        while done < ids.size:
            done = kernel(done, ids, cen, rad, *self._arrays())
            if done < ids.size:
                self._grow()

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        i = self._next_id
        self._grow_ids(i + 1)
        while not self.K.insert_one(i, x, y, z, r, *self._arrays()):
            self._grow()
        self._next_id = i + 1
        return i

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        # r NaN keeps the radius (the kernels follow the contract's convention)
        while not self.K.move_one(i, x, y, z, r, *self._arrays()):
            self._grow()

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        self._run(self.K.move_many, ids, centres, radii)


class HashGrid(GrowingIndex):
    """Spatial hash grid over sphere boxes, with a separate list for spheres too large for it.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    cell_size : float, optional
        Cell edge, world units. Default: ``default_cell_size(radii, cell_percentile, cell_scale)``.
    cell_percentile, cell_scale : float
        The default cell edge is ``cell_scale`` x this percentile of the diameters (defaults 50, 8),
        capped by the data's density (see ``default_cell_size``).
    max_span : int or None
        The most cells a sphere's box may span on an axis (so at most ``max_span**3`` entries a sphere);
        a larger one goes to the lowest coarser level (cells twice, four times, ... as wide) where it
        spans no more. Default: the largest of :data:`SPANS` that keeps the entries at
        :data:`ENTRY_BUDGET` an object on average (:func:`default_cap`).
    max_cells : int or None
        The most cells in total a sphere should cover: one covering more on its ``max_span`` level climbs
        up to ``K.CLIMB`` coarser levels to fit (else stays). Default: ``max_span**3`` (no effect) when
        ``max_span`` is given, else :func:`default_cap`'s (:data:`CELLS` where the spans do not fit the
        budget).
    """

    name = "hashgrid"
    updates_in_place = True
    K = K
    live_from = -1  # _ow[id]: -2 removed, -1 in cells, >= 0 its row in the big list

    def __init__(self, centres, radii, cell_size=None, cell_percentile: float = 50.0,
                 cell_scale: float = 8.0, max_span: int | None = None, max_cells: int | None = None):
        super().__init__()
        centres, radii = as_objects(centres, radii)
        if max_span is not None and (isinstance(max_span, bool) or not isinstance(max_span, (int, np.integer))
                                     or not 1 <= max_span <= 64):
            raise ValueError(f"hashgrid: max_span must be an integer in 1..64, got {max_span!r}")
        if max_cells is not None and (isinstance(max_cells, bool) or not isinstance(max_cells, (int, np.integer))
                                      or max_cells < 1):
            raise ValueError(f"hashgrid: max_cells must be an integer >= 1, got {max_cells!r}")
        if cell_size is None:
            # numbers, not a bool nor text; NaN, inf and an int too large for a float fail the range tests
            if not (_is_real(cell_percentile) and 0.0 <= cell_percentile <= 100.0):
                raise ValueError(f"hashgrid: cell_percentile must be in [0, 100], got {cell_percentile!r}")
            if not (_is_real(cell_scale) and 0.0 < cell_scale <= sys.float_info.max):
                raise ValueError(f"hashgrid: cell_scale must be > 0, got {cell_scale!r}")
            cell_size = default_cell_size(radii, centres, cell_percentile, cell_scale)
        else:
            cell_size = as_length(cell_size, "hashgrid: cell_size")
        self.cell_size = float(cell_size)
        if max_span is None:
            self.max_span, cells = default_cap(centres, radii, self.cell_size)
        else:
            self.max_span, cells = int(max_span), int(max_span) ** 3
        self.max_cells = min(cells if max_cells is None else int(max_cells), self.max_span**3)
        self._inv = 1.0 / self.cell_size
        self._need = self.max_span**3
        self._build(centres, radii)

    # ------------------------------------------------------------------------- build
    def _build(self, centres: np.ndarray, radii: np.ndarray) -> None:
        n = radii.size
        icap = max(16, n)
        self._obj = np.zeros((icap, 4))
        self._obj[:n, :3] = centres
        self._obj[:n, 3] = radii
        self._ow = np.full(icap, -2, dtype=np.int32)
        self._oe = np.full(icap, -1, dtype=np.int32)
        self._next_id = n
        self._meta = np.zeros(K.META, dtype=np.int64)
        self._meta[K.MAXC] = self.max_cells
        lev = np.empty(n, dtype=np.int8)
        K.levels(centres, radii, self._inv, self.max_span, lev, self._meta)
        bidx = np.flatnonzero(lev < 0)
        nb = bidx.size
        bcap = max(16, 2 * nb)
        self._bd = np.zeros((bcap, 4))
        self._bd[:nb, :3] = centres[bidx]
        self._bd[:nb, 3] = radii[bidx]
        self._bi = np.full(bcap, -1, dtype=np.int64)
        self._bi[:nb] = bidx
        self._ow[:n] = -1
        self._ow[bidx] = np.arange(nb)
        self._meta[K.BIG_N] = nb
        self._meta[K.NLIVE] = n

        # cells: from a quarter of the objects up, grown as the count pass finds them (a table sized for
        # one cell an object took 66 bytes an object whatever the cells: 1e6 clustered, heavy tail)
        self._ct = ct = CellTable(max(16, n // 4))
        cnt = np.zeros(ct.ck.shape[0], dtype=np.int64)
        s = 0
        while True:
            s = K.build_count(s, centres, radii, lev, self._inv, ct.tab, ct.ck, ct.cfree, ct.cmeta, cnt, self._need)
            if s == n:
                break
            ct.grow_for(self._need)
            if ct.ck.shape[0] > cnt.size:
                cnt = grown(cnt, ct.ck.shape[0], 0)
        ncell = int(ct.cmeta[K.CELL_TOP])
        off = np.zeros(ncell + 1, dtype=np.int64)
        np.cumsum(cnt[:ncell], out=off[1:])
        total = int(off[-1])
        ecap = max(64, total)  # exact: the build's entries; inserts grow it (by a quarter, _grow)
        self._ed = _pages.zeros((ecap, 4))
        self._ei = _pages.full((ecap, 2), -1, np.int32)
        self._el = np.full((ecap, 3), -1, dtype=np.int32)
        K.build_fill(centres, radii, lev, self._inv, ct.tab, ct.ck, off, self._ed, self._ei, self._el, self._oe)
        self._meta[K.ENT_TOP] = total
        ct.fit()

    # ------------------------------------------------------------------------- growth
    def _grow(self) -> None:
        need = self._need
        m = self._meta
        if int(m[K.ENT_FREEN]) + self._ed.shape[0] - int(m[K.ENT_TOP]) < need:
            cap = self._ed.shape[0]
            new = cap + max(cap // 4, need)
            self._ed, self._ei, self._el = grown(self._ed, new, 0.0), grown(self._ei, new, -1), grown(self._el, new, -1)
        if m[K.BIG_N] >= self._bd.shape[0]:
            cap = self._bd.shape[0]
            self._bd, self._bi = grown(self._bd, 2 * cap, 0.0), grown(self._bi, 2 * cap, -1)
        self._ct.grow_for(need)

    def _grow_ids(self, upto: int) -> None:
        cap = self._ow.size
        if upto <= cap:
            return
        new = max(2 * cap, upto)
        self._obj, self._ow, self._oe = grown(self._obj, new, 0.0), grown(self._ow, new, -2), grown(self._oe, new, -1)

    def _arrays(self):
        ct = self._ct
        return (self._inv, self.max_span, ct.tab, ct.ck, ct.cfree, ct.cmeta, self._ed, self._ei, self._el,
                self._bd, self._bi, self._obj, self._ow, self._oe, self._meta)

    # ------------------------------------------------------------------------- contract
    def __len__(self) -> int:
        return int(self._meta[K.NLIVE])

    #: points answered together (``MK.query_cells``: runs of them in one cell share its lookup and its
    #: entries); 0 answers them one after another (``MK.query_many``)
    shared_group = 64

    def _query_many(self, points: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> int:
        ct = self._ct
        group = int(self.shared_group)
        k = points.shape[0]
        if group <= 0 or k < BATCH_FROM:
            # one kernel call, the points in Morton order: the points of one cell read its entries once from memory
            one = np.zeros(4, dtype=np.int64)
            return self._query_in_curve_order(points, offsets, out, lambda pts, order, scratch, start, count, acc: MK.query_many(
                pts, order, self._inv, ct.tab, ct.ck, self._ed, self._ei, self._bd, self._bi, self._meta, scratch, start,
                count, one, acc))
        w = self.__dict__.get("_shared_work")
        if w is None or w[0] != group:
            w = self._shared_work = (group, np.empty((3, group), dtype=np.float64),
                                     np.empty((3, group), dtype=np.int64), np.empty(group, dtype=np.int64))
            self._shared_span = 256
            self._shared_seg = np.empty(0, dtype=np.int32)
        _, gxyz, keys, cur = w
        order = self._curve_order(points)
        return self._query_in_segments(points, offsets, out, order, lambda part, seg, span, start, count, acc: (
            MK.query_cells(points, part, group, self._inv, ct.tab, ct.ck, self._ed, self._ei, self._bd, self._bi,
                           self._meta, seg, span, gxyz, keys, cur, start, count, acc)))

    def _warm_many(self) -> None:
        # a batch large enough to be shared (below BATCH_FROM points a batch is answered point by point)
        self.query_many(np.zeros((BATCH_FROM, 3)))

    @staticmethod
    def _curve_order(points: np.ndarray) -> np.ndarray:
        """The points' Morton order (:func:`~._octree_many_kernels.curve_keys`: one call, not numpy's ~10)."""
        keys = np.empty(points.shape[0], dtype=np.int64)
        curve_keys(points, keys)
        return np.argsort(keys, kind="stable")

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        ct = self._ct
        return K.query(px, py, pz, self._inv, ct.tab, ct.ck, self._ed, self._ei, self._bd, self._bi,
                    self._meta, out, self._stats)

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._next_id, self._ow


    def _remove(self, i: int) -> None:
        ct = self._ct
        K.remove_one(i, ct.tab, ct.ck, ct.cfree, ct.cmeta, self._ei, self._el, self._bd, self._bi, self._ow,
                     self._oe, self._meta)

    def nbytes(self) -> int:
        arrays = (self._obj, self._ow, self._oe, self._ed, self._ei, self._el, self._bd, self._bi, self._meta)
        return sum(a.nbytes for a in arrays) + self._ct.nbytes()

    # ------------------------------------------------------------------------- inspection
    @property
    def big_count(self) -> int:
        """How many spheres are in the big list (tested by every query)."""
        return int(self._meta[K.BIG_N])

    @property
    def level_counts(self) -> np.ndarray:
        """(LEVELS,) int64: the spheres stored on each level (cells of edge ``cell_size * 2**L``)."""
        return self._meta[K.LEV0 : K.LEV0 + K.LEVELS].copy()

    def big_ids(self) -> np.ndarray:
        """Ids (B,) int64 of the spheres in the big list."""
        return self._bi[: self.big_count].copy()

    @property
    def cell_count(self) -> int:
        """Cells that hold at least one entry."""
        return self._ct.live

    @property
    def entry_count(self) -> int:
        """Entries (sphere copies) in cells."""
        m = self._meta
        return int(m[K.ENT_TOP] - m[K.ENT_FREEN])
