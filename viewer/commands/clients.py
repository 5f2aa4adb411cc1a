"""``viewer clients``: a game server's tick, K moving clients over one world, each index answering them as
K single queries and as one batch (``query_many``)."""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import math
import sys
from pathlib import Path

from viewer.errors import UserError

from . import _args
from .bench import _seed, _sizes, _whole


def _ks(text: str) -> list[int]:
    """``1,8,64,512`` -> the client counts, each a whole number 1..65536, each once."""
    count = _whole(1, 65536, "65536")
    return list(dict.fromkeys(count(part.strip()) for part in text.split(",")))


def _layouts(text: str) -> list[str]:
    from viewer.bench.clients import LAYOUTS

    out = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in out if t not in LAYOUTS]
    if bad or not out:
        raise argparse.ArgumentTypeError(f"layouts are {', '.join(LAYOUTS)} (comma-separated); got {text!r}")
    return list(dict.fromkeys(out))


def add_parser(sub) -> None:
    p = sub.add_parser(
        "clients",
        help="time a server tick: K moving clients queried one by one and as one batch, for every index",
        description=(
            "A game server decides every tick which objects each client should receive: a per-object view "
            "distance (Unreal's NetCullDistanceSquared) queried once per client. For each workload and each K, "
            "K clients move on their own paths (spread over the world or crowded into hot spots) and every "
            "index answers each tick twice, interleaved with the other indexes: as K single queries "
            "(query_into per client) and as one batch (query_many_into, where the index may share its work "
            "among the clients; 'shared' says whether it does). Prints the median tick for all clients and per "
            "client, the batch's gain over the singles, and per K the structure that serves a tick fastest, "
            "after the machine line. Writes clients.csv and clients.json to --out."),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--scene", default="clustered",
                   help="comma-separated workloads: scene generators generated at every --n, or scene files "
                        "(a bundled recipe name such as server-100k, .toml, .npz) at their own N")
    p.add_argument("--n", type=_sizes, default=[100_000], metavar="SIZES", help="object counts, e.g. 1e5,1e6")
    p.add_argument("--k", type=_ks, default=[1, 8, 64, 512], metavar="COUNTS", help="client counts")
    p.add_argument("--layout", type=_layouts, default=["spread", "hotspots"], help="spread, hotspots")
    p.add_argument("--index", default="scan,octree,hashgrid,hgrid,bvh,kdtree", metavar="NAMES",
                   help="comma-separated indexes")
    p.add_argument("--ticks", type=_whole(3, 10**5, "1e5"), default=20, help="server ticks per workload and K")
    p.add_argument("--step", type=_args.positive_float, default=5.0,
                   help="how far a client moves in a tick, world units")
    p.add_argument("--budget", type=_args.positive_float, default=20.0,
                   help="seconds an index may spend per workload and K before its remaining ticks are skipped")
    p.add_argument("--seed", type=_seed, default=0, help="random seed, 0..2**63-1")
    p.add_argument("--out", type=_args.directory, default=None,
                   help="directory for clients.csv and clients.json (default runs/clients-YYYYmmdd-HHMMSS)")
    p.set_defaults(func=run)


def _workloads(args) -> list:
    """The workloads to build, checked before anything is compiled or generated: each ``--scene`` entry a
    generator (one workload per ``--n``) or a scene file (its own N). Returns callables making them."""
    from functools import partial

    from viewer.bench.workloads import make_workload, scene_workload
    from viewer.scenes import GENERATORS

    scenes = [t.strip() for t in args.scene.split(",") if t.strip()]
    if not scenes:
        raise UserError("--scene names no workload")
    _args.once(scenes, "--scene", key=_args.workload)
    _args.once(args.n, "--n", show=_args.count_text)
    out = []
    for s in scenes:
        if s in GENERATORS:
            out += [partial(make_workload, s, n, seed=args.seed, queries=2) for n in args.n]
        else:
            out.append(partial(scene_workload, s, queries=2, seed=args.seed))
    return out


