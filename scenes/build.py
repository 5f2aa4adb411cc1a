"""Recipes -> scenes: the checked recipe dict and the chunked, deterministic generation.

A recipe (from TOML or a Python dict) has these fields::

    name         str, optional (default: the file's stem, or "GENERATOR-N")
    description  str, optional
    generator    str, required: a key of GENERATORS
    n            int, required: 1 .. 500_000_000
    seed         int >= 0, default 0
    world        float 1e-6 .. 1e15, default 10000: edge of the world box, world units
    origin       [x, y, z], default [0, 0, 0]: centre of the world box
    [params]     the generator's parameters (see GENERATORS[...].params)
    [radius]     a radius model: {model = "...", ...} (see RADIUS_MODELS); default heavy-tailed
    [look]       sizes and colours (see scenes.look.LOOK_PARAMS)
    [motion]     optional: a share of the objects moves (see MOTION_FIELDS); absent: a static scene

Random streams: the seed is split (``SeedSequence(seed).spawn``) into independent streams for the
layout, positions, radii, looks and motion, so e.g. changing the radius model leaves positions unchanged,
changing N leaves the cluster layout unchanged, and adding a [motion] table changes nothing else.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from viewer.domain import COORD_LIMIT, RADIUS_LIMIT, first_outside

from ._schema import REQUIRED, Param, validate_table
from .errors import SceneError
from .format import MAX_SPEED, MAX_WORLD, MIN_ORBIT, MIN_WORLD, check_box
from .generators import GENERATORS
from .look import check_look, make_colours, make_sizes
from .radii import DEFAULT_RADIUS, check_radius_spec, sample_radii
from .scene import MOTION_KINDS, Motion, Scene

__all__ = [
    "MAX_N", "CHUNK", "MOTION_FIELDS", "RECIPE_FIELDS", "RESERVED_FIELDS", "check_motion", "check_recipe",
    "generate_recipe", "generate_scene", "make_motion",
]

MAX_N = 500_000_000
CHUNK = 1 << 18  # objects placed per step; a fixed constant, so the random streams never depend on the machine

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
    "radius_period": Param("float", 5.0, lo=0.0, lo_open=True, hi=1e9, doc="period of the radius swing, seconds"),
}


def check_motion(table, prefix: str = "motion") -> dict:
    """Validate a ``[motion]`` table; return it with defaults filled (:class:`SceneError` naming the field)."""
    m = validate_table(table, MOTION_FIELDS, prefix, what="the [motion] table")
    if m["orbit_min"] > m["orbit_max"]:
        raise SceneError(f"must be <= orbit_max ({m['orbit_max']:g}), got {m['orbit_min']:g}", f"{prefix}.orbit_min")
    return m


def _unit_vectors(rng: np.random.Generator, m: int) -> np.ndarray:
    """(m, 3) float64 unit vectors uniform on the sphere: points uniform in the cube kept inside the
    unit ball (rejection), normalised. Only exact IEEE operations (sqrt, divide), so portable."""
    out = np.empty((m, 3), dtype=np.float64)
    done = 0
    while done < m:
        want = m - done
        v = rng.random((2 * want + 16, 3)) * 2.0 - 1.0
        n2 = (v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1]) + v[:, 2] * v[:, 2]
        v = v[(n2 <= 1.0) & (n2 > 1e-6)][:want]
        out[done : done + v.shape[0]] = v / np.sqrt((v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1]) + v[:, 2] * v[:, 2])[:, None]
        done += v.shape[0]
    return out


def make_motion(rng: np.random.Generator, n: int, spec: Mapping) -> Motion:
    """Draw the per-object motion parameters a checked ``[motion]`` table describes, for ``n`` objects.

    The movers are round(share * n) distinct objects; every draw comes from ``rng`` in a fixed order, so a
    seed gives the same motion on any machine.
    """
    m = int(round(spec["share"] * n))
    ids = np.sort(rng.choice(n, m, replace=False)).astype(np.int64) if m else np.zeros(0, dtype=np.int64)
    if spec["model"] == "mixed":
        kind = rng.integers(0, len(MOTION_KINDS), m).astype(np.int8)
    else:
        kind = np.full(m, MOTION_KINDS.index(spec["model"]), dtype=np.int8)
    speed = spec["speed"] * (0.5 + rng.random(m))
    direction = _unit_vectors(rng, m)
    other = _unit_vectors(rng, m)
    axis = np.cross(direction, other)
    norm = np.sqrt((axis[:, 0] * axis[:, 0] + axis[:, 1] * axis[:, 1]) + axis[:, 2] * axis[:, 2])
    flat = norm < 1e-9  # `other` (anti)parallel to `direction`: cross with the axis it is least along
    if flat.any():
        ref = np.zeros((int(flat.sum()), 3))
        ref[np.arange(ref.shape[0]), np.argmin(np.abs(direction[flat]), axis=1)] = 1.0
        axis[flat] = np.cross(direction[flat], ref)
        norm = np.sqrt((axis[:, 0] * axis[:, 0] + axis[:, 1] * axis[:, 1]) + axis[:, 2] * axis[:, 2])
    axis /= norm[:, None]
    orbit = spec["orbit_min"] + rng.random(m) * (spec["orbit_max"] - spec["orbit_min"])
    phase = rng.random(m) * (2.0 * np.pi)
    seed = int(rng.integers(0, 2**62))
    is_orbit = kind == MOTION_KINDS.index("orbit")
    is_walk = kind == MOTION_KINDS.index("random-walk")
    direction[is_walk] = 0.0
    axis[~is_orbit] = 0.0
    orbit[~is_orbit] = 0.0
    return Motion(ids=ids, kind=kind, speed=speed, direction=direction, axis=axis, orbit_radius=orbit, phase=phase,
                  radius_pulse=float(spec["radius_pulse"]), radius_period=float(spec["radius_period"]), seed=seed)


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
    if r["name"] is None:
        r["name"] = f"{r['generator']}-{r['n']}"
    return r


def _check_generated(centres: np.ndarray, radii: np.ndarray) -> None:
    """What a recipe generated is in the numeric domain (:mod:`viewer.domain`): the recipe's bounds make
    this so; a model drawing past them by rounding is still refused here, not by an index mid-run."""
    i = first_outside(radii, RADIUS_LIMIT, nonnegative=True)
    if i >= 0:
        raise SceneError(f"the model drew a view radius of {radii[i]!r}, outside the numeric domain "
                         "(0 .. 2**100, viewer.domain)", "radius")
    i = first_outside(centres, COORD_LIMIT)
    if i >= 0:
        raise SceneError(f"the generator placed an object at {centres[i].tolist()}, outside the numeric domain "
                         "(|coordinate| <= 2**100, viewer.domain)", "origin")


def _rng(seed_seq: np.random.SeedSequence) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed_seq))


def generate_recipe(
    recipe: Mapping, progress: Callable[[int, int], None] | None = None, checked: bool = False
) -> Scene:
    """Generate the scene a recipe describes (see the module docstring for the fields).

    ``progress(done, n)`` is called after each chunk of :data:`CHUNK` objects.
    """
    r = dict(recipe) if checked else check_recipe(recipe)
    gen = GENERATORS[r["generator"]]
    n, world = r["n"], float(r["world"])
    origin = np.asarray(r["origin"], dtype=np.float64)
    lo, hi = origin - world / 2, origin + world / 2
    # spawn(5)'s first four children are spawn(4)'s: the motion stream changes no other stream
    s_layout, s_pos, s_rad, s_look, s_motion = np.random.SeedSequence(r["seed"]).spawn(5)
    r_pos, r_rad = _rng(s_pos), _rng(s_rad)
    layout = gen.setup(_rng(s_layout), n, lo, hi, r["params"], r["radius"])

    centres = np.empty((n, 3), dtype=np.float64)
    radii = np.empty(n, dtype=np.float64)
    category = np.empty(n, dtype=np.int32)
    for a in range(0, n, CHUNK):
        b = min(n, a + CHUNK)
        radii[a:b] = (gen.radii(r_rad, b - a, r["params"]) if gen.radii is not None
                      else sample_radii(r_rad, b - a, r["radius"]))
        centres[a:b], category[a:b] = gen.sample(r_pos, layout, b - a, radii[a:b], lo, hi, r["params"])
        if progress is not None:
            progress(b, n)
    _check_generated(centres, radii)
    look_rng = _rng(s_look)
    sizes = make_sizes(look_rng, radii, r["look"])
    if gen.colours is not None and r["look"]["colour_by"] == "auto":
        colours = gen.colours(look_rng, centres, radii, category, r["params"])
    else:
        colours = make_colours(look_rng, centres, radii, category, r["look"])
    motion = make_motion(_rng(s_motion), n, r["motion"]) if r.get("motion") else None
    return Scene(
        name=r["name"],
        centres=centres,
        radii=radii,
        sizes=sizes,
        colours=colours,
        category=category,
        world=world,
        seed=r["seed"],
        recipe=r,
        cluster_centres=np.ascontiguousarray(layout.cluster_centres, dtype=np.float64).reshape(-1, 3),
        cluster_spread=np.ascontiguousarray(layout.cluster_spread, dtype=np.float64).reshape(-1),
        extras=layout.extras,
        origin=origin,
        motion=motion,
        style=r["look"]["style"],
        sky=r["look"]["sky"],
    )


def generate_scene(
    kind: str,
    n: int,
    seed: int = 0,
    world: float = 10_000.0,
    radius: dict | None = None,
    *,
    origin=(0.0, 0.0, 0.0),
    look: dict | None = None,
    motion: dict | None = None,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    **params,
) -> Scene:
    """Generate a scene in memory (no files).

    Parameters
    ----------
    kind : a key of :data:`GENERATORS` ("uniform", "clustered", "diagonal", "remote-cluster",
        "octaves", "coincident")
    n : number of objects, 1 .. 5e8
    seed : int >= 0; the same arguments and seed give bit-identical arrays on any machine
    world : edge of the world box, world units (the box is centred at ``origin``)
    radius : a radius-model spec, e.g. ``{"model": "log-uniform", "min": 5, "max": 30}``; None: the
        generator's default (heavy-tailed for most)
    origin : (3,) centre of the world box, world units
    look : a look table (see :mod:`viewer.scenes.look`); None: the default look
    motion : a ``[motion]`` table (see :data:`MOTION_FIELDS`), e.g. ``{"share": 0.1}``; None: static
    **params : the generator's parameters (e.g. ``clusters=32`` for "clustered")

    Raises
    ------
    SceneError
        for any bad argument, naming it.
    """
    recipe = {
        "generator": kind,
        "n": n,
        "seed": seed,
        "world": world,
        "origin": origin.tolist() if isinstance(origin, np.ndarray) else origin,
        "params": params,
        "look": {} if look is None else look,
    }
    if radius is not None:
        recipe["radius"] = radius
    if motion is not None:
        recipe["motion"] = motion
    if name is not None:
        recipe["name"] = name
    return generate_recipe(recipe, progress)
