"""``viewer map`` after its arguments: the scene loaded, its planes sampled, every index timed there
(:func:`viewer.reports.costmap.time_points`), with ``--budget`` the largest view-distance scale searched
first (:func:`viewer.reports.costmap.budget_scale`); then ``costmap.csv``, the figures
(:mod:`.costmap_figure`) and the summary with the machine line.

Standard library only at import (the command's help text names :data:`CSV_NAME` and the figures); numpy,
the indexes and matplotlib are imported when a map runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import UserError

__all__ = ["CSV_NAME", "DEFAULT_INDEXES", "FORMAT", "FORMAT_VERSION", "META_NAME", "VISIBLE_PNG", "run_map"]

#: the indexes timed by default: the baseline and the tree, as 'viewer record'
DEFAULT_INDEXES = ("octree", "scan")
#: the CSV and the figures a map writes into OUT (a figure per index besides: INDEX_us.png)
CSV_NAME, VISIBLE_PNG = "costmap.csv", "visible.png"
#: the map's metadata beside its CSV: what it is (format, version), where it comes from (provenance) and how it
#: was made (scene, planes, samples, indexes, scale)
META_NAME, FORMAT, FORMAT_VERSION = "costmap.json", "viewdist-costmap", 1


#: bytes one sampled camera position costs a map: its point in its plane's grid and in the joined array
#: (3 float64, twice), and for each index its count and its time (int64, float64), each copied once more to
#: write the CSV and draw the figures
BYTES_PER_POINT = 48
BYTES_PER_POINT_INDEX = 32


def check_map_memory(points: int, indexes: int, flags: str) -> None:
    """Refuse with a :class:`UserError` naming ``flags`` (``--res 2048 --slices 64``) when mapping ``points``
    camera positions with ``indexes`` indexes would not fit in the memory this process may use (the scene and
    its indexes come on top)."""
    from ..system.memory import available, format_bytes

    need = points * (BYTES_PER_POINT + BYTES_PER_POINT_INDEX * indexes)
    have, why = available()
    if need > have:
        raise UserError(f"{flags}: {points:,} camera positions need about {format_bytes(need)} for their points, "
                        f"counts and times ({indexes} index{'es' if indexes > 1 else ''}); this process may use "
                        f"{format_bytes(have)} ({why}); map fewer samples or planes")


def run_map(scene_arg: str, import_options: dict[str, str | None] | None = None, *, indexes: list[str] | None,
            plane: tuple[int, float] | None = None, axis: str = "y", slices: int | None = None, res: int,
            budget: int | None, out: str, force: bool, quiet: bool) -> int:
    """Map the scene ``scene_arg`` names (a recipe, a ``.npz``, a bundled name, or a file imported with
    ``import_options``: :func:`viewer.scenes.loading.open_scene`) into the directory ``out``; returns the exit
    status (0).

    scene_arg : how the user named the scene (also the line that says how to save a budget's scale)
    indexes : the ``--index`` names (None: :data:`DEFAULT_INDEXES` that are available)
    plane : ``(axis number, value)``, the one plane to map (a :class:`UserError` when outside the scene's world
        box); else ``slices`` planes (None: 1, the box's middle) evenly spaced across ``axis`` (``x``, ``y``, ``z``)
    res : samples along each side of a plane (with the planes weighed before the scene loads); budget :
        ``--budget`` (None: map at the scene's own radii)
    force : replace a map already in ``out``; quiet : no progress on stderr

    Every index built here compiles only its build and its query (:func:`viewer.index.warm_scope`).
    """
    from ..index import warm_scope
    from ..scenes.loading import loading_label, open_scene
    from ..terminal.text import count_text

    def load_scene(progress):
        return open_scene(scene_arg, import_options, progress, quiet=quiet)

    def planes(lo, hi):
        return _planes(plane, axis, slices, lo, hi)

    budget_text = count_text(budget) if budget is not None else ""
    n_planes = slices or 1
    sample_flags = f"--res {res}" + (f" --slices {slices}" if slices else "")
    with warm_scope(("build", "query")):
        return _map(load_scene, scene_arg=scene_arg, indexes=indexes, planes=planes, res=res, budget=budget,
                    budget_text=budget_text, out=out, force=force, quiet=quiet,
                    loading_label=loading_label(scene_arg), n_planes=n_planes, sample_flags=sample_flags)


def _planes(plane: tuple[int, float] | None, axis: str, slices: int | None, lo, hi) -> tuple[int, list[float]]:
    """The axis and the values of the planes to map, inside the box ``lo`` .. ``hi``."""
    from .costmap import AXES, slice_values

    if plane is not None:
        number, value = plane
        if not lo[number] <= value <= hi[number]:
            raise UserError(f"--plane {AXES[number]}={value:g}: outside the scene's world box, where {AXES[number]} "
                            f"is {lo[number]:.6g} .. {hi[number]:.6g}")
        return number, [value]
    number = AXES.index(axis)
    return number, slice_values(lo, hi, number, slices or 1).tolist()


def _map(load_scene, *, scene_arg, indexes, planes, res, budget, budget_text, out, force, quiet, loading_label,
         n_planes, sample_flags) -> int:
    import numpy as np

    from ..files.output import check_output_file, filled_dir, prepare_out_dir, refuse_replacing
    from ..index import INDEXES, make_index, warm_up
    from ..kernels.compile import reporting
    from ..render.modes import MODES, check_cullers
    from ..system.machine import machine, machine_line
    from ..terminal.progress import Progress, ProgressCallback
    from .costmap import AXES, budget_scale, passes, plane_grid, scene_ranges, time_column, time_points, write_csv
    from .costmap_figure import draw_heatmaps

    names = check_cullers(indexes or [n for n in DEFAULT_INDEXES if n in INDEXES], "--index")
    gpu = [n for n in names if n in MODES and n not in INDEXES]
    if gpu:
        raise UserError(f"--index {', '.join(gpu)}: the map times indexes, not culling on the GPU; choose from "
                        f"{', '.join(INDEXES)}, or any index spec")
    out = prepare_out_dir(out, create=False, what="-o")  # created once the scene has loaded
    files = [out / CSV_NAME, out / META_NAME, out / VISIBLE_PNG, *(out / f"{time_column(n)}.png" for n in names)]
    refuse_replacing(files, f"-o {out}", "viewer map", force)  # before minutes of loading and timing
    check_map_memory(res * res * n_planes, len(names), sample_flags)  # before the scene, which comes on top

    def say(line: str) -> None:
        if not quiet:
            print(line, file=sys.stderr, flush=True)

    loading = ProgressCallback(loading_label, enabled=not quiet)
    scene = load_scene(loading)
    loading.close()
    lo, hi = scene.bounds
    axis, values = planes(lo, hi)
    if budget is not None and budget >= scene.n:
        raise UserError(f"--budget {budget_text}: {scene.name} has {scene.n:,} objects, no more than the budget: "
                        "every view-distance scale keeps within it")
    with filled_dir(out, lambda d: prepare_out_dir(d, what="-o")):  # removed again if stopped before writing
        for f in files:
            check_output_file(f, "-o")
        with reporting(sys.stderr, enabled=not quiet):
            warm_up(names)

        grids = [plane_grid(lo, hi, axis, v, res) for v in values]
        us, vs = grids[0][0], grids[0][1]
        points = np.concatenate([g[2] for g in grids])
        where = f"{AXES[axis]} = {', '.join(f'{v:.6g}' for v in values)}"
        say(f"{scene.name}: {scene.n:,} objects; {len(values)} plane(s) {where}, {res} x {res} samples "
            f"each ({points.shape[0]:,} camera positions); indexes {', '.join(names)}")

        scale = 1.0
        found = None
        if budget is not None:
            say(f"budget {budget:,}: bisection over the view-distance scale, {names[0]} built at each scale "
                "tried ...")
            try:
                found = budget_scale(scene.centres, scene.radii, points, budget, index=names[0],
                                     log=lambda s, p: say(f"  scale {s:<10.6g} most visible at a sample {p:,}"))
            except ValueError as exc:
                raise UserError(f"--budget {budget}: {exc}") from None
            scale = found.scale

        radii = scene.radii * scale if scale != 1.0 else scene.radii
        built = {n: make_index(n, scene.centres, radii) for n in names}
        total = passes(len(names)) * points.shape[0]
        bar = Progress(total, f"map {len(names)} index{'es' if len(names) > 1 else ''}, {passes(len(names))} "
                              "passes", unit="points", enabled=not quiet)
        ranges = scene_ranges(scene, scale)  # begins / HLOD parents: count (and time) the objects in range
        counts, times = time_points(built, points, progress=bar.update, ranges=ranges)
        bar.update(total)
        bar.close()

        write_csv(out / CSV_NAME, points, counts, times)
        _write_meta(out / META_NAME, scene, scene_arg, names, axis, values, res, scale, budget)
        per_plane = lambda a: list(a.reshape(len(values), res, res))  # noqa: E731 - the planes' grids
        line = machine_line(machine())
        scaled = f", view distances x {scale:.6g}" if scale != 1.0 else ""
        marks = _marks(scene, axis, values)
        draw_heatmaps(out / VISIBLE_PNG, us, vs, axis, values, per_plane(counts), marks=marks,
                      title=f"{scene.name} ({scene.n:,} objects): objects "
                            f"{'in range' if ranges else 'within view distance'}{scaled}",
                      label="visible objects")
        for n in names:
            draw_heatmaps(out / f"{time_column(n)}.png", us, vs, axis, values, per_plane(times[n]), marks=marks,
                          title=f"{scene.name}: {n} query time{scaled}, kernels warm, {res} x {res} samples",
                          label=f"{n} query, us", note=line, clip=99.9)

        print(line)
        _summary(scene_arg, budget, scene, names, counts, times, found)
        for f in files:
            print(f"wrote {f}", file=sys.stderr)
        return 0


def _write_meta(path, scene, scene_arg: str, names, axis: int, values, res: int, scale: float, budget) -> None:
    import datetime as _dt

    from ..recording.meta import write_json_atomic
    from ..system.provenance import provenance
    from .costmap import AXES

    write_json_atomic(path, {
        "format": FORMAT, "format_version": FORMAT_VERSION, "provenance": provenance(),
        "command": list(sys.argv), "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "scene": {"arg": scene_arg, "name": scene.name, "n": int(scene.n)}, "indexes": list(names),
        "axis": AXES[axis], "planes": [float(v) for v in values], "res": int(res), "radius_scale": float(scale),
        "budget": budget, "csv": CSV_NAME,
    })


def _marks(scene, axis: int, values) -> list:
    """Per plane, the in-plane positions (M, 2) of the scene's cluster centres within two spreads of it."""
    import numpy as np

    from .costmap import plane_axes

    u, v = plane_axes(axis)
    c, s = scene.cluster_centres, scene.cluster_spread
    return [c[np.abs(c[:, axis] - value) <= 2.0 * s][:, [u, v]] for value in values]


def _summary(scene_arg: str, budget: int | None, scene, names, counts, times, found) -> None:
    """Print the counts, each index's times and the budget's scale (with how to save it) to stdout."""
    import numpy as np

    from .costmap import round_scale

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
    print(f"budget {budget:,}: largest view-distance scale {found.scale:.6g} (most visible at a sample "
          f"{found.peak:,}){nxt}; {found.builds} scales tried")
    base = (scene.recipe or {}).get("radius_scale")  # the scene's radii are scaled already: save the product
    saved = round_scale(found.scale * base, down=True) if base is not None else found.scale
    if Path(scene.source or "").suffix == ".toml":  # (--radius-scale rewrites a recipe, not a data file)
        print(f"save it: viewer scene generate {scene_arg} --radius-scale {saved:.6g} -o FILE.npz")
