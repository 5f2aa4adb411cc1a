"""What the two leaf-bucket binary trees (:class:`~viewer.index.rivals.leaftrees.bvh.BVH`,
:class:`~viewer.index.rivals.leaftrees.kdtree.KDTree`) share: objects in contiguous leaf slot ranges, the arrays
that hold them, their growth, updates through the kernels' common signatures, batch moves with one bottom-up
refit, and the rebuild policy.

A subclass names its kernel module ``K``, which provides (``ex`` being the subclass's extra array: the
BVH's (1,) summed volume, the kd-tree's (M, 6) node regions)::

    query(px, py, pz, obj, oid, nf, ni, out, stack, levels, stats) -> k
    insert(x, y, z, r, id, obj, oid, leafof, idslot, nf, ni, ex, st, leaf_size)
    refit_all(obj, nf, ni, ex, st)

remove, move and batch move are the shared kernels of :mod:`viewer.index.rivals.leaftrees._leaftree_ops`.

and implements the bulk build in slices (:meth:`LeafTree._build_start`, :meth:`LeafTree._build_steps`,
:meth:`LeafTree._build_result`), :meth:`LeafTree._after_build` and :meth:`LeafTree._worn` (its own
rebuild trigger). The array layout is described in the kernel modules.

A rebuild of a tree of ``stage_from`` objects or more is *staged* so that no frame pays for a whole build:
the live objects are copied, and update calls afterwards advance the new tree by ``stage_pace`` objects'
worth of splits per update (paid in chunks of :data:`STAGE_CHUNK`; a node is split whole, so a chunk does
at least one node), then lay out its arrays one at a time, while the old tree keeps answering every query
and taking every update; the ids those updates touch are flagged. When the new tree is complete, the next
update call swaps it in and replays the flagged ids' current state into it (a move, an insert or a
remove each), less the ids of its own batch, which it then applies to the new tree; the trees that refit
their bounds (BVH, sphere tree) take that replay and that batch in place, in one sweep, instead of
reinserting objects that travelled since the snapshot one by one. Answers are exact at every step: the
tree queried is always one that has taken every update. On ``dynamic-1m`` (1e6 objects, 10% moving) a
tree's worst update, a whole rebuild in one frame (the sphere tree's had been due every third frame), had
been many times the median update; staged, it is within a few times it (issue 30; the figures: the bench
results README, "Figures that used to live in code comments").

No frame pauses for memory either: the slot and node arrays sit in mappings with room to grow in place
(:func:`viewer.index._pages.extend`), where a doubling by copy at 1e6 pauses the frame it falls in; a tree
whose moves reinsert (``leaf_slack``: the kd-tree) builds every leaf with room for ``leaf_size`` objects,
so the first moving frame after a build does not move every full leaf to the end of storage.
"""

from __future__ import annotations

import copy

import numpy as np

from . import _leaftree_kernels as LK
from . import _leaftree_ops as OPS
from ... import _pages
from ..._contract import IdTable, SphereIndex, as_objects, as_option, grown

__all__ = ["LeafTree"]

NNODES, NSLOTS, GARBAGE, MAXDEPTH = 0, 1, 2, 3  # st: the kernels' counters
STAGE_CHUNK = 8192  # a staged build advances only once it owes this many objects' worth of splits


class _Stage:
    """A rebuild in progress: ``work``, the generator of its pieces (each ``send(budget)`` does one),
    the ``shadow`` tree it fills, the snapshot's ``ids`` (n,) int64, ``touched`` (id capacity,) uint8:
    the ids updated since (to replay), and ``held``: the arrays its build holds (for ``nbytes``)."""

    __slots__ = ("work", "shadow", "ids", "touched", "held", "done", "credit")

    def __init__(self, shadow, ids: np.ndarray, capacity: int):
        self.work = None
        self.shadow = shadow
        self.ids = ids
        self.touched = np.zeros(capacity, dtype=np.uint8)
        self.held = []
        self.done = False
        self.credit = 0.0  # objects' worth of splits owed to the build

    def touch(self, ids) -> None:
        """Flag ``ids`` (an int or an int64 array) as updated since the build began."""
        top = int(np.max(ids)) if np.ndim(ids) else int(ids)
        if top >= self.touched.size:
            self.touched = grown(self.touched, max(top + 1, 2 * self.touched.size), 0)
        self.touched[ids] = 1


