"""Visibility ranges, LOD bands and HLOD at run time (issue 24), GL-free.

A scene may give each object a begin distance (``Scene.begin``), LOD switch distances (``Scene.lod``) and
a visibility parent (``Scene.parent``, an HLOD proxy). :class:`Ranges` holds them for one pipeline and
runs their per-frame passes, each over the frame's answer, never over all N objects:

- **range** (inside the ``query`` stage): the index answers the end sphere (``d <= r``) as always; then
  :func:`~._ranges_kernels.filter_ranges` keeps, in place, the objects with ``begin**2 <= d2``, and drops
  a child while its parent is not "too near to be shown" (below). Exact: float64 squares with the index
  contract's association ``(dx*dx + dy*dy) + dz*dz``, so an object exactly on its begin surface is in,
  exactly as on its end surface. ``visible`` counts the objects in range.
- **HLOD**: object i with parent p is shown while ``dp < limit[p]``, ``dp`` the camera's distance to the
  parent's centre and ``limit[p] = begin[p] (1 + fade)`` (``fade``: the pipeline's fade fraction); the
  parent, by its own range, from ``begin[p]`` on. So with ``fade = 0`` exactly one of them is shown at
  any distance (no hole, no double); with ``fade > 0`` both are drawn in the cross-fade window
  ``begin[p] <= dp < limit[p]``, the child fading out and the parent fading in over it. A child whose
  own range ends before ``limit[p]`` leaves a hole: that is the data's doing (``scene info`` shows it).
  Only the immediate parent counts (Godot's ``visibility_parent``).
- **fade** (in the ``gather`` stage): the gather's far-edge fade, lowered at the near edge: an object with
  a begin fades in over ``[b, b (1 + fade))``, an HLOD child fades out over its parent's window.
- **lod** (the ``lod`` stage): each drawn object's band, ``#{l : lod[i, l]**2 <= d2}`` (0 the finest;
  a switch distance belongs to the coarser band), the drawn objects per band (columns ``band0`` ..
  ``band3``, the last counting band 3 and coarser), and band changes since the last frame
  (:attr:`Ranges.changes`: id, previous band, current band; -1 = not drawn), like Unity's
  ``CullingGroup.onStateChanged``.

A global range scale (:meth:`Ranges.set_scale`, the pipeline's radius scale) scales begin, the LOD
switches and the HLOD limits with the end radii.
"""

from __future__ import annotations

import numpy as np

from . import _ranges_kernels as K

__all__ = ["BAND_COLUMNS", "BAND_PALETTE", "Ranges", "brute_bands", "brute_in_range", "warm"]

#: the band-count columns of a frame's row: band0, band1, band2, then band 3 and coarser
BAND_COLUMNS: tuple[str, ...] = ("band0", "band1", "band2", "band3")

#: RGBA colours of LOD bands (the ``band`` colour mode), band 0 first; coarser bands cycle
BAND_PALETTE = np.array([(40, 200, 80, 255), (250, 210, 40, 255), (245, 120, 30, 255), (220, 40, 40, 255),
                         (150, 60, 200, 255), (60, 120, 230, 255), (120, 120, 120, 255), (240, 240, 240, 255)],
                        dtype=np.uint8)

_NONE_F = np.zeros(0, dtype=np.float64)
_NONE_I = np.zeros(0, dtype=np.int64)


def warm() -> None:
    """Compile the kernels (before anything timed)."""
    K.warm()


