"""``viewer scene info`` and ``viewer scene list``: a scene described (N, world box, bounds, radius percentiles,
sizes, per-cluster counts, visibility ranges, LOD bands and HLOD parents), as lines or JSON; the bundled recipes
listed."""

from __future__ import annotations

import json

import numpy as np

__all__ = ["describe", "describe_ranges", "scene_info", "scene_list"]

PERCENTILES = (1, 10, 50, 90, 99, 99.9)
MAX_ROWS = 20  # clusters listed by `info` before summarising the rest


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
    from ..frame.options import SessionOptions

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
    from ..scenes.fmt import num

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


def scene_info(scene_arg: str, import_options: dict[str, str | None] | None = None, *, as_json: bool = False) -> int:
    """``viewer scene info``: load the scene ``scene_arg`` names (a recipe is generated, nothing is written) and print
    its description (:func:`describe`), as lines or ``as_json``. Returns 0."""
    from ..scenes.fmt import num
    from ..scenes.loading import generation_progress, loading_label, open_scene

    scene = open_scene(scene_arg, import_options, progress=generation_progress(loading_label(scene_arg)), quiet=True)
    d = describe(scene)
    if as_json:
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


def scene_list() -> int:
    """``viewer scene list``: one line per bundled recipe (name, generator, N, description). Returns 0."""
    from ..scenes import bundled_recipes, read_recipe

    for name, path in bundled_recipes().items():
        r = read_recipe(path)
        print(f"{name:24} {r.get('generator', '?'):15} n={r.get('n', '?'):<10,} {r.get('description', '')}")
    return 0
