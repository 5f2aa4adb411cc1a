"""The ``.npz`` scene format: a numpy zip archive of named arrays, no pickles.

Format version 3 when a scene has visibility ranges, LOD bands or visibility parents (``begin``, ``lod``,
``parent``, ``mesh_lods``), else version 2 (so older readers still read every file without them);
version 1 files, without motion, are read as before. Entries (N objects, K clusters,
M moving objects):

=================  ==========================  ========  =============================================
entry              shape / dtype               required  meaning
=================  ==========================  ========  =============================================
format_version     () integer                  yes       3, 2 (or 1)
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
mesh_lods          (K, B) integer >= -1        v3        the mesh drawn per base mesh per LOD band
begin              (N,) real, 0 <= . <= radii  v3        begin of the visibility range, world units
lod                (N, L) real >= 0, ascending v3        LOD switch distances (+inf padding), world units
parent             (N,) integer -1..N-1        v3        visibility parent (HLOD proxy), -1 none
=================  ==========================  ========  =============================================

``look`` is written only when it differs from the default (style "objects", no sky), so a file of an
ordinary scene is what it was before the entry existed. The ``motion_*`` entries (see :class:`viewer.scenes.scene.Motion`) come all together or not at all (a static
scene), and only in a version 2 file. Every centre must lie inside the world box. Any other entry is
an error (a misspelt name would otherwise be silently ignored). The reader parses the entries; the rules
are the scene constructor's (:func:`viewer.scenes.construct.scene_from_arrays`), the same for every scene.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from viewer.terminal.text import clip

from .construct import check_centres, check_integers, scene_from_arrays
from .errors import SceneError
from .limits import MAX_SPEED, MAX_WORLD, MIN_ORBIT, MIN_WORLD, check_box, fit_box, stem_name
from .look import check_scene_look
from .meshes import MESH_ENTRIES, MESH_LOD_ENTRY, mesh_entries, read_mesh_entries
from .scene import Motion, Scene

__all__ = [
    "FORMAT_VERSION", "READ_VERSIONS", "NPZ_FIELDS", "MOTION_ENTRIES", "RANGE_ENTRIES", "RANGES_VERSION", "read_npz", "save_scene",
    # checked by the one constructor (.construct) by the bounds of .limits; kept importable from here
    "MAX_SPEED", "MAX_WORLD", "MIN_ORBIT", "MIN_WORLD", "check_box", "fit_box", "scene_from_arrays",
]

FORMAT_VERSION = 2  # the version of a file without RANGE_ENTRIES
RANGES_VERSION = 3  # the version of a file with any of RANGE_ENTRIES
READ_VERSIONS = (1, 2, 3)
RANGE_ENTRIES = ("begin", "lod", "parent", MESH_LOD_ENTRY)  # need version 3

MOTION_ENTRIES = (
    "motion_ids", "motion_kind", "motion_speed", "motion_direction", "motion_axis", "motion_orbit",
    "motion_phase", "motion_params",
)

NPZ_FIELDS = (
    "format_version", "centres", "radii", "sizes", "colours", "category", "world", "origin", "seed",
    "name", "cluster_centres", "cluster_spread", "recipe", "extras", "look", *MOTION_ENTRIES, *MESH_ENTRIES,
    *RANGE_ENTRIES,
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
    for key, dtype in (("begin", np.float64), ("lod", np.float64), ("parent", np.int64)):
        if getattr(scene, key, None) is not None:
            arrays[key] = np.ascontiguousarray(getattr(scene, key), dtype=dtype)
    if any(k in arrays for k in RANGE_ENTRIES):
        arrays["format_version"] = np.array(RANGES_VERSION, dtype=np.int64)
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
    except MemoryError:  # a whole entry that does not fit: not a damaged file (load_scene says so)
        raise
    except Exception as exc:  # zipfile, zlib, numpy header errors: whatever a damaged member raises
        raise SceneError(f"cannot be read (truncated or corrupt file?): {type(exc).__name__}: {exc}", key) from None


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
    except ValueError as exc:  # an integer of more than 4300 digits
        raise SceneError(f"is not JSON this viewer can read: {clip(str(exc), 80)}", key) from None
    except RecursionError:
        raise SceneError("is nested too deeply to be a scene's JSON", key) from None
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
        _check_memory(npz)
        return _from_entries(npz, stem_name(path))


#: peak bytes of loading a scene file a byte of its entries' data (measured: 1.3 on a 10,000,000-object file)
_LOAD_FACTOR = 1.5


def _check_memory(npz) -> None:
    """Refuse, before any entry is decompressed, a file whose entries hold more than this process may use
    (:func:`viewer.system.memory.available`): each entry's size is in its .npy header, and a compressed entry
    of zeros takes a few MB for gigabytes. A header that does not read is left to the entry's reader."""
    from numpy.lib import format as npy

    from viewer.system.memory import available, format_bytes

    sizes = {}
    for member in npz.zip.namelist():
        try:
            with npz.zip.open(member) as fh:
                version = npy.read_magic(fh)
                read = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}.get(version)
                if read is None:
                    continue
                shape, _, dtype = read(fh)
        except Exception:  # a damaged member: its reader says what is wrong
            continue
        sizes[member.removesuffix(".npy")] = int(np.prod(shape, dtype=object)) * dtype.itemsize
    total = sum(sizes.values())
    have, why = available()
    if total * _LOAD_FACTOR > have:
        biggest = max(sizes, key=sizes.get)
        raise SceneError(f"the file's entries hold {format_bytes(total)} ({biggest} {format_bytes(sizes[biggest])}): "
                         f"loading it would need about {format_bytes(total * _LOAD_FACTOR)} of memory; this process "
                         f"may use {format_bytes(have)} ({why})", biggest)


