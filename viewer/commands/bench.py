"""``viewer bench``: time every index on generated workloads or scene files, against the multi-core linear
scan (``scan``) in the same run."""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path

from viewer.errors import UserError

from . import _args


def _sizes(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        try:
            v = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a size: {part!r} (write e.g. 1e5,1e6)") from None
        if not (1 <= v <= 1e9) or v != int(v):
            raise argparse.ArgumentTypeError(f"sizes must be whole numbers in 1..1e9, got {part!r}")
        out.append(int(v))
    return out


def _shares(text: str) -> list[float]:
    if text.strip().lower() in ("", "none", "0"):
        return []
    try:
        vals = [float(p) for p in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"shares are fractions, e.g. 0.01,0.1; got {text!r}") from None
    if not all(0 < v <= 1 for v in vals):
        raise argparse.ArgumentTypeError("shares must be in (0, 1]")
    return vals


def add_parser(sub) -> None:
    from viewer.index import INDEXES

    p = sub.add_parser(
        "bench",
        help="time the indexes on generated workloads or scene files against the multi-core linear scan",
        description=(
            "Build every index on generated scenes (heavy-tailed view radii: most 5..30, a few up to 1000, "
            "in a world 10,000 wide) or on scene files, then time queries from a camera path of a few hundred "
            "points (half through dense regions), interleaved across indexes so a noisy machine treats them "
            "alike. Every ratio is against the baseline 'scan' (a 16-bit SIMD linear scan on every core, "
            "exact by a float64 recheck), always measured, as is 'brute' (numpy, the tests' oracle). Prints "
            "per index: threads, build time in this process and the first build in a fresh process, query "
            "median and p95 (us), the speed-up over scan, the scan's read floor (the time to read its "
            "16-bit prefilter arrays once, same threads) and the ratio to it, the median of each query's ratio to "
            "its output floor (copying its visible objects' 32-byte records), mean visible, candidates per visible, nodes visited, "
            "memory per object, insert/remove/move throughput, and the per-frame cost with a share of the "
            "objects moving, after a line naming the machine (CPU, the target numba compiles for, caches). Writes "
            "bench.csv, bench.json (the machine, package versions, command) and plots to --out."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--scene", default="uniform,clustered,diagonal",
                   help="comma-separated workloads: scene generators (see 'viewer scene --help'), generated at "
                        "every --n; or scene files (.npz, .toml recipes, bundled recipe names such as "
                        "clustered-100k), run once at their own N")
    p.add_argument("--radius", default="default", metavar="MODELS",
                   help="';'-separated view-radius models, each a workload of its own: 'default' (heavy-tailed: "
                        "most 5..30, a few up to 1000), 'constant:value=20', 'log-uniform:min=1,max=5', "
                        "'heavy-tailed:...' (see 'viewer scene --help')")
    p.add_argument("--n", type=_sizes, default=[100_000, 1_000_000], metavar="SIZES",
                   help="comma-separated object counts, e.g. 1e4,1e5,1e6,1e7")
    p.add_argument("--index", default=",".join(k for k in sorted(INDEXES)), metavar="SPECS",
                   help="indexes to compare, ';'-separated when options are given: "
                        "'octree;hashgrid:cell_size=64;hashgrid:cell_size=16'")
    p.add_argument("--queries", type=int, default=300, help="camera points per workload")
    p.add_argument("--rounds", type=int, default=3,
                   help="passes over the camera points, each index's median taken over all of them")
    p.add_argument("--updates", type=int, default=10_000,
                   help="objects removed, inserted and moved one call at a time (10x as many in the batch move)")
    p.add_argument("--dynamic", type=_shares, default=[0.01, 0.1], metavar="SHARES",
                   help="shares of objects moving every frame in the dynamic workload ('none' to skip)")
    p.add_argument("--frames", type=int, default=10, help="frames of the dynamic workload")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None,
                   help="directory for bench.csv and plots (default runs/bench-YYYYmmdd-HHMMSS)")
    p.add_argument("--no-plots", action="store_true", help="write the CSV only")
    p.add_argument("--no-first-build", action="store_true",
                   help="skip timing each index's first build in a fresh process (one subprocess per index "
                        "and workload)")
    p.set_defaults(func=run)


def run(args) -> int:
    from viewer.scenes import GENERATORS

    from viewer.bench.report import baseline_line, format_table, machine_line, write_csv
    from viewer.host.machine import machine, system
    from viewer.recording.meta import package_versions, write_json_atomic
    from viewer.bench.run import BenchConfig, parse_index_spec, parse_radius_spec, run_bench

    from viewer.scenes import SceneError, resolve_scene_path

    scenes = [s.strip() for s in args.scene.split(",") if s.strip()]
    if not scenes:
        raise UserError("--scene names no workload")
    for s in scenes:
        if s not in GENERATORS:
            try:
                resolve_scene_path(s)
            except SceneError as exc:
                raise UserError(f"--scene {s!r} is neither a scene generator ({', '.join(GENERATORS)}) nor a scene "
                                f"file: {exc}") from None
    sep = ";" if (";" in args.index or ":" in args.index) else ","
    specs = [parse_index_spec(t) for t in args.index.split(sep) if t.strip()]
    if args.queries < 1 or args.rounds < 1 or args.updates < 0 or args.frames < 0:
        raise UserError("--queries and --rounds must be >= 1, --updates and --frames >= 0")
    out = args.out or Path("runs") / _dt.datetime.now().strftime("bench-%Y%m%d-%H%M%S")
    _args.writable_dir(out)
    radii = [parse_radius_spec(t) for t in args.radius.split(";") if t.strip()]
    cfg = BenchConfig(scenes, args.n, specs, args.queries, args.updates, args.dynamic, args.frames, args.seed, radii,
                      first_build=not args.no_first_build, rounds=args.rounds)
    table = run_bench(cfg)
    where = machine()
    print(machine_line(where))
    print(baseline_line(table))
    print(format_table(table))
    write_csv(table, out / "bench.csv")
    write_json_atomic(out / "bench.json", {"machine": {"platform": system(), **where},
                                           "packages": package_versions(), "command": list(sys.argv),
                                           "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")})
    print(f"\nwrote {out / 'bench.csv'}, {out / 'bench.json'} (the machine, packages and command)", file=sys.stderr)
    if not args.no_plots and table:
        from viewer.bench.plots import plot_bench

        for path in plot_bench(table, out, machine=where["cpu"]):
            print(f"wrote {path}", file=sys.stderr)
    return 0