class Ranges:
    """The begin distances, LOD switches and visibility parents of one pipeline's objects, and the
    per-frame state of their bands.

    scene : anything with ``begin`` (N,) / ``lod`` (N, L) float64 / ``parent`` (N,) int64, each or None
    centres : (N, 3) float64, world units: the objects' centres now (the array the pipeline moves in place)
    fade : the cross-fade fraction (the pipeline's ``fade``)

    Attributes: ``active`` (a begin or a parent: the range filter runs), ``has_lod``, ``band_counts``
    ((L + 1,) int64, the last frame's drawn objects per band), ``bands`` (the last frame's band of each
    drawn object, in draw order), ``is_proxy`` ((N,) bool: some object's parent).
    """

    def __init__(self, scene, centres: np.ndarray, fade: float = 0.0):
        self._centres = centres
        n = centres.shape[0]
        b = getattr(scene, "begin", None)
        lod = getattr(scene, "lod", None)
        par = getattr(scene, "parent", None)
        self.n = int(n)
        self.world_begin = _NONE_F if b is None or not np.any(b) else np.ascontiguousarray(b, dtype=np.float64)
        self.world_lod = None if lod is None else np.ascontiguousarray(lod, dtype=np.float64)
        has_parent = par is not None and bool(np.any(np.asarray(par) >= 0))
        self.parent = np.ascontiguousarray(par, dtype=np.int64) if has_parent else _NONE_I
        self.is_proxy = np.zeros(self.n, dtype=bool)
        if has_parent:
            self.is_proxy[self.parent[self.parent >= 0]] = True
            if self.world_begin.size == 0:  # parents without begins: every child is hidden (dp < 0 never holds)
                self.world_begin = np.zeros(self.n)
        self.active = self.world_begin.size > 0 or has_parent
        self.has_lod = self.world_lod is not None
        self.has_proxies = has_parent
        self.scale = 1.0
        self.fade = max(0.0, float(fade))
        self.begin = self.world_begin
        self.lod = self.world_lod
        self.limit = _NONE_F
        self._update_limit()
        nb = 1 if self.world_lod is None else self.world_lod.shape[1] + 1
        self.band_counts = np.zeros(nb, dtype=np.int64)
        self._bands = np.zeros(1024, dtype=np.int8)
        self._state = np.full(self.n if self.has_lod else 0, -1, dtype=np.int8)
        self._prev = np.zeros(1024, dtype=np.int64)
        self._n_prev = 0
        self._ev = (np.zeros(2048, dtype=np.int64), np.zeros(2048, dtype=np.int8), np.zeros(2048, dtype=np.int8))
        self._ne = 0
        self._m = 0

    # ----------------------------------------------------------------------------- settings
    def _update_limit(self) -> None:
        if self.parent.size:
            self.limit = self.begin * (1.0 + self.fade) if self.fade > 0.0 else self.begin
        else:
            self.limit = _NONE_F

    def set_fade(self, fade: float) -> None:
        """The cross-fade fraction (the HLOD window and the begin-edge fade-in)."""
        self.fade = max(0.0, float(fade))
        self._update_limit()

    def set_scale(self, scale: float) -> None:
        """Scale begin, the LOD switches and the HLOD limits by ``scale`` (the pipeline's radius scale)."""
        self.scale = float(scale)
        one = self.scale == 1.0
        self.begin = self.world_begin if one or not self.world_begin.size else self.world_begin * self.scale
        self.lod = self.world_lod if one or self.world_lod is None else self.world_lod * self.scale
        self._update_limit()

    def reset(self) -> None:
        """Forget the last frame's bands (the next frame reports every drawn object as a change from -1)."""
        if self.has_lod:
            self._state[self._prev[: self._n_prev]] = -1
        self._n_prev = 0
        self._ne = 0

    # ----------------------------------------------------------------------------- the frame
    def filter(self, ids: np.ndarray, k: int, point: np.ndarray) -> int:
        """Keep the in-range objects of ``ids[:k]`` (the end sphere's answer at ``point`` (3,) float64), in
        place and in order; returns the count (``k`` unchanged when no begin and no parent)."""
        if not self.active or k == 0:
            return k
        return int(K.filter_ranges(ids, k, self._centres, self.begin, self.parent, self.limit,
                                   float(point[0]), float(point[1]), float(point[2])))

    def fades(self, ids: np.ndarray, m: int, point: np.ndarray, inst_f: np.ndarray) -> None:
        """Lower the records' fade at the near edges (see the module docstring)."""
        if self.active and m:
            K.range_fades(ids, m, self._centres, self.begin, self.parent, self.limit, self.fade,
                          float(point[0]), float(point[1]), float(point[2]), inst_f)

    def select_bands(self, ids: np.ndarray, m: int, point: np.ndarray) -> None:
        """The lod stage: bands of ``ids[:m]`` (the drawn objects, in draw order), counts and changes."""
        if not self.has_lod:
            self.band_counts[0] = m
            self._m = m
            return
        if m > self._bands.size:
            self._bands = np.zeros(max(m, 2 * self._bands.size), dtype=np.int8)
        if m > self._prev.size:
            grown = np.zeros(max(m, 2 * self._prev.size), dtype=np.int64)
            grown[: self._n_prev] = self._prev[: self._n_prev]
            self._prev = grown
        if m + self._n_prev > self._ev[0].size:
            s = 2 * (m + self._n_prev)
            self._ev = (np.zeros(s, dtype=np.int64), np.zeros(s, dtype=np.int8), np.zeros(s, dtype=np.int8))
        K.lod_bands(ids, m, self._centres, self.lod, float(point[0]), float(point[1]), float(point[2]),
                    self._bands, self.band_counts)
        ne, n_prev = K.band_events(ids, m, self._bands, self._state, self._prev, self._n_prev, *self._ev)
        self._ne, self._n_prev, self._m = int(ne), int(n_prev), m

    @property
    def bands(self) -> np.ndarray:
        """(drawn,) int8: the last frame's band of each drawn object, in draw order (zeros without LOD)."""
        if not self.has_lod:
            return np.zeros(self._m, dtype=np.int8)
        return self._bands[: self._m]

    @property
    def changes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The last frame's band changes: ``(ids (E,) int64, previous (E,) int8, current (E,) int8)``, -1
        meaning not drawn (views, valid until the next frame)."""
        return tuple(a[: self._ne] for a in self._ev)

    def counts(self, drawn: np.ndarray) -> dict[str, int]:
        """The frame's columns: ``band0`` .. ``band3`` (band 3 and coarser), ``band_changes``, ``proxies``
        (drawn HLOD proxies) for the drawn ids ``drawn``."""
        c = self.band_counts
        out = {name: int(c[i]) if i < c.size else 0 for i, name in enumerate(BAND_COLUMNS)}
        if c.size > len(BAND_COLUMNS):
            out[BAND_COLUMNS[-1]] = int(c[len(BAND_COLUMNS) - 1:].sum())
        out["band_changes"] = self._ne
        out["proxies"] = int(np.count_nonzero(self.is_proxy[drawn])) if self.has_proxies else 0
        return out


# --------------------------------------------------------------------------- brute force (the oracles)


def brute_in_range(centres: np.ndarray, radii: np.ndarray, begin, parent, point, fade: float = 0.0) -> np.ndarray:
    """(N,) bool: the objects in range at ``point``, by the rules of the module docstring, over every object
    (the tests' oracle). begin / parent: arrays or None."""
    c = np.asarray(centres, dtype=np.float64)
    p = np.asarray(point, dtype=np.float64)
    d = c - p
    d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    ok = d2 <= radii * radii
    b = np.zeros(len(c)) if begin is None else np.asarray(begin, dtype=np.float64)
    ok &= b * b <= d2
    if parent is not None:
        par = np.asarray(parent)
        has = par >= 0
        lim = b * (1.0 + fade) if fade > 0 else b
        t = lim[par[has]]
        ok[has] &= d2[par[has]] < t * t
    return ok


def brute_bands(centres: np.ndarray, lod: np.ndarray, point) -> np.ndarray:
    """(N,) int: every object's LOD band at ``point``: ``#{l : lod[i, l]**2 <= d2}`` (the oracle)."""
    d = np.asarray(centres, dtype=np.float64) - np.asarray(point, dtype=np.float64)
    d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    return np.sum(lod * lod <= d2[:, None], axis=1)
