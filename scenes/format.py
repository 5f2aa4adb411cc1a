"""The ``.npz`` scene format: a numpy zip archive of named arrays, no pickles.

Format version 2 (version 1 files, without motion, are read as before). Entries (N objects, K clusters,
M moving objects):

=================  ==========================  ========  =============================================
entry              shape / dtype               required  meaning
=================  ==========================  ========  =============================================
format_version     () integer                  yes       2 (or 1)
centres            (N, 3) real                 yes       world units; stored float64
radii              (N,) real, >= 0             yes       view distance, world units; stored float64
sizes              (N,) real, >= 0             no        drawn half-extent; default from the radii
colours            (N, 4) or (N, 3) integer    no        RGBA / RGB 0..255; default by cluster/radius
category           (N,) integer >= -1          no        cluster id, -1 none; default all -1
world              () real > 0                 no        edge of the world box; default: fits centres
origin             (3,) real                   no        centre of the world box; default: fits centres
seed               () integer                  no        default 0
name               () str                      no        default: the file's stem
cluster_centres    (K, 3) real                 no        default (0, 3)
cluster_spread     (K,) real >= 0              no        default (0,)
recipe             () str (JSON)               no        the recipe the scene was generated from
extras             () str (JSON object)        no        generator-specific facts
look               () str (JSON object)        no        how the scene is drawn: {"style", "sky"}
                                                         (scenes.look.SCENE_LOOK_PARAMS); default:
                                                         the recipe's [look], else "objects", no sky
motion_ids         (M,) integer                v2        the moving objects: distinct, sorted, 0..N-1
motion_kind        (M,) integer                v2        0 drift, 1 orbit, 2 random walk
motion_speed       (M,) real >= 0              v2        world units per second
motion_direction   (M, 3) real                 v2        drift heading / orbit centre -> start (unit)
motion_axis        (M, 3) real                 v2        orbit heading at the start (unit, perpendicular)
motion_orbit       (M,) real >= 0              v2        orbit radius, world units
motion_phase       (M,) real                   v2        phase of the view-radius pulse, radians
motion_params      () str (JSON object)        v2        radius_pulse, radius_period, seed
mesh_*             see viewer.scenes.meshes    v2        the meshes objects instance (imported glTF)
=================  ==========================  ========  =============================================

``look`` is written only when it differs from the default (style "objects", no sky), so a file of an
ordinary scene is what it was before the entry existed. The ``motion_*`` entries (see :class:`viewer.scenes.scene.Motion`) come all together or not at all (a static
scene), and only in a version 2 file. Every centre must lie inside the world box. Any other entry is
an error (a misspelt name would otherwise be silently ignored).
"""

from __future__ import annotations

import json
import math
import operator
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from viewer.domain import COORD_LIMIT, RADIUS_LIMIT, first_outside

from .errors import SceneError
from .look import SCENE_LOOK_PARAMS, check_scene_look, default_look, make_colours, make_sizes
from .meshes import MESH_ENTRIES, mesh_entries, read_mesh_entries
from .scene import MOTION_KINDS, Motion, Scene

__all__ = [
    "FORMAT_VERSION", "READ_VERSIONS", "NPZ_FIELDS", "MOTION_ENTRIES", "MAX_SPEED", "MAX_WORLD", "MIN_ORBIT",
    "MIN_WORLD", "check_box",
    "fit_box", "read_npz", "save_scene", "scene_from_arrays",
]

FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)
MAX_N = 500_000_000
MAX_SPEED = 1.5e12  # world units per second: a mover's speed (a recipe's [motion] speed <= 1e12, times 1.5)
MIN_ORBIT = 1e-6  # world units: a smaller orbit would turn faster than float64 can follow
MIN_WORLD = 1e-6  # world units: the smallest world box (camera paths and steps are fractions of it)
MAX_WORLD = 1e15  # world units: the largest world box a recipe asks for (a file's may reach the domain's edge)
_SEED_LIMIT = 2**63  # seeds are stored as 64-bit integers and fed to 64-bit streams

MOTION_ENTRIES = (
    "motion_ids", "motion_kind", "motion_speed", "motion_direction", "motion_axis", "motion_orbit",
    "motion_phase", "motion_params",
)

NPZ_FIELDS = (
    "format_version", "centres", "radii", "sizes", "colours", "category", "world", "origin", "seed",
    "name", "cluster_centres", "cluster_spread", "recipe", "extras", "look", *MOTION_ENTRIES, *MESH_ENTRIES,
)


