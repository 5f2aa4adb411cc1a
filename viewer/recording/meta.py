"""The metadata file beside a recording: what produced the numbers.

``RUN.csv`` gets ``RUN.meta.json``: the schema version, the scene (name, recipe or source file and
its sha256, N, seed, world size), the index and its options, the window size, the GL renderer and
version, headless or not, vsync, the camera path, package versions and the date. A number without
its context is not a result.

No GL here: GL facts are passed in by whoever holds the context (:func:`gl_info` reads them from a
moderngl context object without importing moderngl).
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..system.provenance import package_versions, provenance

from ..errors import UserError
from ..system.machine import machine, system
from ..files.output import replace_atomically
from ..terminal.text import clip
from .schema import COLUMNS, SCHEMA_NAME, SCHEMA_VERSION

__all__ = [
    "META_SUFFIX",
    "build_meta",
    "check_meta",
    "describe_machine",
    "describe_path",
    "describe_renderer",
    "describe_scene",
    "gl_info",
    "machine_identity",
    "meta_path_for",
    "package_versions",
    "path_identity",
    "read_meta",
    "renderer_identity",
    "run_label",
    "same_path",
    "same_scene",
    "scene_identity",
    "scene_meta",
    "timed_on",
    "write_json_atomic",
    "write_meta",
]

META_SUFFIX = ".meta.json"

def meta_path_for(csv_path: str | os.PathLike) -> Path:
    """``runs/a.csv`` -> ``runs/a.meta.json`` (the suffix replaces ``.csv``; otherwise appended)."""
    p = Path(csv_path)
    if p.suffix.lower() == ".csv":
        return p.with_suffix(META_SUFFIX)
    return p.with_name(p.name + META_SUFFIX)


def gl_info(ctx) -> dict[str, Any]:
    """Renderer, version and vendor of a moderngl context (``ctx.info``), without importing moderngl."""
    if ctx is None:
        return {}
    info = getattr(ctx, "info", {}) or {}
    return {
        "renderer": info.get("GL_RENDERER"),
        "version": info.get("GL_VERSION"),
        "vendor": info.get("GL_VENDOR"),
        "version_code": getattr(ctx, "version_code", None),
    }


def scene_meta(scene) -> dict[str, Any]:
    """What identifies a :class:`viewer.scenes.Scene`: name, N, seed, world, recipe or source file, sha256."""
    if scene is None:
        return {}
    source = getattr(scene, "source", None)
    centres = getattr(scene, "centres", None)
    return {
        "name": getattr(scene, "name", None),
        "source": None if source is None else str(source),
        "sha256": getattr(scene, "sha256", None),
        "recipe": _jsonable(getattr(scene, "recipe", None)),
        "n": None if centres is None else int(len(centres)),
        "seed": _jsonable(getattr(scene, "seed", None)),
        "world": _jsonable(getattr(scene, "world", None)),
    }


def build_meta(
    *,
    scene=None,
    index: str | None = None,
    index_options: dict | None = None,
    window_size: tuple[int, int] | None = None,
    gl: dict | None = None,
    headless: bool | None = None,
    vsync: bool | None = None,
    max_fps: float | None = None,
    path: dict | None = None,
    dt: float | None = None,
    label: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The metadata of one recording, as a JSON-ready dict.

    ``gl`` is :func:`gl_info` of the context; ``path`` describes the camera path (file and sha256,
    or the generated kind); ``extra`` keys are stored as given (JSON-able values).
    """
    meta: dict[str, Any] = {
        "schema": {"name": SCHEMA_NAME, "version": SCHEMA_VERSION, "columns": list(COLUMNS)},
        "label": label,
        "scene": scene_meta(scene),
        "index": {"name": index, "options": _jsonable(index_options or {})},
        "window": {
            "size": None if window_size is None else [int(window_size[0]), int(window_size[1])],
            "headless": headless,
            "vsync": vsync,
            "max_fps": max_fps,
        },
        "gl": dict(gl or {}),
        "path": _jsonable(path),
        "dt": dt,
        "packages": package_versions(),
        "machine": {"platform": system(), **machine()},
        "provenance": provenance(),  # the project's version and commit (dirty or not), the machine line
        "command": list(sys.argv),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    for k, v in extra.items():
        meta[k] = _jsonable(v)
    return meta


def run_label(meta: dict | None, fallback: str = "run") -> str:
    """A short legend label: the explicit ``label``, else ``index · scene (N)``, else ``fallback``."""
    if not meta:
        return fallback
    if meta.get("label"):
        return str(meta["label"])
    parts = []
    idx = (meta.get("index") or {}).get("name")
    if idx:
        parts.append(str(idx))
    sc = meta.get("scene") or {}
    if sc.get("name"):
        n = sc.get("n")
        parts.append(f"{sc['name']} ({_short_n(n)})" if n else str(sc["name"]))
    return " · ".join(parts) or fallback


def scene_identity(meta: dict | None) -> tuple | None:
    """What tells scenes apart in a run's metadata: ``(name, N, seed)``; None when the metadata does not
    name a scene (a CSV without metadata, a hand-written file)."""
    sc = meta.get("scene") if isinstance(meta, dict) else None
    if not isinstance(sc, dict) or not sc.get("name"):
        return None
    return (str(sc["name"]), sc.get("n"), json.dumps(sc.get("seed"), sort_keys=True))


def path_identity(meta: dict | None) -> tuple | None:
    """What tells camera paths apart in a run's metadata: ``(name, generated kind, speed)`` (the kind and the
    speed None for a path file or a take); None when the metadata does not name a path."""
    pa = meta.get("path") if isinstance(meta, dict) else None
    if not isinstance(pa, dict) or not pa.get("name"):
        return None
    return (str(pa["name"]), pa.get("generated"), pa.get("speed"))


def same_scene(a: dict | None, b: dict | None) -> bool | None:
    """Whether two runs' metadata name the same scene (:func:`scene_identity`); None when either does not say."""
    ka, kb = scene_identity(a), scene_identity(b)
    return None if ka is None or kb is None else ka == kb


def same_path(a: dict | None, b: dict | None) -> bool | None:
    """Whether two runs' metadata name the same camera path (:func:`path_identity`); None when either does not say."""
    ka, kb = path_identity(a), path_identity(b)
    return None if ka is None or kb is None else ka == kb


def describe_scene(meta: dict | None) -> str:
    """``'clustered-100k' (100000 objects, seed 1)``, from a run's metadata; "" when it names no scene."""
    k = scene_identity(meta)
    if k is None:
        return ""
    name, n, seed = k
    facts = ([f"{n} objects"] if n is not None else []) + ([f"seed {seed}"] if seed != "null" else [])
    return f"{name!r}" + (f" ({', '.join(facts)})" if facts else "")


def describe_path(meta: dict | None) -> str:
    """``'flythrough' (generated flythrough, speed 40)``, from a run's metadata; "" when it names no path."""
    k = path_identity(meta)
    if k is None:
        return ""
    name, kind, speed = k
    facts = ([f"generated {kind}"] if kind else []) + ([f"speed {speed:g}"] if isinstance(speed, (int, float)) else [])
    return f"{name!r}" + (f" ({', '.join(facts)})" if facts else "")


def describe_machine(meta: dict | None) -> str:
    """``vm, AMD EPYC (znver4; L2 1 MiB, L3 32 MiB), 2 logical CPUs``: the machine a run's timings were measured
    on, from its metadata (the CPU and host :func:`viewer.system.machine.machine` recorded); "" when it names none."""
    m = meta.get("machine") if isinstance(meta, dict) else None
    if not isinstance(m, dict):
        return ""
    host, cpu, cores = m.get("host"), m.get("cpu"), m.get("cores")
    parts = [str(v) for v in (host, cpu) if isinstance(v, str) and v.strip()]
    if isinstance(cores, int) and not isinstance(cores, bool) and cores > 0:
        parts.append(f"{cores} logical CPU{'s' if cores != 1 else ''}")
    return ", ".join(parts) if cpu else ""


def machine_identity(meta: dict | None) -> tuple | None:
    """What tells the machines of runs' timings apart: ``(cpu, logical CPUs)`` from a run's metadata (the host's
    name is left out: two containers on one machine time alike); None when the metadata names no CPU."""
    m = meta.get("machine") if isinstance(meta, dict) else None
    cpu = m.get("cpu") if isinstance(m, dict) else None
    if not isinstance(cpu, str) or not cpu.strip():
        return None
    return (cpu, m.get("cores"))


def renderer_identity(meta: dict | None) -> tuple | None:
    """The GL renderer a run's metadata names, as ``(renderer,)``; None when it names none."""
    gl = meta.get("gl") if isinstance(meta, dict) else None
    name = gl.get("renderer") if isinstance(gl, dict) else None
    return (name,) if isinstance(name, str) and name.strip() else None


def describe_renderer(meta: dict | None) -> str:
    """``llvmpipe (LLVM 15.0.7, 256 bits)``: the GL renderer of a run's metadata; "" when it names none."""
    k = renderer_identity(meta)
    return "" if k is None else k[0]


def timed_on(meta: dict | None) -> str:
    """``timed on: vm, AMD EPYC (...), 2 logical CPUs; GL renderer: llvmpipe (...)``: the line printed beside
    a run's times (:func:`describe_machine`, :func:`describe_renderer`); "" when ``meta`` names neither."""
    machine, renderer = describe_machine(meta), describe_renderer(meta)
    if not machine and not renderer:
        return ""
    return (f"timed on: {machine or 'a machine the metadata does not name'}; "
            f"GL renderer: {renderer or 'not named in the metadata'}")


def _short_n(n: int) -> str:
    for div, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= div and n % (div // 10) == 0:
            return f"{n / div:g}{suffix}"
    return str(n)


def write_json_atomic(path: str | os.PathLike, data: Any, *, reserve: int = 0) -> None:
    """Write ``data`` as indented JSON to ``path`` through a temporary file and a rename.

    ``reserve`` bytes of trailing spaces (valid JSON whitespace) keep room in the file, so that a later
    write can still replace it in place when the disk has filled up meanwhile: when the temporary file
    cannot be written for lack of space, the data is written over the old file if it fits there.
    """
    p = Path(path)
    text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    body = (text + " " * reserve).encode("utf-8")
    try:
        replace_atomically(p, body)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) and _write_in_place(p, text.encode("utf-8")):
            return
        raise UserError(f"{p}: cannot write the metadata file: {exc.strerror or exc}") from None


def _write_in_place(p: Path, body: bytes) -> bool:
    """Overwrite the file ``p`` with ``body`` padded by spaces to the file's size, needing no new
    space; False when the file is missing, too small or a symbolic link."""
    try:
        fd = os.open(p, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))  # never through a link (to a file elsewhere)
        with os.fdopen(fd, "r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if size < len(body):
                return False
            f.seek(0)
            f.write(body + b" " * (size - len(body)))
            f.flush()
        return True
    except OSError:
        return False


def write_meta(csv_path: str | os.PathLike, meta: dict, *, reserve: int = 0) -> Path:
    """Write ``meta`` beside ``csv_path`` (``reserve``: see :func:`write_json_atomic`); returns the
    metadata file's path."""
    mp = meta_path_for(csv_path)
    write_json_atomic(mp, meta, reserve=reserve)
    return mp


#: the sections of a metadata file and the JSON types they must have (None allowed for each)
_SECTIONS: dict[str, tuple[type, ...]] = {
    "schema": (dict,), "label": (str,), "scene": (dict,), "index": (dict, str), "window": (dict,), "gl": (dict,),
    "path": (dict,), "packages": (dict,), "machine": (dict,), "command": (list,), "date": (str,),
    "frames": (int,), "complete": (bool,), "ended": (str,), "world": (dict,),
}
_SUBFIELDS: dict[tuple[str, str], tuple[type, ...]] = {
    ("scene", "name"): (str,), ("scene", "n"): (int,), ("index", "name"): (str,), ("window", "size"): (list,),
    ("gl", "renderer"): (str,), ("path", "name"): (str,),
    # a take of a moving world: its clock (seconds) and motion steps as it began, and its world file's name
    ("world", "t"): (float, int), ("world", "step"): (int,), ("world", "file"): (str,),
}


def _type_name(types: tuple[type, ...]) -> str:
    names = {dict: "an object", list: "a list", str: "a string", int: "a whole number", bool: "true or false"}
    return " or ".join(names.get(t, t.__name__) for t in types)


def check_meta(data: dict, where: str) -> dict:
    """``data`` (a metadata file's contents) with each known section of the type the writer gives it;
    a :class:`UserError` naming ``where`` and the field otherwise. Unknown keys are kept (newer writers)."""
    for key, types in _SECTIONS.items():
        v = data.get(key)
        if v is not None and (not isinstance(v, types) or (isinstance(v, bool) and bool not in types)):
            raise UserError(f"{where}: field '{key}' must be {_type_name(types)} or null, got {_short(v)}")
    for (sec, key), types in _SUBFIELDS.items():
        part = data.get(sec)
        v = part.get(key) if isinstance(part, dict) else None
        if v is not None and (not isinstance(v, types) or (isinstance(v, bool) and bool not in types)):
            raise UserError(f"{where}: field '{sec}.{key}' must be {_type_name(types)} or null, got {_short(v)}")
    if isinstance(data.get("index"), str):  # a hand-written file may name the index directly
        data["index"] = {"name": data["index"]}
    return data


def _short(v: Any) -> str:
    t = json.dumps(v) if not isinstance(v, int) or abs(v) < 10**24 else f"an integer of {len(str(abs(v)))} digits"
    return clip(t, 40)


def read_meta(csv_path: str | os.PathLike) -> dict | None:
    """The metadata beside ``csv_path``, or None when there is none. A malformed file is a UserError."""
    mp = meta_path_for(csv_path)
    if not mp.exists():
        return None
    if not mp.is_file():
        raise UserError(f"{mp}: not a regular file")
    try:
        with open(mp, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as exc:
        raise UserError(f"{mp}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except UnicodeDecodeError:
        raise UserError(f"{mp}: not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:  # an integer of more than 4300 digits, nesting too deep
        raise UserError(f"{mp}: not a metadata file this viewer can read: {clip(str(exc), 80)}") from None
    except OSError as exc:
        raise UserError(f"{mp}: cannot read: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise UserError(f"{mp}: expected a JSON object at the top level")
    return check_meta(data, str(mp))


def _jsonable(v: Any) -> Any:
    """Numpy scalars/arrays, paths and tuples -> plain JSON values."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    tolist = getattr(v, "tolist", None)
    if callable(tolist):
        return _jsonable(tolist())
    return str(v)
