"""Visibility events: which objects entered and left view distance since the last frame. No GL.

Engines tell a program when an object starts or stops being relevant (Unity's CullingGroup state
changes, Godot's and bevy's visibility-range margins, LOD hysteresis in three.js) instead of handing it
the whole visible set every frame. :class:`VisibilityTracker` does that on top of any index's query::

    tracker = VisibilityTracker(n, margin=5.0)          # hysteresis: leave only beyond r + 5
    tracker.subscribe(on_enter=spawn_sounds, on_leave=despawn_sounds)
    for frame in ...:
        k = index.query_into(camera, ids)
        entered, left = tracker.update(ids, k, camera, centres, radii)

The rule, per object with view radius r at distance d from the point:

- without a margin, it is *in* exactly while d <= r (the query's answer): the events replayed from the
  start reconstruct the visible set of every frame;
- with a margin m, it enters when d <= r (it becomes visible) and leaves only when d > r + m
  (``relative``: d > r (1 + m)), so an object hovering on its boundary does not flicker in and out.
  The in-set is then a superset of the visible set.
- with visibility ranges (``update(..., ranges=)``, :mod:`viewer.frame.ranges`) the same at the near
  edges: it enters when in range and leaves only when d < begin - m (``relative``: begin (1 - m)) or, an
  HLOD child, when its parent's distance reaches the parent's limit + m (limit (1 + m)).

Cost per frame: O(visible + in), no pass over all N objects: a per-object "in" flag (1 byte each) and a
compact list of the in-objects; only in-objects the query no longer returns have their distance
measured (against the caller's ``centres`` / ``radii``: keep them current when objects move, e.g.
:attr:`viewer.frame.motion.MotionState.centres`).
"""

from __future__ import annotations

import argparse
import math
from typing import Callable

import numpy as np

from ..index import as_bool
from . import _events_kernels as K

__all__ = ["VisibilityTracker", "parse_margin", "format_margin", "warm"]

Callback = Callable[[np.ndarray], object]
_NONE_F = np.zeros(0, dtype=np.float64)
_NONE_I = np.zeros(0, dtype=np.int64)


def warm() -> None:
    """Compile the events kernel (before anything timed)."""
    K.warm()


def parse_margin(text: str) -> tuple[float, bool]:
    """``"5"`` -> (5.0, False): 5 world units beyond each view radius; ``"10%"`` -> (0.1, True): 10% of
    each view radius. ``"0"`` turns hysteresis off. For argparse (``type=parse_margin``)."""
    s = str(text).strip()
    relative = s.endswith("%")
    try:
        v = float(s[:-1] if relative else s)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a margin in world units (e.g. 5) or a percentage of each view radius (e.g. 10%), got {text!r}"
        ) from None
    if not (math.isfinite(v) and v >= 0.0):
        raise argparse.ArgumentTypeError(f"the margin must be a finite number >= 0, got {text!r}")
    return (v / 100.0, True) if relative else (v, False)


def format_margin(margin: float, relative: bool) -> str:
    """The inverse of :func:`parse_margin`: ``"5"``, ``"10%"`` or ``"off"``."""
    if margin <= 0.0:
        return "off"
    return f"{margin * 100.0:g}%" if relative else f"{margin:g}"