def _longer(a: np.ndarray, rows: int, fill) -> np.ndarray:
    """``a`` with ``rows`` rows (>= its own), the new ones ``fill``: lengthened in place when its mapping
    has room (:func:`viewer.index._pages.extend`), else a copy with room for as many again."""
    g = _pages.extend(a, rows, fill)
    if g is None:
        g = _roomy(a, rows, fill)
    return g


def _roomy(a: np.ndarray, rows: int, fill) -> np.ndarray:
    """A copy of ``a`` with ``rows`` rows (the new ones ``fill``) in a mapping with room to grow in place
    to four times that."""
    g = _pages.zeros((rows,) + a.shape[1:], a.dtype, reserve=3 * rows)
    g[: a.shape[0]] = a
    if fill != 0:
        g[a.shape[0]:] = fill
    return g


#: the most bytes one step of a staged rebuild's layout copies (the copies are cut into pieces of this size, so
#: no moving frame pays for a whole array: at 1e6 objects the BVH's node arrays alone, copied at once, are a stutter)
STEP_BYTES = 16 << 20


def _roomy_steps(a: np.ndarray, rows: int, fill):
    """:func:`_roomy` as a generator: a step (a ``yield``) between pieces of at most :data:`STEP_BYTES`, none after
    the last (``yield from`` returns the array)."""
    g = _pages.zeros((rows,) + a.shape[1:], a.dtype, reserve=3 * rows)
    step = max(1, STEP_BYTES // max(1, a[:1].nbytes))
    for k in range(0, a.shape[0], step):
        if k:
            yield
        e = min(k + step, a.shape[0])
        g[k:e] = a[k:e]
    if fill != 0:
        g[a.shape[0]:] = fill
    return g


def _spread_leaves(ni: np.ndarray, nnodes: int, leaf_size: int) -> tuple[np.ndarray, int]:
    """Give every leaf of a fresh build room for ``leaf_size`` objects (``ni`` (M, >= 4) int32, columns
    CHILD, START, CNT, CAP; rewritten in place): returns ``where`` (n,) int64, the new slot of each built
    slot, and the slots used. A leaf built full would be moved to the end of storage by its first
    insert; after a build every leaf is full, so without room the first moving frame moves most of them."""
    leaves = np.flatnonzero(ni[:nnodes, 0] < 0)
    leaves = leaves[np.argsort(ni[leaves, 1], kind="stable")]
    cnt = ni[leaves, 2].astype(np.int64)
    cap = np.maximum(cnt, leaf_size)
    start = np.zeros(leaves.size, dtype=np.int64)
    np.cumsum(cap[:-1], out=start[1:])
    shift = np.repeat(start - ni[leaves, 1], cnt)
    where = np.arange(shift.size, dtype=np.int64) + shift
    ni[leaves, 1] = start
    ni[leaves, 3] = cap
    return where, int(cap.sum())


#: what a tree's install sets: the attributes a staged rebuild's shadow hands over at the swap
TREE_ATTRS = ("_obj", "_oid", "_leafof", "_nf", "_ni", "_st", "_ex", "_cost0", "_depth0", "_n", "_n_build",
              "_updates", "_dirty", "_stack", "_levels")


class LeafTree(SphereIndex):
    """Base of the leaf-bucket trees: storage, updates and rebuilds; the subclass builds and searches."""

    K = None  # the subclass's kernel module
    stage_from = 1 << 17  # rebuilds of trees this large are staged over later updates (smaller: at once)
    stage_pace = 8.0  # objects' worth of splits a staged build advances per update (chosen by measurement)
    leaf_slack = False  # does a build give every leaf room for leaf_size objects (trees whose moves reinsert)?
    ex_per_node = False  # does the extra array ``_ex`` have a row per node (grown with them)?
    growth = 0.0  # the ``growth`` argument of the move kernels
    warm_options = {"leaf_size": 2}

    def __init__(self, centres, radii, leaf_size: int):
        super().__init__()
        self._kquery = self.K.query  # bound once: the query path is the hot one
        self.leaf_size = as_option(leaf_size, "leaf_size", 1, 256, integer=True)
        centres, radii = as_objects(centres, radii)
        n = radii.size
        self._idt = IdTable(n)
        obj = np.empty((n, 4))
        obj[:, :3] = centres
        obj[:, 3] = radii
        self.rebuilds = 0  # rebuilds since construction (degradation, waste or depth)
        self._stage = None  # a staged rebuild in progress (:class:`_Stage`)
        self._build(obj, np.arange(n, dtype=np.int64))

    # ----------------------------------------------------------------------------------------- build
    def _build_start(self, obj: np.ndarray):
        """The state of a bulk build over ``obj`` (n >= 1, 4), for :meth:`_build_steps`."""
        raise NotImplementedError

    def _build_steps(self, state, budget: int) -> bool:
        """Advance the build by about ``budget`` objects' worth of splits (< 0: to the end); True when
        it is complete."""
        raise NotImplementedError

    def _build_result(self, state):
        """The complete build: ``(rows (n, 4) in slot order, perm (n,) int64 slot -> input row, nf, ni,
        nnodes, maxdepth)``."""
        raise NotImplementedError

    def _build_tree(self, obj: np.ndarray):
        """Bulk-build over ``obj`` (n >= 1, 4) at once: what :meth:`_build_result` returns."""
        state = self._build_start(obj)
        self._build_steps(state, -1)
        return self._build_result(state)

    def _empty_tree(self) -> tuple[np.ndarray, np.ndarray]:
        """``(nf (1, F), ni (1, I))`` of a tree with no objects: one empty leaf."""
        raise NotImplementedError

    def _after_build(self, nnodes: int) -> None:
        """Fill ``self._ex`` and whatever else the subclass derives from a fresh tree."""

    def _worn(self) -> bool:
        """Has the tree degraded enough since its build to be rebuilt (beside dead slots)?"""
        return False

    def _build(self, obj: np.ndarray, ids: np.ndarray) -> None:
        """Build over rows ``obj`` (n, 4) carrying ``ids`` (n,) int64."""
        n = obj.shape[0]
        if n:
            built = self._build_tree(obj)
        else:
            nf, ni = self._empty_tree()
            built = obj, np.zeros(0, dtype=np.int64), nf, ni, 1, 0
        self._install(built, ids)

    def _install(self, built: tuple, ids: np.ndarray) -> None:
        """Make the tree ``built`` (what :meth:`_build_result` returns) over the objects ``ids`` (n,)
        int64 (input row order) the current one; the id table maps exactly those ids."""
        for _ in self._install_steps(built, ids):
            pass

    def _install_steps(self, built: tuple, ids: np.ndarray):
        """:meth:`_install` as a generator, one array laid out a step (a staged rebuild spreads them).
        The slot and node arrays sit in mappings with room to grow in place (:func:`_longer`)."""
        rows_, perm, nf, ni, nnodes, maxdepth = built
        n = perm.size
        where = None  # slot of each built row: the built order, or with room in every leaf
        used = n
        if self.leaf_slack and n:
            ni = ni.copy()
            where, used = _spread_leaves(ni, nnodes, self.leaf_size)
        slots = used + used // 4 + 4 * self.leaf_size + 16
        self._obj = _pages.zeros((slots, 4), reserve=3 * slots)
        step = STEP_BYTES // 32
        for k in range(0, n, step):
            e = min(k + step, n)
            if where is None:
                self._obj[k:e] = rows_[k:e]
            else:
                self._obj[where[k:e]] = rows_[k:e]
            yield
        if not n:
            yield
        self._oid = _pages.full(slots, -1, np.int64, reserve=3 * slots)
        at = np.arange(n, dtype=np.int64) if where is None else where
        self._oid[at] = ids[perm]
        self._idt.slots[ids[perm]] = at
        del at
        yield
        self._leafof = _pages.zeros(slots, np.int32, reserve=3 * slots)
        LK.assign_leaves(ni, nnodes, self._leafof)
        yield
        rows = nnodes + nnodes // 4 + 16
        self._nf = yield from _roomy_steps(nf, rows, 0.0)
        yield
        self._ni = yield from _roomy_steps(ni, rows, 0)
        self._st = np.array([nnodes, used, 0, maxdepth], dtype=np.int64)
        yield
        self._after_build(nnodes)
        self._depth0 = int(maxdepth)
        self._n = n
        self._n_build = n
        self._updates = 0
        self._dirty = np.zeros(0, dtype=np.uint8)  # per-node refit flags of a batch move
        self._scratch(maxdepth)

    def _scratch(self, maxdepth: int) -> None:
        if getattr(self, "_stack", None) is None or self._stack.size < maxdepth + 4:
            self._stack = np.empty(2 * maxdepth + 8, dtype=np.int32)
            self._levels = np.zeros(2 * maxdepth + 8, dtype=np.int64)

    def _live_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the live rows ``(obj (n, 4), ids (n,) int64)`` in slot order."""
        ns = int(self._st[NSLOTS])
        live = np.flatnonzero(self._oid[:ns] >= 0)
        return self._obj[live], self._oid[live]

    def rebuild(self) -> None:
        """Rebuild the tree from the live objects at once (ids are kept; a staged rebuild is dropped)."""
        self._stage = None
        self._build(*self._live_rows())
        self.rebuilds += 1

    def stage_rebuild(self) -> None:
        """Begin a staged rebuild (see the module): later updates build the new tree a slice at a time
        and swap it in when it is complete. Nothing changes for queries. Does nothing while one is in
        progress or the tree is empty."""
        if self._stage is not None or not self._n:
            return
        obj, ids = self._live_rows()
        shadow = copy.copy(self)  # the new tree's holder: this tree's options, its own arrays
        shadow._stage = None
        shadow._idt = IdTable(0)
        shadow._idt.slots = np.full(self._idt.slots.size, -1, dtype=np.int64)
        stage = _Stage(shadow, ids, self._idt.slots.size)
        stage.work = self._stage_work(stage, obj)
        next(stage.work)
        self._stage = stage

    def _stage_work(self, stage: _Stage, obj: np.ndarray):
        """The pieces of a staged rebuild over the snapshot rows ``obj`` (n, 4), as a generator: each
        ``send(budget)`` does one (the build's start, a slice of its splits worth ``budget`` objects (<
        0: all), one array of the new tree's layout in ``stage.shadow``)."""
        budget = yield
        state = self._build_start(obj)
        stage.held = [a for a in state if isinstance(a, np.ndarray)]
        del obj
        budget = yield
        while not self._build_steps(state, budget):
            budget = yield
        built = self._build_result(state)
        del state
        for _ in stage.shadow._install_steps(built, stage.ids):
            stage.held = []
            budget = yield

    @property
    def staging(self) -> bool:
        """Is a staged rebuild in progress?"""
        return self._stage is not None

    def _warm_more(self) -> None:
        self.rebuild()
        self.stage_rebuild()  # the staged path's kernels (build start and steps) compiled as well
        self._advance(None, -1)
        self._swap_staged(None, None)

    def _before_update(self, ids, rad: np.ndarray | None = None) -> None:
        """Before an update of ``ids`` (an int, or (M,) int64 with radii ``rad`` (M,), NaN: keep): swap
        in a completed staged build (replaying the ids touched meanwhile, less these), else flag them."""
        stage = self._stage
        if stage is None:
            return
        if stage.done:
            self._swap_staged(ids, rad)
        elif ids is not None:
            stage.touch(ids)

    def _advance(self, k: int | None, budget: int = 0) -> None:
        """Owe the staged rebuild ``k`` updates' worth of splits and pay the debt, a piece of the work,
        once it reaches a chunk (``budget`` < 0: do all the work)."""
        stage = self._stage
        if stage is None or stage.done:
            return
        if budget >= 0:
            stage.credit += self.stage_pace * k
            if stage.credit < STAGE_CHUNK:
                return
            budget = int(stage.credit)
        stage.credit = 0.0
        try:
            stage.work.send(budget)
            while budget < 0:
                stage.work.send(budget)
        except StopIteration:
            stage.done = True
            stage.work = None

    def _swap_staged(self, ids, rad: np.ndarray | None) -> None:
        """Hand the completed staged tree's arrays over and replay into it the current state of every
        id touched since it began, less ``ids`` (an int, or (M,) int64 whose radii ``rad`` are NaN to
        keep: filled in here with the current ones, as the new tree may hold an older radius)."""
        stage = self._stage
        self._stage = None
        if stage is None or not stage.done:
            return
        old_slots = self._idt.slots
        if rad is not None and np.isnan(rad).any():
            keep = np.isnan(rad)
            rad[keep] = self._obj[old_slots[ids[keep]], 3]
        touched = stage.touched
        if touched.size < old_slots.size:
            touched = grown(touched, old_slots.size, 0)
        tids = np.flatnonzero(touched[: self._idt.next_id]).astype(np.int64)
        if ids is not None:
            touched[ids] = 2  # the caller's: updated next, so not replayed if the new tree holds them
        mine = touched[tids] == 2
        was = old_slots[tids]
        n_live = self._n
        old_obj = self._obj  # the old tree's rows
        shadow = stage.shadow
        for key in TREE_ATTRS:
            if key in shadow.__dict__:
                setattr(self, key, getattr(shadow, key))
        new_slots = shadow._idt.slots
        if new_slots.size < old_slots.size:
            new_slots = grown(new_slots, old_slots.size, -1)
        self._idt.slots = new_slots
        self.rebuilds += 1
        in_new = new_slots[tids] >= 0
        keep = ~(mine & in_new & (was >= 0))
        tids, was, in_new = tids[keep], was[keep], in_new[keep]
        live = was >= 0
        rows = old_obj[was[live]]  # the current rows of the live ones
        for i in tids[in_new & ~live]:  # removed since the snapshot
            OPS.remove(int(new_slots[i]), *self._tree()[:7])
        add = ~in_new[live]
        if add.any():  # inserted since the snapshot
            self._reserve(int(add.sum()))
            for i, row in zip(tids[live][add], rows[add]):
                self.K.insert(*row.tolist(), int(i), *self._tree(), self.leaf_size)
        mv = ~add
        if mv.any():
            # every object it replays moved since the snapshot, most of them for many frames: the trees
            # that refit their bounds take them in place (one sweep) rather than reinsert them one by one
            self._apply_moves(tids[live][mv], rows[mv, :3], rows[mv, 3].copy(), np.inf)
        self._n = n_live
        if self._st[MAXDEPTH] + 4 > self._stack.size:
            self._scratch(int(self._st[MAXDEPTH]))
        self._after_swap()

    def _after_swap(self) -> None:
        """Whatever the subclass resets once a staged tree is swapped in and has taken the replay (the
        reference of its cost measure: the replayed movers' bounds have grown by their travel since the
        snapshot, and the next rebuild is due when refits double that, not the build's own cost)."""

    def _after_update(self, k: int = 1) -> None:
        """Count ``k`` updates and advance a staged build by as many; rebuild (at most once per n / 4
        updates) when dead slots exceed the live ones or the subclass says the tree is worn: at once
        below ``stage_from`` objects, else staged."""
        self._updates += k
        st = self._st
        if st[MAXDEPTH] + 4 > self._stack.size:
            self._scratch(int(st[MAXDEPTH]))
        if self._stage is not None:
            self._advance(k)
            return
        if self._updates < self._n_build // 4 + 64:
            return
        if st[GARBAGE] > max(self._n, 1024) or self._worn():
            if self._n >= self.stage_from:
                self.stage_rebuild()  # this call copies the objects; the build begins on the next
            else:
                self.rebuild()

    def _reserve(self, inserts: int) -> None:
        """Make room for ``inserts`` insertions (each may add 2 nodes and 2 leaves' slots): in place
        while the arrays' mappings have room (no frame pauses for a copy), else by copying."""
        st = self._st
        need = int(st[NSLOTS]) + 2 * self.leaf_size * inserts
        if need > self._obj.shape[0]:
            rows = max(need, 2 * self._obj.shape[0])
            self._obj = _longer(self._obj, rows, 0.0)
            self._oid = _longer(self._oid, rows, -1)
            self._leafof = _longer(self._leafof, rows, 0)
        need = int(st[NNODES]) + 2 * inserts
        if need > self._nf.shape[0]:
            rows = max(need, 2 * self._nf.shape[0])
            self._nf = _longer(self._nf, rows, 0.0)
            self._ni = _longer(self._ni, rows, 0)
            if self.ex_per_node:
                self._ex = _longer(self._ex, rows, 0.0)

    def _tree(self) -> tuple:
        """The arrays every update kernel takes, in their order."""
        return self._obj, self._oid, self._leafof, self._idt.slots, self._nf, self._ni, self._ex, self._st

    # ----------------------------------------------------------------------------------------- contract
    def __len__(self) -> int:
        return self._n

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._idt.state()

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        return self._kquery(px, py, pz, self._obj, self._oid, self._nf, self._ni, out, self._stack, self._levels,
                            self._stats)

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        self._before_update(None)
        self._reserve(1)
        i = self._idt.new_id(-1)
        if self._stage is not None:
            self._stage.touch(i)
        self.K.insert(x, y, z, r, i, *self._tree(), self.leaf_size)
        self._n += 1
        self._after_update()
        return i

    def _remove(self, i: int) -> None:
        self._before_update(i)
        OPS.remove(int(self._idt.slots[i]), *self._tree()[:7])
        self._n -= 1
        self._after_update()

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        if r != r and self._stage is not None and self._stage.done:
            r = float(self._obj[self._idt.slots[i], 3])  # the radius to keep is the current tree's
        self._before_update(i)
        s = int(self._idt.slots[i])
        if r != r:  # NaN: keep the radius
            r = float(self._obj[s, 3])
        self._reserve(1)
        OPS.move_one(s, x, y, z, r, *self._tree(), self.leaf_size, self.growth)
        self._after_update()

    def _move_many(self, ids: np.ndarray, xyz: np.ndarray, rad: np.ndarray) -> None:
        growth = self.growth
        if self._stage is not None:
            swap = self._stage.done
            rad = rad.copy()  # a swap fills in the radii to keep
            self._before_update(ids, rad)
            if swap:  # the batch starts from the snapshot's rows: refit, not reinsert (see _swap_staged)
                growth = np.inf
        self._apply_moves(ids, xyz, rad, growth)
        self._after_update(ids.size)

    def _apply_moves(self, ids: np.ndarray, xyz: np.ndarray, rad: np.ndarray, growth: float) -> None:
        """Move ``ids`` (M,) int64 to ``xyz`` (M, 3) with radii ``rad`` (M,) (NaN: keep); ``growth``: the
        move kernels' reinsert threshold (the trees that refit their bounds take any move in place
        with ``inf``; the others ignore it)."""
        # In a batch larger than an eighth of the tree, no chain is refitted per object: the leaves
        # touched are flagged and refitted, with their changed ancestors, in one bottom-up pass.
        m = ids.size
        sweep = m > int(self._st[NNODES]) // 8
        i = 0
        while i < m:
            self._reserve(min(m - i, 4096))
            if sweep and self._dirty.size < self._nf.shape[0]:
                self._dirty = grown(self._dirty, self._nf.shape[0], 0)
            i = OPS.move_batch(i, ids, xyz, rad, *self._tree(), self.leaf_size, growth, sweep, self._dirty)
        if sweep:
            OPS.refit_dirty(self._obj, self._nf, self._ni, self._ex, self._st, self._dirty)

    # ----------------------------------------------------------------------------------------- report
    def nbytes(self) -> int:
        arrays = (self._obj, self._oid, self._leafof, self._nf, self._ni, self._ex, self._idt.slots, self._dirty)
        staged = 0
        if self._stage is not None:  # the tree being built, its layout so far, its flags
            stage = self._stage
            staged = sum(a.nbytes for a in stage.held) + stage.ids.nbytes + stage.touched.nbytes
            staged += sum(getattr(stage.shadow, k).nbytes for k in ("_obj", "_oid", "_leafof", "_nf", "_ni")
                          if getattr(stage.shadow, k) is not getattr(self, k))
        return int(sum(a.nbytes for a in arrays) + staged)

    def _check_leaves(self, check_node, check_object) -> None:
        """Walk the tree for ``check_bounds`` (tests): ``check_node(node, child)`` on every child of an
        inner node, ``check_object(leaf, slot)`` on every live slot; asserts the id table, the slot ->
        leaf map and the object count, and that the refitted tree equals the stored one."""
        nn = int(self._st[NNODES])
        ni = self._ni[:nn]
        K = self.K
        live = 0
        for node in range(nn):
            ch = ni[node, K.CHILD]
            if ch >= 0:
                for c in (ch, ch + 1):
                    check_node(node, c)
                continue
            s, cnt = ni[node, K.START], ni[node, K.CNT]
            assert cnt <= ni[node, K.CAP]
            for t in range(s, s + cnt):
                live += 1
                i = self._oid[t]
                assert i >= 0 and self._idt.slots[i] == t and self._leafof[t] == node
                check_object(node, t)
        assert live == self._n
        tight = self._nf.copy()
        K.refit_all(self._obj, tight, self._ni, self._ex.copy(), self._st.copy())
        assert np.array_equal(tight[:nn], self._nf[:nn], equal_nan=True), "a node's bounds are not tight"