def _check_step(step: float, ticks: int) -> None:
    """A :class:`UserError` naming --step when ``ticks`` steps of it could carry a client out of the numeric
    domain (a hot-spot client's random walk moves up to ``ticks * step`` world units from its start; half the
    domain is left to the scene's own coordinates)."""
    from viewer.domain import COORD_LIMIT

    most = COORD_LIMIT / 2 / ticks
    if step > most:
        raise UserError(f"--step {step:g}: {ticks} ticks of it can carry a client {step * ticks:.3g} world units "
                        f"away, outside the numeric domain (|coordinate| <= 2**100); at most {most:.3g} "
                        f"with --ticks {ticks}")


def verdict(rows: list[dict]) -> list[str]:
    """Per workload, layout and K: the fastest way to serve a tick (index and single / batch), and how much
    the best batch that shares its work saves against the same index's singles."""
    lines = []
    keys = dict.fromkeys((r["workload"], r["layout"], r["k"]) for r in rows)
    for wl, layout, k in keys:
        group = [r for r in rows if (r["workload"], r["layout"], r["k"]) == (wl, layout, k)]
        best = min(group, key=lambda r: min(r["single_tick_us"], r["batch_tick_us"]))
        how = "batch" if best["batch_tick_us"] <= best["single_tick_us"] else "single queries"
        tick = min(best["single_tick_us"], best["batch_tick_us"])
        best_single = min(group, key=lambda r: r["single_tick_us"])
        line = (f"{wl} {layout} K={k}: fastest {best['index']} ({how}) {tick:,.0f} us a tick, "
                f"{tick / k:,.2f} us a client; best single queries {best_single['index']} "
                f"{best_single['single_tick_us']:,.0f} us ({best_single['single_tick_us'] / tick:.2f}x)")
        shared = [r for r in group
                  if r["shared_walk"] and math.isfinite(r["batch_x_single"]) and r["batch_x_single"] > 0]
        if shared:  # batch_x_single: singles over batch (above 1: the batch is faster); said as batch / singles
            s = max(shared, key=lambda r: r["batch_x_single"])
            ratio = 1.0 / s["batch_x_single"]
            if ratio < 1.0:
                line += f"; sharing saves most on {s['index']}: its batch takes {ratio:.2f}x its singles' time"
            else:
                line += (f"; sharing saves nothing here: the best batch that shares its work, {s['index']}'s, takes "
                         f"{ratio:.2f}x its singles' time")
        lines.append(line)
    return lines


def run(args) -> int:
    from viewer.bench.clients import client_paths, measure_clients
    from viewer.bench.report import machine_line
    from viewer.system.machine import machine, system
    from viewer.files.output import filled_dir
    from viewer.terminal.progress import Progress
    from viewer.frame.culling import GPU
    from viewer.kernels.compile import reporting
    from viewer.index import INDEXES, warm_scope, warm_up
    from viewer.recording.meta import package_versions

    names = [t.strip() for t in args.index.split(",") if t.strip()]
    bad = [n for n in names if n not in INDEXES and n != GPU]
    if bad or not names:
        raise UserError(f"--index: unknown index {', '.join(map(repr, bad)) or 'list (empty)'}; "
                        f"choose from {', '.join(sorted(INDEXES))}, {GPU}")
    names = [n for n in dict.fromkeys(names) if n == GPU or not INDEXES[n].unavailable()]
    _check_step(args.step, args.ticks)
    workloads = _workloads(args)
    gl = _gpu_context() if GPU in names else None
    out = args.out or Path("runs") / _dt.datetime.now().strftime("clients-%Y%m%d-%H%M%S")
    # the clients' queries, one by one and as batches, are all it runs of an index: nothing else is compiled
    # (a first run of the default six compiled every entry point: 76 s, silent after the machine line)
    with warm_scope(("build", "query", "query_many")), filled_dir(out, _args.writable_dir):
        # (the directory is removed again when refused or stopped before writing)
        where = machine()
        print(machine_line(where))
        if gl is not None:
            from viewer.render.context import gl_info

            print(f"gpu: {gl_info(gl[0])} (llvmpipe is the CPU: its figures say nothing about a real GPU)")
        with reporting(sys.stderr):
            warm_up([n for n in names if n != GPU])
        rows: list[dict] = []
        for make in workloads:
            wl = make()
            built = {name: _build(name, wl, gl) for name in names}
            for layout in args.layout:
                for k in args.k:
                    paths = client_paths(wl.centres, k, args.ticks, layout, args.seed, step=args.step)
                    bar = Progress(args.ticks, f"{wl.name} {layout} K={k}", unit="ticks")
                    results = measure_clients(built, paths, budget_s=args.budget, progress=bar.update)
                    bar.close()
                    for r in results:
                        rows.append({"workload": wl.name, "n": wl.n, "layout": layout, **r.row()})
            for ix in built.values():
                getattr(ix, "release", lambda: None)()  # the GPU's buffers
            del built
        _print(rows)
        for line in verdict(rows):
            print(line)
        _write(rows, out, where, args, system(), package_versions())
    return 0


