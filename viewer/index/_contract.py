"""The contract every index in :mod:`viewer.index` follows, checked once here for all of them.

An index holds spheres: a centre and a radius (the object's maximum view distance, world units).
The query is a point (the camera); the answer is exactly the ids of the spheres that contain it,
with the predicate, computed in float64 in this order::

    dx = px - cx; dy = py - cy; dz = pz - cz
    (dx * dx + dy * dy) + dz * dz <= r * r

Every implementation evaluates that same expression, so all of them agree with ``brute`` bit for bit,
points exactly on a sphere's surface included (an index may widen its boxes, never lose an object).

**Domain** (:mod:`viewer.domain`): coordinates (centres and query points) are finite with
``|x| <= COORD_LIMIT`` (2**100), radii finite with ``0 <= r <= RADIUS_LIMIT`` (2**100); subnormals are
inside. Every entry point refuses a value outside with ``ValueError`` naming it.

Public API (see :class:`SphereIndex`; every method validates here, then calls the index's storage hook):

- ``Cls(centres, radii, **options)``: ``centres`` (N, 3) float, ``radii`` (N,) float, N may be 0;
  ids are ``0..N-1``. An option the class does not take: ``TypeError`` (as for any Python call).
- ``query(point) -> (K,) int64`` ids, any order.
- ``query_into(point, out) -> int``: writes the ids into ``out`` ((M,) int64, preallocated) and
  returns K. When K > M the first M ids are written and :class:`QueryOverflow` is raised, carrying
  ``needed = K``: a result is never truncated silently.
- ``insert(centre, radius) -> int`` (a new id; ids are never reused), ``remove(id)``,
  ``move(id, centre, radius=None)``, ``len(index)``.
- ``query_many(points) -> (offsets, ids)``: many views at once, ``points`` (K, 3); CSR: the ids of
  view ``k`` are ``ids[offsets[k]:offsets[k + 1]]`` (``offsets`` (K + 1,) int64), in the order
  ``query_into`` gives for that point (for an index that ``keeps_state`` between queries, the order that
  the same sequence of ``query_into`` calls gives from the same state). ``query_many_into(points, offsets, out) -> int`` writes them
  into preallocated arrays (``offsets`` (K + 1,), ``out`` (M,) int64) and returns the total; when it
  exceeds M, :class:`QueryOverflow` carries the total needed (``offsets`` complete, ``out`` holding
  what fitted). An index may share work among the points (one pass over its arrays for all of them);
  the base class calls its query once per point.
- ``move_many(ids, centres, radii=None)``: ``ids`` (M,) integer array (no floats, no bools, 1-D,
  each id at most once), ``centres`` (M, 3), ``radii`` (M,) or None. **Keeping the radius:** pass
  ``radii=None`` to keep every object's radius; inside the hooks the kept radius is NaN (the one
  in-band marker: a NaN radius can never be a real one). The whole batch is checked before anything
  moves; a bad batch changes nothing. The result equals the same moves made one by one with ``move``.
- ``stats``: :class:`QueryStats` of the last query.
- ``Cls.warm_up(entry_points=None)``: compile (or load from numba's cache) every kernel the class's
  build and the named entry points (:data:`ENTRY_POINTS`: query, query_many, insert, remove, move and
  move_many; default: the :func:`warm_scope`'s, else all) run, once per process, so JIT time never lands in a
  measurement; building an index calls it. :func:`viewer.index.warm_up` does it for several classes.

**Errors**, one type per kind of mistake, raised before anything changes, the message naming the value:

- ``ValueError``: a bad value, shape or dtype (NaN, out of the domain, a negative radius, a float or
  bool id, a 2-D id array, an id repeated in a batch, mismatched lengths, a bad option value). Points,
  centres and radii are real numbers: an array of a float or integer dtype, or numbers (Python's or
  numpy's); a bool, text (``"1.5"``), bytes, a complex number, an object array or dates are refused, never
  read as numbers (:func:`_reals`, :func:`as_point`; on a query a test of the dtype or of three types, O(1)).
  A boolean option is ``True`` or ``False`` (:func:`as_bool`), a number option a number (:func:`as_option`);
- ``KeyError``: an id that was never handed out or was removed;
- ``TypeError``: an option the index does not take.

**Ids**: one scheme. An index hands out ids ``0, 1, 2, ...`` and never reuses one; it keeps one int
array ``state`` indexed by id, where ``state[id] < live_from`` marks a removed id (``live_from`` is 0
for every index but one that stores -1 for a live object), and says where it is through
:meth:`SphereIndex._id_state`. :meth:`SphereIndex._live` checks one id, :func:`check_batch` a batch.
:class:`IdTable` is the id -> slot table for indexes that keep no such array of their own.
"""

from __future__ import annotations

import math
import reprlib
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, TypeVar

import numpy as np

from ..domain import COORD_LIMIT, RADIUS_LIMIT, first_outside
from ..kernels.compile import compile_group
from . import _contract_kernels as CK
from . import _pages
from ._morton import morton_order

T = TypeVar("T")

__all__ = [
    "ENTRY_POINTS",
    "IdTable",
    "QueryOverflow",
    "QueryStats",
    "SphereIndex",
    "as_bool",
    "as_centres",
    "as_objects",
    "as_point",
    "as_radii",
    "as_radius",
    "check_batch",
    "check_id",
    "check_out",
    "grown_until_fits",
    "warm_scope",
]

