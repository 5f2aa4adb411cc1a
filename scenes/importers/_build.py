"""Imported arrays -> a checked :class:`~viewer.scenes.Scene`: what an import adds to the arrays of a file
(view distances from a rule, sizes from extents, colours by view distance, a record of the import), handed
to the one scene constructor (:func:`viewer.scenes.construct.scene_from_arrays`) with the box it fits."""

from __future__ import annotations

import math

import numpy as np

from viewer.domain import RADIUS_LIMIT
from viewer.system.memory import available, format_bytes

from .._schema import check_colour
from ..construct import check_centres, check_domain, scene_from_arrays
from ..errors import SceneError
from ..limits import fit_box
from ..look import PALETTES, _ramp
from ..meshes import MeshSet
from ..scene import Scene
from .rules import ViewDistanceRule, default_rule, parse_rule

__all__ = ["make_scene", "need_memory", "radius_colours", "import_line"]


def need_memory(nbytes: float, what: str) -> None:
    """Refuse (before allocating) work that needs more memory than this process may use
    (:func:`viewer.system.memory.available`): one :class:`SceneError` with the estimate, not a kill by the kernel."""
    have, why = available()
    if nbytes > have:
        raise SceneError(f"{what} would need about {format_bytes(nbytes)} of memory; this process may use "
                         f"{format_bytes(have)} ({why})")


def radius_colours(radii: np.ndarray) -> np.ndarray:
    """(N, 4) uint8: the default look's colour by view distance (viridis over log r, min..max), through a
    256-entry table (a million objects in milliseconds; the generators' portable ramp is not needed for
    data that came from a file). radii : (N,) float64, world units, checked (finite, >= 0)."""
    stops = np.array([check_colour(c, "palette") for c in PALETTES["viridis"]], dtype=np.float64)
    lut = np.empty((256, 4), dtype=np.uint8)
    lut[:, :3] = np.rint(_ramp(stops, np.linspace(0.0, 1.0, 256))).astype(np.uint8)
    lut[:, 3] = 255
    pos = radii > 0
    if not pos.any():
        return np.repeat(lut[:1], radii.size, axis=0)
    lr = np.log2(np.where(pos, radii, radii[pos].min()))
    lo, hi = float(lr.min()), float(lr.max())
    t = np.zeros(radii.size) if hi <= lo else (lr - lo) * (255.0 / (hi - lo))
    return lut[np.clip(np.rint(t), 0, 255).astype(np.intp)]


def check_begin_rows(begin: np.ndarray, radii: np.ndarray, field: str = "begin", rows: str = "row",
                     first_row: int = 1, why: str = "") -> None:
    """Every ``begin`` (N,) float64 <= its object's view distance ``radii`` (N,) float64; :class:`SceneError`
    naming ``field`` and the first row beyond (counted from ``first_row``) otherwise. ``why`` says where the
    view distances came from (a rule, the file's r column)."""
    over = np.flatnonzero(begin > radii)
    if over.size:
        i = int(over[0])
        raise SceneError(f"{rows} {i + first_row}: begin {begin[i]:g} is beyond the object's view distance "
                         f"{radii[i]:g}{why} (a range needs begin <= its end)", field)