def _gpu_context():
    """A headless GL context and its shader library for ``--index gpu``; UserError when it cannot cull."""
    from viewer.render import ShaderLibrary, create_headless_context
    from viewer.render.gpu_cull import gpu_cull_unavailable

    try:
        ctx = create_headless_context()
    except RuntimeError as exc:
        raise UserError(f"--index gpu needs a GL context: {exc}") from None
    why = gpu_cull_unavailable(ctx)
    if why:
        raise UserError(f"--index gpu: {why}")
    return ctx, ShaderLibrary(ctx)


def _build(name: str, wl, gl):
    from viewer.frame.culling import GPU
    from viewer.index import INDEXES

    if name == GPU:
        from viewer.render.gpu_cull import GpuQueries

        return GpuQueries(gl[0], gl[1], wl.centres, wl.radii)
    return INDEXES[name](wl.centres, wl.radii)


_SHOWN = (("index", "index", "{}"), ("k", "K", "{}"), ("shared_walk", "shared", "{}"),
          ("single_tick_us", "singles us", "{:,.0f}"), ("batch_tick_us", "batch us", "{:,.0f}"),
          ("batch_p99_us", "batch p99", "{:,.0f}"), ("single_per_client_us", "us/client", "{:,.2f}"),
          ("batch_per_client_us", "batch us/client", "{:,.2f}"), ("batch_x_single", "batch gain", "{:.2f}x"),
          ("visible_per_client", "visible", "{:,.0f}"))


def _print(rows: list[dict]) -> None:
    groups = dict.fromkeys((r["workload"], r["layout"]) for r in rows)
    for wl, layout in groups:
        print(f"\n{wl}, clients {layout}")
        cells = [[h for _, h, _ in _SHOWN]]
        cells += [[f.format(r[c]) for c, _, f in _SHOWN] for r in rows if (r["workload"], r["layout"]) == (wl, layout)]
        widths = [max(len(row[i]) for row in cells) for i in range(len(_SHOWN))]
        for row in cells:
            print("  ".join(v.rjust(w) for v, w in zip(row, widths)))


def _write(rows, out: Path, where: dict, args, platform: str, packages: dict) -> None:
    from viewer.files.output import atomic_file
    from viewer.recording.meta import write_json_atomic

    with atomic_file(out / "clients.csv", text=True, newline="") as fh:
        if rows:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    write_json_atomic(out / "clients.json", {
        "machine": {"platform": platform, **where}, "packages": packages, "command": list(sys.argv),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "config": {"scene": args.scene, "n": args.n, "k": args.k, "layout": args.layout, "ticks": args.ticks,
                   "step": args.step, "seed": args.seed},
        "rows": rows,
    })
    print(f"wrote {out / 'clients.csv'}, {out / 'clients.json'}", file=sys.stderr)