#: what a warm-up can compile, in the order :func:`_exercise` runs them (the build always). ``query_many`` is a
#: batch of points (split-screen views, a server's clients, the bench): an index sharing work among them has
#: kernels of its own for it, a large share of a first run's compiling, which a run that never asks for a batch
#: (a one-view ``viewer record``) should not pay
ENTRY_POINTS = ("build", "query", "query_many", "insert", "move", "move_many", "remove")
_ALL = frozenset(ENTRY_POINTS)
#: the entry points of a warm-up that names none (every build's): set by :func:`warm_scope`, None: all
_scope: frozenset | None = None
_partly_warmed: set = set()  # classes warmed for fewer than all entry points inside a scope


def _entry_points(points: Iterable[str] | None) -> frozenset:
    """``points`` (None: the scope's, else all) checked, with the build added."""
    if points is None:
        return _scope if _scope is not None else _ALL
    if isinstance(points, str):
        points = (points,)
    want = frozenset(points) | {"build"}
    bad = sorted(want - _ALL)
    if bad:
        raise ValueError(f"unknown entry point(s) {', '.join(bad)}; choose from {', '.join(ENTRY_POINTS)}")
    return want


def is_warm(cls: type, entry_points: Iterable[str] | None = None) -> bool:
    """Whether ``cls``'s warm-up has run for ``entry_points`` (None: the :func:`warm_scope`'s, else all):
    what an index class overriding :meth:`SphereIndex.warm_up` checks, rather than its ``_warmed_up`` flag
    alone (a warm-up inside a scope covers only the scope's entry points)."""
    return bool(cls.__dict__.get("_warmed_up")) and _entry_points(entry_points) <= cls.__dict__.get("_warm_points", _ALL)


@contextmanager
def warm_scope(entry_points: Iterable[str]) -> Iterator[None]:
    """Inside the block, a warm-up that names no entry points (the one every build runs, an index
    class's ``warm_up()``) compiles only the build and ``entry_points`` (of :data:`ENTRY_POINTS`): what a
    command will run (``viewer record``: the query, and ``move_many`` in a moving world), not every
    entry point of the class. Every frame that runs only those still compiles nothing. On leaving the
    outermost scope, a class warmed for fewer than all is marked not warmed, so a later warm-up (a
    build outside any scope) completes it."""
    global _scope
    want = _entry_points(entry_points)
    outer, _scope = _scope, want if _scope is None else _scope | want
    try:
        yield
    finally:
        _scope = outer
        if outer is None:
            for cls in list(_partly_warmed):
                if cls.__dict__.get("_warm_points", _ALL) != _ALL:
                    cls._warmed_up = False
            _partly_warmed.clear()

#: the fewest points :meth:`SphereIndex._query_in_curve_order` answers as one batch: below, point by point
#: (a batch's ordering and set-up cost more than a few points share: a batch of one cost the octree more than
#: twice its plain query)
BATCH_FROM = 16
#: the most ids the segments of a shared batch walk hold at once (int32: 64 MiB); see
#: :meth:`SphereIndex._query_in_segments`
SEGMENT_IDS = 1 << 24
#: move_many remembers a checked batch of at least this many ids (a copy), to skip the id checks when it recurs
_REMEMBERED_BATCH = 64

_NEG_COORD = -COORD_LIMIT
_DOMAIN = f"|coordinate| <= 2**100 ({COORD_LIMIT:.4g})"
_RDOMAIN = f"0 <= radius <= 2**100 ({RADIUS_LIMIT:.4g})"
_OUTSIDE = "outside the domain (|coordinate| and radius <= 2**100)"  # its digits not quoted: there may be thousands


class QueryOverflow(ValueError):
    """``query_into`` found more ids than ``out`` holds.

    Attributes
    ----------
    needed : int
        The number of ids the query found; ``out`` must hold at least this many.
    """

    def __init__(self, needed: int, size: int):
        super().__init__(
            f"query found {needed} ids but out holds only {size}; "
            f"the first {size} were written, pass an array of at least {needed}"
        )
        self.needed = needed
        self.size = size


def grown_until_fits(call: Callable[[np.ndarray], T], out: np.ndarray,
                     grow: Callable[[int], np.ndarray] | None = None) -> tuple[T, np.ndarray]:
    """``call(out)`` (a ``query_into`` or ``query_many_into`` writing into ``out``), again with a larger ``out``
    while it raises :class:`QueryOverflow`: the one grow-and-retry every caller of the allocation-free
    queries uses. Returns ``(call's result, the out it fitted in)``.

    grow : ``grow(needed) -> (M,) int64`` a new array of at least ``needed`` (a caller that keeps buffers
        of the same size beside ``out`` grows them here); default a fresh array of ``max(needed, 2 * M)``
    """
    while True:
        try:
            return call(out), out
        except QueryOverflow as exc:
            out = np.empty(max(exc.needed, 2 * out.size), dtype=np.int64) if grow is None else grow(exc.needed)


