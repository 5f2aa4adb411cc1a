"""The coherent index: the visible set kept from one query to the next, only what has used up its travel
budget looked at again (issue 25).

An object's state (in reach or not) can change only once the camera has travelled its slack
``| |c - p| - r |`` (triangle inequality). A build sorts the objects by radius band (radii within a factor
4), then along a Morton curve within a band (:func:`layout_order`), and puts an implicit binary tree over
the sorted slots (leaves of ``leaf`` objects; each node keeps its centres' box
and radius range, float64). A **frontier** (a cut of that tree) covers every object: a node whose members
are all out of reach (``OUT``) or all in reach (``IN``), with the travel that keeps them so, or a leaf whose
members were each tested, with the least slack among them. Each frontier node waits in a binary heap under
the reading of the camera's **odometer** (its summed step lengths) at which its budget runs out; a query
adds the step to the odometer and looks only at the nodes now due: re-bounded, opened into their children,
or their members flipped; two children that come back all out (or all in) with a budget at least half of
theirs are closed into their parent, so a far region costs one look per large slack. Every budget is
shrunk by a proved bound of its float64 rounding error (:mod:`viewer.index.rivals._coherent_kernels`), a surface
point (slack 0) is looked at on every query, and every decision on an object is the contract's exact
predicate: the answer equals brute force's.

**Jumps.** A step longer than the leaves' median reach (:data:`JUMP_SCALE` times it; a leaf's reach: its box's
diagonal plus its largest sphere's diameter) that makes more
than :data:`JUMP_DUE` heap entries due at once (a teleport, a camera cut, unrelated query points) walks the tree
from the root instead (like a BVH query, filing nothing; the detached objects keep their own budgets), and only
real changes become events; after a walk, a long step walks again and a short one builds a new frontier. A
short step walks only after **churn**: a query whose entered and left events outnumbered a quarter of its
visible set (of at least 64 objects; ``_coherent_kernels.CHURN_DIV``, ``CHURN_MIN``), where a walk finds the
set faster than the frontier's due nodes do; however many entries it makes due, it never walks otherwise.
The first query builds a frontier.

**Movers** are not re-filed: ``move_many`` writes the new centre (and radius) and *detaches* the object
from the tree (the tree's boxes stay valid bounds of its remaining members). A detached object carries its
own budget: its slack when last tested, lowered by each of its moves by how far it went (and by the change of
its radius); a query tests it exactly only once the camera's travel since has used the rest, and otherwise
reads one float64 of its row. An inserted object is a detached one; a removed one is flagged dead
(and, if visible, reported as left by the next query). When the detached objects outnumber half the live
ones (or the dead ones the live ones), the next query lays the tree out again over the live objects.

**Events.** Each query knows which objects entered and left the visible set: :meth:`last_entered` and
:meth:`last_left` (sorted ids), equal to :class:`viewer.frame.events.VisibilityTracker`'s without margin.
With a hysteresis margin (:meth:`set_margin`, the tracker's rule: in when d <= r, out only when
d > r + m, relative d > r (1 + m)) they are the events of the *in-set*: the visible set (kept by the
budgets, exact) plus the objects *held*: in, no longer visible, tested with the tracker's own rule on every
query (O(held), as the tracker; an object that left the visible set is held while within its margin). The
query's answer stays the visible set.

``stats.candidates`` counts the objects whose state the query established: those it tested with the
exact predicate (:attr:`last_tested`) plus the visible ones it carried over untested.
"""

from __future__ import annotations

import math

import numpy as np

from . import _coherent_kernels as K
from .._contract import IdTable, SphereIndex, as_bool, as_objects, as_option
from .._morton import morton_order

__all__ = ["CoherentIndex", "JUMP_DUE", "JUMP_SCALE", "layout_order"]

#: a step is a jump (walked, filing nothing) when it is longer than JUMP_SCALE times the leaves' median box
#: diagonal and more than JUMP_DUE heap entries are due; measured against walking past a count of due entries
#: at any step, in the README ("The coherent index")
JUMP_SCALE = 1.0
JUMP_DUE = 16

_ID_LIMIT = 2**31 - 1  # ids are kept as int32 beside the slots
_NO_ROWS = np.zeros(0, dtype=np.int64)  # charge_rows: the rows are a run from ``start``
_NONE = np.zeros(0, dtype=np.int64)


