"""``viewer scene``: generate scene files from recipes and describe scenes.

- ``viewer scene generate RECIPE -o FILE.npz``: generate the scene a recipe describes and write it.
- ``viewer scene info SCENE``: N, world box, bounds, radius percentiles, per-cluster counts.
- ``viewer scene list``: the bundled recipes.

A SCENE is a ``.toml`` recipe, a ``.npz`` scene file, or the name of a bundled recipe.
"""

from __future__ import annotations

import argparse
import textwrap

import numpy as np

from . import _args

def add_parser(subparsers) -> None:
    from ..drivers.scene_files import object_count, radius_scale

    p = subparsers.add_parser(
        "scene",
        help="generate scene files from recipes, describe scenes",
        description=(
            "Scenes come from recipes (TOML: a generator, its parameters, N, seed, world size, radius "
            "model, look) or from .npz data files. Every command that takes a scene accepts either, "
            "or the name of a bundled recipe (see 'viewer scene list'). Recipe fields are documented "
            "in the header of every bundled recipe and in README.md ('Scene files')."
        ),
    )
    sub = p.add_subparsers(dest="scene_command", metavar="ACTION")

    g = sub.add_parser(
        "generate",
        help="generate a recipe's scene and write it as .npz",
        description=(
            "Generate the scene a recipe describes and write it to a .npz file (atomically: nothing "
            "is left behind on failure). Same recipe and seed give bit-identical arrays on any machine."
        ),
    )
    g.add_argument("recipe", metavar="RECIPE", help="a .toml recipe, a bundled recipe's name, or a .npz (rewritten)")
    g.add_argument("-o", "--output", metavar="FILE", help="output .npz file (default: RECIPE's stem + .npz, here)")
    g.add_argument("--n", type=object_count, metavar="N", help="override the recipe's number of objects (e.g. 1e7)")
    g.add_argument("--seed", type=_seed, metavar="SEED", help="override the recipe's seed")
    g.add_argument("--radius-scale", type=radius_scale, metavar="S",
                   help="multiply every view radius by S (saved as the recipe's radius_scale, so a recording "
                        "of the file uses it; 'viewer map --budget' finds one)")
    g.add_argument("--hlod", type=_cell, metavar="CELL",
                   help="append HLOD proxies, one per grid cell CELL world units wide (the recipe's [hlod] "
                        "cell; its other [hlod] fields, or their defaults, stay: scenes/hlod.py)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    g.set_defaults(func=cmd_generate)

    i = sub.add_parser(
        "info",
        help="describe a scene: N, bounds, radius percentiles, per-cluster counts",
        description="Describe a scene (a .toml recipe is generated first, nothing is written).",
    )
    i.add_argument("scene", metavar="SCENE", help=_args.SCENE_HELP)
    i.add_argument("--json", action="store_true", help="print the description as JSON")
    _args.add_import_options(i)
    i.set_defaults(func=cmd_info)

    im = sub.add_parser(
        "import",
        help="import a glTF, PLY, CSV, TSV or Parquet file as a .npz scene",
        description=textwrap.fill(
            "Read the objects of a file engines and tools export and write them as a .npz scene (atomically). "
            "glTF 2.0 (.gltf, .glb): every mesh node and every EXT_mesh_gpu_instancing instance is an object "
            "(centre and size from its world-space bounds; colour from its material), drawn with the file's "
            "own meshes. PLY point clouds (.ply: each vertex), CSV / TSV (.csv, .tsv) and Parquet (.parquet) "
            "tables (one row per object, columns named in a header): columns x, y, z (required), r (view "
            "distance), size (the object's extent), red, green, blue, alpha (0..255 or 0..1), and the "
            "visibility ranges begin, lod1, lod2, ... (LOD switch distances) and parent (a 0-based row, -1 "
            "none); glTF MSFT_lod node LODs and mesh nodes under mesh nodes (HLOD proxies) too. Every command "
            "that takes a scene also takes these files directly, imported with the defaults.", 100
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "view distances, when the file has no r column (--view-distance RULE):\n"
            "  constant:value=500             every object seen from 500 world units\n"
            "  size:factor=200                r = 200 x the object's size (a minimum on-screen size)\n"
            "  size:factor=40,max=300         r = 40 x the size, none seen from further than 300\n"
            "  table:1=300,10=2000,100=inf    size up to 1 -> 300, up to 10 -> 2000, up to 100 -> never\n"
            "                                 culled; larger -> the last distance\n"
            "  default: picked from the file's own scale and named in the output line. With sizes (glTF,\n"
            "  a size column): size:factor=F,max=M, the median object seen from an eighth of the level's\n"
            "  extent (the largest edge of the box around the centres; F at most 200) and none from further\n"
            "  than half of it. Without: constant:value=diagonal/10 (a tenth of the box's diagonal).\n"
            "  inf means the diagonal of the scene's world box (the box around every centre): seen from\n"
            "  anywhere in it, and inside the numeric domain every index answers exactly.\n"
            "The rule and the column mapping are recorded in the scene's recipe (viewer scene info)."
        ),
    )
    im.add_argument("file", metavar="FILE", help="a .gltf, .glb, .ply, .csv, .tsv or .parquet file")
    im.add_argument("-o", "--output", metavar="OUT", help="output .npz file (default: FILE's stem + .npz, here)")
    im.add_argument("--name", help="the scene's name (default: FILE's stem)")
    _args.add_import_options(im)
    im.set_defaults(func=cmd_import)

    ls = sub.add_parser("list", help="list the bundled recipes", description="List the recipes bundled in scenes/.")
    ls.set_defaults(func=cmd_list)

    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}") from None
    if not 0 <= v < 2**63:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return v


def _cell(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (np.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be a number > 0 (a cell's edge, world units), got {text!r}")
    return v


def cmd_generate(args) -> int:
    from ..drivers.scene_files import generate

    return generate(args)


def cmd_import(args) -> int:
    from ..drivers.scene_files import import_file

    return import_file(args)


def cmd_info(args) -> int:
    from ..reports.scene_info import scene_info

    return scene_info(args.scene, _args.import_options(args), as_json=args.json)


def cmd_list(args) -> int:
    from ..reports.scene_info import scene_list

    return scene_list()