@dataclass(slots=True)
class QueryStats:
    """Counters of the last query.

    candidates : objects whose distance to the point was tested
    visible : objects returned
    nodes_visited : tree nodes / grid cells / buckets entered (0 for brute force)
    max_nodes_per_level : the most nodes entered on one tree level (0 where there are no levels)
    """

    candidates: int = 0
    visible: int = 0
    nodes_visited: int = 0
    max_nodes_per_level: int = 0


# --------------------------------------------------------------------------- input checks


#: the dtype kinds of real numbers (float, signed and unsigned integer). An array of any other kind (bool, text,
#: bytes, complex, object, dates) is refused, never converted: numpy would read "1.5" as 1.5, True as 1 and a
#: complex number as its real part
_REAL_KINDS = frozenset("fiu")
_FLOAT64 = np.dtype(np.float64)
#: the types of one real number, Python's or numpy's (a bool is an int to Python: refused apart)
_REAL_TYPES = (int, float, np.integer, np.floating)


def _is_real(value) -> bool:
    """Whether ``value`` is one real number (a Python or numpy int or float, not a bool; or a 0-d array of a
    real dtype): for one value the rule that :data:`_REAL_KINDS` is for an array."""
    if isinstance(value, _REAL_TYPES):
        return not isinstance(value, bool)
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in _REAL_KINDS


def _reals(values, name: str, shape: str) -> np.ndarray:
    """``values`` as float64: an array of a real dtype (:data:`_REAL_KINDS`: one test of its dtype, whatever its
    size), or a sequence whose every item is a real number (:func:`_is_real`; numpy would read a bool among
    floats as a float, and a text of digits as a number). ``ValueError`` naming ``name`` otherwise."""
    try:
        a = np.asarray(values)
        real = (a.dtype.kind in _REAL_KINDS) if isinstance(values, np.ndarray) else (_first_unreal(values) is None)
        if real:
            return np.asarray(a, dtype=np.float64)
    except OverflowError:
        raise ValueError(f"{name} holds an integer too large for a float: {_OUTSIDE}") from None
    except (TypeError, ValueError) as exc:  # ragged rows
        raise ValueError(f"{name} must be an {shape} array of real numbers: {exc}") from None
    raise ValueError(f"{name} must be an {shape} array of real numbers (float or integer), got {_unreal(values)}")


def _first_unreal(values):
    """The first item of the sequence ``values`` (nested: rows of numbers) that is not a real number
    (:func:`_is_real`), or None when every item is one."""
    items = np.asarray(values, dtype=object).ravel().tolist()  # the items themselves, rows unpacked
    odd = {t for t in set(map(type, items)) if not issubclass(t, _REAL_TYPES) or issubclass(t, bool)}  # per type
    return next((v for v in items if type(v) in odd and not _is_real(v)), None) if odd else None


def _unreal(values) -> str:
    """What is not real numbers in ``values``, on one line for a message: an array's dtype, else the first item
    that is not a real number, else (a wrong shape) the whole, shortened."""
    if isinstance(values, np.ndarray):
        return f"dtype {values.dtype}" if values.dtype.kind not in _REAL_KINDS else f"shape {values.shape}"
    try:
        bad = _first_unreal(values)
    except (TypeError, ValueError, OverflowError):
        bad = None
    return reprlib.repr(values) if bad is None else f"{bad!r} ({type(bad).__name__})"


def as_centres(centres, n: int | None = None, name: str = "centres") -> np.ndarray:
    """Validate ``centres`` as a C-contiguous (N, 3) float64 array inside the domain."""
    a = _reals(centres, name, "(N, 3)")
    if a.ndim == 1 and a.size == 0:
        a = a.reshape(0, 3)
    if a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"{name} must have shape (N, 3), got {a.shape}")
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} rows but {n} were expected")
    a = np.ascontiguousarray(a)
    if a.size and not CK.all_within(a.reshape(-1), _NEG_COORD, COORD_LIMIT):  # one pass; NaN fails
        bad = first_outside(a, COORD_LIMIT)
        raise ValueError(f"{name}[{bad}] = {a[bad].tolist()} is outside the domain: finite, {_DOMAIN}")
    return a


def as_radii(radii, n: int | None = None, name: str = "radii") -> np.ndarray:
    """Validate ``radii`` as a contiguous (N,) float64 array inside the domain."""
    a = _reals(radii, name, "(N,)")
    if a.ndim != 1:
        raise ValueError(f"{name} must have shape (N,), got {a.shape}")
    if n is not None and a.size != n:
        raise ValueError(f"{name} has {a.size} values but {n} were expected")
    a = np.ascontiguousarray(a)
    if a.size and not CK.all_within(a, 0.0, RADIUS_LIMIT):
        bad = first_outside(a, RADIUS_LIMIT, nonnegative=True)
        raise ValueError(f"{name}[{bad}] = {a[bad]!r} is outside the domain: finite, {_RDOMAIN}")
    return a


def as_objects(centres, radii) -> tuple[np.ndarray, np.ndarray]:
    """The build's input: ``centres`` (N, 3) and ``radii`` (N,) float64, validated."""
    radii = as_radii(radii)
    return as_centres(centres, n=radii.size), radii


