"""The one checked scene constructor: :func:`scene_from_arrays` turns arrays into a :class:`Scene` by one
set of rules, whoever made the arrays: the generators (:mod:`.build`), the ``.npz`` reader
(:mod:`.format`) and every importer (:mod:`.importers`).

The rules: dtypes (real numbers, integers), shapes (N rows everywhere, 1 <= N <= :data:`MAX_N`), the
numeric domain of :mod:`viewer.domain` (:func:`check_domain`: finite, |coordinate| and radius <= 2**100),
one world box (:func:`~.limits.check_box`, fitted by :func:`~.limits.fit_box`) holding every centre,
clusters and categories that agree, a seed, a recipe checked like any recipe, JSON-able extras in the
domain, motion (:class:`Motion`) and meshes (:class:`MeshSet`) that fit the N objects, a look. A
problem raises one :class:`SceneError` naming the field by its ``.npz`` entry name; the caller adds the
file (``SceneError.at``).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from viewer.domain import COORD_LIMIT, RADIUS_LIMIT, first_outside

from .errors import SceneError
from .limits import (MAX_N, MAX_PERIOD, MAX_SPEED, MIN_ORBIT, MIN_PERIOD, SEED_LIMIT, check_box, check_name,
                     fit_box)
from .look import SCENE_LOOK_PARAMS, check_scene_look, default_look, make_colours, make_sizes
from .meshes import MeshSet, check_meshes
from .recipe import check_recipe
from .scene import MOTION_KINDS, Motion, Scene

__all__ = ["MAX_LOD_SWITCHES", "check_begin", "check_centres", "check_domain", "check_integers", "check_lod",
           "check_parent", "check_reals", "fit_box", "scene_from_arrays"]

#: the most LOD switch distances an object may have (so at most MAX_LOD_SWITCHES + 1 bands)
MAX_LOD_SWITCHES = 7


# --------------------------------------------------------------------------- the rules, one array at a time


def check_reals(a: np.ndarray, field: str) -> None:
    """``a`` holds real numbers (an integer or floating dtype, not bool); :class:`SceneError` naming
    ``field`` otherwise."""
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise SceneError(f"must hold real numbers, got dtype {a.dtype}", field)


def check_integers(a: np.ndarray, field: str) -> None:
    """``a`` holds integers (not bool); :class:`SceneError` naming ``field`` otherwise."""
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
        raise SceneError(f"must hold integers, got dtype {a.dtype}", field)


def _float64(a, field: str) -> np.ndarray:
    """``a`` as a C-contiguous float64 array, after checking it holds real numbers."""
    a = np.asarray(a)
    check_reals(a, field)
    return np.ascontiguousarray(a, dtype=np.float64)


def _shape(a: np.ndarray, shape: tuple, field: str, n_from: str = "centres") -> None:
    if a.ndim != len(shape) or any(w is not None and s != w for s, w in zip(a.shape, shape)):
        want = "(" + ", ".join("any" if w is None else str(w) for w in shape) + ("," if len(shape) == 1 else "") + ")"
        if a.ndim == len(shape) and a.ndim >= 1 and shape[0] is not None and a.shape[0] != shape[0]:
            raise SceneError(f"has {a.shape[0]} rows but {n_from} has {shape[0]}", field)
        raise SceneError(f"must have shape {want}, got {a.shape}", field)


def check_domain(values, field: str, *, limit: float = COORD_LIMIT, nonnegative: bool = False,
                 rows: str | None = None, first_row: int = 0) -> None:
    """Every value finite and within +-``limit`` (``0..limit`` when ``nonnegative``): the numeric domain of
    :mod:`viewer.domain`, so whatever a scene holds, every index can answer exactly.

    values : an array of real numbers, any shape. The :class:`SceneError` names ``field`` and the first
    value outside: as ``field[i, j]`` (one value), or with ``rows`` ("row", "object") as ``ROWS i`` and the
    whole row, counting rows from ``first_row`` (a table's data rows count from 1).
    """
    a = np.asarray(values)
    if rows is None:
        i = first_outside(a.reshape(-1), limit, nonnegative)
        if i < 0:
            return
        v = a.reshape(-1)[i]
        at = np.unravel_index(i, a.shape)
        where = f"{field}[{', '.join(map(str, at))}]" if a.ndim else field
    else:
        i = first_outside(a, limit, nonnegative)
        if i < 0:
            return
        v = a[i]
        where = f"{rows} {i + first_row}"
    shown = v.tolist() if np.ndim(v) else float(v)
    if not np.all(np.isfinite(v)):
        why = "is not a finite number"
    elif nonnegative and np.any(np.asarray(v) < 0):
        why = "is negative (must be >= 0)"
    elif limit == COORD_LIMIT:
        why = f"is outside the numeric domain (|value| <= 2**100 = {limit:.4g}, viewer.domain)"
    else:
        why = f"is beyond the limit {limit:g}"
    raise SceneError(f"{where}: {shown} {why}", field)


def check_centres(centres) -> np.ndarray:
    """``centres`` as (N, 3) float64 after checking its dtype, shape and count (1 <= N <= :data:`MAX_N`);
    its values are not read (a reader checks a large entry's shape before reading the others)."""
    c = np.asarray(centres)
    check_reals(c, "centres")
    if c.ndim != 2 or c.shape[1] != 3:
        raise SceneError(f"must have shape (N, 3), got {c.shape}", "centres")
    if c.shape[0] == 0:
        raise SceneError("holds no objects (N = 0)", "centres")
    if c.shape[0] > MAX_N:
        raise SceneError(f"holds {c.shape[0]} objects, more than the limit {MAX_N}", "centres")
    return np.ascontiguousarray(c, dtype=np.float64)


def _json_numbers(v, field: str, depth: int = 0) -> None:
    """Every number inside a JSON value is finite and in the numeric domain (a generated path or a
    tool reading ``extras`` must never meet 1e308 or NaN there)."""
    if depth > 64:
        raise SceneError("is nested more than 64 levels deep", field)
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return
    if isinstance(v, (int, float)):
        if not (math.isfinite(v) and abs(v) <= COORD_LIMIT):
            shown = v if isinstance(v, float) or abs(v) < 10**30 else f"an integer of {len(str(abs(v)))} digits"
            raise SceneError(f"holds {shown}, outside the numeric domain (finite, |value| <= 2**100)", field)
        return
    items = v.items() if isinstance(v, dict) else enumerate(v)
    for k, x in items:
        _json_numbers(x, f"{field}.{k}" if isinstance(v, dict) else f"{field}[{k}]", depth + 1)


# --------------------------------------------------------------------------- the constructor


def scene_from_arrays(
    centres,
    radii,
    *,
    sizes=None,
    colours=None,
    category=None,
    world=None,
    origin=None,
    seed: int = 0,
    name: str = "scene",
    cluster_centres=None,
    cluster_spread=None,
    recipe: dict | None = None,
    extras: dict | None = None,
    motion: Motion | None = None,
    meshes: MeshSet | None = None,
    look: dict | None = None,
    begin=None,
    lod=None,
    parent=None,
) -> Scene:
    """A checked :class:`Scene` from arrays: what the generators, the ``.npz`` reader and every importer
    build scenes with.

    centres : (N, 3) real, world units; radii : (N,) real >= 0, world units; both in the numeric domain
    of :mod:`viewer.domain` (finite, |coordinate| and radius <= 2**100), 1 <= N <= :data:`MAX_N`.
    Optional (None: the default): sizes (N,) >= 0 (from the radii), colours (N, 4) or (N, 3) integers
    0..255 (by cluster / radius), category (N,) integers >= -1 (all -1), world (edge, > 0) and origin
    (3,) of the world box (fitted to the centres, :func:`fit_box`; a given box must hold every centre and
    lie in the domain), seed (integer 0..2**64-1), name, cluster_centres (K, 3), cluster_spread (K,) >= 0,
    recipe (a recipe dict, checked; one without ``generator``, such as an import's provenance, is kept as
    is), extras (a JSON-able dict), motion (a :class:`Motion`, checked), meshes (a :class:`MeshSet`,
    checked), look (how the scene is drawn: ``{"style": "objects" | "stars", "sky": "#rrggbb" | None}``,
    :data:`viewer.scenes.look.SCENE_LOOK_PARAMS`; None: the recipe's ``[look]``, else the default).
    Visibility ranges, LOD bands and HLOD parents (issue 24; None: not used, the scene means what it
    meant before): begin (N,) real, 0 <= begin[i] <= radii[i] (:func:`check_begin`), lod (N, L) real
    switch distances (:func:`check_lod`), parent (N,) integers -1..N-1 (:func:`check_parent`).

    Raises :class:`SceneError` naming the field (the ``.npz`` entry name) for the first problem.
    """
    centres = check_centres(centres)
    check_domain(centres, "centres")
    n = centres.shape[0]
    radii = np.asarray(radii)
    check_reals(radii, "radii")
    _shape(radii, (n,), "radii")
    radii = np.ascontiguousarray(radii, dtype=np.float64)
    check_domain(radii, "radii", limit=RADIUS_LIMIT, nonnegative=True)
    cluster_centres, cluster_spread = _clusters(cluster_centres, cluster_spread)
    category = _category(category, n, cluster_centres.shape[0])
    origin, world = _box(centres, radii, world, origin)

    try:
        seed = operator.index(seed)
    except TypeError:
        raise SceneError(f"must be an integer, got {seed!r}", "seed") from None
    if not 0 <= seed < 2**64:
        raise SceneError(f"must be an integer 0..2**64-1, got {seed}", "seed")
    if not isinstance(name, str):
        raise SceneError(f"must be a string, got {type(name).__name__}", "name")
    check_name(name)
    if recipe is not None:
        recipe = _checked_recipe(recipe)
    extras = {} if extras is None else extras
    if not isinstance(extras, dict):
        raise SceneError("must be a JSON object (a dict)", "extras")
    _json_numbers(extras, "extras")

    if look is None and recipe is not None and isinstance(recipe.get("look"), dict):
        # no look of its own (a file from before the entry): the recipe's [look] says how it is drawn
        look = {k: v for k, v in recipe["look"].items() if k in SCENE_LOOK_PARAMS}
    scene_look = check_scene_look(look, "look")
    sizes, colours = _sizes_colours(sizes, colours, seed, centres, radii, category)
    if motion is not None:
        motion = _check_motion(motion, n)
    if meshes is not None:
        meshes = check_meshes(meshes, n)
    begin = None if begin is None else check_begin(begin, radii)
    lod = None if lod is None else check_lod(lod, n)
    parent = None if parent is None else check_parent(parent, n)
    return Scene(
        name=name, centres=centres, radii=radii, sizes=sizes, colours=colours, category=category,
        world=world, seed=seed, recipe=recipe, cluster_centres=cluster_centres,
        cluster_spread=cluster_spread, extras=extras, origin=origin, motion=motion, meshes=meshes,
        style=scene_look["style"], sky=scene_look["sky"], begin=begin, lod=lod, parent=parent,
    )


def check_begin(begin, radii: np.ndarray) -> np.ndarray:
    """(N,) float64 begin distances, world units: real, in the numeric domain, 0 <= begin[i] <= radii[i]
    (``radii`` (N,) float64, checked); :class:`SceneError` naming ``begin`` otherwise."""
    b = np.asarray(begin)
    check_reals(b, "begin")
    _shape(b, (radii.shape[0],), "begin")
    b = np.ascontiguousarray(b, dtype=np.float64)
    check_domain(b, "begin", limit=RADIUS_LIMIT, nonnegative=True)
    over = np.flatnonzero(b > radii)
    if over.size:
        i = int(over[0])
        raise SceneError(f"begin[{i}] = {float(b[i])!r} is beyond the object's end (radii[{i}] = {float(radii[i])!r}): a range "
                         f"must have begin <= end", "begin")
    return b


def check_lod(lod, n: int) -> np.ndarray:
    """(N, L) float64 LOD switch distances, world units, 1 <= L <= :data:`MAX_LOD_SWITCHES`: each finite
    value in the numeric domain and >= 0, a row ascending (non-decreasing), +inf only as padding after a
    row's last switch; a (N,) array is read as one switch per object. :class:`SceneError` naming ``lod``
    otherwise."""
    a = np.asarray(lod)
    check_reals(a, "lod")
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2 or a.shape[0] != n:
        if a.ndim == 2:
            raise SceneError(f"has {a.shape[0]} rows but centres has {n}", "lod")
        raise SceneError(f"must have shape (N, L), got {a.shape}", "lod")
    if not 1 <= a.shape[1] <= MAX_LOD_SWITCHES:
        raise SceneError(f"must hold 1..{MAX_LOD_SWITCHES} switch distances per object, got {a.shape[1]}", "lod")
    a = np.ascontiguousarray(a, dtype=np.float64)
    pad = np.isposinf(a)
    check_domain(np.where(pad, 0.0, a), "lod", limit=RADIUS_LIMIT, nonnegative=True)
    if a.shape[1] > 1:
        bad = np.flatnonzero(((pad[:, :-1] & ~pad[:, 1:]) | (a[:, 1:] < a[:, :-1])).any(axis=1))
        if bad.size:
            i = int(bad[0])
            raise SceneError(f"lod[{i}] = {a[i].tolist()} must be ascending, with +inf only as padding after the "
                             f"last switch distance", "lod")
    return a


def check_parent(parent, n: int) -> np.ndarray:
    """(N,) int64 visibility parents: -1 (none) or a row 0..N-1, never the object itself, no cycles;
    :class:`SceneError` naming ``parent`` otherwise."""
    p = np.asarray(parent)
    check_integers(p, "parent")
    _shape(p, (n,), "parent")
    if p.size and (int(p.min()) < -1 or int(p.max()) >= n):
        raise SceneError(f"must be -1 (none) or a row 0..{n - 1}, found {int(p.min())}..{int(p.max())}", "parent")
    p = np.ascontiguousarray(p, dtype=np.int64)
    own = np.flatnonzero(p == np.arange(n))
    if own.size:
        raise SceneError(f"parent[{int(own[0])}] is the object itself", "parent")
    anc = p.copy()  # pointer doubling: after k rounds anc[i] is i's 2**k-th ancestor (-1 past the root)
    for _ in range(max(1, int(n).bit_length())):
        has = anc >= 0
        if not has.any():
            return p
        anc[has] = anc[anc[has]]
    if (anc >= 0).any():
        i = int(np.flatnonzero(anc >= 0)[0])
        raise SceneError(f"has a cycle (object {i}'s chain of parents never ends)", "parent")
    return p


def _clusters(cluster_centres, cluster_spread) -> tuple[np.ndarray, np.ndarray]:
    """(K, 3) float64 cluster centres and (K,) float64 spreads (K = 0 when absent), checked."""
    if cluster_centres is None:
        cluster_centres = np.zeros((0, 3))
    else:
        cluster_centres = _float64(cluster_centres, "cluster_centres")
        if cluster_centres.ndim != 2 or cluster_centres.shape[1] != 3:
            raise SceneError(f"must have shape (K, 3), got {cluster_centres.shape}", "cluster_centres")
        check_domain(cluster_centres, "cluster_centres")
    k = cluster_centres.shape[0]
    if cluster_spread is None:
        return cluster_centres, np.zeros(k)
    spread = np.asarray(cluster_spread)
    check_reals(spread, "cluster_spread")
    _shape(spread, (k,), "cluster_spread", "cluster_centres")
    spread = np.ascontiguousarray(spread, dtype=np.float64)
    check_domain(spread, "cluster_spread", nonnegative=True)
    return cluster_centres, spread


def _category(category, n: int, k: int) -> np.ndarray:
    """(N,) int32 cluster ids, -1 .. K-1 (all -1 when absent)."""
    if category is None:
        return np.full(n, -1, dtype=np.int32)
    cat = np.asarray(category)
    check_integers(cat, "category")
    _shape(cat, (n,), "category")
    lo, hi = int(cat.min()), int(cat.max())
    if lo < -1:
        raise SceneError(f"must be >= -1 (-1: no cluster), found {lo}", "category")
    if hi > np.iinfo(np.int32).max or (k and hi >= k):
        raise SceneError(f"must be < the number of clusters ({k}), found {hi}", "category")
    return np.ascontiguousarray(cat, dtype=np.int32)


def _box(centres: np.ndarray, radii: np.ndarray, world, origin) -> tuple[np.ndarray, float]:
    """The world box: (origin (3,) float64, edge), as given or fitted (:func:`fit_box`), checked to lie in
    the domain and hold every centre."""
    if origin is not None:
        origin = np.asarray(origin)
        check_reals(origin, "origin")
        _shape(origin, (3,), "origin")
        origin = origin.astype(np.float64)
        check_domain(origin, "origin")
    if world is None:
        origin, world = fit_box(centres, radii, origin)
    else:
        w = np.asarray(world)
        check_reals(w, "world")
        if w.shape != ():
            raise SceneError(f"must be a single number, got shape {w.shape}", "world")
        world = float(w)
        if origin is None:
            origin = fit_box(centres, radii)[0]
    check_box(origin, world, "world")
    lo, hi = origin - world / 2, origin + world / 2
    out = ((centres < lo) | (centres > hi)).any(axis=1)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise SceneError(
            f"centres[{i}] = {centres[i].tolist()} lies outside the world box {lo.tolist()}..{hi.tolist()} "
            f"(world {world:g} centred at {origin.tolist()})",
            "world",
        )
    return origin, world


def _sizes_colours(sizes, colours, seed: int, centres: np.ndarray, radii: np.ndarray,
                   category: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N,) float32 sizes and (N, 4) uint8 colours: as given (checked), else the default look's, drawn
    from a stream keyed by ``seed`` (sizes first, then colours)."""
    n = radii.shape[0]
    look = default_look()
    look_rng = np.random.default_rng(seed)
    if sizes is None:
        sizes = make_sizes(look_rng, radii, look)
    else:
        sz = np.asarray(sizes)
        check_reals(sz, "sizes")
        _shape(sz, (n,), "sizes")
        check_domain(sz, "sizes", limit=RADIUS_LIMIT, nonnegative=True)  # before the float32 cast
        sizes = np.ascontiguousarray(sz, dtype=np.float32)
    if colours is None:
        return sizes, make_colours(look_rng, centres, radii, category, look)
    col = np.asarray(colours)
    check_integers(col, "colours")
    if col.ndim != 2 or col.shape[1] not in (3, 4):
        raise SceneError(f"must have shape (N, 4) or (N, 3), got {col.shape}", "colours")
    _shape(col, (n, col.shape[1]), "colours")
    if col.dtype == np.uint8 and col.shape[1] == 4:  # already RGBA bytes (every generated scene): no copy
        return sizes, np.ascontiguousarray(col)
    if col.size and (int(col.min()) < 0 or int(col.max()) > 255):
        raise SceneError(f"must be 0..255, found {int(col.min())}..{int(col.max())}", "colours")
    rgba = np.full((n, 4), 255, dtype=np.uint8)
    rgba[:, : col.shape[1]] = col
    return sizes, rgba


def _checked_recipe(recipe) -> dict:
    """A recipe a scene says it was generated from, checked like any recipe (its fields name
    ``recipe.X``)."""
    if not isinstance(recipe, dict):
        raise SceneError("must be a JSON object (a dict)", "recipe")
    if "generator" not in recipe:
        # not a generator's recipe: the provenance of an import (recipe["import"]), kept as is once its
        # fields have the types the import wrote (``scene info`` prints them)
        if "import" in recipe:
            _check_provenance(recipe["import"])
        return recipe
    try:
        return check_recipe(recipe)
    except SceneError as exc:
        raise SceneError(exc.problem, f"recipe.{exc.field}" if exc.field else "recipe") from None


#: the fields of an import's provenance (:func:`viewer.scenes.importers._build.make_scene`) -> their JSON type
_PROVENANCE = {"format": str, "file": str, "view_distance": str, "view_distance_why": str, "parents": str,
               "inf_means": float, "columns": dict, "ranges": dict, "lod_hints": dict}


def _check_provenance(imp) -> None:
    """``recipe.import`` as an import writes it: a JSON object whose known fields have their types (others
    are kept unread); :class:`SceneError` naming ``recipe.import.FIELD`` otherwise."""
    import numbers

    from ._schema import show

    if not isinstance(imp, dict):
        raise SceneError(f"must be a JSON object (what an import records), got {show(imp)}", "recipe.import")
    for key, kind in _PROVENANCE.items():
        v = imp.get(key)
        if v is None:
            continue
        if kind is float:
            ok = isinstance(v, numbers.Real) and not isinstance(v, bool)
        elif kind is dict:
            ok = isinstance(v, dict) and (key == "lod_hints" or all(isinstance(x, str) for x in v.values()))
        else:
            ok = isinstance(v, kind)
        if key == "lod_hints" and ok:
            ok = isinstance(v.get("switches from", {}), dict)
        if not ok:
            want = {str: "a string", float: "a number", dict: "a JSON object"}[kind]
            raise SceneError(f"must be {want}, got {show(v)}", f"recipe.import.{key}")


def _check_motion(mo: Motion, n: int) -> Motion:
    """``mo`` with its arrays checked and made contiguous (fields named like the ``.npz`` entries)."""
    ids = np.asarray(mo.ids)
    check_integers(ids, "motion_ids")
    if ids.ndim != 1:
        raise SceneError(f"must have shape (M,), got {ids.shape}", "motion_ids")
    m = ids.shape[0]
    if m and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise SceneError(f"must be object rows 0..{n - 1}, found {int(ids.min())}..{int(ids.max())}", "motion_ids")
    if m > 1 and not (np.diff(ids) > 0).all():
        raise SceneError("must be sorted and distinct", "motion_ids")
    kind = np.asarray(mo.kind)
    check_integers(kind, "motion_kind")
    _shape(kind, (m,), "motion_kind", "motion_ids")
    if m and (int(kind.min()) < 0 or int(kind.max()) >= len(MOTION_KINDS)):
        raise SceneError(f"must be 0..{len(MOTION_KINDS) - 1} ({', '.join(MOTION_KINDS)})", "motion_kind")
    arrays = {}
    for key, value, shape in (("motion_speed", mo.speed, (m,)), ("motion_direction", mo.direction, (m, 3)),
                              ("motion_axis", mo.axis, (m, 3)), ("motion_orbit", mo.orbit_radius, (m,)),
                              ("motion_phase", mo.phase, (m,))):
        a = np.asarray(value)
        check_reals(a, key)
        _shape(a, shape, key, "motion_ids")
        arrays[key] = np.ascontiguousarray(a, dtype=np.float64)
    check_domain(arrays["motion_speed"], "motion_speed", limit=MAX_SPEED, nonnegative=True)
    check_domain(arrays["motion_phase"], "motion_phase")
    orbit = arrays["motion_orbit"]
    check_domain(orbit, "motion_orbit", nonnegative=True)
    tiny = np.flatnonzero((orbit > 0) & (orbit < MIN_ORBIT))
    if tiny.size:
        raise SceneError(f"must be 0 or at least {MIN_ORBIT:g} world units, motion_orbit[{int(tiny[0])}] is "
                         f"{orbit[tiny[0]]!r}", "motion_orbit")
    for key in ("motion_direction", "motion_axis"):  # unit vectors, or zero where unused
        a = arrays[key]
        check_domain(a, key)
        norm = np.sqrt((a[:, 0] * a[:, 0] + a[:, 1] * a[:, 1]) + a[:, 2] * a[:, 2])
        bad = np.flatnonzero((norm != 0.0) & (np.abs(norm - 1.0) > 1e-6))
        if bad.size:
            i = int(bad[0])
            raise SceneError(f"must hold unit vectors (or zeros), {key}[{i}] = {a[i].tolist()} has length "
                             f"{norm[i]:.6g}", key)
    pulse, period, seed = mo.radius_pulse, mo.radius_period, mo.seed
    if not 0.0 <= pulse < 1.0:
        raise SceneError(f"must be 0 <= radius_pulse < 1, got {pulse!r}", "motion_params.radius_pulse")
    if not (math.isfinite(period) and MIN_PERIOD <= period <= MAX_PERIOD):
        raise SceneError(f"must be {MIN_PERIOD:g} .. {MAX_PERIOD:g} seconds, got {period!r}",
                         "motion_params.radius_period")
    try:
        seed = operator.index(seed)
    except TypeError:
        raise SceneError(f"must be a whole number, got {seed!r}", "motion_params.seed") from None
    if not 0 <= seed < SEED_LIMIT:
        raise SceneError(f"must be a whole number 0..2**63-1, got {seed if abs(seed) < 10**30 else 'a larger one'}",
                         "motion_params.seed")
    return Motion(ids=np.ascontiguousarray(ids, dtype=np.int64), kind=np.ascontiguousarray(kind, dtype=np.int8),
                  speed=arrays["motion_speed"], direction=arrays["motion_direction"], axis=arrays["motion_axis"],
                  orbit_radius=orbit, phase=arrays["motion_phase"], radius_pulse=float(pulse),
                  radius_period=float(period), seed=seed)