def save_scene(scene: Scene, path) -> Path:
    """Write ``scene`` to ``path`` (.npz, uncompressed) atomically: a temporary file in the same
    directory, then ``os.replace``; nothing is left behind on failure. Returns the path."""
    path = Path(path)
    if path.suffix != ".npz":
        raise SceneError(f"a scene data file must end in .npz, got {path.name!r}", source=str(path))
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise SceneError(f"directory {str(directory)!r} does not exist", source=str(path))
    if path.is_dir():
        raise SceneError("is a directory, not a file name to write the scene to", source=str(path))
    arrays = {
        "format_version": np.array(FORMAT_VERSION, dtype=np.int64),
        "centres": np.ascontiguousarray(scene.centres, dtype=np.float64),
        "radii": np.ascontiguousarray(scene.radii, dtype=np.float64),
        "sizes": np.ascontiguousarray(scene.sizes, dtype=np.float32),
        "colours": np.ascontiguousarray(scene.colours, dtype=np.uint8),
        "category": np.ascontiguousarray(scene.category, dtype=np.int32),
        "world": np.array(float(scene.world), dtype=np.float64),
        "origin": np.asarray(scene.origin, dtype=np.float64).reshape(3),
        "seed": np.array(int(scene.seed), dtype=np.uint64),
        "name": np.array(str(scene.name)),
        "cluster_centres": np.asarray(scene.cluster_centres, dtype=np.float64).reshape(-1, 3),
        "cluster_spread": np.asarray(scene.cluster_spread, dtype=np.float64).reshape(-1),
        "recipe": np.array("" if scene.recipe is None else json.dumps(scene.recipe, sort_keys=True)),
        "extras": np.array(json.dumps(scene.extras or {}, sort_keys=True)),
    }
    look = {"style": getattr(scene, "style", "objects"), "sky": getattr(scene, "sky", None)}
    if look != check_scene_look(None):
        arrays["look"] = np.array(json.dumps(look, sort_keys=True))
    mo = getattr(scene, "motion", None)
    if mo is not None:
        arrays.update(
            motion_ids=np.ascontiguousarray(mo.ids, dtype=np.int64),
            motion_kind=np.ascontiguousarray(mo.kind, dtype=np.int8),
            motion_speed=np.ascontiguousarray(mo.speed, dtype=np.float64),
            motion_direction=np.ascontiguousarray(mo.direction, dtype=np.float64).reshape(-1, 3),
            motion_axis=np.ascontiguousarray(mo.axis, dtype=np.float64).reshape(-1, 3),
            motion_orbit=np.ascontiguousarray(mo.orbit_radius, dtype=np.float64),
            motion_phase=np.ascontiguousarray(mo.phase, dtype=np.float64),
            motion_params=np.array(json.dumps({"radius_pulse": float(mo.radius_pulse),
                                               "radius_period": float(mo.radius_period), "seed": int(mo.seed)},
                                              sort_keys=True)),
        )
    if getattr(scene, "meshes", None) is not None:
        arrays.update(mesh_entries(scene.meshes))
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_umask())  # mkstemp's 0600 is for the temporary name only
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        _unlink(tmp)
        raise SceneError(f"cannot write: {exc.strerror or exc}", source=str(path)) from None
    except BaseException:  # Ctrl-C, SIGTERM (the CLI turns it into SystemExit), a bug: no temporary left
        _unlink(tmp)
        raise
    return path


