"""``viewer scene``: generate scene files from recipes and describe scenes.

- ``viewer scene generate RECIPE -o FILE.npz``: generate the scene a recipe describes and write it.
- ``viewer scene info SCENE``: N, world box, bounds, radius percentiles, per-cluster counts.
- ``viewer scene list``: the bundled recipes.

A SCENE is a ``.toml`` recipe, a ``.npz`` scene file, or the name of a bundled recipe.
"""

from __future__ import annotations

import argparse
import json
import textwrap
import time
from pathlib import Path

import numpy as np

from . import _args

PERCENTILES = (1, 10, 50, 90, 99, 99.9)
MAX_ROWS = 20  # clusters listed by `info` before summarising the rest


def add_parser(subparsers) -> None:
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
    g.add_argument("--n", type=_count, metavar="N", help="override the recipe's number of objects (e.g. 1e7)")
    g.add_argument("--seed", type=_seed, metavar="SEED", help="override the recipe's seed")
    g.add_argument("--radius-scale", type=_radius_scale, metavar="S",
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


def _count(text: str) -> int:
    from viewer.scenes import MAX_N

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (np.isfinite(v) and v.is_integer() and 1 <= v <= MAX_N):
        raise argparse.ArgumentTypeError(f"must be a whole number 1..{MAX_N}, got {text!r}")
    return int(v)


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


def _radius_scale(text: str) -> float:
    from viewer.scenes import RECIPE_FIELDS

    hi = RECIPE_FIELDS["radius_scale"].hi
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < v <= hi:
        raise argparse.ArgumentTypeError(f"must be a number > 0 and <= {hi:g}, got {text!r}")
    return v


def _progress(label: str, enabled: bool = True):
    """Progress of a long generation (a million objects or more) on stderr (:mod:`viewer.terminal.progress`)."""
    from viewer.terminal.progress import ProgressCallback

    return ProgressCallback(label, enabled=enabled, min_total=1_000_000)


def renamed_for_n(name: str, old_n, new_n: int) -> str | None:
    """The name of a scene whose recipe, named ``name`` for its ``old_n`` objects (``uniform-1m``: it ends in
    ``-`` and the count as bundled names spell it), is generated with ``new_n`` instead: the same name for
    the new count (``uniform-10m``); None when the name does not spell ``old_n`` or the count is unchanged
    (``mine`` stays ``mine``)."""
    from viewer.scenes.fmt import short_count

    if not isinstance(old_n, int) or isinstance(old_n, bool) or old_n == new_n or old_n < 1:
        return None
    suffix = f"-{short_count(old_n)}"
    if not name.endswith(suffix) or name == suffix:
        return None
    return name[: -len(suffix)] + f"-{short_count(new_n)}"


#: the flags of ``scene generate`` that override a recipe field: (flag, its argparse dest, the field it sets)
OVERRIDES = (("--n", "n", "n"), ("--seed", "seed", "seed"), ("--radius-scale", "radius_scale", "radius_scale"),
             ("--hlod", "hlod", "hlod.cell"))


def _overridden(args) -> dict[str, str]:
    """The recipe fields the command line sets, each with the flag and the value given
    (``{"hlod.cell": "--hlod 1e-300"}``): a refusal of such a field names the flag, not the recipe."""
    return {field: f"{flag} {getattr(args, dest)}" for flag, dest, field in OVERRIDES
            if getattr(args, dest, None) is not None}


def _generate_plan(args) -> tuple[Path, dict | None, str | None, object]:
    """What ``scene generate`` will do, decided before any work: the resolved path, the recipe with the
    --n / --seed / --radius-scale overrides (None without them), when --n changes the count a recipe's
    name spells (``uniform-1m --n 1e7``) the name it was renamed from (the recipe then carries the new
    name), and the recipe's own n."""
    from viewer.scenes import SceneError, read_recipe, resolve_scene_path

    path = resolve_scene_path(args.recipe)
    hlod = getattr(args, "hlod", None)
    if not _overridden(args):
        return path, None, None, None
    if path.suffix != ".toml":
        flags = [flag for flag, _, _ in OVERRIDES]
        raise SceneError(f"{', '.join(flags[:-1])} and {flags[-1]} apply only to a .toml recipe", source=str(path))
    recipe = read_recipe(path)
    was, old_n = None, recipe.get("n")
    if args.n is not None:
        new = renamed_for_n(str(recipe.get("name", path.stem)), recipe.get("n"), args.n)
        if new is not None:
            was, recipe["name"] = recipe["name"], new
        recipe["n"] = args.n
    if args.seed is not None:
        recipe["seed"] = args.seed
    if args.radius_scale is not None:
        recipe["radius_scale"] = args.radius_scale
    if hlod is not None:
        table = recipe.get("hlod")
        recipe["hlod"] = {**(table if isinstance(table, dict) else {}), "cell": hlod}
    return path, recipe, was, old_n


def _load_for_generate(args, progress, plan=None):
    from viewer.scenes import SceneError, generate_recipe, load_scene

    path, recipe, _, _ = plan if plan is not None else _generate_plan(args)
    if recipe is None:
        return load_scene(path, progress=progress)
    try:
        scene = generate_recipe(recipe, progress)
    except SceneError as exc:
        flag = _overridden(args).get(exc.field)
        if flag is not None:  # the value came from the command line, not from the recipe's file
            raise SceneError(f"{flag}: {exc.problem}") from None
        raise exc.at(path) from None
    scene.source = str(path)
    return scene


def _output(args, stem: str) -> Path:
    """The .npz file ``scene generate`` or ``scene import`` writes: ``-o`` (an empty name refused, not taken as
    the default), else ``stem.npz`` here; checked before any work (:func:`viewer.files.output.check_output_file`:
    a directory, a device or a FIFO, a name too long, a missing or unwritable directory)."""
    from viewer.files.output import check_output_file
    from viewer.scenes import SceneError

    text = args.output if args.output is not None else stem + ".npz"
    out = check_output_file(text, "-o/--output")
    if out.suffix != ".npz":
        raise SceneError(f"the output must be a .npz file, got {text!r}", field="-o/--output")
    return out


def cmd_generate(args) -> int:
    from viewer.scenes import save_scene
    from viewer.scenes.fmt import span

    plan = _generate_plan(args)
    was, old_n = plan[2], plan[3]
    stem = Path(args.recipe).stem
    if was is not None:  # uniform-1m --n 1e7 writes uniform-10m.npz, not a "1m" file of 10m objects
        stem = renamed_for_n(stem, old_n, args.n) or stem
    out = _output(args, stem)  # before generating: a minute of work must not end in "cannot write"
    t0 = time.perf_counter()
    scene = _load_for_generate(args, _progress(f"generating {Path(args.recipe).stem}", not args.quiet), plan)
    save_scene(scene, out)
    dt = time.perf_counter() - t0
    gen = scene.generator or "data"
    size = out.stat().st_size / 1e6
    name = f"{scene.name} (renamed from {was} for --n {args.n:,})" if was is not None else scene.name
    print(
        f"wrote {out}: {name}, {scene.n:,} objects ({gen}, seed {scene.seed}), "
        f"radii {span(scene.radii)}, {size:.1f} MB, {dt:.2f} s"
    )
    return 0


def cmd_import(args) -> int:
    from viewer.scenes import import_line, save_scene
    from viewer.scenes.importers import import_scene
    from viewer.scenes.loading import loading_label

    out = _output(args, Path(args.file).stem)
    t0 = time.perf_counter()
    scene = import_scene(args.file, columns=args.columns, view_distance=args.view_distance, name=args.name,
                         progress=_progress(loading_label(args.file)))
    t1 = time.perf_counter()
    save_scene(scene, out)
    t2 = time.perf_counter()
    print(f"wrote {out}: {scene.name}, {import_line(scene)}; read {t1 - t0:.2f} s, written {t2 - t1:.2f} s")
    return 0


def describe(scene) -> dict:
    """A JSON-able description of ``scene`` (what ``viewer scene info`` prints)."""
    c, r = scene.centres, scene.radii
    lo, hi = scene.bounds
    cat = scene.category
    k = scene.cluster_centres.shape[0]
    counts = np.bincount(cat[cat >= 0].astype(np.int64), minlength=k) if scene.n else np.zeros(k, dtype=np.int64)
    clusters = []
    for i in np.argsort(-counts, kind="stable"):
        row = {"id": int(i), "count": int(counts[i]), "share": float(counts[i]) / max(1, scene.n)}
        if i < k:
            row["centre"] = scene.cluster_centres[i].tolist()
            row["spread"] = float(scene.cluster_spread[i])
        clusters.append(row)
    return {
        "name": scene.name,
        "source": scene.source,
        "sha256": scene.sha256,
        "generator": scene.generator,
        "seed": scene.seed,
        "params": (scene.recipe or {}).get("params"),
        "radius_model": (scene.recipe or {}).get("radius"),
        "n": scene.n,
        "world": scene.world,
        "origin": np.asarray(scene.origin).tolist(),
        "box": [lo.tolist(), hi.tolist()],
        "bounds": [c.min(axis=0).tolist(), c.max(axis=0).tolist()],
        "radii": {
            "min": float(r.min()),
            **{f"p{p:g}": float(v) for p, v in zip(PERCENTILES, np.percentile(r, PERCENTILES))},
            "max": float(r.max()),
            "mean": float(r.mean()),
        },
        # an object's size is its largest box edge (README, the view-distance rules); the arrays hold the drawn
        # half-extent, so twice that
        "sizes": {"min": 2.0 * float(scene.sizes.min()), "max": 2.0 * float(scene.sizes.max()),
                  "measure": "largest box edge (twice the drawn half-extent)"},
        "background": int(np.count_nonzero(cat < 0)),
        "clusters": clusters,
        "extras": scene.extras,
        "ranges": describe_ranges(scene),
    }


#: the cross-fade window ``scene info`` checks HLOD children against: the viewer's default --fade
def _default_fade() -> float:
    from viewer.frame.options import SessionOptions

    return float(SessionOptions().fade)


def _stats(v: np.ndarray) -> dict:
    return {"min": float(np.min(v)), "median": float(np.median(v)), "max": float(np.max(v))}


def describe_ranges(scene) -> dict | None:
    """The visibility ranges, LOD bands and HLOD parents of ``scene`` (issue 24), JSON-able; None when it
    has none.

    begin: objects with a begin > 0 and their begins' span; lod: switch columns L, objects per number of
    switches, each switch's span (its finite values); parents: proxies (objects that are some object's
    parent), children, children per proxy, proxies with begin 0 (their children are never shown), and
    children whose end does not reach their proxy's begin x (1 + the default fade) + their distance to it
    (a hole possible while the camera nears the proxy); mesh_bands: the bands of the mesh LOD table.
    """
    begin, lod, parent = (getattr(scene, k, None) for k in ("begin", "lod", "parent"))
    lods = getattr(scene.meshes, "lods", None) if scene.meshes is not None else None
    if begin is None and lod is None and parent is None and lods is None:
        return None
    out: dict = {}
    if begin is not None:
        pos = begin[begin > 0]
        out["begin"] = {"objects": int(pos.size), **(_stats(pos) if pos.size else {})}
    if lod is not None:
        fin = np.isfinite(lod)
        per = np.bincount(fin.sum(axis=1), minlength=lod.shape[1] + 1)
        out["lod"] = {"switches": int(lod.shape[1]),
                      "objects_by_switches": {str(k): int(c) for k, c in enumerate(per) if c},
                      "spans": [(_stats(lod[fin[:, j], j]) if fin[:, j].any() else None) for j in range(lod.shape[1])]}
    if parent is not None:
        kids = np.flatnonzero(parent >= 0)
        par = parent[kids]
        proxies, counts = np.unique(par, return_counts=True)
        row = {"proxies": int(proxies.size), "children": int(kids.size)}
        if kids.size:
            b = np.zeros(scene.n) if begin is None else begin
            d = scene.centres[kids] - scene.centres[par]
            off = np.sqrt((d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2])
            fade = _default_fade()
            short = scene.radii[kids] < b[par] * (1.0 + fade) + off
            row.update({"children_per_proxy": _stats(counts), "proxies_with_begin_0": int(np.count_nonzero(b[proxies] == 0)),
                        "proxy_begin": _stats(b[proxies]), "children_short_of_the_window": int(np.count_nonzero(short)),
                        "fade": fade})
        out["parents"] = row
    if lods is not None:
        out["mesh_bands"] = int(lods.shape[1])
    return out


def _range_lines(rg: dict | None) -> list[str]:
    """``scene info``'s lines for :func:`describe_ranges`."""
    from viewer.scenes.fmt import num

    if not rg:
        return []

    def sp(st):
        lo, hi = num(st["min"]), num(st["max"])
        return f"{lo} (all)" if lo == hi else f"{lo}..{hi} (median {num(st['median'])})"

    def many(k: int, one: str, more: str) -> str:
        return f"{k:,} {one if k == 1 else more}"

    out = []
    if "begin" in rg:
        b = rg["begin"]
        out.append(f"begin      {many(b['objects'], 'object', 'objects')} with a begin > 0" + (f": {sp(b)}" if b["objects"] else ""))
    if "lod" in rg:
        lo = rg["lod"]
        by = ", ".join(f"{c:,} with {k}" for k, c in lo["objects_by_switches"].items())
        out.append(f"lod        up to {lo['switches']} switch distances ({int(lo['switches']) + 1} bands); objects by "
                   f"switches: {by}")
        for j, st in enumerate(lo["spans"]):
            if st is not None:
                out.append(f"  switch {j + 1}  band {j} -> {j + 1} at {sp(st)}")
    if "parents" in rg:
        p = rg["parents"]
        line = f"parents    {many(p['proxies'], 'proxy', 'proxies')} (HLOD parents), {many(p['children'], 'child', 'children')}"
        if p["children"]:
            line += (f", {sp(p['children_per_proxy'])} per proxy; proxy begins (switch distances) "
                     f"{sp(p['proxy_begin'])}")
        out.append(line)
        if p.get("proxies_with_begin_0"):
            out.append(f"  warning  {p['proxies_with_begin_0']:,} proxies have begin 0: their children are never shown")
        if p.get("children_short_of_the_window"):
            out.append(f"  warning  {p['children_short_of_the_window']:,} children end before their proxy's begin x "
                       f"(1 + fade {p['fade']:g}) + their distance to it: a hole is possible as the camera nears")
    if "mesh_bands" in rg:
        out.append(f"mesh lods  {rg['mesh_bands']} bands in the mesh LOD table")
    return out


def _fmt_vec(v) -> str:
    return "[" + ", ".join(f"{x:.6g}" for x in v) + "]"


def cmd_info(args) -> int:
    from viewer.scenes.fmt import num
    from viewer.scenes.loading import loading_label, open_scene

    scene = open_scene(args.scene, _args.import_options(args), progress=_progress(loading_label(args.scene)), quiet=True)
    d = describe(scene)
    if args.json:
        print(json.dumps(d, indent=2))
        return 0
    out = []
    src = f"  ({d['source']}, sha256 {d['sha256'][:12]})" if d["source"] else ""
    out.append(f"scene      {d['name']}{src}")
    if d["generator"]:
        params = ", ".join(f"{k}={v}" for k, v in (d["params"] or {}).items() if v is not None)
        out.append(f"generator  {d['generator']}, seed {d['seed']}" + (f" ({params})" if params else ""))
        if d["radius_model"] is None:
            out.append("radius     the generator's own (see its params)")
        else:
            rm = dict(d["radius_model"])
            model = rm.pop("model", "?")
            out.append(f"radius     {model} ({', '.join(f'{k}={v:g}' for k, v in rm.items())})")
        if (scene.recipe or {}).get("radius_scale") is not None:
            out.append(f"radius x   {scene.recipe['radius_scale']:g} (the recipe's radius_scale)")
    elif scene.recipe and "import" in scene.recipe:
        imp = scene.recipe["import"]
        why = imp.get("view_distance_why")
        why = f" ({why})" if why and why != "--view-distance" else ""
        out.append(f"imported   {imp.get('format')} file {imp.get('file')}, view distances {imp.get('view_distance')}"
                   + why + (f" (inf = {imp['inf_means']:.6g})" if "inf_means" in imp else "")
                   + (f", columns {imp['columns']}" if imp.get("columns") else ""))
        if scene.meshes is not None:
            out.append(f"meshes     {scene.meshes.k} distinct, {scene.meshes.faces.shape[0]:,} triangles in all")
        if imp.get("lod_hints"):
            h = imp["lod_hints"]
            src = ", ".join(f"{v} from {k}" for k, v in h.get("switches from", {}).items())
            out.append(f"MSFT_lod   {h.get('nodes')} nodes with LODs, switch distances: {src} ({h.get('coverage rule')})")
        if imp.get("parents"):
            out.append(f"parents    from the {imp['parents']}")
        if imp.get("ranges"):
            out.append("ranges     columns " + ", ".join(f"{k}={v}" for k, v in imp["ranges"].items()))
    else:
        out.append(f"generator  none (scene data), seed {d['seed']}")
    out.append(f"objects    {d['n']:,}")
    out.append(f"world      {d['world']:g}, centred at {_fmt_vec(d['origin'])}: box {_fmt_vec(d['box'][0])} .. {_fmt_vec(d['box'][1])}")
    out.append(f"bounds     {_fmt_vec(d['bounds'][0])} .. {_fmt_vec(d['bounds'][1])}")
    rr = d["radii"]
    out.append("radii      " + "  ".join(f"{k} {v:.4g}" for k, v in rr.items()))
    out.append(f"size       largest box edge {num(d['sizes']['min'])} .. {num(d['sizes']['max'])} (each object's "
               f"size, as view-distance rules read it: twice the drawn half-extent)")
    n = max(1, d["n"])
    cl = d["clusters"]
    out.append(f"clusters   {len(cl)}; background (no cluster) {d['background']:,} ({100 * d['background'] / n:.1f}%)")
    if cl:
        out.append(f"  {'id':>6} {'count':>10} {'share':>7}  {'spread':>9}  centre")
        for row in cl[:MAX_ROWS]:
            spread = f"{row['spread']:9.4g}" if "spread" in row else f"{'':9}"
            centre = _fmt_vec(row["centre"]) if "centre" in row else ""
            out.append(f"  {row['id']:>6} {row['count']:>10,} {100 * row['share']:6.2f}%  {spread}  {centre}")
        if len(cl) > MAX_ROWS:
            rest = [row["count"] for row in cl[MAX_ROWS:]]
            out.append(f"  ... {len(rest)} more clusters, {min(rest):,}..{max(rest):,} objects each, {sum(rest):,} in all")
    out.extend(_range_lines(d["ranges"]))
    for key, val in (d["extras"] or {}).items():
        out.append(f"extras     {key}: {json.dumps(val)}")
    print("\n".join(out))
    return 0


def cmd_list(args) -> int:
    from viewer.scenes import bundled_recipes, read_recipe

    for name, path in bundled_recipes().items():
        r = read_recipe(path)
        print(f"{name:24} {r.get('generator', '?'):15} n={r.get('n', '?'):<10,} {r.get('description', '')}")
    return 0