def layout_order(centres: np.ndarray, radii: np.ndarray, band: int) -> np.ndarray:
    """Slot order (N,) int64 of objects ``centres`` (N, 3) / ``radii`` (N,): by radius band, each band a factor
    ``2**band`` of radii wide (binary exponents; ``band`` 0: one band), then along a Morton curve within a
    band. A tree node then mostly holds radii within a factor ``2**band`` of each other, so its radius range
    bounds its members tightly (one large radius among 31 small ones would make its whole leaf reachable
    from far away)."""
    n = radii.size
    order = morton_order(centres) if n else np.empty(0, dtype=np.int64)
    if band <= 0 or n == 0:
        return order
    e = np.frexp(np.maximum(radii[order], np.finfo(np.float64).tiny))[1]  # radius in [2**(e-1), 2**e)
    return order[np.argsort((e - e.min()) // band, kind="stable")]


class CoherentIndex(SphereIndex):
    """Visible set kept across queries; only objects and groups whose travel budget ran out are looked at.

    Parameters
    ----------
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units, >= 0
    leaf : objects a tree leaf holds (the slots of one leaf are tested together when it is due)
    band : the slots are grouped by radius bands a factor ``2**band`` wide before the Morton order
        (:func:`layout_order`; 0: Morton order alone)
    margin, relative : hysteresis of :meth:`last_entered` / :meth:`last_left` (:meth:`set_margin`)
    """

    name = "coherent"
    keeps_state = True  # the visible list keeps its order from one query to the next
    update_note = "movers detached from the tree (each with its own travel budget), nothing re-filed"

    def __init__(self, centres, radii, leaf: int = 32, margin: float = 0.0, relative: bool = False,
                 band: int = 2):
        super().__init__()
        self.leaf = int(as_option(leaf, "leaf", 1, 1 << 16, integer=True))
        self.band = int(as_option(band, "band", 0, 64, integer=True))
        centres, radii = as_objects(centres, radii)
        n = radii.size
        self._idt = IdTable(n, np.int32)  # ids and slots stay below _ID_LIMIT: 4 bytes an object, not 8
        self._ne = 0
        self._nv = 0
        self._pending: list[int] = []
        self._last: tuple[float, float, float] | None = None
        self._clean = False  # nothing changed since the last query (its answer may be copied again)
        self._overflowed = False
        self._f64 = None
        self._margin = 0.0
        self._relative = False
        self._nh = 0  # held objects (in the in-set, not visible: hysteresis)
        self._held = np.empty(0, dtype=np.int64)
        self._hflag = np.empty(0, dtype=np.uint8)
        self._iev: tuple[np.ndarray, np.ndarray] | None = None  # the in-set's last events (with a margin)
        self._ibuf = np.empty(64, dtype=np.int64)  # their storage
        self._charge_tmp = np.empty((2, K.CHARGE_BLOCK))  # charge_rows' scratch
        self.set_margin(margin, relative)
        ids = np.arange(n, dtype=np.int64)
        self._layout(centres, radii, ids, np.zeros(n, dtype=bool))

    # ----------------------------------------------------------------------------- arenas
    def _alloc(self, cap: int, nn: int, hcap: int, dcap: int, lcap: int, ecap: int, keep_tree: bool) -> None:
        """Arenas (:func:`viewer.index.rivals._coherent_kernels.unpack`) of these sizes, the views set as attributes.
        Only an arena whose parts change size is allocated again (growing the event buffers never copies the
        objects), the old contents copied (the tree's parts only with ``keep_tree``)."""
        first = self._f64 is None
        old = None if first else self._views()
        was = None if first else self._sizes()
        big = first or not keep_tree or was[:4] != [cap, nn, hcap, dcap]  # f64, i32, flags
        small = first or was[2] != hcap or was[4:] != [lcap, ecap]  # i64
        if big:
            f64 = np.zeros(K.HEAD + 4 * cap + 9 * nn + hcap + 5 * dcap)
            if not first:
                f64[: K.HEAD] = self._f64[: K.HEAD]
            self._f64 = f64
            self._i32 = np.zeros(3 * cap + 3 * nn + 2 * hcap + dcap, dtype=np.int32)
            flags = np.zeros(cap, dtype=np.uint8)
            if not first:
                m = min(old["flags"].size, cap)
                flags[:m] = old["flags"][:m]
            self._flags = flags
        if small:
            i64 = np.zeros(K.N_COUNTERS + K.STACK + hcap + 2 + lcap + ecap, dtype=np.int64)
            if not first:
                i64[: K.N_COUNTERS] = old["cnt"]
            self._i64 = i64
        cnt = self._i64[: K.N_COUNTERS]
        cnt[K.L_CAP], cnt[K.L_NN], cnt[K.L_HCAP], cnt[K.L_DCAP], cnt[K.L_LCAP], cnt[K.L_ECAP] = (
            cap, nn, hcap, dcap, lcap, ecap)
        self._obj, self._nf, self._hkey, self._si, self._ni, self._hint, self._dlist, self._dobj, self._cnt, _, \
            self._lft, self._ent, self._dkey = K.unpack_views(self._f64, self._i32, self._i64)
        self._stats = self._cnt[K.S_CAND: K.S_CAND + 4]
        if first:
            return
        parts = []
        if big:
            parts += ["obj", "si", "dlist", "dobj", "dkey"] + (["nf", "hkey", "ni", "hint"] if keep_tree else [])
        if small:
            parts += ["lft", "ent"]
        for name in parts:
            a, b = old[name], getattr(self, "_" + name)
            m = min(a.shape[0], b.shape[0])
            b[:m] = a[:m]

    def _views(self) -> dict:
        names = ("obj", "nf", "hkey", "si", "ni", "hint", "dlist", "dobj", "dkey", "cnt", "lft", "ent", "flags")
        return {name: getattr(self, "_" + name) for name in names}

    def _sizes(self) -> list[int]:
        c = self._cnt
        return [int(c[K.L_CAP]), int(c[K.L_NN]), int(c[K.L_HCAP]), int(c[K.L_DCAP]), int(c[K.L_LCAP]),
                int(c[K.L_ECAP])]

    def _resize(self, **sizes: int) -> None:
        """Grow some parts (``cap``, ``dcap``, ``lcap``, ``ecap``), keeping everything."""
        cur = dict(zip(("cap", "nn", "hcap", "dcap", "lcap", "ecap"), self._sizes()))
        cur.update(sizes)
        self._alloc(keep_tree=True, **cur)

    # ----------------------------------------------------------------------------- layout
    def _layout(self, centres: np.ndarray, radii: np.ndarray, ids: np.ndarray, visible: np.ndarray) -> None:
        """Slots, tree and heap over ``centres`` (N, 3) / ``radii`` (N,) with ids ``ids`` (N,) int64; objects
        ``visible`` (N,) bool are in the visible set (the next query rebuilds the frontier)."""
        n = radii.size
        order = layout_order(centres, radii, self.band)
        leaves = max(1, -(-n // self.leaf))
        P = 1 << (leaves - 1).bit_length()
        hcap = max(128, 2 * leaves + 16)
        if self._f64 is None:
            lcap = ecap = 64
        else:
            lcap, ecap = self._sizes()[4:]
        self._alloc(max(16, n), 2 * P, hcap, 16, lcap, ecap, keep_tree=False)
        self._obj[:n, :3] = centres[order]
        self._obj[:n, 3] = radii[order]
        self._si[:n, 0] = ids[order]
        self._idt.slots[ids[order]] = np.arange(n, dtype=np.int64)
        flags = self._flags
        flags[:] = 0
        vis = np.flatnonzero(visible[order])
        flags[vis] = K.VIS
        self._si[vis, 1] = np.arange(vis.size, dtype=np.int32)
        self._si[: vis.size, 2] = self._si[vis, 0]
        self._nslots = n
        self._n_live = n
        self._dead = 0
        self._relayout_due = False
        self._movers = None  # (the contract's batch its rows were found for, its rows of _dobj: an array or a slice)
        self._dlist_dirty = False  # dead rows may still be in _dobj (until the next query's pass)
        K.build_nodes(self._obj, n, P, self.leaf, self._nf, self._ni)
        lb = self._nf[P: P + leaves]
        ext = lb[:, 3:6] - lb[:, 0:3]
        # the jump scale: a leaf's reach (its box's diagonal and its largest sphere's diameter), the median over
        # the leaves (the diagonal alone is 0 where the leaves' objects share a centre: every step was a jump)
        self._f64[6] = float(np.median(np.sqrt((ext * ext).sum(axis=1)) + 2.0 * lb[:, 7])) if n else 0.0
        cnt = self._cnt
        cnt[: K.N_COUNTERS - 16] = 0  # counters and stats; the layout stays
        cnt[K.C_NVIS] = vis.size
        self._nv = int(vis.size)
        cnt[K.L_P], cnt[K.L_LEAF], cnt[K.L_NBUILT] = P, self.leaf, n
        cnt[K.C_WALK] = cnt[K.C_CHURN] = 0
        self._built = False  # the next query walks from the root
        self._settle()

    def _relayout(self) -> None:
        """Lay the tree out again over the live objects (the detached ones attached again)."""
        s = np.flatnonzero((self._flags[: self._nslots] & K.DEAD) == 0)
        obj = self._obj[s]
        det = (self._flags[s] & K.DET) != 0
        obj[det] = self._dobj[obj[det, 0].astype(np.int64)]  # a detached object's row
        ids = self._si[s, 0].astype(np.int64)
        visible = (self._flags[s] & K.VIS) != 0
        self._layout(np.ascontiguousarray(obj[:, :3]), np.ascontiguousarray(obj[:, 3]), ids, visible)

    def _dlist_room(self, more: int) -> None:
        need = int(self._cnt[K.C_ND]) + more
        if need > self._dlist.shape[0]:
            self._resize(dcap=max(need, 2 * self._dlist.shape[0]))

    def _changed(self) -> None:
        self._clean = False
        live = self._n_live
        if int(self._cnt[K.C_ND]) > max(1024, live // 2) or self._dead > max(1024, live):
            self._relayout_due = True
        self._settle()

    # ----------------------------------------------------------------------------- the contract's hooks
    def __len__(self) -> int:
        return self._n_live

    def _id_state(self) -> tuple[int, np.ndarray]:
        return self._idt.state()

    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        if self._busy:
            return self._query_full(px, py, pz, out)
        # the common case (a frame of a flight: nothing pending, no margin, the event buffers large enough),
        # with as few Python steps as it needs: they had been nearly half of a short query's time
        nv, ne = K.query_packed(self._f64, self._i32, self._i64, self._flags, self._idt.slots, out, px, py, pz,
                                JUMP_DUE, JUMP_SCALE, False, 0)
        self._nv = nv
        self._ne = ne
        self._iev = None
        if nv > self._room or nv > out.shape[0]:
            # grown past the event buffers (the entered ids overflowed, the next query's left ones need room),
            # or past ``out`` (a retry must find this answer and its events kept)
            self._after(px, py, pz, out, ne)
        return nv

    def _query_full(self, px: float, py: float, pz: float, out: np.ndarray) -> int:
        if self._overflowed and self._clean and (px, py, pz) == self._last:
            # the same query again (a caller retrying with a larger out): copy the answer, keep the events
            nv = self._nv
            m = min(nv, out.shape[0])
            out[:m] = self._si[:m, 2]
            self._overflowed = nv > out.shape[0]
            self._settle()
            return nv
        if self._relayout_due:
            self._relayout()
        pend = self._pending
        npend = len(pend)
        if self._nv + npend > self._lft.shape[0]:
            self._resize(lcap=max(self._nv + npend, 2 * self._lft.shape[0]))
        if npend:
            self._lft[:npend] = pend
            pend.clear()
        nv, ne = K.query_packed(self._f64, self._i32, self._i64, self._flags, self._idt.slots, out, px, py, pz,
                                JUMP_DUE, JUMP_SCALE, not self._built, npend)
        self._built = True
        self._dlist_dirty = False
        self._nv = nv
        self._ne = ne
        self._iev = None
        self._after(px, py, pz, out, ne)
        return nv

    def _after(self, px: float, py: float, pz: float, out: np.ndarray, ne: int) -> None:
        """A query's follow-up where the fast path has none: the entered ids that did not fit, the room for the
        next query's left events, the held objects, the retry's state."""
        if ne > self._ent.shape[0]:
            start = self._ent.shape[0]
            self._resize(ecap=max(ne, 2 * start))
            K.collect_entered(self._flags, self._si, self._cnt, self._ent, start, self._idt.slots)
        if self._nv > self._lft.shape[0]:  # the next query may report every visible object as left
            self._resize(lcap=max(self._nv, 2 * self._lft.shape[0]))
        if self._margin > 0.0 or self._nh:
            self._hold(px, py, pz)
        self._clean = True
        self._overflowed = self._nv > out.shape[0]
        self._last = (px, py, pz)
        self._settle()

    def _settle(self) -> None:
        """Whether the next query needs the full path (``_busy``), and the visible count past which the fast
        path must follow up (``_room``: the event buffers' room)."""
        self._busy = bool(self._overflowed or self._relayout_due or self._pending or not self._built
                          or self._dlist_dirty or self._margin > 0.0 or self._nh)
        self._room = min(self._lft.shape[0], self._ent.shape[0])

    def _insert(self, x: float, y: float, z: float, r: float) -> int:
        if self._idt.next_id >= _ID_LIMIT:
            raise ValueError(f"the coherent index hands out at most {_ID_LIMIT} ids")
        if self._nslots == self._obj.shape[0]:
            self._resize(cap=2 * self._obj.shape[0])
        s = self._nslots
        self._flags[s] = K.DET
        self._dlist_room(1)
        nd = int(self._cnt[K.C_ND])
        self._dlist[nd] = s
        self._dobj[nd] = (x, y, z, r)
        self._dkey[nd] = -np.inf  # due at the next query
        self._obj[s] = (nd, 0.0, 0.0, 0.0)  # a detached slot: its row of _dobj
        self._cnt[K.C_ND] = nd + 1
        i = self._idt.new_id(s)
        self._si[s, 0] = i
        self._nslots = s + 1
        self._n_live += 1
        self._changed()
        return i

    def _remove(self, i: int) -> None:
        self._movers = None  # the next query's pass drops dead rows of _dobj: rows move
        self._dlist_dirty = True
        s = int(self._idt.slots[i])
        if self._flags[s] & K.DET:
            self._dkey[int(self._obj[s, 0])] = -np.inf  # due: the next query's pass drops the row
        self._flags[s] |= K.DEAD
        if K.drop_visible(s, self._flags, self._si, self._cnt, self._idt.slots):
            self._pending.append(i)
            self._nv -= 1
        self._idt.slots[i] = -1
        self._n_live -= 1
        self._dead += 1
        self._changed()

    def _move(self, i: int, x: float, y: float, z: float, r: float) -> None:
        self._move_many(np.array([i], dtype=np.int64), np.array([[x, y, z]]), np.array([r]))

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        cache = self._movers
        now = self._batch_now  # the contract's remembered batch when these ids are it (else None)
        if cache is not None and now is not None and cache[0] is now:
            # the same movers as the batch the rows were found for (a moving world's frame): their rows of
            # _dobj are known, so no id -> slot -> row lookups (three dependent cache misses a mover at 1e6)
            rows = cache[1]
            if isinstance(rows, slice):
                K.charge_rows(_NO_ROWS, rows.start, centres, radii, self._dobj, self._dkey, self._charge_tmp)
            else:
                K.charge_rows(rows, 0, centres, radii, self._dobj, self._dkey, self._charge_tmp)
        else:
            self._dlist_room(ids.size)
            K.move_packed(ids, centres, radii, self._idt.slots, self._f64, self._i32, self._i64, self._flags)
            self._movers = None
            if not self._dlist_dirty and now is not None:
                rows = self._obj[self._idt.slots[ids], 0].astype(np.int64)
                if rows.size and rows[-1] - rows[0] == rows.size - 1 and np.all(np.diff(rows) == 1):
                    rows = slice(int(rows[0]), int(rows[-1]) + 1)
                self._movers = (now, rows)
        self._changed()

    def _warm_more(self) -> None:
        out = np.empty(self._n_live + 1, dtype=np.int64)
        self._query(1e6, 0.0, 0.0, out)  # far away: due entries, or a walk
        self._query(1e6 + 1.0, 0.0, 0.0, out)
        K.collect_entered(self._flags, self._si, self._cnt, self._ent, 0, self._idt.slots)
        none = np.zeros(0, dtype=np.int64)
        # a moving world's repeated batch
        K.charge_rows(none, 0, np.zeros((0, 3)), np.zeros(0), self._dobj, self._dkey, self._charge_tmp)
        K.margin_events(none, 0, none, 0, none, 0, np.zeros(0, dtype=np.uint8), self._idt.slots, self._f64,
                        self._i32, self._i64, self._flags, 0.0, 0.0, 0.0, 0.0, False, none, none)

    # ----------------------------------------------------------------------------- hysteresis
    def set_margin(self, margin: float, relative: bool = False) -> None:
        """Hysteresis of the events, :class:`viewer.frame.events.VisibilityTracker`'s rule: an object enters
        the *in-set* when it becomes visible (d <= r) and leaves it only when d > r + ``margin`` (world units;
        ``relative``: d > r (1 + ``margin``)). Takes effect at the next query (held objects now beyond the
        new bound leave then; 0 turns it off). The query's answer (the visible set) does not change."""
        m = as_option(margin, "margin", 0.0)  # a number (no bool, no text), >= 0
        if m == math.inf:
            raise ValueError(f"margin must be finite and >= 0, got {margin!r}")
        rel = as_bool(relative, "relative")
        self._margin = m
        self._relative = rel
        if hasattr(self, "_built"):  # (not during the build)
            self._settle()

    @property
    def margin(self) -> float:
        """The hysteresis margin (0: none); :attr:`relative` says whether it is a fraction of each radius."""
        return self._margin

    @property
    def relative(self) -> bool:
        return self._relative

    def _hold(self, px: float, py: float, pz: float) -> None:
        """The in-set's events of this query from the visible set's (:func:`K.margin_events`)."""
        ne = self._ne
        nl = int(self._cnt[K.C_NL])
        if not (ne or nl or self._nh):
            self._iev = (_NONE, _NONE)  # nothing changed, nothing held
            return
        ent = self._ent[:ne]
        lft = self._lft[:nl]
        top = self._idt.next_id
        if self._hflag.size < top:
            grown = np.zeros(max(top, 2 * self._hflag.size, 64), dtype=np.uint8)
            grown[: self._hflag.size] = self._hflag
            self._hflag = grown
        need = self._nh + nl
        if self._held.size < need:
            held = np.empty(max(need, 2 * self._held.size, 64), dtype=np.int64)
            held[: self._nh] = self._held[: self._nh]
            self._held = held
        if self._ibuf.size < ne + need:
            self._ibuf = np.empty(max(ne + need, 2 * self._ibuf.size), dtype=np.int64)
        ient = self._ibuf[:ne]
        ileft = self._ibuf[ne:]
        nie, nil, nh = K.margin_events(ent, ent.size, lft, nl, self._held, self._nh, self._hflag, self._idt.slots,
                                       self._f64, self._i32, self._i64, self._flags, px, py, pz, self._margin,
                                       self._relative, ient, ileft)
        self._nh = int(nh)
        self._iev = (ient[:nie], ileft[:nil])

    def held_ids(self) -> np.ndarray:
        """Ids (H,) int64 of the held objects, in no particular order (a copy)."""
        return self._held[: self._nh].copy()

    @property
    def held(self) -> int:
        """Objects in the in-set and not visible (within the margin since they were last visible)."""
        return self._nh

    # ----------------------------------------------------------------------------- reading
    def last_entered(self) -> np.ndarray:
        """Ids (E,) int64, sorted, of the objects the last query found in reach that the one before did not.

        With a margin (:meth:`set_margin`), the events of the *in-set* instead, equal to
        :class:`viewer.frame.events.VisibilityTracker`'s with the same margin: an object enters when it
        becomes visible and was not held."""
        if self._iev is not None:
            return np.sort(self._iev[0])
        return np.sort(self._ent[: self._ne])

    def last_left(self) -> np.ndarray:
        """Ids (L,) int64, sorted, of the objects in reach at the query before the last that are not now
        (removed ones included).

        With a margin, the in-set's: objects beyond r + margin (relative: r (1 + margin)) that were in
        (visible, or held since they were). A removed object leaves at once (a tracker fed the caller's
        arrays would still hold one within the margin)."""
        if self._iev is not None:
            return np.sort(self._iev[1])
        return np.sort(self._lft[: int(self._cnt[K.C_NL])])

    @property
    def last_tested(self) -> int:
        """Objects the last query tested with the exact predicate."""
        return int(self._cnt[K.C_TESTED])

    @property
    def last_rebuilt(self) -> bool:
        """Whether the last query built a new frontier from the root (the first query, after a layout, or the
        first short step after a jump)."""
        return int(self._cnt[K.C_REBUILT]) == 1

    @property
    def last_walked(self) -> bool:
        """Whether the last query answered a jump by a plain walk of the tree (filing nothing)."""
        return int(self._cnt[K.C_REBUILT]) == 2

    @property
    def frontier_size(self) -> int:
        """Nodes on the frontier now."""
        return int(self._cnt[K.C_FRONT])

    @property
    def detached(self) -> int:
        """Objects detached from the tree, each with its own budget (moved or inserted since the last layout)."""
        return int(self._cnt[K.C_ND])

    def nbytes(self) -> int:
        return (self._f64.nbytes + self._i32.nbytes + self._i64.nbytes + self._flags.nbytes + self._idt.slots.nbytes
                + self._hflag.nbytes + self._held.nbytes + self._ibuf.nbytes + self._charge_tmp.nbytes)
