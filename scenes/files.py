"""Opening scenes: ``load_scene(path)`` takes a TOML recipe (generated on the spot) or a ``.npz`` data
file; bundled recipes can be named by their stem (``clustered-100k``)."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Callable

from viewer.files.inputs import why_missing

from .build import generate_recipe
from .errors import SceneError
from .format import read_npz
from .limits import stem_name
from .importers import IMPORT_FORMATS, IMPORT_OPTIONS, import_scene
from .scene import Scene

__all__ = ["BUNDLED_DIR", "bundled_recipes", "resolve_scene_path", "read_recipe", "load_scene",
           "check_import_options"]

BUNDLED_DIR = Path(__file__).resolve().parent
SUFFIXES = (".toml", ".npz", *IMPORT_FORMATS)


def bundled_recipes() -> dict[str, Path]:
    """The recipes shipped in the ``scenes`` package: stem -> path, sorted by name."""
    return {p.stem: p for p in sorted(BUNDLED_DIR.glob("*.toml"))}


def resolve_scene_path(path) -> Path:
    """``path`` itself if it exists; else a bundled recipe of that name (``clustered-100k`` or
    ``clustered-100k.toml``). :class:`SceneError` if neither exists or the suffix is not known."""
    if not str(path).strip():
        raise SceneError("is empty: give a .toml recipe, a .npz scene file or a bundled recipe's name", "SCENE")
    p = Path(path)
    if not p.exists():
        stem = p.name[: -len(".toml")] if p.name.endswith(".toml") else p.name
        bundled = bundled_recipes()
        if p.parent == Path(".") and stem in bundled:
            return bundled[stem]
        hint = f" (bundled recipes: {', '.join(bundled)})" if p.parent == Path(".") and not p.is_symlink() else ""
        raise SceneError(f"{why_missing(p)}{hint}", source=str(path))
    if p.is_dir():
        raise SceneError("is a directory, not a scene file", source=str(path))
    if not p.is_file():  # a FIFO, a device (a link to /dev/zero): reading it could block or never end
        raise SceneError("is not a regular file (a pipe, a device?), not a scene file", source=str(path))
    if p.suffix.lower() not in SUFFIXES:
        raise SceneError(
            f"unknown kind of scene file {p.suffix or '(no suffix)'!r}: a recipe ends in .toml, scene data in "
            f".npz, and {', '.join(IMPORT_FORMATS)} files are imported",
            source=str(path),
        )
    return p


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_recipe(path) -> dict:
    """Parse a TOML recipe file (not yet checked): the raw table, with ``name`` defaulting to the
    file's stem."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8-sig")  # a byte-order mark (some editors write one) is not TOML
    except UnicodeDecodeError as exc:
        raise SceneError(f"not UTF-8 text: {exc}", source=str(path)) from None
    except OSError as exc:
        raise SceneError(f"cannot be read: {exc.strerror or exc}", source=str(path)) from None
    try:
        recipe = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SceneError(f"not valid TOML: {exc}", source=str(path)) from None
    except RecursionError:  # tomllib parses nested arrays and tables by recursion
        raise SceneError("not a recipe: arrays or tables nested too deeply to read as TOML", source=str(path)) from None
    except ValueError as exc:  # an integer literal of more than 4300 digits
        raise SceneError(f"not valid TOML ({exc})", source=str(path)) from None
    recipe.setdefault("name", stem_name(p))
    return recipe


def check_import_options(path: Path, import_options: dict[str, str | None] | None,
                         shown: str | None = None) -> dict[str, str]:
    """The import options that are set (``import_options`` without its None values), after checking that
    ``path`` (a resolved scene path, shown to the user as ``shown``) is a file to import: for a recipe or a
    ``.npz`` a :class:`SceneError` naming the first flag given (``--view-distance``; ``--columns``): its
    view distances are the recipe's or the file's own, and an option that would be silently ignored is
    refused. An unknown key is a ``TypeError`` (a programming error, not a user's)."""
    options = {k: v for k, v in (import_options or {}).items() if v is not None}
    unknown = sorted(set(options) - set(IMPORT_OPTIONS))
    if unknown:
        raise TypeError(f"unknown import options {unknown}; known: {sorted(IMPORT_OPTIONS)}")
    if options and path.suffix.lower() not in IMPORT_FORMATS:
        flag = next(IMPORT_OPTIONS[k] for k in IMPORT_OPTIONS if k in options)
        if path.suffix == ".toml":
            kind = "a recipe (.toml), whose view distances come from its [radius] table (set them there)"
        else:
            kind = (f"scene data (.npz), whose view distances are the file's own (re-import the original with "
                    f"'viewer scene import FILE {flag} ...')")
        raise SceneError(f"{flag} applies only to a file imported on the fly ({', '.join(IMPORT_FORMATS)}); this "
                         f"is {kind}", source=shown or str(path))
    return options


def load_scene(path, progress: Callable[[int, int], None] | None = None, *,
               import_options: dict[str, str | None] | None = None) -> Scene:
    """Open a scene: a ``.toml`` recipe (generated now), a ``.npz`` data file, or a file to import
    (glTF, PLY, CSV, TSV, Parquet: :func:`viewer.scenes.importers.import_scene`).

    Returns a :class:`Scene` with ``source`` (the file) and ``sha256`` (of its bytes) set. Any
    problem with the file raises :class:`SceneError` whose message names the file and the field.
    ``progress(done, n)`` is called while a recipe is generated or a slow file imported (an ASCII PLY file's
    rows). ``import_options``: keyword arguments of
    ``import_scene`` (keys of :data:`~viewer.scenes.importers.IMPORT_OPTIONS`: ``view_distance``,
    ``columns``; None values are left out); given for a recipe or a ``.npz`` they are refused with a
    :class:`SceneError` naming the flag (:func:`check_import_options`), before anything is generated.
    """
    p = resolve_scene_path(path)
    options = check_import_options(p, import_options, shown=str(path))
    try:
        digest = _sha256(p)
    except OSError as exc:
        raise SceneError(f"cannot be read: {exc.strerror or exc}", source=str(path)) from None
    try:
        if p.suffix == ".toml":
            scene = generate_recipe(read_recipe(p), progress)
        elif p.suffix.lower() in IMPORT_FORMATS:
            scene = import_scene(p, **options, progress=progress)
        else:
            scene = read_npz(p)
    except SceneError as exc:
        raise (exc if exc.source else exc.at(path)) from None
    except MemoryError:
        raise SceneError("not enough memory to hold this scene", source=str(path)) from None
    scene.source = str(p)
    scene.sha256 = digest
    return scene