class VisibilityTracker:
    """Per-frame entered / left events over a query's visible ids, with optional hysteresis.

    Parameters
    ----------
    n_capacity : ids 0 .. n_capacity - 1 can be tracked (grows when a larger id appears)
    margin : hysteresis margin: world units beyond each view radius (0: none), or with ``relative``
        a fraction of each view radius
    relative : read ``margin`` as a fraction of the radius

    Attributes
    ----------
    entered, left : (E,) / (L,) int64, sorted: the last update's events (read-only views, valid until
        the next update)
    frames : updates so far; total_entered, total_left : event counts since the last reset
    """

    def __init__(self, n_capacity: int, margin: float = 0.0, relative: bool = False):
        self._flag = np.zeros(max(16, int(n_capacity)), dtype=np.uint8)
        self._inside = np.empty(1024, dtype=np.int64)
        self._n_in = 0
        self._ent = np.empty(1024, dtype=np.int64)
        self._left = np.empty(1024, dtype=np.int64)
        self._ne = 0
        self._nl = 0
        self.margin = 0.0
        self.relative = False
        self.set_margin(margin, relative)
        self._on_enter: list[Callback] = []
        self._on_leave: list[Callback] = []
        self.frames = 0
        self.total_entered = 0
        self.total_left = 0

    # ----------------------------------------------------------------------------- settings
    def set_margin(self, margin: float, relative: bool = False) -> None:
        """Change the hysteresis (takes effect at the next update: objects now beyond the new bound leave then)."""
        m = float(margin)
        if not (math.isfinite(m) and m >= 0.0):
            raise ValueError(f"margin must be finite and >= 0, got {margin!r}")
        rel = as_bool(relative, "relative")  # True or False only: to bool(), the text 'off' is true
        self.margin, self.relative = m, rel  # both checked first: a refused change changes nothing

    @property
    def hysteresis(self) -> str:
        """The margin as text: ``"off"``, ``"5"`` (world units) or ``"10%"``."""
        return format_margin(self.margin, self.relative)

    def subscribe(self, on_enter: Callback | None = None, on_leave: Callback | None = None) -> Callable[[], None]:
        """Call ``on_enter(ids)`` / ``on_leave(ids)`` after each update that has such events (``ids``: (E,)
        int64 sorted, read-only, valid until the next update: copy to keep). Returns a function that
        unsubscribes both."""
        if on_enter is not None:
            self._on_enter.append(on_enter)
        if on_leave is not None:
            self._on_leave.append(on_leave)

        def unsubscribe() -> None:
            if on_enter is not None and on_enter in self._on_enter:
                self._on_enter.remove(on_enter)
            if on_leave is not None and on_leave in self._on_leave:
                self._on_leave.remove(on_leave)

        return unsubscribe

    def reset(self) -> None:
        """Forget the in-set (the next update reports everything visible as entered); O(in)."""
        self._flag[self._inside[: self._n_in]] = 0
        self._n_in = 0
        self._ne = self._nl = 0
        self.frames = 0
        self.total_entered = self.total_left = 0

    # ----------------------------------------------------------------------------- the frame
    def update(self, visible: np.ndarray, k: int | None, point, centres: np.ndarray,
               radii: np.ndarray, *, ranges=None) -> tuple[np.ndarray, np.ndarray]:
        """Take this frame's query answer and return ``(entered, left)``, sorted int64 arrays.

        visible : (>= k,) int64, distinct ids (e.g. the ``out`` of ``query_into``); k : how many (None: all)
        point : (3,) the query point, world units
        centres : (N, 3) float64, radii : (N,) float64: the objects now (only read for in-objects the
            query no longer returns, and only with a margin)
        ranges : a :class:`viewer.frame.ranges.Ranges` (begin distances, HLOD parents), or None: with a
            margin an in-object also stays while d >= begin - margin and, an HLOD child, while its parent's
            distance is below the parent's limit + margin (relative: begin (1 - margin), limit (1 + margin))
        """
        vis = visible if k is None else visible[:k]
        k = int(vis.shape[0])
        if k and vis.dtype != np.int64:
            vis = vis.astype(np.int64)
        if k:
            top = int(vis.max())
            if top >= self._flag.size:
                grown = np.zeros(max(top + 1, 2 * self._flag.size), dtype=np.uint8)
                grown[: self._flag.size] = self._flag
                self._flag = grown
        need = self._n_in + k
        if need > self._inside.size:
            self._inside = _grown(self._inside, self._n_in, need)
        if k > self._ent.size:
            self._ent = np.empty(max(k, 2 * self._ent.size), dtype=np.int64)
        if self._n_in > self._left.size:
            self._left = np.empty(max(self._n_in, 2 * self._left.size), dtype=np.int64)
        px, py, pz = (float(v) for v in point)
        if ranges is not None and ranges.active:
            rb, rp, rl = ranges.begin, ranges.parent, ranges.limit
        else:
            rb, rp, rl = _NONE_F, _NONE_I, _NONE_F
        ne, nl, n_in = K.update_events(vis, k, self._flag, self._inside, self._n_in, centres, radii, px, py, pz,
                                       self.margin, self.relative, self._ent, self._left, rb, rp, rl)
        self._ne, self._nl, self._n_in = int(ne), int(nl), int(n_in)
        self._ent[: self._ne].sort()
        self._left[: self._nl].sort()
        self.frames += 1
        self.total_entered += self._ne
        self.total_left += self._nl
        ent, left = self.entered, self.left
        if self._ne:
            for cb in list(self._on_enter):
                cb(ent)
        if self._nl:
            for cb in list(self._on_leave):
                cb(left)
        return ent, left

    # ----------------------------------------------------------------------------- reading
    @property
    def entered(self) -> np.ndarray:
        return _readonly(self._ent[: self._ne])

    @property
    def left(self) -> np.ndarray:
        return _readonly(self._left[: self._nl])

    @property
    def n_entered(self) -> int:
        return self._ne

    @property
    def n_left(self) -> int:
        return self._nl

    def inside(self) -> np.ndarray:
        """The ids in now, (I,) int64 in no particular order (a read-only view, valid until the next update)."""
        return _readonly(self._inside[: self._n_in])

    def __len__(self) -> int:
        """How many objects are in."""
        return self._n_in

    def is_in(self, id: int) -> bool:
        i = int(id)
        return 0 <= i < self._flag.size and self._flag[i] == 1

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self._flag, self._inside, self._ent, self._left))

    def __repr__(self) -> str:
        return f"<VisibilityTracker in={self._n_in} hysteresis={self.hysteresis} frames={self.frames}>"


def _grown(a: np.ndarray, keep: int, need: int) -> np.ndarray:
    g = np.empty(max(need, 2 * a.size), dtype=a.dtype)
    g[:keep] = a[:keep]
    return g


def _readonly(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v
