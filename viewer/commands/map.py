"""``viewer map SCENE -o OUT``: the cost map of a world (exact visible counts and query times on planes of
camera positions), and with ``--budget`` the largest global view-distance scale that keeps within it. The
arguments are parsed here; the map is :func:`viewer.reports.costmap_run.run_map`."""

from __future__ import annotations

import argparse

from ..reports.costmap_run import CSV_NAME, DEFAULT_INDEXES, VISIBLE_PNG
from . import _args

HELP = "map where a world is expensive: visible counts and query times on planes of camera positions"

#: the most samples along a side of a plane (2048 x 2048: 4 million queries per index and plane)
MAX_RES = 2048
#: the most slices
MAX_SLICES = 64

DESCRIPTION = f"""\
Sample camera positions on a plane through the scene's world box (a RES x RES grid of cell centres over
the box's two other axes), query every --index at each (kernels warm; in two or more passes over the
points, each in a random order, the indexes interleaved point by point: a point's time is the fastest of
its turns) and write into OUT:

  {VISIBLE_PNG}       the exact number of objects within view distance at each sample (log colour scale)
  INDEX_us.png      each index's query time there, microseconds (log colour scale)
  {CSV_NAME}       one row per sample: x, y, z, visible, INDEX_us for each index

--plane y=100 maps one plane; --slices N maps N evenly spaced planes across --axis (default y, up);
neither: the plane through the box's middle. The visible count is exact (every index answers as brute
force does; the indexes' counts are checked against each other) and does not depend on the machine; the
times do: the machine line is printed beside them and written under their figures.

--budget B finds the largest global view-distance scale S (every view radius times S) at which no sample
sees more than B objects: bisection over S to 0.1%, each scale tried by building the first --index over
the scaled radii and counting exactly at every sample; prints S and the next step up (which sees more),
and writes the map at S. Save S into a scene with 'viewer scene generate RECIPE --radius-scale S' (or a
recipe's radius_scale field), so that a recording of it uses it.
"""


def _plane(text: str) -> tuple[int, float]:
    """``AXIS=VALUE`` (``y=100``) -> (axis number, value in world units)."""
    import math

    from ..reports.costmap import AXES

    name, sep, value = text.partition("=")
    name = name.strip().lower()
    try:
        v = float(value)
    except ValueError:
        v = math.nan
    if not sep or name not in AXES or not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected AXIS=VALUE with AXIS x, y or z and VALUE a number in world "
                                         f"units, e.g. y=100; got {text!r}")
    return AXES.index(name), v


_res = _args.positive_int_at_most(MAX_RES, "samples a side")
_slices = _args.positive_int_at_most(MAX_SLICES, "slices")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("map", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scene", metavar="SCENE", help=_args.SCENE_HELP)
    _args.add_import_options(p)
    p.add_argument("--index", dest="indexes", nargs="+", action="extend", metavar="SPEC",
                   help=f"index(es) to time, interleaved; repeatable (default: {' and '.join(DEFAULT_INDEXES)}): "
                        + _args.INDEX_HELP)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--plane", type=_plane, metavar="AXIS=VALUE",
                       help="the plane to map, e.g. y=100 (inside the scene's world box)")
    where.add_argument("--slices", type=_slices, metavar="N",
                       help=f"map N evenly spaced planes across --axis (1..{MAX_SLICES})")
    p.add_argument("--axis", choices=("x", "y", "z"), default="y",
                   help="the axis --slices (and the default plane) cross (default: %(default)s, up)")
    p.add_argument("--res", type=_res, default=256, metavar="RES",
                   help=f"samples along each side of a plane, 1..{MAX_RES} (default: %(default)s)")
    p.add_argument("--budget", type=_args.positive_int, metavar="B",
                   help="find the largest view-distance scale at which no sample sees more than B objects, and "
                        "map at it")
    p.add_argument("-o", "--out", required=True, metavar="OUT", help="output directory (created if missing)")
    p.add_argument("--force", action="store_true", help="replace a map already in OUT (refused without it)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from ..reports.costmap_run import run_map

    return run_map(args.scene, _args.import_options(args), indexes=args.indexes, plane=args.plane, axis=args.axis,
                   slices=args.slices, res=args.res, budget=args.budget, out=args.out, force=args.force,
                   quiet=args.quiet)