def make_scene(name: str, centres: np.ndarray, *, fmt: str, radii: np.ndarray | None = None,
               extents: np.ndarray | None = None, colours: np.ndarray | None = None,
               rule: str | None = None, meshes: MeshSet | None = None, facts: dict | None = None,
               begin: np.ndarray | None = None, lod: np.ndarray | None = None, parent: np.ndarray | None = None,
               range_fields: dict | None = None, rows: tuple[str, int] = ("row", 1),
               fit_parents: np.ndarray | None = None) -> Scene:
    """A scene from imported arrays.

    centres : (N, 3) float64, world units (already checked finite and in the domain)
    radii : (N,) float64 view distances from the file, or None: the ``rule`` decides
    extents : (N,) float64 object sizes (largest edge of each world-space bounding box), or None
    colours : (N, 4) uint8 RGBA from the file, or None (by view distance, :func:`radius_colours`)
    rule : a view-distance rule (:mod:`.rules`); None: the default picked from the file's own scale
        (:func:`.rules.default_rule`, the reason kept as ``view_distance_why``). Ignored when ``radii`` is
        given.
    facts : what to record about the import (format, columns, ...); the recipe keeps them with the rule
    begin (N,), lod (N, L), parent (N,) : the visibility ranges the file gives (already checked but for
        begin <= the view distance, checked here once the view distances are known), or None;
        ``range_fields`` {role: the column or field a message names}; ``rows`` (word, first number) how a
        message counts the file's objects (``("row", 1)`` for a table's data rows); fit_parents (N,) bool or
        None: the parents come from a node hierarchy, made hole-free by :func:`viewer.scenes.hlod.fit_parents`
        once the view distances are known (the marked proxies' begins made by its rule)
    """
    centres = check_centres(centres)
    origin, world = fit_box(centres, radii)  # a rule's distances depend on the box: fitted first
    diagonal = world * math.sqrt(3.0)
    record = {"format": fmt, **(facts or {})}
    if radii is None:
        if rule:
            text, why = rule, "--view-distance"
        else:
            text, why = default_rule(centres, extents)
        r = parse_rule(text)
        if r.needs_sizes and extents is None:
            raise SceneError(f"the rule {text!r} needs object sizes, and this file gives none (add a size "
                             "column, or use --view-distance constant:value=DISTANCE)", "--view-distance")
        radii = _apply(r, extents, centres.shape[0], diagonal)
        # checked here, naming what decided them, before colours are drawn from them
        check_domain(radii, "view distance", limit=RADIUS_LIMIT, nonnegative=True, rows="object")
        record["view_distance"] = text
        record["view_distance_why"] = why
        record["inf_means"] = diagonal
    else:
        record["view_distance"] = "from the file"
    if fit_parents is not None and parent is not None:
        from ..hlod import fit_parents as fit

        half = np.zeros(centres.shape[0]) if extents is None else extents / 2
        begin, radii = fit(centres, radii, half, np.zeros(centres.shape[0]) if begin is None else begin, parent,
                           fit_parents)
        record["parents"] = "node hierarchy: proxies' begin from visibility_range_begin or 4 x the covering " \
                            "radius; ends raised to cover the cross-fade window (scenes/hlod.py)"
    if begin is not None:
        field = (range_fields or {}).get("begin", "begin")
        why = "" if record["view_distance"] == "from the file" else f" (from the rule {record['view_distance']})"
        check_begin_rows(begin, radii, field, rows[0], rows[1], why)
    if range_fields:
        record["ranges"] = dict(range_fields)
    sizes = None if extents is None else (extents / 2).astype(np.float32)
    if colours is None:
        colours = radius_colours(radii)
    return scene_from_arrays(centres, radii, sizes=sizes, colours=colours, world=world, origin=origin, name=name,
                             recipe={"import": record}, meshes=meshes, begin=begin, lod=lod, parent=parent)


def import_line(scene: Scene) -> str:
    """What an import made, in one line (``viewer scene import`` prints it after the output file, and every
    command that imports a file on the fly prints it after the file): ``N objects, K meshes (FORMAT), view
    distance: RULE (WHY; --view-distance to change): radii MIN..MAX (median MED)``, every figure with the
    same significant digits (:func:`viewer.scenes.fmt.span`)."""
    from ..fmt import span

    rec = (scene.recipe or {}).get("import", {})
    k = scene.meshes.k if scene.meshes is not None else 0
    meshes = f", {k} mesh{'es' if k != 1 else ''}" if scene.meshes is not None else ""
    text = rec.get("view_distance", "from the file")
    if text == "from the file":
        how = "from the file (its r column)"
    else:
        why = rec.get("view_distance_why")
        words = parse_rule(text).describe()
        if why == "--view-distance":
            how = f"{words} (--view-distance {text})"
        else:
            how = f"{words} ({why + '; ' if why else ''}--view-distance to change)"
    return f"{scene.n:,} objects{meshes} ({rec.get('format', '?')}), view distance: {how}: radii {span(scene.radii)}"


def _apply(rule: ViewDistanceRule, extents: np.ndarray | None, n: int, diagonal: float) -> np.ndarray:
    return rule.apply(extents if extents is not None else np.zeros(n), diagonal)