def as_point(point, name: str = "point") -> tuple[float, float, float]:
    """Validate a query point / centre as three floats inside the domain: a (3,) array of a real dtype
    (:data:`_REAL_KINDS`) or three real numbers (:func:`_is_real`: no bool, no text). The frame loop's two
    paths (a float64 array; a tuple of three floats) cost an identity test and three type tests."""
    try:
        if type(point) is np.ndarray:
            if point.dtype is not _FLOAT64 and point.dtype.kind not in _REAL_KINDS:
                raise TypeError
            x, y, z = point.tolist()  # one C call instead of three numpy scalar conversions
        else:
            x, y, z = point
        if type(x) is not float or type(y) is not float or type(z) is not float:
            if not (_is_real(x) and _is_real(y) and _is_real(z)):
                raise TypeError
            x = float(x)
            y = float(y)
            z = float(z)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be 3 real numbers (float or integer), got {_unreal(point)}") from None
    except OverflowError:
        raise ValueError(f"{name} holds an integer too large for a float: {_OUTSIDE}") from None
    # chained comparisons are False for NaN
    if not (_NEG_COORD <= x <= COORD_LIMIT and _NEG_COORD <= y <= COORD_LIMIT and _NEG_COORD <= z <= COORD_LIMIT):
        raise ValueError(f"{name} {(x, y, z)!r} is outside the domain: finite, {_DOMAIN}")
    return x, y, z


def as_radius(radius, name: str = "radius") -> float:
    """Validate one radius: a real number (:func:`_is_real`) inside the domain."""
    if not _is_real(radius):
        raise ValueError(f"{name} must be a real number (float or integer), got {radius!r}")
    try:
        r = float(radius)
    except OverflowError:
        raise ValueError(f"{name} is an integer too large for a float: {_OUTSIDE}") from None
    if not (0.0 <= r <= RADIUS_LIMIT):
        raise ValueError(f"{name} {r!r} is outside the domain: finite, {_RDOMAIN}")
    return r


def as_option(value, name: str, lo: float, hi: float = math.inf, integer: bool = False, lo_open: bool = False):
    """Validate an index option: a number (``integer``: a whole one, not a bool) in ``[lo, hi]``
    (``(lo, hi]`` with ``lo_open``); ``ValueError`` naming the option otherwise."""
    ok = _is_real(value) and (not integer or isinstance(value, (int, np.integer)))
    if ok:
        try:
            v = int(value) if integer else float(value)
        except OverflowError:  # an int too large for a float
            ok = False
        else:
            ok = (lo < v if lo_open else lo <= v) and v <= hi
    if not ok:
        kind = "an integer" if integer else "a number"
        left = "(" if lo_open else "["
        raise ValueError(f"{name} must be {kind} in {left}{_bound(lo)}, {_bound(hi)}], got {value!r}")
    return v


def as_bool(value, name: str) -> bool:
    """Validate a boolean index option (a switch): ``True`` or ``False``, Python's or numpy's; ``ValueError``
    naming the option otherwise. Nothing else is read as one: to Python any non-empty text is true (``'off'``
    and ``'false'`` too) and a number is not a switch. (An ``--index`` option's text is read as a bool by the
    index-spec parser before it reaches here.)"""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def as_length(value, name: str) -> float:
    """Validate a length option (a cell's edge, a level's base: world units): a number in ``(0, 2**100]``
    (up to :data:`RADIUS_LIMIT`, as a radius); ``ValueError`` naming the option and that range otherwise."""
    return as_option(value, name, 0.0, RADIUS_LIMIT, lo_open=True)


def _bound(v: float) -> str:
    """An end of an option's range for a message: the numeric domain's limit as 2**100."""
    return "2**100" if v == RADIUS_LIMIT else f"{v:g}"


def check_out(out) -> np.ndarray:
    """``out`` of ``query_into`` must be a writable contiguous (M,) int64 array."""
    if type(out) is np.ndarray and out.dtype is _INT64 and out.ndim == 1:
        flags = out.flags
        if flags.c_contiguous and flags.writeable:
            return out
        raise ValueError("out must be contiguous and writable")
    if not isinstance(out, np.ndarray) or out.dtype != np.int64 or out.ndim != 1:
        raise ValueError("out must be a 1-D numpy int64 array")
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise ValueError("out must be contiguous and writable")
    return out


_INT64 = np.dtype(np.int64)


def check_id(id) -> int:
    """An id must be an integer (not a bool, not a float); ``ValueError`` otherwise."""
    if type(id) is int:
        return id
    if isinstance(id, (bool, np.bool_)) or not isinstance(id, (int, np.integer)):
        raise ValueError(f"an id must be an integer, got {id!r}")
    return int(id)


def batch_values(centres, radii, m: int) -> tuple[np.ndarray, np.ndarray]:
    """A ``move_many`` batch's values checked: ``centres`` (m, 3) float64 and ``radii`` (m,) float64, NaN where
    the radius is kept (``radii=None``), both C-contiguous; ``ValueError`` naming the bad one."""
    c = as_centres(centres, n=m, name="move_many: centres")
    r = np.full(m, np.nan) if radii is None else as_radii(radii, n=m, name="move_many: radii")
    return c, r