def _umask() -> int:
    """The process's umask (read by setting it and back: there is no other portable way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _unlink(path) -> None:
    if path is not None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


# --------------------------------------------------------------------------- reading


def _entry(npz, key: str) -> np.ndarray:
    try:
        return npz[key]
    except Exception as exc:  # zipfile, zlib, numpy header errors: whatever a damaged member raises
        raise SceneError(f"cannot be read (truncated or corrupt file?): {type(exc).__name__}: {exc}", key) from None


def _real(a: np.ndarray, key: str) -> None:
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise SceneError(f"must hold real numbers, got dtype {a.dtype}", key)


def _int(a: np.ndarray, key: str) -> None:
    if a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
        raise SceneError(f"must hold integers, got dtype {a.dtype}", key)


def _float64(a, key: str) -> np.ndarray:
    """``a`` as a C-contiguous float64 array, after checking it holds real numbers."""
    a = np.asarray(a)
    _real(a, key)
    return np.ascontiguousarray(a, dtype=np.float64)


def _shape(a: np.ndarray, shape: tuple, key: str, n_from: str = "centres") -> None:
    if a.ndim != len(shape) or any(w is not None and s != w for s, w in zip(a.shape, shape)):
        want = "(" + ", ".join("any" if w is None else str(w) for w in shape) + ("," if len(shape) == 1 else "") + ")"
        if a.ndim == len(shape) and a.ndim >= 1 and shape[0] is not None and a.shape[0] != shape[0]:
            raise SceneError(f"has {a.shape[0]} rows but {n_from} has {shape[0]}", key)
        raise SceneError(f"must have shape {want}, got {a.shape}", key)


def _in_domain(a: np.ndarray, key: str, limit: float = COORD_LIMIT, nonnegative: bool = False) -> None:
    """Every value finite and within +-``limit`` (``0..limit`` when ``nonnegative``): the numeric domain
    of :mod:`viewer.domain`, so whatever a scene holds, every index can answer exactly."""
    if first_outside(a.reshape(-1), limit, nonnegative) < 0:
        return
    lo = 0.0 if nonnegative else -limit
    with np.errstate(invalid="ignore"):
        bad = ~((a >= lo) & (a <= limit))
    at = np.unravel_index(int(np.flatnonzero(bad)[0]), a.shape)
    v = float(a[at])
    where = f"{key}[{', '.join(map(str, at))}]" if a.ndim else key
    if not np.isfinite(v):
        raise SceneError(f"must be finite, {where} is {v!r}", key)
    if nonnegative and v < 0:
        raise SceneError(f"must be >= 0, {where} is {v!r}", key)
    if limit == COORD_LIMIT:
        why = f"outside the numeric domain (|value| <= 2**100 = {limit:.4g}, viewer.domain)"
    else:
        why = f"beyond the limit {limit:g}"
    raise SceneError(f"{where} is {v!r}, {why}", key)


def _scalar_str(a: np.ndarray, key: str) -> str:
    if a.shape != () or a.dtype.kind != "U":
        raise SceneError(f"must be a single string, got dtype {a.dtype} shape {a.shape}", key)
    return str(a[()])


def _json(a: np.ndarray, key: str, want: type):
    text = _scalar_str(a, key)
    if text == "" and want is dict and key == "recipe":
        return None
    try:
        v = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SceneError(f"is not valid JSON: {exc}", key) from None
    except RecursionError:
        raise SceneError("is nested too deeply to be a scene's JSON", key) from None
    if not isinstance(v, want):
        raise SceneError(f"must be a JSON {want.__name__}", key)
    return v


def _json_numbers(v, key: str, depth: int = 0) -> None:
    """Every number inside a JSON value is finite and in the numeric domain (a generated path or a
    tool reading ``extras`` must never meet 1e308 or NaN there)."""
    if depth > 64:
        raise SceneError("is nested more than 64 levels deep", key)
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return
    if isinstance(v, (int, float)):
        if not (math.isfinite(v) and abs(v) <= COORD_LIMIT):
            shown = v if isinstance(v, float) or abs(v) < 10**30 else f"an integer of {len(str(abs(v)))} digits"
            raise SceneError(f"holds {shown}, outside the numeric domain (finite, |value| <= 2**100)", key)
        return
    items = v.items() if isinstance(v, dict) else enumerate(v)
    for k, x in items:
        _json_numbers(x, f"{key}.{k}" if isinstance(v, dict) else f"{key}[{k}]", depth + 1)


def read_npz(path) -> Scene:
    """Read and check a ``.npz`` scene file (see the module docstring); :class:`SceneError`
    (without the file name: the caller adds it) on any problem."""
    try:
        npz = np.load(path, allow_pickle=False)
    except (zipfile.BadZipFile, ValueError, EOFError, OSError) as exc:
        raise SceneError(f"not a readable .npz scene file (truncated or corrupt?): {exc}") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise SceneError("not a .npz archive (a single .npy array?): a scene file holds named entries")
    with npz:
        return _from_entries(npz, Path(path).stem)


def _from_entries(npz, stem: str) -> Scene:
    keys = list(npz.files)
    for k in keys:
        if k not in NPZ_FIELDS:
            raise SceneError(f"unknown entry in the scene file (known: {', '.join(NPZ_FIELDS)})", k)
    for k in ("format_version", "centres", "radii"):
        if k not in keys:
            raise SceneError("missing (required in a scene file)", k)

    v = _entry(npz, "format_version")
    _int(v, "format_version")
    if v.shape != ():
        raise SceneError(f"must be a single integer, got shape {v.shape}", "format_version")
    version = int(v)
    if version not in READ_VERSIONS:
        raise SceneError(
            f"unknown format version {version} (this viewer reads versions {', '.join(map(str, READ_VERSIONS))})",
            "format_version",
        )
    # centres first, alone: its shape is checked before the other (possibly large) entries are read
    c = _entry(npz, "centres")
    _real(c, "centres")
    if c.ndim != 2 or c.shape[1] != 3:
        raise SceneError(f"must have shape (N, 3), got {c.shape}", "centres")
    if c.shape[0] > MAX_N:
        raise SceneError(f"holds {c.shape[0]} objects, more than the limit {MAX_N}", "centres")

    def opt(key):
        return _entry(npz, key) if key in keys else None

    s = opt("seed")
    seed = 0
    if s is not None:
        _int(s, "seed")
        if s.shape != ():
            raise SceneError(f"must be a single integer >= 0, got shape {s.shape}", "seed")
        seed = int(s)
    name = _scalar_str(opt("name"), "name") if "name" in keys else stem
    recipe = _json(opt("recipe"), "recipe", dict) if "recipe" in keys else None
    extras = _json(opt("extras"), "extras", dict) if "extras" in keys else {}
    look = _json(opt("look"), "look", dict) if "look" in keys else None
    w = opt("world")
    if w is not None:
        _real(w, "world")
        if w.shape != ():
            raise SceneError(f"must be a single number, got shape {w.shape}", "world")
    motion = _motion(npz, keys, c.shape[0], version)
    meshes = read_mesh_entries(lambda key: _entry(npz, key), keys, c.shape[0])
    return scene_from_arrays(
        c, _entry(npz, "radii"), sizes=opt("sizes"), colours=opt("colours"), category=opt("category"),
        world=w, origin=opt("origin"), seed=seed, name=name, cluster_centres=opt("cluster_centres"),
        cluster_spread=opt("cluster_spread"), recipe=recipe, extras=extras, motion=motion, meshes=meshes,
        look=look,
    )


def fit_box(centres: np.ndarray, radii: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """The smallest cube (``origin`` (3,) float64, edge ``world``) around ``centres`` ((N, 3) float64,
    N >= 1) whose corners ``origin -+ world / 2``, computed as :attr:`Scene.bounds` computes them, hold
    every centre exactly: the edge is rounded up, never down, so no edge point is lost to rounding.
    Coincident centres get a box of edge ``max(1, 2 * max(radii))``; no box is smaller than
    :data:`MIN_WORLD`."""
    lo, hi = centres.min(axis=0), centres.max(axis=0)
    origin = lo / 2 + hi / 2  # halves first: no overflow, and lo <= origin <= hi
    world = 2.0 * float(max(np.max(hi - origin), np.max(origin - lo)))
    if world == 0.0:
        r = 0.0 if radii is None or radii.size == 0 else float(radii.max())
        world = max(1.0, 2.0 * r)
    world = max(world, MIN_WORLD)
    step = world * 2.0**-52
    while True:
        h = world / 2.0
        if ((origin - h) <= lo).all() and ((origin + h) >= hi).all():
            return origin, world
        world += step  # a few ulps at most; each miss doubles the step
        step *= 2.0


def check_box(origin: np.ndarray, world: float, field: str = "world") -> None:
    """The world box (``origin`` (3,), edge ``world``) is finite, non-empty and inside the numeric
    domain (a moving object or a camera anywhere in it stays answerable); :class:`SceneError` naming
    ``field`` otherwise."""
    if not (math.isfinite(world) and world >= MIN_WORLD):
        raise SceneError(f"must be finite and >= {MIN_WORLD:g} world units, got {world!r}", field)
    reach = float(np.max(np.abs(origin))) + world / 2.0
    if not reach <= COORD_LIMIT:
        raise SceneError(
            f"the world box (edge {world:.6g} around {np.asarray(origin).tolist()}) reaches {reach:.4g} from 0, "
            f"outside the numeric domain (|coordinate| <= 2**100 = {COORD_LIMIT:.4g})", field)


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
    meshes=None,
    look: dict | None = None,
) -> Scene:
    """A checked :class:`Scene` from arrays: what the ``.npz`` reader and every importer build scenes with.

    centres : (N, 3) real, world units; radii : (N,) real >= 0, world units; both in the numeric domain
    of :mod:`viewer.domain` (finite, |coordinate| and radius <= 2**100), 1 <= N <= 5e8.
    Optional (None: the default): sizes (N,) >= 0 (from the radii), colours (N, 4) or (N, 3) integers
    0..255 (by cluster / radius), category (N,) integers >= -1 (all -1), world (edge, > 0) and origin
    (3,) of the world box (fitted to the centres, :func:`fit_box`; a given box must hold every centre and
    lie in the domain), seed (integer 0..2**64-1), name, cluster_centres (K, 3), cluster_spread (K,) >= 0,
    recipe (a recipe dict, checked), extras (a JSON-able dict), motion (a :class:`Motion`, checked),
    meshes (a :class:`viewer.scenes.meshes.MeshSet`, as given), look (how the scene is drawn:
    ``{"style": "objects" | "stars", "sky": "#rrggbb" | None}``, :data:`viewer.scenes.look.SCENE_LOOK_PARAMS`).

    Raises :class:`SceneError` naming the field (the ``.npz`` entry name) for the first problem.
    """
    centres = _float64(centres, "centres")
    if centres.ndim != 2 or centres.shape[1] != 3:
        raise SceneError(f"must have shape (N, 3), got {centres.shape}", "centres")
    n = centres.shape[0]
    if n == 0:
        raise SceneError("holds no objects (N = 0)", "centres")
    if n > MAX_N:
        raise SceneError(f"holds {n} objects, more than the limit {MAX_N}", "centres")
    _in_domain(centres, "centres")
    radii = np.asarray(radii)
    _real(radii, "radii")
    _shape(radii, (n,), "radii")
    radii = np.ascontiguousarray(radii, dtype=np.float64)
    _in_domain(radii, "radii", RADIUS_LIMIT, nonnegative=True)

    if cluster_centres is None:
        cluster_centres = np.zeros((0, 3))
    else:
        cluster_centres = _float64(cluster_centres, "cluster_centres")
        if cluster_centres.ndim != 2 or cluster_centres.shape[1] != 3:
            raise SceneError(f"must have shape (K, 3), got {cluster_centres.shape}", "cluster_centres")
        _in_domain(cluster_centres, "cluster_centres")
    k = cluster_centres.shape[0]
    if cluster_spread is None:
        cluster_spread = np.zeros(k)
    else:
        cluster_spread = np.asarray(cluster_spread)
        _real(cluster_spread, "cluster_spread")
        _shape(cluster_spread, (k,), "cluster_spread", "cluster_centres")
        cluster_spread = np.ascontiguousarray(cluster_spread, dtype=np.float64)
        _in_domain(cluster_spread, "cluster_spread", nonnegative=True)

    if category is None:
        category = np.full(n, -1, dtype=np.int32)
    else:
        cat = np.asarray(category)
        _int(cat, "category")
        _shape(cat, (n,), "category")
        lo_c, hi_c = int(cat.min()), int(cat.max())
        if lo_c < -1:
            raise SceneError(f"must be >= -1 (-1: no cluster), found {lo_c}", "category")
        if hi_c > np.iinfo(np.int32).max or (k and hi_c >= k):
            raise SceneError(f"must be < the number of clusters ({k}), found {hi_c}", "category")
        category = np.ascontiguousarray(cat, dtype=np.int32)

    if origin is not None:
        origin = np.asarray(origin)
        _real(origin, "origin")
        _shape(origin, (3,), "origin")
        origin = origin.astype(np.float64)
        _in_domain(origin, "origin")
    if world is not None:
        w = np.asarray(world)
        _real(w, "world")
        if w.shape != ():
            raise SceneError(f"must be a single number, got shape {w.shape}", "world")
        world = float(w)
    if world is None:
        if origin is None:
            origin, world = fit_box(centres, radii)
        else:  # the smallest cube around the given origin holding every centre, rounded up
            world = 2.0 * float(np.abs(centres - origin).max())
            if world == 0.0:
                world = max(1.0, 2.0 * float(radii.max()))
            world = max(world, MIN_WORLD)
            while (np.abs(centres - origin) > world / 2.0).any():
                world = float(np.nextafter(world, np.inf))
    elif origin is None:
        origin = centres.min(axis=0) / 2 + centres.max(axis=0) / 2
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

    try:
        seed = operator.index(seed)
    except TypeError:
        raise SceneError(f"must be an integer, got {seed!r}", "seed") from None
    if not 0 <= seed < 2**64:
        raise SceneError(f"must be an integer 0..2**64-1, got {seed}", "seed")
    if not isinstance(name, str):
        raise SceneError(f"must be a string, got {type(name).__name__}", "name")
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
    look = default_look()
    look_rng = np.random.default_rng(seed)
    if sizes is None:
        sizes = make_sizes(look_rng, radii, look)
    else:
        sz = np.asarray(sizes)
        _real(sz, "sizes")
        _shape(sz, (n,), "sizes")
        _in_domain(sz.astype(np.float64), "sizes", RADIUS_LIMIT, nonnegative=True)  # before the float32 cast
        sizes = np.ascontiguousarray(sz, dtype=np.float32)
    if colours is None:
        colours = make_colours(look_rng, centres, radii, category, look)
    else:
        col = np.asarray(colours)
        _int(col, "colours")
        if col.ndim != 2 or col.shape[1] not in (3, 4):
            raise SceneError(f"must have shape (N, 4) or (N, 3), got {col.shape}", "colours")
        _shape(col, (n, col.shape[1]), "colours")
        if col.size and (int(col.min()) < 0 or int(col.max()) > 255):
            raise SceneError(f"must be 0..255, found {int(col.min())}..{int(col.max())}", "colours")
        colours = np.full((n, 4), 255, dtype=np.uint8)
        colours[:, : col.shape[1]] = col

    if motion is not None:
        motion = _check_motion(motion, n)
    return Scene(
        name=name, centres=centres, radii=radii, sizes=sizes, colours=colours, category=category,
        world=world, seed=seed, recipe=recipe, cluster_centres=cluster_centres,
        cluster_spread=cluster_spread, extras=extras, origin=origin, motion=motion, meshes=meshes,
        style=scene_look["style"], sky=scene_look["sky"],
    )


def _checked_recipe(recipe) -> dict:
    """The recipe a scene file says it was generated from, checked like any recipe (its fields name
    ``recipe.X``)."""
    from .build import check_recipe

    if not isinstance(recipe, dict):
        raise SceneError("must be a JSON object (a dict)", "recipe")
    if "generator" not in recipe:
        return recipe  # not a generator's recipe: the provenance of an import (recipe["import"]), kept as is
    try:
        return check_recipe(recipe)
    except SceneError as exc:
        raise SceneError(exc.problem, f"recipe.{exc.field}" if exc.field else "recipe") from None


def _motion(npz, keys: list[str], n: int, version: int) -> Motion | None:
    present = [k for k in MOTION_ENTRIES if k in keys]
    if not present:
        return None
    if version < 2:
        raise SceneError("moving objects need format version 2 (this file says 1)", present[0])
    missing = [k for k in MOTION_ENTRIES if k not in keys]
    if missing:
        raise SceneError(f"missing (the motion_* entries come together; found {', '.join(present)})", missing[0])
    ids = _entry(npz, "motion_ids")
    _int(ids, "motion_ids")
    kind = _entry(npz, "motion_kind")
    _int(kind, "motion_kind")
    arrays = {}
    for key in ("motion_speed", "motion_direction", "motion_axis", "motion_orbit", "motion_phase"):
        arrays[key] = _entry(npz, key)
        _real(arrays[key], key)
    params = _json(_entry(npz, "motion_params"), "motion_params", dict)
    unknown = set(params) - {"radius_pulse", "radius_period", "seed"}
    if unknown:
        raise SceneError(f"unknown key {sorted(unknown)[0]!r} (known: radius_pulse, radius_period, seed)",
                         "motion_params")
    pulse = _json_real(params.get("radius_pulse", 0.0), "motion_params.radius_pulse")
    period = _json_real(params.get("radius_period", 5.0), "motion_params.radius_period")
    seed = params.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SceneError(f"must be a whole number (a JSON integer), got {seed!r}", "motion_params.seed")
    return Motion(ids=ids, kind=kind, speed=arrays["motion_speed"], direction=arrays["motion_direction"],
                  axis=arrays["motion_axis"], orbit_radius=arrays["motion_orbit"], phase=arrays["motion_phase"],
                  radius_pulse=pulse, radius_period=period, seed=seed)


def _json_real(v, field: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SceneError(f"must be a number, got {v!r}", field)
    try:
        return float(v)
    except OverflowError:  # an integer too large for a float
        raise SceneError("must be a number in the float64 range", field) from None


def _check_motion(mo: Motion, n: int) -> Motion:
    """``mo`` with its arrays checked and made contiguous (fields named like the ``.npz`` entries)."""
    ids = np.asarray(mo.ids)
    _int(ids, "motion_ids")
    if ids.ndim != 1:
        raise SceneError(f"must have shape (M,), got {ids.shape}", "motion_ids")
    m = ids.shape[0]
    if m and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise SceneError(f"must be object rows 0..{n - 1}, found {int(ids.min())}..{int(ids.max())}", "motion_ids")
    if m > 1 and not (np.diff(ids) > 0).all():
        raise SceneError("must be sorted and distinct", "motion_ids")
    kind = np.asarray(mo.kind)
    _int(kind, "motion_kind")
    _shape(kind, (m,), "motion_kind", "motion_ids")
    if m and (int(kind.min()) < 0 or int(kind.max()) >= len(MOTION_KINDS)):
        raise SceneError(f"must be 0..{len(MOTION_KINDS) - 1} ({', '.join(MOTION_KINDS)})", "motion_kind")
    arrays = {}
    for key, value, shape in (("motion_speed", mo.speed, (m,)), ("motion_direction", mo.direction, (m, 3)),
                              ("motion_axis", mo.axis, (m, 3)), ("motion_orbit", mo.orbit_radius, (m,)),
                              ("motion_phase", mo.phase, (m,))):
        a = np.asarray(value)
        _real(a, key)
        _shape(a, shape, key, "motion_ids")
        arrays[key] = np.ascontiguousarray(a, dtype=np.float64)
    _in_domain(arrays["motion_speed"], "motion_speed", MAX_SPEED, nonnegative=True)
    _in_domain(arrays["motion_phase"], "motion_phase")
    orbit = arrays["motion_orbit"]
    _in_domain(orbit, "motion_orbit", nonnegative=True)
    tiny = np.flatnonzero((orbit > 0) & (orbit < MIN_ORBIT))
    if tiny.size:
        raise SceneError(f"must be 0 or at least {MIN_ORBIT:g} world units, motion_orbit[{int(tiny[0])}] is "
                         f"{orbit[tiny[0]]!r}", "motion_orbit")
    for key in ("motion_direction", "motion_axis"):  # unit vectors, or zero where unused
        a = arrays[key]
        _in_domain(a, key)
        norm = np.sqrt((a[:, 0] * a[:, 0] + a[:, 1] * a[:, 1]) + a[:, 2] * a[:, 2])
        bad = np.flatnonzero((norm != 0.0) & (np.abs(norm - 1.0) > 1e-6))
        if bad.size:
            i = int(bad[0])
            raise SceneError(f"must hold unit vectors (or zeros), {key}[{i}] = {a[i].tolist()} has length "
                             f"{norm[i]:.6g}", key)
    pulse, period, seed = mo.radius_pulse, mo.radius_period, mo.seed
    if not 0.0 <= pulse < 1.0:
        raise SceneError(f"must be 0 <= radius_pulse < 1, got {pulse!r}", "motion_params.radius_pulse")
    if not (math.isfinite(period) and 0 < period <= 1e9):
        raise SceneError(f"must be > 0 and <= 1e9 seconds, got {period!r}", "motion_params.radius_period")
    try:
        seed = operator.index(seed)
    except TypeError:
        raise SceneError(f"must be a whole number, got {seed!r}", "motion_params.seed") from None
    if not 0 <= seed < _SEED_LIMIT:
        raise SceneError(f"must be a whole number 0..2**63-1, got {seed if abs(seed) < 10**30 else 'a larger one'}",
                         "motion_params.seed")
    return Motion(ids=np.ascontiguousarray(ids, dtype=np.int64), kind=np.ascontiguousarray(kind, dtype=np.int8),
                  speed=arrays["motion_speed"], direction=arrays["motion_direction"], axis=arrays["motion_axis"],
                  orbit_radius=orbit, phase=arrays["motion_phase"], radius_pulse=float(pulse),
                  radius_period=float(period), seed=seed)
