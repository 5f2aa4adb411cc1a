"""Automatic HLOD: group a scene's objects by grid cell and append one proxy object per group that stands
in for the group beyond a switch distance (Godot's ``visibility_parent``, Unreal's HLOD layers).

The rule (the recipe's ``[hlod]`` table, :data:`HLOD_FIELDS`; :func:`add_hlod`):

- **Groups.** The world box is cut into cubic cells of edge ``cell`` from its low corner (``axes = "xz"``:
  into columns, for a flat world); the objects whose
  centre falls in one cell form a group (only objects with no parent of their own, a begin of 0 and an
  end of at least ``min_end``: an object with its own near range keeps it, and a small object that culls
  on its own long before the switch is not made to reach it). A cell with fewer than ``min_children`` such objects makes no
  proxy. At 1e6 objects (city-1m, cell 120, columns): 24,964 proxies of 40 objects on average
  (scenes/README.md, "Visibility ranges, LOD bands and HLOD", has the build times and the other cell sizes).
- **The proxy** of group g: its centre ``p`` the centre of the box around the children's centres; its
  covering radius ``R = max_i(|c_i - p| + sqrt(3) s_i)`` (s_i a child's drawn half-extent: the sphere
  holds every child's drawn cube); its drawn half-extent half the largest edge of the box around the
  children's cubes; its colour the children's mean; category -1.
- **The switch** distance ``S = switch * R`` is the proxy's begin: it is shown from S on (d = |camera - p|).
  The cross-fade window is ``W = window * S``. The runtime (:mod:`viewer.frame.ranges`) shows a child while
  ``d < S (1 + fade)`` (``fade`` the viewer's ``--fade``, default 0.15 = :data:`DEFAULT_WINDOW`): its window
  is ``[S, S (1 + fade))``, within this one whenever ``fade <= window``.
- **Never a hole:** each child's end is raised to at least ``(S + W + |c_i - p|) * (1 + 1e-12)``: while the
  camera is within S + W of p, it is within S + W + |c_i - p| of the child (triangle inequality; the factor
  covers float64 rounding), so every child is in its own range whenever the proxy is not yet shown.
- **Never a double:** each child's ``parent`` is the proxy, so the runtime hides the children from the
  proxy's begin on (outside the window); the proxy's end is ``max(max_i(r_i + |c_i - p|), S + W)`` with
  the children's ends before the raise: the proxy is in range wherever any child was, so beyond the switch
  the group is seen exactly as far as its farthest-seen child was.

So for every group and every camera outside the window ``S <= |camera - p| < S + W`` exactly one of {the proxy,
all its children} is meant to be drawn, or (beyond the proxy's end) neither, where no child was in range
before the proxies were made either (tests/scenes/test_city_hlod.py checks it by brute force).

Proxies are appended after the scene's objects (rows N .. N + G - 1), so the generated objects keep
their rows. Pure numpy: a sort of the cell keys, then per-group reductions; no per-object Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from viewer.domain import RADIUS_LIMIT

from ._schema import Param
from .errors import SceneError
from .meshes import MeshSet

__all__ = ["DEFAULT_SWITCH", "DEFAULT_WINDOW", "HLOD_FIELDS", "PAD", "Proxies", "add_hlod", "fit_parents",
           "group_by_cell", "make_proxies"]

#: the default cross-fade window, a share of the switch distance: the viewer's default --fade
#: (viewer.frame.options.SessionOptions.fade; a test checks they agree)
DEFAULT_WINDOW = 0.15
#: the default switch distance, in covering radii of the group
DEFAULT_SWITCH = 4.0

HLOD_FIELDS: dict[str, Param] = {
    "cell": Param("float", 250.0, lo=0.0, lo_open=True, doc="edge of a grouping cell, world units"),
    "switch": Param("float", DEFAULT_SWITCH, lo=0.0, lo_open=True, hi=1e6,
                    doc="the proxy's begin (the switch distance) = switch x the group's covering radius"),
    "window": Param("float", DEFAULT_WINDOW, lo=0.0, hi=1.0,
                    doc="the cross-fade window, a share of the switch distance (children reach past it); at "
                        "least the viewer's --fade (default 0.15) for no hole at any fade"),
    "axes": Param("str", "xyz", choices=("xyz", "xz"),
                  doc="xyz: cubic cells; xz: columns of cell x cell over the ground (a flat world, +y up)"),
    "min_end": Param("float", 0.0, lo=0.0, doc="objects whose end (view distance) is below this are not grouped: "
                     "they cull on their own, and raising their ends to the switch distance would show them "
                     "farther than their own range (0: every object)"),
    "min_children": Param("int", 2, lo=1, hi=1_000_000_000, doc="a cell with fewer objects makes no proxy"),
}

#: the most cells a grouping grid may have over the objects' box (its keys are int64)
MAX_CELLS = 2.0**62
#: the relative pad on a raised child end: float64 rounding of |c - p| and of S + W cannot open a hole
PAD = 1e-12
_SQRT3 = math.sqrt(3.0)


def group_by_cell(centres: np.ndarray, lo: np.ndarray, cell: float, eligible: np.ndarray | None = None,
                  min_children: int = 2, axes: str = "xyz") -> tuple[np.ndarray, int]:
    """Group objects by the grid cell of edge ``cell`` (world units, from the corner ``lo`` (3,)) their
    centre lies in (``axes`` "xz": by column, the height ignored).

    centres : (N, 3) float64; eligible : (N,) bool or None (all).
    Returns (group (N,) int64: the group of each object, -1 for none (not eligible, or in a cell of fewer
    than ``min_children`` eligible objects); G, the number of groups). Groups are numbered in the order of
    their cell keys (x fastest after z and y: deterministic, independent of the objects' order).
    """
    n = centres.shape[0]
    group = np.full(n, -1, dtype=np.int64)
    rows = np.arange(n) if eligible is None else np.flatnonzero(eligible)
    if rows.size == 0:
        return group, 0
    with np.errstate(over="ignore", invalid="ignore"):  # a tiny cell: inf, then refused by its count
        cells = np.floor((centres[rows] - lo) / cell)
        if axes == "xz":
            cells[:, 1] = 0.0
        cells -= cells.min(axis=0)
        _check_grid(cells.max(axis=0) + 1.0, cell, np.ptp(centres[rows], axis=0))
    ijk = cells.astype(np.int64)
    dims = ijk.max(axis=0) + 1
    key = (ijk[:, 2] * dims[1] + ijk[:, 1]) * dims[0] + ijk[:, 0]
    uniq, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
    keep = counts >= min_children
    renum = np.full(uniq.size, -1, dtype=np.int64)
    renum[keep] = np.arange(int(keep.sum()))
    group[rows] = renum[inv.reshape(-1)]
    return group, int(keep.sum())


def _check_grid(dims: np.ndarray, cell: float, extent: np.ndarray) -> None:
    """Refuse a cell so small that the grid over the objects cannot number its cells in an int64 key
    (:data:`MAX_CELLS`): a cell of 1e-300 once cast every object into one cell, one proxy for all."""
    total = float(np.prod(dims))
    if not math.isfinite(total) or total > MAX_CELLS:
        box = " x ".join(f"{e:.4g}" for e in extent)
        raise SceneError(f"a cell of {cell:.4g} world units cuts the objects' box ({box}) into more than 2**62 "
                         "cells, more than a grid can number; give a larger cell", "hlod.cell")


@dataclass(eq=False)
class Proxies:
    """G proxies (flat arrays, world units).

    centres : (G, 3) float64; radii : (G,) float64, the proxies' ends; begin : (G,) float64, the switch
    distances S; window : (G,) float64, W = window * S; sizes : (G,) float64 drawn half-extents;
    box_lo, box_hi : (G, 3) float64, the box around the children's cubes; child_radii : (N,) float64, every
    object's end after the raise (unchanged for objects in no group); colours : (G, 4) uint8;
    counts : (G,) int64 children per proxy.
    """

    centres: np.ndarray
    radii: np.ndarray
    begin: np.ndarray
    window: np.ndarray
    sizes: np.ndarray
    box_lo: np.ndarray
    box_hi: np.ndarray
    child_radii: np.ndarray
    colours: np.ndarray
    counts: np.ndarray

    @property
    def g(self) -> int:
        return int(self.radii.shape[0])


def make_proxies(centres: np.ndarray, radii: np.ndarray, sizes: np.ndarray, colours: np.ndarray,
                 group: np.ndarray, g: int, switch: float, window: float) -> Proxies:
    """The proxies of the groups ``group`` (N,) int64 (-1 none; 0..g-1) defines, by the module's rule.

    centres (N, 3) float64, radii (N,) float64, sizes (N,) real (drawn half-extents), colours (N, 4) uint8.
    """
    member = np.flatnonzero(group >= 0)
    if member.size == 0:
        z3 = np.zeros((0, 3))
        return Proxies(centres=z3, radii=np.zeros(0), begin=np.zeros(0), window=np.zeros(0), sizes=np.zeros(0),
                       box_lo=z3, box_hi=z3, child_radii=radii.copy(), colours=np.zeros((0, 4), np.uint8),
                       counts=np.zeros(0, np.int64))
    order = member[np.argsort(group[member], kind="stable")]
    gs = group[order]
    starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]]) if order.size else np.zeros(0, np.int64)
    counts = np.diff(np.r_[starts, order.size]).astype(np.int64)
    co, so, ro = centres[order], sizes[order].astype(np.float64), radii[order]  # gathered once, group by group
    cmin = np.minimum.reduceat(co, starts, axis=0)
    cmax = np.maximum.reduceat(co, starts, axis=0)
    p = (cmin + cmax) / 2.0
    box_lo = np.minimum.reduceat(co - so[:, None], starts, axis=0)
    box_hi = np.maximum.reduceat(co + so[:, None], starts, axis=0)
    d = co - p[gs]
    off = np.sqrt((d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2])
    cover = np.maximum.reduceat(off + _SQRT3 * so, starts)
    begin = np.minimum(switch * cover, RADIUS_LIMIT / 4)
    win = window * begin
    reach = np.maximum.reduceat(ro + off, starts)
    end = np.minimum(np.maximum(reach, begin + win), RADIUS_LIMIT)
    child = radii.copy()
    need = (begin[gs] + win[gs] + off) * (1.0 + PAD)
    child[order] = np.minimum(np.maximum(ro, need), RADIUS_LIMIT)
    col = np.rint(np.add.reduceat(colours[order].astype(np.float64), starts, axis=0) / np.maximum(counts, 1)[:, None])
    return Proxies(centres=p, radii=end, begin=begin, window=win, sizes=(box_hi - box_lo).max(axis=1) / 2.0,
                   box_lo=box_lo, box_hi=box_hi, child_radii=child, colours=col.astype(np.uint8), counts=counts)


def _box_mesh() -> tuple[np.ndarray, np.ndarray]:
    """A unit cube (-0.5 .. 0.5, no bottom face): (vertices (8, 3) float32, faces (10, 3) int32)."""
    v = np.array([[x, y, z] for y in (-0.5, 0.5) for z in (-0.5, 0.5) for x in (-0.5, 0.5)], np.float32)
    f = np.array([[4, 6, 7], [4, 7, 5],  # top
                  [0, 1, 5], [0, 5, 4], [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]],
                 np.int32)
    return v, f


def _with_proxy_meshes(meshes: MeshSet, px: Proxies) -> MeshSet:
    """``meshes`` plus one cube mesh (appended last) instanced by every proxy, scaled to its box."""
    v, f = _box_mesh()
    k = meshes.k
    g = px.g
    xf = np.zeros((g, 3, 4))
    ext = px.box_hi - px.box_lo
    xf[:, 0, 0], xf[:, 1, 1], xf[:, 2, 2] = ext[:, 0], ext[:, 1], ext[:, 2]
    xf[:, :, 3] = (px.box_lo + px.box_hi) / 2.0
    lods = None
    if meshes.lods is not None:
        lods = np.vstack([meshes.lods, np.full((1, meshes.lods.shape[1]), k, dtype=np.int32)])
    return MeshSet(vertices=np.concatenate([meshes.vertices, v]), faces=np.concatenate([meshes.faces, f]),
                   vertex_start=np.r_[meshes.vertex_start, meshes.vertex_start[-1] + v.shape[0]].astype(np.int64),
                   face_start=np.r_[meshes.face_start, meshes.face_start[-1] + f.shape[0]].astype(np.int64),
                   ids=np.r_[meshes.ids, np.full(g, k, dtype=np.int32)].astype(np.int32),
                   transforms=np.concatenate([meshes.transforms, xf]), lods=lods)


def add_hlod(spec: dict, lo: np.ndarray, centres: np.ndarray, radii: np.ndarray, sizes: np.ndarray,
             colours: np.ndarray, category: np.ndarray, *, begin: np.ndarray | None = None,
             lod: np.ndarray | None = None, parent: np.ndarray | None = None,
             meshes: MeshSet | None = None) -> tuple[dict, Proxies]:
    """The arrays of the scene with proxies appended, by a checked ``[hlod]`` table ``spec``
    (:data:`HLOD_FIELDS`), and the :class:`Proxies` made.

    lo : (3,) the world box's low corner (the grid's origin). centres (N, 3), radii (N,), sizes (N,),
    colours (N, 4) uint8, category (N,) int32; begin (N,), lod (N, L), parent (N,) or None; meshes or None.
    Returns ``{"centres", "radii", "sizes", "colours", "category", "begin", "lod", "parent", "meshes"}``
    ((N + G) rows; ``lod`` and ``meshes`` None when not given; proxies have +inf LOD switches: one band).
    """
    n = centres.shape[0]
    eligible = np.ones(n, dtype=bool)
    if begin is not None:
        eligible &= begin == 0.0
    if parent is not None:
        eligible &= parent < 0
    if spec.get("min_end", 0.0) > 0:
        eligible &= radii >= spec["min_end"]
    group, g = group_by_cell(centres, lo, float(spec["cell"]), eligible, int(spec["min_children"]),
                             spec.get("axes", "xyz"))
    px = make_proxies(centres, radii, sizes, colours, group, g, float(spec["switch"]), float(spec["window"]))
    par = np.full(n, -1, dtype=np.int64) if parent is None else parent.astype(np.int64)
    par = np.where(group >= 0, n + group, par)
    out = {
        "centres": np.concatenate([centres, px.centres]),
        "radii": np.concatenate([px.child_radii, px.radii]),
        "sizes": np.concatenate([sizes.astype(np.float32), px.sizes.astype(np.float32)]),
        "colours": np.concatenate([colours, px.colours]),
        "category": np.concatenate([category, np.full(g, -1, dtype=np.int32)]),
        "begin": np.concatenate([np.zeros(n) if begin is None else begin, px.begin]),
        "lod": None if lod is None else np.vstack([lod, np.full((g, lod.shape[1]), np.inf)]),
        "parent": np.concatenate([par, np.full(g, -1, dtype=np.int64)]),
        "meshes": None if meshes is None else _with_proxy_meshes(meshes, px),
    }
    return out, px


def fit_parents(centres: np.ndarray, radii: np.ndarray, sizes: np.ndarray, begin: np.ndarray,
                parent: np.ndarray, rule: np.ndarray | None = None, switch: float = DEFAULT_SWITCH,
                window: float = DEFAULT_WINDOW) -> tuple[np.ndarray, np.ndarray]:
    """Given parents (an imported node hierarchy), the module's rule applied to them: (begin, radii) new
    (N,) float64 arrays.

    centres (N, 3), radii (N,), sizes (N,) drawn half-extents, begin (N,), parent (N,) int64 (-1 none);
    rule (N,) bool: the proxies whose begin is made here (``switch`` x the covering radius of their
    children), the others keep theirs. Then each child's end is raised to ``(begin_p (1 + window) +
    |c - p|)(1 + PAD)`` and each proxy's to ``max(its own, its children's former ends + |c - p|,
    begin_p (1 + window))``. Only the immediate parent counts (the runtime's rule).
    """
    kids = np.flatnonzero(parent >= 0)
    begin = np.array(begin, dtype=np.float64)
    new = np.array(radii, dtype=np.float64)
    if kids.size == 0:
        return begin, new
    par = parent[kids]
    d = centres[kids] - centres[par]
    off = np.sqrt((d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2])
    if rule is not None and rule.any():
        cover = np.zeros(centres.shape[0])
        np.maximum.at(cover, par, off + _SQRT3 * sizes[kids].astype(np.float64))
        begin[rule] = np.minimum(switch * cover[rule], RADIUS_LIMIT / 4)
    reach = np.zeros(centres.shape[0])
    np.maximum.at(reach, par, radii[kids] + off)
    new[kids] = np.maximum(new[kids], (begin[par] * (1.0 + window) + off) * (1.0 + PAD))
    proxies = np.unique(par)
    new[proxies] = np.maximum.reduce([new[proxies], reach[proxies], begin[proxies] * (1.0 + window)])
    return begin, np.minimum(new, RADIUS_LIMIT)
