"""Recipes -> scenes: the chunked, deterministic generation of the scene a checked recipe
(:mod:`.recipe`) describes; the arrays become a scene through the one checked constructor
(:func:`viewer.scenes.construct.scene_from_arrays`), as a file's or an import's do.

Random streams: the seed is split (``SeedSequence(seed).spawn``) into independent streams for the
layout, positions, radii, looks and motion, so e.g. changing the radius model leaves positions unchanged,
changing N leaves the cluster layout unchanged, and adding a [motion] table changes nothing else.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from viewer.system.memory import available, format_bytes

from .construct import scene_from_arrays
from .errors import SceneError
from .generators import GENERATORS
from .limits import MAX_N
from .look import make_colours, make_sizes
from .radii import sample_radii
from .recipe import MOTION_FIELDS, RECIPE_FIELDS, RESERVED_FIELDS, check_motion, check_recipe
from .scene import MOTION_KINDS, Motion, Scene

__all__ = [
    "CHUNK", "MOVER_BYTES", "estimate_bytes", "generate_recipe", "generate_scene", "make_motion",
    # the recipe's rules (.recipe) and limits (.limits), kept importable from here
    "MAX_N", "MOTION_FIELDS", "RECIPE_FIELDS", "RESERVED_FIELDS", "check_motion", "check_recipe",
]

CHUNK = 1 << 18  # objects placed per step; a fixed constant, so the random streams never depend on the machine
_RECIPE_FIELD = {"radii": "radius", "centres": "origin"}  # the recipe field that decides an array
MOVER_BYTES = 150  # peak memory of a moving object's motion parameters, bytes (measured: 135)


def estimate_bytes(recipe: Mapping) -> int:
    """The peak memory generating a checked recipe's scene costs, bytes: N times its generator's
    ``bytes_per_object`` plus the movers' motion parameters (:data:`MOVER_BYTES` each)."""
    n = int(recipe["n"])
    movers = int(round(recipe["motion"]["share"] * n)) if recipe.get("motion") else 0
    return n * GENERATORS[recipe["generator"]].bytes_per_object + movers * MOVER_BYTES


def check_memory(recipe: Mapping) -> None:
    """Refuse (:class:`SceneError` naming ``n``) a checked recipe whose scene needs more memory than this
    process may use (:func:`viewer.system.memory.available`): refused with the estimate, not killed by the
    kernel mid-generation with no message."""
    need = estimate_bytes(recipe)
    have, why = available()
    if need > have:
        raise SceneError(f"{recipe['n']:,} objects need about {format_bytes(need)} of memory to generate; this "
                         f"process may use {format_bytes(have)} ({why}); lower n", "n")


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


def _rng(seed_seq: np.random.SeedSequence) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed_seq))


def generate_recipe(
    recipe: Mapping, progress: Callable[[int, int], None] | None = None, checked: bool = False
) -> Scene:
    """Generate the scene a recipe describes (see the module docstring for the fields).

    ``progress(done, n)`` is called after each chunk of :data:`CHUNK` objects.
    """
    try:
        r = dict(recipe) if checked else check_recipe(recipe)
    except RecursionError:  # a value nested just shallowly enough to parse
        raise SceneError("not a recipe: values nested too deeply") from None
    check_memory(r)
    gen = GENERATORS[r["generator"]]
    n, world = r["n"], float(r["world"])
    origin = np.asarray(r["origin"], dtype=np.float64)
    lo, hi = origin - world / 2, origin + world / 2
    # spawn(6)'s first five children are spawn(5)'s, its first four spawn(4)'s: the motion stream and the
    # generator's own arrays stream (Generator.arrays) change no other stream
    s_layout, s_pos, s_rad, s_look, s_motion, s_arrays = np.random.SeedSequence(r["seed"]).spawn(6)
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
    look_rng = _rng(s_look)
    sizes = make_sizes(look_rng, radii, r["look"])
    if gen.colours is not None and r["look"]["colour_by"] == "auto":
        colours = gen.colours(look_rng, centres, radii, category, r["params"])
    else:
        colours = make_colours(look_rng, centres, radii, category, r["look"])
    motion = make_motion(_rng(s_motion), n, r["motion"]) if r.get("motion") else None
    more = gen.arrays(_rng(s_arrays), centres, radii, sizes, category, r["params"]) if gen.arrays else {}
    sizes = more.pop("sizes", sizes)
    if r.get("radius_scale") is not None:  # a global view-distance scale: after the look, which reads radii
        radii *= r["radius_scale"]
        for key in ("lod", "begin"):  # a generator's ranges scale with its view distances
            if more.get(key) is not None:
                more[key] = more[key] * r["radius_scale"]
    if r.get("hlod") is not None:  # HLOD proxies appended after the n objects (scenes/hlod.py)
        from .hlod import add_hlod

        arrays, _ = add_hlod(r["hlod"], lo, centres, radii, sizes, colours, category, **more)
        centres, radii, sizes, colours, category = (arrays.pop(k) for k in
                                                    ("centres", "radii", "sizes", "colours", "category"))
        more = {k: v for k, v in arrays.items() if v is not None}
    try:
        return scene_from_arrays(
            centres, radii, sizes=sizes, colours=colours, category=category, world=world, origin=origin,
            seed=r["seed"], name=r["name"], cluster_centres=layout.cluster_centres,
            cluster_spread=layout.cluster_spread, recipe=r, extras=layout.extras, motion=motion, **more,
        )
    except SceneError as exc:
        # the recipe's bounds keep what it generates in the numeric domain; a model drawing past them by
        # rounding is refused here, naming what the recipe says about it, not by an index mid-run
        scaled = exc.field == "radii" and r.get("radius_scale") is not None
        field = "radius_scale" if scaled else _RECIPE_FIELD.get(exc.field, exc.field)
        raise SceneError(f"the recipe generated {exc.problem}", field) from None


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
