"""``viewer map SCENE -o OUT``: the cost map of a world (exact visible counts and query times on planes of
camera positions), and with ``--budget`` the largest global view-distance scale that keeps within it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import UserError
from . import _args

HELP = "map where a world is expensive: visible counts and query times on planes of camera positions"

#: the most samples along a side of a plane (2048 x 2048: 4 million queries per index and plane)
MAX_RES = 2048
#: the most slices
MAX_SLICES = 64
#: the indexes timed by default: the baseline and the tree, as 'viewer record'
DEFAULT_INDEXES = ("octree", "scan")
#: the CSV and the figures a map writes into OUT (a figure per index besides: INDEX_us.png)
CSV_NAME, VISIBLE_PNG = "costmap.csv", "visible.png"

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


def _res(text: str) -> int:
    v = _args.positive_int(text)
    if v > MAX_RES:
        raise argparse.ArgumentTypeError(f"at most {MAX_RES} samples a side, got {text!r}")
    return v


def _slices(text: str) -> int:
    v = _args.positive_int(text)
    if v > MAX_SLICES:
        raise argparse.ArgumentTypeError(f"at most {MAX_SLICES} slices, got {text!r}")
    return v


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("map", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scene", metavar="SCENE", help=_args.SCENE_HELP)
    _args.add_import_options(p)
    p.add_argument("--index", dest="indexes", nargs="+", action="extend", metavar="NAME",
                   help=f"index(es) to time, interleaved; repeatable (default: {' and '.join(DEFAULT_INDEXES)})")
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


def _planes(args, lo, hi) -> tuple[int, list[float]]:
    """The axis and the values of the planes to map, inside the box ``lo`` .. ``hi``."""
    from ..reports.costmap import AXES, slice_values

    if args.plane is not None:
        axis, value = args.plane
        if not lo[axis] <= value <= hi[axis]:
            raise UserError(f"--plane {AXES[axis]}={value:g}: outside the scene's world box, where {AXES[axis]} is "
                            f"{lo[axis]:.6g} .. {hi[axis]:.6g}")
        return axis, [value]
    axis = AXES.index(args.axis)
    return axis, slice_values(lo, hi, axis, args.slices or 1).tolist()


def _marks(scene, axis: int, values) -> list:
    """Per plane, the in-plane positions (M, 2) of the scene's cluster centres within two spreads of it."""
    import numpy as np

    from ..reports.costmap import plane_axes

    u, v = plane_axes(axis)
    c, s = scene.cluster_centres, scene.cluster_spread
    return [c[np.abs(c[:, axis] - value) <= 2.0 * s][:, [u, v]] for value in values]


def run(args) -> int:
    from ..index import warm_scope

    with warm_scope(("build", "query")):  # every index built here compiles only its build and its query
        return _map(args)


