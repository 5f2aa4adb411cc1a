"""Scenes from the files engines and tools export: glTF 2.0 levels, PLY point clouds, CSV / TSV and
Parquet tables of placements.

>>> scene = import_scene("level.glb", view_distance="table:1=300,10=2000,100=inf")   # doctest: +SKIP

Every format becomes N objects (centres, view distances, sizes, colours); glTF objects also keep the mesh
they instance and their transform (:class:`viewer.scenes.meshes.MeshSet`). View distances come from the
file (a column ``r``, or the one ``columns={"r": NAME}`` names), else from a rule (:mod:`.rules`). What
was imported and how is kept in ``scene.recipe["import"]``. Any problem with the file raises one
:class:`~viewer.scenes.SceneError` naming the file and the problem.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from viewer.domain import RADIUS_LIMIT
from viewer.files.inputs import why_missing

from ..errors import SceneError
from ..scene import Scene
from ..construct import check_domain
from ..limits import stem_name
from ._build import import_line, make_scene
from .columns import ROLES, parse_columns
from .rules import DEFAULT_POINTS, DEFAULT_SIZED, default_rule, parse_rule

__all__ = ["IMPORT_FORMATS", "IMPORT_OPTIONS", "ROLES", "DEFAULT_POINTS", "DEFAULT_SIZED", "default_rule",
           "import_line", "import_scene", "parse_rule"]

#: file suffix -> format
IMPORT_FORMATS: dict[str, str] = {
    ".gltf": "gltf", ".glb": "gltf", ".ply": "ply", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet",
}

#: the options of an import (keyword arguments of :func:`import_scene`) -> the flag that gives them on the
#: command line (``viewer scene import``, and every command that imports a file on the fly)
IMPORT_OPTIONS: dict[str, str] = {"view_distance": "--view-distance", "columns": "--columns"}


def _read(path: Path, fmt: str, mapping: dict[str, str], progress) -> dict:
    if fmt == "gltf":
        from .gltf import read_gltf

        return read_gltf(path, mapping)
    if fmt == "ply":
        from .ply import read_ply

        return read_ply(path, mapping, progress)
    from .tables import read_table

    return read_table(path, fmt, mapping)


def import_scene(path, *, columns: str | dict | None = None, view_distance: str | None = None,
                 name: str | None = None, progress: Callable[[int, int], None] | None = None) -> Scene:
    """Read a glTF, PLY, CSV, TSV or Parquet file as a :class:`Scene` (see the module docstring).

    columns : ``"x=px,y=py,z=pz,r=view"`` or ``{"x": "px", ...}``: which column plays which role
    view_distance : a rule for files without view distances (``constant:value=500``, ``size:factor=200``,
        ``table:1=300,10=2000,100=inf``); default: one picked from the file's own scale
        (:func:`default_rule`)
    progress : ``progress(done, total)`` while a slow format reads (rows of an ASCII PLY file)
    """
    p = Path(path)
    fmt = IMPORT_FORMATS.get(p.suffix.lower())
    try:
        if fmt is None:
            raise SceneError(f"cannot import {p.suffix or 'a file without a suffix'!r}: importable are "
                             f"{', '.join(IMPORT_FORMATS)}")
        mapping = parse_columns(columns) if isinstance(columns, str) or columns is None else dict(columns)
        if view_distance is not None:
            parse_rule(view_distance)  # a bad rule is reported before the file is read
        if not p.is_file():
            raise SceneError(why_missing(p) if not p.exists() else "is not a file")
        arrays = _read(p, fmt, mapping, progress)
        check_domain(arrays["centres"], "centres", rows="object")
        if arrays.get("extents") is not None:
            check_domain(arrays["extents"], "sizes", limit=RADIUS_LIMIT, nonnegative=True, rows="object")
        facts = {"file": p.name}
        if mapping:
            facts["columns"] = mapping
        for key in ("lod_hints",):
            if arrays.get(key):
                facts[key] = arrays[key]
        scene = make_scene(name or stem_name(p), arrays["centres"], fmt=fmt, radii=arrays["radii"],
                           extents=arrays.get("extents"), colours=arrays.get("colours"), rule=view_distance,
                           meshes=arrays.get("meshes"), facts=facts, begin=arrays.get("begin"),
                           lod=arrays.get("lod"), parent=arrays.get("parent"),
                           range_fields=arrays.get("range_columns"), rows=arrays.get("rows", ("row", 1)),
                           fit_parents=arrays.get("begin_rule"))
    except SceneError as exc:
        raise (exc if exc.source else exc.at(p)) from None
    except MemoryError:
        raise SceneError("not enough memory to import this file", source=str(p)) from None
    return scene
