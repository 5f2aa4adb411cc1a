"""Argument types shared by the sub-commands: each turns a flag's text into a value or raises
``argparse.ArgumentTypeError`` with a message saying what was expected."""

from __future__ import annotations

import argparse
import math
from pathlib import Path


SCENE_HELP = ("a scene recipe (.toml), scene data (.npz), a bundled recipe name, or a file to import "
              "(.gltf, .glb, .ply, .csv, .tsv, .parquet; see the import options)")

#: how ``--view-distance`` is documented wherever it is accepted
VIEW_DISTANCE_HELP = (
    "view distances for an imported file without an r column: constant:value=500 (every object seen from "
    "500 world units), size:factor=40 (40 x the object's size; size:factor=40,max=300 caps it), "
    "table:1=300,10=2000,100=inf (size up to 1 -> 300, up to 10 -> 2000, up to 100 -> never culled); inf is "
    "the diagonal of the box around the objects. Default: picked from the file's own scale (size-based, the "
    "median object seen from an eighth of the level's extent, none further than half of it; points: a tenth "
    "of the diagonal), named in the import line")


#: how ``--index`` is documented wherever it is accepted (the grammar: :mod:`viewer.index.specs`)
INDEX_HELP = (
    "index specs, ';' or ',' between them: a registered name (octree), an installed "
    "plugin's name (entry-point group viewdist_testbed.indexes), package.module:Class, or path/to/file.py:Class "
    "(this loads and runs that file's code, as pytest runs a conftest.py); each with options "
    "name:key=value,key=value (octree:max_depth=8, ./my_index.py:MyIndex:leaf=16; true/false, yes/no, on/off, "
    "1/0 for a switch)")


def add_import_options(parser: argparse.ArgumentParser) -> None:
    """Add the import options (``--view-distance``, ``--columns``: how a glTF, PLY, CSV, TSV or Parquet file
    becomes a scene) to ``parser``: declared once here for every command that takes such a file
    (``view``, ``record``, ``soak``, ``scene info``, ``scene import``). Their values reach
    :func:`viewer.scenes.load_scene` through :func:`import_options` (and
    :func:`viewer.scenes.loading.open_scene`); given with a recipe or a ``.npz`` they are refused, naming the flag."""
    g = parser.add_argument_group("import options (a .gltf, .glb, .ply, .csv, .tsv or .parquet scene)")
    g.add_argument("--view-distance", metavar="RULE", help=VIEW_DISTANCE_HELP)
    g.add_argument("--columns", metavar="MAP",
                   help="which column plays which role, e.g. x=px,y=py,z=pz,r=view "
                        "(roles: x, y, z, r, size, red, green, blue, alpha)")


def import_options(args: argparse.Namespace) -> dict[str, str | None]:
    """The import options of parsed ``args`` (see :func:`add_import_options`), as the keyword arguments of
    :func:`viewer.scenes.importers.import_scene` (None: not given)."""
    return {"view_distance": getattr(args, "view_distance", None), "columns": getattr(args, "columns", None)}


def name(text: str) -> str:
    """A file or directory name: refused when empty or blank (an empty --path would silently fly the
    generated path instead, an empty --out write into the working directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the name is empty; give a file or directory name")
    return text


def directory(text: str) -> Path:
    """An output directory's name (:func:`name`) as a :class:`Path`."""
    return Path(name(text))


def size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` in pixels, each side 16..16384."""
    try:
        w, h = text.lower().split("x")
        w, h = int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in pixels, e.g. 1280x720, got {text!r}") from None
    if not (16 <= w <= 16384 and 16 <= h <= 16384):
        raise argparse.ArgumentTypeError(f"size must be between 16 and 16384 pixels per side, got {text!r}")
    return w, h


def positive_int(text: str) -> int:
    """A whole number >= 1, also written like ``1e5``."""
    try:
        f = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not math.isfinite(f) or f != int(f):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    v = int(f)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def positive_int_at_most(limit: int, unit: str, shown: str | None = None):
    """An argparse type: a whole number 1 .. ``limit`` (:func:`positive_int`), refused above it as "at most
    ``shown`` (default ``limit``) ``unit``"."""

    def parse(text: str) -> int:
        v = positive_int(text)
        if v > limit:
            raise argparse.ArgumentTypeError(f"at most {shown or limit} {unit}, got {text!r}")
        return v

    return parse


def frame_count(text: str) -> int:
    """A number of frames: a whole number 1 .. :data:`viewer.drivers.frames.MAX_FRAMES`, also written like
    ``1e5``."""
    from ..drivers.frames import MAX_FRAMES

    v = positive_int(text)
    if v > MAX_FRAMES:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_FRAMES:.0e} frames ({MAX_FRAMES / 60 / 3600:.0f} hours at 60 frames per second), got {text!r}")
    return v


def positive_float(text: str) -> float:
    """A finite number > 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return v


#: the longest time step a flag accepts (``--dt``, ``--fixed-dt``): a minute of flight per frame
MAX_DT = 60.0


def time_step(text: str) -> float:
    """Seconds per frame: a finite number > 0 and at most :data:`MAX_DT` (a step of 1e300 s would fly the
    camera out of the numeric domain in one frame)."""
    v = positive_float(text)
    if v > MAX_DT:
        raise argparse.ArgumentTypeError(f"at most {MAX_DT:g} seconds per frame, got {text!r}")
    return v


#: the highest ``--max-fps``: a cap above what any display draws is no cap
MAX_FPS = 1000.0


def frame_rate(text: str) -> float:
    """Frames a second: a finite number > 0 and at most :data:`MAX_FPS`."""
    v = positive_float(text)
    if v > MAX_FPS:
        raise argparse.ArgumentTypeError(f"at most {MAX_FPS:g} frames a second, got {text!r}")
    return v


def fraction(text: str) -> float:
    """A number in [0, 1]."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (0.0 <= v <= 1.0):
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text!r}")
    return v


