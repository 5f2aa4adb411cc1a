"""Scenes: N objects, each with a centre, a view radius, a drawn size and a colour.

Generated from a recipe (TOML, or arguments to :func:`generate_scene`) by one of the
:data:`GENERATORS`, with a view-radius model from :data:`RADIUS_MODELS`; or read from a ``.npz`` data
file (:mod:`viewer.scenes.format`); or imported from a glTF, PLY, CSV, TSV or Parquet file
(:mod:`viewer.scenes.importers`). All three build the scene with one checked constructor,
:func:`scene_from_arrays` (:mod:`viewer.scenes.construct`), by one set of rules and limits
(:mod:`viewer.scenes.limits`). Deterministic: the same recipe and seed give bit-identical arrays on any
machine. Pure: imports only the standard library and numpy (no GL).

>>> from viewer.scenes import generate_scene
>>> s = generate_scene("clustered", 1000, seed=1, clusters=8)
>>> s.centres.shape, s.radii.dtype, s.colours.dtype
((1000, 3), dtype('float64'), dtype('uint8'))
"""

from .build import generate_recipe, generate_scene, make_motion
from .construct import scene_from_arrays
from .errors import SceneError
from .files import bundled_recipes, check_import_options, load_scene, read_recipe, resolve_scene_path
from .format import FORMAT_VERSION, read_npz, save_scene
from .generators import GENERATORS
from .importers import IMPORT_FORMATS, IMPORT_OPTIONS, import_line, import_scene
from .limits import MAX_N
from .look import PALETTES
from .meshes import MeshSet
from .radii import RADIUS_MODELS
from .recipe import MOTION_FIELDS, RECIPE_FIELDS, RESERVED_FIELDS, check_recipe
from .scene import MOTION_KINDS, Motion, Scene

__all__ = [
    "FORMAT_VERSION",
    "GENERATORS",
    "IMPORT_FORMATS",
    "IMPORT_OPTIONS",
    "MAX_N",
    "MOTION_FIELDS",
    "MOTION_KINDS",
    "MeshSet",
    "Motion",
    "PALETTES",
    "RADIUS_MODELS",
    "RECIPE_FIELDS",
    "RESERVED_FIELDS",
    "Scene",
    "SceneError",
    "bundled_recipes",
    "check_import_options",
    "check_recipe",
    "generate_recipe",
    "generate_scene",
    "import_line",
    "import_scene",
    "load_scene",
    "make_motion",
    "read_npz",
    "read_recipe",
    "resolve_scene_path",
    "save_scene",
    "scene_from_arrays",
]
