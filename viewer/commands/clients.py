"""``viewer clients``: a game server's tick, K moving clients over one world, each index answering them as
K single queries and as one batch (``query_many``). The arguments are parsed here; the run is
:func:`viewer.bench.clients.run_clients`."""

from __future__ import annotations

import argparse
import datetime as _dt
from pathlib import Path


from . import _args
from .bench import _whole


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
    from viewer.bench.checks import parse_seed, parse_sizes

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
    p.add_argument("--n", type=parse_sizes, default=[100_000], metavar="SIZES", help="object counts, e.g. 1e5,1e6")
    p.add_argument("--k", type=_ks, default=[1, 8, 64, 512], metavar="COUNTS", help="client counts")
    p.add_argument("--layout", type=_layouts, default=["spread", "hotspots"], help="spread, hotspots")
    p.add_argument("--index", default="scan,octree,hashgrid,hgrid,bvh,kdtree", metavar="SPECS",
                   help="indexes to measure, or gpu: " + _args.INDEX_HELP)
    p.add_argument("--ticks", type=_whole(3, 10**5, "1e5"), default=20, help="server ticks per workload and K")
    p.add_argument("--step", type=_args.positive_float, default=5.0,
                   help="how far a client moves in a tick, world units")
    p.add_argument("--budget", type=_args.positive_float, default=20.0,
                   help="seconds an index may spend per workload and K before its remaining ticks are skipped")
    p.add_argument("--seed", type=parse_seed, default=0, help="random seed, 0..2**63-1")
    p.add_argument("--out", type=_args.directory, default=None,
                   help="directory for clients.csv and clients.json (default runs/clients-YYYYmmdd-HHMMSS)")
    p.add_argument("--force", action="store_true",
                   help="replace clients.csv / clients.json already in --out (refused without it)")
    p.set_defaults(func=run)


def run(args) -> int:
    from viewer.bench.checks import check_workloads
    from viewer.bench.clients import check_names, check_step, run_clients
    from viewer.bench.workloads import workload_makers

    names = check_names([args.index])
    check_step(args.step, args.ticks)
    scenes = [t.strip() for t in args.scene.split(",") if t.strip()]
    check_workloads(scenes, args.n)
    workloads = workload_makers(scenes, args.n, seed=args.seed, queries=2)
    out = args.out or Path("runs") / _dt.datetime.now().strftime("clients-%Y%m%d-%H%M%S")
    config = {"scene": args.scene, "n": args.n, "k": args.k, "layout": args.layout, "ticks": args.ticks,
              "step": args.step, "seed": args.seed}
    return run_clients(workloads, names, ks=args.k, layouts=args.layout, ticks=args.ticks, step=args.step,
                       budget=args.budget, seed=args.seed, out=out, config=config,
                       force=args.force)