def _from_entries(npz, stem: str) -> Scene:
    keys = list(npz.files)
    for k in keys:
        if k not in NPZ_FIELDS:
            raise SceneError(f"unknown entry in the scene file (known: {', '.join(NPZ_FIELDS)})", k)
    for k in ("format_version", "centres", "radii"):
        if k not in keys:
            raise SceneError("missing (required in a scene file)", k)

    v = _entry(npz, "format_version")
    check_integers(v, "format_version")
    if v.shape != ():
        raise SceneError(f"must be a single integer, got shape {v.shape}", "format_version")
    version = int(v)
    if version not in READ_VERSIONS:
        raise SceneError(
            f"unknown format version {version} (this viewer reads versions {', '.join(map(str, READ_VERSIONS))})",
            "format_version",
        )
    # centres first, alone: its dtype, shape and count are checked before the other (possibly large)
    # entries are read
    c = check_centres(_entry(npz, "centres"))

    def opt(key):
        return _entry(npz, key) if key in keys else None

    s = opt("seed")
    seed = 0
    if s is not None:
        check_integers(s, "seed")
        if s.shape != ():
            raise SceneError(f"must be a single integer >= 0, got shape {s.shape}", "seed")
        seed = int(s)
    name = _scalar_str(opt("name"), "name") if "name" in keys else stem
    recipe = _json(opt("recipe"), "recipe", dict) if "recipe" in keys else None
    extras = _json(opt("extras"), "extras", dict) if "extras" in keys else {}
    look = _json(opt("look"), "look", dict) if "look" in keys else None
    motion = _motion(npz, keys, version)
    meshes = read_mesh_entries(lambda key: _entry(npz, key), keys)
    ranges = [k for k in RANGE_ENTRIES if k in keys]
    if ranges and version < RANGES_VERSION:
        raise SceneError(f"needs format version 3 (this file says {version})", ranges[0])
    return scene_from_arrays(
        c, _entry(npz, "radii"), sizes=opt("sizes"), colours=opt("colours"), category=opt("category"),
        world=opt("world"), origin=opt("origin"), seed=seed, name=name, cluster_centres=opt("cluster_centres"),
        cluster_spread=opt("cluster_spread"), recipe=recipe, extras=extras, motion=motion, meshes=meshes,
        look=look, begin=opt("begin"), lod=opt("lod"), parent=opt("parent"),
    )


def _motion(npz, keys: list[str], version: int) -> Motion | None:
    """The :class:`Motion` of the ``motion_*`` entries as stored (the scene constructor checks it), or None."""
    present = [k for k in MOTION_ENTRIES if k in keys]
    if not present:
        return None
    if version < 2:
        raise SceneError("moving objects need format version 2 (this file says 1)", present[0])
    missing = [k for k in MOTION_ENTRIES if k not in keys]
    if missing:
        raise SceneError(f"missing (the motion_* entries come together; found {', '.join(present)})", missing[0])
    arrays = {key: _entry(npz, key) for key in MOTION_ENTRIES[:-1]}
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
    return Motion(ids=arrays["motion_ids"], kind=arrays["motion_kind"], speed=arrays["motion_speed"],
                  direction=arrays["motion_direction"], axis=arrays["motion_axis"], orbit_radius=arrays["motion_orbit"],
                  phase=arrays["motion_phase"], radius_pulse=pulse, radius_period=period, seed=seed)


def _json_real(v, field: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SceneError(f"must be a number, got {v!r}", field)
    try:
        return float(v)
    except OverflowError:  # an integer too large for a float
        raise SceneError("must be a number in the float64 range", field) from None