def _map(args) -> int:
    import numpy as np

    from ..bench.report import machine_line
    from ..drivers.replay import check_indexes
    from ..kernels.compile import reporting
    from ..system.machine import machine
    from ..files.output import check_output_file, filled_dir, prepare_out_dir, refuse_replacing
    from ..terminal.progress import Progress, ProgressCallback
    from ..index import INDEXES, make_index, warm_up
    from ..reports.costmap import (AXES, budget_scale, passes, plane_grid, scene_ranges, time_column, time_points,
                                 write_csv)
    from ..reports.costmap_figure import draw_heatmaps

    names = check_indexes(args.indexes or [n for n in DEFAULT_INDEXES if n in INDEXES])
    if any(n not in INDEXES for n in names):
        raise UserError(f"--index {', '.join(n for n in names if n not in INDEXES)}: the map times indexes, not "
                        f"culling on the GPU; choose from {', '.join(INDEXES)}")
    out = prepare_out_dir(args.out, create=False, what="-o")  # created once the scene has loaded
    files = [out / CSV_NAME, out / VISIBLE_PNG, *(out / f"{time_column(n)}.png" for n in names)]
    refuse_replacing(files, f"-o {out}", "viewer map", args.force)  # before minutes of loading and timing

    def say(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    loading = ProgressCallback(_args.loading_label(args.scene), enabled=not args.quiet)
    scene = _args.load_scene(args, progress=loading, quiet=args.quiet)
    loading.close()
    lo, hi = scene.bounds
    axis, values = _planes(args, lo, hi)
    if args.budget is not None and args.budget >= scene.n:
        raise UserError(f"--budget {_args.count_text(args.budget)}: {scene.name} has {scene.n:,} objects, no more "
                        "than the budget: "
                        "every view-distance scale keeps within it")
    with filled_dir(out, lambda d: prepare_out_dir(d, what="-o")):  # removed again if stopped before writing
        for f in files:
            check_output_file(f, "-o")
        with reporting(sys.stderr, enabled=not args.quiet):
            warm_up(names)

        grids = [plane_grid(lo, hi, axis, v, args.res) for v in values]
        us, vs = grids[0][0], grids[0][1]
        points = np.concatenate([g[2] for g in grids])
        where = f"{AXES[axis]} = {', '.join(f'{v:.6g}' for v in values)}"
        say(f"{scene.name}: {scene.n:,} objects; {len(values)} plane(s) {where}, {args.res} x {args.res} samples "
            f"each ({points.shape[0]:,} camera positions); indexes {', '.join(names)}")

        scale = 1.0
        found = None
        if args.budget is not None:
            say(f"budget {args.budget:,}: bisection over the view-distance scale, {names[0]} built at each scale "
                "tried ...")
            try:
                found = budget_scale(scene.centres, scene.radii, points, args.budget, index=names[0],
                                     log=lambda s, p: say(f"  scale {s:<10.6g} most visible at a sample {p:,}"))
            except ValueError as exc:
                raise UserError(f"--budget {args.budget}: {exc}") from None
            scale = found.scale

        radii = scene.radii * scale if scale != 1.0 else scene.radii
        indexes = {n: make_index(n, scene.centres, radii) for n in names}
        total = passes(len(names)) * points.shape[0]
        bar = Progress(total, f"map {len(names)} index{'es' if len(names) > 1 else ''}, {passes(len(names))} "
                              "passes", unit="points", enabled=not args.quiet)
        ranges = scene_ranges(scene, scale)  # begins / HLOD parents: count (and time) the objects in range
        counts, times = time_points(indexes, points, progress=bar.update, ranges=ranges)
        bar.update(total)
        bar.close()

        write_csv(out / CSV_NAME, points, counts, times)
        per_plane = lambda a: list(a.reshape(len(values), args.res, args.res))  # noqa: E731 - the planes' grids
        line = machine_line(machine())
        scaled = f", view distances x {scale:.6g}" if scale != 1.0 else ""
        marks = _marks(scene, axis, values)
        draw_heatmaps(out / VISIBLE_PNG, us, vs, axis, values, per_plane(counts), marks=marks,
                      title=f"{scene.name} ({scene.n:,} objects): objects "
                            f"{'in range' if ranges else 'within view distance'}{scaled}",
                      label="visible objects")
        for n in names:
            draw_heatmaps(out / f"{time_column(n)}.png", us, vs, axis, values, per_plane(times[n]), marks=marks,
                          title=f"{scene.name}: {n} query time{scaled}, kernels warm, {args.res} x {args.res} "
                                "samples",
                          label=f"{n} query, us", note=line, clip=99.9)

        print(line)
        _summary(args, scene, names, counts, times, found)
        for f in files:
            print(f"wrote {f}", file=sys.stderr)
        return 0


def _summary(args, scene, names, counts, times, found) -> None:
    """Print the counts, each index's times and the budget's scale (with how to save it) to stdout."""
    import numpy as np

    from ..reports.costmap import round_scale

    print(f"visible  min {int(counts.min()):,}  median {float(np.median(counts)):,.0f}  max {int(counts.max()):,}"
          f"  (exact, over {counts.size:,} samples)")
    for n in names:
        t = times[n]
        print(f"{n:<10} query median {np.median(t):8.2f} us  p95 {np.percentile(t, 95):8.2f} us  "
              f"max {t.max():9.1f} us")
    if found is None:
        return
    nxt = ("; no larger scale is tried (the limit)" if found.next_scale is None else
           f"; the next step up, {found.next_scale:.6g}, sees {found.next_peak:,}")
    print(f"budget {args.budget:,}: largest view-distance scale {found.scale:.6g} (most visible at a sample "
          f"{found.peak:,}){nxt}; {found.builds} scales tried")
    base = (scene.recipe or {}).get("radius_scale")  # the scene's radii are scaled already: save the product
    saved = round_scale(found.scale * base, down=True) if base is not None else found.scale
    if Path(scene.source or "").suffix == ".toml":  # (--radius-scale rewrites a recipe, not a data file)
        print(f"save it: viewer scene generate {args.scene} --radius-scale {saved:.6g} -o FILE.npz")
