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

The ``motion_*`` entries (see :class:`viewer.scenes.scene.Motion`) come all together or not at all (a static
scene), and only in a version 2 file. Every centre must lie inside the world box. Any other entry is
an error (a misspelt name would otherwise be silently ignored).
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from .errors import SceneError
from .look import default_look, make_colours, make_sizes
from .meshes import MESH_ENTRIES, mesh_entries, read_mesh_entries
from .scene import MOTION_KINDS, Motion, Scene

__all__ = ["FORMAT_VERSION", "READ_VERSIONS", "NPZ_FIELDS", "MOTION_ENTRIES", "save_scene", "read_npz"]

FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)
MAX_N = 500_000_000

MOTION_ENTRIES = (
    "motion_ids", "motion_kind", "motion_speed", "motion_direction", "motion_axis", "motion_orbit",
    "motion_phase", "motion_params",
)

NPZ_FIELDS = (
    "format_version", "centres", "radii", "sizes", "colours", "category", "world", "origin", "seed",
    "name", "cluster_centres", "cluster_spread", "recipe", "extras", *MOTION_ENTRIES, *MESH_ENTRIES,
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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


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


def _shape(a: np.ndarray, shape: tuple, key: str, n_from: str = "centres") -> None:
    if a.ndim != len(shape) or any(w is not None and s != w for s, w in zip(a.shape, shape)):
        want = "(" + ", ".join("any" if w is None else str(w) for w in shape) + ("," if len(shape) == 1 else "") + ")"
        if a.ndim == len(shape) and a.ndim >= 1 and shape[0] is not None and a.shape[0] != shape[0]:
            raise SceneError(f"has {a.shape[0]} rows but {n_from} has {shape[0]}", key)
        raise SceneError(f"must have shape {want}, got {a.shape}", key)


def _finite(a: np.ndarray, key: str) -> None:
    if np.issubdtype(a.dtype, np.floating):
        bad = ~np.isfinite(a)
        if bad.any():
            i = np.unravel_index(int(np.flatnonzero(bad)[0]), a.shape)
            where = f"[{', '.join(map(str, i))}]" if a.ndim else ""
            raise SceneError(f"must be finite, {key}{where} is {a[i]!r}", key)


def _nonneg(a: np.ndarray, key: str) -> None:
    bad = a < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise SceneError(f"must be >= 0, {key}[{i}] is {a[i]!r}", key)


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
    if not isinstance(v, want):
        raise SceneError(f"must be a JSON {want.__name__}", key)
    return v


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

    c = _entry(npz, "centres")
    _real(c, "centres")
    if c.ndim != 2 or c.shape[1] != 3:
        raise SceneError(f"must have shape (N, 3), got {c.shape}", "centres")
    n = c.shape[0]
    if n == 0:
        raise SceneError("holds no objects (N = 0)", "centres")
    if n > MAX_N:
        raise SceneError(f"holds {n} objects, more than the limit {MAX_N}", "centres")
    centres = np.ascontiguousarray(c, dtype=np.float64)
    del c
    _finite(centres, "centres")

    r = _entry(npz, "radii")
    _real(r, "radii")
    _shape(r, (n,), "radii")
    radii = np.ascontiguousarray(r, dtype=np.float64)
    _finite(radii, "radii")
    _nonneg(radii, "radii")

    def opt(key):
        return _entry(npz, key) if key in keys else None

    k_cent = opt("cluster_centres")
    if k_cent is None:
        cluster_centres = np.zeros((0, 3))
    else:
        _real(k_cent, "cluster_centres")
        if k_cent.ndim != 2 or k_cent.shape[1] != 3:
            raise SceneError(f"must have shape (K, 3), got {k_cent.shape}", "cluster_centres")
        cluster_centres = np.ascontiguousarray(k_cent, dtype=np.float64)
        _finite(cluster_centres, "cluster_centres")
    k = cluster_centres.shape[0]
    k_spread = opt("cluster_spread")
    if k_spread is None:
        cluster_spread = np.zeros(k)
    else:
        _real(k_spread, "cluster_spread")
        _shape(k_spread, (k,), "cluster_spread", "cluster_centres")
        cluster_spread = np.ascontiguousarray(k_spread, dtype=np.float64)
        _finite(cluster_spread, "cluster_spread")
        _nonneg(cluster_spread, "cluster_spread")

    cat = opt("category")
    if cat is None:
        category = np.full(n, -1, dtype=np.int32)
    else:
        _int(cat, "category")
        _shape(cat, (n,), "category")
        lo_c, hi_c = int(cat.min()), int(cat.max())
        if lo_c < -1:
            raise SceneError(f"must be >= -1 (-1: no cluster), found {lo_c}", "category")
        if hi_c > np.iinfo(np.int32).max or (k and hi_c >= k):
            raise SceneError(f"must be < the number of clusters ({k}), found {hi_c}", "category")
        category = np.ascontiguousarray(cat, dtype=np.int32)

    w = opt("world")
    o = opt("origin")
    if o is None:
        origin = (centres.min(axis=0) + centres.max(axis=0)) / 2
    else:
        _real(o, "origin")
        _shape(o, (3,), "origin")
        origin = o.astype(np.float64)
        _finite(origin, "origin")
    if w is None:
        ext = float(np.abs(centres - origin).max()) * 2
        world = ext if ext > 0 else max(1.0, float(radii.max()) * 2)
    else:
        _real(w, "world")
        if w.shape != ():
            raise SceneError(f"must be a single number, got shape {w.shape}", "world")
        world = float(w)
        if not (np.isfinite(world) and world > 0):
            raise SceneError(f"must be finite and > 0, got {world!r}", "world")
    lo, hi = origin - world / 2, origin + world / 2
    out = ((centres < lo) | (centres > hi)).any(axis=1)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise SceneError(
            f"centres[{i}] = {centres[i].tolist()} lies outside the world box {lo.tolist()}..{hi.tolist()} "
            f"(world {world:g} centred at {origin.tolist()})",
            "world" if w is not None else "origin",
        )

    s = opt("seed")
    seed = 0
    if s is not None:
        _int(s, "seed")
        if s.shape != () or int(s) < 0:
            raise SceneError("must be a single integer >= 0", "seed")
        seed = int(s)
    name = _scalar_str(opt("name"), "name") if "name" in keys else stem
    recipe = _json(opt("recipe"), "recipe", dict) if "recipe" in keys else None
    extras = _json(opt("extras"), "extras", dict) if "extras" in keys else {}

    look = default_look()
    look_rng = np.random.default_rng(seed)
    sz = opt("sizes")
    if sz is None:
        sizes = make_sizes(look_rng, radii, look)
    else:
        _real(sz, "sizes")
        _shape(sz, (n,), "sizes")
        sizes = np.ascontiguousarray(sz, dtype=np.float32)
        _finite(sizes, "sizes")
        _nonneg(sizes, "sizes")
    col = opt("colours")
    if col is None:
        colours = make_colours(look_rng, centres, radii, category, look)
    else:
        _int(col, "colours")
        if col.ndim != 2 or col.shape[1] not in (3, 4):
            raise SceneError(f"must have shape (N, 4) or (N, 3), got {col.shape}", "colours")
        _shape(col, (n, col.shape[1]), "colours")
        if col.size and (int(col.min()) < 0 or int(col.max()) > 255):
            raise SceneError(f"must be 0..255, found {int(col.min())}..{int(col.max())}", "colours")
        colours = np.full((n, 4), 255, dtype=np.uint8)
        colours[:, : col.shape[1]] = col

    motion = _motion(npz, keys, n, version)
    meshes = read_mesh_entries(lambda key: _entry(npz, key), keys, n)
    return Scene(
        name=name, centres=centres, radii=radii, sizes=sizes, colours=colours, category=category,
        world=world, seed=seed, recipe=recipe, cluster_centres=cluster_centres,
        cluster_spread=cluster_spread, extras=extras, origin=origin, motion=motion, meshes=meshes,
    )


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
    if ids.ndim != 1:
        raise SceneError(f"must have shape (M,), got {ids.shape}", "motion_ids")
    m = ids.shape[0]
    if m and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise SceneError(f"must be object rows 0..{n - 1}, found {int(ids.min())}..{int(ids.max())}", "motion_ids")
    if m > 1 and not (np.diff(ids) > 0).all():
        raise SceneError("must be sorted and distinct", "motion_ids")
    kind = _entry(npz, "motion_kind")
    _int(kind, "motion_kind")
    _shape(kind, (m,), "motion_kind", "motion_ids")
    if m and (int(kind.min()) < 0 or int(kind.max()) >= len(MOTION_KINDS)):
        raise SceneError(f"must be 0..{len(MOTION_KINDS) - 1} ({', '.join(MOTION_KINDS)})", "motion_kind")
    arrays = {}
    for key, shape, nonneg in (("motion_speed", (m,), True), ("motion_direction", (m, 3), False),
                               ("motion_axis", (m, 3), False), ("motion_orbit", (m,), True),
                               ("motion_phase", (m,), False)):
        a = _entry(npz, key)
        _real(a, key)
        _shape(a, shape, key, "motion_ids")
        a = np.ascontiguousarray(a, dtype=np.float64)
        _finite(a, key)
        if nonneg:
            _nonneg(a, key)
        arrays[key] = a
    params = _json(_entry(npz, "motion_params"), "motion_params", dict)
    try:
        pulse = float(params.get("radius_pulse", 0.0))
        period = float(params.get("radius_period", 5.0))
        seed = int(params.get("seed", 0))
    except (TypeError, ValueError) as exc:
        raise SceneError(f"radius_pulse, radius_period and seed must be numbers: {exc}", "motion_params") from None
    if not (0.0 <= pulse < 1.0) or not (np.isfinite(period) and period > 0) or seed < 0:
        raise SceneError("needs 0 <= radius_pulse < 1, radius_period > 0 and seed >= 0", "motion_params")
    return Motion(ids=np.ascontiguousarray(ids, dtype=np.int64), kind=np.ascontiguousarray(kind, dtype=np.int8),
                  speed=arrays["motion_speed"], direction=arrays["motion_direction"], axis=arrays["motion_axis"],
                  orbit_radius=arrays["motion_orbit"], phase=arrays["motion_phase"], radius_pulse=pulse,
                  radius_period=period, seed=seed)