def check_batch(ids, centres, radii, next_id: int, state: np.ndarray, live_from: int, seen: np.ndarray):
    """Validate a ``move_many`` batch whole; returns ``ids`` (M,) int64, ``centres`` (M, 3) float64
    and ``radii`` (M,) float64, NaN where the radius is kept (``radii=None``), all C-contiguous.

    ``next_id``, ``state``, ``live_from``: the index's id scheme (see the module docstring); ``seen``
    (>= next_id,) uint8 all-zero scratch. ``ValueError`` for a bad value, shape or dtype (a float,
    bool or 2-D id array, an id given twice); ``KeyError`` for an unknown or removed id. O(M)."""
    a = np.asarray(ids)
    if a.ndim != 1:
        raise ValueError(f"move_many: ids must be a 1-D integer array, got shape {a.shape}")
    if a.dtype.kind not in "iu":
        if a.size or a.dtype.kind not in "fO":  # an empty list arrives as float64
            raise ValueError(f"move_many: ids must be integers, got dtype {a.dtype}")
    if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise KeyError(f"move_many: unknown id {int(a.max())}")
    a = np.ascontiguousarray(a, dtype=np.int64)
    c, r = batch_values(centres, radii, a.size)
    if a.size:
        k, why = CK.first_bad_id(a, next_id, state, live_from, seen)
        if k >= 0:
            i = int(a[k])
            if why == CK.UNKNOWN:
                raise KeyError(f"move_many: unknown id {i} (ids[{k}])")
            if why == CK.REMOVED:
                raise KeyError(f"move_many: id {i} (ids[{k}]) was removed")
            raise ValueError(f"move_many: id {i} is given twice (again at ids[{k}])")
    return a, c, r


# --------------------------------------------------------------------------- base class


