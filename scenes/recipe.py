"""Recipes: the checked recipe dict a generator is run from (:func:`check_recipe`).

A recipe (from TOML or a Python dict) has these fields::

    name         str, optional (default: the file's stem, or "GENERATOR-N")
    description  str, optional
    generator    str, required: a key of GENERATORS
    n            int, required: 1 .. MAX_N (5e8)
    seed         int >= 0, default 0
    world        float 1e-6 .. 1e15, default 10000: edge of the world box, world units
    origin       [x, y, z], default [0, 0, 0]: centre of the world box
    [params]     the generator's parameters (see GENERATORS[...].params)
    [radius]     a radius model: {model = "...", ...} (see RADIUS_MODELS); default heavy-tailed
    [look]       sizes and colours (see scenes.look.LOOK_PARAMS)
    [motion]     optional: a share of the objects moves (see MOTION_FIELDS); absent: a static scene
    radius_scale float > 0 .. 1e6, optional: a global view-distance scale, every radius multiplied by it
                 after the look is drawn (``viewer map --budget`` finds one); absent: 1
    [hlod]       optional: group the objects by grid cell and append one HLOD proxy per group (see
                 :data:`viewer.scenes.hlod.HLOD_FIELDS` and :mod:`viewer.scenes.hlod`); absent: none

Generation (:mod:`.build`) runs a checked recipe; the ``.npz`` reader checks the recipe a file keeps the
same way (through :func:`viewer.scenes.construct.scene_from_arrays`).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ._schema import REQUIRED, Param, validate_table
from .errors import SceneError
from .generators import GENERATORS
from .limits import (MAX_N, MAX_PERIOD, MAX_SPEED, MAX_WORLD, MIN_ORBIT, MIN_PERIOD, MIN_WORLD, check_box,
                     check_name)
from .hlod import HLOD_FIELDS
from .look import check_look
from .radii import DEFAULT_RADIUS, check_radius_spec
from .scene import MOTION_KINDS

__all__ = ["MOTION_FIELDS", "RECIPE_FIELDS", "RESERVED_FIELDS", "check_motion", "check_recipe"]

RECIPE_FIELDS: dict[str, Param] = {
    "name": Param("str", None, doc="the scene's name (default: the file's stem)"),
    "description": Param("str", "", doc="free text"),
    "generator": Param("str", REQUIRED, choices=tuple(GENERATORS), doc="which generator places the objects"),
    "n": Param("int", REQUIRED, lo=1, hi=MAX_N, doc="number of objects"),
    "seed": Param("int", 0, lo=0, hi=2**63 - 1, doc="random seed"),
    "world": Param("float", 10_000.0, lo=MIN_WORLD, hi=MAX_WORLD, doc="edge of the world box, world units"),
    "origin": Param("vec3", [0.0, 0.0, 0.0], doc="centre of the world box, world units"),
    "params": Param("table", {}, doc="the generator's parameters"),
    "radius": Param("table", None, doc="the view-radius model"),
    "look": Param("table", {}, doc="sizes and colours"),
    "motion": Param("table", None, doc="moving objects (absent: a static scene)"),
    "radius_scale": Param("float", None, lo=0.0, lo_open=True, hi=1e6,
                          doc="every view radius times this, after sizes and colours (absent: 1)"),
    "hlod": Param("table", None, doc="HLOD proxies, one per grid cell of objects (absent: none)"),
}

# Sections a later version will read. A recipe using one gets a clear "not supported yet" error;
# supporting one = moving it into RECIPE_FIELDS with a checker below.
RESERVED_FIELDS: dict[str, str] = {}

MOTION_FIELDS: dict[str, Param] = {
    "share": Param("float", 0.1, lo=0.0, hi=1.0, doc="share of the objects that move"),
    "model": Param("str", "mixed", choices=(*MOTION_KINDS, "mixed"),
                   doc="how they move: drift, orbit, random-walk, or mixed (a third each)"),
    "speed": Param("float", 20.0, lo=0.0, lo_open=True, hi=MAX_SPEED / 1.5,  # each mover: 0.5x .. 1.5x
                  
                   doc="typical speed, world units per second (each mover's is uniform in 0.5x .. 1.5x)"),
    "orbit_min": Param("float", 5.0, lo=MIN_ORBIT, hi=1e15, doc="smallest orbit radius, world units"),
    "orbit_max": Param("float", 50.0, lo=MIN_ORBIT, hi=1e15, doc="largest orbit radius, world units"),
    "radius_pulse": Param("float", 0.0, lo=0.0, hi=0.95,
                          doc="movers' view radii swing by this fraction: r0 (1 + pulse sin(2 pi t / period + phase))"),
    "radius_period": Param("float", 5.0, lo=MIN_PERIOD, hi=MAX_PERIOD,  # a shorter one overflows 2 pi t / period
                           doc="period of the radius swing, seconds"),
}


def check_motion(table, prefix: str = "motion") -> dict:
    """Validate a ``[motion]`` table; return it with defaults filled (:class:`SceneError` naming the field)."""
    m = validate_table(table, MOTION_FIELDS, prefix, what="the [motion] table")
    if m["orbit_min"] > m["orbit_max"]:
        raise SceneError(f"must be <= orbit_max ({m['orbit_max']:g}), got {m['orbit_min']:g}", f"{prefix}.orbit_min")
    return m


def check_recipe(recipe: Mapping) -> dict:
    """Validate a recipe; return a new dict with every field present and checked (defaults filled).

    Raises :class:`SceneError` naming the field (dotted path) on the first problem.
    """
    if not isinstance(recipe, Mapping):
        raise SceneError(f"a recipe must be a table, got {type(recipe).__name__}")
    for key, why in RESERVED_FIELDS.items():
        if key in recipe:
            raise SceneError(why, key)
    r = validate_table(recipe, RECIPE_FIELDS, "", what="the recipe")
    check_box(np.asarray(r["origin"], dtype=np.float64), r["world"], "origin")
    gen = GENERATORS[r["generator"]]
    r["params"] = validate_table(r["params"], gen.params, "params", what=f"params of generator {gen.name!r}")
    gen.check(r["params"], r["world"], "params")
    radius = r["radius"]
    if gen.radii is not None:  # the generator derives its own view distances
        if radius is not None:
            raise SceneError(f"generator {gen.name!r} derives view distances itself (see its params); "
                             "remove the [radius] table", "radius")
    else:
        if radius is None:
            radius = gen.default_radius(r["world"]) if gen.default_radius else dict(DEFAULT_RADIUS)
        r["radius"] = check_radius_spec(radius, "radius")
    r["look"] = check_look({**(gen.default_look or {}), **r["look"]}, "look")
    if r["motion"] is None:
        del r["motion"]  # a static recipe stays exactly what it was before [motion] existed
    else:
        r["motion"] = check_motion(r["motion"], "motion")
    if r["radius_scale"] is None:
        del r["radius_scale"]  # as for [motion]: a recipe without it checks to exactly what it did before
    if r["hlod"] is None:
        del r["hlod"]  # as for [motion]
    else:
        r["hlod"] = validate_table(r["hlod"], HLOD_FIELDS, "hlod", what="the [hlod] table")
        if r.get("motion") is not None:
            raise SceneError("a scene with [hlod] proxies cannot move (a proxy stands for its group where it "
                             "was made); remove [motion] or [hlod]", "hlod")
    if r["name"] is None:
        r["name"] = f"{r['generator']}-{r['n']}"
    check_name(r["name"])
    return r