class SphereIndex:
    """The public API of every index: validation here, storage and search in the subclass's hooks.

    A subclass implements ``__len__`` and the hooks, which receive only validated values:

    - ``_query(px, py, pz, out) -> int``: write the ids (at most ``out.size``) and return how many
      were found, filling the counters behind ``stats`` (``self._stats`` (4,) int64, from a kernel or
      :meth:`_record`);
    - ``_insert(x, y, z, r) -> int``: store a new object, return its id;
    - ``_remove(id)``, ``_move(id, x, y, z, r)`` (``r`` NaN: keep the radius) on a live id;
    - ``_move_many(ids, centres, radii)``: ``ids`` (M,) int64 live and distinct, ``centres`` (M, 3),
      ``radii`` (M,) float64 with NaN for "keep"; the default calls ``_move`` per object;
    - ``_id_state() -> (next_id, state)``: the id scheme (module docstring), ``live_from`` a class
      attribute (0 unless said otherwise).

    ``name`` is the key in :data:`viewer.index.INDEXES`; ``updates_in_place`` says whether ``move`` is a
    true in-place update (False: remove + insert or rebuild, reported by the bench); ``keeps_state`` whether
    an answer's order depends on the queries before it (the visible set kept from one query to the next).
    """

    name: str = "?"
    updates_in_place: bool = True
    keeps_state: bool = False
    update_note: str = ""  # how moves are done, printed by the bench ("rebuilt on change", ...)
    live_from: int = 0
    # move_many's memory of the last batch it checked (its ids, int64) and of the id table's epoch then
    # (bumped by every insert and remove)
    _batch: np.ndarray | None = None
    _batch_epoch: int = -1
    _id_epoch: int = 0
    # during a move_many's _move_many: ``_batch`` when this batch is it (repeated, or just remembered), else
    # None; so an index keeping state per batch can tell "the same movers as before" by identity
    _batch_now: np.ndarray | None = None
    _moved_batch: np.ndarray | None = None  # ``_batch`` when the last move or move_many moved it, else None
    _repeated: bool = False  # the last move_many moved the same ids as the call before (last_move_repeated)
    warm_options: dict = {}  # options of the tiny index warm_up builds (small leaves: deep trees)

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this index cannot be built here (an optional peer library missing), or None."""
        return None

    def __init__(self) -> None:
        type(self).warm_up()
        # counters of the last query (candidates, visible, nodes visited, max nodes on a level),
        # written by the query kernel or by _record
        self._stats = np.zeros(4, dtype=np.int64)
        self._qbuf = np.empty(1024, dtype=np.int64)
        self._seen = np.zeros(0, dtype=np.uint8)  # check_batch's scratch, grown to next_id

    # ------------------------------------------------------------------------- warm-up
    @classmethod
    def warm_up(cls, entry_points: Iterable[str] | None = None) -> None:
        """Compile (or load from numba's on-disk cache) every kernel this class's build and
        ``entry_points`` run (of :data:`ENTRY_POINTS`; None: those of the :func:`warm_scope`, else all:
        query, insert, remove, move and move_many), on a tiny index; once per class per process, so JIT
        time never lands in a measurement. Building an index calls it; call it before timing."""
        want = _entry_points(entry_points)
        if cls.__dict__.get("_exercising") or cls.unavailable():
            return  # (the tiny indexes of its own warm-up)
        if is_warm(cls, want):
            return
        cls._warmed_up = True
        try:
            _exercise(cls, want)
        except BaseException:
            cls._warmed_up = False
            raise

    def _warm_more(self) -> None:
        """Run whatever else a tiny index must compile for its queries (a rebuild, a refit); called by
        :meth:`warm_up` when it warms the ``query`` entry point."""

    def _warm_moves(self) -> None:
        """Run whatever a tiny index must compile for large batches of moves beyond ``move_many`` on a few (a
        batch split among threads); called by :meth:`warm_up` when it warms ``move_many``."""

    def _warm_many(self) -> None:
        """Run whatever a tiny index must compile for batches of points beyond ``query_many_into`` on three
        (a batch large enough to share work); called by :meth:`warm_up` when it warms ``query_many``."""

    # ------------------------------------------------------------------------- ids
    def _id_state(self) -> tuple[int, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _live(self, id) -> int:
        """``id`` as an int if it names a live object; ``ValueError`` if it is not an integer,
        ``KeyError`` if it was never handed out or was removed."""
        i = check_id(id)
        next_id, state = self._id_state()
        if i < 0 or i >= next_id:
            raise KeyError(f"unknown id {i}")
        if state[i] < self.live_from:
            raise KeyError(f"id {i} was removed")
        return i

    # ------------------------------------------------------------------------- public API
    @property
    def stats(self) -> QueryStats:
        """:class:`QueryStats` of the last query."""
        s = self._stats
        return QueryStats(int(s[0]), int(s[1]), int(s[2]), int(s[3]))

    def _record(self, candidates: int, visible: int, nodes_visited: int = 0, max_nodes_per_level: int = 0) -> None:
        s = self._stats
        s[0] = candidates
        s[1] = visible
        s[2] = nodes_visited
        s[3] = max_nodes_per_level

    def query(self, point) -> np.ndarray:
        """Ids (K,) int64 of the spheres containing ``point`` ((3,) world units), any order."""
        k, self._qbuf = grown_until_fits(lambda out: self.query_into(point, out), self._qbuf)
        return self._qbuf[:k].copy()

    def query_into(self, point, out: np.ndarray) -> int:
        """Write the ids of the spheres containing ``point`` into ``out`` ((M,) int64) and return
        their number K; :class:`QueryOverflow` (after writing the first M) when K > M."""
        px, py, pz = as_point(point)
        check_out(out)
        k = self._query(px, py, pz, out)
        if k > out.shape[0]:
            raise QueryOverflow(k, out.shape[0])
        return k

    def query_many(self, points) -> tuple[np.ndarray, np.ndarray]:
        """Many views at once: ``points`` (K, 3) world units -> ``(offsets (K + 1,) int64, ids (T,)
        int64)``, view ``k``'s ids being ``ids[offsets[k]:offsets[k + 1]]`` in the order
        :meth:`query_into` gives for that point. ``stats`` then sums over the K points (candidates,
        visible, nodes visited) and keeps the most nodes entered on one level."""
        pts = as_centres(points, name="points")
        offsets = np.empty(pts.shape[0] + 1, dtype=np.int64)
        total, self._qbuf = grown_until_fits(lambda out: self._query_many_checked(pts, offsets, out), self._qbuf)
        return offsets, self._qbuf[:total].copy()

    def query_many_into(self, points, offsets: np.ndarray, out: np.ndarray) -> int:
        """Allocation-free :meth:`query_many`: writes ``offsets`` ((K + 1,) int64) and the ids into
        ``out`` ((M,) int64) and returns their total T; :class:`QueryOverflow` (``needed = T``, after
        writing every offset and the ids that fit) when T > M."""
        pts = as_centres(points, name="points")
        check_out(offsets)
        if offsets.shape[0] != pts.shape[0] + 1:
            raise ValueError(f"offsets must hold K + 1 = {pts.shape[0] + 1} values, got {offsets.shape[0]}")
        return self._query_many_checked(pts, offsets, check_out(out))

    def _query_many_checked(self, pts: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> int:
        total = self._query_many(pts, offsets, out)
        if total > out.shape[0]:
            raise QueryOverflow(total, out.shape[0])
        return total

    def insert(self, centre, radius) -> int:
        """Add a sphere (``centre`` (3,), ``radius`` world units); returns its new id."""
        x, y, z = as_point(centre, "centre")
        self._id_epoch += 1
        return self._insert(x, y, z, as_radius(radius))

    def remove(self, id) -> None:
        """Remove the object ``id``."""
        i = self._live(id)
        self._id_epoch += 1
        self._remove(i)

    def move(self, id, centre, radius=None) -> None:
        """Move object ``id`` to ``centre`` (3,), with a new ``radius`` or None (keep it)."""
        i = self._live(id)
        x, y, z = as_point(centre, "centre")
        self._moved_batch = None
        self._repeated = False
        self._move(i, x, y, z, math.nan if radius is None else as_radius(radius))

    def move_many(self, ids, centres, radii=None) -> None:
        """Move ``ids`` (M,) integer array to ``centres`` (M, 3), with ``radii`` (M,) or None (keep
        each radius): the same result as M calls of :meth:`move`. The batch is validated whole
        (:func:`check_batch`) before anything moves. The ids of a batch equal to the last one checked (a
        moving world's frame: the same movers), with no insert or remove since, are known to be live and
        distinct: only its values are checked then (one sequential comparison instead of a look-up per id
        in the id table, reads scattered over a large world's table on every frame)."""
        a = np.asarray(ids)
        last = self._batch
        if (last is not None and self._batch_epoch == self._id_epoch and a.dtype == last.dtype
                and a.shape == last.shape and np.array_equal(a, last)):
            ids = np.ascontiguousarray(a)
            centres, radii = batch_values(centres, radii, a.size)
            now = last
        else:
            next_id, state = self._id_state()
            if self._seen.size < next_id:
                self._seen = np.zeros(max(next_id, 2 * self._seen.size), dtype=np.uint8)
            ids, centres, radii = check_batch(a, centres, radii, next_id, state, self.live_from, self._seen)
            now = None
            if ids.size >= _REMEMBERED_BATCH:
                self._batch = now = ids.copy()
                self._batch_epoch = self._id_epoch
        self._repeated = now is not None and now is self._moved_batch
        self._moved_batch = now
        if ids.size:
            self._batch_now = now
            try:
                self._move_many(ids, centres, radii)
            finally:
                self._batch_now = None

    @property
    def last_move_repeated(self) -> bool:
        """Whether the last :meth:`move_many` moved the same ids as the one before (in the same order, with no
        insert or remove between): a moving world's frame. A caller keeping per-mover state may reuse it."""
        return self._repeated

    def _move_many(self, ids: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> None:
        for k in range(ids.size):
            self._move(int(ids[k]), *centres[k].tolist(), float(radii[k]))

    # ------------------------------------------------------------------------- hooks
    def _query(self, px: float, py: float, pz: float, out: np.ndarray) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _query_many(self, points: np.ndarray, offsets: np.ndarray, out: np.ndarray) -> int:
        """``points`` (K, 3) validated; write ``offsets`` (K + 1,) and as many ids as ``out`` holds, in
        each point's :meth:`_query` order; return the total (which may exceed ``out.size``). The base
        queries point by point; an index that can share work among the points overrides it."""
        size = out.shape[0]
        pos = 0
        cand = nodes = level = 0
        offsets[0] = 0
        for k in range(points.shape[0]):
            x, y, z = points[k].tolist()
            # past the end of ``out``, an empty view: the count still comes back
            n = self._query(x, y, z, out[min(pos, size):])
            s = self._stats
            cand += int(s[0])
            nodes += int(s[2])
            level = max(level, int(s[3]))
            pos += n
            offsets[k + 1] = pos
        self._record(cand, pos, nodes, level)
        return pos

    def _query_in_curve_order(self, points: np.ndarray, offsets: np.ndarray, out: np.ndarray, run) -> int:
        """A ``_query_many`` for an index whose batch kernel answers the points one after another in one
        call: the points go in Morton order (so consecutive ones share the upper levels, cells and rows
        of the structure, warm in cache), then the answers are copied into view order.

        ``run(points, order, scratch, start, count, stats) -> total`` answers ``points[order[j]]`` for
        j = 0, 1, ... into ``scratch`` (as many ids as it holds), writing each view's ``start`` and
        ``count`` and the summed counters into ``stats``; it runs again on a larger scratch when the
        total did not fit."""
        k = points.shape[0]
        if k < BATCH_FROM:  # the batch's fixed cost (ordering, scratch, one more call) beats a few calls
            return SphereIndex._query_many(self, points, offsets, out)
        order = morton_order(points)
        start = np.empty(k, dtype=np.int64)
        count = np.empty(k, dtype=np.int64)
        scratch = self.__dict__.get("_batch_scratch")
        if scratch is None:
            scratch = self._batch_scratch = np.empty(4096, dtype=np.int64)
        while True:
            total = run(points, order, scratch, start, count, self._stats)
            if total <= scratch.shape[0]:
                break
            scratch = self._batch_scratch = np.empty(max(total, 2 * scratch.shape[0]), dtype=np.int64)
        return CK.scatter_views(scratch, start, count, offsets, out)

    def _query_in_segments(self, points: np.ndarray, offsets: np.ndarray, out: np.ndarray, order: np.ndarray,
                           walk) -> int:
        """A ``_query_many`` for an index whose batch kernel walks groups of points together and files each
        point's ids in a segment of ``span`` ids (one point's answer cannot be counted before the walk).

        ``walk(order, seg, span, start, count, acc) -> total`` answers ``points[order[j]]`` into
        ``seg[j * span:]``, writing each view's ``start`` and ``count`` and the counters into ``acc``; it
        returns -(at least the most ids one point found) when that exceeded ``span``. The segments a walk
        holds at once are bounded by :data:`SEGMENT_IDS`: a batch whose K x span would not fit is walked in
        chunks, each chunk's answers packed after the last's, so memory follows the true answer, never K
        times the largest one. ``span`` (kept in ``_shared_span``) grows to the largest answer seen."""
        k = points.shape[0]
        start = np.empty(k, dtype=np.int64)
        count = np.empty(k, dtype=np.int64)
        acc = np.zeros(4, dtype=np.int64)
        sums = np.zeros(4, dtype=np.int64)
        packed = np.empty(0, dtype=np.int32)
        end = c0 = 0
        while c0 < k:
            span = self._shared_span
            chunk = min(k - c0, max(1, SEGMENT_IDS // span))
            if self._shared_seg.size < chunk * span:
                self._shared_seg = np.empty(chunk * span, dtype=np.int32)
            part = order[c0:c0 + chunk]
            total = walk(part, self._shared_seg, span, start, count, acc)
            if total < 0:
                self._shared_span = max(-total + (-total >> 2), span + 1)  # 25% to spare: one more run, not several
                continue
            sums[:3] += acc[:3]
            sums[3] = max(sums[3], acc[3])
            if chunk == k:  # the whole batch in one walk: read straight from its segments
                self._stats[:] = sums
                return CK.scatter_views(self._shared_seg, start, count, offsets, out)
            if packed.size < end + total:
                packed = np.resize(packed, max(end + total, 2 * packed.size))
            end = CK.pack_segments(self._shared_seg, part, start, count, packed, end)
            c0 += chunk
        self._stats[:] = sums
        return CK.scatter_views(packed, start, count, offsets, out)

    def _insert(self, x: float, y: float, z: float, r: float) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _remove(self, id: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _move(self, id: int, x: float, y: float, z: float, r: float) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __len__(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def nbytes(self) -> int:
        """Bytes held by the index's arrays (for memory-per-object reports)."""
        total = 0
        for v in vars(self).values():
            if isinstance(v, np.ndarray):
                total += v.nbytes
        return total

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} n={len(self)}>"


def _exercise(cls: type[SphereIndex], entry_points: Iterable[str] | None = None) -> None:
    """Run the build and the public operations ``entry_points`` names (None: the :func:`warm_scope`'s,
    else all of :data:`ENTRY_POINTS`) of ``cls`` on a tiny index (and an empty one), so each kernel they
    run is compiled or loaded with the argument types real use passes. Compilations are reported under
    the class's name (:func:`viewer.kernels.compile.compile_group`)."""
    want = _entry_points(entry_points)
    cls._exercising = True
    try:
        with compile_group(cls.name):
            _exercise_points(cls, want)
    finally:
        cls._exercising = False
    cls._warm_points = want | cls.__dict__.get("_warm_points", frozenset())
    if want != _ALL:
        _partly_warmed.add(cls)


def _exercise_points(cls: type[SphereIndex], want: frozenset) -> None:
    rng = np.random.default_rng(0)
    c = rng.uniform(-10, 10, (64, 3))
    r = rng.uniform(0.5, 3, 64)
    r[0] = 50.0
    out = np.empty(128, dtype=np.int64)
    query = "query" in want
    empty = cls(np.zeros((0, 3)), np.zeros(0), **cls.warm_options)
    if query:
        empty.query_into((0.0, 0.0, 0.0), out)
    ix = cls(c, r, **cls.warm_options)
    if query:
        ix.query_into((0.0, 0.0, 0.0), out)
    i, j = 5, 6  # without inserts, two of the tiny index's objects
    if "insert" in want:
        i = ix.insert((1.0, 2.0, 3.0), 1.0)
        j = ix.insert((1.0, 2.0, 3.0), 100.0)
        ix.insert((300.0, -300.0, 300.0), 0.5)
    if "move" in want:
        ix.move(i, (2.0, 2.0, 2.0))
        ix.move(i, (2.0, 2.0, 2.0), 80.0)
        ix.move(j, (-200.0, 5.0, 5.0), 1.0)
    if "move_many" in want:
        ix.move_many(np.arange(1, 4), c[1:4] + 1.0)  # a small batch
        ix.move_many(np.arange(1, 4), c[1:4], r[1:4])
        ix.move_many(np.arange(1, 64), c[1:] + 0.5)  # a batch of most objects (a bulk pass, where one exists)
        ix._warm_moves()
        if "move" not in want:  # far and growing, as the single moves do (roots wrapped, objects relinked)
            ix.move_many(np.array([i, j]), np.array([[2.0, 2.0, 2.0], [-200.0, 5.0, 5.0]]), np.array([80.0, 1.0]))
    if "remove" in want:
        ix.remove(i)
        ix.remove(1)
    if query:
        ix._warm_more()
        ix.query_into((0.0, 0.0, 0.0), out)
    if "query_many" in want:
        ix._warm_many()
        ix.query_many_into(c[:3], np.empty(4, dtype=np.int64), out)  # a batch kernel, where one exists


class IdTable:
    """Maps ids (never reused) to slots; ``slot == -1`` marks a removed id: the ``state`` array of the
    id scheme for indexes that keep no per-id array of their own.

    ``slots``: (capacity,) int64 (or ``dtype``: an index whose ids and slots stay below 2**31 may keep int32,
    half the bytes), grown by doubling. ``next_id`` is the id ``insert`` hands out next.
    """

    def __init__(self, n: int, dtype=np.int64):
        self.slots = np.full(max(16, n), -1, dtype=dtype)
        self.slots[:n] = np.arange(n, dtype=dtype)
        self.next_id = n

    def new_id(self, slot: int) -> int:
        i = self.next_id
        if i >= self.slots.size:
            self.slots = grown(self.slots, 2 * self.slots.size, -1)
        self.slots[i] = slot
        self.next_id = i + 1
        return i

    def state(self) -> tuple[int, np.ndarray]:
        """``(next_id, slots)``: what an index's ``_id_state`` returns."""
        return self.next_id, self.slots


def grown(a: np.ndarray, rows: int, fill) -> np.ndarray:
    """A copy of ``a`` with ``rows`` rows (>= ``a.shape[0]``), the new rows set to ``fill`` (on huge pages
    from 2 MiB up: :mod:`viewer.index._pages`)."""
    g = _pages.zeros((rows,) + a.shape[1:], a.dtype)
    g[: a.shape[0]] = a
    g[a.shape[0] :] = fill
    return g
